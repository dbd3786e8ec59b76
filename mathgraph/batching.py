"""Batching problems for COMUS: token tensors, a PyG batch of graphs, and padded memory slots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import torch
from torch_geometric.data import Batch

from mathgraph.graph import GraphVocabulary, MathSyntaxGraph
from models.text_encoder import protect_unknown_commands
from parsers.segment import without_excluded_blocks


@dataclass
class ProblemBatch:
    """Everything ``ComusModel.forward`` takes, for ``B`` problems.

    ``input_ids, attention_mask, token_type_ids: [B, L]``; ``node_labels,
    node_kinds, node_batch: [num_nodes]`` (``node_batch`` = problem index of each
    node); ``edge_index: [2, E]`` and ``edge_type: [E]`` with both directions;
    ``slot_heads, slot_relations, slot_tails, slot_mask: [B, T]`` the graphs'
    triplets (global node ids, relation ids) padded to the largest graph.
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

    def to(self, device: torch.device | str) -> "ProblemBatch":
        return ProblemBatch(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def as_model_inputs(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __len__(self) -> int:
        return self.input_ids.shape[0]


class ProblemCollator:
    """Turns a list of ``MathSyntaxGraph`` (each holding its problem text) into a ``ProblemBatch``.

    Args:
        tokenizer: the text encoder's tokenizer.
        vocab: node-label and relation vocabularies of the model.
        max_length: texts are truncated to this many tokens.
    """

    def __init__(self, tokenizer, vocab: GraphVocabulary, max_length: int = 256):
        self.tokenizer, self.vocab, self.max_length = tokenizer, vocab, max_length
        self.latex_tokens = frozenset(t for t in tokenizer.get_added_vocab() if t.startswith("\\"))

    def encoder_text(self, text: str) -> str:
        """What the text encoder reads: no Asymptote code or tables, unknown LaTeX commands protected."""
        return protect_unknown_commands(without_excluded_blocks(text), self.latex_tokens)

    def __call__(self, graphs: Sequence[MathSyntaxGraph]) -> ProblemBatch:
        if not graphs:
            raise ValueError("cannot collate an empty list of problems")
        tokens = self.tokenizer(
            [self.encoder_text(g.text) for g in graphs], padding=True, truncation=True, max_length=self.max_length,
            return_tensors="pt", return_token_type_ids=True,
        )
        pyg = Batch.from_data_list([g.to_pyg(self.vocab) for g in graphs])
        num_slots = max(1, max(len(g.edges) for g in graphs))
        heads = torch.zeros(len(graphs), num_slots, dtype=torch.long)
        relations = torch.zeros_like(heads)
        tails = torch.zeros_like(heads)
        mask = torch.zeros(len(graphs), num_slots, dtype=torch.bool)
        for i, graph in enumerate(graphs):
            count, offset = len(graph.edges), int(pyg.ptr[i])
            if count == 0:
                continue
            triplets = graph.triplets()
            heads[i, :count] = torch.tensor([h for h, _, _ in triplets]) + offset
            tails[i, :count] = torch.tensor([t for _, _, t in triplets]) + offset
            relations[i, :count] = torch.tensor(self.vocab.relations.lookup(r for _, r, _ in triplets))
            mask[i, :count] = True
        return ProblemBatch(
            input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"],
            token_type_ids=tokens["token_type_ids"], node_labels=pyg.x, node_kinds=pyg.node_kind,
            node_batch=pyg.batch, edge_index=pyg.edge_index, edge_type=pyg.edge_type,
            slot_heads=heads, slot_relations=relations, slot_tails=tails, slot_mask=mask,
        )
