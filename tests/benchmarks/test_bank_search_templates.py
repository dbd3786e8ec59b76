"""The bank search benchmark's template-made variants, its query file's splits, and its choice of fusion
weights, on small hand-made banks."""

import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bank_search  # noqa: E402
from bank_search_templates import CLAUSES, FIRST_NAMES, names_in, template_variant, template_variants  # noqa: E402

SEED = (
    "Janet has 16 ducks. She sells 3 eggs to Mark for $2 each. Mark pays 2 dollars more than Janet asks. "
    "How many dollars does Janet get?"
)


def numbers(text):
    return re.findall(r"\d+(?:\.\d+)?", text)


def test_a_variant_has_new_names_new_numbers_and_added_clauses():
    variant = template_variant(SEED, random.Random(1))
    assert "Janet" not in variant and "Mark" not in variant
    names = names_in(variant)
    assert len(names) >= 2 and all(name in FIRST_NAMES for name in names)
    # the seed's sentences, renamed and renumbered, are all there, in order; one or two clauses added
    sentences = re.split(r"(?<=[.!?])\s+", variant)
    added = [s for s in sentences if any(re.fullmatch(_pattern(c), s) for c in CLAUSES)]
    assert 1 <= len(added) <= 2
    kept = [s for s in sentences if s not in added]
    assert len(kept) == 4 and kept[-1].startswith("How many dollars does")
    # every number of the seed changed, a repeated one the same way ("2" twice -> one new value, twice)
    seed_numbers = numbers(SEED)
    new_numbers = numbers(" ".join(kept))
    assert len(new_numbers) == len(seed_numbers) == 4
    assert all(a != b for a, b in zip(seed_numbers, new_numbers))
    assert new_numbers[2] == new_numbers[3]


def _pattern(clause):
    return re.escape(clause).replace(r"\{name\}", "[A-Z][a-z]+").replace(r"\{n\}", r"\d+")


def test_variants_are_seeded_and_different():
    first = template_variants(SEED, "seed-001", 5)
    assert first == template_variants(SEED, "seed-001", 5)
    assert len(set(first)) == 5 and SEED not in first
    assert first != template_variants(SEED, "seed-002", 5)


def test_decimals_and_thousands_keep_their_form():
    variant = template_variant("It costs 2.50 dollars and weighs 1,200 grams.", random.Random(3))
    assert re.search(r"\b\d+\.\d{2}\b", variant) and re.search(r"\b\d{1,3},\d{3}\b|\b\d{3}\b", variant)
    assert "2.50" not in variant and "1,200" not in variant


def test_the_math_queries_file_has_splits_and_kinds():
    rows = [json.loads(line) for line in open(bank_search.MATH_QUERIES, encoding="utf-8")]
    assert len({row["id"] for row in rows}) == len(rows) == 160
    counts = {}
    for row in rows:
        counts[row["kind"], row["split"]] = counts.get((row["kind"], row["split"]), 0) + 1
        assert row["query"].strip() != row["original"].strip()
    assert counts == {
        ("numbers", "dev"): 26,
        ("wording", "dev"): 25,
        ("both", "dev"): 25,
        ("variables", "dev"): 10,
        ("numbers", "test"): 18,
        ("wording", "test"): 18,
        ("both", "test"): 18,
        ("variables", "test"): 20,
    }


def _bank(kinds):
    queries = [{"id": f"q{i}", "kind": kind, "text": "", "answers": [i]} for i, kind in enumerate(kinds)]
    return bank_search.Bank("toy", ["r0", "r1", "r2"], queries, tuple(dict.fromkeys(kinds)), {})


