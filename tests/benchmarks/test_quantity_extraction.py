"""The quantity benchmark's gold file is consistent (its smoke run is in ``test_smoke.py``)."""

import json
from fractions import Fraction
from pathlib import Path

import pytest

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


OUTSIDE = REPO / "benchmarks" / "data" / "quantities_outside.jsonl"
OUTSIDE_SOURCES = {
    "math": "corpus",
    "gsm8k": "corpus",
    "gsmplus": "corpus",
    "processbench": "corpus",
    "quantulum3": "library",
    "word2number": "library",
    "text2num": "library",
    "number-parser": "library",
    "recognizers-text": "library",
    "written": "written",
}


def test_outside_gold_file_is_consistent_and_split_per_source():
    items = [json.loads(line) for line in OUTSIDE.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert [item["id"] for item in items] == list(range(1, len(items) + 1))
    taken = [item["text"].strip() for item in items if item["draw"] != "corpus"]
    assert len(set(taken)) == len(taken)  # no library sentence twice (two random problems may share a sentence)
    halves: dict[tuple[str, str], int] = {}
    for item in items:
        assert OUTSIDE_SOURCES[item["source"]] == item["draw"]
        halves[(item["source"], item["split"])] = halves.get((item["source"], item["split"]), 0) + 1
        check_spans(item)
    for source in OUTSIDE_SOURCES:  # each source split in halves, dev the larger by at most one
        assert 0 <= halves[(source, "dev")] - halves[(source, "heldout")] <= 1
    corpus = sum(1 for item in items if item["draw"] == "corpus")
    assert corpus == 180 and sum(len(item["quantities"]) for item in items) >= 600


HELDOUT2 = REPO / "benchmarks" / "data" / "quantities_heldout2.jsonl"
HELDOUT3 = REPO / "benchmarks" / "data" / "quantities_heldout3.jsonl"
HELDOUT4 = REPO / "benchmarks" / "data" / "quantities_heldout4.jsonl"
HELDOUT5 = REPO / "benchmarks" / "data" / "quantities_heldout5.jsonl"
HELDOUT6 = REPO / "benchmarks" / "data" / "quantities_heldout6.jsonl"
HELDOUT7 = REPO / "benchmarks" / "data" / "quantities_heldout7.jsonl"
HELDOUT8 = REPO / "benchmarks" / "data" / "quantities_heldout8.jsonl"
HELDOUT9 = REPO / "benchmarks" / "data" / "quantities_heldout9.jsonl"
HELDOUT10 = REPO / "benchmarks" / "data" / "quantities_heldout10.jsonl"


@pytest.mark.parametrize(
    "path, sources, quantities, not_quantities, earlier_files",
    [
        (HELDOUT2, {"gsm8k": 40, "math": 40, "gsmplus": 30, "processbench": 30, "written": 32}, 363, 14, (OUTSIDE,)),
        (
            HELDOUT3,
            {"gsm8k": 30, "math": 30, "gsmplus": 20, "processbench": 20, "written": 55},
            359,
            27,
            (OUTSIDE, HELDOUT2),
        ),
        (
            HELDOUT4,
            {"gsm8k": 12, "math": 12, "gsmplus": 8, "processbench": 8, "written": 90},
            258,
            36,
            (OUTSIDE, HELDOUT2, HELDOUT3),
        ),
        (
            HELDOUT5,
            {"gsm8k": 12, "math": 12, "gsmplus": 8, "processbench": 8, "written": 90},
            207,
            42,
            (OUTSIDE, HELDOUT2, HELDOUT3, HELDOUT4),
        ),
        (
            HELDOUT6,
            {"gsm8k": 6, "math": 6, "gsmplus": 4, "processbench": 4, "written": 60},
            125,
            31,
            (OUTSIDE, HELDOUT2, HELDOUT3, HELDOUT4, HELDOUT5),
        ),
        (
            HELDOUT7,
            {"gsm8k": 6, "math": 6, "gsmplus": 4, "processbench": 4, "written": 70},
            154,
            33,
            (OUTSIDE, HELDOUT2, HELDOUT3, HELDOUT4, HELDOUT5, HELDOUT6),
        ),
        (
            HELDOUT8,
            {"gsm8k": 6, "math": 6, "gsmplus": 4, "processbench": 4, "written": 70},
            161,
            47,
            (OUTSIDE, HELDOUT2, HELDOUT3, HELDOUT4, HELDOUT5, HELDOUT6, HELDOUT7),
        ),
        (
            HELDOUT9,
            {"gsm8k": 6, "math": 6, "gsmplus": 4, "processbench": 4, "written": 70},
            178,
            22,
            (OUTSIDE, HELDOUT2, HELDOUT3, HELDOUT4, HELDOUT5, HELDOUT6, HELDOUT7, HELDOUT8),
        ),
        (
            HELDOUT10,
            {"gsm8k": 6, "math": 6, "gsmplus": 4, "processbench": 4, "written": 70},
            161,
            24,
            (OUTSIDE, HELDOUT2, HELDOUT3, HELDOUT4, HELDOUT5, HELDOUT6, HELDOUT7, HELDOUT8, HELDOUT9),
        ),
    ],
    ids=[f"heldout{n}" for n in range(2, 11)],
)
def test_a_later_heldout_file_is_consistent_and_new(path, sources, quantities, not_quantities, earlier_files):
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert [item["id"] for item in items] == list(range(1, len(items) + 1))
    counts: dict[str, int] = {}
    for item in items:
        assert item["split"] == path.stem.removeprefix("quantities_")
        assert item["draw"] == ("written" if item["source"] == "written" else "corpus")
        counts[item["source"]] = counts.get(item["source"], 0) + 1
        check_spans(item)
    assert counts == sources
    assert sum(len(item["quantities"]) for item in items) == quantities
    assert sum(len(item["not_quantities"]) for item in items) == not_quantities
    texts = [item["text"].strip() for item in items]
    assert len(set(texts)) == len(texts)
    earlier = set()
    for earlier_file in earlier_files:
        lines = earlier_file.read_text(encoding="utf-8").splitlines()
        earlier |= {json.loads(line)["text"].strip() for line in lines if line}
    assert not earlier & set(texts)  # no sentence of an earlier outside file


def check_spans(item: dict) -> None:
    """An outside gold item's quantities lie in order and apart, each its own text with a reduced value, and no
    span marked as no quantity overlaps one."""
    spans = [(q["start"], q["end"]) for q in item["quantities"]]
    assert spans == sorted(spans) and all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    for q in item["quantities"]:
        assert item["text"][q["start"] : q["end"]] == q["text"]
        assert str(Fraction(q["value"])) == q["value"]
    for span in item["not_quantities"]:
        assert item["text"][span["start"] : span["end"]] == span["text"]
        assert not any(span["start"] < q["end"] and q["start"] < span["end"] for q in item["quantities"])
