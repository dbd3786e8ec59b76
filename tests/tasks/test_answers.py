"""Answer extraction and SymPy answer checking on real MATH answers and GSM8K solutions (strings copied from the data)."""

import pytest

from mathgraph.tasks.answers import (
    answers_equal,
    extract_answer,
    normalize_answer,
    reference_answer,
)

# Real GSM8K training solutions.
GSM8K_NATALIA = (
    "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips "
    "altogether in April and May.\n#### 72"
)
GSM8K_ADAM = (
    "The amount of money deducted from Adam's daily pay is $40 / 10 = $<<40/10=4>>4.\nSo after deducting 10%, "
    "Adam\u2019s daily pay is $40 \u2013 $4 = $<<40-4=36>>36.\nThis means that in 30 days he earns "
    "$36 * 30 = $<<36*30=1080>>1080.\n#### 1,080"
)


@pytest.mark.parametrize(
    "text, expected",
    [
        (GSM8K_NATALIA, "72"),
        (GSM8K_ADAM, "1,080"),
        ("Multiply: $\\frac{1}{2}\\cdot\\frac14$, so the answer is $\\boxed{\\frac{1}{8}}$.", "\\frac{1}{8}"),
        (
            "First $\\boxed{3}$, corrected: $\\boxed{\\left( \\frac{3}{16}, \\frac{11}{16} \\right)}$.",
            "\\left( \\frac{3}{16}, \\frac{11}{16} \\right)",
        ),
        ("So $x = \\boxed 5$.", "5"),
        ("Adding them, we get 30 + 42 = 72. The answer is 72.", "72"),
        ("The answer is \nCorrected solution: 5 apples", "5"),  # an empty answer line does not take the next line
        ("The answer is $\\frac{3}{4}$. We double-check 2 + 2 = 4.", "\\frac{3}{4}"),
        ("Final answer: 18 dollars", "18 dollars"),
        ("**Answer:** 42", "42"),
        ("She has 3 apples and then 4.5 more", "4.5"),
        ("Total is 1,250 people", "1,250"),
        ("no digits here at all", None),
        ("", None),
        (None, None),
    ],
)
def test_extract_answer(text, expected):
    assert extract_answer(text) == expected


def test_extract_answer_unbalanced_box_falls_back():
    assert extract_answer("we get 7 so \\boxed{\\frac{1}{2}") == "2"  # no usable box: the last number


def test_extract_answer_rejects_non_strings():
    with pytest.raises(TypeError, match="string"):
        extract_answer(72)


def test_reference_answer_keeps_bare_answers_whole():
    assert reference_answer("\\frac{1}{4}") == "\\frac{1}{4}"  # MATH answer field: not reduced to "4"
    assert reference_answer(GSM8K_ADAM) == "1,080"
    assert reference_answer("  ") is None and reference_answer(None) is None


# (answer as MATH writes it, an equivalent form a model may produce)
EQUIVALENT = [
    ("\\frac 18", "0.125"),
    ("\\frac{1}{8}", "1/8"),
    ("\\dfrac{243}{1024}", "\\frac{243}{1024}"),
    ("\\tfrac12", "0.5"),
    ("\\$30", "30"),
    ("\\$ 1.06", "1.06"),
    ("11,\\!880", "11880"),
    ("20,\\!000,\\!000", "20000000"),
    ("22,500", "22500"),
    ("1,080", "1080"),
    ("180\\text{ miles}", "180"),
    ("125\\textnormal{ miles}", "125 miles"),
    ("12\\sqrt{13}\\text{ feet}", "12\\sqrt{13}"),
    ("428\\text{ square centimeters}", "428"),
    ("54^\\circ", "54"),
    ("105^\\circ", "105^{\\circ}"),
    ("20\\%", "20"),
    ("32 \\%", "32\\%"),
    ("237.5\\%", "237.5"),
    ("10.00", "10"),
    ("\\frac{2\\sqrt{3}}{3}", "\\frac{2}{\\sqrt3}"),
    ("100-25\\pi", "-25\\pi + 100"),
    ("\\frac{\\pi}{4}", "0.25\\pi"),
    ("b = -4", "-4"),
    ("x = \\frac{3}{2}", "1.5"),
    ("y = 2x - 13", "y = -13 + 2x"),
    ("(-\\infty,0]", "(-\\infty, 0]"),
    ("[8,\\infty)", "[8, \\infty)"),
    ("(-\\infty,3) \\cup (3,\\infty)", "(-\\infty, 3)\\cup(3, \\infty)"),
    ("\\left( -\\infty, \\frac{3}{4} \\right)", "(-\\infty, 0.75)"),
    ("\\left[ \\frac{3}{4}, 1 \\right]", "[3/4, 1]"),
    ("\\left( \\frac{3}{16}, \\frac{11}{16} \\right)", "(3/16, 11/16)"),
    ("(4,-2,3)", "(4, -2, 3)"),
    ("(4 \\sqrt{2}, 4 \\sqrt{2}, \\sqrt{3})", "(\\sqrt{32}, \\sqrt{32}, \\sqrt{3})"),
    ("\\begin{pmatrix} 1 & 0 \\\\ 0 & 3 \\end{pmatrix}", "\\begin{pmatrix}1&0\\\\0&3\\end{pmatrix}"),
    ("\\begin{pmatrix} 0 \\\\ 1/11 \\end{pmatrix}", "\\begin{pmatrix} 0 \\\\ \\frac{1}{11} \\end{pmatrix}"),
    ("\\text{Wednesday}", "Wednesday"),
    ("\\text{(C)}", "(C)"),
    ("2^{2008} -2", "2^{2008}-2"),
    ("$\\frac{1}{4}$", "\\frac{1}{4}"),
]


