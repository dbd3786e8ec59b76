"""Reading a worked solution: its lines, the calculations each line states, and the final answer.

A calculation is an expression of numbers and a stated result, in one of four forms:

- ``annotation``: GSM8K's calculator marks ``<<48/2=24>>``;
- ``equation``: plain text ``48/2 = 24``, ``0.2 x 50 = $10``, ``3 hours * 60 minutes/hour = 180 minutes``
  (up to three unit words may follow a number);
- ``latex``: ``$\\frac{32}{4}=8$``, ``$2 \\cdot 24 = 48$``, ``$\\frac{26}{6} \\approx 4.33$``, ``$8^2=\\boxed{64}$``,
  ``$4! = 24$``;
- ``words``: ``twice 8 is 16``, ``half of 30 is 15``, ``20% of 50 is 10``, ``3 times 4 equals 12``.

A line is cut into *sides*: runs of numbers, operators and brackets between the equals signs
(``=``, ``\\approx``, ``≈``, and in words ``is``, ``are``, ``equals``...). A side that holds a letter
standing for a number (``2w + 16 = 24``) or a LaTeX symbol (``\\angle C``, ``\\pi``) is symbolic, and no
calculation is read from it. In a chain ``a = b = c`` each expression followed by a number gives a
calculation; ``3 * 8 = 24 * 2 = 48`` gives two (the second starts from the first's result), and a
rewriting ``2 + 3 \\cdot 4 = 2 + 12 = 14`` gives one, ``2 + 3 \\cdot 4 = 14``.

Where a GSM8K line has both ``48/2 = <<48/2=24>>24``, the annotation is the calculation and the
written copy around it is not read again. The final answer is where ``parsers.final_answer`` finds it
(``#### N``, else ``\\boxed{N}``, else "the answer is N"; ``\\boxed{\\frac{1}{48}}`` is 1/48). Values are
exact (``Fraction``) and computed by ``parsers.solution_arithmetic`` within its documented bounds.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from fractions import Fraction

from mathgraph.parsers.final_answer import find_final_answer
from mathgraph.parsers.numbers import MAX_DIGITS, parse_number
from mathgraph.parsers.solution_arithmetic import agrees, evaluate

__all__ = [
    "ReadOperand",
    "ReadCalculation",
    "ReadMention",
    "ReadLine",
    "ReadAnswer",
    "read_lines",
    "read_answer",
    "shown_decimals",
]


@dataclass(frozen=True)
class ReadOperand:
    """A number a calculation computes with: its value, its text and span in the solution; for the first
    number of a chained calculation (``= 24 * 2``), the start of the calculation whose result it repeats;
    for the numerator or denominator of a written fraction (``2/5``, ``\\frac{2}{5}``), the fraction's value."""

    value: Fraction
    text: str
    span: tuple[int, int]
    chained_from: int | None = None
    fraction: Fraction | None = None


@dataclass(frozen=True)
class ReadCalculation:
    """A stated calculation: ``expression`` (its left side), ``operands``, the stated ``result`` (its text
    and the digits it shows after the point: ``decimals``, ``None`` for a fraction), the ``computed`` value
    (``None`` where it is not evaluated, with a ``note``), its ``form`` and ``span``."""

    expression: str
    operands: tuple[ReadOperand, ...]
    result: Fraction
    result_text: str
    decimals: int | None
    computed: Fraction | None
    form: str
    span: tuple[int, int]
    note: str | None = None
    items: tuple = ()  # the expression for ``evaluate``: a Fraction per operand, in order, and operators


@dataclass(frozen=True)
class ReadMention:
    """A number a line writes outside its calculations (``Dave won 10 games``); ``solved`` when it stands
    right after an equals sign whose left side is not a calculation (``G = 20``, ``x = <<9=9>>9``)."""

    value: Fraction
    text: str
    span: tuple[int, int]
    solved: bool = False


@dataclass(frozen=True)
class ReadLine:
    """A non-blank line of a solution: its 0-based line number, span, text, calculations in order, notes
    on what was not read (a number too long to compute with), and the numbers it writes outside its
    calculations."""

    index: int
    span: tuple[int, int]
    text: str
    calculations: tuple[ReadCalculation, ...]
    notes: tuple[str, ...] = ()
    mentions: tuple[ReadMention, ...] = ()


@dataclass(frozen=True)
class ReadAnswer:
    """The final answer: its value (``None`` when it is not a number), text, span and line number."""

    value: Fraction | None
    text: str
    span: tuple[int, int]
    line: int


