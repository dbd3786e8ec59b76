"""Metrics against values computed by hand."""

import math

import pytest

from tasks.metrics import classification_metrics, hit_rate_at_k, ndcg_at_k, ranking_metrics

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


def test_ndcg_relevant_at_ranks_2_and_4_of_6():
    scores = [[6, 5, 4, 3, 2, 1]]
    relevant = [[1, 3]]  # ranks 2 and 4
    assert ndcg_at_k(scores, relevant, 3) == pytest.approx(L3 / (1 + L3))
    assert ndcg_at_k(scores, relevant, 1) == 0.0
    assert ndcg_at_k(scores, relevant, 5) == pytest.approx((L3 + 1 / math.log2(5)) / (1 + L3))
    assert hit_rate_at_k(scores, relevant, 1) == 0.0
    assert hit_rate_at_k(scores, relevant, 2) == 1.0


def test_scores_order_not_list_order():
    # the relevant candidate is last in the list but has the highest score
    assert ndcg_at_k([[0.1, 0.2, 0.9]], [[2]], 1) == 1.0
    assert hit_rate_at_k([[0.1, 0.2, 0.9]], [[2]], 1) == 1.0


def test_mean_over_lists_and_ranking_metrics_keys():
    scores = [[3, 2, 1], [3, 2, 1]]
    relevant = [[0], [2]]  # rank 1 in the first list, rank 3 in the second
    metrics = ranking_metrics(scores, relevant)
    assert set(metrics) == {"hr@1", "ndcg@1", "hr@3", "ndcg@3", "hr@5", "ndcg@5", "n"}
    assert metrics["n"] == 2
    assert metrics["hr@1"] == 0.5
    assert metrics["hr@3"] == 1.0
    assert metrics["ndcg@3"] == pytest.approx((1 + 1 / math.log2(4)) / 2)
    # k larger than the list covers the whole list
    assert metrics["ndcg@5"] == metrics["ndcg@3"]
    assert metrics["hr@5"] == 1.0


def test_ideal_dcg_capped_at_k():
    # 3 relevant items, all ranked first: perfect at every k, including k < #relevant
    scores = [[5, 4, 3, 2, 1]]
    for k in (1, 2, 3, 5):
        assert ndcg_at_k(scores, [[0, 1, 2]], k) == pytest.approx(1.0)


def test_ties_are_pessimistic_and_deterministic():
    # all scores equal: the relevant item goes after every non-relevant one, whatever its position
    for relevant in ([0], [1], [3]):
        assert hit_rate_at_k([[1.0] * 4], [relevant], 3) == 0.0
        assert ndcg_at_k([[1.0] * 4], [relevant], 4) == pytest.approx(1 / math.log2(5))
    # a tie between one relevant and one non-relevant at the top: relevant is second
    assert ndcg_at_k([[2.0, 2.0, 0.0]], [[0]], 2) == pytest.approx(L3)
    # strictly higher score still wins
    assert ndcg_at_k([[2.0, 1.0, 1.0]], [[0]], 1) == 1.0


def test_ranking_errors():
    with pytest.raises(ValueError, match="2 score lists but 1"):
        ranking_metrics([[1, 2], [1, 2]], [[0]])
    with pytest.raises(ValueError, match="empty"):
        ranking_metrics([], [])
    with pytest.raises(ValueError, match="no relevant"):
        hit_rate_at_k([[1, 2]], [[]], 1)
    with pytest.raises(ValueError, match="out of range"):
        ndcg_at_k([[1, 2]], [[2]], 1)
    with pytest.raises(ValueError, match="k must be"):
        ndcg_at_k([[1, 2]], [[0]], 0)
    with pytest.raises(ValueError, match="non-empty"):
        ndcg_at_k([[]], [[0]], 1)
