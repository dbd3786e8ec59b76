"""Problem vectors from an encoder's outputs: the one pooling function, and the norm of the vectors the task
heads read.

A problem vector is the pooled text states of the text encoder alone (architecture ``bert``), or ``text ;
mean node`` with (``comus``) or without (``bert+gat``) the memory layers. The text is pooled by the mean
over its real tokens (``"mean"``, the default: all-MiniLM-L6-v2 was trained with mean pooling and its
``[CLS]`` separates problems poorly) or by ``[CLS]`` (``"cls"``; models saved before the default was the
mean keep it). ``SplitLayerNorm`` brings the two halves of a ``text ; mean node`` vector to one scale:
fresh from the GAT, the node half has about 3x the norm of the text half and would drown it.

(``ComusOutput.joint`` and ``MathEncoder.encode(mode="joint")`` are another vector, ``[CLS] ; mean node``,
the encoder's own output; task heads read the vectors made here.)
"""

from __future__ import annotations

import torch
from torch import nn

POOLINGS = ("mean", "cls")
DEFAULT_POOLING = "mean"


class SplitLayerNorm(nn.Module):
    """A LayerNorm for each half of a ``text ; mean node`` problem vector, so both reach the head at
    the same scale (each half: zero mean, unit variance per problem, then a learned gain and bias)."""

    def __init__(self, text_dim: int, graph_dim: int):
        super().__init__()
        self.text_dim = text_dim
        self.text_norm, self.graph_norm = nn.LayerNorm(text_dim), nn.LayerNorm(graph_dim)

    def forward(self, vectors: torch.Tensor) -> torch.Tensor:
        text, graph = vectors[:, : self.text_dim], vectors[:, self.text_dim :]
        return torch.cat([self.text_norm(text), self.graph_norm(graph)], dim=-1)


def vector_dim(backbone: nn.Module, architecture: str) -> int:
    """Length of the problem vectors of ``architecture`` (``comus``, ``bert+gat``: ``text ; mean node``; ``bert``: text only)."""
    return backbone.config.text_hidden if architecture == "bert" else backbone.output_dim


def pool_tokens(states: torch.Tensor, attention_mask: torch.Tensor, pooling: str = DEFAULT_POOLING) -> torch.Tensor:
    """``[B, d]`` from token states ``[B, L, d]``: ``[CLS]`` (``cls``) or the mean over real tokens (``mean``)."""
    if pooling == "cls":
        return states[:, 0]
    mask = attention_mask.unsqueeze(-1).to(states.dtype)
    return (states * mask).sum(1) / mask.sum(1).clamp(min=1)


def problem_vectors(
    backbone: nn.Module,
    architecture: str,
    inputs: dict,
    pooling: str = DEFAULT_POOLING,
    reasoning: nn.Module | None = None,
) -> torch.Tensor:
    """One vector per problem ``[N, dim]`` from ``ProblemBatch.as_model_inputs()`` (``inputs_embeds``
    may replace ``input_ids``; ``text_states``/``text_start`` a frozen prefix): the pooled text
    states (``pool_tokens``) of the text encoder alone (``bert``), or ``text ; mean node`` with
    (``comus``) or without (``bert+gat``) the memory layers. ``reasoning`` (``models.reasoning``)
    runs on the token states before they are pooled."""
    mask = inputs["attention_mask"]
    if architecture == "bert":
        states, _ = backbone.run_text_layers(
            inputs["input_ids"],
            mask,
            inputs.get("token_type_ids"),
            inputs.get("inputs_embeds"),
            states=inputs.get("text_states"),
            start=inputs.get("text_start", 0),
        )
        return pool_tokens(states if reasoning is None else reasoning(states, mask), mask, pooling)
    output = backbone(**inputs, fuse=architecture == "comus")
    states = output.token_states if reasoning is None else reasoning(output.token_states, mask)
    return torch.cat([pool_tokens(states, mask, pooling), output.mean_node], dim=-1)


__all__ = ["POOLINGS", "DEFAULT_POOLING", "pool_tokens", "problem_vectors", "vector_dim", "SplitLayerNorm"]
