"""Dedupe on fresh families: the values a paraphrase says without a number ("One ballet class costs $12" -> "a
ballet class is $12", "1 mile" -> "each mile", "the three of them"), a sentence merged into another with its words
inflected ("Each fence took her 30 minutes to build" -> "each one took her 30 minutes"), and what still keeps two
problems apart ("he buys 1 cow"); the fresh-family file and the benchmark's scoring of it, against hand counts."""

import json
import sys
from pathlib import Path

import numpy as np

from mathgraph.tasks.search.dedupe import STRICT, DedupeSettings, _word_forms, decide, pair_evidence

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import dedupe_fresh as df  # noqa: E402


def evidence(text_a, text_b):
    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.graph_cache import parse_cached

    graph_a, graph_b = parse_cached([text_a, text_b])
    return pair_evidence(align_problems(graph_a, graph_b), graph_a, graph_b)


def test_one_of_something_said_with_an_article_or_each_is_no_new_value():
    lucia = (
        "She takes 2 hip-hop classes and 1 jazz class a week. One hip-hop class costs $10, and one jazz class costs "
        "$8. What do her classes cost?"
    )
    said = "She takes 2 hip-hop classes and 1 jazz class a week. A hip-hop class is $10 and a jazz class is $8. What do her classes cost?"
    e = evidence(lucia, said)
    assert [str(v) for v in e.only_one_side] == ["1", "1"] and [str(v) for v in e.implied] == ["1", "1"]
    assert decide(e) == (True, "same quantities, some said another way")
    assert decide(e, STRICT) == (False, "quantities")  # strict counts no value said another way
    pace = evidence(
        "Iggy runs 3 miles a day at a pace of 1 mile in 10 minutes. How many minutes does he run?",
        "Iggy runs 3 miles a day and he runs each mile in 10 minutes. How many minutes does he run?",
    )
    assert pace.only_one_side == (1,) and pace.implied == (1,) and decide(pace)[0]


def test_a_one_that_both_sides_say_with_an_article_is_a_new_value():
    cows = "A farmer gets 5 liters of milk a day from a cow. He has 3 cows{}. How many more cows does he need for 25 liters?"
    e = evidence(cows.format(""), cows.format(" and he buys 1 cow"))
    assert e.only_one_side == (1,) and e.implied == ()  # "from a cow" is on both sides: it explains nothing
    assert decide(e, DedupeSettings(small_numbers=2)) == (False, "quantities")  # a digit is no small word


def test_a_count_of_the_people_named_is_no_new_value():
    cards = "Janet has 9 more cards than Brenda. Mara has twice as many cards as Janet. How many cards do {} have?"
    e = evidence(cards.format("they"), cards.format("the three of them"))
    assert e.only_one_side == (3,) and e.implied == (3,) and decide(e)[0]
    bags = evidence(cards.format("they"), cards.format("the three bags of them"))  # not "the N of them"
    assert bags.implied == ()


def test_a_sentence_merged_into_another_brings_no_new_words_when_they_are_inflections():
    assert _word_forms("fences") >= {"fences", "fence"} and "build" in _word_forms("building")
    assert "use" in _word_forms("used") and _word_forms("bus") == {"bus"}  # too short to lose its ending
    e = evidence(
        "Abigail built 10 fences. Each fence took her 30 minutes to build. If she builds fences for 8 hours, how many fences would she have built?",
        "Abigail has built 10 fences, and each one took her 30 minutes. If she keeps building fences for 8 hours, how many fences will she have built?",
    )
    assert e.one_sided_new_words < 2 and decide(e)[0]
    distraction = evidence(
        "Abigail built 10 fences. How many fences did she build?",
        "Abigail built 10 fences. Her garden has 4 roses. How many fences did she build?",
    )
    assert not decide(distraction)[0]


def test_the_fresh_families_file_is_whole_and_split_in_halves():
    families = df.read_families(df.FAMILIES)
    splits = [f["split"] for f in families]
    assert len(families) == 120 and [splits.count(s) for s in ("dev", "test", "test2")] == [40, 40, 40]
    assert len({f["gsm8k_train_index"] for f in families}) == 120
    for f in families:
        kinds = [v["kind"] for v in f["variants"]]
        assert kinds[:3] == ["paraphrase", "numerical substitution", "distraction insertion"]
        assert kinds[3] in ("reversing operation", "adding operation")
        assert [v["same_problem"] for v in f["variants"]] == [True, False, False, False]
        assert len({f["seed"], *(v["text"] for v in f["variants"])}) == 5
    train = (
        [json.loads(line)["question"] for line in open(REPO.parent / "shared/data/gsm8k/train.jsonl")]
        if (REPO.parent / "shared/data/gsm8k/train.jsonl").exists()
        else None
    )
    if train is not None:
        assert all(train[f["gsm8k_train_index"]] == f["seed"] for f in families)


