"""Similar-problem search: embed a corpus once, save it, find the nearest problems by cosine similarity.

    index = SearchIndex.build(rows, MathEncoder.from_pretrained(DIR), text_field="problem")
    index.save("INDEX")
    index = SearchIndex.load("INDEX", encoder=MathEncoder.from_pretrained(DIR))
    for hit in index.search("Find $x$ if $2x+3=7$.", k=5):
        print(hit.score, hit.row["problem"])

An index directory holds ``embeddings.safetensors`` (the L2-normalised vectors,
float32; never pickle), ``rows.jsonl`` (the source rows, in index order) and
``manifest.json`` (format, ``model_type`` "search-index", format version, count,
dimension, text field, checksums of the two files and the identity of the
encoder: its kind, the sha256 of its weights, the mode, the dimension).
Loading with an encoder whose identity differs raises ``IndexMismatchError``:
vectors of two models are not comparable.

Search is exact (one matrix product, ``argpartition``) unless asked for
``approximate=True`` or the corpus has more than ``APPROXIMATE_THRESHOLD`` rows;
the approximate index is faiss (``pip install faiss-cpu``): HNSW by default,
``IndexFlatIP`` (exact, but faiss's speed) with ``approximate_kind="flat"``. It is
built in memory on first use, not saved: building it is quick next to embedding.

For the command line: ``build_index_from_file`` (``mathgraph index build``),
``load_index`` (``mathgraph search``), which finds the model from the manifest,
``hybrid_search_weight`` and ``structure_search_weight`` (``--hybrid``) and ``search_records`` (``--queries FILE``:
many queries against one loaded model and index, embedded in batches).

The encoder is an ``Embedder``: anything with ``encode(texts, batch_size=...)``
and ``identity()``. ``as_embedder`` wraps a ``MathEncoder`` (``MathEncoderEmbedder``);
``TextEmbedder`` is a text-only Hugging Face encoder (mean pooling) for comparison.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from os import PathLike
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from mathgraph.checksums import file_sha256
from mathgraph.files import apply_umask
from mathgraph.jsonl import JsonlError, TextRecord, atomic_writer, read_rows, write_jsonl

FORMAT = "mathgraph-search-index"
FORMAT_VERSION = 1
MODEL_TYPE = "search-index"  # the manifest's model_type (tasks.loading)
MANIFEST_FILE = "manifest.json"
EMBEDDINGS_FILE = "embeddings.safetensors"
ROWS_FILE = "rows.jsonl"
# Above this many rows a search uses faiss when it is installed: exact search costs n * d per query.
APPROXIMATE_THRESHOLD = 100_000
APPROXIMATE_KINDS = ("hnsw", "flat")
# Queries of a file searched at once by search_records: enough to keep every batch full, few enough to bound memory.
QUERY_CHUNK = 1024
HNSW_NEIGHBOURS = 32
# The identity fields that must agree between an index and the encoder that queries it
# (split_digits only appears for models that split numbers into digits, so older indexes still match).
IDENTITY_KEYS = ("kind", "weights_sha256", "mode", "dimension", "split_digits")


# Rows of the first stage (dense, or dense + TF-IDF) that the structure model re-scores per query: it parses
# and aligns each, so it reads a short list, not the whole index.
STRUCTURE_RERANK = 50


class IndexFormatError(ValueError):
    """An index directory that is missing files, corrupted, or of an unknown format."""


class IndexMismatchError(ValueError):
    """The encoder given to an index is not the one that built it."""


# --------------------------------------------------------------------------- embedders
@runtime_checkable
class Embedder(Protocol):
    """What an index needs from an encoder: vectors for texts, and a stable identity (a JSON-able dict
    with at least ``kind``, ``weights_sha256``, ``mode`` and ``dimension``)."""

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Vectors ``[len(texts), dimension]``, one per text, in order."""

    def identity(self) -> dict:
        """Who made the vectors: changes whenever the vectors would."""


