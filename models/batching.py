"""Batching problems for COMUS: token tensors, the batch's graphs as one, and padded memory slots.

A problem's tensors (token ids, node and relation ids, edges, triplets) are
built once, as ``ProblemFeatures``; a batch is then only padding and
concatenation (``collate_features``), with no tokenizer call, no ``to_pyg`` and no
PyG ``Batch`` per batch. Training builds every problem's features before the
first epoch; ``ProblemCollator(graphs)`` builds and collates in one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence

from mathgraph.graph import NODE_KINDS, GraphVocabulary, MathSyntaxGraph, reverse_relation
from mathgraph.models.text_encoder import protect_unknown_commands
from mathgraph.parsers.segment import without_excluded_blocks
from mathgraph.quiet import progress_bar, warn

_EMPTY = torch.zeros(0, dtype=torch.long)


class DeviceBatch:
    """A dataclass batch whose tensors (and nested batches) move as one.

    ``to(device, non_blocking=)`` is what Accelerate's ``send_to_device`` calls (it moves
    only tensors, containers and objects with a ``to``), and ``pin_memory()`` what the
    DataLoader calls with ``pin_memory=True``, so pinned host batches reach a GPU by
    asynchronous copies. Fields named in ``HOST_FIELDS`` stay on the host: bookkeeping the
    host reads, which on the device would cost a sync to read back.
    """

    HOST_FIELDS: tuple[str, ...] = ()

    def _map(self, move):
        return replace(
            self,
            **{
                f.name: move(value)
                for f in fields(self)
                if f.name not in self.HOST_FIELDS
                and isinstance(value := getattr(self, f.name), (torch.Tensor, DeviceBatch))
            },
        )

    def to(self, device, non_blocking: bool = False):
        return self._map(lambda value: value.to(device, non_blocking=non_blocking))

    def pin_memory(self):
        return self._map(lambda value: value.pin_memory())


@dataclass
class ProblemBatch(DeviceBatch):
    """Everything ``ComusModel.forward`` takes, for ``B`` problems.

    ``input_ids, attention_mask, token_type_ids: [B, L]``; ``node_labels,
    node_kinds, node_batch: [num_nodes]`` (``node_batch`` = problem index of each
    node); ``edge_index: [2, E]`` and ``edge_type: [E]`` with both directions;
    ``slot_heads, slot_relations, slot_tails, slot_mask: [B, T]`` the graphs'
    triplets (global node ids, relation ids) padded to the largest graph.
    ``problem_ids: [B]`` says which problem of a ``FeatureStore`` each row is
    (``-1`` when the batch was not built from one); the frozen-prefix cache keys on it, on the
    host: it stays there when the batch moves.
    A text-only batch (``--architecture bert``) has no nodes, edges or slots.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    token_type_ids: torch.Tensor
    node_labels: torch.Tensor
    node_kinds: torch.Tensor
    node_batch: torch.Tensor
    edge_index: torch.Tensor
    edge_type: torch.Tensor
    slot_heads: torch.Tensor
    slot_relations: torch.Tensor
    slot_tails: torch.Tensor
    slot_mask: torch.Tensor
    problem_ids: torch.Tensor | None = None

    HOST_FIELDS = ("problem_ids",)

    def as_model_inputs(self) -> dict[str, torch.Tensor]:
        """The keyword arguments of ``ComusModel.forward``."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "problem_ids"}

    def __len__(self) -> int:
        return self.input_ids.shape[0]


@dataclass
class ProblemFeatures:
    """One problem's tensors, built once: ``input_ids: [L]`` (with ``[CLS]``/``[SEP]``, truncated),
    ``node_labels, node_kinds: [N]``, ``edge_index: [2, 2E]`` and ``edge_type: [2E]`` (both
    directions, as ``MathSyntaxGraph.to_pyg``), ``slot_heads, slot_relations, slot_tails: [E]``
    (triplets, local node ids). Text-only features have ``N = E = 0``. ``token_type_ids: [L]``
    is ``None`` for one problem (all segment 0) and set for a pair read as one sequence."""

    input_ids: torch.Tensor
    node_labels: torch.Tensor = _EMPTY
    node_kinds: torch.Tensor = _EMPTY
    edge_index: torch.Tensor = _EMPTY.reshape(2, 0)
    edge_type: torch.Tensor = _EMPTY
    slot_heads: torch.Tensor = _EMPTY
    slot_relations: torch.Tensor = _EMPTY
    slot_tails: torch.Tensor = _EMPTY
    token_type_ids: torch.Tensor | None = None

    @property
    def length(self) -> int:
        """Number of tokens (what length-bucketing sorts by)."""
        return len(self.input_ids)

    @property
    def segments(self) -> torch.Tensor:
        """Segment id of each token (``token_type_ids``, zeros for a single problem)."""
        return torch.zeros_like(self.input_ids) if self.token_type_ids is None else self.token_type_ids


def pair_features(first: ProblemFeatures, second: ProblemFeatures, max_length: int = 512) -> ProblemFeatures:
    """Two problems as one input for a cross-encoder: ``[CLS] a [SEP] b [SEP]`` with segment ids
    0 then 1, and both graphs under one ROOT.

    ``second``'s ``[CLS]`` is dropped; if the pair is longer than ``max_length`` (the text
    encoder's positions) the end of ``b`` is cut and its final ``[SEP]`` kept. The graphs
    merge at the root: ``second``'s ROOT node (node 0) is removed and its edges start at
    ``first``'s ROOT, so the sentences of both problems hang under one ROOT and one set of
    memory slots holds the triplets of both; ``second``'s other nodes follow ``first``'s.
    """
    ids = torch.cat([first.input_ids, second.input_ids[1:]])
    segments = torch.cat([torch.zeros_like(first.input_ids), torch.ones_like(second.input_ids[1:])])
    if len(ids) > max_length:
        keep = torch.cat([torch.arange(max_length - 1), torch.tensor([len(ids) - 1])])
        ids, segments = ids[keep], segments[keep]
    if len(second.node_labels) == 0:  # text-only features
        return ProblemFeatures(ids, token_type_ids=segments)
    # second's node j > 0 becomes node offset + j; its root (j = 0) becomes first's root (0)
    offset = len(first.node_labels) - 1

    def moved(nodes: torch.Tensor) -> torch.Tensor:
        return torch.where(nodes == 0, nodes, nodes + offset)

    return ProblemFeatures(
        input_ids=ids,
        node_labels=torch.cat([first.node_labels, second.node_labels[1:]]),
        node_kinds=torch.cat([first.node_kinds, second.node_kinds[1:]]),
        edge_index=torch.cat([first.edge_index, moved(second.edge_index)], dim=1),
        edge_type=torch.cat([first.edge_type, second.edge_type]),
        slot_heads=torch.cat([first.slot_heads, moved(second.slot_heads)]),
        slot_relations=torch.cat([first.slot_relations, second.slot_relations]),
        slot_tails=torch.cat([first.slot_tails, moved(second.slot_tails)]),
        token_type_ids=segments,
    )


def graph_features(
    graph: MathSyntaxGraph, vocab: GraphVocabulary, input_ids: torch.Tensor, read_chars: int | None = None
) -> ProblemFeatures:
    """``ProblemFeatures`` of a parsed problem whose text is already tokenized into ``input_ids``.

    ``read_chars``: the graph of the first ``read_chars`` characters of the text only (the nodes that start
    there, the problem root, and the edges between them), for a text the encoder read in part; ``None``: all.
    """
    nodes, edges = graph.nodes, graph.edges
    if read_chars is not None:
        kept = [i for i, node in enumerate(nodes) if node.span is None or node.span[0] < read_chars]
        new_id = {old: new for new, old in enumerate(kept)}
        nodes = [nodes[i] for i in kept]
        edges = [replace(e, src=new_id[e.src], dst=new_id[e.dst]) for e in edges if e.src in new_id and e.dst in new_id]
    relations = [e.relation for e in edges]
    src = [e.src for e in edges]
    dst = [e.dst for e in edges]
    relation_ids = torch.tensor(vocab.relations.lookup(relations), dtype=torch.long)
    return ProblemFeatures(
        input_ids=input_ids,
        node_labels=torch.tensor(vocab.labels.lookup(n.label for n in nodes), dtype=torch.long),
        node_kinds=torch.tensor([NODE_KINDS.index(n.kind) for n in nodes], dtype=torch.long),
        edge_index=torch.tensor([src + dst, dst + src], dtype=torch.long).reshape(2, -1),
        edge_type=torch.cat(
            [
                relation_ids,
                torch.tensor(vocab.relations.lookup(reverse_relation(r) for r in relations), dtype=torch.long),
            ]
        ),
        slot_heads=torch.tensor(src, dtype=torch.long),
        slot_relations=relation_ids,
        slot_tails=torch.tensor(dst, dtype=torch.long),
    )


def collate_features(
    features: Sequence[ProblemFeatures], pad_id: int, problem_ids: Sequence[int] | None = None
) -> ProblemBatch:
    """Pad and concatenate ``features`` into a ``ProblemBatch`` (node ids offset per problem)."""
    if not features:
        raise ValueError("cannot collate an empty list of problems")
    input_ids = pad_sequence([f.input_ids for f in features], batch_first=True, padding_value=pad_id)
    lengths = torch.tensor([f.length for f in features])
    attention_mask = (torch.arange(input_ids.shape[1])[None, :] < lengths[:, None]).long()
    node_counts = torch.tensor([len(f.node_labels) for f in features])
    offsets = torch.cumsum(node_counts, 0) - node_counts
    slot_counts = torch.tensor([len(f.slot_heads) for f in features])
    slots = max(1, int(slot_counts.max()))

    def padded_slots(name: str, shift: bool) -> torch.Tensor:
        rows = [getattr(f, name) + (offset if shift else 0) for f, offset in zip(features, offsets.tolist())]
        out = pad_sequence(rows, batch_first=True, padding_value=0)
        return torch.nn.functional.pad(out, (0, slots - out.shape[1]))

    return ProblemBatch(
        input_ids=input_ids,
        attention_mask=attention_mask,
        token_type_ids=pad_sequence([f.segments for f in features], batch_first=True, padding_value=0),
        node_labels=torch.cat([f.node_labels for f in features]),
        node_kinds=torch.cat([f.node_kinds for f in features]),
        node_batch=torch.repeat_interleave(torch.arange(len(features)), node_counts),
        edge_index=torch.cat([f.edge_index + offset for f, offset in zip(features, offsets.tolist())], dim=1),
        edge_type=torch.cat([f.edge_type for f in features]),
        slot_heads=padded_slots("slot_heads", shift=True),
        slot_relations=padded_slots("slot_relations", shift=False),
        slot_tails=padded_slots("slot_tails", shift=True),
        slot_mask=torch.arange(slots)[None, :] < slot_counts[:, None],
        problem_ids=None if problem_ids is None else torch.as_tensor(problem_ids, dtype=torch.long),
    )


class ProblemCollator:
    """Turns problems into ``ProblemFeatures`` and lists of them into a ``ProblemBatch``.

    Args:
        tokenizer: the text encoder's tokenizer.
        vocab: node-label and relation vocabularies of the model.
        max_length: texts are truncated to this many tokens (the text encoder's positions). The first text
            cut is reported with a warning; ``truncated`` counts every text cut since.
    """

    def __init__(self, tokenizer, vocab: GraphVocabulary, max_length: int = 256):
        self.tokenizer, self.vocab, self.max_length = tokenizer, vocab, max_length
        self.latex_tokens = frozenset(t for t in tokenizer.get_added_vocab() if t.startswith("\\"))
        self.truncated = 0

    def encoder_text(self, text: str) -> str:
        """What the text encoder reads: no Asymptote code or tables, unknown LaTeX commands protected."""
        return protect_unknown_commands(without_excluded_blocks(text), self.latex_tokens)

    def token_ids(self, texts: Sequence[str]) -> list[torch.Tensor]:
        """Token ids of each text (with special tokens, truncated to ``max_length``), one tokenizer call."""
        read = [self.encoder_text(t) for t in texts]
        encoded = self.tokenizer(read, truncation=True, max_length=self.max_length, verbose=False)["input_ids"]
        self._count_truncated([text for text, ids in zip(read, encoded) if len(ids) == self.max_length])
        return [torch.tensor(ids, dtype=torch.long) for ids in encoded]

    def _count_truncated(self, full: list[str]) -> None:
        """Count the texts of ``full`` (cut to exactly ``max_length`` tokens, so maybe longer) that were longer,
        and warn at the first: a long problem must not be read in part without a word."""
        if not full:
            return
        lengths = [len(ids) for ids in self.tokenizer(full, verbose=False)["input_ids"]]
        cut = [n for n in lengths if n > self.max_length]
        if cut and not self.truncated:
            warn(  # at the user's line that called into mathgraph, however deep this collator sits
                f"a problem of {cut[0]:,} tokens was cut to the text encoder's first {self.max_length}: the rest "
                "of its text and graph is not read (further cuts are counted, not reported)"
            )
        self.truncated += len(cut)

    def features(self, graphs: Sequence[MathSyntaxGraph]) -> list[ProblemFeatures]:
        """``ProblemFeatures`` of parsed problems: tokens and graph tensors. A text cut to ``max_length`` tokens
        gets the graph of the part that was read (``read_chars``): the model reads one span of the problem, and
        the cost of a long problem stays that of ``max_length`` tokens however long its text."""
        ids = self.token_ids([g.text for g in graphs])
        return [graph_features(g, self.vocab, t, self.read_chars(g.text, t)) for g, t in zip(graphs, ids)]

    def read_chars(self, text: str, ids: torch.Tensor) -> int | None:
        """How many characters of ``text`` its ``ids`` (``token_ids``) cover: ``None`` for the whole text, the
        end of the last token read for a text cut to ``max_length`` (a fast tokenizer's offsets, mapped back
        through ``encoder_text``, which drops blocks and spaces commands)."""
        if len(ids) < self.max_length or not getattr(self.tokenizer, "is_fast", False):
            return None
        read = self.encoder_text(text)
        offsets = self.tokenizer(
            read, truncation=True, max_length=self.max_length, return_offsets_mapping=True, verbose=False
        )["offset_mapping"]
        end = max(stop for _, stop in offsets)
        if end >= len(read):
            return None
        low, high = 0, len(text)  # the shortest prefix of the text whose encoder text reaches the end read
        while low < high:
            middle = (low + high) // 2
            if len(self.encoder_text(text[:middle])) >= end:
                high = middle
            else:
                low = middle + 1
        return low

    def text_features(self, texts: Sequence[str]) -> list[ProblemFeatures]:
        """Token-only ``ProblemFeatures`` (no graph), for text-only models: nothing is parsed."""
        return [ProblemFeatures(ids) for ids in self.token_ids(texts)]

    def collate(self, features: Sequence[ProblemFeatures], problem_ids: Sequence[int] | None = None) -> ProblemBatch:
        """A ``ProblemBatch`` of already-built features."""
        return collate_features(features, self.tokenizer.pad_token_id, problem_ids)

    def __call__(self, graphs: Sequence[MathSyntaxGraph]) -> ProblemBatch:
        return self.collate(self.features(graphs))  # collate_features refuses an empty list


def encode_in_length_order(
    problems: Sequence,
    parser: str,
    collator: ProblemCollator,
    batch_size: int,
    dimension: int,
    vectors_of,
    show_progress: bool | None = None,
) -> np.ndarray:
    """What an encoder's ``encode`` does around its network: ``problems`` (texts or parsed graphs) checked and
    read (``parsers.graph_cache.graphs_for`` with ``parser``), collated in batches of similar length, and
    ``vectors_of(batch) -> [B, dimension]`` (a NumPy array) put back in input order. ``show_progress``: the
    parsing and encoding bars (None: for more than four batches)."""
    from mathgraph.parsers.graph_cache import graphs_for

    if isinstance(problems, (str, MathSyntaxGraph)):
        raise TypeError("encode takes a list of problems; wrap a single problem in a list")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    vectors = np.zeros((len(problems), dimension), dtype=np.float32)
    if not problems:
        return vectors
    show = len(problems) > 4 * batch_size if show_progress is None else show_progress
    graphs = graphs_for(problems, parser, show_progress=show)
    order = sorted(range(len(graphs)), key=lambda i: len(collator.encoder_text(graphs[i].text)))
    for start in progress_bar(range(0, len(order), batch_size), desc="encoding", unit="batch", show=show):
        chosen = order[start : start + batch_size]
        vectors[chosen] = vectors_of(collator([graphs[i] for i in chosen]))
    return vectors
