"""Similar-problem search: embed a corpus once, save it, find the nearest problems by cosine similarity.

    index = SearchIndex.build(rows, MathEncoder.from_pretrained("shipped"), text_field="problem")
    index.save_pretrained("INDEX")
    index = SearchIndex.from_pretrained("INDEX")        # with the encoder that built it, for text queries
    for hit in index.search(["Find $x$ if $2x+3=7$."], k=5)[0]:
        print(hit.score, hit.row["problem"])

An index directory (``tasks.search.index_format``) holds ``vectors.npy`` (the L2-normalised vectors, float32,
memory-mapped on load; never pickle), ``rows.jsonl`` (the source rows, in index order, read a row at a time)
and ``manifest.json`` (format, ``model_type`` "search-index", format version, count, dimension, text field,
index type and its parameters, each file's size and sha256, and the identity of the encoder: its kind, the
sha256 of its weights, the mode, the dimension, the model it was loaded from), and for an approximate index
type the faiss structure ``ann.faiss``. Querying with an encoder whose identity differs raises
``IndexMismatchError``: vectors of two models are not comparable. Format 1 indexes
(``embeddings.safetensors``) still load, as flat indexes.

The index type (``tasks.search.index_types``: ``flat``, ``ivf-flat``, ``ivf-pq``, ``hnsw``; ``"auto"``: flat
below 100,000 rows, ``ivf-flat`` from there) decides how candidates are found; every type then re-scores its
candidates exactly from the stored vectors, so scores are true cosines and the steps after it (hybrid
fusion, the alignment step) read rows and vectors by row number the same way on every type. ``write_index``
builds an index directory from vector shards, with one shard in memory at a time. Encoders are
``tasks.search.embedders.Embedder``s; the commands' helpers are in ``tasks.search.commands``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np

from mathgraph.checksums import file_sha256
from mathgraph.errors import UserError
from mathgraph.extras import install_hint
from mathgraph.files import apply_umask
from mathgraph.jsonl import JsonlError, atomic_writer, read_rows
from mathgraph.quiet import progress_bar, warn
from mathgraph.registry import resolve_index, write_model_type
from mathgraph.tasks.search.embedders import (
    Embedder,
    MathEncoderEmbedder,
    OnnxEncoderEmbedder,
    _is_math_encoder,
    as_embedder,
    load_embedder,
)
from mathgraph.tasks.search.index_format import (
    APPROXIMATE_TYPES,
    FORMAT,
    FORMAT_VERSION,
    INDEX_TYPES,
    MANIFEST_FILE,
    MODEL_TYPE,
    ROWS_FILE,
    SAFETENSORS_FILE,
    STRUCTURE_FILE,
    VECTORS_FILE,
    IndexFormatError,
    check_files,
    read_manifest,
    read_safetensors,
)
from mathgraph.tasks.search.index_store import RowStore, VectorWriter, open_vectors, vector_shards
from mathgraph.tasks.search.index_types import (
    build_parameters,
    build_structure,
    candidate_count,
    choose_index_type,
    configure,
    import_faiss,
    read_structure,
    search_parameters,
    write_structure,
)

EMBEDDINGS_FILE = VECTORS_FILE  # the vectors' file, by its older name
# The identity fields that must agree between an index and the encoder that queries it
# (split_digits only appears for models that split numbers into digits, so older indexes still match).
IDENTITY_KEYS = ("kind", "weights_sha256", "mode", "dimension", "split_digits")
# Scores of the exact search computed at a time (queries x rows), to bound its memory on large indexes.
EXACT_BLOCK_SCORES = 2**25


# Rows of the first stage (dense, or dense + TF-IDF) that the alignment model re-scores per query: it parses
# and aligns each, so it reads a short list, not the whole index.
STRUCTURE_RERANK = 50
# Candidates of an approximate index that hybrid search fuses with TF-IDF (an exact index fuses every row).
HYBRID_POOL = 1000
# The skeleton channel's token bags of an index loaded from a directory, computed on its first search.
SKELETON_CACHE = "skeleton-tokens.json.gz"
# write_index builds in a hidden folder of this prefix inside the index directory, then moves the files in
BUILDING_PREFIX = ".building-"


def shipped_structure_min_cosine() -> float:
    """The cosine below which search's structure step leaves a row unscored, as the shipped package measured it
    (its ``config.json``'s ``search.structure.min_cosine``; 0, every row scored, for a package without one)."""
    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR

    setting = ModelPackage(SHIPPED_DIR).search_setting("structure")
    return 0.0 if setting is None else float(setting.get("min_cosine", 0.0))


class IndexMismatchError(UserError):
    """The encoder given to an index is not the one that built it."""


# --------------------------------------------------------------------------- the index
@dataclass(frozen=True)
class Hit:
    """One search result: its position in the index, its ranking score, the source row, and its cosine to the
    query. The score is the cosine when the search fuses nothing; a hybrid search or the alignment step rank by
    a fused score instead, a weighted sum of standardised scores (``models.late_fusion.fuse_scores``: about 0 for
    an average row of the candidates, several units for the best), which is not a cosine and not bounded."""

    index: int
    score: float
    row: dict
    cosine: float | None = None

    def to_dict(self) -> dict:
        """JSON-able form, for ``--format json``."""
        return {"index": self.index, "score": self.score, "cosine": self.cosine, "row": self.row}


class SearchIndex:
    """L2-normalised vectors of a corpus with its rows, searched by cosine similarity through its index type."""

    def __init__(
        self,
        embeddings: np.ndarray,
        rows: Sequence[dict],
        text_field: str,
        identity: dict,
        embedder: Embedder | None = None,
        index_type: str = "flat",
        parameters: Mapping | None = None,
    ):
        """``embeddings`` ``[rows, dimension]`` (unit rows; a memory-mapped array is kept as it is), ``rows`` in
        the same order, ``index_type`` (``"auto"``: by the row count, ``index_types.choose_index_type``) and
        ``parameters`` ``{"build": ..., "search": ...}`` (default: ``index_types``'s for this size). An
        approximate type's structure is built on its first search, or by ``save_pretrained``."""
        embeddings = np.asanyarray(embeddings)  # a memory-mapped array stays mapped
        if embeddings.dtype != np.float32:
            embeddings = embeddings.astype(np.float32)
        if embeddings.ndim != 2 or len(embeddings) != len(rows):
            raise ValueError(f"embeddings must be [rows, dimension]; got shape {embeddings.shape} for {len(rows)} rows")
        if len(rows) == 0:
            raise ValueError("a search index needs at least one row; the corpus is empty")
        self.embeddings, self.text_field = embeddings, text_field
        self.rows = rows if isinstance(rows, RowStore) else list(rows)
        self.identity, self.embedder = dict(identity), embedder
        self.index_type = choose_index_type(index_type, len(self.rows))
        parameters = dict(parameters or {})
        self.build_parameters = dict(
            parameters.get("build") or build_parameters(self.index_type, len(self.rows), self.dimension)
        )
        self.search_parameters = {
            **search_parameters(self.index_type, self.build_parameters),
            **(parameters.get("search") or {}),
        }
        self.directory: Path | None = None  # where the index was loaded from (its files are mapped)
        self._structures: dict[str, object] = {}  # faiss structures by index type, loaded or built on first use
        self._sparse = None  # (TF-IDF vectorizer, row matrix) for hybrid search, built on first use
        self.skeleton = None  # tasks.search.skeleton.SkeletonIndex of skeleton_weight > 0, built on first use
        self.structure = None  # the SQR alignment model of structure_weight > 0 (the shipped one when None)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def dimension(self) -> int:
        """Length of the stored vectors."""
        return int(self.embeddings.shape[1])

    # ------------------------------------------------------------- building
    @classmethod
    def build(
        cls,
        texts_or_rows: Sequence[str] | Sequence[Mapping],
        encoder,
        text_field: str = "problem",
        batch_size: int = 32,
        mode: str | None = None,
        show_progress: bool = False,
        index_type: str = "auto",
    ) -> SearchIndex:
        """Embed a corpus: a list of strings (stored as rows ``{text_field: text}``) or of dict rows whose
        ``text_field`` holds the text. ``encoder``: a ``MathEncoder`` (``mode`` picks its vector) or an ``Embedder``.

        ``show_progress``: one progress bar over the problems, parsing and encoding together, with its estimate
        of the time left (``_encode_corpus``). ``index_type``: see ``tasks.search.index_types`` (``"auto"``: by
        the corpus' size). A corpus too large to hold in memory is built with ``write_index`` from shards."""
        embedder = as_embedder(encoder, mode)
        if isinstance(texts_or_rows, (str, bytes)):
            raise TypeError("build takes a list of texts or rows, not a single string")
        rows = [as_row(item, text_field, i) for i, item in enumerate(texts_or_rows)]
        if not rows:
            raise ValueError("cannot build a search index from an empty corpus")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        texts = [row[text_field] for row in rows]
        vectors = (
            _encode_corpus(embedder, texts, batch_size) if show_progress else encode_texts(embedder, texts, batch_size)
        )
        return cls(l2_normalize(vectors), rows, text_field, embedder.identity(), embedder, index_type)

    # ------------------------------------------------------------- searching
    def search(
        self,
        queries: Sequence[str],
        k: int = 5,
        approximate: bool | None = None,
        approximate_kind: str | None = None,
        batch_size: int = 32,
        sparse_weight: float = 0.0,
        structure_weight: float = 0.0,
        structure_min_cosine: float | None = None,
        skeleton_weight: float = 0.0,
        skeleton_confidence: tuple[float, float] | None | str = "shipped",
        fusion: str | None = None,
        numbers_bonus: float | None = None,
        encoder_lead: float | None | str = "shipped",
    ) -> list[list[Hit]]:
        """The ``k`` most similar rows of each query, best first: one list of hits per query (a lone string is
        refused, as ``MathEncoder.encode`` refuses one: wrap it in a list). ``approximate`` and
        ``approximate_kind``: see ``search_vectors``.

        ``sparse_weight`` > 0 is hybrid search (``models.late_fusion.fuse_scores``): each row's cosine is fused
        with its TF-IDF cosine to the query (a TF-IDF model fitted on the index's texts on first use): every
        row of an exact search, the best ``HYBRID_POOL`` candidates of an approximate one; the hits' scores
        are then the fused ones (``Hit.cosine`` keeps the cosine).

        ``skeleton_weight`` > 0 adds the structure-aware channel (``tasks.search.skeleton``: formula paths and
        the quantity/question skeleton, numbers and names abstracted) to that fusion, over the same rows:
        ``(1 - sparse - skeleton) z(cosine) + sparse z(TF-IDF) + skeleton z(skeleton)``
        (``skeleton.fuse_channels``); the two weights sum to at most 1. ``skeleton_weight`` is the channel's
        largest weight: each query's is scaled by how sure the channel is (``skeleton.confident_weight``: 0 where
        the query's best skeleton cosine among the candidates is at most ``skeleton_confidence[0]``, the full
        weight from ``skeleton_confidence[1]``); ``"shipped"``: ``skeleton.SKELETON_CONFIDENCE``, chosen on dev
        with the default weights; None: the same weight for every query. ``fusion``: how the channels are fused
        (``skeleton.fuse_channels``): ``"standardised"`` (z-scores over the candidates) or ``"cosine"`` (the
        cosines as they are); None: ``skeleton.SKELETON_FUSION`` where the skeleton channel is on, else
        ``"standardised"`` (the TF-IDF fusion's weight was chosen so).

        ``numbers_bonus`` > 0, times the match's weight (``SkeletonIndex.number_weight``: how rare the numbers
        are in the bank), is added to the fused score of each row whose literal numbers (signed) are exactly the
        query's (``skeleton.problem_numbers``, ``SkeletonIndex.number_matches``; a query without numbers: none),
        so that a reworded query finds its original before a sibling with other numbers that the skeleton cannot
        tell from it; None: ``skeleton.NUMBERS_BONUS`` where the skeleton channel is on, else 0.

        ``encoder_lead``: where the skeleton channel is on, a query whose best row by the cosine leads its
        second best by at least this much keeps that row first (``skeleton.keep_encoder_lead``: the fusion falls
        back on the sentence encoder where it is sure); ``"shipped"``: ``skeleton.ENCODER_LEAD``; None: never.

        ``structure_weight`` > 0 adds the structure signal: the best ``STRUCTURE_RERANK`` rows of that first
        stage are scored by an SQR alignment model (``models.alignment_model``: the expected relevance of each row as a
        similar problem, from the alignment of its graph with the query's; ``self.structure``, by default the
        shipped one) and the two scores fused the same way (``fuse_scores``). Only rows whose cosine to the query
        is at least ``structure_min_cosine`` are scored, the others score 0 (``models.structure.close_variant_scores``:
        the model judges variants of the query); a query with no row that close keeps its first-stage hits. None:
        the shipped setting (``release.json``, measured with the shipped encoder on the SQR train lists)."""
        if self.embedder is None:
            raise ValueError(
                "this index has no encoder to embed queries: load it with SearchIndex.from_pretrained(dir) "
                "(the encoder that built it) or pass encoder=..., or use search_vectors"
            )
        if isinstance(queries, str):
            raise TypeError("search takes a list of queries; wrap a single query in a list")
        queries = list(queries)
        if not queries:
            return []
        for i, query in enumerate(queries):
            if not isinstance(query, str) or not query.strip():
                raise ValueError(f"query {i} is empty or not a string: {query!r}")
        _check_k(k)
        for name, weight in (
            ("sparse_weight", sparse_weight),
            ("structure_weight", structure_weight),
            ("skeleton_weight", skeleton_weight),
        ):
            if not 0.0 <= weight <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {weight}")
        if sparse_weight + skeleton_weight > 1.0 + 1e-9:
            raise ValueError(
                f"sparse_weight + skeleton_weight must be at most 1, got {sparse_weight + skeleton_weight}"
            )
        if isinstance(skeleton_confidence, str):
            if skeleton_confidence != "shipped":
                raise ValueError(f"skeleton_confidence: (low, high), None or 'shipped', got {skeleton_confidence!r}")
            from mathgraph.tasks.search.skeleton import SKELETON_CONFIDENCE

            skeleton_confidence = SKELETON_CONFIDENCE
        if skeleton_confidence is not None:
            from mathgraph.tasks.search.skeleton import confident_weight

            confident_weight(1.0, skeleton_weight, skeleton_confidence)  # a bad (low, high) fails before encoding
        from mathgraph.tasks.search.skeleton import FUSIONS, SKELETON_FUSION

        if fusion is None:
            fusion = SKELETON_FUSION if skeleton_weight > 0 else "standardised"
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, got {fusion!r}")
        if numbers_bonus is None:
            from mathgraph.tasks.search.skeleton import NUMBERS_BONUS

            numbers_bonus = NUMBERS_BONUS if skeleton_weight > 0 else 0.0
        if not 0.0 <= numbers_bonus <= 1.0:
            raise ValueError(f"numbers_bonus must be in [0, 1], got {numbers_bonus}")
        if isinstance(encoder_lead, str):
            if encoder_lead != "shipped":
                raise ValueError(f"encoder_lead: a number, None or 'shipped', got {encoder_lead!r}")
            from mathgraph.tasks.search.skeleton import ENCODER_LEAD

            encoder_lead = ENCODER_LEAD
        if encoder_lead is not None and encoder_lead < 0:
            raise ValueError(f"encoder_lead must be >= 0 or None, got {encoder_lead}")
        if skeleton_weight == 0:
            encoder_lead = None  # without the skeleton channel there is nothing to fall back from
        vectors = encode_texts(self.embedder, queries, batch_size)
        first = max(k, STRUCTURE_RERANK) if structure_weight > 0 else k
        if sparse_weight > 0 or skeleton_weight > 0 or numbers_bonus > 0:
            hits = self._hybrid_search(
                queries,
                vectors,
                first,
                sparse_weight,
                approximate,
                approximate_kind,
                skeleton_weight,
                skeleton_confidence,
                fusion,
                numbers_bonus,
                encoder_lead,
            )
        else:
            hits = self.search_vectors(vectors, first, approximate, approximate_kind)
        if structure_weight > 0:
            hits = self._structure_rerank(queries, vectors, hits, k, structure_weight, structure_min_cosine)
        return hits

    def _structure_rerank(
        self,
        queries: list[str],
        vectors: np.ndarray,
        hits: list[list[Hit]],
        k: int,
        weight: float,
        min_cosine: float | None,
    ) -> list[list[Hit]]:
        from mathgraph.models.alignment_model import close_variant_scores
        from mathgraph.models.late_fusion import fuse_scores

        if self.structure is None:
            from mathgraph.models.package import ModelPackage
            from mathgraph.registry import SHIPPED_DIR

            package = ModelPackage(SHIPPED_DIR)
            self.structure = package.structure("sqr", package.search_setting("structure"))
        if min_cosine is None:
            min_cosine = shipped_structure_min_cosine()
        query_vectors = l2_normalize(np.asarray(vectors, dtype=np.float32))
        cosines = [self.vectors_of([hit.index for hit in query_hits]) @ v for v, query_hits in zip(query_vectors, hits)]
        # one call for every query: their problems are parsed together
        lists = [
            (query, [str(hit.row[self.text_field]) for hit in query_hits]) for query, query_hits in zip(queries, hits)
        ]
        reranked = []
        for query_hits, scores in zip(hits, close_variant_scores(self.structure, lists, cosines, min_cosine)):
            if scores is None:  # no row close enough to be a variant: the first stage's hits as they are
                reranked.append(query_hits[:k])
                continue
            fused = fuse_scores([hit.score for hit in query_hits], scores, weight)
            best = np.argsort(-fused, kind="stable")[:k]
            reranked.append(
                [Hit(query_hits[i].index, float(fused[i]), query_hits[i].row, query_hits[i].cosine) for i in best]
            )
        return reranked

    def _hybrid_search(
        self,
        queries: list[str],
        vectors: np.ndarray,
        k: int,
        weight: float,
        approximate: bool | None,
        approximate_kind: str | None,
        skeleton_weight: float = 0.0,
        skeleton_confidence: tuple[float, float] | None = None,
        fusion: str = "standardised",
        numbers_bonus: float = 0.0,
        encoder_lead: float | None = None,
    ) -> list[list[Hit]]:
        from mathgraph.tasks.search.skeleton import confident_weight, fuse_channels, keep_encoder_lead

        if self._sparse is None:  # fitted once per loaded index, in NumPy (no scikit-learn where only predicting)
            from mathgraph.models.tfidf import VECTORIZER_DEFAULTS
            from mathgraph.models.tfidf_features import ColumnMatrix, TfidfFeatures

            texts = [str(row[self.text_field]) for row in self.rows]
            vectorizer = TfidfFeatures.fit(texts, VECTORIZER_DEFAULTS)
            self._sparse = vectorizer, ColumnMatrix(vectorizer.transform(texts), len(vectorizer))
        vectorizer, matrix = self._sparse
        query_vectors = l2_normalize(np.asarray(vectors, dtype=np.float32))
        sparse_queries = vectorizer.transform(queries)
        if (skeleton_weight > 0 or numbers_bonus > 0) and self.skeleton is None:
            self.skeleton = self._skeleton_index()
        if self._uses_structure(approximate):  # fuse over the structure's best candidates, re-scored exactly
            pools, _ = self.top_k(query_vectors, min(len(self), max(k, HYBRID_POOL)), approximate, approximate_kind)
            candidates = [pool[pool >= 0] for pool in pools]
        else:  # every row
            candidates = [None] * len(queries)
        k = min(k, len(self))
        skeleton = self.skeleton.scores(queries, candidates) if skeleton_weight > 0 else [None] * len(queries)
        same_numbers = self.skeleton.number_matches(queries, candidates) if numbers_bonus > 0 else None
        hits = []
        for i, rows in enumerate(candidates):
            if rows is None:
                rows, dense = np.arange(len(self)), self.embeddings @ query_vectors[i]
                sparse = matrix.dot(sparse_queries[i])
            else:
                dense = self.vectors_of(rows) @ query_vectors[i]
                sparse = matrix.dot(sparse_queries[i], rows)
            channels = (dense, sparse, skeleton[i] if skeleton[i] is not None else np.zeros_like(dense))
            best_skeleton = float(np.max(channels[2])) if len(rows) else 0.0
            own = confident_weight(best_skeleton, skeleton_weight, skeleton_confidence) if skeleton_weight > 0 else 0.0
            fused = fuse_channels(channels, (max(0.0, 1.0 - weight - own), weight, own), fusion)
            if same_numbers is not None:
                fused = fused + numbers_bonus * same_numbers[i]
            fused = keep_encoder_lead(fused, dense, encoder_lead)
            best = np.lexsort((rows, -fused))[:k]
            hits.append([Hit(int(rows[j]), float(fused[j]), self.rows[int(rows[j])], float(dense[j])) for j in best])
        return hits

    def _skeleton_index(self):
        """The rows' skeleton index (``tasks.search.skeleton``); an index loaded from a directory keeps its token
        bags in ``SKELETON_CACHE`` there, keyed by the rows file's checksum."""
        from mathgraph.tasks.search.skeleton import SkeletonIndex

        texts = [str(row[self.text_field]) for row in self.rows]
        if self.directory is None:
            return SkeletonIndex(texts)
        rows_sha = read_manifest(self.directory).get("sha256", {}).get(ROWS_FILE, "")
        return SkeletonIndex.cached(texts, self.directory / SKELETON_CACHE, f"{len(texts)}:{rows_sha}")

    def search_vectors(
        self, vectors: np.ndarray, k: int = 5, approximate: bool | None = None, approximate_kind: str | None = None
    ) -> list[list[Hit]]:
        """Hits for query vectors ``[queries, dimension]`` (normalised here). ``approximate``: None -> the index
        type's own search (exact for ``flat``; an approximate type's structure, or exact with a warning where faiss
        is not installed); False -> exact on every type (the vectors are stored); True -> a faiss structure:
        ``approximate_kind`` (one of ``INDEX_TYPES``; default: the index's own type, or ``hnsw`` for a flat
        index), built in memory on first use unless it is the saved one. The candidates of a structure are
        re-scored exactly from the stored vectors (``rescore`` times ``k`` of them), so scores are cosines."""
        _check_k(k)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        if vectors.ndim != 2 or vectors.shape[1] != self.dimension:
            raise ValueError(f"query vectors must be [queries, {self.dimension}], got shape {vectors.shape}")
        if approximate_kind is not None and approximate_kind not in INDEX_TYPES:
            raise ValueError(f"approximate_kind must be one of {INDEX_TYPES}, got {approximate_kind!r}")
        indices, scores = self.top_k(l2_normalize(vectors), min(k, len(self)), approximate, approximate_kind)
        return [
            [Hit(int(i), float(s), self.rows[int(i)], float(s)) for i, s in zip(row_i, row_s) if i >= 0]
            for row_i, row_s in zip(indices, scores)
        ]

    def top_k(
        self, vectors: np.ndarray, k: int, approximate: bool | None = None, approximate_kind: str | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(indices, scores)`` ``[queries, k]`` of unit query vectors (``k`` at most ``len(self)``), as
        ``search_vectors`` finds them, without reading rows: -1 where fewer than ``k`` were found."""
        if not self._uses_structure(approximate):
            return exact_search(vectors, self.embeddings, k)
        kind = approximate_kind or (self.index_type if self.index_type in APPROXIMATE_TYPES else "hnsw")
        parameters = (
            self.search_parameters
            if kind == self.index_type
            else search_parameters(kind, build_parameters(kind, len(self), self.dimension))
        )
        count = candidate_count(parameters, k, len(self))
        structure = self._structure(kind)
        configure(structure, parameters, count)
        _, candidates = structure.search(np.ascontiguousarray(vectors), count)
        return rescore(vectors, candidates, self.embeddings, k)

    def vectors_of(self, rows: Sequence[int]) -> np.ndarray:
        """The stored vectors of the given row numbers, ``[len(rows), dimension]`` (read from the mapped file)."""
        return np.asarray(self.embeddings[np.asarray(rows, dtype=np.int64)], dtype=np.float32)

    def _uses_structure(self, approximate: bool | None) -> bool:
        if approximate is not None:
            return bool(approximate)
        if self.index_type == "flat":
            return False
        try:
            import_faiss()
        except ImportError:
            warn(
                f"{len(self)} rows ({self.index_type}): approximate search needs faiss "
                f"({install_hint('faiss')}); searching exactly"
            )
            return False
        return True

    def _structure(self, kind: str):
        """The faiss structure of ``kind``: the saved one (memory-mapped) or one built in memory, kept for reuse."""
        if kind not in self._structures:
            saved = self.directory / STRUCTURE_FILE if self.directory is not None else None
            if kind == self.index_type and saved is not None and saved.is_file():
                self._structures[kind] = read_structure(saved)
            else:
                import_faiss()
                build = self.build_parameters if kind == self.index_type else {}
                build = build or build_parameters(kind, len(self), self.dimension)
                self._structures[kind] = build_structure(kind, self.embeddings, build)
        return self._structures[kind]

    # ------------------------------------------------------------- saving
    def save_pretrained(self, directory: str | PathLike) -> None:
        """Write the vectors, rows, the index type's structure (built now if it was not) and the manifest (last,
        so a half-written index has no manifest): ``write_index``."""
        directory = Path(directory)
        if self.directory is not None and directory.resolve() == self.directory.resolve():
            raise ValueError(f"{directory}: the index was loaded from there (its files are in use); save elsewhere")
        if self.index_type in APPROXIMATE_TYPES and self.index_type not in self._structures:
            self._structure(self.index_type)
        write_index(
            directory,
            vector_shards(self.embeddings),
            self.rows,
            self.text_field,
            self.identity,
            self.index_type,
            {"build": self.build_parameters, "search": self.search_parameters},
            structure=self._structures.get(self.index_type),
            normalized=True,
        )

    @classmethod
    def from_pretrained(
        cls,
        directory: str | PathLike,
        encoder="auto",
        mode: str | None = None,
        device: str | None = None,
        runtime: str | None = None,
    ) -> SearchIndex:
        """Read an index written by ``save_pretrained`` or ``write_index`` (vectors and rows memory-mapped, the
        structure mapped on its first search), ready for text queries with ``encoder``:

        - ``"auto"`` (the default): the model that built it, as its manifest records it (an index built with an
          encoder object that names no model, such as a custom ``Embedder``, loads without one);
        - a ``MathEncoder`` or ``Embedder`` already loaded, or a model spec (``tasks.search.embedders.load_embedder``);
        - ``None``: no encoder (``search_vectors`` only; nothing is loaded but the index).

        ``device`` and ``runtime`` (``load_embedder``) say where a model spec's encoder runs.

        An encoder that is not the index's raises ``IndexMismatchError``; damaged files raise
        ``IndexFormatError`` (checked before any model is loaded)."""
        directory = resolve_index(directory)  # a Hugging Face Hub id is downloaded
        manifest = read_manifest(directory)
        index = _open_index(directory, manifest)
        if encoder is None:
            return index
        if mode is None:
            from mathgraph.models.onnx_package import MODES

            # Query with the vector the index was built from; an index of another kind fails the check below.
            built_mode = manifest["encoder"].get("mode")
            mode = built_mode if built_mode in MODES else "joint"
        if isinstance(encoder, (str, PathLike)):
            spec = manifest["encoder"].get("source") if str(encoder) == "auto" else encoder
            if spec is None:  # search() says how to give it one
                return index
            embedder = load_embedder(spec, mode=mode, device=device, runtime=runtime)
        else:
            embedder = as_embedder(encoder, mode if _is_math_encoder(encoder) else None)
        check_identity(manifest["encoder"], embedder.identity(), directory)
        index.embedder = embedder
        return index


# --------------------------------------------------------------------------- writing and reading
def write_index(
    directory: str | PathLike,
    shards: Iterable[np.ndarray],
    rows: Iterable[Mapping],
    text_field: str,
    identity: dict,
    index_type: str = "auto",
    parameters: Mapping | None = None,
    structure=None,
    normalized: bool = False,
) -> SearchIndex:
    """Build an index directory from vector shards (``[rows, dimension]`` arrays, in row order; L2-normalised
    here unless ``normalized`` says they are)
    and their rows, holding one shard in memory: the vectors stream into ``vectors.npy``, the rows into
    ``rows.jsonl``, then the structure of ``index_type`` (``"auto"``: by the row count) is trained on a sample
    of the written vectors and filled from them (``index_types.build_structure``), or ``structure`` (already
    built from these vectors) is written as it is. Returns the index, loaded from the directory, without an
    encoder (``from_pretrained`` attaches one).

    The files are written in a hidden folder inside ``directory`` and moved into it at the end, the manifest
    last: a build that fails or is killed leaves the directory as it was (an index there before stays whole
    and loadable, and a process that has its files mapped keeps reading them), at the cost of room for both
    while the new one is built. Other files in ``directory`` are left alone."""
    final = Path(directory)
    final.mkdir(parents=True, exist_ok=True)
    for leftover in final.glob(BUILDING_PREFIX + "*"):  # of a build killed before it could clean up
        shutil.rmtree(leftover, ignore_errors=True)
    building = Path(tempfile.mkdtemp(prefix=BUILDING_PREFIX, dir=final))
    try:
        files = _write_index_files(
            building, shards, rows, text_field, identity, index_type, parameters, structure, normalized
        )
        (final / MANIFEST_FILE).unlink(missing_ok=True)  # until the new manifest is moved in, nothing loads it
        for name in (SAFETENSORS_FILE, STRUCTURE_FILE):  # no stale files of an earlier index
            (final / name).unlink(missing_ok=True)
        for name in files:
            os.replace(building / name, final / name)
        write_model_type(final, MODEL_TYPE)  # config.json says what the directory holds
        os.replace(building / MANIFEST_FILE, final / MANIFEST_FILE)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return _open_index(final, read_manifest(final))


def _write_index_files(
    directory: Path,
    shards: Iterable[np.ndarray],
    rows: Iterable[Mapping],
    text_field: str,
    identity: dict,
    index_type: str,
    parameters: Mapping | None,
    structure,
    normalized: bool,
) -> list[str]:
    """``write_index``'s files and manifest, written in ``directory`` (its hidden building folder); returns the
    names of the files the manifest lists."""
    shards = iter(shards)
    first = next(shards, None)
    if first is None:
        raise ValueError("cannot build a search index from no vectors")
    first = np.asarray(first, dtype=np.float32)
    if first.ndim != 2:
        raise ValueError(f"a vector shard must be [rows, dimension], got shape {first.shape}")
    unit = (lambda shard: shard) if normalized else l2_normalize
    with VectorWriter(directory / VECTORS_FILE, first.shape[1]) as writer:
        writer.append(unit(first))
        for shard in shards:
            writer.append(unit(shard))
    apply_umask(directory / VECTORS_FILE)
    count = _write_rows(directory / ROWS_FILE, rows, text_field)
    if count != writer.count:
        raise ValueError(f"{count} rows but {writer.count} vectors: every row needs one vector")
    if count == 0:
        raise ValueError("cannot build a search index from an empty corpus")
    index_type = choose_index_type(index_type, count)
    parameters = dict(parameters or {})
    build = dict(parameters.get("build") or build_parameters(index_type, count, writer.dimension))
    search = {**search_parameters(index_type, build), **(parameters.get("search") or {})}
    if index_type in APPROXIMATE_TYPES:
        if structure is None:
            structure = build_structure(index_type, open_vectors(directory / VECTORS_FILE), build)
        write_structure(structure, directory / STRUCTURE_FILE)
        apply_umask(directory / STRUCTURE_FILE)
    files = [VECTORS_FILE, ROWS_FILE] + ([STRUCTURE_FILE] if index_type in APPROXIMATE_TYPES else [])
    manifest = {
        "format": FORMAT,
        "model_type": MODEL_TYPE,
        "version": FORMAT_VERSION,
        "count": count,
        "dimension": writer.dimension,
        "text_field": text_field,
        "index_type": index_type,
        "parameters": {"build": build, "search": search},
        "encoder": dict(identity),
        "sha256": {name: file_sha256(directory / name) for name in files},
        "bytes": {name: (directory / name).stat().st_size for name in files},
    }
    with atomic_writer(directory / MANIFEST_FILE) as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)
    return files


def _write_rows(path: Path, rows: Iterable[Mapping], text_field: str) -> int:
    count = 0
    with atomic_writer(path) as f:
        for i, row in enumerate(rows):
            row = as_row(row, text_field, i)
            try:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            except (TypeError, ValueError) as err:
                raise ValueError(f"row {i} cannot be written as JSON: {err}") from err
            count += 1
    return count


def _open_index(directory: Path, manifest: dict) -> SearchIndex:
    """The index of a directory whose manifest is read: format 2 mapped, format 1 loaded into memory."""
    if manifest["version"] == 1:
        embeddings = read_safetensors(directory, manifest)
        try:
            rows = [row for _, row in read_rows(directory / ROWS_FILE)[0]]
        except JsonlError as err:
            raise IndexFormatError(f"{directory}: {err}") from err
        index_type, parameters = "flat", None
    else:
        check_files(directory, manifest)
        try:
            embeddings, rows = open_vectors(directory / VECTORS_FILE), RowStore(directory / ROWS_FILE)
        except (OSError, ValueError) as err:
            raise IndexFormatError(f"cannot read {directory}: {err}") from err
        expected = (manifest["count"], manifest["dimension"])
        if embeddings.shape != expected or embeddings.dtype != np.float32:
            raise IndexFormatError(
                f"{directory / VECTORS_FILE}: expected float32 {expected}, got {embeddings.dtype} {embeddings.shape}"
            )
        index_type, parameters = manifest["index_type"], manifest.get("parameters")
    if len(rows) != manifest["count"]:
        raise IndexFormatError(f"{directory / ROWS_FILE} has {len(rows)} rows, the manifest says {manifest['count']}")
    index = SearchIndex(embeddings, rows, manifest["text_field"], manifest["encoder"], None, index_type, parameters)
    index.directory = directory
    return index


# --------------------------------------------------------------------------- helpers
def exact_top_k(queries: np.ndarray, embeddings: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, scores)`` ``[queries, k]`` of the largest inner products, best first; ties go to the lower index."""
    scores = queries @ embeddings.T
    n = scores.shape[1]
    k = min(k, n)
    # argpartition finds the top k in O(n); only those k are then sorted.
    candidates = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (len(scores), 1))
    candidate_scores = np.take_along_axis(scores, candidates, axis=1)
    order = np.lexsort((candidates, -candidate_scores), axis=1)
    indices = np.take_along_axis(candidates, order, axis=1)
    return indices, np.take_along_axis(scores, indices, axis=1)


