"""Near-duplicates in a bank: copies that differ in formatting, reworded copies with the same numbers
and question, and problems with renamed variables grouped; other numbers, numbers written another way, formulas,
questions or added sentences kept apart; complete linkage never chains two problems through a third;
`mathgraph dedupe` over the bank formats, with --explain and --strict."""

import csv
import hashlib
import json
from dataclasses import replace

import numpy as np
import pytest

from mathgraph.cli import main
from mathgraph.tasks.search.dedupe import (
    STRICT,
    DedupeSettings,
    canonical_text,
    complete_linkage,
    copy_groups,
    decide,
    find_duplicates,
    group_ids,
    pair_evidence,
    renamed_formulas,
    same_problem,
)

APPLES = "Tom has 12 apples. He eats 3 of them. How many apples does Tom have left?"
BANK = [
    APPLES,
    "Tom  has 12 apples.\nHe eats 3 of them.   How many apples does Tom have left? ",  # whitespace copy
    "Tom owns 12 apples. He eats 3 of the apples. How many apples does Tom have now?",  # reworded, same numbers
    "Tom has 12.5 apples. He eats 3 of them. How many apples does Tom have left?",  # another number
    "Find the value of $x^{2}+1$ when $x = 3$.",
    "Find the value of \\(x^2 + 1\\) when \\(x=3\\).",  # LaTeX formatting copy
    "Find the value of $x^2-1$ when $x=3$.",  # another formula, the same numbers
    "A train travels 60 miles in 2 hours. What is its speed?",
]
GROUPS = [0, 0, 0, 3, 4, 4, 6, 7]
EVERY_PAIR = DedupeSettings(neighbours=7, min_cosine=-1.0)  # every row a candidate of every other
# A chain: 1 ~ 0 and 2 ~ 0 each differ by one small number written in words, 1 and 2 by two of them.
CHAIN = [
    "Tom has 12 apples. He eats 3 apples. How many apples does Tom have left?",
    "Tom has 12 apples and one pear. He eats 3 apples. How many apples does Tom have left?",
    "Tom has 12 apples and two pears. He eats 3 apples. How many apples does Tom have left?",
]
LOOSE = DedupeSettings(neighbours=7, min_cosine=-1.0, small_numbers=1, small_value=2, linkage="single")
# The same values, one in miles and one in kilometres: the default groups them, --strict (units) does not.
UNITS = ["Tom walks 5 miles in 2 hours. How fast does he walk?", "Tom walks 5 km in 2 hours. How fast does he walk?"]


