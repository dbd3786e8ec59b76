"""The search commands' work: ``build_index_from_file`` (``mathgraph index build``: the corpus encoded a chunk
at a time straight into the index's files, ``encode_shards``), ``hybrid_search_weight``
and ``structure_search_weight`` (``--hybrid``, from the shipped model's release notes) and ``search_records``
(``--queries FILE``: many queries against one loaded model and index, embedded in batches)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from os import PathLike

import numpy as np

from mathgraph.bank_files import BankReader, read_bank_rows
from mathgraph.errors import UserError
from mathgraph.job_outputs import require_parquet
from mathgraph.jsonl import TextRecord
from mathgraph.quiet import progress_bar, warn
from mathgraph.tasks.search.embedders import MathEncoderEmbedder, TextEmbedder, load_embedder
from mathgraph.tasks.search.index import PROGRESS_CHUNK_BATCHES, SearchIndex, encode_texts, quiet_notes, write_index
from mathgraph.tasks.search.index_types import APPROXIMATE_TYPES, choose_index_type, import_faiss

# Queries of a file searched at once by search_records: enough to keep every batch full, few enough to bound memory.
QUERY_CHUNK = 1024


# Rough problems per second of `mathgraph index build`, parsing (no graph cache) and encoding, for the up-front
# estimate; the progress bar then measures the machine it runs on. Measured on a 2-core machine with 512 MATH train
# problems: the shipped encoder 43 a second with the cores idle; beside a training run that kept them busy it
# indexed MATH's 7,500 in 19 min (6.6 a second). The packaged MiniLM (text:minilm) 26 a second idle. Per core, and on a
# GPU, where parsing on the CPU bounds the shipped encoder (spaCy parses some 270 problems a second).
RATES_PER_CPU_CORE = {"mathgraph.MathEncoder": 21.5, "transformers.AutoModel": 13.0}
BUSY_SLOWDOWN = 6.5
RATES_ON_GPU = {"mathgraph.MathEncoder": 200.0, "transformers.AutoModel": 500.0}
# Cores past this many barely speed one process's small matrix products up.
RATE_CORES = 8


def build_index_from_file(
    input_path: str | PathLike,
    model: str | PathLike = "shipped",
    text_field: str = "problem",
    output: str | PathLike | None = None,
    mode: str | None = None,
    batch_size: int = 32,
    device: str | None = None,
    runtime: str | None = None,
    skip_bad: bool = False,
    limit: int | None = None,
    show_progress: bool = False,
    index_type: str = "auto",
    input_format: str | None = None,
) -> SearchIndex:
    """``mathgraph index build``: embed the ``text_field`` of every row of a corpus, or of its first ``limit``
    good rows (JSONL, CSV, Parquet or a datasets directory: ``input_format``, default from its name;
    ``mathgraph.bank_files``), with the model ``model`` (see ``load_embedder``) into an index of ``index_type``
    (``tasks.search.index_types``; ``"auto"``: by the row count) and, with ``output``, save it there: the vectors
    go to the index's files a chunk at a time (``encode_shards``, ``write_index``), never all in memory. A bad
    row raises ``JsonlError`` naming file and line, or with ``skip_bad`` is left out (and counted in a warning).
    ``show_progress``: a rough estimate of the time it takes on stderr before the work starts
    (``rough_seconds``), then one progress bar over parsing and encoding with its own estimate."""
    if limit is not None and limit < 1:
        raise UserError(f"limit must be >= 1, got {limit}")
    numbered, bad = read_bank_rows(input_path, (text_field,), format=input_format, skip_bad=skip_bad)
    if bad:
        warn(f"{input_path}: skipped {len(bad)} bad rows, the first: {bad[0]}")
    if not numbered:
        raise UserError(f"{input_path}: no rows with a {text_field!r} field to index")
    rows = [row for _, row in numbered][:limit]
    if choose_index_type(index_type, len(rows)) in APPROXIMATE_TYPES:
        import_faiss()  # FaissMissing before the encoding's minutes, where faiss is not installed
    embedder = load_embedder(model, mode=mode, device=device, runtime=runtime)
    if show_progress:
        seconds, basis = rough_seconds(embedder, len(rows))
        print(f"indexing {len(rows):,} problems: roughly {_duration(seconds)} ({basis})", file=sys.stderr)
    if output is None:
        return SearchIndex.build(
            rows, embedder, text_field, batch_size, show_progress=show_progress, index_type=index_type
        )
    shards = encode_shards(embedder, [row[text_field] for row in rows], batch_size, show_progress)
    index = write_index(output, shards, rows, text_field, embedder.identity(), index_type)
    index.embedder = embedder
    return index


def build_index_from_vectors(
    vectors: str | PathLike,
    input_path: str | PathLike,
    output: str | PathLike,
    text_field: str = "problem",
    input_format: str | None = None,
    index_type: str = "auto",
    device: str | None = None,
    runtime: str | None = None,
) -> SearchIndex:
    """``mathgraph index build --vectors DIR``: an index of the vector shards ``mathgraph encode --output DIR``
    wrote (``mathgraph.job_outputs.VectorShards``) and the rows of the bank they encoded (``input_path``, any
    format ``mathgraph.bank_files`` reads), joined by line number, one shard at a time (``write_index``). The
    encoder is the one the encoding job's manifest names (loaded for its identity, so that searching the index
    with another one is refused)."""
    from mathgraph.batch_jobs import finished_files, read_manifest

    settings = read_manifest(vectors).get("settings", {})
    if "model" not in settings or "mode" not in settings:
        raise UserError(f"{vectors}: the manifest names no model and mode; not the output of `mathgraph encode`")
    shards = finished_files(vectors, kind="vectors")
    reader = BankReader.open(input_path, input_format, fields=(text_field,), id_field=None, keep=None)
    embedder = load_embedder(settings["model"], mode=settings["mode"], device=device, runtime=runtime)

    def vector_shards() -> Iterator[np.ndarray]:
        for files in shards:
            matrix = np.load(files[0], mmap_mode="r")
            if len(matrix):
                yield matrix

    def rows() -> Iterator[dict]:
        records = reader.records()
        for files in shards:
            for vector_row in _shard_rows(files[1]):
                for record in records:
                    if record.number == vector_row["line"]:
                        break
                else:
                    raise UserError(
                        f"{vectors}: a vector of line {vector_row['line']}, which {input_path} does not have "
                        "(or not in this order): were the vectors encoded from another bank?"
                    )
                if record.error is not None:
                    raise reader.error(record)
                yield record.row

    index = write_index(output, vector_shards(), rows(), text_field, embedder.identity(), index_type)
    index.embedder = embedder
    return index


def _shard_rows(path) -> Iterator[dict]:
    """The ``{"id", "line"}`` rows of a vector shard, JSONL or Parquet."""
    if str(path).endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            yield from (json.loads(line) for line in f if line.strip())
    else:
        yield from require_parquet(str(path)).read_table(path).to_pylist()


def encode_shards(
    embedder, texts: list[str], batch_size: int = 32, show_progress: bool = False
) -> Iterator[np.ndarray]:
    """The vectors of ``texts``, in order, ``batch_size * PROGRESS_CHUNK_BATCHES`` at a time (each chunk encoded
    shortest first, as padding wants, and put back in order), under one progress bar with ``show_progress``."""
    size = batch_size * PROGRESS_CHUNK_BATCHES
    with (
        quiet_notes(),
        progress_bar(total=len(texts), desc="indexing", unit="problem", dynamic_ncols=True, show=show_progress) as bar,
    ):
        for start in range(0, len(texts), size):
            chunk = texts[start : start + size]
            order = sorted(range(len(chunk)), key=lambda i: len(chunk[i]))
            encoded = encode_texts(embedder, [chunk[i] for i in order], batch_size, show_progress=False)
            vectors = np.empty_like(encoded)
            vectors[order] = encoded
            bar.update(len(chunk))
            yield vectors


def rough_seconds(embedder, count: int) -> tuple[float, str]:
    """A rough estimate of the seconds ``count`` problems take to index with ``embedder``, and what it rests on:
    ``RATES_PER_CPU_CORE`` (``BUSY_SLOWDOWN`` times slower when the load average says other processes keep the
    cores busy) or ``RATES_ON_GPU``, figures of one machine, not a measurement of this one."""
    import torch

    kind = "transformers.AutoModel" if isinstance(embedder, TextEmbedder) else "mathgraph.MathEncoder"
    if _device_type(embedder) == "cuda":
        rate, where = RATES_ON_GPU[kind], "a GPU"
    else:
        cores = min(torch.get_num_threads(), RATE_CORES)
        rate, where = RATES_PER_CPU_CORE[kind] * cores, f"{cores} idle CPU core{'s' if cores > 1 else ''}"
        load = _load_average()
        if load is not None and load >= 0.75 * cores:
            rate /= BUSY_SLOWDOWN
            where = f"{cores} CPU core{'s' if cores > 1 else ''} kept busy by other work (load average {load:.1f})"
    return count / rate, f"about {rate:.3g} problems a second on {where}; a bar on a terminal measures this machine"


def _load_average() -> float | None:
    """The 1-minute load average, None where the system does not tell it."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _device_type(embedder) -> str:
    if isinstance(embedder, MathEncoderEmbedder):
        return next(embedder.encoder.model.parameters()).device.type
    device = getattr(embedder, "device", None)
    return getattr(device, "type", str(device or "cpu"))


