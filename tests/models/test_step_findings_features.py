"""The step findings as alignment features of a (problem, solution) pair: values against hand counts, where
they sit among the features, and models saved before them still load and predict."""

import json
import math

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

from mathgraph.models import alignment_features as features
from mathgraph.models.alignment_features import (
    STEP_FINDING_FEATURES,
    AlignmentRows,
    alignment_features,
    available_features,
    feature_names,
    step_finding_features,
)
from mathgraph.models.alignment_model import AlignmentModel, _tree_arrays
from mathgraph.parsers.problem import ProblemParser
from mathgraph.parsers.solution import SOLUTION_FEATURES, SOLUTION_GRAPH_FEATURES
from mathgraph.parsers.solution_check import check_solution
from mathgraph.registry import load

PARSER = ProblemParser("spacy")
PROBLEM = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?"
)
RIGHT = "Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether in April and May.\n#### 72"
# the solution of a variant whose April number is 50: its numbers are not this problem's
SWAPPED = "Natalia sold 50/2 = 25 clips in May.\nNatalia sold 50+25 = 75 clips altogether in April and May.\n#### 75"


def parse(texts):
    return [PARSER.parse(t) for t in texts]


def named(row):
    return dict(zip(STEP_FINDING_FEATURES, row.tolist()))


def test_findings_of_a_right_and_a_swapped_solution_against_hand_counts():
    rows = alignment_features("solution", [(PROBLEM, RIGHT), (PROBLEM, SWAPPED)], parse, names=STEP_FINDING_FEATURES)
    right, swapped = named(rows[0]), named(rows[1])
    assert {k: v for k, v in right.items() if k != "findings_verifier_max_probability"} == dict.fromkeys(
        right.keys() - {"findings_verifier_max_probability"}, 0.0
    )
    # 50 is unexplained twice (lines 0 and 1), 48 is never used; lines 0 and 1 of the 3 lines are flagged,
    # the first at line 0: position 1/3; the answer 75 comes from 50, which no quantity of the problem gives
    assert swapped["findings_unexplained_operand"] == 2.0
    assert swapped["findings_unused_quantity"] == 1.0
    assert swapped["findings_arithmetic"] == swapped["findings_answer_mismatch"] == 0.0
    assert math.isclose(swapped["findings_share_lines_flagged"], 2 / 3)
    assert math.isclose(swapped["findings_first_error_position"], 1 / 3)
    assert swapped["findings_answer_unexplained"] == 1.0


def test_the_unused_quantity_count_stays_the_one_the_models_learnt():
    # the warning spares numbers an equation writes; the models' count is of quantities no calculation uses
    average = "The average of 23 and x is 27. What is x?"
    rows = alignment_features(
        "solution", [(average, "(23+x)/2 = 27\nx = 31\n#### 31")], parse, names=STEP_FINDING_FEATURES
    )
    assert named(rows[0])["findings_unused_quantity"] == 2.0
    assert not [
        f for f in check_solution(average, "(23+x)/2 = 27\nx = 31\n#### 31").findings if f.kind == "unused_quantity"
    ]


def test_without_a_verifier_the_probability_is_missing_and_no_suspect_is_counted():
    check = check_solution(parse([PROBLEM])[0], "48 + 7 = 55\n55 * 9 = 495\n#### 495", verifier=None)
    row = step_finding_features(check, verifier=None)
    assert math.isnan(row["findings_verifier_max_probability"])
    assert row["findings_suspect_step"] == 0.0
    # 48 is the problem's, 7 and 9 are no quantity of it: the chain to 495 is broken
    assert row["findings_unexplained_operand"] == 2.0
    assert row["findings_answer_unexplained"] == 1.0
    assert set(row) == set(STEP_FINDING_FEATURES)


def test_step_findings_are_solution_features_after_the_graphs_and_not_the_neural_heads():
    available = available_features("solution")
    assert available == SOLUTION_FEATURES + SOLUTION_GRAPH_FEATURES + STEP_FINDING_FEATURES
    assert feature_names("solution") == SOLUTION_FEATURES  # what the shipped neural heads were trained on
    assert not set(STEP_FINDING_FEATURES) & set(available_features("problem"))
    model = AlignmentModel("qam")
    assert model.features[-len(STEP_FINDING_FEATURES) :] == STEP_FINDING_FEATURES


def test_a_row_kept_before_the_step_findings_is_computed_again():
    rows = AlignmentRows()
    key = features.pair_key("solution", PROBLEM, RIGHT)
    old = len(SOLUTION_FEATURES) + len(SOLUTION_GRAPH_FEATURES)
    rows.put_many({key: np.zeros(old)})  # as a pack of training data made before held it
    row = alignment_features("solution", [(PROBLEM, RIGHT)], parse, names=available_features("solution"), rows=rows)
    assert row.shape == (1, len(available_features("solution")))
    assert row[0, SOLUTION_FEATURES.index("final_answer_found")] == 1.0  # computed, not the kept zeros
    assert len(rows.get_many([key])[key]) == len(available_features("solution"))


def test_a_model_trained_without_the_step_findings_loads_and_predicts_as_fitted(tmp_path):
    old = SOLUTION_FEATURES + SOLUTION_GRAPH_FEATURES
    pairs = [(PROBLEM, RIGHT), (PROBLEM, SWAPPED)] * 3
    labels = ["1", "0"] * 3
    x = alignment_features("solution", pairs, parse, names=old)
    estimator = HistGradientBoostingClassifier(max_iter=5, min_samples_leaf=1).fit(x, labels)
    model = AlignmentModel("qam")
    model.labels, model.trees, model.features = [0, 1], _tree_arrays(estimator), old
    model.save_pretrained(tmp_path / "old")
    assert json.loads((tmp_path / "old" / "config.json").read_text())["features"] == list(old)
    loaded = load(tmp_path / "old")
    loaded.parse = parse
    assert loaded.features == old
    results = loaded.predict(pairs[:2])
    expected = estimator.predict_proba(x[:2])
    assert np.allclose([[r["probabilities"][0], r["probabilities"][1]] for r in results], expected)
    assert [r["label"] for r in results] == [1, 0]