def exact_search(queries: np.ndarray, embeddings: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``exact_top_k`` over blocks of rows (``EXACT_BLOCK_SCORES`` scores at a time), so that a memory-mapped
    index of millions of rows is read a block at a time and its score matrix never held whole."""
    block = max(k, EXACT_BLOCK_SCORES // max(1, len(queries)))
    if len(embeddings) <= block:
        return exact_top_k(queries, np.asarray(embeddings), k)
    best_i = np.zeros((len(queries), 0), dtype=np.int64)
    best_s = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, len(embeddings), block):
        indices, scores = exact_top_k(queries, np.asarray(embeddings[start : start + block]), k)
        merged_i = np.concatenate([best_i, indices + start], axis=1)
        merged_s = np.concatenate([best_s, scores], axis=1)
        order = np.lexsort((merged_i, -merged_s), axis=1)[:, :k]
        best_i, best_s = np.take_along_axis(merged_i, order, axis=1), np.take_along_axis(merged_s, order, axis=1)
    return best_i, best_s


def rescore(
    queries: np.ndarray, candidates: np.ndarray, embeddings: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` of each query's candidate rows (``[queries, c]``, -1 for none) by their exact inner product
    with the stored vectors; ties go to the lower index; missing hits are -1 with score -inf."""
    indices = np.full((len(queries), k), -1, dtype=np.int64)
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    for i, (query, rows) in enumerate(zip(queries, candidates)):
        rows = np.unique(rows[rows >= 0])  # sorted: the mapped file is read in order
        if not len(rows):
            continue
        exact = np.asarray(embeddings[rows], dtype=np.float32) @ query
        best = np.lexsort((rows, -exact))[:k]
        indices[i, : len(best)], scores[i, : len(best)] = rows[best], exact[best]
    return indices, scores


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); all-zero rows stay zero instead of becoming NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def check_identity(expected: dict, actual: dict, where: object = "the index") -> None:
    """Raise ``IndexMismatchError`` naming the fields where an encoder differs from the one that built an index."""
    differences = [
        f"{key}: index {expected.get(key)!r}, encoder {actual.get(key)!r}"
        for key in IDENTITY_KEYS
        if expected.get(key) != actual.get(key)
    ]
    if differences:
        raise IndexMismatchError(
            f"{where} was built with another encoder; its vectors cannot be compared with this "
            f"one's ({'; '.join(differences)}). Load the index with the encoder that built it, "
            "or rebuild the index with this one."
        )


