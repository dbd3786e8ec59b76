"""Alignments of hand-written problem pairs, one per relation kind, and of a question with solutions."""

from fractions import Fraction

import pytest

from mathgraph.parsers.compare import ALIGNMENT_FEATURES, align_problems
from mathgraph.parsers.solution import SOLUTION_FEATURES, align_solution, solution_steps
from mathgraph.parsers.problem import ProblemParser

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


def test_solution_steps_in_three_notations():
    assert [(s.operands, s.result) for s in solution_steps("He pays 4 * 5 = 20 dollars.")] == [((4, 5), 20)]
    assert [(s.operands, s.result) for s in solution_steps("<<4*5=20>>20 and so")] == [((4, 5), 20)]
    assert [(s.operands, s.result) for s in solution_steps("$\\frac{3}{4} \\times 8 = 6$")] == [
        ((Fraction(3, 4), 8), 6)
    ]


def test_solution_alignment_tells_own_from_other_numbers():
    question = PARSER.parse("Ann has 3 boxes of 8 pens. She gives away 5 pens. How many pens are left?")
    own = align_solution(question, "3 * 8 = <<3*8=24>>24 pens. 24 - 5 = <<24-5=19>>19 left.\n#### 19")
    assert [q.value for q in own.given_used] == [3, 8, 5]
    assert own.unexplained_operands == () and own.final_answer == 19 and not own.final_is_given
    assert own.features["share_operands_explained"] == 1.0
    other = align_solution(question, "4 * 9 = <<4*9=36>>36 pens. 36 - 7 = <<36-7=29>>29 left.\n#### 29")
    assert other.unexplained_operands == (4, 9, 7)
    assert other.features["share_question_used"] == 0.0
    assert len(other.feature_vector()) == len(SOLUTION_FEATURES)
    lazy = align_solution(question, "The answer is 5.")
    assert lazy.final_is_given and "no computation steps found in the solution" in lazy.notes


def test_adding_operation_changes_the_question_with_a_new_quantity():
    alignment = align(
        SEED,
        "Tom has 12 apples. He buys 3 bags with 4 apples each. How many apples does he have now if he eats 5 of them?",
    )
    assert alignment.question == "changed"
    assert [(m.b.value, m.b.in_question) for m in alignment.quantities if m.kind == "new"] == [(5, True)]
    assert alignment.features["new_in_question"] == 1 and alignment.features["quantities_same"] == 3