def test_fused_ranks_and_the_choice_of_weights():
    bank = _bank(["a", "b", "b"])
    # 3 queries x 3 rows; query i's answer is row i
    dense = np.array([[0.9, 0.1, 0.0], [0.9, 0.8, 0.0], [0.0, 0.9, 0.8]])
    sparse = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    skeleton = np.array([[0.2, 0.9, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    scores = {"dense": dense, "sparse": sparse, "skeleton": skeleton}
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.0) == [1, 2, 2]
    # skeleton 0.5: query 0 by hand, z(dense) = (1.407, -0.579, -0.828), z(skeleton) = (-0.432, 1.382, -0.950):
    # row 0 0.5*1.407-0.5*0.432 = 0.488 > row 1 0.5*(-0.579)+0.5*1.382 = 0.402 -> rank 1; queries 1, 2 -> rank 1
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.5) == [1, 1, 1]
    # skeleton 0.9: query 0's row 1 wins on the skeleton -> rank 2, below the sentence encoder alone on kind a
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.9) == [2, 1, 1]
    choice = bank_search.choose_weights([bank], [scores])
    chosen = choice["chosen"]
    grid = {(e["sparse"], e["skeleton"]): e for e in choice["grid"]}
    assert not grid[(0.0, 0.9)]["feasible"] and grid[(0.0, 0.5)]["feasible"]
    assert grid[(chosen["sparse"], chosen["skeleton"])]["mean_r1"] == 1.0
    # ties broken by the best MRR, then the smallest total weight
    best = [e for e in choice["grid"] if e["feasible"] and e["mean_r1"] == 1.0]
    assert chosen["sparse"] + chosen["skeleton"] == pytest.approx(min(e["sparse"] + e["skeleton"] for e in best))


def test_the_skeleton_confidence_keeps_what_the_sentence_encoder_finds():
    bank = _bank(["a", "b", "a"])
    dense = np.array([[0.9, 0.5, 0.0], [0.9, 0.8, 0.0], [0.0, 0.5, 0.55]])
    sparse = np.zeros((3, 3))
    # queries 0 and 2: a weak skeleton match (best 0.3, 0.35) on a wrong row; query 1: its own skeleton exactly
    skeleton = np.array([[0.0, 0.3, 0.0], [0.0, 1.0, 0.0], [0.0, 0.35, 0.0]])
    scores = {"dense": dense, "sparse": sparse, "skeleton": skeleton}
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.0) == [1, 2, 1]
    # by hand, query 0: z(dense) = (1.177, 0.090, -1.268), z(skeleton) = (-0.707, 1.414, -0.707); skeleton 0.5 for
    # every query: row 1 0.752 > row 0 0.235 -> rank 2; query 1 gains (row 1 0.997 > row 0 0.060)
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.5) == [2, 1, 2]
    # confidence (0.4, 1.0): queries 0 and 2 (best 0.3, 0.35) get no skeleton weight, query 1 (best 1.0) all of it
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.5, (0.4, 1.0)) == [1, 1, 1]
    # one skeleton weight for every query either loses query 2 (weight above 0.087) or misses query 1 (below 0.105)
    choice = bank_search.choose_weights([bank], [scores], (None, (0.4, 1.0)))
    assert choice["chosen"] == {
        "sparse": 0.0,
        "skeleton": 0.2,
        "confidence": (0.4, 1.0),
        "fusion": "standardised",
        "numbers": 0.0,
    }
    fixed = [e for e in choice["grid"] if e["confidence"] is None and e["skeleton"] > 0]
    assert not any(e["feasible"] and e["mean_r1"] == 1.0 for e in fixed)


def test_the_expected_worst_margin():
    alone = np.array([True, False, True, True])
    # no query lost: 0 whatever the resample
    assert bank_search.expected_worst_margin(np.array([True, True, True, True]), alone, ["a", "b", "a", "a"]) == 0.0
    # kind a loses its query 0 for sure: its margin is -1 in every resample
    assert bank_search.expected_worst_margin(np.array([False, True]), np.array([True, False]), ["a", "b"]) == -1.0
    # kind a: one query lost, one won; resamples of 2: mean -1 a quarter of the time, else 0 or +1 (kind b: 0)
    value = bank_search.expected_worst_margin(
        np.array([False, True, True]), np.array([True, False, True]), ["a", "a", "b"]
    )
    assert value == pytest.approx(-0.25, abs=0.04)


