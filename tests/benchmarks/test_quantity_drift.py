"""quantity_drift reads problems with an earlier commit's reader, in its own process, not with the working tree's."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import quantity_drift  # noqa: E402

VERSION_7 = "75d9fae"  # parser version 7: it read "one of a kind" as the number 1


def test_an_earlier_commit_reads_with_its_own_rules(tmp_path):
    texts = ["She's one of a kind.", "He bought 3 apples."]
    earlier = quantity_drift.read_quantities(
        texts, quantity_drift.export_revision(VERSION_7, tmp_path / "earlier"), tmp_path
    )
    now = quantity_drift.read_quantities(texts, None, tmp_path)
    assert earlier["parser_version"] == 7 and now["parser_version"] > 7
    assert earlier["readings"] == [[["one", "1"]], [["3", "3"]]]
    assert now["readings"] == [[], [["3", "3"]]]


def test_the_draw_is_seeded_and_takes_every_problem_when_there_are_fewer(tmp_path):
    from smoke import SMOKE_DATA

    first = quantity_drift.draw_problems(SMOKE_DATA, 5, seed=3)
    assert first == quantity_drift.draw_problems(SMOKE_DATA, 5, seed=3) and len(first) == 5
    everything = quantity_drift.draw_problems(SMOKE_DATA, 10_000, seed=3)
    assert len(everything) == len(set(everything)) < 10_000
