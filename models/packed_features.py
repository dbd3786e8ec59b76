"""Problems parsed once on a CPU, stored as compact Parquet shards, and read back with no parser installed.

``pack_features`` writes the ``ProblemFeatures`` of distinct texts (token ids, node labels and kinds, edges
with their relation ids) as rows of Parquet shards (zstd), plus the alignment-feature rows of the pairs a
training set's heads read (``models.alignment_features``), and a manifest that names the tokenizer and graph
vocabularies they were built with. ``models.features.PackedFeatureStore`` reads them back as a ``FeatureStore``: a batch
collated from it equals the batch collated from the parsed texts, and it never parses (a text it does not
hold is an error naming the pack). Training commands read a pack with ``--packed DIR``
(``TrainingArguments.packed_features``); ``mathgraph kit build`` writes one into a training kit.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from mathgraph.errors import UserError
from mathgraph.models.batching import ProblemFeatures

if TYPE_CHECKING:
    from mathgraph.models.features import FeatureStore

PACK_FORMAT = "mathgraph-packed-features"
PACK_VERSION = 1
MANIFEST_NAME = "manifest.json"
ALIGNMENT_NAME = "alignment.parquet"
SHARD_PATTERN = "problems-{:05d}.parquet"
ROWS_PER_SHARD = 20_000
# Columns of a problem row: each a list per problem. The edges are stored once, forward; ``ProblemFeatures``
# holds them both ways (``edge_index``, ``edge_type``) and as slots (``slot_*``).
LIST_COLUMNS = ("input_ids", "node_labels", "node_kinds", "edge_src", "edge_dst", "edge_relation", "edge_reverse")


class PackError(UserError):
    """A pack that cannot serve this run: missing, of another format, or built for another tokenizer or
    graph vocabulary, or lacking a text the run needs."""


def tokenizer_fingerprint(tokenizer) -> str:
    """A digest of what token ids mean: the tokenizer's vocabulary (with added tokens) and digit splitting."""
    from mathgraph.models.text_encoder import splits_digits

    vocab = sorted(tokenizer.get_vocab().items())
    payload = json.dumps([vocab, splits_digits(tokenizer)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def vocabulary_fingerprint(vocab) -> str:
    """A digest of what node-label and relation ids mean (a ``GraphVocabulary``)."""
    payload = json.dumps([vocab.labels.to_dict(), vocab.relations.to_dict()], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _row(text: str, features: ProblemFeatures) -> dict:
    forward = len(features.slot_heads)
    return {
        "text": text,
        "input_ids": features.input_ids.tolist(),
        "node_labels": features.node_labels.tolist(),
        "node_kinds": features.node_kinds.tolist(),
        "edge_src": features.slot_heads.tolist(),
        "edge_dst": features.slot_tails.tolist(),
        "edge_relation": features.slot_relations.tolist(),
        "edge_reverse": features.edge_type[forward:].tolist(),
    }


def pack_features(
    directory: str | Path,
    store: FeatureStore,
    alignment_rows: dict[bytes, np.ndarray] | None = None,
    rows_per_shard: int = ROWS_PER_SHARD,
    **facts,
) -> dict:
    """Write the single problems of ``store`` (pairs are rebuilt from them when read) and ``alignment_rows``
    (``{key: row}`` of ``models.alignment_features``) to ``directory``; ``facts`` go into the manifest.
    Returns the manifest."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    texts = [t for t in store.index if isinstance(t, str)]
    schema = pa.schema(
        [("text", pa.string())]
        + [(name, pa.list_(pa.int8() if name == "node_kinds" else pa.int32())) for name in LIST_COLUMNS]
    )
    shards = []
    for number, start in enumerate(range(0, max(1, len(texts)), rows_per_shard)):
        rows = [_row(t, store.features[store.index[t]]) for t in texts[start : start + rows_per_shard]]
        name = SHARD_PATTERN.format(number)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), directory / name, compression="zstd")
        shards.append(name)
    alignment_rows = alignment_rows or {}
    if alignment_rows:
        table = pa.table(
            {
                "key": pa.array(list(alignment_rows), pa.binary(16)),
                "row": pa.array(
                    [np.asarray(r, dtype=np.float64) for r in alignment_rows.values()], pa.list_(pa.float64())
                ),
            }
        )
        pq.write_table(table, directory / ALIGNMENT_NAME, compression="zstd")
    collator = store.collator
    manifest = {
        "format": PACK_FORMAT,
        "version": PACK_VERSION,
        "problems": len(texts),
        "shards": shards,
        "with_graphs": store.with_graphs,
        "parser": store.parser,
        "max_length": collator.max_length,
        "tokenizer": tokenizer_fingerprint(collator.tokenizer),
        "graph_vocabulary": vocabulary_fingerprint(collator.vocab),
        "alignment_rows": len(alignment_rows),
        **facts,
    }
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def read_manifest(directory: str | Path) -> dict:
    """The manifest of the pack in ``directory``; ``PackError`` if there is none or it is of another format."""
    path = Path(directory) / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise PackError(
            f"{directory}: not a pack of problems (no {MANIFEST_NAME}; write one with `mathgraph kit build`)"
        ) from err
    except json.JSONDecodeError as err:
        raise PackError(f"{path}: unreadable ({err})") from err
    if manifest.get("format") != PACK_FORMAT or manifest.get("version") != PACK_VERSION:
        raise PackError(f"{path}: not a version-{PACK_VERSION} {PACK_FORMAT} manifest")
    return manifest


def _split(column, dtype=torch.long) -> list[torch.Tensor]:
    """A Parquet list column as one tensor per row (views of one flat tensor)."""
    flat = torch.from_numpy(column.values.to_numpy(zero_copy_only=False).astype(np.int64)).to(dtype)
    offsets = np.asarray(column.offsets)
    return list(torch.split(flat, np.diff(offsets).tolist())) if len(offsets) > 1 else []


def read_packed_problems(directory: str | Path) -> tuple[list[str], list[ProblemFeatures]]:
    """The texts of a pack and their ``ProblemFeatures``, in the order they were packed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    manifest = read_manifest(directory)
    texts: list[str] = []
    features: list[ProblemFeatures] = []
    for name in manifest["shards"]:
        try:
            table = pq.read_table(directory / name)
        except (OSError, pa.ArrowException) as err:
            raise PackError(f"{directory / name}: cannot read this shard ({err})") from err
        columns = {c: _split(pa.concat_arrays(table[c].chunks)) if table.num_rows else [] for c in LIST_COLUMNS}
        texts.extend(table["text"].to_pylist())
        for i in range(table.num_rows):
            src, dst = columns["edge_src"][i], columns["edge_dst"][i]
            relation = columns["edge_relation"][i]
            features.append(
                ProblemFeatures(
                    input_ids=columns["input_ids"][i].clone(),
                    node_labels=columns["node_labels"][i].clone(),
                    node_kinds=columns["node_kinds"][i].clone(),
                    edge_index=torch.stack([torch.cat([src, dst]), torch.cat([dst, src])]),
                    edge_type=torch.cat([relation, columns["edge_reverse"][i]]),
                    slot_heads=src.clone(),
                    slot_relations=relation.clone(),
                    slot_tails=dst.clone(),
                )
            )
    if len(texts) != manifest["problems"]:
        raise PackError(
            f"{directory}: the manifest counts {manifest['problems']} problems, the shards hold {len(texts)}"
        )
    return texts, features


def packed_lengths(directory: str | Path) -> dict[str, int]:
    """``{text: tokens}`` of every problem of a pack, read from its token-id column alone (no tensors built)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    directory = Path(directory)
    lengths: dict[str, int] = {}
    for name in read_manifest(directory)["shards"]:
        table = pq.read_table(directory / name, columns=["text", "input_ids"])
        lengths.update(zip(table["text"].to_pylist(), pc.list_value_length(table["input_ids"]).to_pylist()))
    return lengths


def read_alignment_rows(directory: str | Path) -> dict[bytes, np.ndarray]:
    """``{key: row}`` of the alignment features packed in ``directory`` (empty when none were)."""
    import pyarrow.parquet as pq

    path = Path(directory) / ALIGNMENT_NAME
    if not path.exists():
        return {}
    table = pq.read_table(path)
    rows = table["row"].to_pylist()
    return {key: np.asarray(row, dtype=np.float64) for key, row in zip(table["key"].to_pylist(), rows)}


__all__ = [
    "PackError",
    "pack_features",
    "read_manifest",
    "read_packed_problems",
    "read_alignment_rows",
    "packed_lengths",
    "tokenizer_fingerprint",
    "vocabulary_fingerprint",
]
