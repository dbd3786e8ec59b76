"""Final answers of math solutions: extract them from solution text, compare them up to equivalent forms.

    extract_answer("... so she earns $10.\\n#### 10")          # '10'
    extract_answer("... which gives $\\boxed{\\frac{1}{8}}$.")   # '\\frac{1}{8}'
    answers_equal("\\frac 18", "0.125")                          # True
    answers_equal("11,\\!880", "11880")                          # True
    answers_equal("(-\\infty, 3]", "(-\\infty,3)")                # False: the brackets differ

Comparison works in three steps. ``normalize_answer`` rewrites the notation that
does not change the value (``\\dfrac``, ``\\left(``, ``\\$``, ``\\%``, ``^\\circ``, units
in ``\\text{}``, thousands separators, ``x =``). Bracketed answers (intervals,
points, tuples, unions of intervals, matrices) are compared item by item with the
brackets. Single items are turned into SymPy expressions (``parse_latex`` with the
antlr back end, or ``sympify`` for plain arithmetic only, since sympify evaluates
Python) and compared numerically, at a few fixed points when they have symbols.
Anything that cannot be parsed falls back to comparing the normalised strings;
``answers_equal`` never raises on odd input.
"""

from __future__ import annotations

import re
import warnings

from mathgraph.parsers.final_answer import find_final_answer
from mathgraph.parsers.numbers import DIGITS_PATTERN

__all__ = ["answers_equal", "extract_answer", "normalize_answer", "reference_answer"]

# Longer inputs are compared as strings only: parsing and evaluating them can take seconds.
MAX_SYMPY_CHARS = 300
RELATIVE_TOLERANCE = 1e-6
# Values substituted for free symbols when comparing expressions such as "2x - 13"; fixed so results repeat.
PROBE_POINTS = (0.5377, 1.8339, -2.2588, 0.8622)

# A final answer may be negative: "-3".
_NUMBER = re.compile(rf"-?{DIGITS_PATTERN}")


# --------------------------------------------------------------------------- extraction
def extract_answer(text: str | None) -> str | None:
    """The final answer of a solution, or ``None`` when it has none.

    The answer is where ``parsers.final_answer`` finds it: GSM8K's ``#### N`` line, else the last
    ``\\boxed{...}`` (braces balanced, so ``\\boxed{\\frac{1}{2}}`` is whole), else the last "The answer
    is X" (also "Final answer: X"); with none of them, the last number in the text. The answer is
    returned as written (``"1,000"``, ``"\\$30"``); ``answers_equal`` does the normalising.
    """
    if text is None:
        return None
    if not isinstance(text, str):
        raise TypeError(f"extract_answer takes a string, got {type(text).__name__}")
    span = find_final_answer(text)
    if span is not None:
        return text[span[0] : span[1]]
    numbers = _NUMBER.findall(text)
    return numbers[-1] if numbers else None


def reference_answer(reference: str | None) -> str | None:
    """The answer in a reference field: a GSM8K solution (``#### N``) or a boxed solution is reduced to
    its final answer, a bare answer (MATH's ``answer`` field, ``"\\frac{1}{4}"``) is kept whole."""
    if reference is None:
        return None
    reference = str(reference)
    if "####" in reference or "\\boxed" in reference or "\\fbox" in reference:
        return extract_answer(reference)
    return reference.strip() or None


# --------------------------------------------------------------------------- normalisation
_UNIT_TEXT = re.compile(r"\\(?:text|textnormal|textrm|textbf|mbox|mathrm)\s*\{([^{}]*)\}")
# A row break "\\\\" is matched first so that its second backslash is not read as the spacing command "\\ ".
_SPACING = re.compile(r"\\\\|\\[,;:!]|\\ |\\q?quad")
_TRAILING_WORDS = re.compile(r"(?<=[\d}])\s+(?:[A-Za-z]{2,}\.?(?:\s+|$))+(?:\^\{?\d\}?)?$")
_LHS = re.compile(r"^[A-Za-z](?:_\{?\w+\}?)?\s*=\s*(?=\S)")