class MathEncoderEmbedder:
    """A ``models.encoder.MathEncoder`` as an ``Embedder``, with ``mode`` ``"fused"``, ``"text"`` or ``"graph"``."""

    def __init__(self, encoder, mode: str = "fused", source: str | None = None):
        from models.encoder import MODES

        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.encoder, self.mode, self.source = encoder, mode, source
        self._identity: dict | None = None

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Vectors of the problems ``texts`` (parsed into graphs on the way)."""
        return self.encoder.encode(list(texts), batch_size=batch_size, mode=self.mode)

    def identity(self) -> dict:
        """Kind, weights hash (of the tensors, so it holds for unsaved models too), mode, dimension, parser
        (and ``split_digits`` when the model's tokenizer splits numbers into digits)."""
        if self._identity is None:  # hashing ~100 MB of weights once is enough
            self._identity = {
                "kind": "mathgraph.MathEncoder",
                "weights_sha256": state_dict_sha256(self.encoder.model),
                "mode": self.mode,
                "dimension": self.encoder.dimension(self.mode),
                "parser": self.encoder.parser,
                "vocab_size": len(self.encoder.tokenizer),
                "source": self.source,
            }
            if self.encoder.model.config.split_digits:  # same weights, other tokens: other vectors
                self._identity["split_digits"] = True
        return self._identity


class TextEmbedder:
    """A text-only Hugging Face encoder (``AutoModel``), mean-pooled over tokens: ``"default"`` is the packaged
    all-MiniLM-L6-v2. Formulas are read as plain text; useful as a baseline next to ``MathEncoder``."""

    def __init__(self, path: str | PathLike = "default", max_length: int = 256, device: str | None = None):
        import torch
        from transformers import AutoModel, AutoTokenizer

        from models.text_encoder import resolve_text_encoder

        resolved = resolve_text_encoder(str(path))
        self.directory = Path(resolved) if Path(resolved).is_dir() else None
        self.tokenizer = AutoTokenizer.from_pretrained(resolved)
        self.model = AutoModel.from_pretrained(resolved).eval()
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device)
        local = Path(path)
        self.max_length = max_length
        self.source = f"text:{local.resolve() if str(path) != 'default' and local.exists() else path}"
        self._identity: dict | None = None

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Mean of the last hidden states over the non-padding tokens, float32."""
        import torch

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                batch = self.tokenizer(
                    list(texts[start : start + batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                out.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, self.model.config.hidden_size), dtype=np.float32)

    def identity(self) -> dict:
        """Kind, weights hash, pooling, dimension. The hash is of the checkpoint files, not of the loaded tensors:
        AutoModel adds layers the checkpoint lacks (BERT's pooler) with new random weights at every load."""
        if self._identity is None:
            weights = files_sha256(self.directory) if self.directory is not None else state_dict_sha256(self.model)
            self._identity = {
                "kind": "transformers.AutoModel",
                "weights_sha256": weights,
                "mode": "mean",
                "dimension": int(self.model.config.hidden_size),
                "vocab_size": len(self.tokenizer),
                "source": self.source,
            }
        return self._identity


def as_embedder(encoder, mode: str | None = None) -> Embedder:
    """``encoder`` as an ``Embedder``: a ``MathEncoder`` is wrapped (``mode`` defaults to ``"fused"``); an object that
    already has ``encode`` and ``identity`` is returned as it is."""
    if _is_math_encoder(encoder):
        return MathEncoderEmbedder(encoder, mode or "fused")
    if isinstance(encoder, Embedder):
        if mode is not None:
            raise ValueError(f"mode={mode!r} applies to a MathEncoder only, not to {type(encoder).__name__}")
        return encoder
    raise TypeError(
        f"{type(encoder).__name__} is not an encoder: it needs encode(texts, batch_size=...) and "
        "identity() (wrap a MathEncoder with as_embedder)"
    )


def load_embedder(spec: str | PathLike = "default", mode: str = "fused", device: str | None = None) -> Embedder:
    """An embedder from the command line: ``"default"`` or a mathgraph model directory -> ``MathEncoder``;
    ``"text:PATH"`` (``"text:default"`` for MiniLM) or any other Hugging Face directory -> ``TextEmbedder``.
    The spec is kept as the identity's ``source``, so that ``load_index`` can find the model again."""
    spec = str(spec)
    if spec.startswith("text:"):
        return TextEmbedder(spec[len("text:") :], device=device)
    from models.encoder import NAMED_MODELS

    config = Path(spec) / "config.json"
    is_mathgraph = spec in NAMED_MODELS  # the shipped encoder, or the architecture before training
    if not is_mathgraph and config.is_file():
        try:
            is_mathgraph = json.loads(config.read_text(encoding="utf-8")).get("model_type") == "comus"
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as err:
            raise ValueError(f"{config} is not a valid model config: {err}") from err
    elif not is_mathgraph:
        raise FileNotFoundError(f"{spec}: no such model directory (expected a config.json in it)")
    if is_mathgraph:
        from models.encoder import MathEncoder

        source = spec if spec in NAMED_MODELS else str(Path(spec).resolve())
        return MathEncoderEmbedder(MathEncoder.from_pretrained(spec, device=device), mode, source=source)
    return TextEmbedder(str(Path(spec).resolve()), device=device)


def files_sha256(directory: Path) -> str:
    """sha256 over a checkpoint directory's config and weight files (names and bytes), in name order."""
    digest = hashlib.sha256()
    names = sorted(
        p.name
        for p in directory.iterdir()
        if p.is_file() and (p.name == "config.json" or p.suffix in (".safetensors", ".bin"))
    )
    for name in names:
        digest.update(f"{name}|{file_sha256(directory / name)}|".encode())
    return digest.hexdigest()


def state_dict_sha256(model) -> str:
    """sha256 over a torch module's tensors (names, dtypes, shapes, bytes) in name order."""
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        tensor = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())  # raw bytes: works for bf16 too
    return digest.hexdigest()


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
        self.structure = None  # the SQR structure model of structure_weight > 0 (the shipped one when None)

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
    ) -> SearchIndex:
        """Embed a corpus: a list of strings (stored as rows ``{text_field: text}``) or of dict rows whose
        ``text_field`` holds the text. ``encoder``: a ``MathEncoder`` (``mode`` picks its vector) or an ``Embedder``."""
        embedder = as_embedder(encoder, mode)
        if isinstance(texts_or_rows, (str, bytes)):
            raise TypeError("build takes a list of texts or rows, not a single string")
        rows = [_as_row(item, text_field, i) for i, item in enumerate(texts_or_rows)]
        if not rows:
            raise ValueError("cannot build a search index from an empty corpus")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        vectors = _encode(embedder, [row[text_field] for row in rows], batch_size)
        return cls(l2_normalize(vectors), rows, text_field, embedder.identity(), embedder)

    # ------------------------------------------------------------- searching
    def search(
        self,
        query_or_queries: str | Sequence[str],
        k: int = 5,
        approximate: bool | None = None,
        approximate_kind: str = "hnsw",
        batch_size: int = 32,
        sparse_weight: float = 0.0,
        structure_weight: float = 0.0,
    ) -> list[Hit] | list[list[Hit]]:
        """The ``k`` most similar rows, best first: a list of hits for one query string, a list of such lists
        for a list of queries. ``approximate``: None -> faiss above ``APPROXIMATE_THRESHOLD`` rows.

        ``sparse_weight`` > 0 is hybrid search (``tasks.hybrid.fuse_scores``): every row's cosine is fused
        with its TF-IDF cosine to the query (a TF-IDF model fitted on the index's texts on first use), exactly;
        the hits' scores are then the fused ones.

        ``structure_weight`` > 0 adds the structure signal: the best ``STRUCTURE_RERANK`` rows of that first
        stage are scored by an SQR structure model (``tasks.structure``: the expected relevance of each row as a
        similar problem, from the alignment of its graph with the query's; ``self.structure``, by default the
        shipped one) and the two scores fused the same way (``fuse_scores``)."""
        if self.embedder is None:
            raise ValueError(
                "this index has no encoder to embed queries: load it with SearchIndex.load(dir, encoder=...)"
                " or use search_vectors"
            )
        single = isinstance(query_or_queries, str)
        queries = [query_or_queries] if single else list(query_or_queries)
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
            hits = self._structure_rerank(queries, hits, k, structure_weight)
        return hits[0] if single else hits

    def _structure_rerank(self, queries: list[str], hits: list[list[Hit]], k: int, weight: float) -> list[list[Hit]]:
        from tasks.hybrid import fuse_scores

        if self.structure is None:
            from models.shipped import STRUCTURE_DIR, shipped_path
            from tasks.structure import StructureModel

            self.structure = StructureModel.load(shipped_path(STRUCTURE_DIR, "sqr"))
        # one call for every query: their problems are parsed together
        ranked = self.structure.predict(
            [(query, [str(hit.row[self.text_field]) for hit in query_hits]) for query, query_hits in zip(queries, hits)]
        )
        reranked = []
        for query_hits, result in zip(hits, ranked):
            fused = fuse_scores([hit.score for hit in query_hits], result["scores"], weight)
            best = np.argsort(-fused, kind="stable")[:k]
            reranked.append([Hit(query_hits[i].index, float(fused[i]), query_hits[i].row) for i in best])
        return reranked

    def _hybrid_search(self, queries: list[str], vectors: np.ndarray, k: int, weight: float) -> list[list[Hit]]:
        from tasks.hybrid import fuse_scores

        if self._sparse is None:  # fitted once per loaded index: a second's work for tens of thousands of rows
            from sklearn.feature_extraction.text import TfidfVectorizer

            from tasks.baselines import VECTORIZER_DEFAULTS

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
            warnings.warn(
                f"{len(self)} rows: install faiss-cpu for approximate search; searching exactly", stacklevel=3
            )
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
    def save(self, directory: str | PathLike) -> None:
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
        with atomic_writer(directory / MANIFEST_FILE) as f:
            json.dump(manifest, f, indent=2, ensure_ascii=False)

    @classmethod
    def load(cls, directory: str | PathLike, encoder=None, mode: str | None = None) -> SearchIndex:
        """Read an index written by ``save``. With ``encoder`` (a ``MathEncoder`` or ``Embedder``) it can embed
        queries; an encoder that is not the index's raises ``IndexMismatchError``. Damaged files raise
        ``IndexFormatError``."""
        directory = Path(directory)
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
        embedder = None
        if encoder is not None:
            if _is_math_encoder(encoder) and mode is None:
                from models.encoder import MODES

                # Query with the vector the index was built from; an index of another kind fails the check below.
                built_mode = manifest["encoder"].get("mode")
                mode = built_mode if built_mode in MODES else "fused"
            embedder = as_embedder(encoder, mode)
            check_identity(manifest["encoder"], embedder.identity(), directory)
        return cls(embeddings, rows, manifest["text_field"], manifest["encoder"], embedder)


