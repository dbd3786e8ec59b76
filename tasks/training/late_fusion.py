"""The weight of a late fusion (``models.late_fusion``), chosen on dev: ``choose_weight`` tries ``WEIGHTS``
and keeps the best (the smallest weight among equals)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mathgraph.models.late_fusion import WEIGHTS, fuse


def choose_weight(
    neural: Sequence[dict],
    sparse: Sequence[dict],
    metric: Callable[[list[dict]], float],
    weights: Sequence[float] = WEIGHTS,
) -> tuple[float, dict[float, float]]:
    """The weight with the best ``metric`` of the fused dev results (the smallest among equals), and the
    metric of every weight tried. ``neural`` and ``sparse`` are the two models' results on the same inputs."""
    scores = {w: metric([fuse(n, s, w) for n, s in zip(neural, sparse, strict=True)]) for w in weights}
    best = max(scores.values())
    return min(w for w, value in scores.items() if value == best), scores


__all__ = ["choose_weight"]
