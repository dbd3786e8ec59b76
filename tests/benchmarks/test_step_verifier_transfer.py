"""benchmarks/step_verifier_transfer.py: its training lines, its one-step-a-solution decision and its scores."""

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import step_verifier_transfer as svt  # noqa: E402


def _record(label: int, steps: list[int], lines: list[int], rule_line=None, part="math", problem="p") -> dict:
    return {"label": label, "steps": steps, "lines": lines, "rule_line": rule_line, "part": part, "problem": problem}


def test_training_lines_stop_at_the_first_wrong_step():
    # step 0 has lines 0 and 1, step 1 line 2, step 2 line 3; the first wrong step is 1
    wrong = _record(1, [0, 0, 1, 2], [0, 1, 2, 3])
    right = _record(-1, [0, 1], [0, 1])
    wrong["x"] = np.arange(4, dtype=float).reshape(4, 1)
    right["x"] = np.array([[10.0], [11.0]])
    x, y = svt.training_lines([wrong, right], [0])
    assert x[:, 0].tolist() == [0, 1, 2, 10, 11] and y.tolist() == [0, 0, 1, 0, 0]


def test_decision_flags_the_most_probable_line_above_the_threshold():
    record = _record(1, [0, 1, 1, 2], [0, 1, 2, 3])
    scores = [np.array([0.1, 0.5, 0.9, 0.8])]
    assert svt.predictions([record], scores, 0.85, rules=False) == [1]  # line 2 is step 1
    assert svt.predictions([record], scores, 0.95, rules=False) == [-1]
    ruled = _record(1, [0, 1, 1, 2], [0, 1, 2, 3], rule_line=0)
    assert svt.predictions([ruled], scores, 0.85, rules=True) == [0]  # the earlier of the two
    assert svt.predictions([ruled], scores, 0.85, rules=False) == [1]


def test_scores_and_paired_difference():
    labels = [-1, -1, 2, 0]
    error, correct, f1 = svt.quick_scores(labels, [-1, 3, 2, 1])
    assert (error, correct) == (50.0, 50.0) and f1 == pytest.approx(50.0)
    assert svt.paired_f1_difference(labels, [-1, 3, 2, 1], [-1, 3, 2, 1], n=50) == [0.0, 0.0]
    # b finds nothing (F1 0), a is right everywhere (F1 100): every resample with both kinds differs by 100
    assert svt.paired_f1_difference(labels, labels, [-1, -1, -1, -1], n=50) == [100.0, 100.0]


def test_threshold_keeps_correct_acc_at_90():
    # ten right solutions and ten wrong ones in each part; the right ones' top scores are 0..9, the wrong
    # ones' 5..14 with the top line on the labelled step
    records, scores = [], []
    for part in svt.PARTS:
        for k in range(10):
            records.append(_record(-1, [0, 1], [0, 1], part=part))
            scores.append(np.array([k, -1.0]))
            records.append(_record(1, [0, 1], [0, 1], part=part))
            scores.append(np.array([-1.0, 5.0 + k]))
    threshold, parts = svt.choose_threshold(records, scores, rules=False)
    # a threshold in (8, 9] flags one right solution of ten (correct acc 90) and the wrong ones scored 9 to
    # 14, six of ten (error acc 60, F1 2 * 0.6 * 0.9 / 1.5 = 72); a lower one drops correct acc below 90
    assert 8 < threshold <= 9
    assert parts["math"] == [60.0, 90.0, 72.0] and parts["olympiadbench"] == [60.0, 90.0, 72.0]
