"""The quantity benchmark's gold file is consistent (its smoke run is in ``test_smoke.py``)."""

import json
from fractions import Fraction
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLD = REPO / "benchmarks" / "data" / "quantities_gold.jsonl"


def test_gold_file_is_consistent():
    problems = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    quantities = [q for p in problems for q in p["quantities"]]
    assert len(quantities) >= 100
    for problem in problems:
        for q in problem["quantities"]:
            assert problem["text"][q["start"] : q["end"]] == q["text"]
            Fraction(q["value"])
