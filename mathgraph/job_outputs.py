"""What a batch job writes (``mathgraph.batch_jobs``): each shard's files, and the one file they make merged.

Three kinds, each reading one key of a job's items:

- ``GraphShards`` (``mathgraph parse``): ``item["graphs"][0]``, a ``MathSyntaxGraph``. JSONL: one graph per
  line, ``{"id", ...graph.to_dict(), "line"}``, the lines ``mathgraph parse`` always wrote; Parquet: columns
  ``id``, ``line`` and ``graph`` (the graph as JSON text).
- ``PredictionShards`` (``mathgraph predict``): ``item["result"]``, a dict. ``{"id", "line", ...result}`` per
  line, or those columns in Parquet.
- ``VectorShards`` (``mathgraph encode``): ``item["vector"]``. Shard k is ``shard-0000k.npy`` (float32
  ``[rows, dimension]``, ``numpy.load(..., mmap_mode="r")`` reads it without loading it) and
  ``shard-0000k.rows.jsonl`` (or ``.rows.parquet``): one ``{"id", "line"}`` per vector, in the same order.
  Merged: a ``.npy`` matrix (the vectors alone, as ``mathgraph encode`` always wrote), or ``.parquet`` /
  ``.jsonl`` rows ``{"id", "line", "vector"}``.

``id`` is the input row's id (when it has one) and ``line`` its line or row number (``mathgraph.bank_files``),
so every output row can be joined back to its input. Files are written under a temporary name and renamed:
a shard file that exists is whole.

A writer has ``kind`` and ``format``, ``prepare(item)`` (what a finished item keeps until its shard is written:
the output row, not the graphs and inputs it came from, so a shard in memory is about its file's size),
``write(directory, index, prepared_items)`` and ``merge(directory, shard_files, output)``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from typing import IO

import numpy as np

from mathgraph.errors import UserError
from mathgraph.extras import require
from mathgraph.files import apply_umask

OUTPUT_FORMATS = ("jsonl", "parquet")
FILE_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet", ".npy": "npy"}
# Names of files in formats a job does not write: taken for a directory of shards, they would leave a user with a
# folder called "preds.csv"; refused instead.
OTHER_FILE_SUFFIXES = (".csv", ".tsv", ".json", ".txt", ".xlsx", ".xls")


def output_target(path: str | PathLike, format: str | None = None) -> tuple[bool, str]:
    """``(is_one_file, format)`` of an output path: a name ending in ``.jsonl``, ``.parquet`` or ``.npy`` is one
    file of that format; a name ending in another file format's suffix (``.csv``, ``.json``, ...) is a
    ``UserError``; anything else is a directory of shards in ``format`` (default JSONL)."""
    if format is not None and format not in OUTPUT_FORMATS:
        raise UserError(f"unknown output format {format!r}; choose from {', '.join(OUTPUT_FORMATS)}")
    suffix = Path(path).suffix.lower()
    if suffix in OTHER_FILE_SUFFIXES:
        raise UserError(
            f"--output {path}: cannot write a {suffix} file; name a .jsonl, .parquet or .npy file, or a directory "
            "(a name without a file suffix) for shards"
        )
    if suffix in FILE_SUFFIXES:
        if format is not None and format != FILE_SUFFIXES[suffix]:
            raise UserError(f"--output {path} ends in {suffix}, but --output-format says {format}")
        format = FILE_SUFFIXES[suffix]
        if format == "parquet":
            require_parquet(f"--output {path}")
        return True, format
    if format == "parquet":
        require_parquet(f"--output-format {format}")
    return False, format or "jsonl"


def require_parquet(what: str):
    """``pyarrow.parquet``, or a ``UserError`` saying that writing ``what`` (an option and its value) as Parquet
    needs the ``parquet`` extra (the base install writes JSONL)."""
    return require("pyarrow.parquet", "parquet", f"{what}: writing Parquet")


def shard_name(index: int, suffix: str) -> str:
    """``shard-00042.jsonl``: the file of shard ``index`` (five digits sort 100,000 shards by name)."""
    return f"shard-{index:05d}{suffix}"


@contextmanager
def atomic_path(path: str | PathLike) -> Iterator[Path]:
    """A temporary path next to ``path`` to write to; it becomes ``path`` only if the block succeeds."""
    path = Path(path)
    temporary = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    try:
        yield temporary
        apply_umask(temporary)
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


def _prepared(item: dict, row, **more) -> dict:
    """What a shard keeps of a finished item: where it goes (``shard``, ``record``) and what is written."""
    return {"shard": item["shard"], "record": item["record"], "row": row, **more}


def _keyed(item: dict, payload: dict, line_last: bool = False) -> dict:
    """An output row: the input's id (when it has one), its line, and ``payload``."""
    key = {"id": item["id"]} if "id" in item else {}
    if line_last:
        return {**key, **payload, "line": item["line"]}
    return {**key, "line": item["line"], **payload}


