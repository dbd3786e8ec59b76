"""Relations the problem's words state (``parsers.solution_relations``) and the ``inverse_operation`` finding."""

from fractions import Fraction

import pytest

from mathgraph.parsers.solution import check_solution
from mathgraph.parsers.solution_relations import asked_unit, problem_relations, relation_applied

HALF = "Jo has 12 apples. Sam has half as many apples as Jo. How many apples do they have together?"
HALF_WHO = "Sam has half as many marbles as Jo, who has 12. How many marbles does Sam have?"
TWICE_FEWER = (
    "Jo has 12 apples. Sam has twice as many apples as Jo. Tim has 3 fewer apples than Jo. "
    "How many apples do they have in all?"
)
TIMES_AS_MUCH = "A shirt costs $20. A jacket costs 3 times as much. How much do both cost?"
NATALIA = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?"
)
THIRD_OF = "Lily ate a third of the 27 candies. How many candies did she eat?"
PERCENT_MORE = "Pat earns $10 an hour. Jo earns 20% more than Pat. How much does Jo earn in 5 hours?"
YOUNGER = "Tom is 5 years younger than Ann. Ann is 20 years old. How old is Tom?"
# the relation read from the other side: Sam's number is given, Jo's is asked
REVERSED_QUESTION = "Sam has half as many marbles as Jo. Sam has 6 marbles. How many marbles does Jo have?"


def _relations(problem: str) -> list[tuple[str, Fraction, str, str]]:
    from mathgraph import parse_problem

    graph = parse_problem(problem)
    quantities = graph.quantities()
    return [
        (r.kind, r.factor, quantities[r.quantity].text, quantities[r.reference].text) for r in problem_relations(graph)
    ]


def _inverse(problem: str, solution: str) -> list[int]:
    check = check_solution(problem, solution, verifier=None)
    return [f.step for f in check.findings if f.kind == "inverse_operation"]


@pytest.mark.parametrize(
    "problem, relations",
    [
        (HALF, [("times", Fraction(1, 2), "half", "12")]),
        (HALF_WHO, [("times", Fraction(1, 2), "half", "12")]),
        (TWICE_FEWER, [("times", Fraction(2), "twice", "12"), ("fewer", Fraction(3), "3", "12")]),
        (TIMES_AS_MUCH, [("times", Fraction(3), "3", "$20")]),
        (THIRD_OF, [("times", Fraction(1, 3), "third", "27")]),
        (PERCENT_MORE, [("percent_more", Fraction(1, 5), "20%", "$10")]),
        (YOUNGER, [("fewer", Fraction(5), "5", "20")]),
        (REVERSED_QUESTION, []),  # Jo, the reference, has no number in the problem
        ("Sam has twice as many cards as she does. She has 8 cards. How many cards does Sam have?", []),
    ],
)
def test_problem_relations(problem, relations):
    assert _relations(problem) == relations


