"""Similar-problem search: embed a corpus once, save it, find the nearest problems by cosine similarity.

    index = SearchIndex.build(rows, MathEncoder.from_pretrained("shipped"), text_field="problem")
    index.save_pretrained("INDEX")
    index = SearchIndex.from_pretrained("INDEX")        # with the encoder that built it, for text queries
    for hit in index.search(["Find $x$ if $2x+3=7$."], k=5)[0]:
        print(hit.score, hit.row["problem"])

An index directory holds ``embeddings.safetensors`` (the L2-normalised vectors,
float32; never pickle), ``rows.jsonl`` (the source rows, in index order) and
``manifest.json`` (format, ``model_type`` "search-index", format version, count,
dimension, text field, checksums of the two files and the identity of the
encoder: its kind, the sha256 of its weights, the mode, the dimension, the model
it was loaded from). Querying with an encoder whose identity differs raises
``IndexMismatchError``: vectors of two models are not comparable.

Search is exact (one matrix product, ``argpartition``) unless asked for
``approximate=True`` or the corpus has more than ``APPROXIMATE_THRESHOLD`` rows;
the approximate index is faiss (``pip install faiss-cpu``): HNSW by default,
``IndexFlatIP`` (exact, but faiss's speed) with ``approximate_kind="flat"``. It is
built in memory on first use, not saved: building it is quick next to embedding.
Encoders are ``tasks.search.embedders.Embedder``s; the commands' helpers are in
``tasks.search.commands``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np

from mathgraph.checksums import file_sha256
from mathgraph.files import apply_umask
from mathgraph.jsonl import JsonlError, atomic_writer, read_rows, write_jsonl
from mathgraph.quiet import warn
from mathgraph.registry import CheckpointError, read_config, resolve, write_model_type
from mathgraph.tasks.search.embedders import Embedder, MathEncoderEmbedder, _is_math_encoder, as_embedder, load_embedder
from mathgraph.tasks.search.index_format import FORMAT, FORMAT_VERSION, MANIFEST_FILE, MODEL_TYPE

EMBEDDINGS_FILE = "embeddings.safetensors"
ROWS_FILE = "rows.jsonl"
# Above this many rows a search uses faiss when it is installed: exact search costs n * d per query.
APPROXIMATE_THRESHOLD = 100_000
APPROXIMATE_KINDS = ("hnsw", "flat")
HNSW_NEIGHBOURS = 32
# The identity fields that must agree between an index and the encoder that queries it
# (split_digits only appears for models that split numbers into digits, so older indexes still match).
IDENTITY_KEYS = ("kind", "weights_sha256", "mode", "dimension", "split_digits")


# Rows of the first stage (dense, or dense + TF-IDF) that the alignment model re-scores per query: it parses
# and aligns each, so it reads a short list, not the whole index.
STRUCTURE_RERANK = 50


def shipped_structure_min_cosine() -> float:
    """The cosine below which search's structure step leaves a row unscored, as the shipped package measured it
    (its ``config.json``'s ``search.structure.min_cosine``; 0, every row scored, for a package without one)."""
    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR

    setting = ModelPackage(SHIPPED_DIR).search_setting("structure")
    return 0.0 if setting is None else float(setting.get("min_cosine", 0.0))


class IndexFormatError(ValueError):
    """An index directory that is missing files, corrupted, or of an unknown format."""


class IndexMismatchError(ValueError):
    """The encoder given to an index is not the one that built it."""


# --------------------------------------------------------------------------- the index
@dataclass(frozen=True)
class Hit:
    """One search result: position in the index, cosine similarity, and the source row."""

    index: int
    score: float
    row: dict

    def to_dict(self) -> dict:
        """JSON-able form, for ``--format json``."""
        return {"index": self.index, "score": self.score, "row": self.row}


class SearchIndex:
    """L2-normalised vectors of a corpus with its rows, searched by cosine similarity."""

    def __init__(
        self,
        embeddings: np.ndarray,
        rows: Sequence[dict],
        text_field: str,
        identity: dict,
        embedder: Embedder | None = None,
    ):
        embeddings = np.asarray(embeddings, dtype=np.float32)
        if embeddings.ndim != 2 or len(embeddings) != len(rows):
            raise ValueError(f"embeddings must be [rows, dimension]; got shape {embeddings.shape} for {len(rows)} rows")
        if len(rows) == 0:
            raise ValueError("a search index needs at least one row; the corpus is empty")
        self.embeddings, self.rows, self.text_field = embeddings, list(rows), text_field
        self.identity, self.embedder = dict(identity), embedder
        self._faiss: dict[str, object] = {}
        self._sparse = None  # (TF-IDF vectorizer, row matrix) for hybrid search, built on first use
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
    ) -> SearchIndex:
        """Embed a corpus: a list of strings (stored as rows ``{text_field: text}``) or of dict rows whose
        ``text_field`` holds the text. ``encoder``: a ``MathEncoder`` (``mode`` picks its vector) or an ``Embedder``.

        ``show_progress``: one progress bar over the problems, parsing and encoding together, with its estimate
        of the time left (``_encode_corpus``)."""
        embedder = as_embedder(encoder, mode)
        if isinstance(texts_or_rows, (str, bytes)):
            raise TypeError("build takes a list of texts or rows, not a single string")
        rows = [_as_row(item, text_field, i) for i, item in enumerate(texts_or_rows)]
        if not rows:
            raise ValueError("cannot build a search index from an empty corpus")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        texts = [row[text_field] for row in rows]
        vectors = _encode_corpus(embedder, texts, batch_size) if show_progress else _encode(embedder, texts, batch_size)
        return cls(l2_normalize(vectors), rows, text_field, embedder.identity(), embedder)

    # ------------------------------------------------------------- searching
    def search(
        self,
        queries: Sequence[str],
        k: int = 5,
        approximate: bool | None = None,
        approximate_kind: str = "hnsw",
        batch_size: int = 32,
        sparse_weight: float = 0.0,
        structure_weight: float = 0.0,
        structure_min_cosine: float | None = None,
    ) -> list[list[Hit]]:
        """The ``k`` most similar rows of each query, best first: one list of hits per query (a lone string is
        refused, as ``MathEncoder.encode`` refuses one: wrap it in a list). ``approximate``: None -> faiss above ``APPROXIMATE_THRESHOLD`` rows.

        ``sparse_weight`` > 0 is hybrid search (``models.late_fusion.fuse_scores``): every row's cosine is fused
        with its TF-IDF cosine to the query (a TF-IDF model fitted on the index's texts on first use), exactly;
        the hits' scores are then the fused ones.

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
        for name, weight in (("sparse_weight", sparse_weight), ("structure_weight", structure_weight)):
            if not 0.0 <= weight <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {weight}")
        vectors = _encode(self.embedder, queries, batch_size)
        first = max(k, STRUCTURE_RERANK) if structure_weight > 0 else k
        if sparse_weight > 0:
            hits = self._hybrid_search(queries, vectors, first, sparse_weight)
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
        cosines = [self.embeddings[[hit.index for hit in query_hits]] @ v for v, query_hits in zip(query_vectors, hits)]
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
            reranked.append([Hit(query_hits[i].index, float(fused[i]), query_hits[i].row) for i in best])
        return reranked

    def _hybrid_search(self, queries: list[str], vectors: np.ndarray, k: int, weight: float) -> list[list[Hit]]:
        from mathgraph.models.late_fusion import fuse_scores

        if self._sparse is None:  # fitted once per loaded index: a second's work for tens of thousands of rows
            from sklearn.feature_extraction.text import TfidfVectorizer

            from mathgraph.models.tfidf import VECTORIZER_DEFAULTS

            vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS)
            self._sparse = vectorizer, vectorizer.fit_transform([row[self.text_field] for row in self.rows])
        vectorizer, matrix = self._sparse
        dense = l2_normalize(np.asarray(vectors, dtype=np.float32)) @ self.embeddings.T
        sparse = (vectorizer.transform(queries) @ matrix.T).toarray()
        k = min(k, len(self))
        hits = []
        for dense_row, sparse_row in zip(dense, sparse):
            fused = fuse_scores(dense_row, sparse_row, weight)
            best = np.argsort(-fused, kind="stable")[:k]
            hits.append([Hit(int(i), float(fused[i]), self.rows[int(i)]) for i in best])
        return hits

    def search_vectors(
        self, vectors: np.ndarray, k: int = 5, approximate: bool | None = None, approximate_kind: str = "hnsw"
    ) -> list[list[Hit]]:
        """Hits for query vectors ``[queries, dimension]`` (normalised here); exact unless approximate."""
        _check_k(k)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        if vectors.ndim != 2 or vectors.shape[1] != self.dimension:
            raise ValueError(f"query vectors must be [queries, {self.dimension}], got shape {vectors.shape}")
        vectors = l2_normalize(vectors)
        k = min(k, len(self))
        if self._use_faiss(approximate):
            indices, scores = self._faiss_search(vectors, k, approximate_kind)
        else:
            indices, scores = exact_top_k(vectors, self.embeddings, k)
        return [
            [Hit(int(i), float(s), self.rows[int(i)]) for i, s in zip(row_i, row_s) if i >= 0]
            for row_i, row_s in zip(indices, scores)
        ]

    def _use_faiss(self, approximate: bool | None) -> bool:
        if approximate is not None:
            return bool(approximate)
        if len(self) <= APPROXIMATE_THRESHOLD:
            return False
        try:
            import faiss  # noqa: F401
        except ImportError:
            warn(f"{len(self)} rows: install faiss-cpu for approximate search; searching exactly")
            return False
        return True

    def _faiss_search(self, vectors: np.ndarray, k: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
        # Built on first use and kept in memory only: building is fast next to embedding the corpus.
        index = self._faiss.get(kind) or self._build_faiss(kind)
        if kind == "hnsw":
            index.hnsw.efSearch = max(64, 2 * k)  # a wider beam than k keeps recall near exact
        scores, indices = index.search(np.ascontiguousarray(vectors), k)
        return indices, scores

    def _build_faiss(self, kind: str):
        faiss = _import_faiss()
        if kind not in APPROXIMATE_KINDS:
            raise ValueError(f"approximate_kind must be one of {APPROXIMATE_KINDS}, got {kind!r}")
        if kind == "flat":
            index = faiss.IndexFlatIP(self.dimension)
        else:
            index = faiss.IndexHNSWFlat(self.dimension, HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 200
        index.add(np.ascontiguousarray(self.embeddings))
        self._faiss[kind] = index
        return index

    # ------------------------------------------------------------- saving
    def save_pretrained(self, directory: str | PathLike) -> None:
        """Write the embeddings, rows and manifest (last, so a half-written index has no manifest)."""
        from safetensors.numpy import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / MANIFEST_FILE).unlink(missing_ok=True)
        for i, row in enumerate(self.rows):
            try:
                json.dumps(row, ensure_ascii=False)
            except (TypeError, ValueError) as err:
                raise ValueError(f"row {i} cannot be written as JSON: {err}") from err
        save_file({"embeddings": np.ascontiguousarray(self.embeddings)}, str(directory / EMBEDDINGS_FILE))
        apply_umask(directory / EMBEDDINGS_FILE)
        with atomic_writer(directory / ROWS_FILE) as f:
            write_jsonl(f, self.rows)
        manifest = {
            "format": FORMAT,
            "model_type": MODEL_TYPE,
            "version": FORMAT_VERSION,
            "count": len(self),
            "dimension": self.dimension,
            "text_field": self.text_field,
            "encoder": self.identity,
            "sha256": {
                EMBEDDINGS_FILE: file_sha256(directory / EMBEDDINGS_FILE),
                ROWS_FILE: file_sha256(directory / ROWS_FILE),
            },
        }
        write_model_type(directory, MODEL_TYPE)  # config.json says what the directory holds
        with atomic_writer(directory / MANIFEST_FILE) as f:
            json.dump(manifest, f, indent=2, ensure_ascii=False)

    @classmethod
    def from_pretrained(
        cls, directory: str | PathLike, encoder="auto", mode: str | None = None, device: str | None = None
    ) -> SearchIndex:
        """Read an index written by ``save_pretrained``, ready for text queries with ``encoder``:

        - ``"auto"`` (the default): the model that built it, as its manifest records it (an index built with an
          encoder object that names no model, such as a custom ``Embedder``, loads without one);
        - a ``MathEncoder`` or ``Embedder`` already loaded, or a model spec (``tasks.search.embedders.load_embedder``);
        - ``None``: no encoder (``search_vectors`` only; nothing is loaded but the index).

        An encoder that is not the index's raises ``IndexMismatchError``; damaged files raise
        ``IndexFormatError`` (checked before any model is loaded)."""
        directory = resolve(directory)  # a Hugging Face Hub id is downloaded
        manifest = read_manifest(directory)
        embeddings = _read_embeddings(directory, manifest)
        try:
            rows = [row for _, row in read_rows(directory / ROWS_FILE)[0]]
        except JsonlError as err:
            raise IndexFormatError(f"{directory}: {err}") from err
        if len(rows) != manifest["count"]:
            raise IndexFormatError(
                f"{directory / ROWS_FILE} has {len(rows)} rows, the manifest says {manifest['count']}"
            )
        index = cls(embeddings, rows, manifest["text_field"], manifest["encoder"])
        if encoder is None:
            return index
        if mode is None:
            from mathgraph.models.encoder import MODES

            # Query with the vector the index was built from; an index of another kind fails the check below.
            built_mode = manifest["encoder"].get("mode")
            mode = built_mode if built_mode in MODES else "joint"
        if isinstance(encoder, (str, PathLike)):
            spec = manifest["encoder"].get("source") if str(encoder) == "auto" else encoder
            if spec is None:  # search() says how to give it one
                return index
            embedder = load_embedder(spec, mode=mode, device=device)
        else:
            embedder = as_embedder(encoder, mode if _is_math_encoder(encoder) else None)
        check_identity(manifest["encoder"], embedder.identity(), directory)
        index.embedder = embedder
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


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); all-zero rows stay zero instead of becoming NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def read_manifest(directory: Path) -> dict:
    """The validated ``manifest.json`` of an index directory."""
    path = directory / MANIFEST_FILE
    if not path.is_file():
        raise IndexFormatError(f"{directory} is not a search index: no {MANIFEST_FILE} (not built, or saving failed)")
    try:
        manifest = read_config(directory, MANIFEST_FILE)
    except CheckpointError as err:
        raise IndexFormatError(str(err)) from err
    if manifest.get("format") != FORMAT:
        raise IndexFormatError(f"{path} is not a {FORMAT} manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index format version {manifest.get('version')!r}, this mathgraph reads "
            f"{FORMAT_VERSION}: rebuild the index"
        )
    for key, kind in (("count", int), ("dimension", int), ("text_field", str), ("encoder", dict), ("sha256", dict)):
        if not isinstance(manifest.get(key), kind):
            raise IndexFormatError(f"{path}: field {key!r} is missing or not a {kind.__name__}")
    if manifest.get("encoder", {}).get("mode") == "fused":  # the joint vector's old name
        manifest["encoder"]["mode"] = "joint"
    return manifest


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


def _read_embeddings(directory: Path, manifest: dict) -> np.ndarray:
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    for name in (EMBEDDINGS_FILE, ROWS_FILE):
        path = directory / name
        if not path.is_file():
            raise IndexFormatError(f"{directory} has no {name}")
        if file_sha256(path) != manifest["sha256"].get(name):
            raise IndexFormatError(
                f"{path} does not match the checksum in {MANIFEST_FILE}: "
                "the file was truncated or changed after saving; rebuild the index"
            )
    try:
        embeddings = load_file(str(directory / EMBEDDINGS_FILE)).get("embeddings")
    except (SafetensorError, OSError, ValueError) as err:
        raise IndexFormatError(f"cannot read {directory / EMBEDDINGS_FILE}: {err}") from err
    expected = (manifest["count"], manifest["dimension"])
    if embeddings is None or embeddings.shape != expected or embeddings.dtype != np.float32:
        raise IndexFormatError(
            f"{directory / EMBEDDINGS_FILE}: expected float32 {expected}, got "
            f"{None if embeddings is None else (embeddings.dtype, embeddings.shape)}"
        )
    return embeddings


def _as_row(item: object, text_field: str, position: int) -> dict:
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


def _encode(embedder: Embedder, texts: list[str], batch_size: int, show_progress: bool | None = None) -> np.ndarray:
    if show_progress is not None and isinstance(embedder, MathEncoderEmbedder):  # its own bars, or none
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


def _encode_corpus(embedder: Embedder, texts: list[str], batch_size: int) -> np.ndarray:
    """``_encode`` a corpus with a progress bar over its problems (tqdm, on stderr) whose estimate of the time
    left holds from the first steps: the texts are cut into chunks of ``PROGRESS_CHUNK_BATCHES`` batches of
    similar length (as padding wants them) and the chunks are encoded in a shuffled order (fixed seed), so
    the rate measured so far is that of a fair sample of the corpus, not of its shortest problems. The
    ``mathgraph`` logger's notes (the graph cache's hits, once a chunk) are held back meanwhile: the bar is
    the report; warnings still show."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    size = batch_size * PROGRESS_CHUNK_BATCHES
    chunks = [order[start : start + size] for start in range(0, len(order), size)]
    np.random.default_rng(0).shuffle(chunks)
    logger = logging.getLogger("mathgraph")
    level = logger.level
    logger.setLevel(max(logging.WARNING, logger.getEffectiveLevel()))
    try:
        return _encode_chunks(embedder, texts, chunks, batch_size)
    finally:
        logger.setLevel(level)


def _encode_chunks(embedder: Embedder, texts: list[str], chunks: list[list[int]], batch_size: int) -> np.ndarray:
    from tqdm import tqdm

    vectors: np.ndarray | None = None
    with tqdm(total=len(texts), desc="indexing", unit="problem", dynamic_ncols=True) as bar:
        for chunk in chunks:
            part = _encode(embedder, [texts[i] for i in chunk], batch_size, show_progress=False)
            if vectors is None:
                vectors = np.zeros((len(texts), part.shape[1]), dtype=np.float32)
            vectors[chunk] = part
            bar.update(len(chunk))
    assert vectors is not None  # build refuses an empty corpus
    return vectors


def _check_k(k: int) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")


def _import_faiss():
    try:
        import faiss
    except ImportError as err:
        raise ImportError(
            "approximate search needs faiss: pip install faiss-cpu (or search exactly with approximate=False)"
        ) from err
    return faiss


__all__ = [
    "SearchIndex",
    "Hit",
    "IndexFormatError",
    "IndexMismatchError",
    "exact_top_k",
    "l2_normalize",
    "read_manifest",
    "check_identity",
    "shipped_structure_min_cosine",
]