# --------------------------------------------------------------------------- files and the CLI
def build_index_from_file(
    input_path: str | PathLike,
    model: str | PathLike = "default",
    text_field: str = "problem",
    output: str | PathLike | None = None,
    mode: str = "fused",
    batch_size: int = 32,
    device: str | None = None,
    skip_bad: bool = False,
) -> SearchIndex:
    """``mathgraph index build``: embed the ``text_field`` of every row of a JSONL corpus with the model ``model``
    (see ``load_embedder``) and, with ``output``, save the index there. A bad row raises ``JsonlError`` naming
    file and line, or with ``skip_bad`` is left out (and counted in a warning)."""
    numbered, bad = read_rows(input_path, (text_field,), skip_bad=skip_bad)
    if bad:
        warnings.warn(f"{input_path}: skipped {len(bad)} bad rows, the first: {bad[0]}", stacklevel=2)
    if not numbered:
        raise ValueError(f"{input_path}: no rows with a {text_field!r} field to index")
    index = SearchIndex.build(
        [row for _, row in numbered],
        load_embedder(model, mode=mode, device=device),
        text_field=text_field,
        batch_size=batch_size,
    )
    if output is not None:
        index.save(output)
    return index


def load_index(
    directory: str | PathLike, model: str | PathLike | None = None, device: str | None = None
) -> SearchIndex:
    """``mathgraph search``: an index with its encoder ready for queries. ``model`` defaults to the one recorded
    at build time (the identity's ``source``); either way it must be the model that built the index."""
    index = SearchIndex.load(directory)  # damaged files are reported before the model's seconds of loading
    identity = index.identity
    spec = model if model is not None else identity.get("source")
    if spec is None:
        raise ValueError(f"{directory}: the index does not record which model built it; pass the model explicitly")
    from models.encoder import MODES

    mode = identity.get("mode") if identity.get("mode") in MODES else "fused"
    embedder = load_embedder(spec, mode=mode, device=device)
    check_identity(identity, embedder.identity(), directory)
    index.embedder = embedder
    return index


