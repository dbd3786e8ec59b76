"""benchmarks/process_errors.py: ProcessBench's scores against hand computation, and its smoke run on a few
hand-written solutions whose first wrong steps the rules find."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import process_errors  # noqa: E402

ROWS = [
    # right: every step holds
    {
        "problem": "What is $3 \\cdot 4 + 2$?",
        "steps": ["First, \\(3 \\cdot 4 = 12\\).", "Then \\(12 + 2 = 14\\), so the answer is \\(\\boxed{14}\\)."],
        "label": -1,
    },
    # wrong at step 1: a stated sum that does not hold
    {
        "problem": "What is $5 \\cdot 6 + 7$?",
        "steps": ["We have \\(5 \\cdot 6 = 30\\).", "Then \\(30 + 7 = 38\\).", "The answer is \\(\\boxed{38}\\)."],
        "label": 1,
    },
    # wrong at step 0: a root claimed wrong (a false claim, which the calculation reader cannot evaluate)
    {
        "problem": "Simplify $\\sqrt{50}$.",
        "steps": ["\\(\\sqrt{50} = 6\\sqrt{2}\\).", "So the answer is \\(\\boxed{6\\sqrt{2}}\\)."],
        "label": 0,
    },
    # wrong at step 1 in a way no rule sees: a wrong plan
    {
        "problem": "How many ways can 3 people sit in a row?",
        "steps": ["Each person picks a seat.", "There are \\(3 + 3 + 3 = 9\\) ways.", "\\(\\boxed{9}\\)"],
        "label": 1,
    },
]


def test_scores_against_hand_computation():
    labels = [-1, -1, -1, 2, 0, 1]
    predictions = [-1, -1, 3, 2, 0, -1]  # right: 2 of 3; wrong: 2 of 3
    s = process_errors.scores(labels, predictions)
    assert (s["n_wrong"], s["n_right"], s["error_acc"], s["correct_acc"], s["f1"]) == (3, 3, 66.7, 66.7, 66.7)
    low, high = s["error_acc_ci95"]
    assert (low, high) == (20.8, 93.9)  # Wilson 2/3
    assert process_errors.wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert process_errors.scores([-1, -1], [-1, 0])["error_acc"] is None  # no wrong solutions: no error acc


def test_halves_and_lines():
    assert process_errors.half_of("a problem") == process_errors.half_of("a problem")
    halves = {process_errors.half_of(f"problem {k}") for k in range(20)}
    assert halves == {"dev", "test"}
    assert process_errors.step_of_line(["a\nb", "c", "d\ne\nf"]) == [0, 0, 1, 2, 2, 2]


def test_smoke_run_on_hand_written_solutions(tmp_path):
    data = tmp_path / "data"
    (data / "processbench").mkdir(parents=True)
    for part in ("math", "olympiadbench"):
        with open(data / "processbench" / f"{part}.jsonl", "w") as f:
            for k, row in enumerate(ROWS):
                f.write(
                    json.dumps({"id": f"{part}-{k}", "generator": "hand", "final_answer_correct": None, **row}) + "\n"
                )
    (data / "gsmplus").mkdir()
    variant = {
        "question": "Tom has 5 apples and buys 3 more. How many apples does he have?",
        "solution": "He has 5 + 3 = 8 apples.\n#### 8",
        "answer": "8",
        "perturbation_type": "numerical substitution",
        "seed_question": "Tom has 4 apples and buys 3 more. How many apples does he have?",
        "seed_solution": "He has 4 + 3 = 7 apples.\n#### 7",
        "seed_answer": "7",
    }
    (data / "gsmplus" / "variants.jsonl").write_text(json.dumps(variant) + "\n")
    output = tmp_path / "out.json"
    result = subprocess.run(
        [
            sys.executable,
            "benchmarks/process_errors.py",
            "--smoke",
            "--rules-only",
            "--data",
            str(data),
            "--output",
            str(output),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert (
        "## math, rules:" in result.stdout
        and "| half | n wrong | n right | error acc | correct acc | F1 |" in result.stdout
    )
    report = json.loads(output.read_text())
    scores = report["parts"]["math"]["rules"]["all"]
    # the smoke mode takes up to 3 right and the rest wrong: the one right solution and the three wrong ones
    assert (scores["n_right"], scores["n_wrong"]) == (1, 3)
    # the sum and the root are placed, the plan is not; the right solution passes
    assert (scores["error_acc"], scores["correct_acc"]) == (66.7, 100.0)
    assert scores["by_error_kind"] == {"calculation": {"n": 1, "located": 1}, "other": {"n": 2, "located": 1}}
    assert "check" not in report["parts"]["math"]  # --rules-only
    # the seed's solution read against the variant: 4 is no number of the variant's problem, from its line 0
    gsmplus = report["parts"]["gsmplus"]["rules"]["all"]
    assert (gsmplus["n_wrong"], gsmplus["n_right"], gsmplus["error_acc"], gsmplus["correct_acc"]) == (
        1,
        1,
        100.0,
        100.0,
    )


def test_fit_verifier_on_dev_labels_writes_weights_that_load(tmp_path):
    from mathgraph.parsers.step_verifier import StepVerifier

    data = tmp_path / "data"
    (data / "processbench").mkdir(parents=True)
    for part in ("math", "olympiadbench"):
        with open(data / "processbench" / f"{part}.jsonl", "w") as f:
            for copy in range(6):  # the same solutions under other problem texts: both halves get some
                for k, row in enumerate(ROWS):
                    problem = f"{row['problem']} (version {copy})"
                    f.write(json.dumps({"id": f"{part}-{copy}-{k}", "generator": "hand", **row, "problem": problem}))
                    f.write("\n")
    weights, output = tmp_path / "verifier.json", tmp_path / "out.json"
    command = [sys.executable, "benchmarks/process_errors.py", "--parts", "math", "olympiadbench", "--data"]
    command += [str(data), "--fit-verifier", str(weights), "--output", str(output)]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    verifier = StepVerifier.load(weights)
    assert 0 < verifier.threshold <= 1.01
    assert verifier.info["trained_on"].startswith("ProcessBench dev halves")
    report = json.loads(output.read_text())
    assert report["verifier"]["threshold"] == verifier.threshold
    # the rules alone place the sum and the root (2 of 3 wrong) and pass the right solution; check (the rules
    # and the fitted verifier) is measured on the same 24 solutions
    rules, check = report["parts"]["math"]["rules"]["all"], report["parts"]["math"]["check"]["all"]
    assert (rules["n_wrong"], rules["n_right"], rules["error_acc"], rules["correct_acc"]) == (18, 6, 66.7, 100.0)
    assert (check["n_wrong"], check["n_right"]) == (18, 6)


def test_folds_are_pinned_to_the_problem_text():
    # the grouped dev folds that calibrate the verifier and choose its threshold: a change here changes them
    assert [process_errors.fold_of(p) for p in ("a problem", "What is 2+2?", "x")] == [0, 3, 3]
    assert {process_errors.fold_of(f"problem {k}") for k in range(40)} == set(range(process_errors.FOLDS))
    assert {process_errors.fold_of(f"problem {k}", 2) for k in range(20)} == {0, 1}


def test_neural_scorer_columns_and_paired_bootstrap():
    import numpy as np
    import step_scorer

    # lines read: 0 -> score 0.5, 1 not read (after the first wrong step) -> 0, 2 -> 2.0, 3 -> -1.0
    columns = step_scorer.neural_columns({"read": [0, -1, 1, 2]}, np.asarray([0.5, 2.0, -1.0]))
    assert columns.tolist() == [[0.5, 0.0], [0.0, 0.5], [2.0, 0.5], [-1.0, 2.0]]  # score, max of the earlier
    wrong = np.asarray([True, True, False, False])
    same = np.asarray([True, False, True, False])
    assert step_scorer.paired_f1_difference(wrong, same, same) == (0.0, 0.0)
    # every solution right against every one missed: F1 100 against 0 on every resample with both kinds
    assert step_scorer.paired_f1_difference(wrong, np.ones(4, bool), np.zeros(4, bool)) == (100.0, 100.0)