def _write_rows(path: Path, rows: list, format: str) -> None:
    """``rows`` (dicts, or JSONL lines already as text) as a JSONL or Parquet file at ``path``."""
    with atomic_path(path) as temporary:
        if format == "jsonl":
            with open(temporary, "w", encoding="utf-8") as f:
                f.writelines(
                    (row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n" for row in rows
                )
        else:
            import pyarrow.parquet as pq

            pq.write_table(_table(rows), temporary)


def _table(rows: list[dict]):
    """A pyarrow table of ``rows``, one column per key any row has (a row without it holds null there)."""
    import pyarrow as pa

    names = list(dict.fromkeys(name for row in rows for name in row)) or ["line"]
    try:
        return pa.table({name: [row.get(name) for row in rows] for name in names})
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise UserError(f"these rows do not fit one Parquet table ({err}); write JSONL instead") from None


def _merge_rows(directory: Path, names: list[str], output: Path | None, format: str, out: IO[str] | None) -> None:
    """The row files ``names`` (JSONL or Parquet) as one file ``output``, or JSONL written to ``out``."""
    if format == "jsonl":
        if output is None:
            for name in names:
                with open(directory / name, encoding="utf-8") as f:
                    shutil.copyfileobj(f, out)
            return
        with atomic_path(output) as temporary, open(temporary, "wb") as f:
            for name in names:
                with open(directory / name, "rb") as part:
                    shutil.copyfileobj(part, f)
        return
    import pyarrow.parquet as pq

    with atomic_path(output) as temporary:
        _write_tables(
            temporary,
            (pq.read_table(directory / name) for name in names),
            if_none=lambda: pq.read_table(directory / names[0]) if names else _table([]),
        )


def _write_tables(path: Path, tables: Iterator, if_none) -> None:
    """The non-empty ``tables`` as one Parquet file at ``path``, in the first one's schema (an empty table's
    columns have no type: the first rows set it); ``if_none()``'s table where every one is empty."""
    import pyarrow.parquet as pq

    writer = None
    try:
        for table in tables:
            if table.num_rows == 0:
                continue
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(_cast(table, writer.schema))
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        pq.write_table(if_none(), path)


def _cast(table, schema):
    """``table`` in ``schema`` (the first shard's): a shard whose column is all null has another type."""
    import pyarrow as pa

    try:
        columns = [table.column(f.name) if f.name in table.column_names else pa.nulls(table.num_rows) for f in schema]
        return pa.Table.from_arrays(columns, names=schema.names).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as err:
        raise UserError(f"the shards do not fit one Parquet table ({err}); write JSONL instead") from None


class _RowShards:
    """Shards of one row per item, in ``format`` (``jsonl`` or ``parquet``): the part every row writer shares."""

    def __init__(self, format: str = "jsonl"):
        self.format = format
        if format == "parquet":
            require_parquet("the output")

    def write(self, directory: Path, index: int, items: list[dict]) -> tuple[list[str], dict]:
        """Write shard ``index`` (its ``prepare``d items); returns its file names and the manifest's notes."""
        name = shard_name(index, f".{self.format}")
        _write_rows(directory / name, [item["row"] for item in items], self.format)
        return [name], {}

    def merge(self, directory: Path, shard_files: list[list[str]], output: Path | None, out=None) -> None:
        """The shards as one file ``output`` (or JSONL to ``out``)."""
        _merge_rows(directory, [files[0] for files in shard_files], output, self.format, out)


class GraphShards(_RowShards):
    """Graphs of ``mathgraph parse`` (see the module docstring)."""

    kind = "graphs"

    def prepare(self, item: dict) -> dict:
        """An item as its shard keeps it: the graph as text, so that a shard in memory is its file's size."""
        graph = item["graphs"][0]
        if self.format == "jsonl":
            return _prepared(item, json.dumps(_keyed(item, graph.to_dict(), line_last=True), ensure_ascii=False))
        return _prepared(item, _keyed(item, {"graph": graph.to_json()}))


class PredictionShards(_RowShards):
    """Predictions of ``mathgraph predict`` (see the module docstring)."""

    kind = "predictions"

    def prepare(self, item: dict) -> dict:
        """An item as its shard keeps it: the output row."""
        return _prepared(item, _keyed(item, item["result"]))


class VectorShards:
    """Vectors of ``mathgraph encode`` (see the module docstring); ``format`` is that of the rows files,
    ``merged`` the format of the one file the shards become (``npy``, ``jsonl`` or ``parquet``)."""

    kind = "vectors"

    def __init__(self, format: str = "jsonl", merged: str | None = None):
        self.format, self.merged = format, merged
        if "parquet" in (format, merged):
            require_parquet("the output")

    def prepare(self, item: dict) -> dict:
        """An item as its shard keeps it: its id and line, and its vector."""
        return _prepared(item, _keyed(item, {}), vector=item["vector"])

    def write(self, directory: Path, index: int, items: list[dict]) -> tuple[list[str], dict]:
        """Write shard ``index`` (its ``prepare``d items); returns its file names and the manifest's notes (the
        dimension)."""
        vectors = (
            np.stack([item["vector"] for item in items]).astype(np.float32, copy=False)
            if items
            else np.zeros((0, 0), dtype=np.float32)
        )
        matrix, rows = shard_name(index, ".npy"), shard_name(index, f".rows.{self.format}")
        with atomic_path(directory / matrix) as temporary, open(temporary, "wb") as f:
            np.save(f, vectors)
        _write_rows(directory / rows, [item["row"] for item in items], self.format)
        return [matrix, rows], ({"dimension": int(vectors.shape[1])} if items else {})

    def merge(self, directory: Path, shard_files: list[list[str]], output: Path | None, out=None) -> None:
        """The shards as one file ``output``: the ``.npy`` matrix, or rows with their vectors."""
        matrices = [np.load(directory / files[0], mmap_mode="r") for files in shard_files]
        dimension = max((m.shape[1] for m in matrices), default=0)
        if self.merged == "npy":
            total = sum(m.shape[0] for m in matrices)
            with atomic_path(output) as temporary:
                merged = np.lib.format.open_memmap(temporary, mode="w+", dtype=np.float32, shape=(total, dimension))
                start = 0
                for matrix in matrices:
                    merged[start : start + len(matrix)] = matrix
                    start += len(matrix)
                merged.flush()
                del merged
            return
        with atomic_path(output) as temporary:
            if self.merged == "jsonl":
                with open(temporary, "w", encoding="utf-8") as f:
                    for files, matrix in zip(shard_files, matrices):
                        for row, vector in zip(self._rows(directory / files[1]), matrix):
                            f.write(json.dumps({**row, "vector": vector.tolist()}, ensure_ascii=False) + "\n")
                return
            self._merge_parquet(directory, shard_files, matrices, dimension, temporary)

    def _merge_parquet(self, directory: Path, shard_files, matrices, dimension: int, temporary: Path) -> None:
        import pyarrow as pa

        def tables() -> Iterator:
            for files, matrix in zip(shard_files, matrices):
                rows = list(self._rows(directory / files[1]))
                if rows:
                    flat = pa.array(np.ascontiguousarray(matrix, dtype=np.float32).reshape(-1), type=pa.float32())
                    yield _table(rows).append_column("vector", pa.FixedSizeListArray.from_arrays(flat, dimension))

        _write_tables(temporary, tables(), if_none=lambda: pa.table({"line": pa.array([], pa.int64())}))

    def _rows(self, path: Path) -> Iterator[dict]:
        if self.format == "jsonl":
            with open(path, encoding="utf-8") as f:
                yield from (json.loads(line) for line in f if line.strip())
        else:
            import pyarrow.parquet as pq

            yield from pq.read_table(path).to_pylist()


__all__ = [
    "OUTPUT_FORMATS",
    "output_target",
    "require_parquet",
    "shard_name",
    "atomic_path",
    "GraphShards",
    "PredictionShards",
    "VectorShards",
]
