"""Question banks as they are stored: JSONL, CSV, Parquet and saved Hugging Face ``datasets`` directories,
read as a stream of records, each with the number a person finds it by.

    bank = BankReader.open("bank.parquet", fields=("problem",))
    for record in bank.records():          # one block of rows in memory at a time, however large the bank
        if record.error is None:
            record.row["problem"], record.number
        else:
            raise bank.error(record)       # JsonlError: "bank.parquet:7: field 'problem' is empty"

The format comes from the name (``.jsonl``/``.ndjson``, ``.csv``/``.tsv``, ``.parquet``/``.pq``, a directory
written by ``datasets.Dataset.save_to_disk``) or is given (``format=``, the commands' ``--input-format``); a
file with another extension is read as JSONL, as every command read it before. A record's ``number`` is its
line in a JSONL or CSV file (for CSV the line the record starts on: the header is line 1) and its 1-based row
in a Parquet file or a datasets directory; every error reads ``FILE:NUMBER: reason``.

A record keeps the ``fields`` (checked to be non-empty strings), the ``id_field`` when the bank has one, and
``keep`` (further columns; ``None``: every column). Columnar formats read only those columns, in blocks of
``BLOCK_ROWS`` rows (pyarrow; ``datasets`` memory-maps its Arrow files). CSV values are strings, as the csv
module reads them.

``records(start)`` begins at a ``Position`` an earlier pass handed out (``Record.position``): a byte offset in
a line-based file, a row index in a columnar one. So a shard of a large bank is read without reading what
comes before it (``mathgraph.batch_jobs``). ``BankReader`` holds no open file, so it pickles (Ray ships it to
the workers that read the shards).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from mathgraph.errors import UserError
from mathgraph.extras import require
from mathgraph.jsonl import JsonlError, check_text_field, parse_json_row
from mathgraph.samples import missing_file_hint
from mathgraph.text_checks import text_error

INPUT_FORMATS = ("jsonl", "csv", "parquet", "datasets")
EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
BLOCK_ROWS = 1024  # rows per block read from a columnar file
DATASET_FILES = ("state.json", "dataset_info.json")  # what datasets.Dataset.save_to_disk writes
DATASET_DICT_FILE = "dataset_dict.json"  # what datasets.DatasetDict.save_to_disk writes


def require_pyarrow(what: str):
    """``pyarrow.parquet``, or a ``UserError`` saying that reading ``what`` (a file, or an option and its file)
    as Parquet needs the ``parquet`` extra: the base install reads JSONL and CSV, Parquet only with pyarrow."""
    return require("pyarrow.parquet", "parquet", f"{what}: reading Parquet")


@dataclass(frozen=True)
class Position:
    """Where a record starts: the source file (its index), the byte offset (JSONL, CSV) or row index
    (Parquet, datasets) in it, and the record's number."""

    file: int
    offset: int
    number: int


@dataclass(frozen=True)
class Record:
    """One record of a bank: its number (line or row), the fields kept (``None`` when bad), the reason it is
    bad (``None`` when good) and where it starts."""

    number: int
    row: dict | None
    error: str | None
    position: Position


def bank_format(path: str | PathLike, format: str | None = None) -> str:
    """The format of the bank at ``path``: ``format`` when given (checked), else from the name: a datasets
    directory, a known extension, or ``"jsonl"`` for any other file."""
    if format is not None:
        if format not in INPUT_FORMATS:
            raise UserError(f"unknown input format {format!r}; choose from {', '.join(INPUT_FORMATS)}")
        return format
    path = Path(path)
    if path.is_dir():
        return "datasets"
    return EXTENSIONS.get(path.suffix.lower(), "jsonl")


def check_bank_input(path: str | PathLike | None, format: str | None = None, option: str = "--input") -> None:
    """Fail fast on a bank that is not there or holds nothing: a missing path, a directory that is no saved
    dataset, a line-based file with no non-blank line. A clear one-line error naming ``option``."""
    if path is None:
        return
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{option} {path}: no such file{missing_file_hint(path)}")
    kind = bank_format(path, format)
    if path.is_dir():
        if kind != "datasets" or not _is_dataset_directory(path):
            raise IsADirectoryError(f"{option} {path} is a directory, not a file (nor a saved datasets directory)")
        return
    if kind == "parquet":
        require_pyarrow(f"{option} {path}")
    if kind in ("jsonl", "csv"):
        with open(path, encoding="utf-8", errors="replace") as f:
            if not any(line.strip() for line in f):
                raise UserError(f"{option} {path} is empty: no input lines")


def _is_dataset_directory(path: Path) -> bool:
    return (path / DATASET_DICT_FILE).exists() or all((path / name).exists() for name in DATASET_FILES)


