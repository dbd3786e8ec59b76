"""torch's CPU threads: how many cores this process may use, and setting them once for a run or a prediction."""

from __future__ import annotations

import os


def available_cores() -> int:
    """CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def configure_threads(threads: int | None) -> int:
    """Set torch's CPU threads to ``threads`` (default: ``available_cores()``) where PyTorch is installed; returns
    the number set."""
    wanted = threads or available_cores()
    if wanted < 1:
        raise ValueError(f"threads must be >= 1, got {wanted}")
    try:
        import torch
    except ImportError:  # an install without mathgraph[train]: ONNX Runtime only, which sets its own threads
        return wanted

    if torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)
    return wanted


__all__ = ["available_cores", "configure_threads"]
