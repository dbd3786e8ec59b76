"""Graph encoder of COMUS (Eq. 1): node label embeddings and a stack of PyG ``GATConv`` layers.

Relation embeddings are fed to every attention layer as edge features, every
edge is seen in both directions (``MathSyntaxGraph.to_pyg`` adds the typed
reverse edges), and each layer is wrapped in a residual connection and layer
norm so that six layers train as easily as one. Every node also attends to
itself, through a self-loop whose edge feature is a learned "self" relation;
the loops are added once per forward rather than by each ``GATConv`` (which
also costs a third of the layer's time).

``GATConv`` projects every edge's features to ``heads x head_dim`` numbers only to
reduce them to one attention logit per head; ``FoldedEdgeGATConv`` folds that
projection into the attention vector first (exact: the projection has no bias),
so an edge costs ``edge_dim x heads`` multiplications instead of
``edge_dim x heads x head_dim``. The parameters are ``GATConv``'s own.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.nn import GATConv
from torch_geometric.utils import softmax


class FoldedEdgeGATConv(GATConv):
    """``GATConv`` (with ``edge_dim``) whose edge term ``(W_e e) . a_e`` is computed as ``e . (W_e^T a_e)``."""

    def edge_update(
        self,
        alpha_j: torch.Tensor,
        alpha_i: torch.Tensor | None,
        edge_attr: torch.Tensor | None,
        index: torch.Tensor,
        ptr: torch.Tensor | None,
        dim_size: int | None,
    ) -> torch.Tensor:
        alpha = alpha_j if alpha_i is None else alpha_j + alpha_i
        if index.numel() == 0:
            return alpha
        if edge_attr is not None and self.lin_edge is not None:
            weight = self.lin_edge.weight.view(self.heads, self.out_channels, -1)  # [H, C, edge_dim]
            folded = torch.einsum("hck,hc->kh", weight, self.att_edge[0])  # [edge_dim, H]
            # shape[0], not len(): len() is a Python int, which an ONNX export would fix at the traced size
            alpha = alpha + edge_attr.reshape(edge_attr.shape[0], -1) @ folded
        alpha = F.leaky_relu(alpha, self.negative_slope)
        alpha = softmax(alpha, index, ptr, dim_size)
        return F.dropout(alpha, p=self.dropout, training=self.training)


class GraphAttentionLayer(nn.Module):
    """``x + dropout(elu(GATConv(x, edge_index, edge_attr)))`` followed by layer norm.

    ``hidden = heads * head_dim``; ``x: [num_nodes, hidden]``, ``edge_attr: [num_edges, edge_dim]``;
    ``edge_index`` must already hold the self-loops (``GraphEncoder`` adds them).
    """

    def __init__(self, hidden: int, heads: int, edge_dim: int, dropout: float = 0.1):
        super().__init__()
        if hidden % heads:
            raise ValueError(f"hidden size {hidden} is not a multiple of {heads} heads")
        self.attention = FoldedEdgeGATConv(
            hidden, hidden // heads, heads=heads, edge_dim=edge_dim, dropout=dropout, add_self_loops=False
        )
        self.norm = nn.LayerNorm(hidden)
        self.dropout = nn.Dropout(dropout)

    def reset_parameters(self) -> None:
        self.attention.reset_parameters()
        self.norm.reset_parameters()

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor) -> torch.Tensor:
        update = self.attention(x, edge_index, edge_attr)
        return self.norm(x + self.dropout(nn.functional.elu(update)))


class GraphEncoder(nn.Module):
    """Node label embedding, relation embedding and ``num_layers`` graph attention layers.

    Args:
        num_labels: size of the node-label vocabulary.
        num_relations: size of the relation vocabulary (forward and reverse relations).
        hidden: node state size (COMUS: 12 heads x 64 = 768 beside a 768-wide BERT).
        heads: attention heads per layer.
        num_layers: number of ``GraphAttentionLayer``.
        relation_dim: size of the relation embeddings (edge features, memory keys).
        num_kinds: number of node kinds (root, word, math, formula), embedded and added.
    """

    def __init__(
        self,
        num_labels: int,
        num_relations: int,
        hidden: int = 768,
        heads: int = 12,
        num_layers: int = 6,
        relation_dim: int = 64,
        num_kinds: int = 4,
        dropout: float = 0.1,
        padding_idx: int = 0,
    ):
        super().__init__()
        self.hidden = hidden
        self.label_embedding = nn.Embedding(num_labels, hidden, padding_idx=padding_idx)
        self.kind_embedding = nn.Embedding(num_kinds, hidden)
        self.relation_embedding = nn.Embedding(num_relations, relation_dim, padding_idx=padding_idx)
        self.self_loop_embedding = nn.Parameter(torch.randn(relation_dim))
        self.embedding_norm = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList(
            GraphAttentionLayer(hidden, heads, relation_dim, dropout) for _ in range(num_layers)
        )

    def embed(self, labels: torch.Tensor, kinds: torch.Tensor) -> torch.Tensor:
        """Initial node states ``[num_nodes, hidden]`` from label and kind ids ``[num_nodes]``."""
        return self.embedding_norm(self.label_embedding(labels) + self.kind_embedding(kinds))

    def run_layers(
        self, x: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor, layers: range
    ) -> torch.Tensor:
        """Apply the layers numbered ``layers`` (0-based) to node states ``x``."""
        loops = torch.arange(x.shape[0], device=x.device)
        edge_index = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
        edge_attr = torch.cat(
            [self.relation_embedding(edge_type), self.self_loop_embedding.expand(x.shape[0], -1)], dim=0
        )
        for index in layers:
            x = self.layers[index](x, edge_index, edge_attr)
        return x

    def forward(
        self, labels: torch.Tensor, kinds: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor
    ) -> torch.Tensor:
        """Node states ``[num_nodes, hidden]`` after all layers."""
        return self.run_layers(self.embed(labels, kinds), edge_index, edge_type, range(len(self.layers)))
