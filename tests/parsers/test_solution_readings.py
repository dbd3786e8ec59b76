"""Readings a teacher accepts, LaTeX math read as math, and solutions in LaTeX that introduce their own numbers."""

from fractions import Fraction

from mathgraph.parsers.solution import check_solution, parse_solution
from mathgraph.parsers.solution_reader import math_spans, read_lines


def _errors(problem: str, solution: str) -> list[tuple[str, int | None]]:
    return [(f.kind, f.step) for f in check_solution(problem, solution).errors()]


def test_division_by_a_written_fraction_is_accepted():
    # 18 / (3/4) = 24 and 1 / (1/2) = 2, as a teacher reads them; left to right they make 1.5 and 0.5
    problem = "A baker has 18 cups of flour and uses 3/4 of a cup for each cake. How many cakes?"
    assert _errors(problem, "18÷3/4 = 24 cakes.\n#### 24") == []
    assert check_solution("Divide 1 by one half.", "1÷1/2 = 2\n#### 2").ok


def test_a_percentage_written_as_its_number_is_accepted():
    assert check_solution("Half of the 100 people came.", "0.5 * 100 = 50%\n#### 50").ok


def test_real_slips_are_still_found():
    problem = "A farmer has 560 eggs and sells 1/5 of them. How many does he sell?"
    assert ("arithmetic", 0) in _errors(problem, "560 * 1/5 = 448\n#### 448")
    assert ("arithmetic", 0) in _errors("What is $3 \\cdot 4$?", "We get \\(3 \\cdot 4 = 13\\).")


def test_letters_in_latex_math_are_symbols():
    # a(5) - 115 = 0, a_1 r^4 = 16, 2xy: no calculation of numbers alone
    for line in (
        "\\(a + 2(-4) = 15\\)",
        "\\[a_5 = a_1 r^4 = 16\\]",
        "\\[ 65 + 2xy = 105 \\]",
        "$3(5)^2 + a(5) - 115 = 0$",
    ):
        assert read_lines(line)[0].calculations == (), line
    # a base written as a subscript is no decimal: 0.0011_2
    assert read_lines("$3/16 = 1/8 + 1/16 = 0.0011_2$")[0].calculations == ()


def test_dollar_signs_of_money_are_no_math():
    assert math_spans("3 apples cost 3 * $5 = $15 in all") == []
    assert math_spans("so $x^2 = 4$ and") == [(3, 12)]
    graph = parse_solution("Tom pays $5 for each of 3 apples.", "3 apples cost 3 * $5 = $15 in all.\n#### 15")
    [(_, calculation)] = graph.calculations()
    assert calculation.result == 15 and calculation.checks_out


def test_a_remainder_is_not_the_quotient():
    assert check_solution("Find 2004 mod 12.", "The remainder of 2004 divided by 12 is 0.\n#### 0").ok


def test_a_rounded_value_computed_on_agrees_to_one_part_in_ten_thousand():
    # 1 / 0.2599 is 3.84763...; 3.847322 is 1 / 0.259921 written from more digits than the line shows
    graph = parse_solution("x", "\\[ \\frac{1}{0.2599} \\approx 3.847322 \\]")
    [(_, calculation)] = graph.calculations()
    assert calculation.checks_out
    graph = parse_solution("x", "\\[ \\frac{1}{0.2599} \\approx 4.2 \\]")
    [(_, calculation)] = graph.calculations()
    assert calculation.checks_out is False


def test_latex_solutions_may_introduce_small_numbers_and_powers():
    problem = "Convert $321_7$ to base 10."
    solution = "\\[ 3 \\cdot 7^2 + 2 \\cdot 7 + 1 = 3 \\cdot 49 + 14 + 1 = 162 \\]\nSo the answer is $\\boxed{162}$."
    assert check_solution(problem, solution).ok
    # a number from nowhere that is no small count, power or earlier number is still reported
    errors = _errors("Compute $3+4$.", "\\(3 + 4 = 7\\), then \\(7 \\cdot 253 = 1771\\).\n$\\boxed{1771}$")
    assert ("unexplained_operand", 0) in errors


def test_latex_answer_not_computed_is_a_warning():
    problem = "How many roots does $x^3 = x$ have?"
    solution = "The roots are \\(x = 0\\), \\(x = 1\\) and \\(x = -1\\), and \\(2 + 1 = 3\\).\nThere are $\\boxed{4}$."
    check = check_solution(problem, solution)
    assert check.ok
    [mismatch] = [f for f in check.findings if f.kind == "answer_mismatch"]
    assert mismatch.severity == "warning" and mismatch.step == 1
    # in a plain solution it stays an error
    plain = check_solution("Tom has 2 apples and 1 pear.", "2 + 1 = 3\n#### 4")
    assert [f.kind for f in plain.errors()] == ["answer_mismatch"]


def test_an_open_line_is_completed_by_the_final_answer():
    problem = "A company buys 300 computers at $920 each. How much does it pay?"
    assert check_solution(problem, "For 300 computers, the company paid 300*$920 =\n#### 276000", verifier=None).ok
    slip = check_solution(problem, "For 300 computers, the company paid 300*$920 = $\n#### 276001", verifier=None)
    [finding] = slip.errors()
    assert (finding.kind, finding.step) == ("arithmetic", 0)
    assert finding.message == "“300*$920 =” makes 276000, not the final answer 276001."


def test_a_mixed_number_is_one_number():
    (calculation,) = read_lines("After Friday, he had 4 2/3 - 2 = 2 2/3 hours of TV left.")[0].calculations
    assert [o.value for o in calculation.operands] == [Fraction(14, 3), Fraction(2)]
    assert calculation.result == calculation.computed == Fraction(8, 3)
    (added,) = read_lines("12 3/4 + 1 1/4 = 14")[0].calculations
    assert [o.value for o in added.operands] == [Fraction(51, 4), Fraction(5, 4)] and added.computed == 14
    # a slash right after the fraction, or a product before a fraction, is no mixed number
    (product,) = read_lines("2 * 3/4 = 1.5")[0].calculations
    assert [o.value for o in product.operands] == [2, 3, 4] and product.computed == Fraction(3, 2)
    # and a slip in one is still found
    (slip,) = read_lines("4 2/3 - 2 = 3 2/3")[0].calculations
    assert slip.computed == Fraction(8, 3) != slip.result