def hybrid_search_weight(hybrid: bool | None = None) -> float:
    """The ``sparse_weight`` of ``SearchIndex.search`` for ``mathgraph search [--hybrid|--no-hybrid]``: the
    shipped model's TF-IDF weight, chosen on dev, when ``hybrid`` is True, or when it is None and dev said
    hybrid search helps; 0 (dense cosine only) otherwise."""
    if hybrid is False:
        return 0.0
    from models.shipped import release_info

    setting = release_info()["search"]["hybrid"]
    return float(setting["weight"]) if hybrid or setting["default"] else 0.0


def structure_search_weight(hybrid: bool | None = None) -> float:
    """The ``structure_weight`` of ``SearchIndex.search`` for ``mathgraph search [--hybrid|--no-hybrid]``: the
    shipped structure model's weight, chosen on dev, when ``hybrid`` is True, or when it is None and dev said it
    helps; 0 otherwise (and for a package without a structure model)."""
    if hybrid is False:
        return 0.0
    from models.shipped import release_info

    setting = release_info()["search"].get("structure")
    if setting is None:
        return 0.0
    return float(setting["weight"]) if hybrid or setting["default"] else 0.0


def search_records(
    index: SearchIndex,
    records: Iterable[TextRecord],
    k: int = 5,
    batch_size: int = 32,
    approximate: bool | None = None,
    sparse_weight: float = 0.0,
    structure_weight: float = 0.0,
) -> Iterator[dict]:
    """``mathgraph search --queries FILE``: for each query (a ``mathgraph.jsonl.TextRecord``, as
    ``read_text_lines`` gives them), in order, ``{"query", "id" (when its row has one), "line", "hits"}`` with
    hits ``{"rank", "index", "score", "row"}``, best first. Queries are embedded ``batch_size`` at a time and
    searched ``QUERY_CHUNK`` at a time, so a long file streams with the model and index loaded once."""
    iterator = iter(records)
    while chunk := list(islice(iterator, QUERY_CHUNK)):
        hits = index.search(
            [r.text for r in chunk],
            k=k,
            approximate=approximate,
            batch_size=batch_size,
            sparse_weight=sparse_weight,
            structure_weight=structure_weight,
        )
        for record, query_hits in zip(chunk, hits):
            yield {
                "query": record.text,
                **({"id": record.row["id"]} if "id" in record.row else {}),
                "line": record.line,
                "hits": [{"rank": rank, **hit.to_dict()} for rank, hit in enumerate(query_hits, start=1)],
            }


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
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise IndexFormatError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise IndexFormatError(f"{path} is not a {FORMAT} manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index format version {manifest.get('version')!r}, this mathgraph reads "
            f"{FORMAT_VERSION}: rebuild the index"
        )
    for key, kind in (("count", int), ("dimension", int), ("text_field", str), ("encoder", dict), ("sha256", dict)):
        if not isinstance(manifest.get(key), kind):
            raise IndexFormatError(f"{path}: field {key!r} is missing or not a {kind.__name__}")
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


def _encode(embedder: Embedder, texts: list[str], batch_size: int) -> np.ndarray:
    vectors = np.asarray(embedder.encode(texts, batch_size=batch_size), dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != len(texts):
        raise ValueError(
            f"the encoder returned shape {vectors.shape} for {len(texts)} texts; expected [texts, dimension]"
        )
    return vectors


def _check_k(k: int) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")


def _is_math_encoder(encoder) -> bool:
    # Without importing models.encoder (torch, PyG): if it was never imported, nothing is a MathEncoder.
    module = sys.modules.get("models.encoder")
    return module is not None and isinstance(encoder, module.MathEncoder)


def _import_faiss():
    try:
        import faiss
    except ImportError as err:
        raise ImportError(
            "approximate search needs faiss: pip install faiss-cpu (or search exactly with approximate=False)"
        ) from err
    return faiss
