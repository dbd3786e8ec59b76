"""What the equalities of a LaTeX solution claim, and whether they hold: ``latex_claims(solution)``.

A competition solution states most of its work as LaTeX equalities (``\\frac{3}{4} \\cdot 8 = 6``,
``(x+1)^2 = x^2 + 2x + 1``, ``\\sqrt{50} = 5\\sqrt{2}``) that the calculation reader of
``parsers.solution_reader`` leaves alone once a letter, a root that is not exact or ``\\pi`` stands in them.
Here each math span (``parsers.solution_reader.math_spans``) is cut into relations at commas, ``\\quad``,
``\\implies`` and text; a relation with ``=`` (or ``\\approx``) is a chain of sides, and each pair of sides
is a *claim*, judged by evaluating both sides in floating point:

- both sides without letters (``\\sqrt{50} = 5\\sqrt{2}``, ``\\binom{5}{2} = 10``, ``\\sin 30^\\circ = 0.5``):
  ``fails`` when they differ beyond the rounding the sides show (half a unit of the last digit of a decimal
  written, a whole number is exact; for ``\\approx`` one unit, or a hundredth of the value);
- both sides with the same letters, after the first side of a chain of three sides or more
  (``x^2 - 5x + 6 = (x-2)(x-3) = ...``: the first pair may be an equation, what follows rewrites it), where
  neither side is a lone symbol or number, and no ``i`` or ``e`` stands (complex numbers): the letters take
  three sets of random values (seeded) and the claim ``fails`` when the sides differ at all three, as a
  rewrite that does not hold does;
- anything else (an equation to solve, a definition, a substitution ``= 5 + 3``, a side this evaluator
  cannot read: ``\\pm``, ``|x|``, ``f(x)``, a base ``321_7``, ``\\overline{6}``) is ``unknown``.

``substituted_back(solution)`` puts the values a solution solves for (``x = 4``) back into its equations in
that letter, in order, and returns the line where the working went over to the wrong value: the first
equation that holds after the last one that fails.

The evaluator is a bounded shunting-yard over floats (no SymPy, no ``eval``): ``MAX_MATH_CHARS`` characters
a span, at most ``MAX_CLAIMS`` claims a solution, powers with exponents up to 64 in size, so that one
solution costs a few milliseconds.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from mathgraph.parsers.solution_reader import math_spans

__all__ = ["Claim", "latex_claims", "substituted_back", "MAX_MATH_CHARS", "MAX_CLAIMS"]

MAX_MATH_CHARS = 600
MAX_CLAIMS = 60
_TRIALS = 3
_SEED = 20240
_FUNCTIONS = {
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "ln": math.log,
    "log": math.log10,
    "exp": math.exp,
    "sqrt": math.sqrt,
}
_SKIP = r"\\left|\\right|\\big[lr]?|\\Big[lr]?|\\displaystyle|\\[,;:! ]|\\!|&|\\limits|\\nolimits"
_BREAK_RE = re.compile(
    r"\\quad|\\qquad|\\implies|\\Rightarrow|\\Longrightarrow|\\iff|\\therefore|\\text\s*\{[^{}]*\}"
    r"|\\(?:mbox|textbf|textit)\s*\{[^{}]*\}|(?<![\d{]),|,(?!\}?\d{3}(?!\d))|;|\\\\|\\le(?:q)?\b|\\ge(?:q)?\b|<|>|\\neq|\\ne\b"
    r"|\\to\b|\\in\b|\\cup|\\cap|\\subset"
)
_MODULAR_RE = re.compile(r"\\(?:mod|pmod|bmod|equiv)\b|\bmod\b")
# a quotient stated with its remainder (18 \div 4 = 4 \text{ remainder } 2): no equality of values
_REMAINDER_RE = re.compile(r"=\s*-?\d+\s*(?=(?:\\text\{|\\mathrm\{|\\textrm\{)?\s*(?:remainder|rem|R)\b)")
_TOKEN_RE = re.compile(
    r"(?P<num>\d+(?:\{,\}\d{3})*(?:\.\d+)?|\.\d+)"
    r"|(?P<cmd>\\[A-Za-z]+)"
    r"|(?P<letter>[A-Za-z])"
    r"|(?P<op>[-+*/^!=()\[\]{}_%])"
    r"|(?P<ws>\s+)"
    r"|(?P<other>.)"
)
_OPS = {"\\cdot": "*", "\\times": "*", "\\div": "/", "\\ast": "*"}
_CONSTANTS = {"\\pi": math.pi}
_GREEK = {
    "\\alpha", "\\beta", "\\gamma", "\\delta", "\\theta", "\\lambda", "\\mu", "\\phi", "\\varphi", "\\omega",
    "\\sigma", "\\rho", "\\epsilon", "\\varepsilon", "\\tau", "\\psi", "\\eta", "\\zeta", "\\xi", "\\kappa",
}  # fmt: skip
_COMPLEX = {"i", "e"}  # the imaginary unit and Euler's number: not checked as letters
_BINARY = {"+": 1, "-": 1, "*": 2, "/": 2, "C": 2, "^": 4}


class _Unreadable(Exception):
    """A side this evaluator does not read (module docstring)."""


@dataclass(frozen=True)
class Claim:
    """One claimed equality: its ``line`` (0-based line of the solution), the two sides as written, whether
    letters stand in them (``symbolic``), and the ``verdict``: "holds", "fails" or "unknown"."""

    line: int
    left: str
    right: str
    symbolic: bool
    verdict: str
    values: tuple[float, float] | None = None  # the two sides' values, for a claim without letters

    def to_dict(self) -> dict:
        """JSON-ready: line, left, right, symbolic, verdict, values."""
        return {
            "line": self.line,
            "left": self.left,
            "right": self.right,
            "symbolic": self.symbolic,
            "verdict": self.verdict,
            "values": None if self.values is None else list(self.values),
        }


def latex_claims(solution: str) -> list[Claim]:
    """The claims of the LaTeX math of ``solution`` and their verdicts (module docstring), in order."""
    claims: list[Claim] = []
    for line, sides, approx in _relations(solution):
        if len(claims) >= MAX_CLAIMS:
            break
        claims += _judge_chain(line, sides, approx)
    return claims[:MAX_CLAIMS]


def _relations(solution: str):
    """``(line, sides, approx)`` for each relation with ``=`` (or ``\\approx``) of the solution's math spans."""
    for start, end in math_spans(solution):
        inner = solution[start:end]
        if len(inner) > MAX_MATH_CHARS:
            continue
        line = solution.count("\n", 0, start)
        inner = re.sub(r"^\\\(|^\\\[|^\$\$|^\$|\\\)$|\\\]$|\$\$$|\$$", "", inner)
        inner = re.sub(r"\\boxed|\\fbox", "", inner).replace("\\%", "%").replace("\\$", "")
        inner = _REMAINDER_RE.sub(" ", inner)
        for relation in _BREAK_RE.split(re.sub(_SKIP, " ", inner)):
            if _MODULAR_RE.search(relation):
                continue  # 3^4 \mod 8 = 1, a \equiv b: not equalities of values
            approx = "\\approx" in relation or "≈" in relation
            sides = [s.strip() for s in re.split(r"\\approx|≈|=", relation)]
            if len(sides) < 2 or any(not s for s in sides):
                continue
            yield line, sides, approx


