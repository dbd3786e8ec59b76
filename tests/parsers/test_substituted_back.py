"""Substituting a solution's solved values back into its equations (``solution_claims.substituted_back``)."""

from mathgraph.parsers.solution_claims import substituted_back


def test_a_wrong_rewrite_of_an_equation_is_found_where_it_is_written():
    # 3x + 2 = 14 has x = 4; the second line writes 3x = 10, which x = 10/3 (the answer reached) satisfies
    solution = "We solve \\(3x + 2 = 14\\).\nSo \\(3x = 10\\).\nThus \\(x = \\frac{10}{3}\\)."
    assert substituted_back(solution) == [1]


def test_right_working_is_not_flagged():
    assert substituted_back("We solve \\(3x + 2 = 14\\).\nSo \\(3x = 12\\).\nThus \\(x = 4\\).") == []
    # two roots: each equation holds at one of them
    quadratic = "\\(x^2 - 5x + 6 = 0\\)\n\\((x-2)(x-3) = 0\\)\n\\(x = 2\\) or \\(x = 3\\)"
    assert substituted_back(quadratic) == []


def test_the_error_in_the_last_equation_is_found_and_nothing_without_values():
    # 2y - 1 = 7 gives y = 4; y - 1 = 7 is the slip and y = 8 follows from it
    solution = "Here \\(2y - 1 = 7\\).\nDividing, \\(y - 1 = 7\\).\nSo \\(y = 8\\)."
    assert substituted_back(solution) == [1]
    assert substituted_back("Here \\(2y - 1 = 7\\).\nDividing, \\(y - 1 = 7\\).") == []  # no value stated
    assert substituted_back("no math at all") == []


def test_check_reports_the_wrongly_changed_equation_as_a_false_claim():
    from mathgraph.parsers.solution import check_solution

    solution = "We solve \\(3x + 2 = 14\\).\nSo \\(3x = 10\\).\nThus \\(x = \\frac{10}{3}\\)."
    check = check_solution("Solve 3x + 2 = 14 for x.", solution, verifier=None)
    assert [(f.kind, f.step) for f in check.errors()] == [("false_claim", 1)]
    assert check.first_error_step == 1 and "changed wrongly" in check.errors()[0].message
    right = "We solve \\(3x + 2 = 14\\).\nSo \\(3x = 12\\).\nThus \\(x = 4\\)."
    assert check_solution("Solve 3x + 2 = 14 for x.", right, verifier=None).ok
