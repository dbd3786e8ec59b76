"""The GPU KPC study's tables name each run by its seed, and by its setting where the job compared several."""

import json
import sys
from pathlib import Path

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
