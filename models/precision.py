"""Autocast questions asked by the models, answered on every device (``meta``, which has no autocast, too)."""

from __future__ import annotations

from contextlib import nullcontext

import torch


def autocast_dtype(device_type: str) -> torch.dtype | None:
    """The dtype autocast computes in on ``device_type`` right now, ``None`` where it is off or does not exist."""
    if torch.amp.is_autocast_available(device_type) and torch.is_autocast_enabled(device_type):
        return torch.get_autocast_dtype(device_type)
    return None


def full_precision(device_type: str):
    """A context where autocast is off on ``device_type`` (nothing to turn off where it does not exist)."""
    if torch.amp.is_autocast_available(device_type):
        return torch.autocast(device_type=device_type, enabled=False)
    return nullcontext()
