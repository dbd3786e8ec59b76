"""Quantities read off real parses of hand-written problems: values, forms, units, objects, sentences."""

from fractions import Fraction

import pytest

from mathgraph.graph import MathSyntaxGraph
from mathgraph.parsers.problem import ProblemParser
from mathgraph.parsers.quantities import parse_number, problem_sentences

PARSER = ProblemParser("spacy")


def quantities(text: str) -> list[tuple[str, Fraction, str]]:
    return [(q.text, q.value, q.form) for q in PARSER.parse(text).quantities()]


@pytest.mark.parametrize(
    "written, value, form",
    [
        ("12", Fraction(12), "integer"),
        ("1,000.5", Fraction(2001, 2), "decimal"),
        (".5", Fraction(1, 2), "decimal"),
        ("3/4", Fraction(3, 4), "fraction"),
        ("-7", Fraction(-7), "integer"),
    ],
)
def test_parse_number(written, value, form):
    assert parse_number(written) == (value, form)


@pytest.mark.parametrize("written", ["2nd", "3:30", "4x", "1/0", "", "abc"])
def test_parse_number_refuses_what_is_not_a_number(written):
    assert parse_number(written) is None


def test_digits_separators_decimals_fractions_percent_and_money():
    text = "Ann bought 1,000.5 kg of rice for $2.50. She ate 3/4 of the rest and 25% of the cake, then 1 1/2 pies."
    assert quantities(text) == [
        ("1,000.5", Fraction(2001, 2), "decimal"),
        ("$2.50", Fraction(5, 2), "decimal"),
        ("3/4", Fraction(3, 4), "fraction"),
        ("25%", Fraction(1, 4), "percent"),
        ("1 1/2", Fraction(3, 2), "fraction"),
    ]
    by_text = {q.text: q for q in PARSER.parse(text).quantities()}
    assert (by_text["1,000.5"].unit, by_text["1,000.5"].object) == ("kg", "rice")
    assert by_text["$2.50"].unit == "$"
    assert by_text["25%"].unit == "%"
    assert PARSER.parse("She ate 3/4 of the rest.").quantities()[0].object == "rest"


def test_number_words():
    text = (
        "Tom has three dogs and twenty-five cats. He reads half of a book, twice a day, "
        "and eats a dozen eggs and two thirds of a pie."
    )
    assert quantities(text) == [
        ("three", Fraction(3), "word"),
        ("twenty-five", Fraction(25), "word"),
        ("half", Fraction(1, 2), "word"),
        ("twice", Fraction(2), "word"),
        ("dozen", Fraction(12), "word"),
        ("two thirds", Fraction(2, 3), "word"),
    ]


def test_pronoun_one_ordinals_years_and_labels_are_not_quantities():
    text = "In 2019, the red one came 2nd on Route 66 and took the third seat. One of the boys won 2000 coins."
    assert quantities(text) == [("One", Fraction(1), "word"), ("2000", Fraction(2000), "integer")]


def test_unit_and_object_from_the_dependency_tree():
    graph = PARSER.parse("Sue bought 5 inch heels. It takes 2 skeins of wool to make a hat. He ran 3 miles.")
    found = {q.text: (q.unit, q.object) for q in graph.quantities()}
    assert found == {"5": ("inch", "heels"), "2": ("skeins", "wool"), "3": ("miles", None)}


def test_sentence_and_question():
    graph = PARSER.parse("A box holds 12 pens. Ben buys 3 boxes. How many pens does he have if he loses 2?")
    assert [(q.text, q.sentence, q.in_question) for q in graph.quantities()] == [
        ("12", 0, False),
        ("3", 1, False),
        ("2", 2, True),
    ]
    assert [s.is_question for s in problem_sentences(graph)] == [False, False, True]


def test_formula_literals_are_quantities_in_their_sentence():
    graph = PARSER.parse("Let $f(x)=x^2+1.5$. Find $f(10)$.")
    assert [(q.text, q.value, q.form, q.sentence, q.in_question) for q in graph.quantities()] == [
        ("2", 2, "formula", 0, False),
        ("1.5", Fraction(3, 2), "formula", 0, False),
        ("10", 10, "formula", 1, True),
    ]


def test_problem_with_no_quantities_and_malformed_latex():
    assert quantities("Prove that the angles of a triangle add up to a straight angle.") == []
    graph = PARSER.parse("Simplify $\\frac{3}{ + 4$.")
    assert graph.formulas[0].status != "ok"
    assert [q.value for q in graph.quantities()] == [3, 4]


def test_quantities_survive_the_json_round_trip():
    graph = PARSER.parse("It costs $2.50 for 25% of 3/4 of a pie. What is the price of $x+2$?")
    again = MathSyntaxGraph.from_json(graph.to_json())
    assert again.quantities() == graph.quantities()
    assert graph.to_dict()["quantities"][0]["value"] == "5/2"
