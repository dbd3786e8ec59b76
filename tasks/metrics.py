"""Evaluation metrics shared by every task: accuracy and macro-F1 for classification; HR@k, NDCG@k and MAP
for ranking.

Ranking metrics take one score array per candidate list and one graded relevance array per list (an integer
0, 1 or 2 per candidate, as in the SQR task files, ``tasks.data``):

- NDCG@k uses the gains ``2^rel - 1`` (0, 1, 3): DCG@k = sum over ranks i = 1..k of gain_i / log2(i + 1),
  divided by the ideal DCG@k of the same gains sorted in descending order.
- MAP and HR@k count a candidate of relevance 2 (``RELEVANT``) as relevant and every other as not.

Every list needs at least one candidate of relevance 2.

Ranking and ties: candidates are sorted by descending score; candidates with equal scores are ordered
pessimistically, lower relevance before higher (then by candidate index), so a model can never gain from a
tie and a constant scorer gets the worst possible ranking instead of whatever the candidate order in the file
happens to give. The result is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


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
    from sklearn.metrics import accuracy_score, f1_score  # here: importing scikit-learn costs ~1 s of start-up

    labels = None if labels is None else list(labels)
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "macro_f1": float(f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)),
        "n": len(y_true),
    }


RELEVANT = 2  # the relevance grade that MAP and HR@k count as relevant
MAX_RELEVANCE = 2


def _ranked_relevance(scores_per_list, relevance_per_list) -> list[np.ndarray]:
    """For each list, its graded relevance in ranked order (best first, ties pessimistic)."""
    scores_per_list, relevance_per_list = list(scores_per_list), list(relevance_per_list)
    if len(scores_per_list) != len(relevance_per_list):
        raise ValueError(f"{len(scores_per_list)} score lists but {len(relevance_per_list)} relevance lists")
    if not scores_per_list:
        raise ValueError("cannot compute ranking metrics on empty input")
    ranked = []
    for position, (scores, relevance) in enumerate(zip(scores_per_list, relevance_per_list)):
        scores = np.asarray(scores, dtype=float)
        if scores.ndim != 1 or scores.size == 0:
            raise ValueError(f"list {position}: scores must be a non-empty 1-D sequence")
        if np.isnan(scores).any():
            raise ValueError(f"list {position}: scores contain NaN")
        relevance = np.asarray(relevance)
        if relevance.shape != scores.shape:
            raise ValueError(f"list {position}: {relevance.size} relevance grades for {scores.size} candidates")
        if relevance.dtype.kind not in "iu" or relevance.min() < 0 or relevance.max() > MAX_RELEVANCE:
            raise ValueError(f"list {position}: relevance must be integers 0..{MAX_RELEVANCE}")
        if not (relevance == RELEVANT).any():
            raise ValueError(f"list {position} has no relevant items (relevance {RELEVANT})")
        # np.lexsort sorts by the last key first: descending score, then lower relevance first, then index.
        order = np.lexsort((np.arange(scores.size), relevance, -scores))
        ranked.append(relevance[order].astype(int))
    return ranked


def _check_k(k: int) -> None:
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _hit(ranked: np.ndarray, k: int) -> float:
    return float((ranked[:k] == RELEVANT).any())


def _ndcg(ranked: np.ndarray, k: int) -> float:
    gains = 2.0**ranked - 1
    discounts = 1.0 / np.log2(np.arange(2, min(k, ranked.size) + 2))
    dcg = float((gains[:k] * discounts).sum())
    ideal = float((np.sort(gains)[::-1][:k] * discounts).sum())
    return dcg / ideal


def _average_precision(ranked: np.ndarray) -> float:
    relevant = ranked == RELEVANT
    precision_at_rank = np.cumsum(relevant) / np.arange(1, ranked.size + 1)
    return float(precision_at_rank[relevant].mean())


def hit_rate_at_k(scores_per_list, relevance_per_list, k: int) -> float:
    """HR@k: the fraction of lists with at least one candidate of relevance 2 among the top k (COMUS's hit
    ratio). A k larger than a list covers the whole list."""
    _check_k(k)
    ranked = _ranked_relevance(scores_per_list, relevance_per_list)
    return float(np.mean([_hit(r, k) for r in ranked]))


def ndcg_at_k(scores_per_list, relevance_per_list, k: int) -> float:
    """Mean NDCG@k with graded relevance and gains ``2^rel - 1``.

    DCG@k = sum over ranks i = 1..k of (2^rel_i - 1) / log2(i + 1); the ideal DCG@k takes the same gains sorted
    in descending order. A k larger than a list covers the whole list.
    """
    _check_k(k)
    ranked = _ranked_relevance(scores_per_list, relevance_per_list)
    return float(np.mean([_ndcg(r, k) for r in ranked]))


def mean_average_precision(scores_per_list, relevance_per_list) -> float:
    """MAP: the mean over lists of the average precision, relevance 2 counting as relevant.

    AP = (1 / R) * sum over the ranks i of the R relevant candidates of (relevant candidates in the top i) / i,
    over the whole list (no cut-off).
    """
    ranked = _ranked_relevance(scores_per_list, relevance_per_list)
    return float(np.mean([_average_precision(r) for r in ranked]))


def ranking_metrics(scores_per_list, relevance_per_list, ks: Sequence[int] = (1, 3, 5)) -> dict:
    """``hr@k`` and ``ndcg@k`` for every k in ``ks``, ``map`` and ``n`` (the number of lists)."""
    for k in ks:
        _check_k(k)
    ranked = _ranked_relevance(scores_per_list, relevance_per_list)
    metrics = {}
    for k in ks:
        metrics[f"hr@{k}"] = float(np.mean([_hit(r, k) for r in ranked]))
        metrics[f"ndcg@{k}"] = float(np.mean([_ndcg(r, k) for r in ranked]))
    metrics["map"] = float(np.mean([_average_precision(r) for r in ranked]))
    metrics["n"] = len(ranked)
    return metrics


def accuracy_metric(gold: Sequence) -> Callable[[list[dict]], float]:
    """Accuracy of results against ``gold`` labels (``tasks.training.late_fusion.choose_weight``, ``Task.result_metric``)."""
    return lambda results: float(np.mean([r["label"] == g for r, g in zip(results, gold, strict=True)]))


def ndcg_metric(relevance: Sequence[Sequence[int]], k: int = 3) -> Callable[[list[dict]], float]:
    """Mean NDCG@k of ranking results against graded ``relevance`` (``tasks.training.late_fusion.choose_weight``, ``Task.result_metric``)."""
    return lambda results: ranking_metrics([r["scores"] for r in results], relevance, ks=(k,))[f"ndcg@{k}"]
