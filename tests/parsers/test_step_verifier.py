"""The step verifier: its line features, NumPy prediction against hand computation, its JSON weights, its
training on made errors, and its findings in ``check_solution``."""

import dataclasses
import json
import random
import subprocess
import sys

import numpy as np
import pytest

from mathgraph.parsers.solution import check_solution
from mathgraph.parsers.step_verifier import (
    STEP_FEATURES,
    WEIGHTS,
    StepVerifier,
    fit,
    inject_step_error,
    line_features,
)

PROBLEM = "Tom has 5 apples and buys 3 more. How many apples does he have?"
SOLUTION = "He buys 3 more apples.\n\nSo 5 + 3 = 9 apples.\n#### 9"


def _verifier(threshold: float, bias: float = 0.0) -> StepVerifier:
    n = len(STEP_FEATURES)
    coef = np.zeros(n)
    coef[STEP_FEATURES.index("is_first")] = 2.0
    return StepVerifier(np.zeros(n), np.ones(n), coef, bias, (1.0, 0.0), threshold)


def test_line_features_read_the_rules_and_the_text():
    check = check_solution(PROBLEM, SOLUTION, verifier=None)
    lines, features = line_features(check)
    assert lines == [0, 2, 3]  # the blank line is no step
    assert features.shape == (3, len(STEP_FEATURES))
    row = dict(zip(STEP_FEATURES, features[1]))
    assert row["rule_arithmetic"] == 1 and row["calculations_wrong"] == 1
    assert row["position"] == pytest.approx(1 / 3) and row["is_first"] == 0 and row["is_last"] == 0
    # "5 + 3 = 9": 5 and 3 are the problem's, 9 is new
    assert row["numbers_new"] == pytest.approx(np.log1p(1)) and row["share_numbers_new"] == pytest.approx(1 / 3)
    assert row["cue_conclude"] == 1  # "So"
    first = dict(zip(STEP_FEATURES, features[0]))
    assert first["is_first"] == 1 and first["rule_arithmetic"] == 0 and first["numbers_new"] == 0


def test_line_features_read_self_corrections_rule_errors_and_substitution():
    problem = "Solve 3x + 2 = 14 for x."
    solution = (
        "We solve \\(3x + 2 = 14\\).\n"
        "So \\(3x = 10\\).\n"
        "Thus \\(x = \\frac{10}{3}\\).\n"
        "Wait, let me check: 5 + 3 = 9.\n"
        "The answer is \\(\\boxed{4}\\)."
    )
    lines, features = line_features(check_solution(problem, solution, verifier=None))
    rows = [dict(zip(STEP_FEATURES, f)) for f in features]
    assert lines == [0, 1, 2, 3, 4]
    # 3x + 2 = 14 fails at x = 10/3, 3x = 10 holds: the second line changed the equation wrongly
    assert [r["substituted_back"] for r in rows] == [0, 1, 0, 0, 0]
    assert [r["self_correction"] for r in rows] == [0, 0, 0, 1, 0]
    assert all(r["solution_self_corrects"] == 1 for r in rows)
    assert [r["before_self_correction"] for r in rows] == [1, 1, 1, 0, 0]
    assert [r["just_before_self_correction"] for r in rows] == [0, 0, 1, 0, 0]
    # the rules flag line 1 (the equation changed wrongly, a false_claim) and line 3 (5 + 3 = 9)
    assert [r["rule_false_claim"] for r in rows] == [0, 1, 0, 0, 0]
    assert [r["rule_arithmetic"] for r in rows] == [0, 0, 0, 1, 0]
    assert [r["at_first_rule_error"] for r in rows] == [0, 1, 0, 0, 0]
    assert [r["before_first_rule_error"] for r in rows] == [1, 0, 0, 0, 0]
    assert [r["writes_boxed"] for r in rows] == [0, 0, 0, 0, 1]
    assert rows[1]["is_second"] == 1 and rows[2]["is_third"] == 1 and rows[0]["is_second"] == 0
    assert rows[0]["log_lines"] == pytest.approx(np.log1p(5))