@pytest.mark.parametrize("a, b", EQUIVALENT)
def test_equivalent_forms_are_equal(a, b):
    assert answers_equal(a, b)
    assert answers_equal(b, a)


# Real MATH answers next to a near miss: a different value, or the same endpoints with other brackets.
DIFFERENT = [
    ("\\frac 18", "0.12"),
    ("11,\\!880", "1188"),
    ("(-\\infty,3)", "(-\\infty,3]"),
    ("[8,\\infty)", "(8,\\infty)"),
    ("(-\\infty,3) \\cup (3,\\infty)", "(-\\infty,\\infty)"),
    ("(4,-2,3)", "(4,2,3)"),
    ("(4,12)", "(12,4)"),
    ("2^{2008} -2", "4"),  # both huge-or-small: float overflow must not make them "close"
    ("3.14", "\\pi"),
    ("\\text{Wednesday}", "\\text{Tuesday}"),
    ("\\text{Wednesday}", "\\text{Wdenesday}"),  # the same letters: words are not products of symbols
    ("y = 2x - 13", "y = 2x + 13"),
    ("\\begin{pmatrix} 1 & 0 \\\\ 0 & 3 \\end{pmatrix}", "\\begin{pmatrix} 1 & 0 \\\\ 0 & 4 \\end{pmatrix}"),
    ("54^\\circ", "45"),
]


@pytest.mark.parametrize("a, b", DIFFERENT)
def test_different_answers_are_not_equal(a, b):
    assert not answers_equal(a, b)
    assert not answers_equal(b, a)


def test_bare_lists_compare_as_multisets():
    assert answers_equal("2, -3", "-3, 2")
    assert not answers_equal("2, -3", "2, 3")
    assert not answers_equal("1, 2", "1, 2, 2")


@pytest.mark.parametrize(
    "garbage",
    [
        None,
        "",
        "}}{{",
        "\\sqrt{",
        "\\frac{1}{",
        "((((",
        "\\begin{pmatrix}",
        "import os",
        "__import__('os').system('true')",
        "x" * 5000,
        3.5,
        object(),
    ],
)
def test_garbage_never_raises(garbage):
    assert answers_equal(garbage, "1") is False
    assert answers_equal("1", garbage) is False


def test_plain_numbers_as_numbers():
    assert answers_equal(72, "72")
    assert answers_equal("72.0", 72)


def test_gsm8k_extracted_answers_match_their_reference():
    assert answers_equal(extract_answer(GSM8K_ADAM), "1080")
    assert answers_equal(
        extract_answer("So Adam earns $1080 in total. The answer is $1,080."), reference_answer(GSM8K_ADAM)
    )


def test_normalize_answer_removes_notation():
    assert normalize_answer("\\left( -\\infty, \\dfrac{7}{4} \\right]") == "(-\\infty,\\frac{7}{4}]"
    assert normalize_answer("11,\\!880\\text{ dollars}") == "11880"
    assert normalize_answer("\\$ 1.50") == "1.5"
    assert normalize_answer(None) == ""