def test_the_third_math_queries_file_is_test_only_and_new():
    first = [json.loads(line) for line in open(bank_search.MATH_QUERIES, encoding="utf-8")]
    third = [json.loads(line) for line in open(bank_search.MATH_QUERIES_THIRD, encoding="utf-8")]
    assert len(third) == 45 and {row["split"] for row in third} == {"test"}
    counts = {}
    for row in third:
        counts[row["kind"]] = counts.get(row["kind"], 0) + 1
        assert row["query"].strip() != row["original"].strip()
    assert counts == {"numbers": 15, "both": 15, "wording": 15}
    ids = [row["id"] for row in third]
    assert ids == [f"math-q{i}" for i in range(160, 205)]
    assert not set(ids) & {row["id"] for row in first}


def test_fused_ranks_with_cosine_fusion_and_the_choice_of_fusion():
    bank = _bank(["a", "b", "b"])
    dense = np.array([[0.9, 0.8, 0.0], [0.7, 0.6, 0.0], [0.0, 0.5, 0.55]])
    sparse = np.zeros((3, 3))
    skeleton = np.array([[0.1, 0.3, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    scores = {"dense": dense, "sparse": sparse, "skeleton": skeleton}
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.0) == [1, 2, 1]
    # cosine fusion, skeleton 0.3 for every query, by hand: query 0 row 0 0.7*0.9+0.3*0.1 = 0.66 > row 1
    # 0.7*0.8+0.3*0.3 = 0.65 -> rank 1; query 1 row 1 0.42+0.30 = 0.72 > row 0 0.49 -> rank 1
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.3, None, "cosine") == [1, 1, 1]
    # standardised, the same weights: query 0's z(skeleton) (-0.267, 1.336, -1.069) outweighs its small dense gap,
    # z(dense) (0.828, 0.579, -1.407): row 0 0.7*0.828-0.3*0.267 = 0.499 < row 1 0.7*0.579+0.3*1.336 = 0.806 -> rank 2
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.3, None, "standardised") == [2, 1, 1]
    choice = bank_search.choose_weights([bank], [scores], (None,), ("standardised", "cosine"))
    grid = {(e["fusion"], e["sparse"], e["skeleton"]): e for e in choice["grid"]}
    assert grid[("cosine", 0.0, 0.3)]["feasible"] and not grid[("standardised", 0.0, 0.3)]["feasible"]
    assert ("cosine", 0.0, 0.0) not in grid  # without the skeleton channel the fusions are not told apart
    chosen = choice["chosen"]
    assert grid[(chosen["fusion"], chosen["sparse"], chosen["skeleton"])]["mean_r1"] == 1.0


def new_queries(path, earlier_paths, split: str, ids: range) -> list[dict]:
    """The rewrites of ``path``, checked: all of ``split``, ids ``math-q{i}`` for ``ids`` in order, each query not
    its original, and no original that an earlier file's query has (dev or test)."""
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    earlier = [json.loads(line) for earlier_path in earlier_paths for line in open(earlier_path, encoding="utf-8")]
    assert {row["split"] for row in rows} == {split}
    assert [row["id"] for row in rows] == [f"math-q{i}" for i in ids]
    assert all(row["query"].strip() != row["original"].strip() for row in rows)
    assert not {row["index"] for row in rows} & {row["index"] for row in earlier}
    return rows


def test_the_fourth_math_queries_file_is_dev_only_and_new():
    earlier = (bank_search.MATH_QUERIES, bank_search.MATH_QUERIES_THIRD)
    fourth = new_queries(bank_search.MATH_QUERIES_FOURTH, earlier, "dev", range(205, 249))
    assert Counter(row["kind"] for row in fourth) == {"variables": 12, "numbers": 10, "both": 12, "wording": 10}


def test_the_fifth_math_queries_file_is_test_only_and_new():
    earlier = (bank_search.MATH_QUERIES, bank_search.MATH_QUERIES_THIRD, bank_search.MATH_QUERIES_FOURTH)
    fifth = new_queries(bank_search.MATH_QUERIES_FIFTH, earlier, "test", range(249, 315))
    assert Counter(row["kind"] for row in fifth) == {"variables": 6, "numbers": 20, "both": 20, "wording": 20}
    assert len({row["index"] for row in fifth}) == len(fifth)  # no original twice