def substituted_back(solution: str) -> list[int]:
    """Lines where a solved equation goes wrong, found by substituting the solution's values back.

    A letter given a value (``x = 4``, ``x = \\frac{3}{2}``: a lone letter equal to a side without letters)
    is put back into every equation of the solution in that letter alone (the letter on both sides, or one
    side of it, as ``3x + 2 = 14``; not the assignments themselves), in the order written; an equation
    holds where one of the letter's values satisfies it. Where some equation fails and every equation
    written after the last failing one holds, the equations before went on to a value they do not have:
    the first equation that holds after it is where the working changed the equation wrongly, and its line
    is returned (one line per letter, in order)."""
    assigned: dict[str, set[float]] = {}
    equations: dict[str, list[tuple[int, _Expression, _Expression]]] = {}
    for line, sides, approx in _relations(solution):
        if approx:
            continue
        read = _read_sides(sides)
        for left, right in zip(read, read[1:]):
            if left is None or right is None:
                continue
            letters = left.letters | right.letters
            if len(letters) != 1 or letters & _COMPLEX:
                continue
            letter = next(iter(letters))
            assignment = next((b for a, b in ((left, right), (right, left)) if a.lone_symbol and not b.letters), None)
            if assignment is None:
                equations.setdefault(letter, []).append((line, left, right))
                continue
            value = _value(assignment, {})
            if value is not None:
                assigned.setdefault(letter, set()).add(value)
    found = []
    for letter, values in assigned.items():
        verdicts = []
        for line, left, right in equations.get(letter, []):
            sides = [(_value(left, {letter: v}), _value(right, {letter: v})) for v in values]
            sides = [(a, b) for a, b in sides if a is not None and b is not None]
            if sides:
                verdicts.append((line, any(abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b)) for a, b in sides)))
        failing = [k for k, (_, holds) in enumerate(verdicts) if not holds]
        if failing and failing[-1] + 1 < len(verdicts):
            found.append(verdicts[failing[-1] + 1][0])  # every equation after the last failing one holds
    return sorted(found)


