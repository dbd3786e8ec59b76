"""The one pattern of a number in digits (``parsers.numbers.DIGITS_PATTERN``) and what each finder built on it
reads: the solution checker's numbers of a line, the solution features' written numbers, the grader's last
number."""

import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mathgraph.parsers import solution_arithmetic
from mathgraph.parsers.numbers import DIGITS_PATTERN, MAX_DIGITS, parse_number
from mathgraph.parsers.solution_check import _numbers as numbers_a_line_writes
from mathgraph.parsers.solution_features import written_numbers
from mathgraph.tasks.answers import extract_answer

FIND = re.compile(DIGITS_PATTERN)


@pytest.mark.parametrize(
    "text, found",
    [
        ("1,234.5", ["1,234.5"]),
        ("-3", ["3"]),  # unsigned: a finder adds the sign where its text has one
        (".5", [".5"]),
        ("2/3", ["2", "3"]),  # two numbers in running text; parse_number reads "2/3" whole
        ("1234,567", ["1234", "567"]),  # thousands commas only after one to three digits
        ("(2008,2009)", ["2008", "2009"]),
        ("{1000,1001,1002}", ["1000", "1001", "1002"]),
        ("12,3456", ["12,345", "6"]),
        ("10 000 dollars", ["10 000"]),  # thousands spaces after two or three digits
        ("1 000 000 and 120\u00a0000", ["1 000 000", "120\u00a0000"]),  # one leading digit needs two groups
        ("2 100 bills", ["2", "100"]),
        ("12 100-page books", ["12", "100"]),  # not before a hyphen, a comma, a slash or a digit
    ],
)
def test_the_pattern_finds_numbers_in_running_text(text, found):
    assert FIND.findall(text) == found


@given(st.text(alphabet="0123456789,.-/ ", max_size=40))
def test_parse_number_reads_every_number_the_pattern_finds(text):
    for match in FIND.finditer(text):
        assert parse_number(match.group()) is not None, match.group()


def test_one_bound_on_digits():
    assert solution_arithmetic.MAX_DIGITS is MAX_DIGITS == 100
    assert FIND.fullmatch("1" * (MAX_DIGITS + 1)) and parse_number("1" * (MAX_DIGITS + 1)) is None


def test_each_finder_reads_the_forms_it_needs():
    text = "-3, then 1,234.5 and .5 of 2/3 at (2008,2009); 12,3456"
    # the checker: unsigned ("50-20" subtracts), and no number from inside "12,3456"
    assert numbers_a_line_writes(text) == {3, Fraction(2469, 2), Fraction(1, 2), 2, 2008, 2009, 12345}
    # the features: signed, with "$" and "%" around a number
    assert written_numbers(text) == [-3, Fraction(2469, 2), Fraction(1, 2), 2, 3, 2008, 2009, 12345, 6]
    assert written_numbers("-$.5 or $.5, 25%") == [Fraction(-1, 2), Fraction(1, 2), Fraction(1, 4)]
    # the grader's guess where a solution marks no answer: the last number, signed, as written
    assert [extract_answer(f"so it is {n}") for n in ("-3", "1,234.5", ".5")] == ["-3", "1,234.5", ".5"]


@pytest.mark.parametrize(
    "written, value",
    [
        ("10 000", 10000),
        ("1 000 000", 1000000),
        ("2.174T", 2174 * 10**9),
        ("50K", 50000),
    ],
)
def test_thousands_spaces_and_the_trillion_suffix(written, value):
    assert parse_number(written) == (Fraction(value), "integer" if "." not in written else "decimal")


def test_scales_past_a_trillion_and_small_ordinal_denominators():
    from mathgraph.parsers.numbers import ORDINAL_DENOMINATORS, SCALE_WORDS

    assert SCALE_WORDS["quadrillion"] == 10**15 and SCALE_WORDS["decillion"] == 10**33
    assert ORDINAL_DENOMINATORS["trillionths"] == 10**12 and ORDINAL_DENOMINATORS["thousandth"] == 1000