@dataclass
class BankReader:
    """Records of one bank, or of several files read one after another (a job's output shards).

    Args:
        files: the files (a datasets directory counts as one), in order.
        format: their format (``INPUT_FORMATS``).
        fields: fields every good record has as a non-empty string.
        id_field: a field kept when present (the row's id); ``None``: none.
        keep: further fields kept when present; ``None``: every field of the row.
        check: ``check(row)`` may reject a row by raising ``ValueError`` (the reason).
    """

    files: list[Path]
    format: str
    fields: tuple[str, ...] = ()
    id_field: str | None = "id"
    keep: tuple[str, ...] | None = ()
    check: Callable[[dict], None] | None = None

    @classmethod
    def open(
        cls,
        path: str | PathLike,
        format: str | None = None,
        fields: Sequence[str] = (),
        id_field: str | None = "id",
        keep: Sequence[str] | None = (),
        check: Callable[[dict], None] | None = None,
    ) -> BankReader:
        """The reader of the bank at ``path`` (its format from ``bank_format``)."""
        kind = bank_format(path, format)
        return cls([Path(path)], kind, tuple(fields), id_field, None if keep is None else tuple(keep), check)

    def __post_init__(self) -> None:
        self.files = [Path(f) for f in self.files]
        if self.format == "parquet" and self.files:
            require_pyarrow(str(self.files[0]))

    # ------------------------------------------------------------------ reading
    def records(self, start: Position | None = None) -> Iterator[Record]:
        """Every record from ``start`` (default: the first) to the end of the last file, in order."""
        start = start or Position(0, 0, 1)
        for index in range(start.file, len(self.files)):
            first = start if index == start.file else Position(index, 0, 1)
            reader = {
                "jsonl": self._jsonl_records,
                "csv": self._csv_records,
                "parquet": self._parquet_records,
                "datasets": self._dataset_records,
            }[self.format]
            yield from reader(first)

    def error(self, record: Record) -> JsonlError:
        """The error of a bad record, naming its file and number."""
        return JsonlError(self.files[record.position.file], record.number, record.error or "bad record")

    def _record(self, position: Position, row: dict) -> Record:
        """The record of a decoded ``row``: the fields kept, or the reason it is bad."""
        try:
            for name in self.fields:
                check_text_field(row, name)
            if self.check is not None:
                self.check(row)
            if self.keep is not None:
                wanted = (*self.fields, *self.keep, *((self.id_field,) if self.id_field else ()))
                row = {name: row[name] for name in wanted if name in row}
            for name, value in row.items():  # a kept field that is not text could not be written back
                if isinstance(value, str) and (error := text_error(value)) is not None:
                    raise UserError(f"field {name!r} {error}")
        except ValueError as err:
            return Record(position.number, None, str(err), position)
        return Record(position.number, row, None, position)

    def _jsonl_records(self, start: Position) -> Iterator[Record]:
        offset, number = start.offset, start.number
        with open(self.files[start.file], "rb") as f:
            f.seek(offset)
            for raw in f:
                position = Position(start.file, offset, number)
                offset, number = offset + len(raw), number + 1
                if not raw.strip():
                    continue
                try:
                    row = parse_json_row(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    yield Record(position.number, None, "not valid UTF-8", position)
                    continue
                except ValueError as err:
                    yield Record(position.number, None, str(err), position)
                    continue
                yield self._record(position, row)

    def _csv_records(self, start: Position) -> Iterator[Record]:
        path = self.files[start.file]
        with open(path, "rb") as f:
            lines = _CountedLines(f, path)
            reader = csv.reader(lines, delimiter="\t" if path.suffix.lower() == ".tsv" else ",", strict=True)
            header = self._csv_header(reader, path)
            if start.offset > lines.offset:
                f.seek(start.offset)
                lines.offset, lines.number = start.offset, start.number - 1
            while True:
                position = Position(start.file, lines.offset, lines.number + 1)
                try:
                    values = next(reader)
                except StopIteration:
                    return
                except csv.Error as err:
                    raise JsonlError(path, position.number, f"not valid CSV ({err})") from None
                if not values or (len(values) == 1 < len(header) and not values[0].strip()):
                    continue  # a blank line is no record; a row of empty fields ("", or ,,) is a bad one
                if len(values) != len(header):
                    reason = f"expected {len(header)} fields (the header's), got {len(values)}"
                    yield Record(position.number, None, reason, position)
                    continue
                yield self._record(position, dict(zip(header, values)))

    @staticmethod
    def _csv_header(reader, path: Path) -> list[str]:
        try:
            header = next(reader)
        except StopIteration:
            raise UserError(f"{path} is empty: no header line") from None
        if header and header[0].startswith("\ufeff"):  # a byte-order mark that spreadsheet programs write
            header[0] = header[0][1:]
        return header

    def _parquet_records(self, start: Position) -> Iterator[Record]:
        path = self.files[start.file]
        pq = require_pyarrow(str(path))
        parquet = pq.ParquetFile(path)
        columns = self._columns(parquet.schema_arrow.names, path)
        # the row group holding the first row wanted, so a shard deep in the file reads from there
        group, first_row = 0, 0
        while group < parquet.num_row_groups and first_row + parquet.metadata.row_group(group).num_rows <= start.offset:
            first_row += parquet.metadata.row_group(group).num_rows
            group += 1
        batches = parquet.iter_batches(
            batch_size=BLOCK_ROWS, row_groups=range(group, parquet.num_row_groups), columns=columns
        )
        row_index = first_row
        for batch in batches:
            end = row_index + batch.num_rows
            if end > start.offset:
                skip = max(0, start.offset - row_index)
                for i, row in enumerate(batch.slice(skip).to_pylist()):
                    index = row_index + skip + i
                    yield self._record(Position(start.file, index, index + 1), row)
            row_index = end

    def _dataset_records(self, start: Position) -> Iterator[Record]:
        dataset = load_dataset_directory(self.files[start.file])
        columns = self._columns(dataset.column_names, self.files[start.file])
        table = dataset.select_columns(columns).with_format("arrow")
        for block in range(start.offset, len(dataset), BLOCK_ROWS):
            for i, row in enumerate(table[block : block + BLOCK_ROWS].to_pylist()):
                yield self._record(Position(start.file, block + i, block + i + 1), row)

    def _columns(self, names: list[str], path: Path) -> list[str]:
        """The columns a columnar file is read with; a missing ``fields`` column fails the whole file."""
        for name in self.fields:
            if name not in names:
                raise UserError(f"{path}: no column {name!r} (columns: {', '.join(names) or 'none'})")
        if self.keep is None:
            return list(names)
        wanted = (*self.fields, *self.keep, *((self.id_field,) if self.id_field else ()))
        return [name for name in dict.fromkeys(wanted) if name in names]

    def __repr__(self) -> str:
        return f"BankReader({', '.join(map(str, self.files))}, format={self.format!r})"


class _CountedLines:
    """The lines of a binary file as text, counting the bytes and lines read, for the csv module: it asks for
    a record's lines one by one and stops at the record's end, so the count is where the next record starts."""

    def __init__(self, f: io.BufferedReader, path: Path):
        self.f, self.path = f, path
        self.offset, self.number = f.tell(), 0

    def __iter__(self) -> _CountedLines:
        return self

    def __next__(self) -> str:
        raw = self.f.readline()
        if not raw:
            raise StopIteration
        self.offset += len(raw)
        self.number += 1
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise JsonlError(self.path, self.number, "not valid UTF-8") from None


def load_dataset_directory(path: str | PathLike):
    """The ``datasets.Dataset`` saved in ``path`` (memory-mapped, not read into memory). A saved
    ``DatasetDict`` is refused with its splits named: its splits are datasets directories of their own."""
    path = Path(path)
    if (path / DATASET_DICT_FILE).exists():
        import json

        splits = json.loads((path / DATASET_DICT_FILE).read_text(encoding="utf-8")).get("splits", [])
        raise UserError(f"{path} holds the splits {', '.join(splits)} of a DatasetDict: give one, {path}/SPLIT")
    from datasets import load_from_disk

    return load_from_disk(str(path))


def read_bank_rows(
    path: str | PathLike, fields: Sequence[str] = (), format: str | None = None, skip_bad: bool = False
) -> tuple[list[tuple[int, dict]], list[JsonlError]]:
    """``(number, row)`` of every good record of a bank small enough to hold (a command's pairs or queries),
    each row with all its columns, and the bad records' errors: a bad record raises its ``JsonlError``
    (``FILE:NUMBER: reason``) unless ``skip_bad``. Any format ``BankReader`` reads."""
    reader = BankReader.open(path, format, fields=fields, id_field=None, keep=None)
    rows, bad = [], []
    for record in reader.records():
        if record.error is None:
            rows.append((record.number, record.row))
        elif skip_bad:
            bad.append(reader.error(record))
        else:
            raise reader.error(record)
    return rows, bad


__all__ = [
    "INPUT_FORMATS",
    "EXTENSIONS",
    "BLOCK_ROWS",
    "Position",
    "Record",
    "BankReader",
    "bank_format",
    "check_bank_input",
    "load_dataset_directory",
    "read_bank_rows",
    "require_pyarrow",
]
