"""The search commands' work: ``build_index_from_file`` (``mathgraph index build``), ``hybrid_search_weight``
and ``structure_search_weight`` (``--hybrid``, from the shipped model's release notes) and ``search_records``
(``--queries FILE``: many queries against one loaded model and index, embedded in batches)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from itertools import islice
from os import PathLike

from mathgraph.jsonl import TextRecord, read_rows
from tasks.embedders import load_embedder
from tasks.search_index import SearchIndex

# Queries of a file searched at once by search_records: enough to keep every batch full, few enough to bound memory.
QUERY_CHUNK = 1024


def build_index_from_file(
    input_path: str | PathLike,
    model: str | PathLike = "shipped",
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
        index.save_pretrained(output)
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


__all__ = ["build_index_from_file", "hybrid_search_weight", "structure_search_weight", "search_records", "QUERY_CHUNK"]