def as_row(item: object, text_field: str, position: int) -> dict:
    """A corpus item as an index row: a string becomes ``{text_field: text}``; a dict row must hold a non-empty
    text in ``text_field`` (ValueError naming the row and its fields otherwise)."""
    if isinstance(item, str):
        row = {text_field: item}
    elif isinstance(item, Mapping):
        row = dict(item)
    else:
        raise TypeError(f"corpus item {position} must be a string or a dict row, got {type(item).__name__}")
    text = row.get(text_field)
    if not isinstance(text, str) or not text.strip():
        fields = ", ".join(sorted(map(str, row))) or "none"
        raise ValueError(
            f"corpus row {position}: field {text_field!r} is missing, empty or not a string (fields: {fields})"
        )
    return row


def encode_texts(
    embedder: Embedder, texts: list[str], batch_size: int, show_progress: bool | None = None
) -> np.ndarray:
    """``embedder``'s vectors of ``texts``, float32 ``[texts, dimension]`` (checked); ``show_progress``: a
    ``MathEncoder``'s own bars (None: its default)."""
    if show_progress is not None and isinstance(embedder, (MathEncoderEmbedder, OnnxEncoderEmbedder)):  # own bars
        encoded = embedder.encode(texts, batch_size=batch_size, show_progress=show_progress)
    else:
        encoded = embedder.encode(texts, batch_size=batch_size)
    vectors = np.asarray(encoded, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != len(texts):
        raise ValueError(
            f"the encoder returned shape {vectors.shape} for {len(texts)} texts; expected [texts, dimension]"
        )
    return vectors


# Batches of a corpus encoded at a time under the progress bar: its steps, each a few seconds on a CPU.
PROGRESS_CHUNK_BATCHES = 4


@contextmanager
def quiet_notes():
    """Hold back the ``mathgraph`` logger's notes (the graph cache's hits, once a chunk) while a progress bar is
    the report; warnings still show."""
    logger = logging.getLogger("mathgraph")
    level = logger.level
    logger.setLevel(max(logging.WARNING, logger.getEffectiveLevel()))
    try:
        yield
    finally:
        logger.setLevel(level)


def _encode_corpus(embedder: Embedder, texts: list[str], batch_size: int) -> np.ndarray:
    """``encode_texts`` of a corpus with a progress bar over its problems (tqdm, on stderr) whose estimate of the time
    left holds from the first steps: the texts are cut into chunks of ``PROGRESS_CHUNK_BATCHES`` batches of
    similar length (as padding wants them) and the chunks are encoded in a shuffled order (fixed seed), so
    the rate measured so far is that of a fair sample of the corpus, not of its shortest problems."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    size = batch_size * PROGRESS_CHUNK_BATCHES
    chunks = [order[start : start + size] for start in range(0, len(order), size)]
    np.random.default_rng(0).shuffle(chunks)
    with quiet_notes():
        return _encode_chunks(embedder, texts, chunks, batch_size)


def _encode_chunks(embedder: Embedder, texts: list[str], chunks: list[list[int]], batch_size: int) -> np.ndarray:
    vectors: np.ndarray | None = None
    with progress_bar(total=len(texts), desc="indexing", unit="problem", dynamic_ncols=True) as bar:
        for chunk in chunks:
            part = encode_texts(embedder, [texts[i] for i in chunk], batch_size, show_progress=False)
            if vectors is None:
                vectors = np.zeros((len(texts), part.shape[1]), dtype=np.float32)
            vectors[chunk] = part
            bar.update(len(chunk))
    assert vectors is not None  # build refuses an empty corpus
    return vectors


def _check_k(k: int) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")


__all__ = [
    "SearchIndex",
    "Hit",
    "IndexFormatError",
    "IndexMismatchError",
    "write_index",
    "exact_top_k",
    "exact_search",
    "rescore",
    "l2_normalize",
    "read_manifest",
    "check_identity",
    "as_row",
    "quiet_notes",
    "encode_texts",
    "shipped_structure_min_cosine",
]
