"""Evaluation metrics shared by every task: accuracy and macro-F1 for classification, HR@k and NDCG@k for ranking.

Ranking metrics take one score array per candidate list and the indices of the relevant candidates in that
list (binary relevance), as in the SQR task files.

Ranking and ties: candidates are sorted by descending score; candidates with equal scores are ordered
pessimistically, non-relevant before relevant (then by candidate index), so a model can never gain from a tie and
a constant scorer gets the worst possible ranking instead of whatever the candidate order in the file happens to
give. The result is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import accuracy_score, f1_score


def classification_metrics(y_true: Sequence, y_pred: Sequence, labels: Sequence | None = None) -> dict:
    """Accuracy and macro-F1 (scikit-learn) over `labels` (default: every label seen in y_true or y_pred).

    Macro-F1 averages the per-class F1 with equal weight; a class that is never predicted and never true
    contributes 0 only when it is listed in `labels` (zero_division=0).
    """
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} items but y_pred has {len(y_pred)}")
    if not y_true:
        raise ValueError("cannot compute classification metrics on empty input")
    labels = None if labels is None else list(labels)
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "macro_f1": float(f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)),
        "n": len(y_true),
    }


def _ranked_relevance(scores_per_list, relevant_per_list) -> list[np.ndarray]:
    """For each list, a 0/1 array of relevance in ranked order (best first, ties pessimistic)."""
    scores_per_list, relevant_per_list = list(scores_per_list), list(relevant_per_list)
    if len(scores_per_list) != len(relevant_per_list):
        raise ValueError(f"{len(scores_per_list)} score lists but {len(relevant_per_list)} relevance lists")
    if not scores_per_list:
        raise ValueError("cannot compute ranking metrics on empty input")
    ranked = []
    for position, (scores, relevant) in enumerate(zip(scores_per_list, relevant_per_list)):
        scores = np.asarray(scores, dtype=float)
        if scores.ndim != 1 or scores.size == 0:
            raise ValueError(f"list {position}: scores must be a non-empty 1-D sequence")
        if np.isnan(scores).any():
            raise ValueError(f"list {position}: scores contain NaN")
        relevant = {int(i) for i in relevant}
        if not relevant:
            raise ValueError(f"list {position} has no relevant items")
        if min(relevant) < 0 or max(relevant) >= scores.size:
            raise ValueError(f"list {position}: relevant index out of range for {scores.size} candidates")
        is_relevant = np.zeros(scores.size, dtype=int)
        is_relevant[list(relevant)] = 1
        # np.lexsort sorts by the last key first: descending score, then non-relevant first, then index.
        order = np.lexsort((np.arange(scores.size), is_relevant, -scores))
        ranked.append(is_relevant[order])
    return ranked


def _check_k(k: int) -> None:
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _hit(ranked: np.ndarray, k: int) -> float:
    return float(ranked[:k].any())


def _ndcg(ranked: np.ndarray, k: int) -> float:
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    top = ranked[:k]
    dcg = float((top * discounts[: top.size]).sum())
    ideal = float(discounts[: min(int(ranked.sum()), k)].sum())
    return dcg / ideal


def hit_rate_at_k(scores_per_list, relevant_per_list, k: int) -> float:
    """HR@k: the fraction of lists with at least one relevant item among the top k (COMUS's hit ratio).

    A k larger than a list covers the whole list.
    """
    _check_k(k)
    ranked = _ranked_relevance(scores_per_list, relevant_per_list)
    return float(np.mean([_hit(r, k) for r in ranked]))


def ndcg_at_k(scores_per_list, relevant_per_list, k: int) -> float:
    """Mean NDCG@k with binary relevance.

    DCG@k = sum over ranks i = 1..k of rel_i / log2(i + 1); the ideal DCG puts all min(#relevant, k) relevant
    items first. A k larger than a list covers the whole list.
    """
    _check_k(k)
    ranked = _ranked_relevance(scores_per_list, relevant_per_list)
    return float(np.mean([_ndcg(r, k) for r in ranked]))


def ranking_metrics(scores_per_list, relevant_per_list, ks: Sequence[int] = (1, 3, 5)) -> dict:
    """`hr@k` and `ndcg@k` for every k in `ks`, plus `n` (the number of lists)."""
    for k in ks:
        _check_k(k)
    ranked = _ranked_relevance(scores_per_list, relevant_per_list)
    metrics = {}
    for k in ks:
        metrics[f"hr@{k}"] = float(np.mean([_hit(r, k) for r in ranked]))
        metrics[f"ndcg@{k}"] = float(np.mean([_ndcg(r, k) for r in ranked]))
    metrics["n"] = len(ranked)
    return metrics
