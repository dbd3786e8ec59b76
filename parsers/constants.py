"""Known constants: the numbers a worked solution may use without the problem stating them.

A solution that turns hours into minutes multiplies by 60, one that takes a percentage divides by
100, one that counts eggs by the dozen multiplies by 12: these operands come from what everyone
knows, not from the problem. ``KNOWN_CONSTANTS`` lists them, each with the words that show it is
meant (its *cues*): 60 explains an operand only where the problem or the solution speaks of
minutes, hours or seconds, 7 only where they speak of days or weeks, and so on. A constant whose
cues are all absent explains nothing, so a miscopied 7 in a problem about apples stays unexplained.

| value | name | cues (any of; matched at the start of a word, lower-cased) |
|---|---|---|
| 0 | zero (nothing) | always |
| 0.01 | one percent; a penny in dollars | %, percent, penny, pennies |
| 0.05, 0.10, 0.25 | a nickel, a dime, a quarter in dollars | nickel; dime; quarter |
| 1 | one whole | always (``1 - 0.25``, ``x + 1``) |
| 2 | two (half, double, a pair, both) | always |
| 3 | three (triple; feet in a yard; wheels of a tricycle) | triple, thrice, yard, tricycle |
| 4 | four (quarter, quadruple; weeks in a month; quarts in a gallon; sides of a square; wheels of a car) | quarter, quadrupl, week, month, quart, gallon, square, wheel |
| 5 | five (weekdays; cents in a nickel) | weekday, workday, school day, nickel, friday |
| 7 | days in a week | week, day |
| 8 | ounces in a cup; pints in a gallon | cup, pint, gallon |
| 10 | ten (cents in a dime; millimeters in a centimeter; decimal places) | dime, millimet, mm, centimet, ten |
| 12 | twelve (dozen; months in a year; inches in a foot) | dozen, month, year, inch, foot, feet |
| 16 | ounces in a pound | ounce, pound |
| 20 | a score | score |
| 24 | hours in a day | hour, day |
| 25 | cents in a quarter | quarter |
| 28, 30, 31 | days in a month | month, and the names of the months of that length |
| 32 | ounces in a quart | quart |
| 36 | inches in a yard | inch, yard |
| 52 | weeks in a year | week, year |
| 60 | seconds in a minute, minutes in an hour | second, minute, hour |
| 100 | percent; cents in a dollar; centimeters in a meter; years in a century | %, percent, cent, dollar, $, meter, metre, centur |
| 180 | degrees in a half turn (a triangle's angles) | degree, angle, triangle, °, \\circ |
| 360 | degrees in a full turn | degree, angle, circle, °, \\circ |
| 365 | days in a year | year, day |
| 1000 | thousand (meters in a kilometer; grams in a kilogram; milliliters in a liter) | thousand, kilo, km, kg, gram, liter, litre, milli, ml |
| 128 | ounces in a gallon | gallon |
| 2000 | pounds in a ton | ton |
| 3600 | seconds in an hour | second, hour |
| 5280 | feet in a mile | feet, foot, mile |

``find_constant(value, text)`` gives the constant of that value whose cues occur in ``text``
(the problem and the solution together), or ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["KnownConstant", "KNOWN_CONSTANTS", "available_constants", "find_constant"]


@dataclass(frozen=True)
class KnownConstant:
    """A number everyone knows (``value``), its ``name`` in words, the ``cues`` that show it is meant (empty:
    always meant), and whether it converts units (``conversion``: 60 minutes in an hour, 100 cents in a
    dollar), so that a quantity counted in one of its cues implies the same amount in the other unit."""

    value: Fraction
    name: str
    cues: tuple[str, ...] = ()
    conversion: bool = False  # a unit conversion (60 minutes in an hour), not a count (4 sides of a square)


def _constant(value: int, name: str, cues: str = "", conversion: bool = False) -> KnownConstant:
    return KnownConstant(Fraction(value), name, tuple(cues.split("|")) if cues else (), conversion)


KNOWN_CONSTANTS: tuple[KnownConstant, ...] = (
    KnownConstant(Fraction(0), "zero (nothing)"),
    KnownConstant(Fraction(1, 100), "one percent (1/100); a penny in dollars", ("%", "percent", "penny", "pennies")),
    KnownConstant(Fraction(1, 20), "a nickel in dollars", ("nickel",)),
    KnownConstant(Fraction(1, 10), "a dime in dollars", ("dime",)),
    KnownConstant(Fraction(1, 4), "a quarter in dollars", ("quarter",)),
    _constant(1, "one whole"),
    _constant(2, "two (half, double, a pair, both)"),
    _constant(3, "three (triple; feet in a yard; wheels of a tricycle)", "triple|thrice|yard|tricycle"),
    _constant(
        4,
        "four (quarter, quadruple; weeks in a month; quarts in a gallon; sides of a square; wheels of a car)",
        "quarter|quadrupl|week|month|quart|gallon|square|wheel",
    ),
    _constant(5, "five (weekdays in a week; cents in a nickel)", "weekday|workday|school day|nickel|friday"),
    _constant(7, "days in a week", "week|day", conversion=True),
    _constant(8, "eight (ounces in a cup; pints in a gallon)", "cup|pint|gallon", conversion=True),
    _constant(10, "ten (cents in a dime; millimeters in a centimeter)", "dime|millimet|mm|centimet|ten"),
    _constant(
        12, "twelve (a dozen; months in a year; inches in a foot)", "dozen|month|year|inch|foot|feet", conversion=True
    ),
    _constant(16, "ounces in a pound", "ounce|pound", conversion=True),
    _constant(20, "a score", "score"),
    _constant(24, "hours in a day", "hour|day", conversion=True),
    _constant(25, "cents in a quarter", "quarter"),
    _constant(28, "days in a month (February)", "month|february"),
    _constant(30, "days in a month", "month|april|june|september|november"),
    _constant(31, "days in a month", "month|january|march|may|july|august|october|december"),
    _constant(32, "ounces in a quart", "quart", conversion=True),
    _constant(36, "inches in a yard", "inch|yard", conversion=True),
    _constant(52, "weeks in a year", "week|year", conversion=True),
    _constant(60, "sixty (seconds in a minute, minutes in an hour)", "second|minute|hour", conversion=True),
    _constant(
        100,
        "a hundred (percent; cents in a dollar; centimeters in a meter)",
        "%|percent|cent|dollar|$|meter|metre|centur",
        conversion=True,
    ),
    _constant(180, "degrees in a half turn", "degree|angle|triangle|°|\\circ"),
    _constant(360, "degrees in a full turn", "degree|angle|circle|°|\\circ"),
    _constant(365, "days in a year", "year|day", conversion=True),
    _constant(
        1000,
        "a thousand (meters in a kilometer; grams in a kilogram; milliliters in a liter)",
        "thousand|kilo|km|kg|gram|liter|litre|milli|ml",
        conversion=True,
    ),
    _constant(128, "ounces in a gallon", "gallon", conversion=True),
    _constant(2000, "pounds in a ton", "ton", conversion=True),
    _constant(3600, "seconds in an hour", "second|hour", conversion=True),
    _constant(5280, "feet in a mile", "feet|foot|mile", conversion=True),
)

# A cue made of letters matches at the start of a word ("week" in "weeks", "weekly"; not "tweek");
# a sign ("%", "$", "°") anywhere.
_CUE_RE = {
    cue: re.compile(r"(?<![a-z])" + re.escape(cue) if cue[:1].isalpha() else re.escape(cue))
    for known in KNOWN_CONSTANTS
    for cue in known.cues
}


def find_constant(value: Fraction, text: str) -> KnownConstant | None:
    """The known constant of ``value`` whose cues occur in ``text`` (lower-cased here), or ``None``."""
    return available_constants(text).get(value)


def available_constants(text: str) -> dict[Fraction, KnownConstant]:
    """``{value: constant}`` of every known constant whose cues occur in ``text`` (the first listed where
    two of one value do)."""
    lowered = text.lower()
    found: dict[Fraction, KnownConstant] = {}
    for known in KNOWN_CONSTANTS:
        if known.value not in found and (not known.cues or any(_CUE_RE[cue].search(lowered) for cue in known.cues)):
            found[known.value] = known
    return found
