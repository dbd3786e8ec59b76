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


DRAWN_40 = {"gsm8k": 12, "math": 12, "gsmplus": 8, "processbench": 8}
DRAWN_20 = {"gsm8k": 6, "math": 6, "gsmplus": 4, "processbench": 4}
# part -> (items per source, gold quantities, spans that are not quantities)
LATER_PARTS = {
    2: ({"gsm8k": 40, "math": 40, "gsmplus": 30, "processbench": 30, "written": 32}, 363, 14),
    3: ({"gsm8k": 30, "math": 30, "gsmplus": 20, "processbench": 20, "written": 55}, 359, 27),
    4: ({**DRAWN_40, "written": 90}, 258, 36),
    5: ({**DRAWN_40, "written": 90}, 207, 42),
    6: ({**DRAWN_20, "written": 60}, 125, 31),
    7: ({**DRAWN_20, "written": 70}, 154, 33),
    8: ({**DRAWN_20, "written": 70}, 161, 47),
    9: ({**DRAWN_20, "written": 70}, 178, 22),
    10: ({**DRAWN_20, "written": 70}, 161, 24),
    11: ({**DRAWN_20, "written": 70}, 145, 21),
    12: ({**DRAWN_20, "written": 70}, 132, 28),
    13: ({**DRAWN_20, "written": 70}, 125, 23),
    14: ({**DRAWN_20, "written": 70}, 192, 20),
    17: ({**DRAWN_20, "written": 70}, 137, 22),
    18: ({**DRAWN_20, "written": 70}, 152, 27),
    19: ({**DRAWN_20, "written": 70}, 140, 25),
    20: ({**DRAWN_20, "written": 70}, 130, 27),
    21: ({**DRAWN_20, "written": 70}, 127, 20),
    22: ({**DRAWN_20, "written": 70}, 182, 15),
    23: ({**DRAWN_20, "written": 70}, 125, 20),
    24: ({**DRAWN_20, "written": 70}, 122, 18),
    25: ({**DRAWN_20, "written": 70}, 130, 21),
    26: ({**DRAWN_20, "written": 70}, 127, 19),
    27: ({**DRAWN_20, "written": 70}, 120, 19),
    28: ({**DRAWN_20, "written": 70}, 145, 17),
    29: ({**DRAWN_20, "written": 70}, 130, 20),
    30: ({**DRAWN_20, "written": 70}, 118, 16),
    31: ({**DRAWN_20, "written": 70}, 133, 23),
    32: ({**DRAWN_20, "written": 70}, 147, 20),
    33: ({**DRAWN_20, "written": 70}, 118, 15),
    34: ({**DRAWN_20, "written": 70}, 106, 20),
    35: ({**DRAWN_20, "written": 70}, 111, 19),
    36: ({**DRAWN_20, "written": 70}, 128, 17),
    37: ({**DRAWN_20, "written": 70}, 117, 16),
    38: ({**DRAWN_20, "written": 70}, 130, 12),
    39: ({**DRAWN_20, "written": 70}, 133, 12),
    40: ({**DRAWN_20, "written": 70}, 109, 16),
    41: ({**DRAWN_20, "written": 70}, 131, 14),
    42: ({**DRAWN_20, "written": 70}, 113, 16),
    43: ({**DRAWN_20, "written": 70}, 100, 13),
    44: ({**DRAWN_20, "written": 70}, 176, 30),
    45: ({**DRAWN_20, "written": 70}, 167, 23),
    46: ({**DRAWN_20, "written": 70}, 167, 24),
    47: ({**DRAWN_20, "written": 70}, 166, 29),
    48: ({**DRAWN_20, "written": 70}, 191, 23),
    49: ({**DRAWN_20, "written": 70}, 193, 22),
    50: ({**DRAWN_20, "written": 70}, 179, 21),
    51: ({**DRAWN_20, "written": 70}, 173, 26),
    52: ({**DRAWN_20, "written": 70}, 159, 25),
    53: ({**DRAWN_20, "written": 70}, 180, 26),
    54: ({**DRAWN_20, "written": 70}, 203, 25),
    55: ({**DRAWN_20, "written": 70}, 203, 34),
    56: ({**DRAWN_20, "written": 70}, 183, 32),
    57: ({**DRAWN_20, "written": 70}, 197, 24),
    58: ({**DRAWN_20, "written": 70}, 214, 23),
    59: ({**DRAWN_20, "written": 70}, 216, 18),
    60: ({**DRAWN_20, "written": 70}, 233, 18),
    61: ({**DRAWN_20, "written": 70}, 220, 13),
}


def later_part(number: int) -> Path:
    return REPO / "benchmarks" / "data" / f"quantities_heldout{number}.jsonl"


@pytest.mark.parametrize("number", list(LATER_PARTS), ids=[f"heldout{n}" for n in LATER_PARTS])
def test_a_later_heldout_file_is_consistent_and_new(number):
    sources, quantities, not_quantities = LATER_PARTS[number]
    path = later_part(number)
    earlier_files = (OUTSIDE, *(later_part(n) for n in LATER_PARTS if n < number))
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