class WordVectors:
    """Sums of random word vectors seeded by the word: texts sharing words are close."""

    def encode(self, texts, batch_size=32):
        out = np.zeros((len(texts), 24), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
                out[i] += np.random.default_rng(seed).normal(size=24)
        return out

    def identity(self):
        return {"kind": "test.WordVectors", "weights_sha256": "words", "mode": "sum", "dimension": 24}


def test_canonical_text_sets_formatting_aside():
    assert canonical_text("Find  $x^{2}$ if \\(x = 3\\).") == "Find x^2 if x=3."
    # \frac{a}{b} is \frac ab, so both become \fracab; a space next to a symbol goes
    assert canonical_text("$$\\left( \\dfrac{a}{b} \\right)\\,$$ and \\[y\\]") == "(\\fracab)and y"
    assert canonical_text("\\frac{1}{23}") != canonical_text("\\frac{12}{3}")
    assert canonical_text(BANK[0]) == canonical_text(BANK[1])
    assert canonical_text(BANK[4]) == canonical_text(BANK[5])
    assert canonical_text(BANK[4]) != canonical_text(BANK[6])  # + and - are not formatting
    assert canonical_text("12 5 apples") != canonical_text("125 apples")  # a space between numbers stays


def test_copy_groups_keep_the_first_row_of_each_text():
    representatives, copy_of = copy_groups(["a  b", "c", "a b", "c ", "d"])
    assert representatives == [0, 1, 4] and copy_of.tolist() == [0, 1, 0, 1, 4]


def test_group_ids_are_the_first_row_of_each_component():
    assert group_ids(6, [(1, 3), (3, 4), (2, 5)]).tolist() == [0, 1, 2, 1, 1, 2]
    assert group_ids(3, []).tolist() == [0, 1, 2]


def test_same_problem_reads_the_alignment():
    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.graph_cache import parse_cached

    question = "Tom has 12 apples. He eats 3 of them. How many apples did he give away?"
    inserted = "Tom has 12 apples. He eats 3 of them. Ann has 5 pears. How many apples does Tom have left?"
    graphs = parse_cached([APPLES, BANK[2], BANK[3], BANK[4], BANK[6], question, inserted])

    def reason(i, j, settings=None):
        alignment = align_problems(graphs[i], graphs[j])
        return same_problem(alignment, graphs[i], graphs[j], settings or DedupeSettings())

    assert reason(0, 1) is None  # reworded, the same numbers and question
    assert reason(0, 2) == "quantities"  # 12 apples and 12.5 apples
    assert reason(3, 4) == "formulas"  # x^2+1 and x^2-1: the same numbers
    assert reason(0, 6) == "quantities"  # a sentence with a new quantity
    # another question ("give away" for "have left") in an otherwise kept text: it asks another thing; without
    # that check the same problem (a reworded question shares few words), another above a least word similarity
    assert reason(0, 5) == "question asks another thing"
    assert reason(0, 5, DedupeSettings(max_question_words=None)) is None
    assert reason(0, 5, DedupeSettings(max_question_words=None, min_question_similarity=0.5)) == "question"


def test_find_duplicates_groups_copies_and_rewordings_but_not_other_numbers():
    result = find_duplicates(BANK, WordVectors(), EVERY_PAIR)
    assert result.groups.tolist() == GROUPS and result.group_count == 5
    assert [(p.a, p.b, p.how) for p in result.pairs] == [(0, 1, "copy"), (0, 2, "aligned"), (4, 5, "copy")]
    # 6 distinct texts, each with its 5 others: 15 pairs compared, 1 confirmed
    assert result.candidates == 15 and sum(result.rejected.values()) == 14
    # the two formula rows against the four without formulas and each other: 9; the apples and the train: 5
    assert result.rejected == {"formulas": 9, "quantities": 5}
    assert result.pairs[1].rule == "same quantities" and result.pairs[1].evidence.values_matched == 2
    # a candidate must be near enough: with no candidates only the copies are grouped
    alone = find_duplicates(BANK, WordVectors(), DedupeSettings(min_cosine=1.0))
    assert alone.groups.tolist() == [0, 0, 2, 3, 4, 4, 6, 7] and alone.candidates == 0
    with pytest.raises(ValueError, match="row 1: the text is empty"):
        find_duplicates(["a", " "], WordVectors())


def evidence(text_a, text_b):
    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.graph_cache import parse_cached

    graph_a, graph_b = parse_cached([text_a, text_b])
    return pair_evidence(align_problems(graph_a, graph_b), graph_a, graph_b)


def test_hand_made_pairs_are_decided_by_their_quantities_formulas_and_sentences():
    paraphrase = "Tom owns 12 apples and eats 3 of the apples. How many apples remain with Tom?"
    e = evidence(APPLES, paraphrase)  # three sentences said in two: no sentence on one side only
    assert (e.quantities_a, e.quantities_b, e.values_matched, e.only_one_side) == (2, 2, 2, ())
    assert decide(e) == (True, "same quantities") and decide(e, STRICT) == (True, "same quantities")
    other_numbers = evidence(APPLES, APPLES.replace("12", "15"))
    assert [str(v) for v in other_numbers.only_one_side] == ["12", "15"]
    assert decide(other_numbers) == decide(other_numbers, STRICT) == (False, "quantities")
    # a step added with no new number: the same values, but a sentence with new words on one side only
    added = evidence(APPLES, APPLES.replace(" How", " Then he buys a basket. How"))
    assert added.values_matched == 2 and added.one_sided_new_words == 2
    assert decide(added) == (False, "sentence on one side")
    # a value written another way on purpose: 2/5 of the cards -> 0.4 times of the cards
    cards = "Carly had 80 cards, 2/5 of the cards had the letter A. How many cards had another letter?"
    converted = evidence(cards, cards.replace("2/5 of", "0.4 times of"))
    assert converted.only_one_side == () and converted.converted == 1
    assert decide(converted) == (False, "written another way")
    assert decide(converted, DedupeSettings(distinct_forms=False)) == (True, "same quantities")
    # the same formulas up to the names of their variables; one number changed is another problem
    renamed = evidence("Find $x$ if $x^2 + 3 = 12$.", "Find $y$ if $y^2 + 3 = 12$.")
    assert renamed.formulas == "renamed" and decide(renamed) == (True, "same quantities, renamed variables")
    near_miss = evidence("Find $x$ if $x^2 + 3 = 12$.", "Find $y$ if $y^2 + 3 = 13$.")
    assert near_miss.formulas == "differ" and decide(near_miss) == (False, "formulas")
    # a small number in words on one side only: the same problem only where small_numbers allows it
    small = evidence(CHAIN[0], CHAIN[1])
    assert small.only_one_side == (1,) and small.one_side_in_words
    assert decide(small, DedupeSettings(small_numbers=0)) == (False, "quantities")
    assert decide(small) == decide(small, STRICT) == (True, "same quantities but small numbers in words")
    muffins = "Tom buys 13 muffins that were $1.00 apiece. What is his bill?"
    in_digits = evidence(muffins, "Tom buys 13 muffins. What is his bill?")  # $1.00: not a number in words
    assert in_digits.only_one_side == (1,) and not in_digits.one_side_in_words
    assert decide(in_digits) == (False, "quantities")
    # units and edited copies: what --strict asks for beyond the default
    units = evidence(*UNITS)
    assert (units.units_matched, units.units_differ) == (1, 1)
    assert decide(units) == (True, "same quantities") and decide(units, STRICT) == (False, "units")
    porch = evidence(CHAIN[0], CHAIN[0].replace("3 apples.", "3 apples on a sunny porch with friends."))
    assert porch.edit_new_words == 3  # sunny, porch, friends: two of three sentences kept word for word
    assert porch.changed_words == 3  # the sentence gained a clause of three content words
    assert decide(porch) == decide(porch, STRICT) == (False, "clause added or taken out")
    assert decide(porch, DedupeSettings(max_changed_words=None)) == (True, "same quantities")
    assert decide(porch, DedupeSettings(max_changed_words=None, max_edit_words=1)) == (False, "edited sentences")
    # a number the quantity reader sets aside (a year) still tells two problems apart
    year = evidence("In 2007 Tom had 12 apples. How many are left?", "In 2008 Tom had 12 apples. How many are left?")
    assert year.unread_differ == ("2007", "2008") and decide(year) == (False, "numbers set aside")
    assert decide(small, LOOSE) == (True, "same quantities but small numbers in words")
    assert decide(evidence(CHAIN[1], CHAIN[2]), LOOSE) == (False, "quantities")  # 1 and 2: two numbers


def test_renamed_formulas_name_variables_by_first_appearance():
    assert renamed_formulas(["x^{2}+y", "\\frac{x}{y}"]) == renamed_formulas(["a^2 + b", "\\dfrac{a}{b}"])
    assert renamed_formulas(["x^2+y"]) == ["v0^2+v1"]
    assert renamed_formulas(["\\sin x"]) == ["\\sin v0"]  # a command's letters are not variables
    assert renamed_formulas(["x+y", "x"]) != renamed_formulas(["x+y", "y"])  # which variable is used counts


def test_complete_linkage_never_chains_two_problems_through_a_third():
    same = {(0, 1), (0, 2), (3, 4)}
    confirmed = [(0, 1, 0.9), (0, 2, 0.8), (3, 4, 0.7)]
    kept = complete_linkage(5, confirmed, lambda a, b: (a, b) in same)
    assert kept == [(0, 1), (3, 4)]  # 2 would join 0 and 1, but 1 and 2 are not the same problem
    assert complete_linkage(5, confirmed, lambda a, b: True) == [(0, 1), (0, 2), (3, 4)]
    single = find_duplicates(CHAIN, WordVectors(), LOOSE)
    assert single.groups.tolist() == [0, 0, 0]  # 1 ~ 0 ~ 2: a chain joins 1 and 2
    complete = find_duplicates(CHAIN, WordVectors(), replace(LOOSE, linkage="complete"))
    members = {g: [i for i, x in enumerate(complete.groups.tolist()) if x == g] for g in complete.groups.tolist()}
    assert all(not {1, 2} <= set(rows) for rows in members.values()) and complete.group_count == 2
    assert complete.rejected == {"quantities": 1, "linkage": 1}
    # STRICT: "one pear" may be missing on one side ("two pears" may not: 2 is more than small_value 1)
    assert find_duplicates(CHAIN, WordVectors(), replace(STRICT, neighbours=7, min_cosine=-1.0)).groups.tolist() == [
        0,
        0,
        2,
    ]


def test_explain_names_the_pair_that_joined_each_row():
    result = find_duplicates(BANK, WordVectors(), EVERY_PAIR)
    lines = result.explain()
    assert lines[0] == "group 0: rows 0, 1, 2"
    assert lines[1] == "  row 1 joined by row 0: copy: the same text once formatting is set aside"
    assert lines[2].startswith("  row 2 joined by row 0: cosine ")
    assert "quantities 2 of 2/2 the same values; the question reworded" in lines[2]
    assert lines[2].endswith("rule: same quantities")
    assert lines[3:] == [
        "group 4: rows 4, 5",
        "  row 5 joined by row 4: copy: the same text once formatting is set aside",
    ]


def test_settings_are_checked():
    with pytest.raises(ValueError, match="neighbours must be >= 1"):
        DedupeSettings(neighbours=0)
    with pytest.raises(ValueError, match=r"min_cosine must be in \[-1, 1\]"):
        DedupeSettings(min_cosine=1.5)
    with pytest.raises(ValueError, match="linkage must be one of single, complete"):
        DedupeSettings(linkage="average")
    assert DedupeSettings().linkage == STRICT.linkage == "complete"
    assert (STRICT.small_numbers, STRICT.check_units, STRICT.implied_values, STRICT.min_kept_share) == (
        1,
        True,
        False,
        0.1,
    )
    with pytest.raises(ValueError, match=r"min_kept_share must be in \(0, 1\]"):
        DedupeSettings(min_kept_share=0)


# --------------------------------------------------------------------------- the command
@pytest.fixture
def model(tiny_text_dir):
    return f"text:{tiny_text_dir}"


def dedupe(*argv):
    return main(["dedupe", "--min-cosine", "-1", "--neighbours", "7", *map(str, argv)])


def test_every_row_comes_back_with_its_group(tmp_path, model, capsys):
    bank = tmp_path / "bank.jsonl"
    bank.write_text("".join(json.dumps({"id": f"p{i}", "problem": t}) + "\n" for i, t in enumerate(BANK)))
    out, pairs = tmp_path / "rows.jsonl", tmp_path / "pairs.jsonl"
    assert dedupe("--input", bank, "--output", out, "--model", model, "--pairs", pairs) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"id": f"p{i}", "problem": t, "group": g} for i, (t, g) in enumerate(zip(BANK, GROUPS))]
    found = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert [(p["a"], p["b"], p["how"]) for p in found] == [(0, 1, "copy"), (0, 2, "aligned"), (4, 5, "copy")]
    assert (
        "8 rows are 5 problems: 2 copies, 1 of 15 candidate pairs joined (rejected by 9 formulas, 5 quantities)"
        in capsys.readouterr().err
    )