def _value(expression: _Expression, values: dict[str, float]) -> float | None:
    """The finite value of ``expression`` with ``values`` for its letters, or ``None``."""
    try:
        value = expression.value(values)
    except (_Unreadable, ArithmeticError, ValueError, OverflowError, KeyError):
        return None
    return value if math.isfinite(value) else None


def _read_sides(sides: list[str]) -> list[_Expression | None]:
    """Each side of a chain of relations read as an expression, ``None`` where it cannot be read."""
    read = []
    for side in sides:
        try:
            read.append(_Expression(side))
        except _Unreadable:
            read.append(None)
    return read


def _judge_chain(line: int, sides: list[str], approx: bool) -> list[Claim]:
    read = _read_sides(sides)
    claims = []
    for k in range(len(sides) - 1):
        left, right = read[k], read[k + 1]
        verdict, symbolic, values = "unknown", True, None
        if left is not None and right is not None:
            symbolic = bool(left.letters or right.letters)
            if not symbolic:
                verdict, values = _numeric_verdict(left, right, approx)
            elif (
                len(sides) >= 3
                and k >= 1  # the first pair may be an equation (x + y = 5xy = ...), what follows rewrites
                and not left.letters & _COMPLEX
                and left.letters
                and left.letters == right.letters  # AD = DC, a + d = a + (20 - a): values, not a rewrite
                and not left.lone_symbol
                and not right.lone_symbol
                and not (k == 0 and left.lone_symbol)
            ):
                verdict = _identity_verdict(left, right)
        claims.append(Claim(line, sides[k], sides[k + 1], symbolic, verdict, values))
    return claims


def _numeric_verdict(left: _Expression, right: _Expression, approx: bool) -> tuple[str, tuple[float, float] | None]:
    try:
        a, b = left.value({}), right.value({})
    except (_Unreadable, ArithmeticError, ValueError, OverflowError):
        return "unknown", None
    if not (math.isfinite(a) and math.isfinite(b)):
        return "unknown", None
    tolerance = 1e-9 * max(1.0, abs(a), abs(b))
    decimals = [e.decimals for e in (left, right) if e.decimals is not None and (e.decimals or approx)]
    if decimals:
        # rounded to the digits shown: half a unit of the last digit (one unit after \approx, which may truncate)
        tolerance = max(tolerance, 10.0 ** -min(decimals) * (1 - 1e-9) * (1 if approx else 0.5))
    if approx:
        tolerance = max(tolerance, 0.01 * max(abs(a), abs(b)))
    holds = abs(a - b) < tolerance or a == b
    if not holds and (left.percent or right.percent):  # 4/40 * 100 = 10%: the percentage written as its number
        holds = min(abs(a * 100 - b), abs(a - b * 100)) < 100 * tolerance
    return ("holds" if holds else "fails"), (a, b)