@dataclass
class _Token:
    kind: str  # num, op, eq, lp, rp, bang, sqrt, frac, word, var, punct, skip, of, mulword, fracword
    text: str
    start: int
    end: int
    value: Fraction | str | None = None
    latex: bool = False


# parsers.numbers.DIGITS_PATTERN with LaTeX's thousands separators as well: "11{,}880", "11,\\!880".
_NUMBER = r"(?:\d{1,3}(?:(?:,|\{,\}|,\\!)\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_TOKEN_RE = re.compile(
    r"(?P<fracdigits>\\[dt]?frac\s*(?P<fa>\d)(?P<fb>\d)(?!\d))"
    r"|(?P<frac>\\[dt]?frac)"
    r"|(?P<rootn>\\sqrt\s*\[)"
    r"|(?P<sqrt>\\sqrt)"
    r"|(?P<texop>\\times|\\cdot|\\div|\\ast)(?![A-Za-z])"
    r"|(?P<texeq>\\approx|\\doteq|\\simeq)(?![A-Za-z])"
    r"|(?P<degree>\^\s*\{?\s*\\circ\s*\}?|°)"
    r"|(?P<text>\\(?:text|mbox|textbf|textit|mathrm)\s*\{[^{}]*\})"
    r"|(?P<texskip>\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big|boxed|fbox|displaystyle|quad|qquad)(?![A-Za-z])"
    r"|\\[,;:! ]|\\\$|&|\\\\)"
    r"|(?P<texpercent>\\%)"
    r"|(?P<command>\\[A-Za-z]+)"
    rf"|(?P<num>{_NUMBER})(?P<percent>\s?%|\s+per ?cent\b)?"
    r"|(?P<op>\*\*|[-+*/×÷·∙^−])"
    r"|(?P<eq>=|≈)"
    r"|(?P<lp>[(\[{])"
    r"|(?P<rp>[)\]}])"
    r"|(?P<bang>!)"
    r"|(?P<dollar>\$)"
    r"|(?P<word>[A-Za-z]+(?:['-][A-Za-z]+)*(?:(?:\.[A-Za-z]+)+\.?)?)"
    r"|(?P<space>\s+)"
    r"|(?P<other>.)"
)
_OPERATORS = {"**": "^", "×": "*", "÷": "/", "·": "*", "∙": "*", "−": "-", "\\times": "*", "\\cdot": "*"}
_OPERATORS.update({"\\div": "/", "\\ast": "*"})
_OPERATOR_WORDS = {"times": "*", "plus": "+", "minus": "-"}
_TWO_WORD_OPERATORS = {("multiplied", "by"): "*", ("divided", "by"): "/", ("times", "by"): "*"}
_EQUALS_WORDS = {"is", "are", "was", "were", "equals", "makes", "gives"}
_MULTIPLIER_WORDS = {"twice": Fraction(2), "double": Fraction(2), "triple": Fraction(3), "thrice": Fraction(3)}
_FRACTION_WORDS = {"half": Fraction(1, 2), "third": Fraction(1, 3), "quarter": Fraction(1, 4)}
_FRACTION_WORDS.update({"fourth": Fraction(1, 4), "fifth": Fraction(1, 5), "tenth": Fraction(1, 10)})
_UNIT_WORDS_AFTER_NUMBER = 3  # "240000 likes + ...", "60 minutes per hour = ..."
_CALCULATOR_RE = re.compile(r"<<([^<>]*)>>")
_LONG_DIGITS_RE = re.compile(rf"[\d,.]{{{MAX_DIGITS + 1},}}")
_ASY_RE = re.compile(r"\[asy\].*?\[/asy\]", re.DOTALL)


def read_lines(solution: str) -> list[ReadLine]:
    """The non-blank lines of ``solution`` and the calculations each states, in order (module docstring)."""
    text = _ASY_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), solution)  # drawings: no steps, lines kept
    math = math_spans(text)
    lines = []
    start = 0
    for number, line in enumerate(text.split("\n")):
        end = start + len(line)
        if line.strip():
            calculations, mentions = _line_calculations(text, start, end, math)
            notes = [c.note for c in calculations if c.note]
            if any(sum(ch.isdigit() for ch in m.group()) > MAX_DIGITS for m in _LONG_DIGITS_RE.finditer(line)):
                notes.append(f"a number of more than {MAX_DIGITS} digits is not read")
            lines.append(
                ReadLine(
                    number,
                    (start, end),
                    solution[start:end],
                    tuple(calculations),
                    tuple(dict.fromkeys(notes)),
                    tuple(mentions),
                )
            )
        start = end + 1
    return lines


