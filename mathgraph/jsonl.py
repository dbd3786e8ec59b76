"""Reading and writing JSON Lines with errors that name the file and line."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import IO

from mathgraph.errors import UserError
from mathgraph.files import apply_umask
from mathgraph.text_checks import text_error


class JsonlError(UserError):
    """A bad line in a JSONL file; the message starts with ``FILE:LINE:``."""

    def __init__(self, path: str | PathLike, line: int, reason: str):
        super().__init__(f"{path}:{line}: {reason}")
        self.path, self.line, self.reason = str(path), line, reason


@dataclass(frozen=True)
class TextRecord:
    """A validated text from line ``line`` (1-based) of a JSONL file, with the whole row."""

    line: int
    text: str
    row: dict


def read_rows(
    path: str | PathLike,
    fields: Sequence[str] = (),
    skip_bad: bool = False,
    check: Callable[[dict], None] | None = None,
) -> tuple[list[tuple[int, dict]], list[JsonlError]]:
    """``(line number, row)`` for the JSON objects of a JSONL file whose ``fields`` all hold non-empty strings.

    ``check(row)`` may add validation by raising ``ValueError``. A bad line (not
    a JSON object, a missing, non-string or empty field, a failed check) raises
    ``JsonlError`` naming file and line, or with ``skip_bad=True`` is returned in
    the second list instead. Blank lines are not rows and are ignored.
    """
    rows: list[tuple[int, dict]] = []
    bad: list[JsonlError] = []
    with open(path, encoding="utf-8") as f:
        for line_number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = parse_json_row(line)
                for field in fields:
                    check_text_field(row, field)
                if check is not None:
                    check(row)
                rows.append((line_number, row))
            except ValueError as err:
                error = JsonlError(path, line_number, str(err))
                if not skip_bad:
                    raise error from None
                bad.append(error)
    return rows, bad


def read_text_records(
    path: str | PathLike, text_field: str, skip_bad: bool = False
) -> tuple[list[TextRecord], list[JsonlError]]:
    """Every row's ``text_field`` from a JSONL file, validated as ``read_rows`` does."""
    rows, bad = read_rows(path, (text_field,), skip_bad)
    return [TextRecord(line, row[text_field], row) for line, row in rows], bad


@dataclass(frozen=True)
class Corpus:
    """The texts of one ``FILE[:FIELD]`` corpus (``read_corpora``)."""

    path: str
    field: str
    records: list[TextRecord]

    @property
    def texts(self) -> list[str]:
        """The texts, in file order."""
        return [r.text for r in self.records]


def corpus_spec(spec: str, default_field: str = "problem") -> tuple[str, str]:
    """``"FILE[:FIELD]"`` -> ``(FILE, FIELD)``, the field ``default_field`` when none is given.

    A spec that names an existing file is all path, so a file name with a colon in it still works.
    """
    if ":" in spec and not Path(spec).exists():
        path, _, field = spec.rpartition(":")
        return path, field or default_field
    return spec, default_field


def read_corpora(specs: Iterable[str], default_field: str = "problem", skip_bad: bool = False) -> list[Corpus]:
    """Every ``FILE[:FIELD]`` corpus (``corpus_spec``), in order, validated as ``read_text_records`` does
    (a bad line raises ``JsonlError``, or with ``skip_bad`` is left out)."""
    corpora = []
    for spec in specs:
        path, field = corpus_spec(spec, default_field)
        records, _ = read_text_records(path, field, skip_bad)
        corpora.append(Corpus(path, field, records))
    return corpora


JSONL_SUFFIXES = (".jsonl", ".ndjson")


def read_text_lines(
    path: str | PathLike, text_field: str = "problem", skip_bad: bool = False
) -> tuple[list[TextRecord], list[JsonlError]]:
    """One text per line of a file: the ``text_field`` of JSONL rows when the file name ends in ``.jsonl``
    (or ``.ndjson``), validated as ``read_text_records`` does, otherwise the lines of a plain text file.

    Blank lines are skipped either way; a plain line's text is stripped and its row is ``{}``. Line numbers
    are the file's (1-based), so results can name the line they came from.
    """
    if Path(path).suffix.lower() in JSONL_SUFFIXES:
        return read_text_records(path, text_field, skip_bad)
    records, bad = [], []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:  # a bad byte: that line's error, below
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            error = text_error(line)
            if error is None:
                records.append(TextRecord(number, line.strip(), {}))
            elif skip_bad:
                bad.append(JsonlError(path, number, f"the line {error}"))
            else:
                raise JsonlError(path, number, f"the line {error}")
    return records, bad


def parse_json_row(line: str) -> dict:
    """One JSONL line as a dict; ``ValueError`` (the reason, without file and line) when it is not a JSON object."""
    try:
        # Without its line break: an error at the end of the line would otherwise be "line 2, column 1".
        row = json.loads(line.rstrip("\r\n"))
    except json.JSONDecodeError as err:
        raise ValueError(f"not valid JSON ({err.msg} at column {err.colno})") from None
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    return row


def check_text_field(row: dict, field: str) -> str:
    """``row[field]`` when it is a non-empty string of text; else ``ValueError`` saying what is wrong (missing,
    not a string, empty, a lone surrogate: ``mathgraph.text_checks``), without file and line."""
    if field not in row:
        raise ValueError(f"no field {field!r} (fields: {', '.join(sorted(row)) or 'none'})")
    value = row[field]
    if not isinstance(value, str):
        raise ValueError(f"field {field!r} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"field {field!r} is empty")
    error = text_error(value)
    if error is not None:
        raise ValueError(f"field {field!r} {error}")
    return value


@contextmanager
def atomic_writer(path: str | PathLike) -> Iterator[IO[str]]:
    """Open a temporary file next to ``path``; it replaces ``path`` only if the block succeeds."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".jsonl", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yield f
        apply_umask(tmp)  # mkstemp made it 0600
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_jsonl(f: IO[str], rows: Iterable[dict]) -> int:
    """Write ``rows`` one JSON object per line; returns how many. A row holding a lone surrogate, which UTF-8
    cannot encode, is written with JSON's ``\\udXXX`` escapes, so that it reads back as it was."""
    count = 0
    for row in rows:
        line = json.dumps(row, ensure_ascii=False)
        f.write((line if text_error(line) is None else json.dumps(row)) + "\n")
        count += 1
    return count