def test_a_csv_bank_to_parquet_rows_with_another_group_field(tmp_path, model):
    import pyarrow.parquet as pq

    bank = tmp_path / "bank.csv"
    with open(bank, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "source"])
        writer.writerows([t, f"s{i}"] for i, t in enumerate(BANK[:4]))
    out = tmp_path / "rows.parquet"
    argv = ["--input", bank, "--text-field", "question", "--group-field", "same_as", "--output", out]
    assert dedupe(*argv, "--model", model) == 0
    assert pq.read_table(out).to_pylist() == [
        {"question": t, "source": f"s{i}", "same_as": g} for i, (t, g) in enumerate(zip(BANK[:4], GROUPS))
    ]


def test_bad_input_is_a_one_line_error(tmp_path, model, capsys):
    bank = tmp_path / "bank.jsonl"
    bank.write_text(json.dumps({"problem": BANK[0], "group": 1}) + "\n" + json.dumps({"question": "x"}) + "\n")
    assert dedupe("--input", bank, "--output", tmp_path / "rows.txt", "--model", model) == 2
    assert "name it .jsonl, .csv, .tsv or .parquet" in capsys.readouterr().err
    assert dedupe("--input", bank, "--output", tmp_path / "rows.jsonl", "--model", model) == 2
    assert "bank.jsonl:1: the row already has a field 'group'" in capsys.readouterr().err
    argv = ["--input", bank, "--output", tmp_path / "rows.jsonl", "--group-field", "g", "--model", model]
    assert dedupe(*argv) == 2
    assert "bank.jsonl:2:" in capsys.readouterr().err and not (tmp_path / "rows.jsonl").exists()
    assert dedupe(*argv, "--skip-bad") == 0
    assert [json.loads(line)["g"] for line in (tmp_path / "rows.jsonl").read_text().splitlines()] == [0]
    assert "skipped 1 bad line" in capsys.readouterr().err


