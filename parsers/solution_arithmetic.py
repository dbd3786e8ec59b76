"""Exact, bounded arithmetic for the calculations a solution states.

``evaluate(items)`` computes an expression given as a flat list of items: ``Fraction`` numbers and
the strings ``+ - * / ^ ( ) !`` and ``sqrt`` (a prefix function). It is iterative (shunting-yard
into reverse Polish, then a value stack), so no input can exhaust Python's recursion, and every
value is an exact ``Fraction``. It never raises: what it cannot or will not compute gives ``None``
and a note in words. The limits, so that one line of text costs bounded time and memory:

- ``MAX_OPERANDS`` (256) numbers in one expression;
- ``MAX_DEPTH`` (64) brackets nested in one another;
- ``MAX_DIGITS`` (100, the bound of ``parsers.numbers``) digits in a number that is evaluated (numerator or
  denominator; a longer number is read and compared, but not computed with);
- ``MAX_RESULT_DIGITS`` (1,000) digits in any value the computation reaches (``9^9^9`` stops there);
- ``MAX_FACTORIAL`` (100): ``n!`` for whole ``n`` up to it;
- powers: a whole exponent whose result stays within ``MAX_RESULT_DIGITS``; a square root
  (``sqrt``) only where it is exact (``sqrt(16/9) = 4/3``).

``agrees(stated, computed, decimals)`` says whether a stated result is the computed one as far as
the solution's rounding shows: exactly, or, for a stated number with ``decimals`` digits after the
point (0 for a whole number), within one unit of its last digit (``26/6 = 4.33``, ``7/2 = 4`` boxes
when rounding up). A stated fraction (``decimals`` ``None``) must be exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from mathgraph.parsers.numbers import MAX_DIGITS

__all__ = [
    "Evaluation",
    "evaluate",
    "agrees",
    "MAX_OPERANDS",
    "MAX_DEPTH",
    "MAX_DIGITS",
    "MAX_RESULT_DIGITS",
    "MAX_FACTORIAL",
]

MAX_OPERANDS = 256
MAX_DEPTH = 64
MAX_RESULT_DIGITS = 1000
MAX_FACTORIAL = 100
# Digit counts are checked through bit lengths (log10(2) = 0.30103), never through str() of a huge number.
_BITS_PER_DIGIT = math.log2(10)
_MAX_NUMBER_BITS = int(MAX_DIGITS * _BITS_PER_DIGIT) + 1
_MAX_RESULT_BITS = int(MAX_RESULT_DIGITS * _BITS_PER_DIGIT) + 1
_BINARY = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 4}
_PREFIX = {"neg": 3, "pos": 3, "sqrt": 5}
_RIGHT_ASSOCIATIVE = {"^", "neg", "pos", "sqrt"}


@dataclass(frozen=True)
class Evaluation:
    """The exact value of an expression, or ``None`` and a ``note`` saying why there is none."""

    value: Fraction | None
    note: str | None = None


class _Stop(Exception):
    """Why an evaluation stops (its message is the note); never leaves this module."""


def evaluate(items: list[Fraction | str]) -> Evaluation:
    """The exact value of the expression ``items`` (module docstring); never raises."""
    try:
        return Evaluation(_run(_to_postfix(items)))
    except _Stop as stop:
        return Evaluation(None, str(stop))


def agrees(stated: Fraction, computed: Fraction, decimals: int | None) -> bool:
    """Whether ``stated`` is ``computed`` as far as ``decimals`` digits after the point show (module docstring)."""
    if stated == computed:
        return True
    if decimals is None or decimals > MAX_DIGITS:
        return False
    return abs(computed - stated) < Fraction(1, 10**decimals)


def _too_big(value: Fraction, bits: int) -> bool:
    return value.numerator.bit_length() > bits or value.denominator.bit_length() > bits


def _to_postfix(items: list[Fraction | str]) -> list[Fraction | str]:
    """Shunting-yard: infix items to reverse Polish, with unary signs told from binary ones by position."""
    output: list[Fraction | str] = []
    stack: list[str] = []
    operands = depth = 0
    expect_operand = True
    for item in items:
        if isinstance(item, Fraction):
            if not expect_operand:
                raise _Stop("two numbers without an operator between them")
            if _too_big(item, _MAX_NUMBER_BITS):
                raise _Stop(f"a number of more than {MAX_DIGITS} digits is not evaluated")
            operands += 1
            if operands > MAX_OPERANDS:
                raise _Stop(f"more than {MAX_OPERANDS} numbers in one calculation are not evaluated")
            output.append(item)
            expect_operand = False
        elif item == "(":
            if not expect_operand:
                raise _Stop("a bracket where an operator belongs")
            depth += 1
            if depth > MAX_DEPTH:
                raise _Stop(f"brackets nested deeper than {MAX_DEPTH} are not evaluated")
            stack.append(item)
        elif item == ")":
            if expect_operand:
                raise _Stop("a closing bracket where a number belongs")
            while stack and stack[-1] != "(":
                output.append(stack.pop())
            if not stack:
                raise _Stop("unbalanced brackets")
            stack.pop()
            depth -= 1
        elif item == "!":
            if expect_operand:
                raise _Stop("a factorial sign without its number")
            output.append(item)
        elif expect_operand and item in ("-", "+", "sqrt"):
            stack.append({"-": "neg", "+": "pos"}.get(item, item))
        elif item in _BINARY and not expect_operand:
            precedence = _BINARY[item]
            while stack and stack[-1] != "(":
                top = stack[-1]
                top_precedence = _BINARY.get(top, _PREFIX.get(top, 0))
                if top_precedence > precedence or (top_precedence == precedence and item not in _RIGHT_ASSOCIATIVE):
                    output.append(stack.pop())
                else:
                    break
            stack.append(item)
            expect_operand = True
        else:
            raise _Stop(f"{item!r} cannot stand here")
    if expect_operand:
        raise _Stop("the calculation ends with an operator")
    while stack:
        top = stack.pop()
        if top == "(":
            raise _Stop("unbalanced brackets")
        output.append(top)
    return output


def _run(postfix: list[Fraction | str]) -> Fraction:
    values: list[Fraction] = []
    for item in postfix:
        if isinstance(item, Fraction):
            values.append(item)
            continue
        if item in ("neg", "pos", "sqrt", "!"):
            value = values.pop()
            result = -value if item == "neg" else value if item == "pos" else _unary(item, value)
        else:
            right, left = values.pop(), values.pop()
            result = _binary(item, left, right)
        if _too_big(result, _MAX_RESULT_BITS):
            raise _Stop(f"a value of more than {MAX_RESULT_DIGITS} digits is not evaluated")
        values.append(result)
    return values[0]


def _binary(operator: str, left: Fraction, right: Fraction) -> Fraction:
    if operator == "+":
        return left + right
    if operator == "-":
        return left - right
    if operator == "*":
        return left * right
    if operator == "/":
        if right == 0:
            raise _Stop("division by zero")
        return left / right
    return _power(left, right)


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1:
        raise _Stop("a power with an exponent that is not whole is not evaluated")
    if base == 0 and exponent < 0:
        raise _Stop("division by zero")
    if base in (0, 1) or exponent == 0:
        return base ** int(exponent)
    # the result's size before computing it: |exponent| * bits of the base
    size = max(base.numerator.bit_length(), base.denominator.bit_length())
    if abs(exponent) > _MAX_RESULT_BITS or abs(int(exponent)) * max(size - 1, 1) > _MAX_RESULT_BITS:
        raise _Stop(f"a value of more than {MAX_RESULT_DIGITS} digits is not evaluated")
    return base ** int(exponent)


def _unary(operator: str, value: Fraction) -> Fraction:
    if operator == "!":
        if value.denominator != 1 or not 0 <= value <= MAX_FACTORIAL:
            raise _Stop(f"a factorial is evaluated for whole numbers from 0 to {MAX_FACTORIAL} only")
        return Fraction(math.factorial(int(value)))
    if value < 0:
        raise _Stop("the square root of a negative number")
    numerator, denominator = math.isqrt(value.numerator), math.isqrt(value.denominator)
    if numerator * numerator != value.numerator or denominator * denominator != value.denominator:
        raise _Stop("a square root that is not a fraction is not evaluated")
    return Fraction(numerator, denominator)
