"""Metrics against values computed by hand."""

import math

import pytest

from mathgraph.tasks.metrics import (
    classification_metrics,
    hit_rate_at_k,
    mean_average_precision,
    ndcg_at_k,
    ranking_metrics,
)

L3 = 1 / math.log2(3)  # discount at rank 2


def test_classification_three_classes_by_hand():
    y_true = ["a", "a", "a", "b", "b", "c"]
    y_pred = ["a", "a", "b", "b", "c", "c"]
    # a: P=2/2 R=2/3 F1=0.8; b: P=1/2 R=1/2 F1=0.5; c: P=1/2 R=1/1 F1=2/3
    metrics = classification_metrics(y_true, y_pred)
    assert metrics["accuracy"] == pytest.approx(4 / 6)
    assert metrics["macro_f1"] == pytest.approx((0.8 + 0.5 + 2 / 3) / 3)
    assert metrics["n"] == 6


def test_classification_listed_label_never_seen_counts_as_zero():
    metrics = classification_metrics(["a", "b"], ["a", "b"], labels=["a", "b", "c"])
    assert metrics["accuracy"] == 1.0
    assert metrics["macro_f1"] == pytest.approx(2 / 3)


def test_classification_errors():
    with pytest.raises(ValueError, match="y_pred has 1"):
        classification_metrics(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="empty"):
        classification_metrics([], [])


def test_graded_list_by_hand():
    # relevance [2, 0, 1, 2]; scores rank the candidates 0 (rel 2), 1 (rel 0), 3 (rel 2), 2 (rel 1)
    scores, relevance = [[0.9, 0.8, 0.3, 0.5]], [[2, 0, 1, 2]]
    # gains 2^rel - 1 in ranked order: 3, 0, 3, 1; ideal order 3, 3, 1, 0
    dcg3 = 3 / 1 + 0 / math.log2(3) + 3 / 2  # = 4.5
    ideal3 = 3 / 1 + 3 / math.log2(3) + 1 / 2  # = 5.39279...
    assert ndcg_at_k(scores, relevance, 3) == pytest.approx(4.5 / 5.392789, rel=1e-6)
    assert ndcg_at_k(scores, relevance, 3) == pytest.approx(dcg3 / ideal3)
    assert ndcg_at_k(scores, relevance, 1) == 1.0  # 3 / 3
    # k larger than the list: rank 4 adds 1 / log2(5), the ideal adds 0
    assert ndcg_at_k(scores, relevance, 5) == pytest.approx((4.5 + 1 / math.log2(5)) / ideal3)
    assert ndcg_at_k(scores, relevance, 5) == pytest.approx(0.914309, rel=1e-6)
    # relevance-2 items at ranks 1 and 3: AP = (1/1 + 2/3) / 2
    assert mean_average_precision(scores, relevance) == pytest.approx(5 / 6)
    assert hit_rate_at_k(scores, relevance, 1) == 1.0


def test_relevance_1_is_a_gain_but_not_a_hit():
    scores, relevance = [[6, 5, 4, 3, 2, 1]], [[1, 2, 0, 0, 0, 0]]  # ranked gains 1, 3, 0, ...
    assert hit_rate_at_k(scores, relevance, 1) == 0.0
    assert hit_rate_at_k(scores, relevance, 2) == 1.0
    assert ndcg_at_k(scores, relevance, 1) == pytest.approx(1 / 3)
    assert ndcg_at_k(scores, relevance, 2) == pytest.approx((1 + 3 * L3) / (3 + L3))
    assert mean_average_precision(scores, relevance) == pytest.approx(1 / 2)  # the only 2 is at rank 2


def test_scores_order_not_list_order():
    # the relevant candidate is last in the list but has the highest score
    assert ndcg_at_k([[0.1, 0.2, 0.9]], [[0, 0, 2]], 1) == 1.0
    assert hit_rate_at_k([[0.1, 0.2, 0.9]], [[0, 0, 2]], 1) == 1.0


