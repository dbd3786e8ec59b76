"""Reading and writing JSON Lines with errors that name the file and line."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from typing import IO


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


def read_text_records(
    path: str | PathLike, text_field: str, skip_bad: bool = False
) -> tuple[list[TextRecord], list[JsonlError]]:
    """Read every row's ``text_field`` from a JSONL file.

    A line that is not a JSON object, lacks the field, or holds a non-string or
    empty value raises ``JsonlError`` naming file and line, or with
    ``skip_bad=True`` is returned in the second list instead. Blank lines are
    not rows and are ignored.
    """
    records: list[TextRecord] = []
    bad: list[JsonlError] = []
    with open(path, encoding="utf-8") as f:
        for line_number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = _parse_row(line)
                records.append(TextRecord(line_number, _text_of(row, text_field), row))
            except ValueError as err:
                error = JsonlError(path, line_number, str(err))
                if not skip_bad:
                    raise error from None
                bad.append(error)
    return records, bad


def _parse_row(line: str) -> dict:
    try:
        row = json.loads(line)
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
