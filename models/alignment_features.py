"""Alignment features of problem pairs, as numbers a model reads (``parsers.compare``), computed once per pair.

``alignment_features(against, pairs)`` gives the ``[n, F]`` matrix of the named features
of ``(text_a, text_b)`` pairs: ``align_problems`` where ``text_b`` is a ``"problem"``
(QRC, and SQR's query and candidate), ``align_solution`` where it is a ``"solution"``
(QAM's question and solution); each task says which (``TaskHead.aligned_with``). Problems are
parsed through the graph cache, and each pair's row is kept for the life of the
process, so an epoch after the first, or the dev pass, computes nothing again.
Both the alignment model (``models.alignment_model``) and the neural pair heads that read
the alignment next to their pair vector (``TaskConfig.alignment``) use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from mathgraph.parsers.compare import ALIGNMENT_FEATURES, align_problems
from mathgraph.parsers.solution import SOLUTION_FEATURES, align_solution

AGAINST = ("problem", "solution")  # what the second text of a pair is
_ROWS: dict[tuple[str, str, str], np.ndarray] = {}  # (against, text_a, text_b) -> features, for this process


def feature_names(against: str) -> tuple[str, ...]:
    """The named features of pairs whose second text is a ``"problem"`` or a ``"solution"``."""
    _check_against(against)
    return SOLUTION_FEATURES if against == "solution" else ALIGNMENT_FEATURES


def alignment_features(
    against: str, pairs: Sequence[tuple[str, str]], parse: Callable | None = None, show_progress: bool = False
) -> np.ndarray:
    """``[n, F]`` float64 features of ``(text_a, text_b)`` pairs whose ``text_b`` is ``against`` (module docstring).

    ``parse`` maps a list of texts to graphs (default: ``parsers.graph_cache.parse_cached``). A pair that
    is not two non-empty texts raises ``ValueError``.
    """
    _check_against(against)
    solution = against == "solution"
    pairs = [tuple(p) for p in pairs]
    if any(len(p) != 2 or not all(isinstance(t, str) and t.strip() for t in p) for p in pairs):
        raise ValueError("alignment features need (text_a, text_b) pairs of non-empty texts")
    missing = sorted({p for p in pairs if (against, *p) not in _ROWS})
    if missing:
        if parse is None:
            from mathgraph.parsers.graph_cache import parse_cached

            parse = lambda texts: parse_cached(texts, show_progress=show_progress)  # noqa: E731
        # a solution is read as text (align_solution); only problems are parsed
        texts = sorted({a for a, _ in missing} | (set() if solution else {b for _, b in missing}))
        graphs = dict(zip(texts, parse(texts)))
        for a, b in missing:
            alignment = align_solution(graphs[a], b) if solution else align_problems(graphs[a], graphs[b])
            _ROWS[(against, a, b)] = np.asarray(alignment.feature_vector(), dtype=np.float64)
    width = len(feature_names(against))
    return np.stack([_ROWS[(against, *p)] for p in pairs]) if pairs else np.zeros((0, width))


def _check_against(against: str) -> None:
    if against not in AGAINST:
        raise ValueError(f"the second text of a pair is one of {AGAINST}, not {against!r}")


__all__ = ["alignment_features", "feature_names", "AGAINST"]
