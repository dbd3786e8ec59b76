"""torch's CPU threads: how many cores this process may use, and setting them once for a run or a prediction."""

from __future__ import annotations

import os
import sys


def available_cores() -> int:
    """CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def configure_threads(threads: int | None) -> int:
    """Set torch's CPU threads to ``threads`` (default: ``available_cores()``); returns the number set. Where torch
    is not imported yet (a prediction on ONNX Runtime never imports it, and an install without mathgraph[train]
    has none), ``OMP_NUM_THREADS`` says it instead, which torch reads when it is imported."""
    wanted = threads or available_cores()
    if wanted < 1:
        raise ValueError(f"threads must be >= 1, got {wanted}")
    torch = sys.modules.get("torch")
    if torch is None:
        os.environ["OMP_NUM_THREADS"] = str(wanted)
    elif torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)
    return wanted


__all__ = ["available_cores", "configure_threads"]
