"""Alignments of hand-written problem pairs, one per relation kind (solutions: tests/parsers/test_solution.py)."""

import time
from fractions import Fraction

import pytest

from mathgraph.parsers.compare import (
    ALIGNMENT_FEATURES,
    SAME_PROBLEM,
    _digits,
    _is_power_of_ten_growth,
    align_problems,
    compared_relations,
    describe_relation,
)
from mathgraph.parsers.problem import ProblemParser
from mathgraph.parsers.sentence_changes import sentence_changes

PARSER = ProblemParser("spacy")
SEED = "Tom has 12 apples. He buys 3 bags with 4 apples each. How many apples does he have now?"


def align(a: str, b: str):
    return align_problems(PARSER.parse(a), PARSER.parse(b))


def kinds(alignment, what: str) -> list[str]:
    return [m.kind for m in getattr(alignment, what)]


def test_identical_problems():
    alignment = align(SEED, SEED)
    assert kinds(alignment, "sentences") == ["kept", "kept", "kept"]
    assert kinds(alignment, "quantities") == ["same", "same", "same"]
    assert alignment.question == "same"
    assert alignment.features["share_quantities_same"] == 1.0 and alignment.features["word_overlap"] == 1.0
    assert len(alignment.feature_vector()) == len(ALIGNMENT_FEATURES)


def test_numerical_substitution_changes_values_in_place():
    alignment = align(SEED, "Tom has 15 apples. He buys 2 bags with 4 apples each. How many apples does he have now?")
    changed = [(m.a.value, m.b.value) for m in alignment.quantities if m.kind == "changed"]
    assert changed == [(12, 15), (3, 2)]
    assert kinds(alignment, "sentences") == ["changed", "changed", "kept"]
    assert alignment.features["changed_same_role"] == 2  # apples -> apples, bags -> bags


def test_digit_expansion_and_decimal_conversion_are_named():
    grown = align(SEED, "Tom has 1200 apples. He buys 3 bags with 4 apples each. How many apples does he have now?")
    assert grown.features["changed_power_of_ten"] == 1 and grown.features["changed_more_digits"] == 1
    decimal = align(SEED, "Tom has 12.5 apples. He buys 3 bags with 4 apples each. How many apples does he have now?")
    (match,) = [m for m in decimal.quantities if m.kind == "changed"]
    assert (match.a.value, match.b.value, match.form_change) == (12, Fraction(25, 2), "integer -> decimal")
    assert decimal.features["changed_to_decimal"] == 1


def test_distraction_inserts_a_sentence_with_a_new_quantity():
    alignment = align(
        SEED,
        "Tom has 12 apples. His sister has 7 pears. He buys 3 bags with 4 apples each. "
        "How many apples does he have now?",
    )
    assert kinds(alignment, "sentences") == ["kept", "inserted", "kept", "kept"]
    assert [m.b.value for m in alignment.quantities if m.kind == "new"] == [7]
    assert alignment.features["inserted_with_quantities"] == 1
    assert "+ inserted: 'His sister has 7 pears.'" in alignment.explain()


def test_critical_thinking_removes_a_quantity_and_reversal_changes_the_question():
    missing = align(SEED, "Tom has some apples. He buys 3 bags with 4 apples each. How many apples does he have now?")
    assert [m.a.value for m in missing.quantities if m.kind == "removed"] == [12]
    reversed_ = align(
        SEED,
        "Tom has some apples. He buys 3 bags with 4 apples each. Now he has 24 apples. "
        "How many apples did he have at first?",
    )
    assert reversed_.question == "changed"
    assert reversed_.features["sentences_inserted"] == 1


def test_unrelated_problem_shares_little():
    alignment = align(SEED, "A train travels 60 miles in 2 hours. What is its speed?")
    assert alignment.features["word_overlap"] < 0.2
    assert alignment.features["quantities_same"] == 0


def test_number_words_keep_the_value_and_note_the_form():
    alignment = align("She has three cats.", "She has 3 cats.")
    (match,) = alignment.quantities
    assert (match.kind, match.form_change) == ("same", "word -> integer")
    assert alignment.features["same_value_other_form"] == 1


def test_formula_edits():
    alignment = align("Solve $x^2+3x-4=0$.", "Solve $x^2+5x-4=0$.")
    (formula,) = alignment.formulas
    assert (formula.changed, formula.added, formula.removed) == (1, 0, 0)  # 3 -> 5
    assert alignment.features["formula_label_edits"] == 1


@pytest.mark.parametrize("b", ["Hello there.", "Simplify $\\frac{3}{ + 4$.", "Prove it."])
def test_odd_input_degrades_and_says_so(b):
    alignment = align("Simplify $\\frac{3}{ + 4$.", b)
    assert len(alignment.feature_vector()) == len(ALIGNMENT_FEATURES)
    assert any("did not parse fully" in note for note in alignment.notes)


