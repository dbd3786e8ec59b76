"""The solution graph's named numbers (``parsers.solution_features``), each against a hand count: the
signs of a solution written for a variant of its problem."""

from fractions import Fraction

from mathgraph.parsers.problem import ProblemParser
from mathgraph.parsers.solution_features import (
    SOLUTION_GRAPH_FEATURES,
    solution_graph_features,
    written_numbers,
)

PARSER = ProblemParser("spacy")
BED = PARSER.parse("A bed is 6 feet long and 8 feet wide. How many square feet does it cover?")
RUNS = PARSER.parse(
    "Sam ran 3 miles on Monday and 5 miles on Tuesday. He also swam 2 laps in one hour. "
    "He gave half of his water away. How many miles did he run?"
)


def test_names_are_unique_and_every_feature_is_computed():
    assert len(set(SOLUTION_GRAPH_FEATURES)) == len(SOLUTION_GRAPH_FEATURES) == 25
    assert tuple(solution_graph_features(BED, "6 * 8 = 48\n#### 48")) == SOLUTION_GRAPH_FEATURES


def test_a_step_the_problem_never_gave():
    # the solution of a variant that adds a duvet cover: 9 and 11 are only explained by its own prose
    solution = (
        "The bed covers 6 * 8 = 48 square feet.\n"
        "A duvet cover 9 feet long and 11 feet wide covers 9 * 11 = 99 square feet.\n"
        "48 + 99 = 147\n#### 147"
    )
    features = solution_graph_features(BED, solution)
    assert features["graph_operands"] == 6 and features["graph_operands_unexplained"] == 0
    assert features["operands_from_own_mentions"] == 2
    assert features["operands_unexplained_strict"] == 2 and features["share_operands_explained_strict"] == 1 - 2 / 6
    # 9 and 11 are written twice each; 48, 99, 147 are results, 6 and 8 the problem's
    assert features["solution_numbers_stray"] == 4 and features["solution_numbers_stray_distinct"] == 2
    assert features["quantities_unused_digits"] == 0 and features["sentences_unused"] == 0


def test_the_own_solution_has_no_stray_numbers():
    features = solution_graph_features(BED, "The bed covers 6 * 8 = 48 square feet.\n#### 48")
    assert features["operands_unexplained_strict"] == 0 and features["share_operands_explained_strict"] == 1
    assert features["solution_numbers_stray"] == 0 and features["quantities_never_written"] == 0


def test_quantities_a_solution_leaves_alone():
    # the solution of the problem without the swim: 2 laps (digits) and half (words) are unused, "one hour" is
    # 1 and not counted; the swim's sentence has no quantity the solution uses or writes
    features = solution_graph_features(RUNS, "3 + 5 = 8 miles\n#### 8")
    assert features["quantities_unused_digits"] == 1 and features["quantities_unused_words"] == 1
    assert features["quantities_never_written"] == 1
    assert features["sentences_unused"] == 2  # the swim's and the water's
    assert features["quantities_unused"] == 3  # the count of before: "one" too


def test_an_operand_through_an_implied_value():
    trip = PARSER.parse("Ann walks 3 miles a day for 2 weeks. How far does she walk?")
    features = solution_graph_features(trip, "2 weeks is 14 days.\n14 * 3 = 42 miles\n#### 42")
    assert features["operands_from_implied_values"] == 1  # 14: 2 weeks in days
    assert features["operands_unexplained_strict"] == 0


def test_written_numbers():
    assert written_numbers("$2.50 and 25% of 1,000, then .5 and -3.") == [
        Fraction(5, 2),
        Fraction(1, 4),
        Fraction(1000),
        Fraction(1, 2),
        Fraction(-3),
    ]
    assert written_numbers("no numbers") == [] and written_numbers("9" * 400) == []