def test_the_sixth_math_queries_file_is_dev_only_of_problems_with_siblings():
    earlier = (
        bank_search.MATH_QUERIES,
        bank_search.MATH_QUERIES_THIRD,
        bank_search.MATH_QUERIES_FOURTH,
        bank_search.MATH_QUERIES_FIFTH,
    )
    sixth = new_queries(bank_search.MATH_QUERIES_SIXTH, earlier, "dev", range(315, 345))
    assert [row["kind"] for row in sixth] == ["wording"] * 14 + ["numbers"] * 8 + ["both"] * 8
    # a wording rewrite keeps its original's numbers: the digit runs of both are the same multiset in most
    same = sum(
        sorted(re.findall(r"\d+", row["query"])) == sorted(re.findall(r"\d+", row["original"]))
        for row in sixth
        if row["kind"] == "wording"
    )
    assert same >= 10
    # and a numbers rewrite changes them
    assert all(
        sorted(re.findall(r"\d+", row["query"])) != sorted(re.findall(r"\d+", row["original"]))
        for row in sixth
        if row["kind"] == "numbers"
    )
    # the sixth set is read by default, the fifth (test) is not
    defaults = bank_search.arguments(["--work", "w"]).queries.split(",")
    assert str(bank_search.MATH_QUERIES_SIXTH) in defaults and str(bank_search.MATH_QUERIES_FIFTH) not in defaults


# the MATH query files before the seventh, in the order they were written
EARLIER_THAN_SEVENTH = (
    bank_search.MATH_QUERIES,
    bank_search.MATH_QUERIES_THIRD,
    bank_search.MATH_QUERIES_FOURTH,
    bank_search.MATH_QUERIES_FIFTH,
    bank_search.MATH_QUERIES_SIXTH,
)


def test_the_seventh_and_eighth_math_queries_files_are_new_dev_and_test_sets():
    earlier = EARLIER_THAN_SEVENTH
    seventh = new_queries(bank_search.MATH_QUERIES_SEVENTH, earlier, "dev", range(345, 381))
    assert [row["kind"] for row in seventh] == ["variables"] * 6 + ["numbers"] * 10 + ["both"] * 12 + ["wording"] * 8
    eighth = new_queries(
        bank_search.MATH_QUERIES_EIGHTH, (*earlier, bank_search.MATH_QUERIES_SEVENTH), "test", range(381, 461)
    )
    assert [row["kind"] for row in eighth] == ["variables"] * 20 + ["numbers"] * 20 + ["both"] * 20 + ["wording"] * 20
    for rows in (seventh, eighth):
        assert len({row["index"] for row in rows}) == len(rows)  # no original twice
        digits = {
            row["id"]: sorted(re.findall(r"\d+", row["query"])) == sorted(re.findall(r"\d+", row["original"]))
            for row in rows
        }
        # numbers and both rewrites change the digits; variables rewrites keep them
        assert not any(digits[row["id"]] for row in rows if row["kind"] in ("numbers", "both"))
        assert all(digits[row["id"]] for row in rows if row["kind"] == "variables")
    # the seventh set (dev) is read by default, the eighth (test) is not
    defaults = bank_search.arguments(["--work", "w"]).queries.split(",")
    assert str(bank_search.MATH_QUERIES_SEVENTH) in defaults and str(bank_search.MATH_QUERIES_EIGHTH) not in defaults


def test_fused_ranks_over_an_approximate_indexs_pool():
    bank = bank_search.Bank(
        "toy", ["r0", "r1", "r2", "r3"], [{"id": "q0", "kind": "a", "text": "", "answers": [1]}], ("a",), {}
    )
    dense = np.array([[0.9, 0.8, 0.1, 0.0]])
    skeleton = np.array([[0.2, 0.6, 0.0, 0.9]])
    scores = {"dense": dense, "sparse": np.zeros((1, 4)), "skeleton": skeleton}
    # every row, cosine fusion, skeleton 0.4: 0.62, 0.72, 0.06, 0.36 -> row 1 first
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.4, None, "cosine") == [1]
    # the 2 rows of the best cosines (rows 0 and 1): the same scores, the same rank; row 3 is left out
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.4, None, "cosine", pool=2) == [1]
    # standardised over every row, by hand: z(dense) (1.116, 0.868, -0.868, -1.116), z(skeleton) (-0.645, 0.501,
    # -1.217, 1.361): row 1 0.6*0.868+0.4*0.501 = 0.721 > row 0 0.6*1.116-0.4*0.645 = 0.412 -> rank 1
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.4, None, "standardised") == [1]
    # over the 2 rows each channel's z is (1, -1) or (-1, 1): row 0 0.6-0.4 = 0.2 > row 1 -0.2 -> rank 2
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.4, None, "standardised", pool=2) == [2]
    # an answer outside the pool is not found
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.4, None, "cosine", pool=1) == [None]


