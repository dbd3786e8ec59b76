"""The search commands' work: ``build_index_from_file`` (``mathgraph index build``), ``hybrid_search_weight``
and ``structure_search_weight`` (``--hybrid``, from the shipped model's release notes) and ``search_records``
(``--queries FILE``: many queries against one loaded model and index, embedded in batches)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from os import PathLike

from mathgraph.jsonl import TextRecord, read_rows
from mathgraph.quiet import warn
from mathgraph.tasks.search.embedders import MathEncoderEmbedder, TextEmbedder, load_embedder
from mathgraph.tasks.search.index import SearchIndex

# Queries of a file searched at once by search_records: enough to keep every batch full, few enough to bound memory.
QUERY_CHUNK = 1024


# Rough problems per second of `mathgraph index build`, parsing (no graph cache) and encoding, for the up-front
# estimate; the progress bar then measures the machine it runs on. Measured on a 2-core machine with 512 MATH train
# problems: the shipped encoder 43 a second with the cores idle; beside a training run that kept them busy it
# indexed MATH's 7,500 in 19 min (6.6 a second, issue 27). The packaged MiniLM (text:minilm) 26 a second idle. Per core, and on a
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
    skip_bad: bool = False,
    limit: int | None = None,
    show_progress: bool = False,
) -> SearchIndex:
    """``mathgraph index build``: embed the ``text_field`` of every row of a JSONL corpus (its first ``limit``
    good rows, when given) with the model ``model`` (see ``load_embedder``) and, with ``output``, save the index
    there. A bad row raises ``JsonlError`` naming file and line, or with ``skip_bad`` is left out (and counted in
    a warning). ``show_progress``: a rough estimate of the time it takes on stderr before the work starts
    (``rough_seconds``), then one progress bar over parsing and encoding with its own estimate."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    numbered, bad = read_rows(input_path, (text_field,), skip_bad=skip_bad)
    if bad:
        warn(f"{input_path}: skipped {len(bad)} bad rows, the first: {bad[0]}")
    if not numbered:
        raise ValueError(f"{input_path}: no rows with a {text_field!r} field to index")
    rows = [row for _, row in numbered][:limit]
    embedder = load_embedder(model, mode=mode, device=device)
    if show_progress:
        seconds, basis = rough_seconds(embedder, len(rows))
        print(f"indexing {len(rows):,} problems: roughly {_duration(seconds)} ({basis})", file=sys.stderr)
    index = SearchIndex.build(rows, embedder, text_field=text_field, batch_size=batch_size, show_progress=show_progress)
    if output is not None:
        index.save_pretrained(output)
    return index


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
    return count / rate, f"about {rate:.3g} problems a second on {where}; the bar below measures this machine"


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


__all__ = [
    "build_index_from_file",
    "rough_seconds",
    "hybrid_search_weight",
    "structure_search_weight",
    "search_records",
    "QUERY_CHUNK",
]
