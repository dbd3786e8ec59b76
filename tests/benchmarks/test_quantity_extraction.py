"""The quantity benchmark runs on the committed gold file and reports what it measures."""

import json
import subprocess
import sys
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
            assert problem["text"][q["start"]:q["end"]] == q["text"]
            Fraction(q["value"])


def test_benchmark_smoke_run():
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "quantity_extraction.py"), "--limit", "3"],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "3 problems from" in result.stdout
    assert "| all |" in result.stdout and "precision" in result.stdout
