"""Tests for parsers.segment: formulas, excluded blocks, masked text, offsets."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathgraph.parsers.segment import PLACEHOLDER, ExcludedBlock, Formula, Segmentation, segment

_OPENERS = {"$": "$", "$$": "$$", "\\(": "\\(", "\\[": "\\["}
_CLOSERS = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}
_UNESCAPE = {"\\$": "$", "\\%": "%", "\\&": "&", "\\#": "#", "\\_": "_"}


def check_invariants(seg: Segmentation) -> None:
    """Everything segment() promises about any Segmentation."""
    src, masked = seg.source, seg.masked_text
    assert len(seg.formulas) == len(seg.placeholder_spans)
    # formulas: inside the source, in order, not overlapping
    prev_end = 0
    for f in seg.formulas:
        s, e = f.span
        bs, be = f.body_span
        assert 0 <= prev_end <= s <= bs <= be <= e <= len(src)
        prev_end = e
        if f.delimiter in _OPENERS:
            assert src.startswith(_OPENERS[f.delimiter], s)
            assert src[:e].endswith(_CLOSERS[f.delimiter])
            assert src[bs:be] == f.latex
        elif f.delimiter == "env":
            assert src.startswith("\\begin", s) and src[bs:be] == f.latex
            assert re.search(r"\\end\s*\{[A-Za-z]+\*?\}$", src[s:e])
        elif f.delimiter == "cut":  # a display missing its opener or its closer, never both
            assert src.startswith("\\[", s) != src[:e].endswith("\\]") and src[bs:be] == f.latex
        else:
            assert f.delimiter == "bare" and (bs, be) == (s, e)
            assert f.latex.strip()
        assert f.display == (f.delimiter in ("$$", "\\[", "env", "cut"))
    # placeholders: in order, not overlapping, each one word mapping to its formula
    prev_end = 0
    for (a, b), f in zip(seg.placeholder_spans, seg.formulas):
        assert prev_end <= a < b <= len(masked)
        prev_end = b
        assert masked[a:b] == PLACEHOLDER
        assert seg.to_source_span(a, b) == f.span
        # a placeholder is never glued to a letter or digit or another placeholder
        assert a == 0 or not masked[a - 1].isalnum()
        assert b == len(masked) or not masked[b].isalnum()
    # excluded blocks: in order, not overlapping, not overlapping formulas
    # (a calc annotation may lie inside a bare formula)
    prev_end = 0
    for x in seg.excluded:
        s, e = x.span
        assert 0 <= prev_end <= s < e <= len(src)
        prev_end = e
        for f in seg.formulas:
            if f.delimiter == "bare" and x.kind == "calc":
                continue
            assert e <= f.span[0] or s >= f.span[1], (x, f)
    # every masked character maps back into the source
    in_ph = set()
    for a, b in seg.placeholder_spans:
        in_ph.update(range(a, b))
    for k, ch in enumerate(masked):
        s, e = seg.to_source_span(k, k + 1)
        assert 0 <= s <= e <= len(src)
        if k in in_ph or s == e:
            continue
        # excluded text never reaches the masked text
        assert all(e <= x.span[0] or s >= x.span[1] for x in seg.excluded), (k, ch)
        piece = src[s:e]
        assert piece == ch or _UNESCAPE.get(piece) == ch or ch.isspace(), (k, ch, piece)
    # round trip for every word
    for m in re.finditer(r"\S+", masked):
        s, e = seg.to_source_span(m.start(), m.end())
        assert 0 <= s < e <= len(src)
        for k in range(m.start(), m.end()):
            cs, ce = seg.to_source_span(k, k + 1)
            assert cs == ce or s <= cs <= ce <= e


def words_back(seg: Segmentation) -> list[str]:
    """The source text of every word of the masked text."""
    out = []
    for m in re.finditer(r"\S+", seg.masked_text):
        s, e = seg.to_source_span(m.start(), m.end())
        out.append(seg.source[s:e])
    return out


# --------------------------------------------------------------------------- delimiters


@pytest.mark.parametrize(
    "text, delimiter, latex, display",
    [
        ("Let $x+1$ be odd.", "$", "x+1", False),
        ("Solve for $x$: $$2^x+6=3\\cdot2^x-26$$", "$$", "2^x+6=3\\cdot2^x-26", True),
        ("Let \\(a^2\\) be given.", "\\(", "a^2", False),
        ("Let\n\\[f(n) = n^2\\]Find it.", "\\[", "f(n) = n^2", True),
    ],
)
def test_each_delimiter(text, delimiter, latex, display):
    seg = segment(text)
    check_invariants(seg)
    f = seg.formulas[-1]
    assert (f.delimiter, f.latex, f.display) == (delimiter, latex, display)
    s, e = f.span
    opener, closer = _OPENERS[delimiter], _CLOSERS[delimiter]
    assert text[s:e] == opener + latex + closer
    assert text[f.body_span[0] : f.body_span[1]] == latex


def test_spans_exact_on_real_math_problem():
    text = "How many positive integers less than $101$ are multiples of either $5$ or $7$, but not both at once?"
    seg = segment(text)
    check_invariants(seg)
    assert [f.latex for f in seg.formulas] == ["101", "5", "7"]
    assert [f.span for f in seg.formulas] == [(37, 42), (67, 70), (74, 77)]
    assert [f.body_span for f in seg.formulas] == [(38, 41), (68, 69), (75, 76)]
    assert seg.masked_text == (
        "How many positive integers less than MATH are multiples of either MATH or MATH, but not both at once?"
    )
    assert seg.placeholder_spans == ((37, 41), (66, 70), (74, 78))
    assert seg.excluded == ()


def test_to_source_span_round_trip_every_word():
    text = "Let $f(x)=x^2+1$. Find the minimum value of $f$ on $[0,2]$, costing \\$20."
    seg = segment(text)
    check_invariants(seg)
    assert seg.masked_text == "Let MATH. Find the minimum value of MATH on MATH, costing $20."
    assert words_back(seg) == [
        "Let",
        "$f(x)=x^2+1$.",
        "Find",
        "the",
        "minimum",
        "value",
        "of",
        "$f$",
        "on",
        "$[0,2]$,",
        "costing",
        "\\$20.",
    ]
    # empty and out-of-range requests are clamped, never raise
    assert seg.to_source_span(0, 0) == (0, 0)
    assert seg.to_source_span(-5, 3) == (0, 3)
    assert seg.to_source_span(0, 10_000) == (0, len(text))


def test_trailing_punctuation_moves_out_of_formula():
    # MATH style puts the sentence's full stop inside the math
    text = "The polynomial $2x^3 + bx + 7$ has a factor of the form $x^2 + px + 1.$  Find $b.$"
    seg = segment(text)
    check_invariants(seg)
    assert [f.latex for f in seg.formulas] == ["2x^3 + bx + 7", "x^2 + px + 1", "b"]
    assert [text[f.span[0] : f.span[1]] for f in seg.formulas] == ["$2x^3 + bx + 7$", "$x^2 + px + 1.$", "$b.$"]
    assert seg.masked_text == "The polynomial MATH has a factor of the form MATH.  Find MATH."
    # the full stop maps to its own character inside the formula's delimiters
    k = seg.masked_text.index("MATH.") + 4
    s, e = seg.to_source_span(k, k + 1)
    assert text[s:e] == "." and seg.formulas[1].span[0] < s < seg.formulas[1].span[1]
    # escaped punctuation (a thin space) stays in the formula
    assert segment("Let $a\\,$ be").formulas[0].latex == "a\\,"
    assert segment("What is $\\dfrac{3 \\times 4}{6}?$").masked_text == "What is MATH?"
    # a final "!" is a factorial, not the end of a sentence
    assert [f.latex for f in segment("Is it a factor of $4!$? Or of $n!.$").formulas] == ["4!", "n!"]


# --------------------------------------------------------------------------- dollars


def test_escaped_dollar_is_money_and_reads_naturally():
    text = "A ticket costs \\$20 and a meal \\$7.50; is $x$ enough?"
    seg = segment(text)
    check_invariants(seg)
    assert seg.masked_text == "A ticket costs $20 and a meal $7.50; is MATH enough?"
    assert [f.latex for f in seg.formulas] == ["x"]
    k = seg.masked_text.index("$20")
    assert seg.to_source_span(k, k + 3) == (15, 19)
    assert text[15:19] == "\\$20"


def test_real_math_money_inside_formulas():
    text = (
        "Every week, Judy goes to the supermarket and buys the following: $5$ carrots at $\\$1$ each, "
        "$3$ bottles of milk at $\\$3$ each, $2$ pineapples at $\\$4$ each, $2$ bags of flour at $\\$5$ each, "
        "and a giant $\\$7$ container of ice cream. This week the store has a sale and pineapples are half "
        "price. Judy also has a coupon for $\\$5$ off any order of $\\$25$ or over. How much money does Judy "
        "spend on this shopping trip?"
    )
    seg = segment(text)
    check_invariants(seg)
    assert [f.latex for f in seg.formulas] == [
        "5", "\\$1", "3", "\\$3", "2", "\\$4", "2", "\\$5", "\\$7", "\\$5", "\\$25",
    ]  # fmt: skip
    assert "$" not in seg.masked_text


@pytest.mark.parametrize(
    "text, latexes",
    [
        # real MATH problems whose formulas start with a digit or contain letters
        ("The polynomial $2x^3 + bx + 7$ has a factor", ["2x^3 + bx + 7"]),
        (
            "There are two values of $a$ for which the equation $4x^2 + ax + 8x + 9 = 0$ has only one solution",
            ["a", "4x^2 + ax + 8x + 9 = 0"],
        ),
        ("Find the greatest whole number that will satisfy this inequality: $4x-3 < 2 - x $.", ["4x-3 < 2 - x "]),
        (
            "Determine the number of pairs $(a,b)$ of real numbers such that $10, a, b, ab$ is an arithmetic "
            "progression.",
            ["(a,b)", "10, a, b, ab"],
        ),
        (
            "Define $a$ $\\$$ $b$ to be $a(b + 1) + ab$. What is the value of $(-2)$ $\\$$ $3$?",
            ["a", "\\$", "b", "a(b + 1) + ab", "(-2)", "\\$", "3"],
        ),
        ("A storm in Sydney, Australia, caused $\\$$30 million in damage.", ["\\$"]),
        ("It is $5 \\text{ cm}$ long and $10\\%$ wider.", ["5 \\text{ cm}", "10\\%"]),
        ("It is $5 cm$ long, not $5 apples$.", ["5 cm"]),
    ],
)
def test_real_math_formulas_stay_formulas(text, latexes):
    seg = segment(text)
    check_invariants(seg)
    assert [f.latex for f in seg.formulas] == latexes


@pytest.mark.parametrize(
    "text",
    [
        # real GSM8K questions: a bare $ is money
        "Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of babysitting. "
        "How much did she earn?",
        "Betty is saving money for a new wallet which costs $100. Betty has only half of the money she needs. "
        "Her parents decided to give her $15 for that purpose, and her grandparents twice as much as her "
        "parents. How much more money does Betty need to buy the wallet?",
        "Karen's class fund contains only $10 and $20 bills,  which amount to $120. The number of $10 bills is "
        "twice as many $20 bills. How many $20 bills do they have in their fund?",
        "Viggo spent $80 on a shirt. He paid the shirt using $20 and $10 bills. If she gave the clerk one more "
        "$20 bill than $10 bills, how many $10 bills did he give?",
        # real GSM8K / GSM-Plus solutions, including malformed ones
        "Mater:140000(.10)=14000$\nSally:14000(3)=42000$\n#### 42000",
        "Kim raised $420 + $530 =  950.\nMaryam raised $500 + $400 =  900.\nSo, in total, they raised $950 (Kim) "
        "+ $530 (Alexandra) + $900 (Maryam) + $400 (Sarah) = $\n#### 2780",
        "If each junior programmer is paid $2000, the total amount of money the company pays the junior "
        "programmers is 40*$2000 = $ 80000 per month.",
        "The amount of money spent on the shoes is 36-12=$24\nThe orginal price of the shoes is "
        "24/(1-40%)=$ 40\n $ 40\n#### 40",
        "To buy regular food items individually, they cost $5 + $3 + $3 = $<<5+3+3=11>>11.",
        "The cost of a T-shirt after 50% is taken off of the original price is $8 * 0.50 = $<<8*0.50=4>>4\nThe "
        "total cost of the T-shirts is $8 + $4 = $<<8+4=12>>12\nThe amount of money spent on the shoes is "
        "36-12=$24\nThe orginal price of the shoes is 24/(1-40%)=$ 40\n $ 40\n#### 40",
        "Pays $5, $10 or $15 each.",
    ],
)
def test_gsm8k_money_is_not_math(text):
    seg = segment(text)
    check_invariants(seg)
    assert seg.formulas == ()
    # the money amounts read as they are written
    expected = _CALC.sub("", text)
    assert seg.masked_text == expected


_CALC = re.compile(r"<<[^<>\n]*=[^<>\n]*>>")


def test_unclosed_dollar_is_literal():
    for text in ["Is $x a number?", "$", "a $ b", "$$x+1", "Let $\n\nx$ be"]:
        seg = segment(text)
        check_invariants(seg)
        assert seg.formulas == ()
        assert seg.masked_text == text
    # a $$ with a lone $ before its closing $$ is not display math (a typo in MATH)
    text = "each of which is worth a whole number of dollars from $$ 1$ to $$ 9999$ inclusive."
    seg = segment(text)
    check_invariants(seg)
    assert [(f.delimiter, f.latex) for f in seg.formulas] == [("$", " 1"), ("$", " 9999")]
    assert seg.masked_text == "each of which is worth a whole number of dollars from $ MATH to $ MATH inclusive."


def test_dollar_inside_text_inside_math():
    text = "Let $g(n) = \\begin{cases} 1 & \\text{if $n$ is odd} \\end{cases}$ for all $n$."
    seg = segment(text)
    check_invariants(seg)
    assert [f.latex for f in seg.formulas] == [
        "g(n) = \\begin{cases} 1 & \\text{if $n$ is odd} \\end{cases}",
        "n",
    ]
    real = (
        "Let\n\\[f(x) = \\left\\{\n\\begin{array}{cl}\nx + 3 & \\text{if $x < 20$}, \\\\\n2x - 2 & "
        "\\text{if $x \\ge 20$}.\n\\end{array}\n\\right.\\]Find $f^{-1}(7) + f^{-1}(46).$"
    )
    seg = segment(real)
    check_invariants(seg)
    assert [f.delimiter for f in seg.formulas] == ["\\[", "$"]
    assert seg.formulas[1].latex == "f^{-1}(7) + f^{-1}(46)"
    assert seg.masked_text == "Let\nMATH Find MATH."


# --------------------------------------------------------------------------- glued placeholders


@pytest.mark.parametrize(
    "text, masked",
    [
        ("the $x$-axis", "the MATH-axis"),
        ("the $5$th term", "the MATH th term"),
        ("$x$$y$", "MATH MATH"),
        ("($a$,$b$)", "(MATH, MATH)"),
        ("a$x$b", "a MATH b"),
        ("(p+$600) is ($\\frac25$)*p", "(p+$600) is (MATH )*p"),
        ("Day 4:2($x$)=540", "Day 4:2( MATH )=540"),
        ("the $x$-axis, $y$'s and $z$.", "the MATH-axis, MATH's and MATH."),
        ("$f$'s graph", "MATH's graph"),
        ("\\(x\\)\\(y\\)", "MATH MATH"),
    ],
)
def test_glued_placeholders_are_separated(text, masked):
    seg = segment(text)
    check_invariants(seg)
    assert seg.masked_text == masked
    assert len(re.findall(r"\bMATH\b", seg.masked_text)) == len(seg.formulas)


# --------------------------------------------------------------------------- excluded blocks, environments


def test_asy_excluded_with_its_labels():
    text = (
        "In triangle $ABC$, $AB = 5$, $BC = 4$, and $CA = 3$.\n\n[asy]\ndefaultpen(1);\n\npair C=(0,0), "
        'A = (0,3), B = (4,0);\ndraw(A--B--C--cycle);\n\nlabel("\\(A\\)",A,N);\nlabel("\\(B\\)",B,E);\n'
        'label("\\(C\\)",C,SW);\n[/asy]\n\nPoint $P$ is randomly selected inside triangle $ABC$.  What is the '
        "probability that $P$ is closer to $C$ than it is to either $A$ or $B$?"
    )
    seg = segment(text)
    check_invariants(seg)
    (blk,) = seg.excluded
    assert blk.kind == "asy"
    assert text[blk.span[0] : blk.span[1]].startswith("[asy]")
    assert text[blk.span[0] : blk.span[1]].endswith("[/asy]")
    assert "asy" not in seg.masked_text and "draw" not in seg.masked_text
    assert all(f.delimiter == "$" for f in seg.formulas)  # the \(A\) labels are not formulas
    assert len(seg.formulas) == 10
    assert seg.masked_text.startswith("In triangle MATH, MATH, MATH, and MATH.\n\n\n\nPoint MATH")


def test_unclosed_asy_excludes_to_the_end():
    seg = segment("Look: [asy] draw((0,0)--(1,1));")
    check_invariants(seg)
    assert seg.excluded == (ExcludedBlock("asy", (6, 31)),)
    assert seg.masked_text == "Look: "


def test_tabular_excluded_with_its_formulas():
    text = (
        "The values of a function $f(x)$ are given below:\n\n\\begin{tabular}{|c||c|c|c|c|c|} \\hline $x$ & 3 "
        "& 4 & 5 & 6 & 7 \\\\ \\hline $f(x)$ & 10 & 17 & 26 & 37 & 50 \\\\ \\hline \\end{tabular}Evaluate "
        "$f^{-1}\\left(f^{-1}(50)\\times f^{-1}(10)+f^{-1}(26)\\right)$."
    )
    seg = segment(text)
    check_invariants(seg)
    (blk,) = seg.excluded
    assert blk.kind == "tabular"
    assert text[blk.span[0] : blk.span[1]].startswith("\\begin{tabular}")
    assert text[blk.span[0] : blk.span[1]].endswith("\\end{tabular}")
    assert len(seg.formulas) == 2
    assert seg.masked_text == "The values of a function MATH are given below:\n\nEvaluate MATH."


def test_display_environment_outside_dollars():
    text = "Evaluate \\begin{align*}\n\\left(c^c-c(c-1)^c\\right)^c\n\\end{align*} when $c=3$."
    seg = segment(text)
    check_invariants(seg)
    env, c = seg.formulas
    assert env.delimiter == "env" and env.display
    assert env.latex == "\n\\left(c^c-c(c-1)^c\\right)^c\n"
    assert text[env.span[0] : env.span[1]] == text[9 : text.index(" when")]
    assert text[env.span[0] : env.body_span[0]] == "\\begin{align*}"
    assert c.latex == "c=3"
    assert seg.masked_text == "Evaluate MATH when MATH."
    for name in ["eqnarray*", "equation"]:
        seg = segment(f"So \\begin{{{name}}}x&=&1\\end{{{name}}} holds.")
        check_invariants(seg)
        assert [f.delimiter for f in seg.formulas] == ["env"]
        assert seg.masked_text == "So MATH holds."


def test_text_mode_commands_cleaned():
    seg = segment("\\textbf{Note:} the answer is $4$.\\qquad Done\\\\ now")
    check_invariants(seg)
    assert seg.masked_text == "Note: the answer is MATH. Done  now"
    seg = segment("\\textbf{a {b} c} \\emph{x \\textbf{y}} z")
    check_invariants(seg)
    assert seg.masked_text == "a {b} c x y z"


# --------------------------------------------------------------------------- GSM8K solutions


WENG = (
    "Weng earns 12/60 = $<<12/60=0.2>>0.2 per minute.\nWorking 50 minutes, she earned 0.2 x 50 = "
    "$<<0.2*50=10>>10.\n#### 10"
)
NATALIA = (
    "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether "
    "in April and May.\n#### 72"
)
MARTHA = (
    "Martha needs 3 skeins for a hat, 5 for a scarf, 15 for a sweater, 2 for mittens, and 3 for socks. This "
    "totals to 3 + 5 + 15 + 2 + 3 = 28 skeins for one grandchild.\n\nSince she has 5 grandchildren, she will "
    "need 28 * 5 =  140 skeins of wool.\n#### 140"
)


def test_calc_annotations_excluded_bare_off():
    seg = segment(WENG)
    check_invariants(seg)
    assert seg.formulas == ()
    assert [x.kind for x in seg.excluded] == ["calc", "calc"]
    assert [WENG[x.span[0] : x.span[1]] for x in seg.excluded] == ["<<12/60=0.2>>", "<<0.2*50=10>>"]
    assert seg.masked_text == (
        "Weng earns 12/60 = $0.2 per minute.\nWorking 50 minutes, she earned 0.2 x 50 = $10.\n#### 10"
    )


def test_bare_arithmetic_on():
    seg = segment(WENG, bare_arithmetic=True)
    check_invariants(seg)
    assert [f.delimiter for f in seg.formulas] == ["bare", "bare"]
    assert [f.latex for f in seg.formulas] == ["12/60 = \\$0.2", "0.2 \\times 50 = \\$10"]
    assert [WENG[f.span[0] : f.span[1]] for f in seg.formulas] == [
        "12/60 = $<<12/60=0.2>>0.2",
        "0.2 x 50 = $<<0.2*50=10>>10",
    ]
    assert seg.masked_text == "Weng earns MATH per minute.\nWorking 50 minutes, she earned MATH.\n#### 10"
    assert [x.kind for x in seg.excluded] == ["calc", "calc"]  # still listed

    seg = segment(NATALIA, bare_arithmetic=True)
    check_invariants(seg)
    assert [f.latex for f in seg.formulas] == ["48/2 = 24", "48+24 = 72"]
    assert seg.masked_text == (
        "Natalia sold MATH clips in May.\nNatalia sold MATH clips altogether in April and May.\n#### 72"
    )

    seg = segment(MARTHA, bare_arithmetic=True)
    check_invariants(seg)
    assert [f.latex for f in seg.formulas] == ["3 + 5 + 15 + 2 + 3 = 28", "28 \\times 5 = 140"]
    assert "3 skeins for a hat, 5 for a scarf" in seg.masked_text  # lone numbers stay words


def test_bare_arithmetic_off_by_default():
    seg = segment(MARTHA)
    check_invariants(seg)
    assert seg.formulas == () and seg.masked_text == MARTHA


@pytest.mark.parametrize(
    "text, latexes",
    [
        ("a lone 48 and 5 = 5 are not formulas", []),
        ("a 5-10 minute walk on 12/25/2020", []),
        ("half is 1/2 of it", ["1/2"]),
        ("so (3 + 4) x 2 = 14 and 3 × 4 ÷ 2 − 1 = 5", ["(3 + 4) \\times 2 = 14", "3 \\times 4 \\div 2 - 1 = 5"]),
        ("on the 6 - 2 = <<6-2=4>>4th floor", ["6 - 2 = 4"]),
        ("it took 11:00-8:00 = 3 hours", []),
        ("2x + 3 = 7 so x = 2", []),
        ("$5 + $3 + $3 = $11 and 1,000 - 250 = 750", ["\\$5 + \\$3 + \\$3 = \\$11", "1,000 - 250 = 750"]),
        ("100%-20% = 80%", ["100\\%-20\\% = 80\\%"]),
        # a number glued to a variable is not cut: "1.2Y" is not "1" + ".2Y"
        ("192 inches = Y + 0.20Y or 192 / 1.2 = 1.2Y / 1.2", ["192 / 1.2"]),
    ],
)
def test_bare_arithmetic_rules(text, latexes):
    seg = segment(text, bare_arithmetic=True)
    check_invariants(seg)
    assert [f.latex for f in seg.formulas] == latexes


def test_bare_arithmetic_does_not_touch_delimited_math():
    text = "If $2+3=5$ then 2 + 3 = 5 too."
    seg = segment(text, bare_arithmetic=True)
    check_invariants(seg)
    assert [(f.delimiter, f.latex) for f in seg.formulas] == [("$", "2+3=5"), ("bare", "2 + 3 = 5")]
    assert seg.masked_text == "If MATH then MATH too."


# --------------------------------------------------------------------------- robustness


def test_empty_and_type():
    seg = segment("")
    assert seg == Segmentation("", "", (), (), ())
    assert seg.to_source_span(0, 0) == (0, 0)
    with pytest.raises(TypeError):
        segment(None)  # type: ignore[arg-type]


def test_dataclasses_are_frozen():
    f = Formula("x", (0, 3), (1, 2), "$", False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.latex = "y"  # type: ignore[misc]


_PIECES = [
    "$", "$$", "\\$", "\\(", "\\)", "\\[", "\\]", "{", "}", "\\text{", "\\textbf{", "[asy]", "[/asy]",
    "\\begin{align*}", "\\end{align*}", "\\begin{tabular}", "\\end{tabular}", "\\begin{equation}", "\\end{",
    "<<", ">>", "<<4*5=20>>", "=", "48/2", " x ", "5", "0.2", "12", "ab", "th", " ", "\n", "\n\n", "-", ".",
    ",", "?", "\\", "\\\\", "\\qquad", "(", ")", "%", "*", "+", "the cost", "'s", "MATH", "×", "é",
]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(max_size=60),
        st.lists(st.sampled_from(_PIECES), max_size=25).map("".join),
        st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=3)), max_size=20).map("".join),
    ),
    st.booleans(),
)
def test_segment_never_raises_and_invariants_hold(text, bare):
    seg = segment(text, bare_arithmetic=bare)
    assert seg.source == text
    check_invariants(seg)


def test_a_display_cut_out_of_its_delimiters_is_a_formula():
    seg = segment("Next, \\[ 5z + 7 = 5(1+i) + 7 = 12 + 5i.")
    assert [(f.latex, f.delimiter, f.span) for f in seg.formulas] == [
        (" 5z + 7 = 5(1+i) + 7 = 12 + 5i", "cut", (6, 39))
    ]
    seg = segment("\\quad y = 12 - 3 = 9. \\] So the answer is 9.")
    assert [(f.latex, f.delimiter, f.span) for f in seg.formulas] == [("\\quad y = 12 - 3 = 9", "cut", (0, 24))]
    seg = segment("\\begin{aligned} a &= \\log_2 16 \\end{aligned}")
    assert [(f.latex, f.delimiter) for f in seg.formulas] == [(" a &= \\log_2 16 ", "env")]


def test_prose_around_a_lone_display_bracket_stays_text():
    assert segment("The man said \\[ was odd and Sally left.").formulas == ()
    assert segment("The man said \\] was odd.").formulas == ()


def test_a_dollar_sign_after_its_amount_opens_no_formula():
    # "5000$ and 175$": the two signs close amounts; read as a pair they would make "$ and 175$" a formula
    seg = segment("He paid 5000$ and 175$ for the two cars.")
    check_invariants(seg)
    assert list(seg.formulas) == []
    # a formula still opens after a space
    assert [f.latex for f in segment("Pay 5 for $x+1$ now.").formulas] == ["x+1"]
