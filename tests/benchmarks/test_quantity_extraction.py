"""The quantity benchmark's gold file is consistent (its smoke run is in ``test_smoke.py``)."""

import json
from fractions import Fraction
from pathlib import Path

from mathgraph.graph import QUANTITY_FORMS

REPO = Path(__file__).resolve().parents[2]
GOLD = REPO / "benchmarks" / "data" / "quantities_gold.jsonl"
HARD_KINDS = {
    "vulgar-fraction",
    "unicode-minus",
    "signed-money",
    "dozen",
    "scale-word",
    "and-a-half",
    "per-cent",
    "notation",
    "formula-constant",
    "ratio",
    "date",
    "unit-object",
}
NOT_QUANTITY_KINDS = {"date", "phone", "clock", "label", "dozen", "scale-word"}


def test_gold_file_is_consistent():
    problems = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    quantities = [q for p in problems for q in p["quantities"]]
    hard = [q for q in quantities if q["hard"]]
    assert len(quantities) >= 150 and 2 * len(hard) >= len(quantities)  # at least half of them hard cases
    assert {q["kind"] for q in hard} == HARD_KINDS  # every kind of hard case is there
    for problem in problems:
        assert problem["draw"] in ("random", "chosen", "handwritten")
        starts = [q["start"] for q in problem["quantities"]]
        assert starts == sorted(starts)
        for q in problem["quantities"]:
            assert problem["text"][q["start"] : q["end"]] == q["text"]
            assert str(Fraction(q["value"])) == q["value"]  # reduced
            assert q["form"] in QUANTITY_FORMS
            assert q["hard"] == (q["kind"] != "plain")
        for span in problem.get("not_quantities", []):
            assert problem["text"][span["start"] : span["end"]] == span["text"]
            assert span["kind"] in NOT_QUANTITY_KINDS