def test_explain_prints_each_group_with_the_pairs_that_joined_it(tmp_path, model, capsys):
    bank = tmp_path / "bank.jsonl"
    bank.write_text("".join(json.dumps({"problem": t}) + "\n" for t in BANK))
    out, pairs = tmp_path / "rows.jsonl", tmp_path / "pairs.jsonl"
    assert dedupe("--input", bank, "--output", out, "--model", model, "--explain", "--pairs", pairs) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "group 0: rows 0, 1, 2" and printed[2].endswith("rule: same quantities")
    assert printed[1] == "  row 1 joined by row 0: copy: the same text once formatting is set aside"
    assert printed[3:] == [
        "group 4: rows 4, 5",
        "  row 5 joined by row 4: copy: the same text once formatting is set aside",
    ]
    aligned = [json.loads(line) for line in pairs.read_text().splitlines()][1]
    assert (aligned["a"], aligned["b"], aligned["rule"]) == (0, 2, "same quantities")
    assert aligned["evidence"]["values_matched"] == 2 and aligned["evidence"]["question"] == "changed"


def test_strict_keeps_apart_what_the_default_lets_join(tmp_path, model, capsys):
    bank, out = tmp_path / "bank.jsonl", tmp_path / "rows.jsonl"

    def groups(texts, *argv):
        bank.write_text("".join(json.dumps({"problem": t}) + "\n" for t in texts))
        assert dedupe("--input", bank, "--output", out, "--model", model, *argv) == 0
        return [json.loads(line)["group"] for line in out.read_text().splitlines()]

    assert groups(UNITS, "--explain") == [0, 0]  # 5 miles and 5 km: the same values
    assert capsys.readouterr().out.splitlines()[1].endswith("rule: same quantities")
    assert groups(UNITS, "--strict", "--explain") == [0, 1]  # in other units
    assert capsys.readouterr().out.strip() == "no group has more than one row"
    assert groups(CHAIN[:2], "--explain") == [0, 0]  # "one pear" on one side only
    assert "rule: same quantities but small numbers in words" in capsys.readouterr().out
    assert groups(CHAIN[:2], "--strict", "--small-numbers", "0") == [0, 1]
    assert dedupe("--input", bank, "--output", out, "--model", model, "--small-numbers", "-1") == 2
    assert "small_numbers and small_value must be >= 0" in capsys.readouterr().err


