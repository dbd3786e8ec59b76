"""Quantities read off real parses of hand-written problems: values, forms, units, objects, sentences."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathgraph.graph import MathSyntaxGraph
from mathgraph.parsers.problem import ProblemParser
from mathgraph.parsers.quantities import MAX_DIGITS, parse_number, problem_sentences

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


# ---------------------------------------------------------------- numbers as a careful reader reads them
def described(text: str) -> list[tuple]:
    return [(q.text, q.value, q.form, q.unit, q.object) for q in PARSER.parse(text).quantities()]


@pytest.mark.parametrize(
    "written, value, form",
    [
        ("½", Fraction(1, 2), "fraction"),
        ("2½", Fraction(5, 2), "fraction"),
        ("1⁄2", Fraction(1, 2), "fraction"),
        ("−4", Fraction(-4), "integer"),
        ("1e5", Fraction(100000), "integer"),
        ("2.5E-3", Fraction(1, 400), "decimal"),
        ("50k", Fraction(50000), "integer"),
        ("2.5k", Fraction(2500), "decimal"),
        ("3M", Fraction(3000000), "integer"),
        ("10^3", Fraction(1000), "integer"),
        ("10^{-2}", Fraction(1, 100), "decimal"),
        ("2×10^3", Fraction(2000), "integer"),
    ],
)
def test_parse_number_reads_unicode_and_notation(written, value, form):
    assert parse_number(written) == (value, form)


@pytest.mark.parametrize("written", ["2^10", "5m", "3:2", "1e101", "10^{101}", "7" * 101])
def test_parse_number_refuses_computations_metres_ratios_and_huge_numbers(written):
    assert parse_number(written) is None


def test_a_5000_digit_number_is_skipped_not_an_error():
    # Python refuses int() on more than 4,300 digits; MAX_DIGITS (100) keeps the reader far below that
    huge = "7" * 5000
    assert MAX_DIGITS == 100
    assert parse_number(huge) is None and parse_number(huge + "/3") is None and parse_number("1e5000") is None
    graph = PARSER.parse(f"He has {huge} apples and 3 pears. It costs ${huge}. Let $x = {huge}$ and $y = 10^{{5000}}$.")
    # the huge numbers are not quantities; 10^{5000} is no single number, so its literals 10 and 5000 remain
    assert [(q.text, q.value) for q in graph.quantities()] == [("3", 3), ("10", 10), ("5000", 5000)]
    # a ratio with an over-long term is dropped whole; so is a fraction or a year-like place holding one
    odd_places = f"The ratio is {huge}:30 and 2:{huge}. On {huge}/2 we met. In {huge}, 4 came."
    assert [(q.text, q.value) for q in PARSER.parse(odd_places).quantities()] == [("4", 4)]


def test_vulgar_fractions_and_mixed_numbers():
    assert described("She ate ½ of the pie and 2½ cakes, then 1 ¾ pies.") == [
        ("½", Fraction(1, 2), "fraction", None, "pie"),
        ("2½", Fraction(5, 2), "fraction", None, "cakes"),
        ("1 ¾", Fraction(7, 4), "fraction", None, "pies"),
    ]


def test_unicode_minus_is_a_sign_before_a_number_and_an_operator_between_numbers():
    graph = PARSER.parse("It was −4 degrees at dawn. Tom writes 12 − 3 = 9 on the board.")
    assert len(problem_sentences(graph)) == 2  # "−4" no longer ends the sentence for the tagger
    assert described("It was −4 degrees at dawn. Tom writes 12 − 3 = 9 on the board.") == [
        ("−4", Fraction(-4), "integer", "degrees", None),
        ("12", Fraction(12), "integer", None, None),
        ("3", Fraction(3), "integer", None, None),
        ("9", Fraction(9), "integer", None, None),
    ]


def test_signed_money_and_a_currency_sign_apart_from_its_number():
    assert described("He lost -$5 and −$2.50 but won $ 7 and € 3.") == [
        ("-$5", Fraction(-5), "integer", "$", None),
        ("−$2.50", Fraction(-5, 2), "decimal", "$", None),
        ("$ 7", Fraction(7), "integer", "$", None),
        ("€ 3", Fraction(3), "integer", "€", None),
    ]


def test_dozens_count_the_things():
    text = (
        "She bought two dozen eggs, 5 dozen rolls, a dozen pies, half a dozen cups and 2 and a half dozen donuts. "
        "How many dozen are left? Dozens of people came."
    )
    assert [(q.text, q.value, q.object) for q in PARSER.parse(text).quantities()] == [
        ("two dozen", 24, "eggs"),
        ("5 dozen", 60, "rolls"),
        ("dozen", 12, "pies"),
        ("half a dozen", 6, None),
        ("2 and a half dozen", 30, "donuts"),
    ]


def test_scale_words_after_an_article():
    assert quantities("A hundred people, a million ants and a hundred and twenty cars came.") == [
        ("hundred", Fraction(100), "word"),
        ("million", Fraction(10**6), "word"),
        ("hundred and twenty", Fraction(120), "word"),
    ]


def test_and_a_half():
    text = (
        "It took two and a half hours to walk 3 and a half miles, an hour and a half to eat and one and a quarter days."
    )
    assert described(text) == [
        ("two and a half", Fraction(5, 2), "word", "hours", None),
        ("3 and a half", Fraction(7, 2), "fraction", "miles", None),
        ("hour and a half", Fraction(3, 2), "word", "hour", None),
        ("one and a quarter", Fraction(5, 4), "word", "days", None),
    ]


def test_per_cent_in_two_words():
    assert described("Prices rose 15 per cent and forty per cent.") == [
        ("15 per cent", Fraction(3, 20), "percent", "%", None),
        ("forty per cent", Fraction(2, 5), "percent", "%", None),
    ]


def test_scientific_notation_suffixes_and_powers_of_ten_in_text():
    text = (
        "There are 1e5 cells, a $50k salary, 10^3 grams of salt, light at 3 x 10^8 meters per second, and a 10K race."
    )
    assert described(text) == [
        ("1e5", Fraction(100000), "integer", None, "cells"),
        ("$50k", Fraction(50000), "integer", "$", "salary"),
        ("10^3", Fraction(1000), "integer", "grams", "salt"),
        ("3 x 10^8", Fraction(300000000), "integer", "meters", None),
        ("10K", Fraction(10), "integer", "km", "race"),  # a 10K race is 10 kilometres
    ]


def test_a_number_written_in_notation_is_one_formula_quantity():
    text = (
        "Let $x = \\frac{1}{2}$, $y = 2\\times 10^3$, $z = -4$, $w = 2\\frac{1}{3}$ and $v = 10^{-2}$. Find $x^2 + 3$."
    )
    assert [(q.text, q.value, q.form, q.sentence) for q in PARSER.parse(text).quantities()] == [
        ("\\frac{1}{2}", Fraction(1, 2), "formula", 0),
        ("2\\times 10^3", 2000, "formula", 0),
        ("-4", -4, "formula", 0),
        ("2\\frac{1}{3}", Fraction(7, 3), "formula", 0),
        ("10^{-2}", Fraction(1, 100), "formula", 0),
        ("2", 2, "formula", 1),
        ("3", 3, "formula", 1),
    ]


def test_a_computation_keeps_its_literals():
    text = "Compute $2^{10} - 1$, $\\frac{x}{2}$ and $-3x^2 + \\frac{\\sqrt{3}}{2}$."
    assert [q.value for q in PARSER.parse(text).quantities()] == [2, 10, 1, 2, -3, 2, 3, 2]
    bare = ProblemParser("spacy", bare_arithmetic=True).parse("Natalia sold 48/2 = 24 clips.")
    assert [q.value for q in bare.quantities()] == [48, 2, 24]  # in bare arithmetic a slash divides


def test_ratios_are_their_terms_and_clock_times_are_not_quantities():
    text = "The ratio of boys to girls is 3:2 and of cats to dogs is 10:45. Paint is mixed 1:2:3. Class starts at 7:30."
    assert [(q.text, q.value, q.unit, q.span) for q in PARSER.parse(text).quantities()] == [
        ("3", 3, "ratio", (30, 31)),
        ("2", 2, "ratio", (32, 33)),
        ("10", 10, "ratio", (57, 59)),
        ("45", 45, "ratio", (60, 62)),
        ("1", 1, "ratio", (79, 80)),
        ("2", 2, "ratio", (81, 82)),
        ("3", 3, "ratio", (83, 84)),
    ]


def test_dates_years_phone_numbers_clock_times_and_addresses_are_not_quantities():
    text = (
        "On 12/25 she baked 40 cookies. Between 2000 and 2005 the town grew. Call 555-1234 or 555-123-4567. "
        "Dial (800) 555-0199 at 9 a.m. She lives at 42 Oak Street. The fair ran from June 3 to June 17, 2020, "
        "and opened on May 4, 1901 and 1 May 2006. He was born on 3/14/1998."
    )
    assert quantities(text) == [("40", Fraction(40), "integer")]


def test_units_and_objects_stay_on_the_right_words():
    text = "He spent 10% of $200 on food. She poured 20% of the 3 liters of juice into cups."
    assert described(text) == [
        ("10%", Fraction(1, 10), "percent", "%", None),  # not the object "200"
        ("$200", Fraction(200), "integer", "$", None),
        ("20%", Fraction(1, 5), "percent", "%", "juice"),
        ("3", Fraction(3), "integer", "liters", "juice"),
    ]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789-−.,/⁄½¾eE^{}kKMBbn x×:$", max_size=60))
def test_parse_number_never_raises(text):
    parsed = parse_number(text)
    assert parsed is None or (isinstance(parsed[0], Fraction) and parsed[1] in ("integer", "decimal", "fraction"))


def values(text: str) -> list[tuple[str, Fraction]]:
    return [(q.text, q.value) for q in PARSER.parse(text).quantities()]


def test_number_words_with_and_a_comma_a_bare_scale_and_scales_past_a_trillion():
    text = (
        "It was two thousand and nineteen, the sun was hundred and twelve km away, the bill was three million, "
        "two hundred & forty dollars, a thousand more came, and thousand is a word. Then came two quadrillion."
    )
    assert values(text) == [
        ("two thousand and nineteen", Fraction(2019)),
        ("hundred and twelve", Fraction(112)),
        ("three million, two hundred & forty", Fraction(3_000_240)),
        ("thousand", Fraction(1000)),
        ("thousand", Fraction(1000)),
        ("two quadrillion", Fraction(2 * 10**15)),
    ]


def test_a_run_of_number_words_ends_where_a_word_cannot_follow():
    assert values("one two three four twenty fifteen") == [
        ("one", 1),
        ("two", 2),
        ("three", 3),
        ("four", 4),
        ("twenty", 20),
        ("fifteen", 15),
    ]
    assert values("I have two thousand, two million, then seventy-five thousands.") == [
        ("two thousand", 2000),
        ("two million", 2_000_000),
        ("seventy-five thousands", 75_000),
    ]
    assert values("nineteen hundred seventy-three and one hundred and three quarters") == [
        ("nineteen hundred seventy-three", 1973),
        ("one hundred and three quarters", Fraction(403, 4)),
    ]


def test_spoken_decimals_signs_and_ranks():
    text = "It is two point three, then twelve point ninety-nine, then point one, minus fifteen, and twenty-first."
    assert values(text) == [
        ("two point three", Fraction(23, 10)),
        ("twelve point ninety-nine", Fraction(1299, 100)),
        ("point one", Fraction(1, 10)),
        ("minus fifteen", -15),
    ]
    assert values("A trillionth is tiny and a hundred trillionths more so.") == [
        ("trillionth", Fraction(1, 10**12)),
        ("hundred trillionths", Fraction(1, 10**10)),
    ]


def test_thousands_spaces_suffixes_units_glued_on_and_accounting_negatives():
    text = (
        "It costs 10 000 dollars. Italy's GDP is $2.174T. A 25lbs bag covers 4km^2. "
        "At 300 °C (573.15K) it melts. Net loss was ($99.99), or ($1.2 million) in all."
    )
    assert values(text) == [
        ("10 000", 10000),
        ("$2.174T", 2174 * 10**9),
        ("25", 25),
        ("4", 4),
        ("300", 300),
        ("573.15K", Fraction(57315, 100)),  # kelvin beside a temperature, not 573,150
        ("$99.99", Fraction(-9999, 100)),
        ("$1.2 million", -1_200_000),
    ]
    assert values("It is 8- to 16-meter wide, 3.5–4.0 TeV, 2,000.45±0.01 pounds, 2.48×10−5 of it.") == [
        ("8", 8),
        ("16", 16),
        ("3.5", Fraction(7, 2)),
        ("4.0", 4),
        ("2,000.45", Fraction(200045, 100)),
        ("0.01", Fraction(1, 100)),
        ("2.48×10−5", Fraction(248, 10**7)),
    ]


def test_numbers_that_name_rather_than_count():
    text = (
        "Voyager 2 passed MACS J1149.5+6663 in 1979. The class is English 101. The 2013-14 season was long. "
        "That one costs $5 at 2.13 am. The iPhone 12 sold at South 32 Ltd. Each one weighs 3 kg."
    )
    assert values(text) == [("$5", 5), ("3", 3)]


def test_a_decade_a_quadruple_batch_and_a_count_after_a_name():
    # "a decade" is 10 years as "a dozen" is 12; "quadruple" is 4 as "triple" is 3
    assert quantities("Allen will be 30 a decade from now.") == [("30", 30, "integer"), ("decade", 10, "word")]
    assert PARSER.parse("Allen will be 30 a decade from now.").quantities()[1].unit == "years"
    assert quantities("Mark is making a quadruple batch of brownies.") == [("quadruple", 4, "word")]
    assert quantities("The decade was long.") == []  # no article: the word names a time, it states no number
    # a number after a name is a count when a comparison follows it ("Voyager 2" stays a name)
    text = "Then Colby took from Griffin 3 less than the number of fries that Kyle had taken."
    assert quantities(text) == [("3", 3, "integer")]
    assert quantities("Voyager 2 flew by Jupiter.") == []


def test_a_third_before_a_noun_is_a_rank_but_a_third_of_or_a_third_cup_a_fraction():
    text = "He built a third set. He ate a third of the pie and a third cup of milk."
    assert quantities(text) == [("third", Fraction(1, 3), "word"), ("third", Fraction(1, 3), "word")]
    assert PARSER.parse(text).quantities()[1].unit == "cup"


def test_a_command_after_a_condition_is_the_question():
    # no "?" and no asking word first: the main verb, a command with no subject, marks the question
    graph = PARSER.parse("Their total age is 162. If their total age now is 162, calculate Allen's age in 10 years.")
    assert [s.is_question for s in problem_sentences(graph)] == [False, True]
    assert [(q.value, q.in_question) for q in graph.quantities()] == [(162, False), (162, True), (10, True)]
    statement = PARSER.parse("Their total age is 162. They calculate Allen's age.")  # a subject: not a command
    assert [s.is_question for s in problem_sentences(statement)] == [False, False]


def test_a_unit_exponent_is_not_a_number_and_glued_factors_are_two():
    # "m s-1" is metres per second: the -1 belongs to the unit; "0.5 s-1" is a rate
    assert [(q.text, q.value) for q in PARSER.parse("The wind was 12 m s-1 and decays at 0.5 s-1.").quantities()] == [
        ("12", 12),
        ("0.5", Fraction(1, 2)),
    ]
    # "8x2^10" is 8 times 2 to the 10th: its literals 8, 2 and 10, as "8 x 2^10" written apart gives them
    assert [(q.text, q.value) for q in PARSER.parse("The memory holds 8x2^10 bytes on a 4x6 board.").quantities()] == [
        ("8", 8),
        ("2", 2),
        ("10", 10),
        ("4", 4),
        ("6", 6),
    ]
    assert [q.value for q in PARSER.parse("Use base-10 logs.").quantities()] == [10]


# ---------------------------------------------------------------- numbers as reports and worked solutions write them
def test_arithmetic_written_without_spaces_gives_every_number():
    # each step hand-checked: 8*2 = 16, 12/3 = 4 (a division: 12 and 3, not the fraction 4), 1/2 = 0.5
    assert values("He ends with 8*2=16 pounds.") == [("8", 8), ("2", 2), ("16", 16)]
    assert values("So 12/3=4 and 1/2=0.5 of it.") == [
        ("12", 12),
        ("3", 3),
        ("4", 4),
        ("1/2", Fraction(1, 2)),
        ("0.5", Fraction(1, 2)),
    ]
    assert values("They ran 6+7+8= 21 miles.") == [("6", 6), ("7", 7), ("8", 8), ("21", 21)]
    assert values("It costs 7x3=21 dollars.") == [("7", 7), ("3", 3), ("21", 21)]


def test_a_whole_valued_slash_is_a_division_and_a_proper_one_a_fraction():
    # $14/2 = $7 computes 14 / 2; 3/4 of the cake is three quarters
    assert values("He owed Manny $14/2 = $7.") == [("$14", 14), ("2", 2), ("$7", 7)]
    assert values("She ate 3/4 of the cake.") == [("3/4", Fraction(3, 4))]
    assert PARSER.parse("He owed Manny $14/2 = $7.").quantities()[0].unit == "$"


def test_number_words_inside_hyphenated_words_and_the_idiom_one_moment():
    assert values("If p, q and r are three non-zero integers, find them.") == [("three", 3)]
    assert values("The half-life of carbon-14 is 5,730 years; his half-brother is 12.") == [
        ("5,730", 5730),
        ("12", 12),
    ]
    assert values("It was a half-hour walk.") == [("half", Fraction(1, 2))]  # half an hour is a number
    assert values("One moment please! One second, please. It took one second.") == [("one", 1)]


def test_accounting_negative_with_the_sign_outside_the_brackets_and_a_year_after_for():
    assert values("Operating cash flow was $(4.2) million in 2022.") == [("$(4.2) million", -4200000)]
    assert values("The budget shows a deficit of (€ 820,000) for 2024.") == [("€ 820,000", -820000)]
    assert values("He saved for 2024 days.") == [("2024", 2024)]  # a count after "for", not a year
    assert values("She sold her car for 2000.") == [("2000", 2000)]  # a price after "for", not a year


def test_one_digit_and_one_space_group_with_a_unit_a_zero_group_or_a_currency_sign():
    assert values("The file is 3.5 GB, about 3 500 MB.") == [("3.5", Fraction(7, 2)), ("3 500", 3500)]
    assert values("He paid 5 000 dollars for 2 100 dollar bills.") == [("5 000", 5000), ("2", 2), ("100", 100)]
    assert values("It is 3\u00a0500 km long and 2\u202f000 m high.") == [("3\u00a0500", 3500), ("2\u202f000", 2000)]


def test_a_lower_case_m_after_money_is_a_million():
    assert values("It cost $3m, or £4.1m.") == [("$3m", 3000000), ("£4.1m", 4100000)]
    assert values("The rope is 4.1m long.") == [("4.1", Fraction(41, 10))]  # metres without a currency sign


def test_a_percent_sign_written_once_for_both_ends_of_a_range():
    assert values("Prices rose from 50 to 80%, by 5-7% or between 10 and 20%.") == [
        ("50", Fraction(1, 2)),
        ("80%", Fraction(4, 5)),
        ("5", Fraction(1, 20)),
        ("7%", Fraction(7, 100)),
        ("10", Fraction(1, 10)),
        ("20%", Fraction(1, 5)),
    ]
    assert values("He has 10 and 20% of it.") == [("10", 10), ("20%", Fraction(1, 5))]  # no "between": a count


def test_unicode_minus_and_huge_arithmetic_tokens_stay_exact_and_fast():
    import time

    assert values("It fell to −12 °C, then 10−4=6 more.")[0] == ("−12", -12)
    huge = "7" * 5000
    start = time.perf_counter()
    found = values(f"So 8*2={huge} and {huge}/2=3 and $ {huge[:3]} {huge[:3]}.")
    assert time.perf_counter() - start < 5
    assert ("8", 8) in found and all(len(text) <= 20 for text, _ in found)


def test_zero_as_a_reference_point_one_of_two_and_a_size_after_a_name():
    assert values("It read -8 degrees. How far below zero is it?") == [("-8", -8)]
    assert values("Boys to girls is 4:7 in one class and 9:2 in the other.") == [("4", 4), ("7", 7), ("9", 9), ("2", 2)]
    assert values("He has one dog and the other kids have two.") == [("one", 1), ("two", 2)]
    assert values('Bahco 9031 Ergo Wide Jaw Adjustable Wrench 8"') == [("8", 8)]
    assert values('The class is "English 101".') == []  # a closing quote, not inches


@settings(max_examples=25, deadline=None)
@given(st.text(alphabet="0123456789=+*x/$−-.,  \u00a0", min_size=1, max_size=40))
def test_arithmetic_like_text_never_raises(text):
    for quantity in PARSER.parse(f"So {text} apples.").quantities():
        assert isinstance(quantity.value, Fraction) and quantity.text.strip()


def test_a_number_written_alone_takes_a_sign_or_a_suffix_set_apart_by_spaces():
    assert values("- 1 4/5") == [("- 1 4/5", Fraction(-9, 5))]
    assert values("- 10  k") == [("- 10  k", -10000)]
    assert values(" 2.33 k") == [("2.33 k", Fraction(2330))]
    assert values("He ran 10 k and lost - 5 apples.") == [("10", 10), ("5", 5)]  # in a sentence: not read
