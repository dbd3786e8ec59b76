"""The one final-answer reader (``parsers.final_answer``), on forms copied from GSM8K, GSM-Plus and
ProcessBench solutions, and its two callers: the solution graph's ``read_answer`` and the grader's
``extract_answer``."""

from fractions import Fraction

import pytest

from mathgraph.parsers.final_answer import find_final_answer
from mathgraph.parsers.solution_reader import read_answer
from mathgraph.tasks.answers import extract_answer


def answer(text: str) -> str | None:
    span = find_final_answer(text)
    return None if span is None else text[span[0] : span[1]]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("48+24 = <<48+24=72>>72 clips.\n#### 72", "72"),
        ("We don't know the price of the CD\n#### None", "None"),  # GSM-Plus: a problem with no answer
        ("#### 1,080.", "1,080"),
        # a Markdown heading is no answer; the box below it is
        ("#### Area of the sector\nThe area is\n\\[\n\\boxed{8 \\tan^{-1}(2)}\n\\]", "8 \\tan^{-1}(2)"),
        ("so the answer is $\\boxed{\\frac{1}{8}}$.", "\\frac{1}{8}"),  # the box, not the words around it
        ("The answer is: \\(\\boxed{\\frac{5}{36}}\\).", "\\frac{5}{36}"),
        ("So $x = \\boxed 5$.", "5"),
        ("Final Answer: The final answer is 107. I hope it is correct.", "107"),
        ("Final Answer: The final answer is (4, 2, 4). I hope it is correct.", "(4, 2, 4)"),
        ("The answer is $\\frac{3}{4}$. We double-check 2 + 2 = 4.", "\\frac{3}{4}"),
        ("The final answer is \\(\\frac{4}{35}\\). I hope it is correct.", "\\frac{4}{35}"),
        ("The answer is 5, which is odd.", "5"),
        ("The answer is $1,000.", "$1,000"),
        ("**Answer:** 42", "42"),
        ("The answer is \nCorrected solution: 5 apples", None),  # an empty answer line takes no other line
        ("we get 7 so \\boxed{\\frac{1}{2}", None),  # an unclosed box
        ("She has 3 apples and then 4.5 more", None),
    ],
)
def test_find_final_answer(text, expected):
    assert answer(text) == expected


def test_both_callers_read_the_same_answer():
    text = "Natalia sold 48+24 = <<48+24=72>>72 clips.\nSo the answer is $\\boxed{72}$."
    read = read_answer(text)
    assert (read.value, read.text, read.line) == (72, "72", 1) and extract_answer(text) == "72"
    assert read_answer("The final answer is \\(\\frac{4}{35}\\).").value == Fraction(4, 35)
    # where the solution marks none, the grader guesses its last number and the graph has no answer
    assert read_answer("She has 3 apples and then 4.5 more") is None
    assert extract_answer("She has 3 apples and then 4.5 more") == "4.5"