def test_the_numbers_bonus_in_fused_ranks_and_its_choice():
    bank = _bank(["wording", "numbers"])
    # query 0 (reworded, answer row 0) keeps row 0's numbers, and row 1 (its sibling) reads a little closer;
    # query 1 (new numbers, answer row 1) has the numbers of row 2, a sibling that holds the new numbers
    dense = np.array([[0.80, 0.82, 0.0], [0.0, 0.6333, 0.5]])
    skeleton = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    numbers = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    scores = {"dense": dense, "sparse": np.zeros((2, 3)), "skeleton": skeleton, "numbers": numbers}
    cosine = (0.0, 0.7, (0.0, 1.0), "cosine")
    # by hand, skeleton weight 0.7 (best skeleton 1): query 0 row 0 0.3*0.80+0.7 = 0.940 < row 1 0.946 -> rank 2;
    # query 1 row 1 0.3*0.6333+0.7 = 0.890 > row 2 0.3*0.5+0.7 = 0.850 -> rank 1, a lead of 0.040
    leads = []
    assert bank_search.fused_ranks(bank, scores, *cosine, leads=leads) == [2, 1]
    assert leads == pytest.approx([-0.006, 0.040], abs=1e-4)
    # a bonus of 0.01 on the rows with the query's numbers: query 0 row 0 0.950 > 0.946; query 1 row 2 0.860 < 0.890
    leads = []
    assert bank_search.fused_ranks(bank, scores, *cosine, numbers=0.01, leads=leads) == [1, 1]
    assert leads == pytest.approx([0.004, 0.030], abs=1e-4)
    # a bonus of 0.05 lifts query 1's row 2 (0.900) above its answer (0.890): a query with new numbers lost
    assert bank_search.fused_ranks(bank, scores, *cosine, numbers=0.05) == [1, 2]
    # over a pool of the 2 best cosines the same (cosine fusion: a row's score is its own)
    assert bank_search.fused_ranks(bank, scores, *cosine, pool=2, numbers=0.01) == [1, 1]
    choice = bank_search.choose_weights(
        [bank], [scores], ((0.0, 1.0),), ("cosine",), (None,), (0.0, 0.01, 0.02, 0.05), [(0.0, 0.0), (0.0, 0.7)]
    )
    grid = {(e["skeleton"], e["numbers"]): e for e in choice["grid"]}
    assert not grid[(0.7, 0.05)]["feasible"]  # loses query 1, which the sentence encoder finds
    assert grid[(0.7, 0.0)]["mean_r1"] == 0.5 and grid[(0.7, 0.01)]["mean_r1"] == 1.0
    # 0.01 and 0.02 find both; their leads sum the same (0.004 + 0.030, 0.014 + 0.020)
    assert grid[(0.7, 0.01)]["soft_r1"] == pytest.approx(grid[(0.7, 0.02)]["soft_r1"])
    assert grid[(0.7, 0.01)]["soft_r1"] == pytest.approx((0.004 / 0.05 + 0.030 / 0.05) / 2, abs=1e-3)
    # the sentence encoder with a bonus of 0.05 and no skeleton finds both too, by more: query 0 0.85 against
    # 0.82 (lead 0.03), query 1 0.6333 against 0.55 (0.083, clipped to 0.05): soft R@1 (0.6 + 1) / 2 = 0.8
    assert grid[(0.0, 0.05)]["mean_r1"] == 1.0
    assert grid[(0.0, 0.05)]["soft_r1"] == pytest.approx(0.8, abs=1e-3)
    assert choice["chosen"] == {
        "sparse": 0.0,
        "skeleton": 0.0,
        "confidence": (0.0, 1.0),
        "fusion": "cosine",
        "numbers": 0.05,
    }
    with pytest.raises(ValueError, match="must hold"):
        bank_search.choose_weights([bank], [scores], grid=[(0.0, 0.7)])