def _identity_verdict(left: _Expression, right: _Expression) -> str:
    rng = random.Random(_SEED)
    letters = sorted(left.letters | right.letters)
    differ = 0
    for _ in range(_TRIALS):
        values = {name: rng.uniform(0.3, 2.7) for name in letters}
        try:
            a, b = left.value(values), right.value(values)
        except (_Unreadable, ArithmeticError, ValueError, OverflowError):
            return "unknown"
        if not (math.isfinite(a) and math.isfinite(b)):
            return "unknown"
        if abs(a - b) > 1e-7 * max(1.0, abs(a), abs(b)):
            differ += 1
    return "fails" if differ == _TRIALS else "holds" if differ == 0 else "unknown"


class _Expression:
    """One side read into reverse Polish over floats: ``letters`` (the symbols it holds), ``lone_symbol``
    (the side is one symbol), ``decimals`` (digits after the point where the side is one written number),
    ``percent`` (it writes ``%``)."""

    def __init__(self, text: str):
        tokens = _tokens(text)
        if not tokens:
            raise _Unreadable(text)
        self.letters = {t[1] for t in tokens if t[0] == "var"}
        self.percent = any(t[2] == "%" for t in tokens)
        self.lone_symbol = len(tokens) == 1 and tokens[0][0] == "var"
        lone = [t for t in tokens if t[0] not in ("(", ")", "neg")]
        self.decimals = None
        if len(lone) == 1 and lone[0][0] == "num":
            written = lone[0][2]
            self.decimals = len(written.split(".")[1]) if "." in written else 0
        self.postfix = _postfix(tokens)

    def value(self, values: dict[str, float]) -> float:
        """The side's value with ``values`` for its letters."""
        stack: list[float] = []
        for kind, item, _ in self.postfix:
            if kind == "num":
                stack.append(item)
            elif kind == "var":
                stack.append(values[item])
            elif kind == "fn":
                stack.append(_FUNCTIONS[item](stack.pop()) if item != "!" else _factorial(stack.pop()))
            elif kind == "neg":
                stack.append(-stack.pop())
            else:
                b, a = stack.pop(), stack.pop()
                stack.append(_apply(item, a, b))
        if len(stack) != 1:
            raise _Unreadable("left over")
        return stack[0]


def _factorial(value: float) -> float:
    if value != int(value) or not 0 <= value <= 170:
        raise _Unreadable("factorial")
    return float(math.factorial(int(value)))


def _apply(operator: str, a: float, b: float) -> float:
    if operator == "+":
        return a + b
    if operator == "-":
        return a - b
    if operator == "*":
        return a * b
    if operator == "/":
        return a / b
    if operator == "C":
        if a != int(a) or b != int(b) or not 0 <= a <= 1000:
            raise _Unreadable("binomial")
        return float(math.comb(int(a), int(b))) if b >= 0 else 0.0
    if abs(b) > 64 or (a < 0 and b != int(b)):
        raise _Unreadable("power")
    return a**b


