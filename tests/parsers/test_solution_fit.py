"""How a solution fits its problem (``parsers.solution_fit``): each feature against hand counts on made-up
problem/solution pairs, a solution of the problem itself against one written for a version with a step added."""

import pytest

from mathgraph.parsers.problem import ProblemParser
from mathgraph.parsers.solution_check import check_solution
from mathgraph.parsers.solution_fit import (
    FIT_FEATURES,
    content_stems,
    fit_features,
    matched_quantities,
    problem_clauses,
    problem_sentences,
)
from mathgraph.parsers.solution_vocabulary import METHOD_STEMS, method_stems

PARSER = ProblemParser("spacy")
TOY = (
    "In November, a toy was $40. In December, the price increased by 80%. In February, prices decreased by 20%. "
    "What was the price of the toy in February?"
)
# the solution of the version without February: 20% is used by nothing, and February is never written
TOY_SHORT = (
    "In November, the toy was $40.\nThe increase is 40*0.8=<<40*0.8=32>>32\n"
    "In December, the toy's price was 40 + 32 = $<<40+32=72>>72.\n#### 72"
)
TOY_FULL = TOY_SHORT.replace(
    "#### 72",
    "In February, the price decreased by 72*0.2=<<72*0.2=14.4>>14.4 to 72-14.4=<<72-14.4=57.6>>57.6\n#### 57.6",
)


def check(problem: str, solution: str):
    return check_solution(PARSER.parse(problem), solution, verifier=None)


def test_names_and_order():
    assert list(fit_features(check(TOY, TOY_FULL))) == list(FIT_FEATURES)


def test_a_solution_that_leaves_a_condition_out_against_the_full_one():
    short, full = fit_features(check(TOY, TOY_SHORT)), fit_features(check(TOY, TOY_FULL))
    # $40, 80% and 20%: 20% (its 0.2) is used by no calculation of the short one; it is written in digits
    assert short["quantities_unmatched"] == 1.0 and short["quantities_unmatched_digits"] == 1.0
    assert full["quantities_unmatched"] == 0.0 and full["quantities_unmatched_digits"] == 0.0
    # the question's words: price, toy, February (stems "pric", "toy", "februari"): the short one lacks February
    assert short["question_words_unmentioned"] == pytest.approx(1 / 3)
    assert full["question_words_unmentioned"] == 0.0
    # "In February, prices decreased by 20%.": its own words (february; price and decreased... are elsewhere)
    assert short["sentences_unmentioned"] == 1.0 and full["sentences_unmentioned"] == 0.0
    # both write only words of the problem (november, toy, increase, december, price, february, decreased)
    assert short["solution_words_unseen"] == full["solution_words_unseen"] == 0.0
    assert short["operands_constant_uncued"] == full["operands_constant_uncued"] == 0.0


def test_a_number_stated_twice_needs_two_operands():
    problem = "There are 4 snails in one tank and 32 snails in another tank. Someone buys four new fish. "
    problem += "How many snails are there?"
    features = fit_features(check(problem, "There are 32 + 4 = <<32+4=36>>36 snails.\n#### 36"))
    # 4 and four: one operand 4 pairs with the first; "one" (1) is not counted; four is left, and is a word
    assert matched_quantities(check(problem, "32 + 4 = <<32+4=36>>36\n#### 36")) == [True, False, True, False]
    assert features["quantities_unmatched"] == 1.0 and features["quantities_unmatched_digits"] == 0.0
    # "Someone buys four new fish.": its words buy, new, fish are written by no other sentence nor the solution
    assert features["sentences_unmentioned"] == 1.0


def test_an_operand_equal_to_an_earlier_result_is_that_result():
    problem = "Sam has 24 cards and gives 5/8 of them away. He then finds 15 more cards. How many cards does he have?"
    solution = "He gives 5/8*24 = <<5/8*24=15>>15 cards away.\n24-15 = <<24-15=9>>9 are left.\n#### 9"
    # the 15 of "24-15" is the result of the first line, not the 15 cards found
    assert matched_quantities(check(problem, solution)) == [True, True, False]
    features = fit_features(check(problem, solution))
    assert features["quantities_unmatched"] == 1.0 and features["quantities_unmatched_digits"] == 1.0
    assert features["sentences_unmentioned"] == 1.0  # "finds" is written nowhere in the solution
    found = solution.replace("#### 9", "He finds 15 more: 9+15 = <<9+15=24>>24\n#### 24")
    assert matched_quantities(check(problem, found)) == [True, True, True]