def _duration(seconds: float) -> str:
    """``"40 s"``, ``"3 min"``, ``"1 h 20 min"``."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def shipped_package():
    """The shipped package, whose ``config.json`` holds the search's fusion weights (nothing loads yet)."""
    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR

    return ModelPackage(SHIPPED_DIR)


def hybrid_search_weight(hybrid: bool | None = None) -> float:
    """The ``sparse_weight`` of ``SearchIndex.search`` for ``mathgraph search [--hybrid|--no-hybrid]``: the
    shipped model's TF-IDF weight, chosen on dev, when ``hybrid`` is True, or when it is None and dev said
    hybrid search helps; 0 (dense cosine only) otherwise."""
    if hybrid is False:
        return 0.0
    setting = shipped_package().search_setting("tfidf")
    if setting is None:
        return 0.0
    return float(setting["weight"]) if hybrid or setting["on"] else 0.0


def structure_search_weight(hybrid: bool | None = None) -> float:
    """The ``structure_weight`` of ``SearchIndex.search`` for ``mathgraph search [--hybrid|--no-hybrid]``: the
    shipped alignment model's weight, chosen on dev, when ``hybrid`` is True, or when it is None and dev said it
    helps; 0 otherwise (and for a package without a alignment model)."""
    if hybrid is False:
        return 0.0
    setting = shipped_package().search_setting("structure")
    if setting is None:
        return 0.0
    return float(setting["weight"]) if hybrid or setting["on"] else 0.0