def _tokens(text: str) -> list[tuple]:
    """``(kind, value, text)`` tokens: num, var, fn (a function or ``!``), an operator, ``(`` and ``)``; the
    implicit products (``2x``, ``3\\sqrt{2}``, ``(a)(b)``) made explicit; ``\\frac{a}{b}`` as ``((a)/(b))``."""
    raw = [(m.lastgroup, m.group()) for m in _TOKEN_RE.finditer(text) if m.lastgroup != "ws"]
    out: list[tuple] = []
    k = 0
    pending_frac: list[int] = []  # per open group: 0 plain, 1 numerator, 2 denominator, 3 sqrt / binom parts
    while k < len(raw):
        kind, item = raw[k]
        if kind == "other":
            raise _Unreadable(item)
        if kind == "cmd":
            if item in ("\\frac", "\\dfrac", "\\tfrac", "\\binom", "\\dbinom", "\\tbinom"):
                binomial = "binom" in item
                _implicit(out)
                out += [("(", "(", item)]
                pending_frac.append(-2 if binomial else -1)  # the fraction's own bracket, closed after the denominator
                k += 1
                if k < len(raw) and raw[k][1] != "{":  # \frac12
                    digits = raw[k][1]
                    if raw[k][0] != "num" or len(digits) != 2:
                        raise _Unreadable("frac")
                    operator = "C" if binomial else "/"
                    out += [("num", float(digits[0]), digits[0]), ("op", operator, operator)]
                    out.append(("num", float(digits[1]), digits[1]))
                    out.append((")", ")", ""))
                    pending_frac.pop()
                    k += 1
                continue
            if item == "\\sqrt":
                _implicit(out)
                out.append(("fn", "sqrt", item))
                if k + 1 < len(raw) and raw[k + 1][1] == "[":
                    raise _Unreadable("root")
                k += 1
                continue
            if item in _OPS:
                out.append(("op", _OPS[item], item))
            elif item in _CONSTANTS:
                _implicit(out)
                out.append(("num", _CONSTANTS[item], item))
            elif item in _GREEK:
                _implicit(out)
                out.append(("var", item, item))
            elif item[1:] in _FUNCTIONS:
                _implicit(out)
                out.append(("fn", item[1:], item))
            elif item == "\\circ" and len(out) >= 2 and out[-1][1] == "^" and out[-2][0] == "num":
                out.pop()  # 30^\circ: the number in degrees, as radians
                out[-1] = ("num", out[-1][1] * math.pi / 180, out[-1][2])
            else:
                raise _Unreadable(item)
            k += 1
            continue
        if kind == "num":
            _implicit(out)
            out.append(("num", float(item.replace("{,}", "")), item))
        elif kind == "letter":
            word = item
            while k + 1 < len(raw) and raw[k + 1][0] == "letter" and (word + raw[k + 1][1]) in _prefixes():
                k += 1
                word += raw[k][1]
            if word in _FUNCTIONS:
                _implicit(out)
                out.append(("fn", word, word))
            else:
                if k + 1 < len(raw) and raw[k + 1][1] == "(" and not out:
                    raise _Unreadable("function application")  # f(x) = ...
                _implicit(out)
                name = word
                if k + 1 < len(raw) and raw[k + 1][1] == "_":  # a_1, x_{n}: one symbol
                    if k + 2 >= len(raw):
                        raise _Unreadable("subscript")
                    if raw[k + 2][1] == "{":
                        close = next((j for j in range(k + 3, len(raw)) if raw[j][1] == "}"), None)
                        if close is None:
                            raise _Unreadable("subscript")
                        name += "_" + "".join(r[1] for r in raw[k + 3 : close])
                        k = close
                    else:
                        name += "_" + raw[k + 2][1]
                        k += 2
                out.append(("var", name, name))
        elif item == "_":
            raise _Unreadable("subscript")  # 321_7: a base
        elif item == "%":
            out += [("op", "/", "%"), ("num", 100.0, "100")]
        elif item == "!":
            out.append(("fn", "!", "!"))
        elif item in "({[":
            _implicit(out)
            top = pending_frac[-1] if pending_frac else 0
            numerator = item == "{" and top in (-1, -2) and out and out[-1][0] == "(" and out[-1][2].startswith("\\")
            out.append(("(", "(", item))
            pending_frac.append((1 if top == -1 else 3) if numerator else 0)
        elif item in ")}]":
            if not pending_frac:
                raise _Unreadable("bracket")
            role = pending_frac.pop()
            out.append((")", ")", item))
            if role in (1, 3):  # the numerator's group closed: a division (a binomial), then the denominator
                out.append(("op", "/", "/") if role == 1 else ("op", "C", "C"))
                pending_frac.append(2)
                if k + 1 >= len(raw) or raw[k + 1][1] != "{":
                    raise _Unreadable("frac")
                out.append(("(", "(", "{"))
                k += 1
            elif role == 2:
                out.append((")", ")", ""))  # the fraction's own bracket
                if not pending_frac or pending_frac[-1] not in (-1, -2):
                    raise _Unreadable("frac")
                pending_frac.pop()
        elif item == "=":
            raise _Unreadable("=")
        else:
            if item == "-" and (not out or out[-1][0] in ("op", "(", "neg", "fn")):
                out.append(("neg", "-", "-"))
            elif item == "+" and (not out or out[-1][0] in ("op", "(", "neg", "fn")):
                pass
            else:
                out.append(("op", item, item))
        k += 1
    if pending_frac:
        raise _Unreadable("bracket")
    if len(out) > 400:
        raise _Unreadable("long")
    return out