def normalize_answer(answer: str | None) -> str:
    """A canonical string for an answer: notation that does not change the value is removed.

    Removes ``$``, ``\\(...\\)``, ``\\left``/``\\right``, spacing commands, ``\\$``,
    ``\\%``, degree marks, ``\\text{ units}`` after a value (a text-only answer such
    as ``\\text{Wednesday}`` keeps its words), trailing plain-word units, a leading
    ``x =``, thousands separators; rewrites ``\\dfrac``/``\\tfrac`` as ``\\frac``,
    ``\\frac18`` as ``\\frac{1}{8}`` and ``\\sqrt3`` as ``\\sqrt{3}``; drops spaces.
    """
    if answer is None:
        return ""
    s = str(answer).strip()
    s = re.sub(r"^\\\(|\\\)$|^\\\[|\\\]$", "", s).strip()
    if len(s) >= 2 and s[0] == "$" and s[-1] == "$" and not s.startswith("\\$"):
        s = s.strip("$")
    s = s.replace("\\displaystyle", "")
    s = re.sub(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)\b\s*", "", s)
    s = re.sub(r"\\[dt]frac", r"\\frac", s)
    s = _SPACING.sub(_spacing, s)
    s = s.replace("\\$", "").replace("$", "")
    s = s.replace("\\%", "").replace("%", "")
    s = re.sub(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|°|\\degree", "", s)
    s = _strip_unit_text(s)
    s = s.strip().rstrip(".").strip()
    s = _TRAILING_WORDS.sub("", s).strip()
    s = _LHS.sub("", s)
    if _NUMBER.fullmatch(s):  # thousands separators: "1,080"
        s = s.replace(",", "")
    s = re.sub(r"\\frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac\s*\{([^{}]*)\}\s*(\d)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\sqrt\s*(\d)", r"\\sqrt{\1}", s)
    s = re.sub(r"\s+", "", s)
    # "5.0" and "5" are the same number; "0.50" and "0.5" too.
    if re.fullmatch(r"-?\d+\.\d*", s):
        s = s.rstrip("0").rstrip(".") or "0"
    return s


def _spacing(match: re.Match) -> str:
    command = match.group(0)
    if command == "\\\\":
        return command
    return "" if command in ("\\,", "\\!", "\\;", "\\:") else " "


def _strip_unit_text(s: str) -> str:
    without = _UNIT_TEXT.sub("", s).strip()
    if without and re.search(r"[\d}]", without):
        return without  # "180\text{ miles}" -> "180": the text is a unit
    return _UNIT_TEXT.sub(lambda m: m.group(1), s).strip()  # "\text{Wednesday}" -> "Wednesday"


# --------------------------------------------------------------------------- comparison
def answers_equal(a: object, b: object) -> bool:
    """Whether two answers are the same value, written either way (``"\\frac 18"`` and ``"0.125"``).

    Intervals, tuples and unions are equal when their brackets and items are;
    bare lists (``"2, -3"``) are compared as multisets; single values through
    SymPy. Returns False for ``None`` or what cannot be compared; never raises.
    """
    if a is None or b is None:
        return False
    na, nb = normalize_answer(str(a)), normalize_answer(str(b))
    if not na or not nb:
        return False
    if na == nb:
        return True
    return _structures_equal(na, nb)


def _structures_equal(a: str, b: str) -> bool:
    union_a, union_b = _split_top(a, "\\cup"), _split_top(b, "\\cup")
    if len(union_a) > 1 or len(union_b) > 1:
        return len(union_a) == len(union_b) and all(_structures_equal(x, y) for x, y in zip(union_a, union_b))
    matrix_a, matrix_b = _matrix(a), _matrix(b)
    if matrix_a is not None or matrix_b is not None:
        return (
            matrix_a is not None
            and matrix_b is not None
            and len(matrix_a) == len(matrix_b)
            and all(len(r) == len(s) and all(map(_values_equal, r, s)) for r, s in zip(matrix_a, matrix_b))
        )
    bracket_a, bracket_b = _bracketed(a), _bracketed(b)
    if bracket_a is not None and bracket_b is not None:
        (open_a, items_a, close_a), (open_b, items_b, close_b) = bracket_a, bracket_b
        return (
            (open_a, close_a) == (open_b, close_b)
            and len(items_a) == len(items_b)
            and all(map(_values_equal, items_a, items_b))
        )
    list_a, list_b = _split_top(a, ","), _split_top(b, ",")
    if len(list_a) > 1 or len(list_b) > 1:
        return len(list_a) == len(list_b) and _multiset_equal(list_a, list_b)
    return _values_equal(a, b)


def _multiset_equal(a: list[str], b: list[str]) -> bool:
    remaining = list(b)
    for item in a:
        match = next((i for i, other in enumerate(remaining) if _values_equal(item, other)), None)
        if match is None:
            return False
        remaining.pop(match)
    return True


def _split_top(s: str, separator: str) -> list[str]:
    """``s`` split on ``separator`` where it is outside every bracket."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(s):
        char = s[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and s.startswith(separator, i):
            parts.append(s[start:i])
            i += len(separator)
            start = i
            continue
        i += 1
    parts.append(s[start:])
    return [p for p in (part.strip() for part in parts)]


def _bracketed(s: str) -> tuple[str, list[str], str] | None:
    """``("(", items, "]")`` for ``(a,b]``; None when ``s`` is not one bracketed comma list."""
    if len(s) < 2 or s[0] not in "([" or s[-1] not in ")]":
        return None
    depth = 0
    for i, char in enumerate(s):  # the opening bracket must close at the very end: "(1)(2)" is not one
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0 and i < len(s) - 1:
            return None
    items = _split_top(s[1:-1], ",")
    if len(items) < 2:
        return None  # "(5)" is a parenthesised value, not a tuple
    return s[0], items, s[-1]


def _matrix(s: str) -> list[list[str]] | None:
    match = re.fullmatch(r"\\begin\{([pbvBV]?matrix)\}(.*)\\end\{\1\}", s, re.DOTALL)
    if not match:
        return None
    return [[cell.strip() for cell in row.split("&")] for row in match.group(2).split("\\\\") if row.strip()]


def _values_equal(a: str, b: str) -> bool:
    if a == b:
        return True
    if _is_text(a) or _is_text(b):
        return a.lower() == b.lower()  # words ("Wednesday") are not products of one-letter symbols
    if "\\infty" in a or "\\infty" in b:
        return _infinity_sign(a) == _infinity_sign(b) != 0
    ea, eb = _to_sympy(a), _to_sympy(b)
    if ea is None or eb is None:
        return False
    return _sympy_equal(ea, eb)


def _is_text(s: str) -> bool:
    return re.search(r"[A-Za-z]{2,}", re.sub(r"\\[A-Za-z]+", "", s)) is not None


def _infinity_sign(s: str) -> int:
    if s in ("\\infty", "+\\infty"):
        return 1
    return -1 if s == "-\\infty" else 0


_PLAIN_ARITHMETIC = re.compile(r"[\d\s.+\-*/^()]+")


def _to_sympy(s: str):
    """A SymPy expression for one value, or None. Plain arithmetic goes through sympify (safe: digits and
    operators only); LaTeX through parse_latex, which builds the expression without evaluating Python."""
    if len(s) > MAX_SYMPY_CHARS:
        return None
    import sympy
    from sympy.parsing.latex import LaTeXParsingError, parse_latex

    try:
        if _PLAIN_ARITHMETIC.fullmatch(s):
            return sympy.sympify(s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expr = parse_latex(s, backend="antlr")
        return expr.rhs - expr.lhs if isinstance(expr, sympy.Eq) else expr
    # What SymPy raises on text that is not math: the LaTeX grammar's errors, sympify's (a token or Python
    # syntax error inside, "05:0"), and the recursion limit on brackets nested a hundred deep.
    except (LaTeXParsingError, sympy.SympifyError, RecursionError):
        return None


def _sympy_equal(ea, eb) -> bool:
    import sympy

    if not (isinstance(ea, sympy.Expr) and isinstance(eb, sympy.Expr)):
        return False  # a truth value or a relation ("x < 3"), not a number: equal only as written
    try:
        symbols = sorted(ea.free_symbols | eb.free_symbols, key=str)
        if ea.free_symbols != eb.free_symbols:
            return False
        if not symbols:
            return _close(ea, eb)
        for offset in range(len(PROBE_POINTS)):
            values = {s: PROBE_POINTS[(offset + j) % len(PROBE_POINTS)] + j for j, s in enumerate(symbols)}
            if not _close(ea.subs(values), eb.subs(values)):
                return False
        return True
    # SymPy's refusals to order two values in _close: "Invalid NaN comparison" (TypeError: oo - oo is NaN) and
    # "The argument '0.e-165' is not comparable" (ValueError from Max: a zero evaluated with no digits left).
    except (TypeError, ValueError):
        return False


def _close(ea, eb) -> bool:
    """Equal within a relative tolerance, evaluated by SymPy at 30 digits (floats overflow on 2^{2008})."""
    import sympy

    va, vb = sympy.N(ea, 30), sympy.N(eb, 30)
    if not (va.is_number and vb.is_number) or va.has(sympy.nan, sympy.zoo) or vb.has(sympy.nan, sympy.zoo):
        return False
    scale = sympy.Max(1, abs(va), abs(vb))
    return bool(abs(va - vb) <= RELATIVE_TOLERANCE * scale)