def skeleton_search_weight(hybrid: bool | None = None) -> float:
    """The ``skeleton_weight`` of ``SearchIndex.search`` for ``mathgraph search [--hybrid|--no-hybrid]``: the
    structure-aware channel's largest weight (``tasks.search.skeleton.SKELETON_WEIGHTS``, chosen on dev; each
    query's is scaled by the channel's confidence, ``SKELETON_CONFIDENCE``) unless ``hybrid`` is False."""
    from mathgraph.tasks.search.skeleton import SKELETON_WEIGHTS

    return 0.0 if hybrid is False else float(SKELETON_WEIGHTS[1])


def search_weights(hybrid: bool | None = None) -> tuple[float, float, float]:
    """``(sparse_weight, structure_weight, skeleton_weight)`` of ``mathgraph search [--hybrid|--no-hybrid]``:
    with the skeleton channel on, the TF-IDF weight chosen with it (``SKELETON_WEIGHTS``), else the package's
    (``hybrid_search_weight``); the alignment step's from the package (``structure_search_weight``)."""
    from mathgraph.tasks.search.skeleton import SKELETON_WEIGHTS

    skeleton = skeleton_search_weight(hybrid)
    sparse = float(SKELETON_WEIGHTS[0]) if skeleton > 0 else hybrid_search_weight(hybrid)
    return sparse, structure_search_weight(hybrid), skeleton


def search_records(
    index: SearchIndex,
    records: Iterable[TextRecord],
    k: int = 5,
    batch_size: int = 32,
    approximate: bool | None = None,
    sparse_weight: float = 0.0,
    structure_weight: float = 0.0,
    skeleton_weight: float = 0.0,
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
            skeleton_weight=skeleton_weight,
        )
        for record, query_hits in zip(chunk, hits):
            yield {
                "query": record.text,
                **({"id": record.row["id"]} if "id" in record.row else {}),
                "line": record.line,
                "hits": [{"rank": rank, **hit.to_dict()} for rank, hit in enumerate(query_hits, start=1)],
            }


__all__ = [
    "build_index_from_file",
    "build_index_from_vectors",
    "encode_shards",
    "rough_seconds",
    "hybrid_search_weight",
    "structure_search_weight",
    "skeleton_search_weight",
    "search_weights",
    "search_records",
    "QUERY_CHUNK",
]