def test_probabilities_are_the_logistic_of_the_standardised_features():
    verifier = StepVerifier(np.array([1.0, 2.0]), np.array([2.0, 4.0]), np.array([0.5, -1.0]), 0.25, (2.0, -1.0), 0.5)
    x = np.array([[3.0, 6.0], [1.0, 2.0]])
    # row 0: z = (1, 1), score 0.5 - 1 + 0.25 = -0.25, calibrated 2 * -0.25 - 1 = -1.5
    assert verifier.scores(x) == pytest.approx([-0.25, 0.25])
    assert verifier.probabilities(x) == pytest.approx([1 / (1 + np.exp(1.5)), 1 / (1 + np.exp(0.5))])


def test_weights_round_trip_through_json(tmp_path):
    path = tmp_path / "verifier.json"
    verifier = _verifier(0.7, bias=-0.5)
    verifier.save(path)
    loaded = StepVerifier.load(path)
    assert loaded.threshold == 0.7 and loaded.intercept == -0.5
    assert np.array_equal(loaded.coef, verifier.coef)
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="other features"):
        StepVerifier.load(path)


def test_fit_matches_scikit_learn_on_standardised_data():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3)) * [1.0, 5.0, 0.1] + [0.0, 10.0, 1.0]
    y = (x[:, 0] + (x[:, 1] - 10) / 5 > 0.3).astype(int)
    verifier = fit(x, y)
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    reference = LogisticRegression(C=0.1, class_weight="balanced", max_iter=2000).fit(z, y)
    assert verifier.probabilities(x) == pytest.approx(reference.predict_proba(z)[:, 1], abs=1e-6)


def test_injected_errors_change_one_line():
    lines = ["We have \\(3 + 4 = 7\\).", "There are 12 eggs in a box.", "So the answer is 7."]
    seen_kinds = set()
    for seed in range(20):
        made = inject_step_error(lines, ["A line from elsewhere, long enough."], random.Random(seed))
        assert made is not None
        changed, k = made
        assert [i for i in range(3) if changed[i] != lines[i]] == [k]
        seen_kinds.add(k)
    assert len(seen_kinds) >= 2
    assert inject_step_error(["no numbers here"], [], random.Random(0)) is None


def test_check_reports_the_most_probable_line_above_the_threshold_only():
    # the first line scores 2 (probability 0.88), the others 0 (0.5)
    check = check_solution(PROBLEM, SOLUTION, verifier=_verifier(0.8))
    suspects = [f for f in check.findings if f.kind == "suspect_step"]
    assert [(f.step, round(f.probability, 3)) for f in suspects] == [(0, 0.881)]
    assert check.first_error_step == 0 and suspects[0].to_dict()["probability"] == pytest.approx(0.8808, abs=1e-4)
    # one first wrong step a solution: below the threshold the other lines (0.5) are not reported
    everywhere = check_solution(PROBLEM, SOLUTION, verifier=_verifier(0.1))
    assert [f.step for f in everywhere.findings if f.kind == "suspect_step"] == [0]
    assert [f.kind for f in check_solution(PROBLEM, SOLUTION, verifier=_verifier(0.95)).errors()] == ["arithmetic"]
    assert check_solution(PROBLEM, "5 + 3 = 8\n#### 8", verifier=_verifier(0.95)).ok
    # the most probable line is the one the arithmetic rule flags (line 2): no suspect_step of its own
    n = len(STEP_FEATURES)
    coef = np.zeros(n)
    coef[STEP_FEATURES.index("rule_arithmetic")] = 3.0
    on_rule = StepVerifier(np.zeros(n), np.ones(n), coef, 0.0, (1.0, 0.0), 0.1)
    assert [(f.kind, f.step) for f in check_solution(PROBLEM, SOLUTION, verifier=on_rule).errors()] == [
        ("arithmetic", 2)
    ]