def test_the_encoder_lead_in_fused_ranks_and_its_choice():
    bank = _bank(["a", "b", "b"])
    # query 0: the encoder leads by 0.8 with its answer; query 1: by 0.15 with a wrong row; query 2: by 0.15, right
    dense = np.array([[0.9, 0.1, 0.0], [0.9, 0.75, 0.0], [0.0, 0.75, 0.9]])
    skeleton = np.array([[0.2, 0.9, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    scores = {"dense": dense, "sparse": np.zeros((3, 3)), "skeleton": skeleton}
    cosine = (0.0, 0.7, (0.0, 1.0), "cosine")
    # by hand, query 0's skeleton weight 0.7 * 0.9 = 0.63: row 0 0.37*0.9+0.63*0.2 = 0.459 < row 1 0.37*0.1+0.63*0.9
    # = 0.604: rank 2; queries 1 and 2 (weight 0.7): their answers 0.3*0.75+0.7 = 0.925 and 0.3*0.9+0.7 = 0.97 first
    assert bank_search.fused_ranks(bank, scores, *cosine) == [2, 1, 1]
    # a lead of 0.5 keeps query 0's encoder row first; the leads of 0.15 are too small to change queries 1 and 2
    leads = []
    assert bank_search.fused_ranks(bank, scores, *cosine, leads=leads, encoder_lead=0.5) == [1, 1, 1]
    assert leads[0] == pytest.approx(1e-6)  # raised just above the best other row
    # a lead of 0.125 also keeps query 1's encoder row (row 0, wrong) first
    assert bank_search.fused_ranks(bank, scores, *cosine, encoder_lead=0.125) == [1, 2, 1]
    # without the skeleton there is nothing to fall back from: the encoder's ranks
    assert bank_search.fused_ranks(bank, scores, 0.0, 0.0, encoder_lead=0.1) == [1, 2, 1]
    choice = bank_search.choose_encoder_lead([bank], [scores], (0.05, 0.1, 0.2, 0.5, 0.85))
    # leads 0.8, 0.15 (wrong), 0.15: 0.2 is the smallest lead of the grid above every wrong one
    assert choice["largest_wrong_lead"] == pytest.approx(0.15)
    assert choice["chosen"] == 0.2
    assert [(e["queries"], e["wrong"]) for e in choice["grid"]] == [(3, 1), (3, 1), (1, 0), (1, 0), (0, 0)]
    # no safe lead on a grid below the wrong one's: None
    assert bank_search.choose_encoder_lead([bank], [scores], (0.05,))["chosen"] is None


# 120 queries each, from q461
LATER_TEST_SETS = (
    "MATH_QUERIES_NINTH",
    "MATH_QUERIES_TENTH",
    "MATH_QUERIES_ELEVENTH",
    "MATH_QUERIES_TWELFTH",
    "MATH_QUERIES_THIRTEENTH",
    "MATH_QUERIES_FOURTEENTH",
)


@pytest.mark.parametrize("number", range(len(LATER_TEST_SETS)), ids=LATER_TEST_SETS)
def test_a_later_math_queries_file_is_a_new_test_set(number):
    earlier_sets = [getattr(bank_search, name) for name in LATER_TEST_SETS[:number]]
    earlier = (*EARLIER_THAN_SEVENTH, bank_search.MATH_QUERIES_SEVENTH, bank_search.MATH_QUERIES_EIGHTH, *earlier_sets)
    path = getattr(bank_search, LATER_TEST_SETS[number])
    first = 461 + 120 * number
    rows = new_queries(path, earlier, "test", range(first, first + 120))
    assert [row["kind"] for row in rows] == ["variables"] * 30 + ["numbers"] * 30 + ["both"] * 30 + ["wording"] * 30
    assert len({row["index"] for row in rows}) == len(rows)  # no original twice
    # a test set: not read by default
    assert str(path) not in bank_search.arguments(["--work", "w"]).queries.split(",")
