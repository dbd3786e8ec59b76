"""The index types of a search index and their faiss structures.

- ``flat``: no structure; every query is compared with every vector (exact, in NumPy: no faiss needed, so the
  base install builds and searches it). The default below ``APPROXIMATE_FROM`` rows.
- ``ivf-flat``: the vectors split into ``nlist`` cells by k-means (trained on a sample); a query scans the
  ``nprobe`` cells nearest to it. The default from ``APPROXIMATE_FROM`` rows.
- ``ivf-pq``: the same cells, the vectors compressed to ``pq_m`` bytes each (product quantisation), so the
  structure is a fraction of the vectors' size; its approximate scores only pick candidates.
- ``hnsw``: a navigable small-world graph (``hnsw_m`` links a vector, ``ef_search`` the search beam); needs no
  training, but is the slowest to build.

The other types are faiss structures (the ``faiss`` extra, ``pip install "mathgraph[faiss]"``); an index of
one searched where faiss is not installed is searched exactly, with a warning. Every type returns candidates (``candidate_count``: ``rescore`` times the hits asked for) that the index then
re-scores exactly from its stored vectors, so a hit's score is always its true cosine. Structures are written
with ``faiss.write_index`` and read memory-mapped (``IO_FLAG_MMAP_IFC``, as faiss 1.15 has it: the inverted
lists of ``ivf-*`` and the vectors and links of ``hnsw`` are mapped, not copied, into memory). The figures behind the defaults are in
``benchmarks/index_scale.py`` and ``docs/search.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from mathgraph.errors import UserError
from mathgraph.extras import install_hint
from mathgraph.tasks.search.index_format import APPROXIMATE_TYPES, INDEX_TYPES

# Below this many rows an exact search is fast enough (about 4 ms a query for 100,000 x 384 vectors) and needs
# nothing trained or stored beside the vectors.
APPROXIMATE_FROM = 100_000
LARGE_INDEX_TYPE = "ivf-flat"
# The most vectors k-means is trained on, unless the cells want more (``TRAINING_POINTS_PER_CELL`` each).
TRAINING_SAMPLE = 65_536
TRAINING_POINTS_PER_CELL = 64
# faiss's k-means warns below 39 training points a centroid; fewer cells (or PQ bits) keep every run above it.
MIN_POINTS_PER_CENTROID = 39
HNSW_NEIGHBOURS = 32
HNSW_EF_CONSTRUCTION = 200
# Search defaults, chosen on the 10^6-vector benchmark (benchmarks/index_scale.py, docs/search.md): the fewest
# cells and candidates that gave recall@10 >= 0.95 against exact search at p50 <= 10 ms: 24 of 1024 cells
# (ivf-flat 0.964 at 8.6 ms), and 80 candidates a hit for PQ codes (ivf-pq 0.956 at 6.8 ms; 10 gave 0.794).
# No hnsw setting reached 0.95 within 10 ms there: built with efConstruction 40, ef_search 512 gave 0.877; with
# 200, 0.917 (2048: 0.945 at 5.2 ms, 4096: 0.953 at 13.6 ms). Its default beam is faiss's usual one.
NPROBE_SHARE = 3 / 128  # of the cells: nprobe = 3 nlist / 128, at least MIN_NPROBE
MIN_NPROBE = 8
EF_SEARCH = 64
RESCORE = {"flat": 1, "ivf-flat": 1, "ivf-pq": 80, "hnsw": 1}
# Rows added to a structure at a time while building.
ADD_CHUNK = 65_536


def choose_index_type(index_type: str, count: int) -> str:
    """The index type for ``count`` rows: ``index_type`` itself, or for ``"auto"`` flat below
    ``APPROXIMATE_FROM`` rows and ``LARGE_INDEX_TYPE`` from there."""
    if index_type == "auto":
        return "flat" if count < APPROXIMATE_FROM else LARGE_INDEX_TYPE
    if index_type not in INDEX_TYPES:
        raise ValueError(f"index type must be 'auto' or one of {', '.join(INDEX_TYPES)}; got {index_type!r}")
    return index_type


def build_parameters(index_type: str, count: int, dimension: int) -> dict:
    """How a structure of ``index_type`` is built for ``count`` vectors of ``dimension``: ``nlist`` cells (a power
    of two near sqrt(count), fewer when the training sample would give a cell fewer than 39 points),
    ``training_size``, and ``pq_m`` / ``pq_bits`` or ``hnsw_m`` / ``ef_construction``."""
    if index_type not in APPROXIMATE_TYPES:
        return {}
    if index_type == "hnsw":
        return {"hnsw_m": HNSW_NEIGHBOURS, "ef_construction": HNSW_EF_CONSTRUCTION}
    nlist = 2 ** max(0, round(math.log2(math.sqrt(count))))
    training_size = min(count, max(TRAINING_SAMPLE, TRAINING_POINTS_PER_CELL * nlist))
    while nlist > 1 and nlist * MIN_POINTS_PER_CENTROID > training_size:
        nlist //= 2
    parameters = {"nlist": nlist, "training_size": training_size}
    if index_type == "ivf-pq":
        # one byte a code for 8 dimensions (pq_m must divide the dimension); fewer bits when the sample is small
        parameters["pq_m"] = max(m for m in range(1, max(1, dimension // 8) + 1) if dimension % m == 0)
        parameters["pq_bits"] = int(min(8, max(1, math.floor(math.log2(training_size / MIN_POINTS_PER_CENTROID)))))
    return parameters


def search_parameters(index_type: str, build: dict) -> dict:
    """The default search parameters of a structure built with ``build``: ``nprobe`` (``ivf-*``), ``ef_search``
    (``hnsw``) and ``rescore`` (candidates fetched per hit asked for, then re-scored exactly)."""
    parameters = {"rescore": RESCORE[index_type]}
    if index_type.startswith("ivf"):
        parameters["nprobe"] = min(build["nlist"], max(MIN_NPROBE, round(build["nlist"] * NPROBE_SHARE)))
    elif index_type == "hnsw":
        parameters["ef_search"] = EF_SEARCH
    return parameters


def new_structure(index_type: str, dimension: int, build: dict):
    """An empty faiss structure (inner product, for unit vectors: cosine); ``ivf-*`` still need ``train``.
    ``"flat"`` gives ``IndexFlatIP``, faiss's exact search (``SearchIndex.search(approximate_kind="flat")``), or
    where faiss is not installed ``NumpyFlatIP``, the same search in NumPy."""
    if index_type == "flat":
        try:
            return import_faiss().IndexFlatIP(dimension)
        except FaissMissing:
            return NumpyFlatIP(dimension)
    faiss = import_faiss()
    if index_type == "hnsw":
        structure = faiss.IndexHNSWFlat(dimension, build["hnsw_m"], faiss.METRIC_INNER_PRODUCT)
        structure.hnsw.efConstruction = build["ef_construction"]
        return structure
    quantizer = faiss.IndexFlatIP(dimension)
    if index_type == "ivf-flat":
        structure = faiss.IndexIVFFlat(quantizer, dimension, build["nlist"], faiss.METRIC_INNER_PRODUCT)
    elif index_type == "ivf-pq":
        structure = faiss.IndexIVFPQ(
            quantizer, dimension, build["nlist"], build["pq_m"], build["pq_bits"], faiss.METRIC_INNER_PRODUCT
        )
    else:
        raise ValueError(f"no faiss structure for index type {index_type!r}")
    structure.cp.seed = 0  # the same cells on every build of the same vectors
    return structure


class NumpyFlatIP:
    """The exact inner-product search of faiss's ``IndexFlatIP`` in NumPy (the base install, without faiss): the
    same ``add``, ``search`` and ``ntotal``; ``search`` gives each query's ``k`` highest inner products, best first
    (equal scores by row number, where faiss may order them otherwise), padded past the rows it holds with row -1
    and the lowest float32, as faiss pads."""

    is_trained = True

    def __init__(self, dimension: int):
        self.vectors = np.zeros((0, dimension), dtype=np.float32)

    @property
    def ntotal(self) -> int:
        """The rows added so far."""
        return len(self.vectors)

    def add(self, rows: np.ndarray) -> None:
        """Append ``rows`` (``[n, dimension]``); a row's number is its position."""
        self.vectors = np.concatenate([self.vectors, np.asarray(rows, dtype=np.float32)])

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, rows)``, each ``[queries, k]``."""
        queries = np.asarray(queries, dtype=np.float32)
        scores = queries @ self.vectors.T
        found = min(k, self.ntotal)
        numbers = np.broadcast_to(np.arange(self.ntotal), scores.shape)
        order = np.lexsort((numbers, -scores), axis=1)[:, :found]
        best_scores = np.full((len(queries), k), np.finfo(np.float32).min, dtype=np.float32)  # as faiss pads
        best_rows = np.full((len(queries), k), -1, dtype=np.int64)
        best_scores[:, :found] = np.take_along_axis(scores, order, axis=1)
        best_rows[:, :found] = order
        return best_scores, best_rows


def build_structure(index_type: str, vectors: np.ndarray, build: dict, seed: int = 0):
    """The faiss structure of ``vectors`` (unit rows, possibly memory-mapped): trained on a seeded sample of
    ``build["training_size"]`` rows where the type needs training, then filled ``ADD_CHUNK`` rows at a time, so
    that only the structure and one chunk are in memory besides the mapped vectors."""
    structure = new_structure(index_type, vectors.shape[1], build)
    if not structure.is_trained:
        rows = np.random.default_rng(seed).choice(len(vectors), build["training_size"], replace=False)
        structure.train(np.ascontiguousarray(vectors[np.sort(rows)], dtype=np.float32))
    add_chunks(structure, (vectors[start : start + ADD_CHUNK] for start in range(0, len(vectors), ADD_CHUNK)))
    return structure


def add_chunks(structure, chunks: Iterable[np.ndarray]) -> None:
    """Add row blocks to a trained structure, in order (a row's number is its position)."""
    for chunk in chunks:
        structure.add(np.ascontiguousarray(chunk, dtype=np.float32))


def configure(structure, parameters: dict, candidates: int) -> None:
    """Set a structure's search parameters for a search of ``candidates`` results."""
    if hasattr(structure, "nprobe") and "nprobe" in parameters:
        structure.nprobe = int(parameters["nprobe"])
    if hasattr(structure, "hnsw"):
        structure.hnsw.efSearch = max(int(parameters.get("ef_search", EF_SEARCH)), candidates)


def candidate_count(parameters: dict, k: int, count: int) -> int:
    """Candidates to fetch for ``k`` hits: ``rescore`` times ``k``, at most every row."""
    return min(count, k * max(1, int(parameters.get("rescore", 1))))


def write_structure(structure, path) -> None:
    """Save a structure (``faiss.write_index``)."""
    import_faiss().write_index(structure, str(path))


def read_structure(path):
    """A saved structure, memory-mapped: its inverted lists, codes and graph stay in the file's pages. An older
    faiss without ``IO_FLAG_MMAP_IFC`` maps only the inverted lists of ``ivf-*`` (``IO_FLAG_MMAP``) and reads an
    ``hnsw`` structure into memory."""
    faiss = import_faiss()
    mapped = getattr(faiss, "IO_FLAG_MMAP_IFC", faiss.IO_FLAG_MMAP)
    return faiss.read_index(str(path), mapped | faiss.IO_FLAG_READ_ONLY)


class FaissMissing(UserError, ImportError):
    """faiss is not installed (the base install leaves it out): a user's error naming the ``faiss`` extra, and an
    ``ImportError``, which a search that can go on exactly instead catches."""


def import_faiss():
    """faiss, or ``FaissMissing`` that says how to install it. Only the approximate types need it: a flat index
    is built and searched with NumPy (``index.exact_search``)."""
    try:
        import faiss
    except ImportError:
        raise FaissMissing(
            f"an approximate index ({', '.join(APPROXIMATE_TYPES)}: the default from {APPROXIMATE_FROM:,} rows) needs "
            f"faiss, which the base install leaves out: {install_hint('faiss')} (or build --index-type flat, exact)"
        ) from None
    return faiss


__all__ = [
    "INDEX_TYPES",
    "APPROXIMATE_TYPES",
    "APPROXIMATE_FROM",
    "choose_index_type",
    "build_parameters",
    "search_parameters",
    "new_structure",
    "build_structure",
    "add_chunks",
    "configure",
    "candidate_count",
    "write_structure",
    "read_structure",
    "import_faiss",
    "FaissMissing",
    "NumpyFlatIP",
]