def test_a_step_from_words_the_problem_does_not_say():
    problem = "Ella earns $33 for 3 hours of dog walking. How much would she earn for 12 hours?"
    # a solution of the version that spends half of it on treats: 2 comes from the solution's "half" only
    solution = (
        "She earns 12/3 * 33 = <<12/3*33=132>>132 dollars.\nShe spends half on dog treats: 132/2 = <<132/2=66>>66 left."
        "\n#### 66"
    )
    features = fit_features(check(problem, solution))
    assert features["operands_constant_uncued"] == 1.0
    # the solution's stems: earn, dollar, spend, half, dog, treat, left; of them only earn and dog are the problem's
    assert features["solution_words_unseen"] == 5.0
    assert features["share_solution_words_unseen"] == pytest.approx(5 / 7)
    # dollar, spend, half and left are words of method (solutions write them whatever the problem): treat is not
    assert {"dollar", "spend", "half", "left"} <= METHOD_STEMS and "treat" not in METHOD_STEMS
    assert features["solution_words_unseen_specific"] == 1.0
    # where the problem says half, the same 2 is called for
    halved = fit_features(check(problem.replace("?", ", if she spends half of it?"), solution))
    assert halved["operands_constant_uncued"] == 0.0
    # a week cued only by the solution's words: 7 is not called for by the problem
    weekly = "She earns 33/3 = <<33/3=11>>11 an hour, 11*7 = <<11*7=77>>77 a week.\n#### 77"
    assert fit_features(check(problem, weekly))["operands_constant_uncued"] == 1.0


def test_a_number_of_the_problem_taken_more_often_than_stated():
    problem = "Each kid eats 2 smores and there are 9 kids. A box holds 6 smores. How many boxes are needed?"
    right = "9*2 = <<9*2=18>>18 smores.\n18/6 = <<18/6=3>>3 boxes.\n#### 3"
    # a step of another version: 2 boxes kept in reserve; the 2 of the problem is taken a second time
    added = right.replace("#### 3", "With 2 boxes in reserve: 3+2 = <<3+2=5>>5\n#### 5")
    assert fit_features(check(problem, right))["operand_uses_beyond_mentions"] == 0.0
    assert fit_features(check(problem, added))["operand_uses_beyond_mentions"] == 1.0
    # 18 and 3 are taken as the results they are, not counted as numbers of the problem
    assert matched_quantities(check(problem, added)) == [True, True, True]
    # "reserve" is a word the problem never writes, and no word of method
    assert fit_features(check(problem, added))["solution_words_unseen_specific"] == 1.0


def test_method_stems_of_pairs():
    pairs = [("Tom has 3 apples.", "He has 3 apples in total.\n#### 3"), ("A cat.", "The total is 2.\n#### 2")]
    # "total" is written by both solutions and neither question; "apple" is in its question
    assert method_stems(pairs, min_solutions=2) == {"total"}
    assert method_stems(pairs, min_solutions=1) == {"total"}
    assert method_stems(pairs + [("Hi.", "A total of 2 cats.\n#### total")], min_solutions=3) == {"total"}


def test_content_stems_and_sentences():
    assert content_stems("She bought 3 cookies <<3*2=6>> and the cookie boxes, walking and walked.") == {
        "bought",
        "cooki",
        "box",
        "walk",
    }
    text = "A toy costs $1.50. It is red! How much?"
    assert [text[a:b].strip() for a, b in problem_sentences(text)] == ["A toy costs $1.50.", "It is red!", "How much?"]


PENS = "Ann buys 3 pens, 2 books and 4 erasers. How many items does she buy?"


def test_clauses_of_a_problem():
    assert [PENS[a:b].strip() for a, b in problem_clauses(PENS)] == [
        "Ann buys 3 pens",
        "2 books",
        "4 erasers.",
        "How many items does she buy?",
    ]
    # a comma or point between digits cuts nothing; "then" does
    money = "It costs $1,500.50 then 2 more."
    assert [money[a:b].strip() for a, b in problem_clauses(money)] == ["It costs $1,500.50", "2 more."]


def test_a_clause_left_alone_inside_a_sentence():
    # the solution of the version without erasers: the sentence has matched numbers, its last clause none
    short = fit_features(check(PENS, "3 pens + 2 books = <<3+2=5>>5 items\n#### 5"))
    assert short["sentences_unmentioned"] == 0.0 and short["clauses_unmentioned"] == 1.0
    # the clauses' own words: ann, buy, pen / book / eras; the solution writes pen and book, not eras
    assert short["clauses_words_unwritten"] == 1.0
    full = fit_features(check(PENS, "3 pens + 2 books + 4 erasers = <<3+2+4=9>>9 items\n#### 9"))
    assert full["clauses_unmentioned"] == 0.0 and full["clauses_words_unwritten"] == 0.0
    # numbers alone: every clause's quantity is matched, but no clause's own words are written
    bare = fit_features(check(PENS, "3 + 2 + 4 = <<3+2+4=9>>9\n#### 9"))
    assert bare["clauses_unmentioned"] == 0.0 and bare["clauses_words_unwritten"] == 3.0


def test_a_calculation_line_about_what_the_problem_does_not_have():
    # a step of another version: markers the problem never writes, on the line of a calculation
    added = "3 pens + 2 books + 4 erasers = <<3+2+4=9>>9 items\n9 + 6 markers = <<9+6=15>>15\n#### 15"
    assert fit_features(check(PENS, added))["calculation_lines_unseen_words"] == 1.0
    # a line without a calculation does not count, and the problem's words are not unseen
    talk = "She also likes markers.\n3 pens + 2 books + 4 erasers = <<3+2+4=9>>9 items\n#### 9"
    assert fit_features(check(PENS, talk))["calculation_lines_unseen_words"] == 0.0
