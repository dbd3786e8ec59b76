"""``mathgraph.text_checks``: a lone surrogate is named, with where it is in the user's own text."""

import pytest

from mathgraph.parsers.problem import check_problem_text
from mathgraph.text_checks import check_text, text_error


def test_text_is_text():
    assert text_error("Tom has 3 apples. ½ ✓ 𝑥 \U0001f600") is None  # astral characters are one code point


def test_bytes_that_are_not_utf8_are_named_as_such():
    argument = b"Tom \xff has".decode("utf-8", "surrogateescape")  # how Python reads such a command line
    assert text_error(argument) == "is not valid UTF-8: byte 0xff at character 5 (after 'Tom ')"
    assert text_error("\udc80") == "is not valid UTF-8: byte 0x80 at character 1"


def test_a_lone_surrogate_is_named_with_what_comes_before_it():
    long = "x" * 30 + "\ud800"
    assert (
        text_error(long)
        == f"holds a lone surrogate U+D800 at character 31 (after {'x' * 20!r}), which is not a character"
    )
    with pytest.raises(ValueError, match="^problem B holds a lone surrogate U\\+DBFF at character 1, which"):
        check_text("\udbff", "problem B")
    with pytest.raises(ValueError, match="^problem 3: the problem text holds a lone surrogate"):
        check_problem_text("Tom \ud800", where="problem 3")