_PREFIX_CACHE: set[str] = set()


def _prefixes() -> set[str]:
    if not _PREFIX_CACHE:
        _PREFIX_CACHE.update(name[:j] for name in _FUNCTIONS for j in range(2, len(name) + 1))
    return _PREFIX_CACHE


def _implicit(out: list[tuple]) -> None:
    """A product where an operand follows an operand: ``2x``, ``(a)(b)``, ``3\\sqrt{2}``, ``5!x``."""
    if out and (out[-1][0] in ("num", "var", ")") or out[-1] == ("fn", "!", "!")):
        out.append(("op", "*", ""))


def _postfix(tokens: list[tuple]) -> list[tuple]:
    """Shunting-yard: prefix functions and the unary minus bind tighter than products, looser than powers."""
    output, stack = [], []
    expect_operand = True
    for token in tokens:
        kind, item, _ = token
        if kind in ("num", "var"):
            if not expect_operand:
                raise _Unreadable("two operands")
            output.append(token)
            expect_operand = False
        elif kind == "fn" and item == "!":
            if expect_operand:
                raise _Unreadable("!")
            output.append(token)
        elif kind in ("fn", "neg"):
            if not expect_operand:
                raise _Unreadable("function")
            stack.append(token)
        elif kind == "(":
            if not expect_operand:
                raise _Unreadable("(")
            stack.append(token)
        elif kind == ")":
            if expect_operand:
                raise _Unreadable(")")
            while stack and stack[-1][0] != "(":
                output.append(stack.pop())
            if not stack:
                raise _Unreadable("bracket")
            stack.pop()
            while stack and stack[-1][0] == "fn":  # \sqrt{2}, \sin(x): the function takes the bracket
                output.append(stack.pop())
        else:
            if expect_operand:
                raise _Unreadable("operator")
            precedence = _BINARY[item]
            while stack and stack[-1][0] != "(":
                top = stack[-1]
                top_precedence = _BINARY.get(top[1], 3) if top[0] == "op" else 3
                if top[0] == "op" and (top_precedence > precedence or (top_precedence == precedence and item != "^")):
                    output.append(stack.pop())
                elif top[0] in ("fn", "neg") and precedence < 4:
                    output.append(stack.pop())
                else:
                    break
            stack.append(token)
            expect_operand = True
    if expect_operand:
        raise _Unreadable("ends with an operator")
    while stack:
        top = stack.pop()
        if top[0] == "(":
            raise _Unreadable("bracket")
        output.append(top)
    return output
