"""Weights stored as what differs from a base model: how the shipped model fits in the package.

A fine-tuned model shares much with the model it started from (the packaged
MiniLM's vocabulary, a pre-trained encoder's embeddings). ``weights_delta`` keeps
only the tensors that differ from ``base``; a tensor that differs only in rows
appended after the base's (LaTeX tokens added to a vocabulary) keeps only those
rows. ``apply_delta`` rebuilds the full weights. Stored tensors can be cast to
fp16 (``dtype``); ``apply_delta`` casts them back to the base's dtype.

The file is a plain safetensors file; its metadata ``appended_rows`` (JSON)
names the tensors stored from a row on: ``{"name": first_row}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike

import torch

from mathgraph.files import apply_umask
from mathgraph.models.delta_files import APPENDED_ROWS, DELTA_NAME, merge_delta


def weights_delta(
    weights: Mapping[str, torch.Tensor], base: Mapping[str, torch.Tensor], dtype: torch.dtype | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, int]]:
    """The tensors of ``weights`` that differ from ``base``, and ``{name: first_row}`` for those stored
    from a row on (equal to ``base`` in rows ``0 .. first_row - 1``). ``dtype`` casts floating tensors."""
    stored, appended = {}, {}
    for name, tensor in weights.items():
        reference = base.get(name)
        if reference is not None and reference.shape == tensor.shape and torch.equal(reference, tensor):
            continue
        if (
            reference is not None
            and tensor.dim() >= 1
            and reference.shape[1:] == tensor.shape[1:]
            and 0 < reference.shape[0] < tensor.shape[0]
            and torch.equal(reference, tensor[: reference.shape[0]])
        ):
            appended[name] = reference.shape[0]
            tensor = tensor[reference.shape[0] :]
        if dtype is not None and tensor.is_floating_point():
            tensor = tensor.to(dtype)
        stored[name] = tensor.contiguous()
    return stored, appended


def save_delta(
    path: str | PathLike,
    weights: Mapping[str, torch.Tensor],
    base: Mapping[str, torch.Tensor],
    dtype: torch.dtype | None = torch.float16,
) -> int:
    """Write ``weights_delta(weights, base, dtype)`` to ``path``; returns the number of values stored."""
    from safetensors.torch import save_file

    stored, appended = weights_delta(weights, base, dtype)
    save_file(stored, str(path), metadata={APPENDED_ROWS: json.dumps(appended)})
    apply_umask(path)
    return sum(t.numel() for t in stored.values())


def apply_delta(base: Mapping[str, torch.Tensor], path: str | PathLike) -> dict[str, torch.Tensor]:
    """``base`` with the tensors of the delta file at ``path`` put in (cast to the base tensor's dtype).

    Raises ``CheckpointError`` for an unreadable file or a tensor that does not fit the base."""
    return merge_delta(base, path, "pt", lambda tensor, reference: tensor.to(reference.dtype), torch.cat)


__all__ = ["weights_delta", "save_delta", "apply_delta", "APPENDED_ROWS", "DELTA_NAME"]