def test_problem_without_quantities_is_noted():
    alignment = align("Prove that the sum of even numbers is even.", SEED)
    assert "problem a states no quantities" in alignment.notes
    assert kinds(alignment, "quantities") == ["new", "new", "new"]


def test_a_ten_thousand_character_problem_aligns():
    long_text = " ".join(f"Box {i % 7} holds {i} pens." for i in range(600))[:10_000] + " How many pens?"
    alignment = align(long_text, long_text.replace("holds 5 pens", "holds 6 pens"))
    assert alignment.features["quantities_changed"] >= 1
    assert alignment.features["sentences_kept"] > 400


def test_adding_operation_changes_the_question_with_a_new_quantity():
    alignment = align(
        SEED,
        "Tom has 12 apples. He buys 3 bags with 4 apples each. How many apples does he have now if he eats 5 of them?",
    )
    assert alignment.question == "changed"
    assert [(m.b.value, m.b.in_question) for m in alignment.quantities if m.kind == "new"] == [(5, True)]
    assert alignment.features["new_in_question"] == 1 and alignment.features["quantities_same"] == 3


# ----------------------------------------------------------------- alignments that tell the truth
def test_two_sentences_swapped_are_one_moved_not_two_values_changed():
    alignment = align("Tom has 12 apples. Ann has 5 pears.", "Ann has 5 pears. Tom has 12 apples.")
    assert sorted(kinds(alignment, "sentences")) == ["kept", "moved"]
    (moved,) = [m for m in alignment.sentences if m.kind == "moved"]
    assert (moved.a, moved.b) in {(0, 1), (1, 0)} and moved.changes == ()
    assert kinds(alignment, "quantities") == ["same", "same"]
    text = alignment.sentences_a[moved.a].text
    assert f"  > moved: {text!r} (sentence {moved.a + 1} -> {moved.b + 1})" in alignment.explain()
    # a moved sentence is still a kept sentence for the models
    assert alignment.features["sentences_kept"] == 2 and alignment.features["share_sentences_kept"] == 1.0
    assert alignment.features["quantities_changed"] == 0


def test_a_moved_sentence_with_another_number_is_moved_and_its_value_changed():
    alignment = align("Tom has 12 apples. Ann has 5 pears.", "Ann has 6 pears. Tom has 12 apples.")
    (moved,) = [m for m in alignment.sentences if m.kind == "moved"]
    assert (moved.a, moved.b, moved.changes) == (1, 0, ("numbers",))
    assert [(m.kind, m.a.value, m.b.value) for m in alignment.quantities] == [("same", 12, 12), ("changed", 5, 6)]
    assert alignment.features["sentences_kept"] == 1 and alignment.features["sentences_changed"] == 1


def test_two_values_that_trade_places_are_swapped():
    alignment = align("Tom has 5 apples and 7 pears.", "Tom has 7 apples and 5 pears.")
    assert [(m.kind, m.a.value, m.b.value) for m in alignment.quantities] == [("swapped", 5, 7), ("swapped", 7, 5)]
    assert "  x '5' (5) -> '7' (7) (values swapped)" in alignment.explain()
    assert alignment.features["quantities_changed"] == 2 and alignment.features["quantities_same"] == 0
    # the same values in another order, each with its own object, are the same values
    reordered = align("Tom has 5 apples and 7 pears.", "Tom has 7 pears and 5 apples.")
    assert kinds(reordered, "quantities") == ["same", "same"]


def test_changes_of_case_and_punctuation_are_named():
    alignment = align("Tom has 12 apples.", "tom has 12 apples!")
    (match,) = alignment.sentences
    assert (match.kind, match.changes) == ("changed", ("case", "punctuation"))
    assert "  ~ changed: 'Tom has 12 apples.' -> 'tom has 12 apples!' (case; punctuation)" in alignment.explain()
    assert align("Tom has 12 apples.", "Tom has 12 apples!").sentences[0].changes == ("punctuation",)


def test_a_changed_word_is_named():
    alignment = align(
        "Tom gives away 3 apples. How many apples does he have?", "Tom receives 3 apples. How many apples does he have?"
    )
    assert kinds(alignment, "sentences") == ["changed", "kept"]
    assert alignment.sentences[0].changes == ("words: 'gives away' -> 'receives'",)
    assert alignment.word_changes() == ["'gives away' -> 'receives'"] and alignment.only_words_changed()
    assert not align(SEED, SEED.replace("12", "15")).only_words_changed()