def _line_calculations(
    text: str, start: int, end: int, math: list[tuple[int, int]] = ()
) -> tuple[list[ReadCalculation], list[ReadMention]]:
    """A line's calculations, and the numbers it writes outside them (``ReadMention``); ``math``: the spans
    of the solution's LaTeX math (``math_spans``)."""
    annotated: list[ReadCalculation] = []
    blanked = text[start:end]
    calculator = []  # the annotations that state a calculation (not a bare "<<20=20>>")
    mentions: list[ReadMention] = []
    for match in _CALCULATOR_RE.finditer(text, start, end):
        inner = _calculations(_tokens(text, match.start(1), match.end(1)), text, form="annotation")
        if inner:
            # one calculation per annotation, spanning the marks
            annotated.append(_with_span(inner[-1], (match.start(), match.end())))
            calculator.append(match)
        else:
            tokens = _tokens(text, match.start(1), match.end(1))
            mentions += [ReadMention(t.value, t.text, (t.start, t.end), True) for t in tokens[-1:] if t.kind == "num"]
        blanked = (
            blanked[: match.start() - start] + " " * (match.end() - match.start()) + blanked[match.end() - start :]
        )
    tokens = _tokens(blanked, 0, len(blanked), offset=start, math=math)
    every_written = _calculations(tokens, text, form=None)
    # a written calculation around an annotation ("48/2 = <<48/2=24>>24") is the annotation's copy
    written = [c for c in every_written if not any(c.span[0] <= m.start() < c.span[1] for m in calculator)]
    calculations = sorted(annotated + written, key=lambda c: c.span[0])
    inside = [c.span for c in calculations + every_written]
    for k, token in enumerate(tokens):
        if token.kind == "num" and not any(a <= token.start < b for a, b in inside):
            before = k - 1
            while before >= 0 and tokens[before].kind == "lp":
                before -= 1
            solved = before >= 0 and tokens[before].kind == "eq"  # "G = 20", "x = <<9=9>>9", "r = \\boxed{4}"
            mentions.append(ReadMention(token.value, token.text, (token.start, token.end), solved))
    return calculations, sorted(mentions, key=lambda m: m.span[0])


def _with_span(calculation: ReadCalculation, span: tuple[int, int]) -> ReadCalculation:
    return ReadCalculation(**{**calculation.__dict__, "span": span})


def shown_decimals(text: str) -> int | None:
    """Digits after the point that a stated number shows (a percentage two more: ``4.5%`` shows 3);
    ``None`` for a fraction, whose value is exact."""
    if "/" in text or "frac" in text:
        return None
    match = re.search(r"\.(\d+)", text)
    decimals = len(match.group(1)) if match else 0
    return decimals + 2 if "%" in text or "cent" in text else decimals