def test_operating_points_name_thresholds_and_refuse_others(tmp_path):
    verifier = dataclasses.replace(_verifier(0.7), thresholds={"strict": 0.7, "f1": 0.2})
    assert verifier.at("f1").threshold == 0.2 and verifier.at(0.35).threshold == 0.35
    verifier.save(tmp_path / "v.json")
    assert StepVerifier.load(tmp_path / "v.json").threshold == 0.7
    assert StepVerifier.load(tmp_path / "v.json", point="f1").threshold == 0.2
    with pytest.raises(ValueError, match="no operating point 'loose'.*f1, strict"):
        verifier.at("loose")
    with pytest.raises(ValueError, match="between 0 and 1"):
        verifier.at(1.5)
    # the packaged verifier has both points, the strict one the higher
    packaged = StepVerifier.load()
    assert set(packaged.thresholds) == {"strict", "f1"} and packaged.threshold == packaged.thresholds["strict"]
    assert packaged.thresholds["f1"] < packaged.thresholds["strict"]


def test_packaged_weights_load_and_predict_without_scikit_learn():
    assert WEIGHTS.exists(), "fit them with benchmarks/process_errors.py --fit-verifier"
    code = (
        "import sys\n"
        "from mathgraph.parsers.step_verifier import StepVerifier\n"
        "from mathgraph.parsers.solution import check_solution\n"
        "v = StepVerifier.load()\n"
        "c = check_solution('Tom has 5 apples and buys 3 more.', '5 + 3 = 8\\n#### 8', verifier=v)\n"
        "p = v.line_probabilities(c)\n"
        "assert 0 < p[0] < 1 and 0 < v.threshold <= 1.01\n"
        "assert 'sklearn' not in sys.modules, 'scikit-learn was imported'\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "ok", result.stderr


COUNTING_PROBLEM = "How many ways can 3 people sit in a row?"
COUNTING_STEPS = [
    "Each person picks a seat.",
    "Wait, actually there are \\(3 + 3 + 3 = 9\\) ways, so \\(x = 9\\).",
    "\\(\\boxed{9}\\)",
]


def test_line_features_read_what_each_line_writes():
    check = check_solution(COUNTING_PROBLEM, "\n".join(COUNTING_STEPS), verifier=None)
    lines, features = line_features(check)
    assert features.shape == (3, len(STEP_FEATURES))
    rows = [dict(zip(STEP_FEATURES, row)) for row in features]
    # line 1: "wait" and "actually"; two "="; x is a symbol neither the problem nor line 0 wrote
    assert rows[1]["backtrack"] == 2 and rows[0]["backtrack"] == 0
    assert rows[1]["equals"] == pytest.approx(np.log1p(2))
    assert rows[1]["symbols_new"] == pytest.approx(np.log1p(1)) and rows[1]["share_symbols_new"] == 1.0
    assert rows[2]["boxed"] == 1 and rows[1]["boxed"] == 0
    assert [r["index_bin_0"] for r in rows] == [1, 0, 0] and rows[2]["index_bin_2"] == 1
    mean_chars = np.mean([len(step.text) for step in check.graph.steps])
    assert rows[0]["rel_chars"] == pytest.approx(len(COUNTING_STEPS[0]) / mean_chars)
    # the solution's features are the same on every line: 3 lines, one boxed answer 9, a counting problem
    for row in rows:
        assert row["sol_log_lines"] == pytest.approx(np.log1p(3))
        assert row["sol_backtrack"] == pytest.approx(np.log1p(2))
        assert row["sol_boxed_distinct"] == pytest.approx(np.log1p(1)) and row["sol_no_boxed"] == 0
        assert row["ans_log_magnitude"] == pytest.approx(1.0) and row["prob_count"] == 1 and row["prob_geometry"] == 0
