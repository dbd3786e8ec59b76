"""Numbers as written: ``parse_number`` for a number in digits, and the number words the quantity reader knows.

``parse_number(text)`` reads one written number exactly (a ``Fraction``) and says its
form. What it reads:

- digits with thousands commas and decimals: ``12``, ``1,000.5``, ``.5`` (``integer``, ``decimal``), and
  thousands groups set off by spaces, ``10 000``, ``120 000``, ``1 000 000`` (a space, a no-break space or a
  thin space; one leading digit needs two groups, so ``2 100`` is two numbers), or by apostrophes, as in
  Switzerland: ``1'250'000``;
- a sign, ASCII ``-`` or the Unicode minus ``−`` (U+2212): ``-7``, ``−4``;
- fractions: ``3/4``, ``1⁄2`` (fraction slash), the vulgar fractions ``½ ⅓ ¼ ¾ ⅛...`` and
  mixed numbers glued to them, ``2½`` (``fraction``);
- scientific notation and powers of ten: ``1e5``, ``2.5E-3``, ``2×10^3``, ``10^3``, ``10^{-2}``;
- a scale suffix: ``50k``, ``50K`` (thousand), ``3M`` (million), ``2B``, ``2bn`` (billion), ``2.174T``
  (trillion); only the capital ``M`` is a million (``5m`` is five metres);
- digits of other scripts and fullwidth forms, as East Asian text writes them (``３５０``, ``１２．５``), and a power
  of ten in Unicode superscripts (``10⁶``, ``4.5 × 10⁻³``, ``10⁻¹²``), each read as their ASCII spelling.

The form of a number with an exponent or a suffix is ``integer`` when it was written
without a decimal point and its value is whole (``1e5``, ``50k``, ``10^3``) and
``decimal`` otherwise (``2.5k``, ``1e-3``). Anything else (``3:30``, ``2nd``, ``4x``,
``1/0``, ``2^10``: a power of another base is a computation, not a number) gives ``None``.

Size is bounded: a number written with more than :data:`MAX_DIGITS` digits, or with a
power of ten beyond ``10^±MAX_DIGITS``, is not read (``None``): Python refuses to turn
strings of more than 4,300 digits into an integer, and no school problem states such a
number. ``parse_number`` never raises on a string.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction

__all__ = [
    "MAX_DIGITS",
    "DIGITS_PATTERN",
    "parse_number",
    "plain_digits",
    "SUPERSCRIPTS",
    "UNIT_WORDS",
    "TENS_WORDS",
    "SCALE_WORDS",
    "ORDINAL_WORDS",
    "ORDINAL_DENOMINATORS",
    "MONTHS",
    "VULGAR_FRACTIONS",
]

#: The longest number (in digits written) that is read, and so computed with; longer ones are skipped, never an error.
MAX_DIGITS = 100

#: A number in digits as running text writes it (``12``, ``1,000.5``, ``.5``), unsigned, as a regular expression
#: without capturing groups. Thousands commas come in groups of three after one to three digits, so
#: ``1234,567`` is two numbers, ``1234`` and ``567``, and ``2/3`` is ``2`` and ``3``. Thousands spaces too
#: (``10 000``), after two or three digits or, after one, in two groups (``1 000 000``), and not before a digit,
#: a comma, a slash or a hyphen (``2 100``, ``12 100-page books`` are two numbers). Every match of up to
#: ``MAX_DIGITS`` digits is one that ``parse_number`` reads. Finders add what their text puts around a number
#: (a sign, ``$``, ``%``) and say why.
DIGITS_PATTERN = (
    r"(?:(?:\d{1,3}(?:,\d{3})+"
    r"|(?:\d{2,3}(?:[ \u00a0\u2009\u202f]\d{3})+|\d(?:[ \u00a0\u2009\u202f]\d{3}){2,})(?![\d,/-]|\.\d)"
    r"|\d+)(?:\.\d+)?|\.\d+)"
)

#: ``½`` -> 1/2 ... (Unicode's own values, exact after ``limit_denominator``).
VULGAR_FRACTIONS = {c: Fraction(unicodedata.numeric(c)).limit_denominator(10) for c in "½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒"}
_VULGAR_CLASS = "".join(VULGAR_FRACTIONS)
_NUMBER_RE = re.compile(
    rf"""(?P<sign>[-−])?(?:
        10\^(?P<brace>\{{)?(?P<power>[-−]?\d+)(?(brace)\}})                 # 10^3, 10^{{-2}}
      | (?P<whole>\d+)?(?P<vulgar>[{_VULGAR_CLASS}])                       # ½, 2½
      | (?P<num>\d+)[/⁄](?P<den>\d+)                                       # 3/4, 1⁄2
      | (?P<mantissa>{DIGITS_PATTERN})(?:
            [eE](?P<exp>[-+−]?\d+)                                         # 1e5
          | \s*[×x*·]\s*10\^(?P<brace2>\{{)?(?P<exp10>[-−]?\d+)(?(brace2)\}})  # 2×10^3
          | (?P<suffix>[kKMBT]|bn)                                         # 50k
        )?
    )""",
    re.X,
)
_SUFFIX_EXPONENT = {"k": 3, "K": 3, "M": 6, "B": 9, "bn": 9, "T": 12}
#: Unicode superscripts of an exponent: ``⁻³`` is ``-3``.
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
_SUPERSCRIPT_DIGITS = str.maketrans(SUPERSCRIPTS, "0123456789-+")
_SUPERSCRIPT_POWER_RE = re.compile(r"10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)$")  # "10⁻³" at the end of a number
# fullwidth punctuation of a number (digits of every script are read by ``unicodedata.decimal``)
_FULLWIDTH = {"．": ".", "，": ",", "／": "/", "－": "-"}

UNIT_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
SCALE_WORDS = {
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
    "quadrillion": 10**15,
    "quintillion": 10**18,
    "sextillion": 10**21,
    "septillion": 10**24,
    "octillion": 10**27,
    "nonillion": 10**30,
    "decillion": 10**33,
}
#: Ordinals that end a run of number words: "twenty-first", "one thousand two hundred thirtieth" (a rank, not a count).
ORDINAL_WORDS = {
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "thirtieth",
    "fortieth",
    "fiftieth",
    "sixtieth",
    "seventieth",
    "eightieth",
    "ninetieth",
    "hundredth",
    "thousandth",
    "millionth",
    "billionth",
    "trillionth",
}
# Denominators written as ordinals: "two thirds", "a fifth of".
ORDINAL_DENOMINATORS = {
    "half": 2,
    "halves": 2,
    "third": 3,
    "thirds": 3,
    "fourth": 4,
    "fourths": 4,
    "quarter": 4,
    "quarters": 4,
    "fifth": 5,
    "fifths": 5,
    "sixth": 6,
    "sixths": 6,
    "seventh": 7,
    "sevenths": 7,
    "eighth": 8,
    "eighths": 8,
    "ninth": 9,
    "ninths": 9,
    "tenth": 10,
    "tenths": 10,
    "eleventh": 11,
    "elevenths": 11,
    "twelfth": 12,
    "twelfths": 12,
    "thirteenth": 13,
    "thirteenths": 13,
    "fourteenth": 14,
    "fourteenths": 14,
    "fifteenth": 15,
    "fifteenths": 15,
    "sixteenth": 16,
    "sixteenths": 16,
    "seventeenth": 17,
    "seventeenths": 17,
    "eighteenth": 18,
    "eighteenths": 18,
    "nineteenth": 19,
    "nineteenths": 19,
    "twentieth": 20,
    "twentieths": 20,
    "thirtieth": 30,
    "thirtieths": 30,
    "fortieth": 40,
    "fortieths": 40,
    "fiftieth": 50,
    "fiftieths": 50,
    "sixtieth": 60,
    "sixtieths": 60,
    "seventieth": 70,
    "seventieths": 70,
    "eightieth": 80,
    "eightieths": 80,
    "ninetieth": 90,
    "ninetieths": 90,
    "hundredth": 100,
    "hundredths": 100,
    "thousandth": 10**3,
    "thousandths": 10**3,
    "millionth": 10**6,
    "millionths": 10**6,
    "billionth": 10**9,
    "billionths": 10**9,
    "trillionth": 10**12,
    "trillionths": 10**12,
}
MONTHS = {
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
}


# thousands grouped by apostrophes, as Swiss writers group them: "1'250'000", "CHF 12'500.50" (not "5'11", feet)
_APOSTROPHE_GROUPS_RE = re.compile(r"[-−]?\d{1,3}(?:['’]\d{3})+(?:\.\d+)?")


def parse_number(text: str) -> tuple[Fraction, str] | None:
    """The exact value and form of a number written in digits: ``"1,000.5"`` -> ``(Fraction(2001, 2), "decimal")``.

    Forms: ``integer``, ``decimal`` or ``fraction``; ``None`` for anything else, and for a
    number longer than ``MAX_DIGITS`` digits (see the module docstring for what is read).
    """
    text = plain_digits(text.strip())
    if _APOSTROPHE_GROUPS_RE.fullmatch(text):
        text = text.replace("'", "").replace("’", "")  # "1'250'000": Swiss thousands
    if sum(c.isascii() and c.isdigit() for c in text) > MAX_DIGITS:
        return None
    match = _NUMBER_RE.fullmatch(text)
    if match is None:
        return None
    read = _read(match)
    if read is None:
        return None
    value, form = read
    return (-value if match.group("sign") else value), form


def plain_digits(text: str) -> str:
    """``text`` with its digits in ASCII: fullwidth and other scripts' digits (``３５０`` -> ``350``, ``１２．５`` ->
    ``12.5``) and a power of ten in superscripts at its end (``4.5×10⁻³`` -> ``4.5×10^{-3}``); ASCII text as it is."""
    if text.isascii():
        return text
    text = "".join(str(unicodedata.decimal(c)) if c.isdecimal() else _FULLWIDTH.get(c, c) for c in text)
    return _SUPERSCRIPT_POWER_RE.sub(
        lambda m: "10^{" + m.group(1).translate(_SUPERSCRIPT_DIGITS).lstrip("+") + "}", text
    )


def _read(match: re.Match) -> tuple[Fraction, str] | None:
    """The unsigned value and form of a ``_NUMBER_RE`` match."""
    group = match.group
    if group("power") is not None:
        exponent = _exponent(group("power"))
        return None if exponent is None else (Fraction(10) ** exponent, "integer" if exponent >= 0 else "decimal")
    if group("vulgar") is not None:
        return int(group("whole") or 0) + VULGAR_FRACTIONS[group("vulgar")], "fraction"
    if group("num") is not None:
        denominator = int(group("den"))
        return None if denominator == 0 else (Fraction(int(group("num")), denominator), "fraction")
    mantissa = "".join(c for c in group("mantissa") if c.isdigit() or c == ".")  # "1,000", "10 000"
    value = Fraction(mantissa)
    written = group("exp") or group("exp10")
    exponent = _exponent(written) if written is not None else _SUFFIX_EXPONENT.get(group("suffix") or "", 0)
    if exponent is None:
        return None
    if exponent:
        value *= Fraction(10) ** exponent
    whole = "." not in mantissa and value.denominator == 1
    return value, "integer" if whole else "decimal"


def _exponent(written: str) -> int | None:
    """A written power of ten (``"3"``, ``"-2"``, ``"−2"``), or ``None`` beyond ``10^±MAX_DIGITS``."""
    exponent = int(written.replace("−", "-"))
    return exponent if abs(exponent) <= MAX_DIGITS else None
