"""The GPU KPC study's tables name each run by its seed, and by its setting where the job compared several."""

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import gpu_kpc_ensemble  # noqa: E402


def test_a_run_is_named_by_its_seed_and_by_its_setting_where_it_has_one():
    assert gpu_kpc_ensemble.run_name(2, {"seed": 2}) == "run 3 (seed 2)"
    assert gpu_kpc_ensemble.run_name(0, {}) == "run 1 (seed 0)"  # an old report's runs: the index is the seed
    setting = {"seed": 1, "learning_rate": 1e-4, "epochs": 6, "batch_size": 32}
    assert gpu_kpc_ensemble.run_name(3, setting) == "run 4 (lr 0.0001, 6 epochs, batch 32, seed 1)"


def test_the_settings_run_recomputes_its_committed_table(tmp_path):
    figures = json.loads((REPO / "benchmarks" / "results" / "issue51_kpc_settings.json").read_text())
    table = gpu_kpc_ensemble.tables(figures)
    assert table == (REPO / "benchmarks" / "results" / "issue51_kpc_settings.md").read_text()
    assert (
        "| ensemble of 4 + TF-IDF, late fusion (w = 0.3 on dev) | 0.8187 [0.7895-0.8446] | 0.8347 [0.8064-0.8595] |"
        in table
    )


def tiny_figures(runs: list[list[list[float]]], gold: list[str]) -> dict:
    part = {"gold": gold, "runs": runs, "tfidf": [[0.5, 0.5]] * len(gold)}
    return {"labels": ["a", "b"], "machine": {}, "job": {}, "seconds": 1.0, "dev": part, "test": part}


def test_pooling_two_jobs_averages_all_their_runs_and_refuses_another_split():
    first = tiny_figures([[[0.9, 0.1], [0.6, 0.4]]], ["a", "b"])
    second = tiny_figures([[[0.2, 0.8], [0.1, 0.9]], [[0.7, 0.3], [0.5, 0.5]]], ["a", "b"])
    pooled = gpu_kpc_ensemble.pool([first, second])
    assert len(pooled["dev"]["runs"]) == 3
    assert pooled["run_names"] == ["job 1, run 1", "job 2, run 1", "job 2, run 2"]
    assert pooled["seconds"] == 2.0
    table = gpu_kpc_ensemble.tables(pooled)
    # the ensemble of 3 averages (0.9, 0.2, 0.7) = 0.6 for "a" on the first problem: "a" (right); on the second
    # (0.6, 0.1, 0.5) = 0.4 for "a": "b" (right); so 2 of 2
    assert "| ensemble of 3 | 1.0000" in table
    assert gpu_kpc_ensemble.pool([first]) is first
    with pytest.raises(ValueError, match="another KPC split"):
        gpu_kpc_ensemble.pool([first, tiny_figures([[[0.5, 0.5], [0.5, 0.5]]], ["b", "b"])])


def test_the_two_lr_1e4_jobs_pooled_recompute_their_committed_table():
    results = REPO / "benchmarks" / "results"
    figures = [
        json.loads((results / name).read_text()) for name in ("issue51_kpc_settings.json", "issue51_kpc_sixth.json")
    ]
    table = gpu_kpc_ensemble.tables(gpu_kpc_ensemble.pool(figures))
    assert table == (results / "issue51_kpc_pooled.md").read_text()
    assert (
        "| ensemble of 8 + TF-IDF, late fusion (w = 0.5 on dev) | 0.8187 [0.7895-0.8446] | 0.8360 [0.8078-0.8608] |"
        in table
    )


def test_two_studies_are_compared_run_by_run_and_refused_on_another_split():
    # study a is right on both problems in its one run; study b's run is right on the second only
    a = tiny_figures([[[0.9, 0.1], [0.2, 0.8]]], ["a", "b"])
    b = tiny_figures([[[0.3, 0.7], [0.4, 0.6]], [[0.8, 0.2], [0.1, 0.9]]], ["a", "b"])
    table = gpu_kpc_ensemble.versus(a, b, ("A", "B"))
    assert "| mean of runs 1-1 | 1.0000 | 0.5000 | +0.5000 | 1.0000 | 0.5000 | +0.5000 |" in table
    assert "| run 1 | 1.0000 " in table and "| 0.5000 [" in table
    assert "| ensemble of 1 |" in table  # the smaller study has one run: b's second run is left out
    with pytest.raises(ValueError, match="same KPC split"):
        gpu_kpc_ensemble.versus(a, tiny_figures([[[0.5, 0.5], [0.5, 0.5]]], ["b", "b"]), ("A", "B"))


def test_comus_against_dapt_bert_at_gpu_scale_recomputes_its_committed_table():
    results = REPO / "benchmarks" / "results"
    comus, dapt = (json.loads((results / f"issue51_kpc_{n}.json").read_text()) for n in ("sixth", "dapt_seventh"))
    assert gpu_kpc_ensemble.tables(dapt) == (results / "issue51_kpc_dapt_seventh.md").read_text()
    text = gpu_kpc_ensemble.tables(comus)
    text += "\nCOMUS minus DAPT-BERT (paired bootstrap 95% intervals):\n\n"
    text += gpu_kpc_ensemble.versus(comus, dapt, ("COMUS", "DAPT-BERT"))
    assert text == (results / "issue51_kpc_comus_minus_dapt.md").read_text()
    assert "| ensemble of 2 | 0.7907 [0.7601-0.8183] | 0.8160 [0.7867-0.8421] | -0.0253 [-0.0493 to -0.0027] |" in text
