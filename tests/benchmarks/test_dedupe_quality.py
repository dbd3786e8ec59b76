"""The dedupe benchmark's MATH-style copies (reworded prose, renamed variables, one number changed), its scoring
of grouped pairs against hand counts, its choice of settings, and its smoke run's tables."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import dedupe_quality as dq  # noqa: E402

PROBLEM = "Let $x^2 + 3 = 12$. Find the value of $x + y$ if $y = 2x$. [asy] size(200); [/asy]"


def test_reworded_copies_change_the_prose_only():
    # the rules run in order, so "Let" -> "Suppose" -> "Assume"; they match whole words, case and all ("if")
    assert dq.reworded(PROBLEM) == (
        "Assume $x^2 + 3 = 12$. Determine the numerical value of $x + y$ if $y = 2x$. [asy] size(200); [/asy]"
    )
    assert dq.reworded("Is $2 < 3$?") is None  # no rule applies
    assert dq.reworded("Let $Let = 1$.") == "Assume $Let = 1$."  # never inside a formula


def test_renamed_copies_rename_one_variable_in_every_formula():
    assert dq.renamed(PROBLEM) == "Let $t^2 + 3 = 12$. Find the value of $t + y$ if $y = 2t$. [asy] size(200); [/asy]"
    assert dq.renamed("\\[\\sin x\\] and \\begin{align*} x \\end{align*}") == (
        "\\[\\sin t\\] and \\begin{align*} t \\end{align*}"  # a command's letters and an environment's name stay
    )
    assert dq.renamed("What is $2 + 3$?") is None


def test_a_near_miss_changes_the_first_number_outside_drawings():
    assert dq.one_number_changed(PROBLEM) == PROBLEM.replace("x^2", "x^3")
    assert dq.one_number_changed("Draw [asy] size(200); [/asy] a 1.5 cm line") is None


def test_scores_count_pairs_by_hand():
    items = [
        {"origin": "s0", "kind": "seed", "family": "f0"},
        {"origin": "s0", "kind": "paraphrase", "family": "f0"},
        {"origin": "s0: adding operation", "kind": "adding operation", "family": "f0"},
        {"origin": "s1", "kind": "seed", "family": "f1"},
        {"origin": "s1", "kind": "formatting copy", "family": "f1"},
    ]
    groups = np.array([0, 0, 0, 3, 4])  # the variant joined its seed; the copy was missed
    counts = dq.score(groups, items, list(range(5)))
    # grouped: (0,1) (0,2) (1,2); positive: (0,1) (3,4); correct: (0,1)
    assert (counts["predicted"], counts["positive"], counts["correct"]) == (3, 2, 1)
    assert dq.f_measures(counts)[:2] == (1 / 3, 1 / 2)
    assert counts["recall_by_kind"] == {"paraphrase": [1, 1], "formatting copy": [0, 1]}
    assert counts["merged_by_kind"] == {"adding operation": [1, 1]}
    assert counts["false_pairs"] == {"adding operation": 2}
    assert counts["per_family"] == {"f0": [3, 1, 1], "f1": [0, 1, 0]}
    only_f1 = dq.score(groups, items, [3, 4])
    assert (only_f1["predicted"], only_f1["positive"]) == (0, 1)


def test_strict_picks_the_best_recall_at_the_precision_asked_and_default_the_best_f1():
    from mathgraph.tasks.search.dedupe import DedupeSettings

    def counts(predicted, positive, correct):
        return {"predicted": predicted, "positive": positive, "correct": correct}

    loose, tight, tightest = (DedupeSettings(small_numbers=n, linkage="complete") for n in (2, 1, 0))
    chained = DedupeSettings(small_numbers=2)
    results = [
        (chained, counts(100, 100, 95)),  # F1 0.95: the best
        (loose, counts(100, 100, 90)),
        (tight, counts(80, 100, 80)),  # precision 1.0, recall 0.8
        (tightest, counts(50, 100, 50)),
    ]
    assert dq.choose(results, "default") == chained
    assert dq.choose(results, "strict") == tight
    assert dq.choose([r for r in results if r[0] != tight and r[0] != tightest], "strict") == loose


def test_smoke_run_prints_its_tables(tmp_path):
    result = subprocess.run(
        [sys.executable, "benchmarks/dedupe_quality.py", "--smoke", "--work", str(tmp_path)],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    for line in (
        "### Dev: the grid",
        "### Before: the previous confirmation",
        "### Default (held-out folds pooled)",
        "### Strict (held-out folds pooled)",
        "| paraphrase | ",
        "| renamed variables | ",
        "| math: one number changed | ",
        "same groups as the grid's: True",
    ):
        assert line in result.stdout, f"{line!r} not in:\n{result.stdout[-4000:]}"
    assert (tmp_path / "dedupe_quality.json").exists()
