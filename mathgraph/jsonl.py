"""Reading and writing JSON Lines with errors that name the file and line."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from typing import IO

from mathgraph.files import apply_umask


class JsonlError(ValueError):
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
                row = _parse_row(line)
                for field in fields:
                    _text_of(row, field)
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


def _parse_row(line: str) -> dict:
    try:
        # Without its line break: an error at the end of the line would otherwise be "line 2, column 1".
        row = json.loads(line.rstrip("\r\n"))
    except json.JSONDecodeError as err:
        raise ValueError(f"not valid JSON ({err.msg} at column {err.colno})") from None
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    return row


def _text_of(row: dict, field: str) -> str:
    if field not in row:
        raise ValueError(f"no field {field!r} (fields: {', '.join(sorted(row)) or 'none'})")
    value = row[field]
    if not isinstance(value, str):
        raise ValueError(f"field {field!r} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"field {field!r} is empty")
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
    """Write ``rows`` one JSON object per line; returns how many."""
    count = 0
    for row in rows:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count