def test_mean_over_lists_and_ranking_metrics_keys():
    scores = [[3, 2, 1], [3, 2, 1]]
    relevance = [[2, 0, 0], [0, 0, 2]]  # rank 1 in the first list, rank 3 in the second
    metrics = ranking_metrics(scores, relevance)
    assert set(metrics) == {"hr@1", "ndcg@1", "hr@3", "ndcg@3", "hr@5", "ndcg@5", "map", "n"}
    assert metrics["n"] == 2
    assert metrics["hr@1"] == 0.5
    assert metrics["hr@3"] == 1.0
    assert metrics["ndcg@3"] == pytest.approx((1 + 1 / math.log2(4)) / 2)
    assert metrics["map"] == pytest.approx((1 + 1 / 3) / 2)
    # k larger than the list covers the whole list
    assert metrics["ndcg@5"] == metrics["ndcg@3"]
    assert metrics["hr@5"] == 1.0
    assert ranking_metrics(scores, relevance, ks=(2,)).keys() == {"hr@2", "ndcg@2", "map", "n"}


def test_ideal_dcg_capped_at_k():
    # 3 relevant items, all ranked first: perfect at every k, including k < #relevant
    scores = [[5, 4, 3, 2, 1]]
    for k in (1, 2, 3, 5):
        assert ndcg_at_k(scores, [[2, 2, 2, 0, 0]], k) == pytest.approx(1.0)
        assert ndcg_at_k(scores, [[2, 2, 1, 1, 0]], k) == pytest.approx(1.0)
    assert mean_average_precision(scores, [[2, 2, 2, 0, 0]]) == 1.0


def test_ties_are_pessimistic_and_deterministic():
    # all scores equal: lower relevance first, whatever the positions (ranked 0, 0, 1, 2)
    for relevance in ([2, 1, 0, 0], [0, 0, 1, 2], [1, 0, 2, 0]):
        assert hit_rate_at_k([[1.0] * 4], [relevance], 3) == 0.0
        assert ndcg_at_k([[1.0] * 4], [relevance], 4) == pytest.approx((1 / 2 + 3 / math.log2(5)) / (3 + L3))
        assert mean_average_precision([[1.0] * 4], [relevance]) == pytest.approx(1 / 4)
    # a tie between relevance 2 and 1 at the top: the 1 goes first
    assert ndcg_at_k([[2.0, 2.0, 0.0]], [[2, 1, 0]], 1) == pytest.approx(1 / 3)
    assert hit_rate_at_k([[2.0, 2.0, 0.0]], [[2, 1, 0]], 1) == 0.0
    # strictly higher score still wins
    assert ndcg_at_k([[2.0, 1.0, 1.0]], [[2, 0, 0]], 1) == 1.0


def test_ranking_errors():
    with pytest.raises(ValueError, match="2 score lists but 1"):
        ranking_metrics([[1, 2], [1, 2]], [[2, 0]])
    with pytest.raises(ValueError, match="empty"):
        ranking_metrics([], [])
    with pytest.raises(ValueError, match="no relevant items"):
        hit_rate_at_k([[1, 2]], [[1, 0]], 1)
    with pytest.raises(ValueError, match="1 relevance grades for 2 candidates"):
        ndcg_at_k([[1, 2]], [[2]], 1)
    with pytest.raises(ValueError, match="integers 0..2"):
        ndcg_at_k([[1, 2]], [[3, 2]], 1)
    with pytest.raises(ValueError, match="integers 0..2"):
        mean_average_precision([[1, 2]], [[2.0, 0.0]])
    with pytest.raises(ValueError, match="k must be"):
        ndcg_at_k([[1, 2]], [[2, 0]], 0)
    with pytest.raises(ValueError, match="non-empty"):
        ndcg_at_k([[]], [[]], 1)