def test_a_reworded_question_shows_its_words_not_a_similarity():
    alignment = align("Tom has 3 apples. How many apples are left?", "Tom has 3 apples. What remains?")
    assert alignment.question == "changed"
    (line,) = [line for line in alignment.explain().splitlines() if line.startswith("question:")]
    assert line == (
        "question: changed (words: 'How many apples are left' -> 'What remains'); "
        "no words in common: reworded, or another question"
    )


def test_identical_problems_up_to_whitespace_are_the_same_problem_and_no_relation_is_predicted():
    same = align(SEED, " " + SEED.replace(" ", "  \n") + "\n")
    assert same.same_problem and same.explain().startswith("the same problem: the texts differ at most in whitespace")
    assert not align(SEED, SEED.replace("apples.", "apples!")).same_problem
    other = align(SEED, SEED.replace("12", "15"))
    asked = []

    def predict(pairs):
        asked.extend(pairs)
        return [{"label": "numerical substitution", "probabilities": {"numerical substitution": 0.6, "other": 0.4}}]

    relations = compared_relations([same, other], [("a", "a "), ("a", "b")], predict)
    assert asked == [("a", "b")]  # the model is not asked about the same problem
    assert relations == [
        {"label": SAME_PROBLEM, "probabilities": {SAME_PROBLEM: 1.0}},
        {"label": "numerical substitution", "probabilities": {"numerical substitution": 0.6, "other": 0.4}},
    ]
    assert describe_relation(same.to_dict(), relations[0]) == [
        "relation: the same problem (the texts differ at most in whitespace); no QRC relation to predict"
    ]
    assert describe_relation(other.to_dict(), relations[1]) == [
        "QRC model: numerical substitution, probability 0.6000 (next: other, 0.4000)"
    ]


def test_texts_are_parsed_and_other_things_refused_clearly():
    from_text = align_problems("She has three cats.", "She has 3 cats.")
    assert from_text.to_dict() == align("She has three cats.", "She has 3 cats.").to_dict()
    with pytest.raises(TypeError, match="each a parsed graph .* or its text; problem b is a int"):
        align_problems("She has three cats.", 3)
    with pytest.raises(ValueError, match="holds a lone surrogate U\\+D800 at character 5"):
        align_problems("Tom \ud800 has 3 cats.", "She has 3 cats.")


def test_digit_counts_past_the_4300_digit_limit_of_str():
    assert _digits(Fraction(10**5000)) == 5001 and _digits(Fraction(10**5000 - 1)) == 5000
    assert _digits(Fraction(7, 2)) == 1 and _digits(Fraction(0)) == 1
    assert _is_power_of_ten_growth(Fraction(3), Fraction(3 * 10**5000))
    assert not _is_power_of_ten_growth(Fraction(3), Fraction(3 * 10**5000 + 3))


def test_long_problems_are_aligned_without_comparing_every_sentence_pair(monkeypatch):
    import mathgraph.parsers.sentence_alignment as sentence_alignment

    calls = []
    real = sentence_alignment.word_similarity
    monkeypatch.setattr(sentence_alignment, "word_similarity", lambda a, b: calls.append(1) or real(a, b))
    sentences = [f"Box {i % 7} holds {i} pens." for i in range(400)]
    a = PARSER.parse(" ".join(sentences))
    edited = sentences[:]
    edited[100], edited[300] = "Box 2 holds 5 cards.", "A new box holds 9 pens."
    alignment = align_problems(a, PARSER.parse(" ".join(edited)))
    assert len(calls) <= 10  # the old alignment compared 400 x 400 pairs
    assert kinds(alignment, "sentences").count("kept") == 398
    start = time.perf_counter()
    alignment = align_problems(a, a)
    assert time.perf_counter() - start < 5  # ~0.05 s; 400 short sentences took ~3 s before (quadratic)
    assert alignment.same_problem and len(calls) <= 10  # equal sentences are paired by their hashes


@pytest.mark.parametrize(
    "a, b, changes",
    [
        ("Tom has 3 apples.", "Tom  has 3\napples.", ()),
        ("Tom has 12apples.", "Tom has 12 apples.", ("spacing",)),
        ("He has 1,000.5 kg.", "He has 1,000.7 kg.", ("numbers",)),
        ("Tom has 3.", "Tom had 3, now.", ("words: 'has' -> 'had'; added 'now'",)),
        ("Tom has 3 apples now.", "Tom has 4 apples.", ("numbers", "words: dropped 'now'")),
        ("a b c d e f g", "h i j k l m n", ("words: 'a b c d e f g' -> 'h i j k l m n'",)),
    ],
)
def test_sentence_changes_name_what_a_reader_sees(a, b, changes):
    assert sentence_changes(a, b) == changes