def test_values_said_another_way_count_where_implied_values_asks():
    on, off = DedupeSettings(implied_values=True), DedupeSettings(implied_values=False)
    water = "John drinks a bottle of water every {}. A puzzle takes him 45 minutes. How many bottles does he drink?"
    half = evidence(water.format("half hour"), water.format("30 minutes"))  # 1/2 hour is 30 minutes
    assert [str(v) for v in half.only_one_side] == ["1/2", "30"] and half.implied == half.only_one_side
    assert decide(half, off) == (False, "quantities")
    assert decide(half, on) == (True, "same quantities, some said another way")
    toby = "Toby reads 45 pages. He must leave in {}. How many pages per minute must he read?"
    hour = evidence(toby.format("60 minutes"), toby.format("an hour"))  # "an hour": no number, 60 minutes
    assert hour.only_one_side == (60,) and hour.implied == (60,) and decide(hour, on)[0]
    later = evidence(toby.format("60 minutes"), toby.format("a week"))  # a week is not 60 minutes
    assert later.only_one_side == (60,) and later.implied == () and decide(later, on) == (False, "quantities")
    serve = "Jewel serves 50 customers a day and Julie twice as many. How many do {} serve together?"
    both = evidence(serve.format("the two"), serve.format("they both"))  # "both": two, said without a number
    assert both.only_one_side == (2,) and both.implied == (2,) and decide(both, on)[0]