@pytest.mark.parametrize(
    "problem, solution, lines",
    [
        # the inverse operation on the reference's number: flagged at its line
        (HALF, "Sam has 12 * 2 = 24 apples.\nTogether they have 24 + 12 = 36 apples.\n#### 36", [0]),
        (HALF, "Sam has 2 * 12 = 24 apples.\n24 + 12 = 36\n#### 36", [0]),
        (HALF, "Sam has 12 / 0.5 = 24 apples.\n24 + 12 = 36\n#### 36", [0]),
        (HALF_WHO, "Sam has 12 x 2 = 24 marbles.\n#### 24", [0]),
        (NATALIA, "Natalia sold 48*2 = 96 clips in May.\nNatalia sold 48+96 = 144 clips altogether.\n#### 144", [0]),
        (NATALIA, "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n48+24 = <<48+24=72>>72\n#### 72", []),
        (TWICE_FEWER, "Sam has 12 / 2 = 6 apples.\nTim has 12 - 3 = 9 apples.\n6 + 9 + 12 = 27\n#### 27", [0]),
        (TWICE_FEWER, "Sam has 12 * 2 = 24 apples.\nTim has 12 + 3 = 15 apples.\n24 + 15 + 12 = 51\n#### 51", [1]),
        (TIMES_AS_MUCH, "The jacket costs 20 / 3 = 6.67 dollars.\n20 + 6.67 = 26.67\n#### 26.67", [0]),
        (THIRD_OF, "She ate 27 * 3 = 81 candies.\n#### 81", [0]),
        (PERCENT_MORE, "Jo earns 10 * 0.8 = $8 an hour.\n8 * 5 = 40\n#### 40", [0]),
        (YOUNGER, "Tom is 20 + 5 = 25 years old.\n#### 25", [0]),
        # the same phrases computed as the words say: not flagged
        (HALF, "Sam has 12 / 2 = 6 apples.\nTogether they have 6 + 12 = 18 apples.\n#### 18", []),
        (HALF, "Sam has 12 * 0.5 = 6 apples.\n6 + 12 = 18\n#### 18", []),
        (HALF, "Sam has 12 * 1/2 = 6 apples.\n6 + 12 = 18\n#### 18", []),
        (HALF, "Sam has 1/2 * 12 = 6 apples.\n6 + 12 = 18\n#### 18", []),
        (HALF, "Sam has 12/2 = <<12/2=6>>6 apples.\n6+12 = <<6+12=18>>18\n#### 18", []),
        (TWICE_FEWER, "Sam has 12 * 2 = 24 apples.\nTim has 12 - 3 = 9 apples.\n24 + 9 + 12 = 45\n#### 45", []),
        (TIMES_AS_MUCH, "The jacket costs 20 * 3 = 60 dollars.\n20 + 60 = 80\n#### 80", []),
        (THIRD_OF, "She ate 27 / 3 = 9 candies.\n#### 9", []),
        (PERCENT_MORE, "Jo earns 10 * 1.2 = $12 an hour.\n12 * 5 = 60\n#### 60", []),
        (PERCENT_MORE, "The raise is 10 * 0.2 = $2.\nJo earns 10 + 2 = $12 an hour.\n12 * 5 = 60\n#### 60", []),
        (YOUNGER, "Tom is 20 - 5 = 15 years old.\n#### 15", []),
        # the other side of the relation, computed from the subject's number: right, not flagged
        (REVERSED_QUESTION, "Jo has 6 * 2 = 12 marbles.\n#### 12", []),
        # the relation's number said again for another purpose ("in 5 years"): which one a step uses is unknown
        (
            "Ann is 20 years old. Tom is 5 years younger than Ann. How old will they be together in 5 years?",
            "In 5 years Ann will be 20 + 5 = 25.\nTom is 20 - 5 = 15, so 15 + 5 = 20 then.\n25 + 20 = 45\n#### 45",
            [],
        ),
        # another fraction word of the problem reads the pair the right way ("twice that much ... half its value")
        (
            "Jim buys a ring for $10,000. He gets his wife a ring that is twice that much and sells the first one "
            "for half its value. How much is he out of pocket?",
            "The second ring cost 2*10000 = 20000\nHe sells the first for 10000/2 = 5000\n"
            "20000 + 10000 - 5000 = 25000\n#### 25000",
            [],
        ),
        # two relations of one number: footballs are the helmets * 2, read from the second relation's subject
        (
            "Dominick saw half as many robots as helmets and half as many helmets as footballs. If there were 20 "
            "helmets, how many items did he see?",
            "There were 20*2 = 40 footballs.\nThere were 20/2 = 10 robots.\n10 + 40 + 20 = 70\n#### 70",
            [],
        ),
        # an earlier result of the reference's value is not the reference: "the remaining 4 hours" / 2 days
        (
            "On Monday, Tristan studies for 4 hours, then for twice this long on Tuesday. He wants to study 16 hours "
            "and divides the remaining time evenly between Saturday and Sunday. How many hours on Saturday?",
            "Tuesday: 4 * 2 = 8 hours\n4 + 8 = 12 hours\n16 - 12 = 4 hours\n4 / 2 = 2 hours\n#### 2",
            [],
        ),
        # the reference's number stated as a result before, in a line not read as a calculation (an en dash)
        (
            "On Monday, Tristan studies for 4 hours, then for twice this long on Tuesday. He wants to study 16 hours "
            "and divides the remaining time evenly between Saturday and Sunday. How many hours on Saturday?",
            "Tuesday: 4 hours * 2 = 8 hours\n4 + 8 = 12 hours\nHe has 16 hours – 12 hours = 4 hours left.\n"
            "Over 2 days he spends 4 hours / 2 = 2 hours a day.\n#### 2",
            [],
        ),
        # a number the reference is counted in: 12 pairs are 12 * 2 earrings
        (
            "Barbie bought 12 pairs of earrings, and gave half of them to Alissa. How many earrings did she give?",
            "12 pairs are 12 * 2 = 24 earrings.\nShe gave 24 / 2 = 12 earrings.\n#### 12",
            [],
        ),
    ],
)
def test_inverse_operation(problem, solution, lines):
    assert _inverse(problem, solution) == lines


