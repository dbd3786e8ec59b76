"""The files of a search index that hold its data, written as a stream and read without loading them whole.

- ``VectorWriter``: appends vector shards to a ``.npy`` file whose row count is only known at the end (the
  header keeps room for it and is written last), so an index is built from shards with one shard in memory;
  ``open_vectors`` maps the file back (``np.load(mmap_mode="r")``): a search touches only the pages it reads.
- ``RowStore``: the rows of ``rows.jsonl`` as a read-only sequence, one JSON line parsed per ``store[i]``; the
  line offsets are found on opening (one pass over the file, in blocks), not stored in another file.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

# Room for the .npy header (magic, version, length, the dict with the shape): 128 bytes hold any shape below
# 10**30 rows, and keep the data 64-byte aligned as numpy wants.
NPY_HEADER_BYTES = 128
# Bytes of rows.jsonl scanned at a time for line ends.
SCAN_BLOCK = 1 << 26


class VectorWriter:
    """Write ``[rows, dimension]`` float32 shards one after another into a ``.npy`` file:

    ``with VectorWriter(path, dimension) as writer: writer.append(shard)``. The file is a plain ``.npy`` once
    closed (``np.load`` reads it); an exception inside the ``with`` block leaves no file behind."""

    def __init__(self, path: str | Path, dimension: int):
        if dimension < 1:
            raise ValueError(f"the vectors' dimension must be >= 1, got {dimension}")
        self.path, self.dimension, self.count = Path(path), int(dimension), 0
        self._file = None

    def __enter__(self) -> VectorWriter:
        self._file = open(self.path, "wb")
        self._file.write(b"\0" * NPY_HEADER_BYTES)
        return self

    def append(self, shard: np.ndarray) -> None:
        """Append the rows of ``shard`` ``[rows, dimension]`` (written as little-endian float32)."""
        shard = np.asarray(shard)
        if shard.ndim != 2 or shard.shape[1] != self.dimension:
            raise ValueError(f"a vector shard must be [rows, {self.dimension}], got shape {shard.shape}")
        self._file.write(np.ascontiguousarray(shard, dtype="<f4").tobytes())
        self.count += len(shard)

    def __exit__(self, error_type, error, traceback) -> None:
        if error_type is None:
            self._file.seek(0)
            header = {"descr": "<f4", "fortran_order": False, "shape": (self.count, self.dimension)}
            np.lib.format.write_array_header_1_0(self._file, header)
            if self._file.tell() > NPY_HEADER_BYTES:  # cannot happen for real shapes; never write a bad file
                raise ValueError(f"the .npy header of {self.path} outgrew its {NPY_HEADER_BYTES} bytes")
            # numpy pads the header to a multiple of 64 bytes: 128 for every real shape, which the check below
            # confirms, so the data written after the reserved bytes starts where numpy looks for it
        self._file.close()
        if error_type is None and _npy_data_offset(self.path) != NPY_HEADER_BYTES:
            self.path.unlink()
            raise ValueError(f"could not write the .npy header of {self.path}")
        if error_type is not None:
            self.path.unlink(missing_ok=True)


def _npy_data_offset(path: Path) -> int:
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        return f.tell()


def open_vectors(path: str | Path) -> np.ndarray:
    """The vectors of a ``.npy`` file, memory-mapped read-only (``np.memmap``)."""
    return np.load(path, mmap_mode="r", allow_pickle=False)


def vector_shards(vectors: np.ndarray, rows_per_shard: int = 65536) -> Iterator[np.ndarray]:
    """``vectors`` in consecutive row blocks (a memory-mapped array is read a block at a time)."""
    for start in range(0, len(vectors), rows_per_shard):
        yield np.asarray(vectors[start : start + rows_per_shard], dtype=np.float32)


class RowStore(Sequence):
    """The rows of a JSONL file as a read-only sequence: ``store[i]`` parses line ``i`` (its offset found when the
    store was opened); iterating reads the file in order. It equals any sequence of the same rows."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        with open(self.path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if self.path.stat().st_size else b""
        self._ends = _line_ends(self._map)

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(f"row {i} of {len(self)}")
        i = int(i) % len(self)
        start = int(self._ends[i - 1]) + 1 if i else 0
        return json.loads(self._map[start : int(self._ends[i])])

    def __iter__(self) -> Iterator[dict]:
        start = 0
        for end in self._ends:
            yield json.loads(self._map[start : int(end)])
            start = int(end) + 1

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # a sequence compared by value, as a list is

    def __repr__(self) -> str:
        return f"RowStore({str(self.path)!r}, {len(self)} rows)"


def _line_ends(data) -> np.ndarray:
    """Offsets of the newlines ending the non-empty lines of ``data`` (a final line without one is counted too)."""
    ends = []
    for start in range(0, len(data), SCAN_BLOCK):
        block = np.frombuffer(data[start : start + SCAN_BLOCK], dtype=np.uint8)
        ends.append(np.flatnonzero(block == 10) + start)
    ends = np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64)
    if len(data) and (not len(ends) or ends[-1] != len(data) - 1):
        ends = np.append(ends, len(data))  # the last line has no newline
    starts = np.concatenate([[0], ends[:-1] + 1]) if len(ends) else ends
    return ends[ends > starts].astype(np.int64)  # blank lines (a trailing "\n\n") are no rows


__all__ = ["VectorWriter", "open_vectors", "vector_shards", "RowStore"]
