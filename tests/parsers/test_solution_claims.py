"""The equalities of LaTeX solutions, evaluated: ``parsers.solution_claims`` and the ``false_claim`` finding."""

import math

import pytest

from mathgraph.parsers.solution import check_solution
from mathgraph.parsers.solution_claims import latex_claims


def _verdicts(text: str) -> list[tuple[str, str, str]]:
    return [(c.left, c.right, c.verdict) for c in latex_claims(text)]


@pytest.mark.parametrize(
    "text, verdict",
    [
        (r"\(\sqrt{50} = 5\sqrt{2}\)", "holds"),
        (r"\(\sqrt{50} = 7\)", "fails"),
        (r"\(\binom{5}{2} = 10\)", "holds"),
        (r"\(\dbinom{6}{3} \cdot 2 = 42\)", "fails"),
        (r"\(\frac{3}{4} \cdot 8 = 6\)", "holds"),
        (r"\(\frac{3}{4} \cdot 8 = 7\)", "fails"),
        (r"\(\frac12 + \frac{1}{3} = \frac{5}{6}\)", "holds"),
        (r"\(\frac{\frac{11}{8}}{2} = \frac{11}{16}\)", "holds"),
        (r"\(\sin 30^\circ = 0.5\)", "holds"),
        (r"\(\pi \cdot 3^2 = 9\pi\)", "holds"),
        (r"\(5! = 120\)", "holds"),
        (r"\(2^{10} = 1000\)", "fails"),
        (r"\(-\frac{2}{3} = -0.67\)", "holds"),  # rounded to the hundredths it shows
        (r"\(\sqrt{2} \approx 1.41\)", "holds"),
        (r"\(\frac{4}{40} \times 100 = 10\%\)", "holds"),  # the percentage written as its number
        (r"\(26/6 = 4.33\)", "holds"),
    ],
)
def test_claims_without_letters(text, verdict):
    [(_, _, found)] = _verdicts(text)
    assert found == verdict


def test_rewrites_in_a_chain_are_checked_at_random_values():
    assert _verdicts(r"\[x^2 - 5x + 6 = (x-2)(x-3) = 0\]")[0][2] == "unknown"  # the first pair: an equation
    good = _verdicts(r"\[ y = (x+1)^2 = x^2 + 2x + 1 \]")
    assert [v for _, _, v in good] == ["unknown", "holds"]
    bad = _verdicts(r"\[ y = (x+1)^2 = x^2 + x + 1 \]")
    assert [v for _, _, v in bad] == ["unknown", "fails"]


@pytest.mark.parametrize(
    "text",
    [
        r"\(2x + 3 = 7\)",  # an equation
        r"\(y = 2x + 3\)",  # a definition
        r"\(AD = DC = 5\)",  # other letters on each side: values, not a rewrite
        r"\(f(2) = 5\)",
        r"\(|x| = 3\)",
        r"\(x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}\)",
        r"\(3^4 \mod 8 = 1\)",
        r"\(321_7 = 162\)",
        r"\(e^{i\pi} = i^2 = -1\)",
    ],
)
def test_what_cannot_be_decided_is_unknown(text):
    assert all(v == "unknown" for _, _, v in _verdicts(text)), _verdicts(text)


@pytest.mark.parametrize(
    "quotient, remainder",
    [
        (r"18 \div 4 = 4", r"\text{ remainder } 2"),
        (r"17 \div 5 = 3", r"\textrm{ R } 2"),
        ("100 / 7 = 14", r"\text{ rem } 2"),
    ],
)
def test_a_quotient_stated_with_its_remainder_is_no_claim(quotient, remainder):
    assert _verdicts(rf"\[ {quotient} {remainder} \]") == []
    # the same quotient without its remainder is a claim that fails
    assert _verdicts(rf"\[ {quotient} \]")[0][2] == "fails"


def test_claim_values_and_lines():
    [claim] = latex_claims("First line.\nSo \\(\\sqrt{49} + 1 = 9\\).")
    assert claim.line == 1 and claim.values == (8.0, 9.0)
    assert claim.to_dict()["verdict"] == "fails"
    # thousands separators are no commas between relations
    assert _verdicts(r"\(10^4 = 10{,}000\)")[0][2] == "holds"
    assert _verdicts(r"\(x = 3, 2^3 = 8\)")[-1] == ("2^3", "8", "holds")


def test_false_claim_is_an_error_of_check():
    problem = "Simplify $\\sqrt{50}$."
    check = check_solution(problem, "We have \\(\\sqrt{50} = 5\\sqrt{2}\\).\nSo \\(5\\sqrt{2} = 7.5\\).")
    [finding] = check.errors()
    assert (finding.kind, finding.step, check.first_error_step) == ("false_claim", 1, 1)
    assert "7.07107" in finding.message and math.isclose(5 * math.sqrt(2), 7.0710678, rel_tol=1e-6)
    assert check_solution(problem, "We have \\(\\sqrt{50} = 5\\sqrt{2}\\).").ok


def test_a_long_span_costs_little():
    text = "\\[" + " + ".join(["(x+1)^2"] * 400) + " = 1\\]"
    assert latex_claims(text) == []  # longer than MAX_MATH_CHARS: not read