# ------------------------------------------------------------------ tokens
def math_spans(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` inside LaTeX math: ``\\(...\\)``, ``\\[...\\]``, ``$$...$$``, and ``$...$`` where
    what it holds reads as math (a command, ``^``, ``_``, a brace; or, on one line and with no digit right
    after either dollar, a letter beside an operator), not as money (``$5 and $10``, ``$4/day = $12``). In
    math a letter stands for a number (``a(5) - 115 = 0``, ``2xy``)."""
    spans = []
    for match in _MATH_RE.finditer(text):
        inner = next(g for g in match.groups() if g is not None)
        if match.group(4) is not None and not _LATEX_MARK_RE.search(inner):
            # money: "$4/day = $12", "$60 = 12(4A) + 12A\n$": a dollar before a digit opens no math
            money = inner[:1].isdigit() or text[match.end() : match.end() + 1].isdigit() or "\n" in inner
            if money or not _LOOKS_MATH_RE.search(inner):
                continue
        if match.group(4) is not None and _PROSE_RE.search(re.sub(r"\\[A-Za-z]+(\{[^{}]*\})?", " ", inner)):
            continue
        spans.append((match.start(), match.end()))
    return spans


_MATH_RE = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]|\$\$(.+?)\$\$|(?<!\\)\$([^$]+?)\$", re.DOTALL)
_LOOKS_MATH_RE = re.compile(r"\\|\^|_|\{|[A-Za-z]\s*[-+=*/^(]|[-+=*/(]\s*[A-Za-z]\b|\d[A-Za-z]\b")
_LATEX_MARK_RE = re.compile(r"\\[A-Za-z]|\^|_|\{")
_PROSE_RE = re.compile(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}")


def _in_math(math: list[tuple[int, int]], position: int) -> bool:
    k = bisect.bisect_right(math, (position, float("inf"))) - 1
    return k >= 0 and math[k][0] <= position < math[k][1]


def _tokens(text: str, start: int, end: int, offset: int = 0, math: list[tuple[int, int]] = ()) -> list[_Token]:
    """The tokens of ``text[start:end]``, spans shifted by ``offset``; a word inside ``math`` (``math_spans``,
    in shifted positions) is a letter standing for a number, a symbol (``var``), as is a subscript
    (``a_1``, ``0.0011_2``). LaTeX fractions become brackets:
    ``\\frac{a}{b}`` -> ``((a)/(b))`` and ``\\frac12`` -> ``(1/2)``; other braces are brackets; a
    ``\\frac`` without its two groups becomes a symbol (``var``), so that its side is not read."""
    tokens: list[_Token] = []
    frames: list[str] = []  # per open brace: "num" or "den" of a fraction, or "group"
    numerator_next = denominator_next = False
    fraction_start = start + offset
    for match in _TOKEN_RE.finditer(text, start, end):
        kind, raw = match.lastgroup, match.group()
        kind = "num" if kind == "percent" else kind
        s, e = match.start() + offset, match.end() + offset
        if kind in ("space", "dollar", "texskip"):
            continue
        if denominator_next and raw != "{":
            tokens.append(_Token("var", raw, s, e))  # "\frac{a}" with no second group
        denominator_next = denominator_next and raw == "{"
        if kind == "fracdigits":
            a, b = Fraction(int(match.group("fa"))), Fraction(int(match.group("fb")))
            tokens += [_Token("lp", "(", s, s, latex=True), _Token("num", str(a), e - 2, e - 1, a)]
            tokens += [_Token("op", "/", e - 1, e - 1, "/", latex=True), _Token("num", str(b), e - 1, e, b)]
            tokens.append(_Token("rp", ")", e, e, latex=True))
        elif kind == "frac":
            numerator_next, fraction_start = True, s
            continue
        elif raw == "{":
            frame = "num" if numerator_next else "den" if denominator_next else "group"
            frames.append(frame)
            if frame == "num":
                tokens.append(_Token("lp", "(", fraction_start, e, latex=True))
            tokens.append(_Token("lp", "(", s, e, latex=True))
            denominator_next = False
        elif raw == "}" and frames:
            frame = frames.pop()
            tokens.append(_Token("rp", ")", s, e, latex=True))
            if frame == "num":
                tokens.append(_Token("op", "/", s, e, "/", latex=True))
                denominator_next = True
            elif frame == "den":
                tokens.append(_Token("rp", ")", s, e, latex=True))
        else:
            if numerator_next:
                tokens.append(_Token("var", "\\frac", s, s))
            token = _plain_token(match, kind, raw, s, e, tokens)
            if token.kind == "word" and kind == "word" and math and _in_math(math, s) and raw.lower() != "x":
                token = _Token("var", raw, s, e)
            elif raw == "_" or (tokens and tokens[-1].text == "_" and token.kind == "num"):
                token = _Token("var", raw, s, e)  # a subscript: a_1, \log_2, 0.0011_2
            tokens.append(token)
        numerator_next = False
    return _mixed_numbers(_spaced_thousands(tokens))


def _spaced_thousands(tokens: list[_Token]) -> list[_Token]:
    """``= 10 000 kg``: a result written with spaces between groups of three digits is one number (only
    right after an equals sign, where two numbers in a row cannot be meant)."""
    out: list[_Token] = []
    for token in tokens:
        previous = out[-1] if out else None
        grouped = (
            previous is not None
            and previous.kind == "num"
            and token.kind == "num"
            and re.fullmatch(r"\d{3}", token.text)
            and token.start == previous.end + 1
            and re.fullmatch(r"\d{1,3}(?: \d{3})*", previous.text)
            and len(out) >= 2
            and out[-2].kind == "eq"
        )
        if grouped:
            text = f"{previous.text} {token.text}"
            out[-1] = _Token("num", text, previous.start, token.end, Fraction(int(text.replace(" ", ""))))
        else:
            out.append(token)
    return out


def _mixed_numbers(tokens: list[_Token]) -> list[_Token]:
    """``4 2/3 - 2 = 2 2/3``: a whole number, one space, then a proper fraction written with a slash and no spaces
    is one mixed number (14/3), not two numbers with nothing between them."""
    out: list[_Token] = []
    k = 0
    while k < len(tokens):
        whole, a, slash, b = (tokens[k : k + 4] + [None] * 4)[:4]
        mixed = (
            b is not None
            and all(t.kind == "num" and not t.latex and re.fullmatch(r"\d+", t.text) for t in (whole, a, b))
            and slash.kind == "op"
            and slash.text == "/"
            and a.start == whole.end + 1
            and slash.start == a.end
            and b.start == slash.end
            and 0 < int(a.text) < int(b.text)
            and not (out and out[-1].text in ("/", "^") and out[-1].end == whole.start)  # "8/4 2/3": no
            and not (k + 4 < len(tokens) and tokens[k + 4].text in ("/", "^") and tokens[k + 4].start == b.end)
        )
        if mixed:
            value = int(whole.text) + Fraction(int(a.text), int(b.text))
            out.append(_Token("num", f"{whole.text} {a.text}/{b.text}", whole.start, b.end, value))
            k += 4
        else:
            out.append(tokens[k])
            k += 1
    return out


def _plain_token(match: re.Match, kind: str, raw: str, s: int, e: int, before: list[_Token]) -> _Token:
    value: Fraction | str | None = None
    if kind == "num":
        if sum(c.isdigit() for c in raw) > MAX_DIGITS:
            return _Token("big", raw, s, e)  # not read: its side is not a calculation (a note says so)
        value = _number_value(match.group("num"), match.group("percent") is not None)
        kind = "word" if value is None else "num"
    elif kind in ("op", "texop"):
        kind, value = "op", _OPERATORS.get(raw, raw)
    elif kind in ("eq", "texeq"):
        kind = "eq"
    elif kind in ("degree", "text", "texpercent"):
        kind = "word"
    elif kind in ("command", "rootn"):
        kind = "var"
    elif kind == "word":
        glued = bool(before) and before[-1].end == s and before[-1].kind == "num"
        if glued and len(raw) == 1 and raw.lower() != "x":
            kind = "var"  # 2w, 3n: a number times a letter
    return _Token(kind, raw, s, e, value, latex=raw.startswith("\\") or kind == "op" and raw == "^")


def _number_value(digits: str, percent: bool) -> Fraction | None:
    plain = digits.replace("{,}", ",").replace(",\\!", ",")
    parsed = parse_number(plain)
    if parsed is None:
        return None
    return parsed[0] / 100 if percent else parsed[0]


# ------------------------------------------------------------------ sides and calculations
@dataclass
class _Side:
    """A run of numbers, operators and brackets: one side of an equals sign."""

    start: int
    end: int = 0
    items: list = None  # Fraction numbers and operator strings, for ``evaluate``
    operands: list = None  # a ReadOperand per number in items
    operators: int = 0
    depth: int = 0
    expect_operand: bool = True
    unit_words: int = 0
    symbolic: bool = False
    latex: bool = False
    words: bool = False
    # where the side may end if what follows its unit words breaks it ("= 6 semi automatic - ..."):
    # (items, operands, end, operators, depth) at the last number followed by a unit word
    safe: tuple | None = None

    def __post_init__(self):
        self.items, self.operands = [], []

    def back_to_safe(self) -> bool:
        """Cut the side back to its last number followed by unit words; whether there was one."""
        if self.safe is None:
            return False
        items, operands, self.end, self.operators, self.depth = self.safe
        self.items, self.operands = self.items[:items], self.operands[:operands]
        self.expect_operand, self.symbolic = False, False
        return True


def _sides(tokens: list[_Token]) -> list[list[_Side]]:
    """The chains ``S0 = S1 = ...`` of a token list: sides joined by equals signs."""
    chains: list[list[_Side]] = []
    chain: list[_Side] = []
    side: _Side | None = None

    def close(joined: bool) -> None:
        nonlocal side, chain
        if side is not None:
            _finish(side)
            chain.append(side)
        elif joined:
            chain.append(_Side(0, symbolic=True))  # an equals sign with nothing read before it
        side = None
        if not joined:
            if chain:
                chains.append(chain)
            chain = []

    fragment = False
    for k, token in enumerate(tokens):
        following = tokens[k + 1] if k + 1 < len(tokens) else None
        kind, lowered = token.kind, token.text.lower()
        if kind == "word":
            kind = _word_kind(token, lowered, side, following, tokens[k + 2] if k + 2 < len(tokens) else None)
        if fragment and side is not None:
            side.symbolic = True
        fragment = fragment and side is None and kind in ("op", "lp", "sqrt", "num", "var", "big")
        if kind == "eq" or kind == "eqword":
            if kind == "eqword" and (
                side is None or side.operators == 0 or side.expect_operand or _fraction_only(side)
            ):
                close(False)
                continue
            if kind == "eq" and side is not None and _fraction_only(side) and side.unit_words:
                value = evaluate(side.items).value
                if value is not None and 0 < value < 1:
                    close(False)  # "1/2 a cup = 4 ounces": a part of a unit said in another unit, not a division
                    continue
            if side is not None:
                side.words |= kind == "eqword"
                side.latex |= token.latex
            close(True)
            continue
        if kind in ("num", "mulword", "fracword", "var", "big"):
            after_symbol = k > 0 and tokens[k - 1].kind == "var" and side is not None and side.symbolic
            if (
                side is not None
                and not side.expect_operand
                and kind in ("num", "mulword", "fracword")
                and not after_symbol
            ):
                close(
                    False
                )  # a number right after a number: a new run (after a symbol, \log_2 2^5, it is its argument)
            if side is None:
                side = _Side(token.start)
            if not side.expect_operand:  # 2w, 3\pi: a number times a symbol
                side.items.append("*")
            if kind in ("var", "big"):
                side.symbolic = True
                side.items.append(Fraction(0))
            else:
                operand = ReadOperand(token.value, token.text, (token.start, token.end))
                numerator = _numerator_before(side, token)
                if numerator is not None and operand.value.denominator == 1 and operand.value:
                    fraction = numerator.value / operand.value
                    side.operands[-1] = ReadOperand(**{**numerator.__dict__, "fraction": fraction})
                    operand = ReadOperand(**{**operand.__dict__, "fraction": fraction})
                side.items.append(token.value)
                side.operands.append(operand)
            side.expect_operand, side.unit_words, side.end = False, 0, token.end
            side.latex |= token.latex
            if kind in ("mulword", "fracword"):
                side.words = True
                side.items.append("*")  # "twice 8", "half of 30": the word multiplies
                side.operators += 1
                side.expect_operand = True
                if kind == "fracword":
                    side.unit_words = -1  # the "of" that follows is part of the word
        elif kind in ("op", "opword"):
            operator = token.value
            if side is not None and side.unit_words == -1 and lowered == "of":
                side.unit_words = 0
                continue
            if side is None or side.expect_operand:
                unary = operator in "+-" and following is not None and following.kind in ("num", "lp")
                if unary and (side is not None or k == 0 or tokens[k - 1].kind in ("eq", "word", "other")):
                    side = side or _Side(token.start)
                    side.items.append(operator)
                else:
                    # "pages*(2/3) = 96": what follows an operator with no number before it is a fragment
                    close(False)
                    fragment = True
                continue
            if _is_unit_after_slash(token, following):
                side.unit_words += 1  # "60 minutes/hour", "$2/pack": a unit
                continue
            side.items.append(operator)
            side.operators += 1
            side.expect_operand = True
            side.latex |= token.latex
            side.words |= kind == "opword"
        elif kind == "lp":
            if side is None:
                side = _Side(token.start)
            elif not side.expect_operand:
                if side.unit_words:
                    close(False)
                    side = _Side(token.start)
                else:
                    side.items.append("*")  # 2(8)
                    side.operators += 1
            side.items.append("(")
            side.depth += 1
            side.expect_operand = True
            side.latex |= token.latex
        elif kind == "rp":
            if side is None:
                continue
            if side.depth == 0 or side.expect_operand:
                side.symbolic |= side.expect_operand
                close(False)
                continue
            side.items.append(")")
            side.depth -= 1
            side.end = token.end
        elif kind == "bang" and side is not None and not side.expect_operand and side.unit_words == 0:
            if following is None or following.kind in ("eq", "op", "rp"):
                side.items.append("!")
                side.operators += 1
                side.end = token.end
                continue
            close(False)
        elif kind == "sqrt":
            if side is None:
                side = _Side(token.start)
            elif not side.expect_operand:
                side.items.append("*")
            side.items.append("sqrt")
            side.operators += 1
            side.expect_operand = True
            side.latex = True
        elif kind == "unit" and side is not None and not side.expect_operand:
            if side.unit_words == 0 and not side.symbolic:
                side.safe = (len(side.items), len(side.operands), side.end, side.operators, side.depth)
            side.unit_words += 1
            if side.unit_words > _UNIT_WORDS_AFTER_NUMBER:
                close(False)
        elif kind in ("unit", "word", "skip") and side is None or kind == "skip":
            continue
        else:
            if side is not None and side.expect_operand and not side.back_to_safe():
                side.symbolic = True  # "5 + a few": an operator without its number
            close(False)
    close(False)
    return chains


def _numerator_before(side: _Side, token: _Token) -> ReadOperand | None:
    """The numerator, when ``token`` is the denominator of a written fraction: ``2/5`` written tight, or
    ``\\frac{2}{5}`` (items ``( (2) / (`` before it)."""
    if not side.operands or side.operands[-1].value.denominator != 1:
        return None
    last = side.operands[-1]
    tight = side.items[-2:] == [last.value, "/"] and last.span[1] + 1 == token.start
    latex = len(side.items) >= 5 and side.items[-5:] == ["(", last.value, ")", "/", "("]
    return last if tight or latex else None


def _is_unit_after_slash(token: _Token, following: _Token | None) -> bool:
    """``/hour``, ``/pack``, ``kg/box``: a slash glued to a word of two letters or more is "per" a unit
    (``24/Y`` divides by a variable)."""
    return (
        token.value == "/"
        and following is not None
        and following.kind == "word"
        and following.start == token.end
        and len(following.text) > 1
    )


def _part_of(side: _Side) -> bool:
    """Whether ``of`` after this side takes a part of what follows (``20% of 50``, ``1/4 of 20``,
    ``0.5 of 30``): right after a percentage, a fraction or a number below one."""
    if side.unit_words or not side.operands:
        return False
    last = side.operands[-1]
    fraction = len(side.items) >= 3 and side.items[-2] == "/"
    return last.text.endswith(("%", "cent")) or fraction or 0 < last.value < 1


def _word_kind(token: _Token, lowered: str, side: _Side | None, following: _Token | None, after: _Token | None) -> str:
    """What a word is where it stands: an operator (``x``, ``times``, ``of``), an equals word (``is``),
    a number word (``twice``, ``half`` of), a unit after a number, or a plain word."""
    operand_next = following is not None and following.kind in ("num", "lp", "sqrt")
    after_operand = side is not None and not side.expect_operand
    if lowered == "x" and after_operand and operand_next:
        token.value = "*"
        return "op"
    if lowered == "x":
        return "var" if side is not None else "word"
    if after_operand and operand_next and lowered in _OPERATOR_WORDS:
        token.value = _OPERATOR_WORDS[lowered]
        return "opword"
    if after_operand and lowered in ("multiplied", "divided", "times") and following is not None:
        operator = _TWO_WORD_OPERATORS.get((lowered, following.text.lower()))
        if operator and after is not None and after.kind in ("num", "lp"):
            token.value = operator
            return "opword"
    if lowered == "by" and after_operand is False and side is not None and side.items and side.items[-1] in "*/":
        return "skip"
    if (
        lowered == "of"
        and side is not None
        and (side.unit_words == -1 or (after_operand and operand_next and _part_of(side)))
    ):
        token.value = "*"
        return "opword"
    if lowered in _EQUALS_WORDS or (lowered == "equal" and following is not None and following.text == "to"):
        return "eqword"
    if lowered in _MULTIPLIER_WORDS and (side is None or side.expect_operand) and operand_next:
        token.value = _MULTIPLIER_WORDS[lowered]
        return "mulword"
    if lowered in _FRACTION_WORDS and (side is None or side.expect_operand):
        if following is not None and following.text.lower() == "of" and after is not None and after.kind == "num":
            token.value = _FRACTION_WORDS[lowered]
            return "fracword"
    return "unit" if after_operand else "word"


def _fraction_only(side: _Side) -> bool:
    """A side that is one written fraction (``2/3`` of the tank is ...): a part named, not a calculation."""
    return len(side.operands) == 2 and side.operands[1].fraction is not None and side.operators == 1


def _finish(side: _Side) -> None:
    """Drop brackets opened before the side's own start (``(3 + 4 = 7)``); an operator at the end, or a
    bracket left open, makes the side unreadable."""
    if side.expect_operand:
        side.symbolic = True
    if side.depth:
        open_at: list[int] = []
        for k, item in enumerate(side.items):
            if item == "(":
                open_at.append(k)
            elif item == ")":
                open_at.pop()
        leading = [k for k in open_at if all(i == "(" for i in side.items[: k + 1])]
        if len(leading) != len(open_at):
            side.symbolic = True
        side.items = [item for k, item in enumerate(side.items) if k not in set(leading)]
        side.depth = 0


def _calculations(tokens: list[_Token], text: str, form: str | None) -> list[ReadCalculation]:
    """The calculations of the chains of ``tokens`` (module docstring)."""
    found: list[ReadCalculation] = []
    for chain in _sides(tokens):
        current: _Side | None = None
        current_value: Fraction | None = None
        for k, side in enumerate(chain):
            if side.symbolic or not side.items:
                current = None
                continue
            if current is None:
                if side.operators:
                    current, current_value = side, evaluate(side.items).value
                continue
            stated = _stated_number(side, last=k == len(chain) - 1)
            if stated is not None:
                found.append(_calculation(current, side, stated, text, form))
                current = None
                continue
            side_value = evaluate(side.items).value
            head = side.items[0]
            if isinstance(head, Fraction) and current_value is not None and side_value != current_value:
                decimals = shown_decimals(side.operands[0].text)
                if agrees(head, current_value, decimals):
                    # "3 * 8 = 24 * 2 = 48": 24 is the first calculation's result, and starts the second
                    found.append(
                        _calculation(current, side, (head, side.operands[0].text, side.operands[0].span), text, form)
                    )
                    first = side.operands[0]
                    side.operands[0] = ReadOperand(first.value, first.text, first.span, chained_from=found[-1].span[0])
            if side_value is not None and side_value == current_value:
                current.end = side.end  # a rewriting, "2 + 3 \cdot 4 = 2 + 12 = 14": one calculation
                continue
            current, current_value = side, side_value
    return [c for c in found if c.form == "annotation" or not _remainder_of(text, c)]


def _remainder_of(text: str, calculation: ReadCalculation) -> bool:
    """``the remainder of 2004 divided by 12 is 0``: what follows the division is its remainder, not its
    value (also ``2004 \\bmod 12``)."""
    before = text[max(0, calculation.span[0] - 40) : calculation.span[0]].lower()
    return "remainder" in before or "modulo" in before or " mod " in before


def _stated_number(side: _Side, last: bool) -> tuple[Fraction, str, tuple[int, int]] | None:
    """The side as a stated result: one number (bracketed or signed), or a fraction (``\\frac{1}{4}``, or
    ``3/4`` at the end of a chain); ``None`` for an expression."""
    core = [item for item in side.items if item not in ("(", ")")]
    if len(side.operands) == 1 and (core == [side.operands[0].value] or core == ["-", side.operands[0].value]):
        operand = side.operands[0]
        if core[0] == "-":
            return -operand.value, "-" + operand.text, operand.span
        return operand.value, operand.text, operand.span
    is_fraction = len(core) == 3 and core[1] == "/" and all(isinstance(c, Fraction) for c in (core[0], core[2]))
    if is_fraction and (last or side.latex) and core[2] != 0 and all(o.value.denominator == 1 for o in side.operands):
        a, b = side.operands
        return core[0] / core[2], f"{a.text}/{b.text}", (a.span[0], b.span[1])
    return None


def _calculation(
    left: _Side, right: _Side, stated: tuple[Fraction, str, tuple[int, int]], text: str, form: str | None
) -> ReadCalculation:
    value, result_text, result_span = stated
    evaluation = evaluate(left.items)
    if form is None:
        form = "latex" if left.latex or right.latex else "words" if left.words else "equation"
    return ReadCalculation(
        expression=text[left.start : left.end].strip(),
        operands=tuple(left.operands),
        result=value,
        result_text=result_text,
        decimals=shown_decimals(result_text),
        computed=evaluation.value,
        form=form,
        span=(left.start, max(result_span[1], right.end)),
        note=evaluation.note,
        items=tuple(left.items),
    )


# ------------------------------------------------------------------ the final answer
def read_answer(solution: str) -> ReadAnswer | None:
    """The final answer of ``solution`` where ``parsers.final_answer`` finds it; ``None`` when there is none."""
    span = find_final_answer(solution)
    if span is None:
        return None
    start, end = span
    return ReadAnswer(_value_of(solution, start, end), solution[start:end], span, solution.count("\n", 0, start))


def _value_of(text: str, start: int, end: int) -> Fraction | None:
    """The value of a short written answer (``72``, ``$1,000``, ``\\frac{1}{48}``, ``135^\\circ``, ``-5``);
    ``None`` for anything else (``1 : 2``, ``x = 3``, ``2\\sqrt{3}``)."""
    tokens = [t for t in _tokens(text, start, end) if not (t.kind == "other" and t.text == "." and t.end == end)]
    chains = _sides(tokens)
    if len(chains) != 1 or len(chains[0]) != 1 or any(t.kind in ("other", "eq", "bang") for t in tokens):
        return None
    side = chains[0][0]
    if side.symbolic or not side.operands:
        return None
    return evaluate(side.items).value