def test_fresh_rows_and_scores_count_pairs_by_hand():
    family = {
        "family": 0,
        "split": "dev",
        "seed": "Tom has 3 apples. How many apples?",
        "variants": [
            {"kind": "paraphrase", "same_problem": True, "text": "Tom owns 3 apples. What number of apples?"},
            {"kind": "numerical substitution", "same_problem": False, "text": "Tom has 4 apples. How many apples?"},
        ],
    }
    rows = df.fresh_rows([family], np.random.default_rng(0))
    assert [r["kind"] for r in rows] == ["seed", "formatting copy", "paraphrase", "numerical substitution"]
    assert [r["origin"] for r in rows] == ["fresh 0"] * 3 + ["fresh 0: numerical substitution"]
    items = rows + [{"text": "x", "origin": "other", "kind": "gsm8k", "family": "other"}]
    scored = {0, 1, 2, 3}
    # seed, copy and the substitution grouped with a distractor; the paraphrase missed
    counts = df.score_fresh(np.array([0, 0, 2, 0, 0]), items, scored)
    # grouped pairs touching the family: (0,1) (0,3) (0,4) (1,3) (1,4) (3,4); positive: (0,1) (0,2) (1,2)
    assert (counts["predicted"], counts["positive"], counts["correct"]) == (6, 3, 1)
    assert counts["recall_by_kind"] == {"formatting copy ~ seed": [1, 1], "paraphrase ~ seed or its copy": [0, 2]}
    assert counts["merged_by_kind"]["numerical substitution"] == [1, 1] and counts["merged_by_kind"]["paraphrase"] == [
        0,
        1,
    ]
    assert counts["per_family"] == {"fresh 0": [6, 3, 1]}
    baseline = df.score_fresh(None, items, scored, {(0, 1), (0, 2)})
    assert (baseline["predicted"], baseline["correct"]) == (2, 2)
    similarity = np.array([[1.0, 0.9, 0.4], [0.9, 1.0, 0.8], [0.4, 0.8, 1.0]])
    assert df.near_pairs(similarity, {0}, 0.5) == [(0, 1, 0.9)]
    assert df.near_pairs(similarity, {0, 2}, 0.5) == [(0, 1, 0.9), (1, 2, 0.8)]


def test_an_edited_copy_whose_number_counts_another_word_of_the_problem_is_another_problem():
    misses = "There are three times as many misses as hits in a game. If the number of {} is 50, how many hits and misses are there?"
    e = evidence(misses.format("misses"), misses.format("hits"))
    assert e.values_matched == 2 and not e.only_one_side and e.kept_share == 0.5
    assert e.swapped_words and decide(e) == (False, "words swapped")
    sam = evidence(
        "Sam ran 3 miles on Monday, Wednesday and Friday. Sam ran 5 miles on Tuesday. How many miles did Sam run?",
        "Sam ran several miles on Monday, 3 miles on Wednesday and Friday. Sam ran 5 miles on Tuesday. How many miles did Sam run?",
    )
    assert sam.swapped_words and not decide(sam)[0]
    reworded = evidence(
        "Tom has 12 apples. He eats 3 of them. How many apples does Tom have left?",
        "Tom has 12 apples. He eats 3 of the apples. How many apples does Tom have left?",
    )
    assert not reworded.swapped_words and decide(reworded)[0]  # a word added, none moved


def test_equal_values_that_measure_different_things_are_other_problems():
    from mathgraph.tasks.search.dedupe import _dimension

    assert [_dimension(u) for u in ("$", "dollars", "feet", "years", "Hours", "cups", "pounds", "packs")] == [
        "money",
        "money",
        "length",
        "time",
        "time",
        "volume",
        None,  # money or mass
        None,
    ]
    e = evidence(
        "Ann is 4 years older than Ben. Ben is 10. How old is Ann?",
        "Ann is 4 feet taller than Ben. Ben is 10. How tall is Ann?",
    )
    assert e.dimensions_differ == 1 and decide(e) == (False, "units")
    same = evidence("A rope is 6 feet long. How long are 2 ropes?", "A rope is 6 foot long. How long are 2 ropes?")
    assert same.dimensions_differ == 0 and decide(same)[0]


def test_values_that_trade_roles_in_otherwise_equal_sentences_make_another_problem():
    sale = "At a garage sale, Tish bought {} items. The magnet cost three times the sticker. If the magnet cost ${}, how much did the sticker cost?"
    e = evidence(sale.format(4, 3), sale.format(3, 4))
    assert e.values_matched == 3 and not e.only_one_side  # the same values, as multisets
    assert e.values_swapped == 2 and decide(e) == (False, "values swapped")
    # a rewording the alignment pairs by position is no swap: both speeds and the lead keep their roles
    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.graph_cache import parse_cached

    chase = parse_cached(
        [
            "Bob is 75 miles ahead of Tom, driving 55 miles per hour. Tom is driving 70 miles per hour. How long "
            "will it take Tom to catch up with Bob?",
            "Tom is trailing Bob by 75 miles. If Bob's speed is 55 miles per hour and Tom's speed is 70 miles per "
            "hour, how many hours will it take for Tom to overtake Bob?",
        ]
    )
    alignment = align_problems(*chase)
    assert [m.kind for m in alignment.quantities].count("swapped") == 2  # what the alignment alone would say
    assert pair_evidence(alignment, *chase).values_swapped == 0
