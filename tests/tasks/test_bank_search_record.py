"""The search setting and model-card tables kept from a bank benchmark run (tasks.release.bank_search)."""

import json
import shutil

from mathgraph.registry import resolve
from mathgraph.tasks.release.bank_search import bank_summary, choose_search_fusion, record_bank_results


def _row(label, r1_by_kind, mrr, n=2):
    metrics = {kind: {"n": n, "r1": r1, "r1_ci": [0.0, 1.0], "r10": 1.0, "mrr": r1} for kind, r1 in r1_by_kind.items()}
    metrics["all"] = {"n": n * len(r1_by_kind), "r1": 0.5, "r1_ci": [0.1, 0.9], "r10": 1.0, "mrr": mrr}
    return {"row": {"label": label}, "metrics": metrics}


def _report(split="dev"):
    # two banks of 4 queries each; MRR over all 8 queries is the mean of the two banks' MRRs
    a = {
        "minilm": _row("base", {"x": 1.0, "y": 0.5}, 0.7),
        "sparse0.1": _row("w0.1", {"x": 1.0, "y": 0.5}, 0.8),
        "sparse0.2": _row("w0.2", {"x": 1.0, "y": 1.0}, 0.9),
        "sparse0.5": _row("w0.5", {"x": 0.5, "y": 1.0}, 1.0),
    }  # best MRR, but below base on kind x
    b = {
        "minilm": _row("base", {"z": 1.0}, 0.9),
        "sparse0.1": _row("w0.1", {"z": 1.0}, 0.9),
        "sparse0.2": _row("w0.2", {"z": 1.0}, 0.8),
        "sparse0.5": _row("w0.5", {"z": 1.0}, 1.0),
    }
    return {
        "machine": "test",
        "split": split,
        "banks": {
            "a": {"title": "bank A", "facts": {"bank": "4 rows"}, "kinds": ["x", "y"], "rows": a},
            "b": {"title": "bank B", "facts": {"bank": "4 rows"}, "kinds": ["z"], "rows": b},
        },
    }


def test_the_fusion_weight_is_the_best_mrr_never_below_the_base_encoder():
    chosen = choose_search_fusion(_report())
    # MRR over all queries: base (0.7*4 + 0.9*2)/6 = 0.7667; 0.1: (0.8*4+0.9*2)/6 = 0.8333; 0.2: (0.9*4+0.8*2)/6 = 0.8667;
    # 0.5 would be 1.0 but its R@1 on kind x (0.5) is below the base's (1.0)
    assert chosen["weight"] == 0.2 and chosen["default"] is True
    assert chosen["dev_mrr_by_weight"] == {"0.0": 0.7667, "0.1": 0.8333, "0.2": 0.8667, "0.5": 1.0}


def test_no_fusion_rows_chooses_nothing_and_a_worse_fusion_keeps_weight_zero():
    report = _report()
    for bank in report["banks"].values():
        for name in [n for n in bank["rows"] if n.startswith("sparse")]:
            del bank["rows"][name]
    assert choose_search_fusion(report) is None
    report = _report()
    for bank in report["banks"].values():
        for name in [n for n in bank["rows"] if n.startswith("sparse")]:
            bank["rows"][name]["metrics"]["x" if "x" in bank["rows"][name]["metrics"] else "z"]["r1"] = 0.0
    assert choose_search_fusion(report)["weight"] == 0.0 and choose_search_fusion(report)["default"] is False


def test_recorded_tables_reach_release_notes_config_and_card(tmp_path):
    package = tmp_path / "package"
    shutil.copytree(resolve("shipped"), package)
    record_bank_results(package, _report("dev"))
    record_bank_results(package, _report("test"))
    release = json.loads((package / "release.json").read_text())
    config = json.loads((package / "config.json").read_text())
    assert release["search"]["hybrid"]["weight"] == 0.2  # the test run does not choose
    assert config["search"]["tfidf"]["weight"] == 0.2 and config["search"]["tfidf"]["on"] is True
    assert set(release["search"]["banks"]) == {"dev", "test"}
    assert release["search"]["banks"]["test"] == bank_summary(_report("test"))
    assert "sparse0.2" not in release["search"]["banks"]["dev"]["banks"]["a"]["rows"]
    card = (package / "MODEL_CARD.md").read_text()
    assert "Search in a question bank: bank A (4 rows; `benchmarks/bank_search.py --split test`)" in card
    assert "| base | 1.000 [0.000, 1.000] | 0.500 [0.000, 1.000] | 1.000 | 0.700 |" in card
    checksums = json.loads((package / "checksums.json").read_text())
    from mathgraph.checksums import file_sha256

    assert checksums["MODEL_CARD.md"] == file_sha256(package / "MODEL_CARD.md")
