"""COMUS syntax-aware memory (Gong et al., ACL 2022, Section 3.2, Eq. 2-8).

Memory slots are the graph's dependency triplets ``(h, r, t)``: the key of a
slot is ``[n_h ; r]`` (head node state and relation embedding), its value is
``n_t`` (tail node state). With token states ``H`` and ``m`` views:

    S_i   = H W_i^S K^T                                  (Eq. 2, one bilinear map per view)
    read:  alpha_i = softmax(S_i) over slots             (Eq. 4)
           H'      = H + [alpha_1 V; ...; alpha_m V] W^O  (Eq. 3)
    write: beta_i  = softmax(S_i^T) over tokens          (Eq. 6)
           V~      = [beta_1 H; ...; beta_m H] W^V        (Eq. 5)
           z       = sigmoid(V~ W_1 + V W_2)              (Eq. 7)
           V'      = z * V~ + (1 - z) * V                 (Eq. 8)

and the updated values go back to their tail nodes by scatter-mean (a node
that is the tail of no slot, such as the problem root, keeps its state).
Everything is batched: slots are padded per graph, and masked tokens and
slots get exactly zero weight, so padding never changes a result. A graph
with no slot leaves its tokens unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch_geometric.utils import scatter


@dataclass
class MemoryOutput:
    """Result of one memory read/write.

    ``tokens: [B, L, d_text]`` the read-updated token states; ``nodes:
    [num_nodes, d_node]`` node states after the write; ``read_attention:
    [B, m, L, T]`` and ``write_attention: [B, m, L, T]`` (alpha and beta, zero
    at padding); ``gate: [B, T, d_node]`` (z).
    """

    tokens: torch.Tensor
    nodes: torch.Tensor
    read_attention: torch.Tensor
    write_attention: torch.Tensor
    gate: torch.Tensor


class SyntaxAwareMemory(nn.Module):
    """One multi-view read/write between token states and graph-triplet slots.

    Args:
        text_dim: size ``d_text`` of the token states.
        node_dim: size ``d_node`` of the node states (slot values).
        relation_dim: size ``d_rel`` of the relation embeddings (keys are ``d_node + d_rel``).
        num_views: ``m``, the number of bilinear similarity views.
    """

    def __init__(self, text_dim: int, node_dim: int, relation_dim: int, num_views: int = 2):
        super().__init__()
        self.text_dim, self.node_dim, self.relation_dim, self.num_views = text_dim, node_dim, relation_dim, num_views
        key_dim = node_dim + relation_dim
        self.similarity = nn.Parameter(torch.empty(num_views, text_dim, key_dim))  # W_i^S
        self.read_out = nn.Linear(num_views * node_dim, text_dim, bias=False)  # W^O
        self.write_out = nn.Linear(num_views * text_dim, node_dim, bias=False)  # W^V
        self.gate_new = nn.Linear(node_dim, node_dim, bias=False)  # W_1
        self.gate_old = nn.Linear(node_dim, node_dim, bias=True)  # W_2 (the bias lets z start anywhere)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # Scaled so that S starts with unit-order variance whatever the widths.
        nn.init.normal_(self.similarity, std=(self.text_dim * (self.node_dim + self.relation_dim)) ** -0.25 / 4)
        for linear in (self.read_out, self.write_out, self.gate_new, self.gate_old):
            linear.reset_parameters()
        # W^O starts at zero: a fresh memory layer is the identity on the text path,
        # so inserting it into a pre-trained BERT does not disturb it before training.
        nn.init.zeros_(self.read_out.weight)

    def forward(
        self,
        tokens: torch.Tensor,
        token_mask: torch.Tensor,
        nodes: torch.Tensor,
        relations: torch.Tensor,
        slot_heads: torch.Tensor,
        slot_relations: torch.Tensor,
        slot_tails: torch.Tensor,
        slot_mask: torch.Tensor,
    ) -> MemoryOutput:
        """Read from and write to the memory.

        Args:
            tokens: ``[B, L, d_text]`` token states ``H``.
            token_mask: ``[B, L]`` true for real tokens.
            nodes: ``[num_nodes, d_node]`` node states of the whole (PyG) batch.
            relations: ``[num_relations, d_rel]`` relation embeddings.
            slot_heads, slot_relations, slot_tails: ``[B, T]`` global node ids
                and relation ids of each graph's triplets, padded.
            slot_mask: ``[B, T]`` true for real slots.
        """
        token_mask, slot_mask = token_mask.bool(), slot_mask.bool()
        batch, length, _ = tokens.shape
        num_views, slots = self.num_views, slot_mask.shape[1]
        if nodes.shape[0] == 0:  # no graph in the batch (every slot is padding): nothing to read or write
            zeros = tokens.new_zeros(batch, num_views, length, slots)
            return MemoryOutput(tokens, nodes, zeros, zeros, tokens.new_zeros(batch, slots, self.node_dim))
        # Slots are computed in the padded [B, T] layout and padding is masked by multiplication, never
        # selected by a boolean mask: the shapes never depend on the values, so a GPU step does not wait
        # for the host (padded slots point at node 0 and relation 0; their weights are exactly zero).
        # Linear maps of a slot's key or value are maps of its node and relation rows, so they run on the
        # nodes (about one per real slot) and the relation table, then are gathered into the slots.
        key_maps = self.similarity.permute(2, 0, 1).reshape(-1, num_views * self.text_dim)  # [d_key, m d_text]
        node_keys, relation_keys = key_maps[: self.node_dim], key_maps[self.node_dim :]
        # S_i = H W_i^S K^T with K = [n_h ; r], computed as H (K W_i^S^T)^T: the slots are fewer than the tokens.
        keys_in_text = _gather(nodes @ node_keys, slot_heads) + _gather(relations @ relation_keys, slot_relations)
        values = _gather(nodes, slot_tails)  # V: [B, T, d_node]

        # Internally attention is laid out [B, L, T, m] so that every product below
        # is one plain (batched) matrix multiplication with no copies.
        scores = torch.bmm(tokens, keys_in_text.reshape(batch, slots * num_views, self.text_dim).transpose(1, 2))
        scores = scores.reshape(batch, length, slots, num_views)  # S[b, l, t, i]
        pair_mask = (token_mask[:, :, None] & slot_mask[:, None, :])[..., None]
        scores = scores.masked_fill(~pair_mask, torch.finfo(scores.dtype).min)
        # Multiplying by the mask zeroes rows with no valid entry (a graph with no
        # slot, a padded token) instead of spreading weight uniformly over padding.
        read = torch.softmax(scores, dim=2) * pair_mask  # alpha_i, over slots
        write = torch.softmax(scores, dim=1) * pair_mask  # beta_i, over tokens

        # [alpha_1 V; ...; alpha_m V] W^O = sum_i alpha_i (V W^O_i), with W^O_i the i-th block of rows of W^O.
        read_maps = self.read_out.weight.T.reshape(num_views, self.node_dim, self.text_dim)
        read_maps = read_maps.permute(1, 0, 2).reshape(self.node_dim, num_views * self.text_dim)
        values_in_text = _gather(nodes @ read_maps, slot_tails)  # V in the text space, [B, T, m d_text]
        new_tokens = tokens + torch.bmm(
            read.reshape(batch, length, -1), values_in_text.reshape(batch, slots * num_views, self.text_dim)
        )

        written = torch.bmm(write.reshape(batch, length, -1).transpose(1, 2), tokens)  # [B, T m, d_text]
        candidate = self.write_out(written.reshape(batch, slots, num_views * self.text_dim))  # V~: [B, T, d_node]
        gate = torch.sigmoid(self.gate_new(candidate) + _gather(self.gate_old(nodes), slot_tails))  # z
        gate = gate * slot_mask[..., None]
        new_values = gate * candidate + (1 - gate) * values

        new_nodes = scatter_slot_values(nodes, new_values.flatten(0, 1), slot_tails.flatten(), slot_mask.flatten())
        return MemoryOutput(new_tokens, new_nodes, read.permute(0, 3, 1, 2), write.permute(0, 3, 1, 2), gate)


def _gather(rows: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``rows[index]`` for ``rows: [N, d]`` and ``index: [B, T]``, by ``index_select`` (its backward is an
    ``index_add``, several times faster on a CPU than advanced indexing's)."""
    return rows.index_select(0, index.reshape(-1)).reshape(*index.shape, rows.shape[-1])


def scatter_slot_values(
    nodes: torch.Tensor, values: torch.Tensor, tails: torch.Tensor, mask: torch.Tensor | None = None
) -> torch.Tensor:
    """Nodes with the mean of the slot values whose tail they are; other nodes unchanged.

    ``nodes: [num_nodes, d]``, ``values: [num_slots, d]``, ``tails: [num_slots]``; ``mask: [num_slots]``
    (default all true) leaves the false slots (padding) out of the mean.
    """
    weight = (torch.ones_like(tails) if mask is None else mask).to(values.dtype)
    total = scatter(values * weight[:, None], tails, dim=0, dim_size=nodes.shape[0], reduce="sum")
    count = scatter(weight, tails, dim=0, dim_size=nodes.shape[0], reduce="sum")[:, None]
    return torch.where(count > 0, (total / count.clamp(min=1)).to(nodes.dtype), nodes)