def test_edited_copies_that_ask_another_thing_or_take_a_clause_out_are_other_problems():
    mark = "Mark lost 10 pounds per month for 3 months. If his {} weight was 100 pounds, what was his {} weight?"
    swapped = evidence(mark.format("final", "initial"), mark.format("initial", "final"))
    # one of two sentences kept word for word; the questions ask with "initial" | "final"
    assert (swapped.kept_share, swapped.question_new_words, swapped.only_one_side) == (0.5, 1, ())
    assert swapped.swapped_words and swapped.changed_words == 0  # the same words, in another order
    assert decide(swapped) == (False, "words swapped")
    assert decide(swapped, DedupeSettings(max_changed_words=None)) == (False, "words swapped")
    assert decide(swapped, DedupeSettings(min_kept_share=0.75)) == (True, "same quantities")  # no edited copy
    assert decide(swapped, DedupeSettings(max_question_words=0)) == (False, "question asks another thing")
    tanks = "There are 4 snails in one tank and 32 in another. The difference is twice the fish in both tanks. "
    clause = evidence(
        tanks + "If both tanks have the same number of fish, how many fish are in each tank?",
        tanks + "How many fish are in each tank?",
    )
    assert clause.changed_words == 3  # tanks, number, fish: the condition taken out of the question
    assert decide(clause, DedupeSettings(max_changed_words=3)) == (True, "same quantities")
    assert decide(clause, DedupeSettings(max_changed_words=2)) == (False, "clause added or taken out")
    # with too few sentences kept word for word the pair is no edited copy: neither rule looks
    assert decide(clause, DedupeSettings(max_changed_words=2, min_kept_share=0.7)) == (True, "same quantities")
    shop = "My mom bought pots for $19 and soil for $26. She used a coupon for $7 off. She went home. {}How much did she spend?"
    # no new number and one new word ("set"): below the two that make a sentence on one side another problem
    pots = evidence(shop.format(""), shop.format("She bought another set of pots. "))
    assert (pots.kept_share, pots.sentences_inserted, pots.one_sided_new_words) == (0.8, 1, 1)
    assert decide(pots, DedupeSettings(max_edit_words=3)) == (False, "edited sentences")
    assert decide(pots, DedupeSettings(max_edit_words=None)) == (True, "same quantities")