def test_inverse_operation_message_and_verdict():
    check = check_solution(HALF, "Sam has 12 * 2 = 24 apples.\n24 + 12 = 36\n#### 36", verifier=None)
    assert not check.ok
    assert check.first_error_step == 0
    [finding] = [f for f in check.findings if f.kind == "inverse_operation"]
    assert finding.severity == "error"
    assert finding.message == (
        "“12 * 2 = 24” multiplies 12 by 2, but the problem says “half as many apples as Jo” (12): "
        "that is 12 / 2, the other way round."
    )
    right = check_solution(HALF, "Sam has 12 / 2 = 6 apples.\n6 + 12 = 18\n#### 18", verifier=None)
    assert right.ok


@pytest.mark.parametrize(
    "question, unit",
    [
        ("A movie is 2 hours long. How many minutes long is it?", "minute"),
        ("Jo walks for 90 minutes. How far does she walk, in miles?", "mile"),
        ("A pen costs 50 cents. How many dollars do 4 pens cost?", "dollar"),
        ("Jo drives 120 miles in 2 hours. How many miles per hour does she drive?", None),  # a rate
        ("How many hours and minutes is 90 minutes?", None),  # two units of one measure
        ("Jo has 12 apples. How many apples does she have?", None),
    ],
)
def test_asked_unit(question, unit):
    assert asked_unit(question) == unit


MOVIE = "A movie is 2 hours long. How many minutes long is it?"
READING = "Jo reads 30 pages an hour. How many minutes does it take her to read 45 pages?"


@pytest.mark.parametrize(
    "problem, solution, lines",
    [
        (MOVIE, "The movie is 2 hours long.\n#### 2", [0]),
        (READING, "She needs 45 / 30 = 1.5 hours.\n#### 1.5", [0]),
        ("A pen costs 50 cents. How many dollars do 4 pens cost?", "4 * 50 = 200 cents\n#### 200", [0]),
        (
            "A fence is 240 inches long and 180 inches wide. How many feet of paper does James need?",
            "240 * 2 = 480 inches\n180 * 2 = 360 inches\n480 inches + 360 inches = 840 inches\n#### 840",
            [2],
        ),
        # converted, or stated in the unit asked: not flagged
        (MOVIE, "The movie is 2 * 60 = 120 minutes long.\n#### 120", []),
        (READING, "She needs 45 / 30 = 1.5 hours.\n1.5 * 60 = 90 minutes\n#### 90", []),
        (READING, "She reads 30 / 60 = 0.5 pages a minute.\n45 / 0.5 = 90 minutes\n#### 90", []),
        ("A pen costs 50 cents. How many dollars do 4 pens cost?", "4 * 50 = 200 cents = $2\n#### 2", []),
    ],
)
def test_answer_unit(problem, solution, lines):
    check = check_solution(problem, solution, verifier=None)
    assert [f.step for f in check.findings if f.kind == "answer_unit"] == lines


def test_answer_unit_message():
    check = check_solution(READING, "She needs 45 / 30 = 1.5 hours.\n#### 1.5", verifier=None)
    [finding] = [f for f in check.findings if f.kind == "answer_unit"]
    assert finding.severity == "error" and not check.ok
    assert finding.message == (
        "The question asks for minutes, but the final answer 1.5 is in hours (“1.5 hours”): in minutes it is 90."
    )


def test_relation_applied_finds_the_step_to_turn_round():
    from mathgraph import parse_problem
    from mathgraph.parsers.solution_graph import parse_solution

    problem = parse_problem(TWICE_FEWER)
    relations = problem_relations(problem)
    graph = parse_solution(
        problem, "Sam has 12 * 2 = 24 apples.\nTim has 12 - 3 = 9 apples.\n24 + 9 + 12 = 45\n#### 45"
    )
    applied = [relation_applied(c, relations, problem.quantities()) for _, c in graph.calculations()]
    assert [(r.kind, op) if r else None for r, op in (a or (None, None) for a in applied)] == [
        ("times", "*"),
        ("fewer", "-"),
        None,
    ]
