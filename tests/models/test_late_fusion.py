"""Late fusion of neural and TF-IDF predictions, against hand computation."""

import math

import numpy as np
import pytest

from mathgraph.models.late_fusion import HybridPredictor, fuse, fuse_probabilities, fuse_scores
from mathgraph.tasks.metrics import accuracy_metric
from mathgraph.tasks.training.late_fusion import choose_weight


def test_probabilities_are_a_weighted_product_renormalised():
    result = fuse_probabilities({"a": 0.8, "b": 0.2}, {"a": 0.4, "b": 0.6}, 0.5)
    a, b = math.sqrt(0.8 * 0.4), math.sqrt(0.2 * 0.6)
    assert result["probabilities"]["a"] == pytest.approx(a / (a + b))
    assert sum(result["probabilities"].values()) == pytest.approx(1.0)
    assert result["label"] == "a"
    # the ends are each model alone
    assert fuse_probabilities({"a": 0.8, "b": 0.2}, {"a": 0.4, "b": 0.6}, 0.0)["probabilities"]["a"] == pytest.approx(
        0.8
    )
    assert fuse_probabilities({"a": 0.8, "b": 0.2}, {"a": 0.4, "b": 0.6}, 1.0)["label"] == "b"


def test_a_label_the_sparse_model_never_saw_stays_finite():
    result = fuse_probabilities({"a": 0.5, "b": 0.5}, {"a": 1.0}, 0.3)
    assert result["label"] == "a" and 0 < result["probabilities"]["b"] < 1e-3


def test_scores_are_standardised_per_query_then_mixed():
    fused = fuse_scores([1.0, 2.0, 3.0], [10.0, 10.0, 40.0], 0.25)
    z_dense = np.array([-1.0, 0.0, 1.0]) / np.std([-1.0, 0.0, 1.0])
    z_sparse = (np.array([10.0, 10.0, 40.0]) - 20.0) / np.std([10.0, 10.0, 40.0])
    assert np.allclose(fused, 0.75 * z_dense + 0.25 * z_sparse)
    assert np.allclose(fuse_scores([1.0, 1.0], [0.0, 2.0], 0.0), [0.0, 0.0])  # equal scores: no preference
    with pytest.raises(ValueError, match="2 dense scores but 3"):
        fuse_scores([1.0, 2.0], [1.0, 2.0, 3.0], 0.5)


def test_fuse_keeps_the_result_format_and_checks_the_weight():
    ranked = fuse({"scores": [0.1, 0.9], "ranking": [1, 0]}, {"scores": [5.0, 1.0], "ranking": [0, 1]}, 0.9)
    assert ranked["ranking"] == [0, 1]
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fuse({"probabilities": {"a": 1.0}}, {"probabilities": {"a": 1.0}}, 1.5)


def test_choose_weight_picks_the_best_dev_weight_and_the_smallest_of_ties():
    gold = ["a", "b"]
    neural = [{"probabilities": {"a": 0.9, "b": 0.1}}, {"probabilities": {"a": 0.6, "b": 0.4}}]
    sparse = [{"probabilities": {"a": 0.6, "b": 0.4}}, {"probabilities": {"a": 0.1, "b": 0.9}}]
    weight, tried = choose_weight(neural, sparse, accuracy_metric(gold), (0.0, 0.5, 1.0))
    assert tried == {0.0: 0.5, 0.5: 1.0, 1.0: 1.0}
    assert weight == 0.5  # the smaller of the two best
    weight, _ = choose_weight(neural, neural, accuracy_metric(["a", "a"]), (0.0, 0.5, 1.0))
    assert weight == 0.0


class _Fixed:
    def __init__(self, results):
        self.results = results

    def predict(self, inputs, batch_size=32):
        return self.results[: len(list(inputs))]


def test_hybrid_predictor_fuses_both_models_in_input_order():
    neural = _Fixed([{"probabilities": {"x": 0.7, "y": 0.3}}, {"probabilities": {"x": 0.2, "y": 0.8}}])
    sparse = _Fixed([{"probabilities": {"x": 0.1, "y": 0.9}}, {"probabilities": {"x": 0.3, "y": 0.7}}])
    results = HybridPredictor(neural, sparse, 0.5).predict(["p", "q"])
    assert [r["label"] for r in results] == ["y", "y"]
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        HybridPredictor(neural, sparse, -0.1)
