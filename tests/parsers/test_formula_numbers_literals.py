"""Numbers read off formulas (``parsers.formula_numbers``): the literals of complex numbers, logarithm
bases, powers of two, repeating decimals, thin-space digit groups, signed mixed numbers and numbers in
``\\text{...}``, each value worked out by hand."""

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from mathgraph.parsers.problem import ProblemParser

PARSER = ProblemParser("spacy")


def read(text: str) -> list[tuple[str, Fraction]]:
    """(written, value) of every quantity, each checked to be a formula quantity whose span spells it."""
    found = PARSER.parse(text).quantities()
    for q in found:
        assert q.form == "formula" and text[q.span[0] : q.span[1]] == q.text
    return [(q.text, q.value) for q in found]


def test_complex_numbers_give_their_real_literals():
    # i is the imaginary unit, not a number written in digits: 5i gives 5, 5(1+i) gives 5 and 1
    assert read("Let $z = 5(1+i)$ and $w = 5i - 3$.") == [("5", 5), ("1", 1), ("5", 5), ("3", 3)]
    assert read("Then $\\overline{z} = 2-3i$ and $|3+4i| = 5$.") == [("2", 2), ("3", 3), ("3", 3), ("4", 4), ("5", 5)]
    assert read("So $-5i \\cdot i = 5$.") == [("-5", -5), ("5", 5)]


def test_a_logarithm_base_in_an_aligned_display_is_a_literal():
    text = "We get \\[\\begin{aligned} \\log_2 x &= 3 \\\\ x &= 2^3 = 8 \\end{aligned}\\]"
    assert read(text) == [("2", 2), ("3", 3), ("2", 2), ("3", 3), ("8", 8)]
    assert read("Solve $$\\begin{aligned}\\log_{2} x &= \\log_2 3 + \\log_2 5\\end{aligned}$$") == [
        ("2", 2),
        ("2", 2),
        ("3", 3),
        ("2", 2),
        ("5", 5),
    ]


def test_a_power_of_two_times_a_number_is_a_computation_not_scientific_notation():
    assert read("A word of $8 \\times 2^{10}$ bits.") == [("8", 8), ("2", 2), ("10", 10)]
    assert read("A word of $8 \\times 10^{3}$ bits.") == [("8 \\times 10^{3}", 8000)]


def test_a_repeating_decimal_is_one_number():
    assert read("Write $0.\\overline{3}$ as a fraction.") == [("0.\\overline{3}", Fraction(1, 3))]
    # 0.1666... = 1/10 + 6/90 = 1/6; 54.555... = 54 + 5/9 = 491/9; 0.1212... = 12/99 = 4/33
    assert read("Here $0.1\\overline{6}$, $54.\\overline{5}$ and $.\\overline{12}$.") == [
        ("0.1\\overline{6}", Fraction(1, 6)),
        ("54.\\overline{5}", Fraction(491, 9)),
        (".\\overline{12}", Fraction(4, 33)),
    ]
    # 0.0505... = 5/99 (the bar's leading zero counts); 1.2727... = 1 + 27/99 = 14/11; a sign goes with it
    assert read("So $0.\\overline{05}$, $1.\\overline{27} + 2$ and $-0.\\overline{3}$.") == [
        ("0.\\overline{05}", Fraction(5, 99)),
        ("1.\\overline{27}", Fraction(14, 11)),
        ("2", 2),
        ("-0.\\overline{3}", Fraction(-1, 3)),
    ]


def test_a_bar_over_letters_or_a_segment_is_not_a_repeating_decimal():
    # the whole part before a bar over letters is still the literal 0
    assert read("The digits $0.\\overline{AB}$ repeat and $\\overline{12}$ is a segment.") == [("0.", 0), ("12", 12)]


@settings(max_examples=15, deadline=None)
@given(
    whole=st.integers(0, 999),
    decimals=st.text("0123456789", max_size=3),
    period=st.text("0123456789", min_size=1, max_size=3),
)
def test_a_repeating_decimal_satisfies_the_shift_identity(whole, decimals, period):
    # x = w.d(p)(p)...: x * 10^(|d|+|p|) - x * 10^|d| = wdp - wd, an integer, as written
    written = f"{whole}.{decimals}\\overline{{{period}}}"
    [(text, value)] = read(f"Let ${written}$.")
    assert text == written
    shifted = value * 10 ** (len(decimals) + len(period)) - value * 10 ** len(decimals)
    assert shifted == int(f"{whole}{decimals}{period}") - int(f"{whole}{decimals}")


def test_thin_spaces_group_the_digits_of_one_number():
    assert read("The number $19\\,836$ is divisible by $9$.") == [("19\\,836", 19836), ("9", 9)]
    assert read("But $47\\,389\\,248$ is.") == [("47\\,389\\,248", 47389248)]


def test_a_thin_spaced_number_past_max_digits_is_not_one_number():
    groups = "\\,".join(["123"] * 34)  # 102 digits, more than MAX_DIGITS (100)
    assert len(read(f"Let ${groups}$.")) == 34


def test_thin_spaces_that_are_not_groups_of_three_keep_their_literals():
    assert read("Compare $2\\,1$ and $992\\,466\\,1A6$.") == [
        ("2", 2),
        ("1", 1),
        ("992", 992),
        ("466", 466),
        ("1", 1),
        ("6", 6),
    ]


def test_a_mixed_number_carries_its_sign_and_a_binary_minus_does_not():
    assert read("Let $y = -2\\frac{1}{3}$.") == [("-2\\frac{1}{3}", Fraction(-7, 3))]
    assert read("Let $y = +2\\frac{1}{2}$.") == [("+2\\frac{1}{2}", Fraction(5, 2))]
    assert read("Let $y = x - 2\\frac{1}{3}$.") == [("2\\frac{1}{3}", Fraction(7, 3))]
    assert read("Let $y = 3 - 2\\frac{1}{2}$.") == [("3", 3), ("2\\frac{1}{2}", Fraction(5, 2))]


def test_a_number_that_opens_a_text_in_a_formula_is_read_with_its_own_span():
    text = "$\\textbf{(A)} \\text{ 510} \\qquad \\textbf{(B)} \\text{ 65,534}$"
    assert read(text) == [("510", 510), ("65,534", 65534)]
    assert read("Let $m = \\underbrace{222}_{\\text{3 digits}}$.") == [("222", 222), ("3", 3)]


def test_a_text_in_a_formula_that_does_not_open_with_a_number_gives_none():
    assert read("So $x \\text{ in 2019}$, $\\text{3rd}$ and $\\text{5-digit}$.") == []
