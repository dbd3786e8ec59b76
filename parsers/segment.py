"""Split a math problem into plain text and formulas.

``segment(text)`` finds the formulas of a problem, replaces each by the
placeholder word :data:`PLACEHOLDER` in a *masked text* that a dependency parser
can read, and keeps exact character offsets so that every word of the masked text
maps back to the source (:meth:`Segmentation.to_source_span`).

What is recognised, outside math, scanning left to right:

* ``$...$`` (inline), ``$$...$$`` (display), ``\\(...\\)`` (inline),
  ``\\[...\\]`` (display);
* display environments outside dollars, ``\\begin{align*}...\\end{align*}`` and
  the like (:data:`MATH_ENVIRONMENTS`), delimiter ``"env"``; ``latex`` is the
  environment body (the name is in ``source[span[0]:body_span[0]]``);
* excluded blocks, kept out of the masked text: ``[asy]...[/asy]`` (kind
  ``"asy"``), ``\\begin{tabular}...\\end{tabular}`` (kind ``"tabular"``, formulas
  inside a table are dropped with it) and GSM8K calculator annotations
  ``<<48/2=24>>`` (kind ``"calc"``);
* a display cut out of its delimiters, as a sentence split off a solution leaves it, delimiter
  ``"cut"``: a ``\\[`` with no ``\\]`` runs to the paragraph's end, a text that opens inside a display
  (``x = 5 \\] so``) has one up to its first ``\\]``, each when it reads as math, not prose; and the
  environments allowed only inside math (``aligned``, ``cases``...: :data:`INNER_MATH_ENVIRONMENTS`)
  met in text are formulas, delimiter ``"env"``;
* with ``bare_arithmetic=True``, arithmetic written without delimiters
  (``48/2 = 24``, ``0.2 x 50 = $10``), delimiter ``"bare"``.

Inside math only the matching closing delimiter is looked for: a backslash
escapes the next character (so ``$\\$5$`` is one formula whose body is
``\\$5``), and a ``$`` inside braces (``\\text{if $n$ is odd}``) does not close an
inline formula.

Dollar signs
------------
``\\$`` outside math is a money sign and reads as ``$`` in the masked text
(``\\$20`` -> ``$20``); ``\\%``, ``\\&``, ``\\#`` and ``\\_`` likewise lose their
backslash.

A bare ``$`` opens inline math only when it has a closing ``$`` (an unclosed
``$`` is literal text, never an error; so is a ``$`` whose candidate body
would cross a blank line, as in TeX) and the pair passes the *money rule*,
which keeps GSM8K / GSM-Plus text (``Weng earns $12 an hour ... she earned $10``)
from turning into bogus formulas while real MATH formulas (``$5$``,
``$2x+3$``, ``$\\$5$``, ``$10\\text{ cm}$``) stay formulas.

0. A text that contains a GSM8K calculator annotation (``<<48/2=24>>``) is
   GSM8K-style: every bare ``$`` and ``$$`` in it is money.

Otherwise a candidate pair ``$body$`` is money when any of these holds (then
the opening ``$`` stays literal text and scanning goes on right after it, so
the closing ``$`` may open the next pair):

1. the opening ``$`` is followed by a calculator annotation (``$<<12/60=0.2>>0.2``);
2. the body reads as prose once LaTeX commands and ``{...}`` groups
   (``\\text{...}``, ``\\mbox{...}``...) are deleted: two consecutive words of
   two or more letters, one of them lower case (``on Monday``), a sentence end
   followed by a capital (``. He``), or a capitalised word of three or more
   letters (``Sally``);
3. the opening ``$`` looks like a money sign (followed by a digit, ``.digit``,
   or one space and a digit: ``$12``, ``$.50``, ``$ 5``) and the cleaned body
   has an English word after whitespace (three or more letters, not all
   capitals, or a short function word such as ``an``, ``or``, ``to``:
   ``$12 an hour ... $``), or the body ends with ``=`` (``$9 / 3 = $``), or it
   ends with whitespace and contains a line break;
4. the closing ``$`` is directly followed by a digit or ``.digit``, or by a
   calculator annotation (it is itself a money sign: ``$5 and $10``), and the
   opening ``$`` looks like money as in 3 or the body ends with whitespace
   (``$5, $10``).

``$$`` opens display math only when a closing ``$$`` follows with no lone
``$`` in between (``from $$ 1$ to $$ 9999$``, a typo in MATH, gives two
inline formulas, not a display formula).

Measured on the data: on the 7,500 MATH training problems the rule rejects no
real formula, and on the 21,346 GSM8K / GSM-Plus questions and solutions it
creates no formula.  The price: a formula that starts with a number and has an
English word outside ``\\text{}`` after a space (``$5 apples$``, unlike
``$5 \\text{ apples}$`` or ``$5 cm$``) is read as money.

Trailing punctuation
--------------------
MATH often ends a sentence inside the math (``Find $b.$``).  A ``.``, ``,``,
``;``, ``:`` or ``?`` ending a delimited formula's body (not escaped, not
the ``.`` of ``\\right.``) is moved out of it (``!`` stays: ``$4!$`` is a
factorial): ``latex`` and ``body_span`` leave
it out, ``span`` still covers the whole ``$b.$``, and the masked text has it
after the placeholder (``Find MATH.``), so sentences split where they should;
that character of the masked text maps to the punctuation inside the
formula's span.

Masked text
-----------
Each formula becomes :data:`PLACEHOLDER`; a space is inserted where a formula is
glued to a word (``$x$-axis`` -> ``MATH-axis``, ``$5$th`` -> ``MATH th``,
``$x$$y$`` -> ``MATH MATH``) so that the placeholder is always one token.
Excluded blocks are removed (a space is inserted where removing an ``asy`` or
``tabular`` block would glue two words).  A few text-mode commands are cleaned:
spacing commands (``\\qquad``, ``\\smallskip``, ``\\\\``...) become a space and the
braces of ``\\textbf{...}``, ``\\emph{...}``, ``\\text{...}``... are dropped,
keeping their content.  Inserted characters map to an empty source span.

Bare arithmetic
---------------
With ``bare_arithmetic=True`` the plain text (calculator annotations removed)
is searched for expressions over numbers: operands are numbers (``1,000``,
``0.2``, ``.5``) with an optional ``$`` before and ``%`` or an ordinal
suffix after (``= 4th`` -> ``4``), or one level
of parentheses; operators are ``+ - * / ^ x × · ÷ −`` and ``=`` chains them.  An
expression needs at least one arithmetic operator (a lone number or ``5 = 5``
is not a formula); ``x`` is multiplication only between two operands; an
expression whose only operator is ``-`` and that has no ``=`` is a range
(``5-10 minutes``), not a formula.  A bare formula's ``latex`` is *normalised*
and so is not the source slice: calculator annotations are left out, ``x``,
``*``, ``×`` and ``·`` become ``\\times``, ``÷`` becomes ``\\div``, ``−`` becomes
``-``, ``$`` becomes ``\\$`` and ``%`` becomes ``\\%``; ``span`` and ``body_span``
both cover the whole expression in the source (a calculator annotation
inside it is still listed in ``excluded``).  For every other delimiter
``source[body_span[0]:body_span[1]] == latex``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "PLACEHOLDER",
    "MATH_ENVIRONMENTS",
    "Formula",
    "ExcludedBlock",
    "Segmentation",
    "segment",
]

#: The word that stands for a formula in the masked text.  spaCy's English
#: tokenizer keeps it as one token and its tagger tags it PROPN (a noun) in
#: every context we measured; it also mirrors the ``[MATH]`` node of COMUS.
PLACEHOLDER = "MATH"

#: Environments that are display math when they appear outside dollars.
MATH_ENVIRONMENTS = frozenset(
    name + star
    for name in (
        "align",
        "alignat",
        "flalign",
        "eqnarray",
        "equation",
        "gather",
        "multline",
        "displaymath",
        "math",
    )
    for star in ("", "*")
)

#: Environments that LaTeX allows only inside math (``aligned`` is written inside ``\\[...\\]``); met in text, they
#: are what is left of a display whose delimiters were cut off, and read as a formula (delimiter ``"env"``).
INNER_MATH_ENVIRONMENTS = frozenset(
    {"aligned", "alignedat", "gathered", "split", "cases", "array", "matrix", "pmatrix", "bmatrix", "vmatrix"}
)

#: Environments outside math that are excluded (kind = the environment name).
EXCLUDED_ENVIRONMENTS = frozenset({"tabular", "tabular*", "tabularx"})


@dataclass(frozen=True)
class Formula:
    latex: str  # the formula body, delimiters stripped
    span: tuple[int, int]  # the whole formula, delimiters included, in the source
    body_span: tuple[int, int]  # offsets of the body in the source
    delimiter: str  # "$", "$$", "\\(", "\\[", "env", "bare", "cut" (a display missing its \\[ or its \\])
    display: bool


@dataclass(frozen=True)
class ExcludedBlock:
    kind: str  # "asy", "tabular", "calc"
    span: tuple[int, int]


@dataclass(frozen=True)
class Segmentation:
    source: str
    masked_text: str
    formulas: tuple[Formula, ...]
    placeholder_spans: tuple[tuple[int, int], ...]
    excluded: tuple[ExcludedBlock, ...]
    # per character of masked_text: its (start, end) in the source
    _offsets: tuple[tuple[int, int], ...] = field(default=(), repr=False, compare=False)

    def to_source_span(self, start: int, end: int) -> tuple[int, int]:
        """Map ``masked_text[start:end]`` to offsets in ``source``.

        The result covers the source of every character in the range: a
        placeholder (or any part of it) maps to its formula's whole span
        (delimiters included), a ``$`` written ``\\$`` in the source to both
        characters.  Characters inserted by :func:`segment` (spaces around
        placeholders) map to nothing; a range of inserted characters only, or
        an empty range, maps to an empty source range at that position.
        Offsets are clamped to the masked text.
        """
        n = len(self.masked_text)
        start = max(0, min(start, n))
        end = max(start, min(end, n))
        offs = self._offsets
        if len(offs) != n:  # built by hand, not by segment()
            return (start, end)
        if start == end:
            p = offs[start][0] if start < n else (offs[n - 1][1] if n else 0)
            return (p, p)
        real = [o for o in offs[start:end] if o[0] != o[1]]
        if not real:
            p = offs[start][0]
            return (p, p)
        return (min(o[0] for o in real), max(o[1] for o in real))


# --------------------------------------------------------------------------- scanning

_CALC_RE = re.compile(r"<<[^<>\n]*=[^<>\n]*>>")
_BEGIN_RE = re.compile(r"\\begin\s*\{([A-Za-z]+\*?)\}")
_PARBREAK_RE = re.compile(r"\n[ \t\r\f\v]*\n")
_ESCAPED_TEXT = {"$": "$", "%": "%", "&": "&", "#": "#", "_": "_"}
_SPACING_CMDS = frozenset(
    {
        "qquad",
        "quad",
        "smallskip",
        "medskip",
        "bigskip",
        "noindent",
        "newline",
        "par",
        "hfill",
        "vfill",
        "indent",
        "centering",
        "linebreak",
        "pagebreak",
        "newpage",
        "hline",
    }
)
_TRANSPARENT_CMDS = frozenset(
    {"textbf", "textit", "emph", "text", "textrm", "textsf", "texttt", "underline", "mbox", "textup"}
)
_CMD_RE = re.compile(r"\\([A-Za-z]+)\s*")
_TRAILING_PUNCT = frozenset(".,;:?")  # not "!": in math it is a factorial
_DELIM_CMD_RE = re.compile(r"\\(?:right|left|middle|[bB]igg?[lrm]?)\s*$")  # \right. is not a full stop


def _find_env_end(text: str, start: int, name: str) -> tuple[int, int] | None:
    """Find the ``\\end{name}`` matching a ``\\begin{name}`` whose body starts at
    ``start``; returns (start, end) of the ``\\end{...}`` or None."""
    pat = re.compile(r"\\(begin|end)\s*\{" + re.escape(name) + r"\}")
    depth = 1
    for m in pat.finditer(text, start):
        depth += 1 if m.group(1) == "begin" else -1
        if depth == 0:
            return m.start(), m.end()
    return None


def _scan_dollar_close(text: str, j: int, double: bool, braces: bool) -> int | None:
    """Position of the closing ``$`` (or ``$$``) of math whose body starts at j."""
    n = len(text)
    depth = 0
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if braces and c == "{":
            depth += 1
        elif braces and c == "}":
            if depth:
                depth -= 1
        elif c == "$" and depth == 0:
            if not double:
                return j
            if text.startswith("$$", j):
                return j
            return None  # a lone $ inside display math: not a $$ pair
        elif c == "\n":
            m = _PARBREAK_RE.match(text, j)
            if m:  # math cannot contain a paragraph break
                return None
        j += 1
    return None


def _scan_escaped_close(text: str, j: int, closer: str) -> int | None:
    """Position of ``\\)`` or ``\\]`` (closer is ")" or "]") from j."""
    n = len(text)
    while j < n:
        if text[j] == "\\":
            if j + 1 < n and text[j + 1] == closer:
                return j
            j += 2
            continue
        j += 1
    return None


def _open_display_end(text: str, start: int) -> int | None:
    """End of a ``\\[`` display whose ``\\]`` is missing (a sentence cut out of a display): the next paragraph
    break or the end of the text, when what lies there reads as math, not prose; else None."""
    m = _PARBREAK_RE.search(text, start)
    end = m.start() if m else len(text)
    while end > start and text[end - 1].isspace():
        end -= 1
    body = text[start:end]
    if not body.strip() or _PROSE_RE.search(_strip_latex(body)):
        return None
    return end


_CLOSE_DISPLAY_RE = re.compile(r"(?<!\\)\\\]")


def _orphan_display(text: str, out: _Builder) -> int:
    """A text that starts inside a display whose ``\\[`` was cut off (``x = 5 \\] so ...``): the math before
    the first ``\\]`` is a display formula, when it reads as math, not prose. Where scanning goes on."""
    m = _CLOSE_DISPLAY_RE.search(text)
    if m is None:
        return 0
    head = text[: m.start()]
    if not head.strip() or "\\[" in head or "$" in head or _PARBREAK_RE.search(head):
        return 0
    if _PROSE_RE.search(_strip_latex(head)):
        return 0
    out.math(text, (0, m.end()), (0, m.start()), "cut", True)
    return m.end()


def _strip_latex(body: str) -> str:
    """Body without commands and without ``{...}`` groups (for the prose checks)."""
    s = re.sub(r"\\[A-Za-z]+", " ", body)
    s = re.sub(r"\\.", " ", s)
    # One pass with a stack of open braces: a closed group, nested ones and all, becomes one space (removing
    # innermost groups until none is left did the same in time quadratic in the nesting depth); an unmatched
    # brace stays.
    out: list[str] = []
    opened: list[int] = []
    for c in s:
        if c == "{":
            opened.append(len(out))
            out.append(c)
        elif c == "}" and opened:
            del out[opened.pop() :]
            out.append(" ")
        else:
            out.append(c)
    return "".join(out)


_WORD = r"(?<![A-Za-z])[A-Za-z]{2,}(?![A-Za-z])"
_LOWER_WORD = r"(?<![A-Za-z])[a-z]{2,}(?![A-Za-z])"
_PROSE_RE = re.compile(
    _LOWER_WORD
    + r"[ \t\n]+"
    + _WORD
    + "|"
    + _WORD
    + r"[ \t\n]+"
    + _LOWER_WORD
    + r"|[.?!][ \t\n]+[A-Z][a-z]"
    + r"|(?<![A-Za-z])[A-Z][a-z]{2,}(?![A-Za-z])"
)
_SHORT_WORDS = "an|as|at|be|by|do|he|if|in|is|it|me|my|no|of|on|or|so|to|up|us|we"
_WORD_AFTER_SPACE_RE = re.compile(r"(?:^|\s)(?:[A-Za-z][a-z]{2,}|" + _SHORT_WORDS + r")(?![A-Za-z])")
_MONEY_START_RE = re.compile(r"[ \t]?\.?\d")
_AMOUNT_AFTER_RE = re.compile(r"\.?\d|\s*<<[^<>\n]*=[^<>\n]*>>")
_ENDS_EQUALS_RE = re.compile(r"=\s*$")


def _is_money_pair(text: str, i: int, j: int) -> bool:
    """Money rule for a candidate inline formula ``text[i:j+1]`` (see module doc)."""
    k = i + 1
    if _CALC_RE.match(text, k):
        return True
    body = text[i + 1 : j]
    if i > 0 and text[i - 1].isdigit() and body[:1].isspace():
        return True  # a sign after its amount ("5000$ and 175$"), not a formula's opening dollar
    plain = _strip_latex(body)
    if _PROSE_RE.search(plain):
        return True
    money_open = bool(_MONEY_START_RE.match(text, k))
    ends_space = body != body.rstrip()
    if money_open and (
        _WORD_AFTER_SPACE_RE.search(plain) or _ENDS_EQUALS_RE.search(body) or (ends_space and "\n" in body)
    ):
        return True
    closer_money = bool(_AMOUNT_AFTER_RE.match(text, j + 1))
    if closer_money and (money_open or ends_space):
        return True
    return False


class _Builder:
    """Collects output units in source order.

    A unit is ("c", char, s, e) for a character of text, ("f", formula) for a
    formula, ("p", char, s, e) for sentence punctuation moved out of the end of
    a formula, or ("x", block) for an excluded block.
    """

    def __init__(self) -> None:
        self.units: list[tuple] = []

    def char(self, ch: str, s: int, e: int) -> None:
        self.units.append(("c", ch, s, e))

    def copy(self, text: str, s: int, e: int) -> None:
        for p in range(s, e):
            self.units.append(("c", text[p], p, p + 1))

    def formula(self, f: Formula) -> None:
        self.units.append(("f", f))

    def math(self, text: str, span: tuple[int, int], body: tuple[int, int], delim: str, display: bool) -> None:
        """Add a delimited formula; sentence punctuation that ends its body
        (``$b.$``, ``$x,$``) is moved out of it into the text."""
        bs, be = body
        k = be
        while k > bs and text[k - 1].isspace():
            k -= 1
        moved = None
        if k - 1 > bs and text[k - 1] in _TRAILING_PUNCT and not _DELIM_CMD_RE.search(text, bs, k - 1):
            slashes = 0
            while k - 2 - slashes >= bs and text[k - 2 - slashes] == "\\":
                slashes += 1
            if slashes % 2 == 0 and text[bs : k - 1].strip():
                moved = k - 1
                be = k - 1
        self.units.append(("f", Formula(text[bs:be], span, (bs, be), delim, display)))
        if moved is not None:
            self.units.append(("p", text[moved], moved, moved + 1))

    def exclude(self, b: ExcludedBlock) -> None:
        self.units.append(("x", b))


def _scan(text: str) -> list[tuple]:
    out = _Builder()
    n = len(text)
    # GSM8K-style text (it has calculator annotations) uses a bare $ for money only
    dollar_math = _CALC_RE.search(text) is None
    i = _orphan_display(text, out)
    depth = 0  # plain braces open in text mode
    transparent: list[int] = []  # depths at which a \textbf{ and the like opened; its braces are dropped
    while i < n:
        c = text[i]
        if c == "[" and text.startswith("[asy]", i):
            end = text.find("[/asy]", i + 5)
            end = n if end < 0 else end + 6
            out.exclude(ExcludedBlock("asy", (i, end)))
            i = end
            continue
        if c == "<" and text.startswith("<<", i):
            m = _CALC_RE.match(text, i)
            if m:
                out.exclude(ExcludedBlock("calc", (i, m.end())))
                i = m.end()
                continue
        if c == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt in _ESCAPED_TEXT:
                out.char(_ESCAPED_TEXT[nxt], i, i + 2)
                i += 2
                continue
            if nxt and nxt in "([":
                closer = ")" if nxt == "(" else "]"
                j = _scan_escaped_close(text, i + 2, closer)
                if j is not None:
                    out.math(text, (i, j + 2), (i + 2, j), "\\" + nxt, nxt == "[")
                    i = j + 2
                    continue
                end = _open_display_end(text, i + 2) if nxt == "[" else None
                if end is not None:
                    out.math(text, (i, end), (i + 2, end), "cut", True)
                    i = end
                    continue
                out.copy(text, i, i + 2)
                i += 2
                continue
            if nxt == "\\":  # line break in text mode
                out.char(" ", i, i + 2)
                i += 2
                continue
            m = _BEGIN_RE.match(text, i)
            if m:
                name = m.group(1)
                if name in MATH_ENVIRONMENTS or name in INNER_MATH_ENVIRONMENTS or name in EXCLUDED_ENVIRONMENTS:
                    endm = _find_env_end(text, m.end(), name)
                    if name in EXCLUDED_ENVIRONMENTS:
                        end = n if endm is None else endm[1]
                        out.exclude(ExcludedBlock(name.rstrip("*x"), (i, end)))
                        i = end
                        continue
                    if endm is not None:
                        out.math(text, (i, endm[1]), (m.end(), endm[0]), "env", not name.startswith("math"))
                        i = endm[1]
                        continue
            m = _CMD_RE.match(text, i)
            if m:
                name = m.group(1)
                if name in _SPACING_CMDS:
                    out.char(" ", i, m.end())
                    i = m.end()
                    continue
                if name in _TRANSPARENT_CMDS and text.startswith("{", m.end()):
                    transparent.append(depth)
                    i = m.end() + 1
                    continue
            out.copy(text, i, min(n, i + 2))
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if transparent and transparent[-1] == depth:
                transparent.pop()
                i += 1
                continue
            depth = max(0, depth - 1)
        if c == "$" and not dollar_math:
            out.copy(text, i, i + 1)
            i += 1
            continue
        if c == "$":
            if text.startswith("$$", i):
                j = _scan_dollar_close(text, i + 2, True, True)
                if j is None:
                    j = _scan_dollar_close(text, i + 2, True, False)
                if j is not None and j > i + 2:
                    out.math(text, (i, j + 2), (i + 2, j), "$$", True)
                    i = j + 2
                    continue
                # no closing $$: the first $ is literal, the second may open math
                out.copy(text, i, i + 1)
                i += 1
                continue
            j = _scan_dollar_close(text, i + 1, False, True)
            if j is None:
                j = _scan_dollar_close(text, i + 1, False, False)
            if j is not None and j > i + 1 and not _is_money_pair(text, i, j):
                out.math(text, (i, j + 1), (i + 1, j), "$", False)
                i = j + 1
                continue
            out.copy(text, i, i + 1)
            i += 1
            continue
        out.char(c, i, i + 1)
        i += 1
    return out.units


# --------------------------------------------------------------------------- bare arithmetic

# parsers.numbers.DIGITS_PATTERN, except that a thousands group is not taken from a longer run of digits
# ("1,2345" is 1 and 2345, not 1,234 and 5): a bare expression does not begin or end inside a written number.
_NUM = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+"
_ATOM = r"\$?(?:" + _NUM + r")(?:%|(?:st|nd|rd|th)(?![A-Za-z]))?"
_OP = r"[-+*/^×·÷−]|x"
_SIMPLE = r"(?:" + _ATOM + r")(?:[ \t]*(?:" + _OP + r"|=)[ \t]*(?:" + _ATOM + r"))*"
_OPERAND = r"(?:" + _ATOM + r"|\([ \t]*" + _SIMPLE + r"[ \t]*\))"
_BARE_RE = re.compile(
    r"(?<![\w.$\\:])(?:" + _OPERAND + r")(?:[ \t]*(?:" + _OP + r"|=)[ \t]*(?:" + _OPERAND + r"))+(?![\w:]|[.,]\d)"
)
_BARE_TOKEN_RE = re.compile(_NUM + r"|[ \t]+|.", re.S)
_ARITH_OPS = set("+-*/^×·÷−x")


def _bare_latex(expr: str) -> str | None:
    """Normalised LaTeX of a bare expression, or None when it is not a formula."""
    expr = re.sub(r"(?<=\d)(?:st|nd|rd|th)", "", expr)  # 4th -> 4
    toks = _BARE_TOKEN_RE.findall(expr)
    ops = [t for t in toks if t in _ARITH_OPS]
    if not ops:
        return None
    if all(o in "-−" for o in ops) and "=" not in toks:
        return None  # a range such as 5-10
    if all(o == "/" for o in ops) and "=" not in toks and len(ops) > 1:
        return None  # a date such as 12/25/2020
    repl = {
        "x": r"\times",
        "*": r"\times",
        "×": r"\times",
        "·": r"\times",
        "÷": r"\div",
        "−": "-",
        "$": r"\$",
        "%": r"\%",
    }
    parts = []
    for t in toks:
        r = repl.get(t, t)
        if r.startswith("\\") and r[1:].isalpha():  # \times, \div: keep them apart
            r = " " + r + " "
        parts.append(r)
    return re.sub(r"[ \t]+", " ", "".join(parts)).strip()


def _apply_bare(units: list[tuple]) -> list[tuple]:
    """Replace bare arithmetic in each run of text characters by "bare" formulas.

    A run is a maximal sequence of character units; calculator annotations do
    not break a run (``12/60 = $<<12/60=0.2>>0.2`` is one expression) and stay
    in the unit list (the assembler collects excluded blocks separately).
    """
    out: list[tuple] = []
    run: list[tuple] = []

    def flush() -> None:
        s = "".join(u[1] for u in run)
        pos = 0
        for m in _BARE_RE.finditer(s):
            latex = _bare_latex(m.group(0))
            if latex is None:
                continue
            a, b = m.start(), m.end()
            out.extend(run[pos:a])
            src = (run[a][2], run[b - 1][3])
            out.append(("f", Formula(latex, src, src, "bare", False)))
            pos = b
        out.extend(run[pos:])
        run.clear()

    for u in units:
        if u[0] == "c":
            run.append(u)
        elif u[0] == "x" and u[1].kind == "calc":
            out.append(u)
        else:
            flush()
            out.append(u)
    flush()
    return out


# --------------------------------------------------------------------------- masked text

_OPENING = frozenset("([{\"'“‘")  # a placeholder may follow a run of these directly
_CLOSING = frozenset(".,;:!?)]}\"'”’")  # ... and be followed directly by a run of these
_GLUE_AFTER_RE = re.compile(r"(?:-[A-Za-z]+|'s?|’s?)?[.,;:!?)\]}\"'”’]*")


def _run_before(chars: list[str]) -> str:
    """The non-space characters at the end of the masked text so far."""
    k = len(chars)
    while k and not chars[k - 1].isspace():
        k -= 1
    return "".join(chars[k:])


def _run_after(units: list[tuple], idx: int) -> str:
    """The non-space text that follows unit ``idx`` (calculator annotations,
    removed without a trace, do not end it)."""
    out = []
    for u in units[idx + 1 :]:
        if u[0] in ("c", "p"):
            if u[1].isspace():
                break
            out.append(u[1])
        elif u[0] == "x" and u[1].kind == "calc":
            continue
        else:
            break
    return "".join(out)


def _assemble(text: str, units: list[tuple]) -> Segmentation:
    chars: list[str] = []
    offs: list[tuple[int, int]] = []
    formulas: list[Formula] = []
    ph_spans: list[tuple[int, int]] = []
    excluded: list[ExcludedBlock] = []
    gap_at: int | None = None  # source end of an asy/tabular block just removed
    for idx, u in enumerate(units):
        kind = u[0]
        if kind == "x":
            excluded.append(u[1])
            if u[1].kind != "calc":
                gap_at = u[1].span[1]
            continue
        if kind in ("c", "p"):
            ch = u[1]
            if gap_at is not None and chars and not chars[-1].isspace() and not ch.isspace():
                chars.append(" ")
                offs.append((gap_at, gap_at))
            gap_at = None
            chars.append(ch)
            offs.append((u[2], u[3]))
            continue
        # a formula: its placeholder must stay one token, whatever it is glued to
        f: Formula = u[1]
        fs, fe = f.span
        before = _run_before(chars)
        if before and not all(c in _OPENING for c in before):
            chars.append(" ")
            offs.append((fs, fs))
        gap_at = None
        start = len(chars)
        chars.extend(PLACEHOLDER)
        offs.extend([(fs, fe)] * len(PLACEHOLDER))
        formulas.append(f)
        ph_spans.append((start, len(chars)))
        after = _run_after(units, idx)
        if after and not _GLUE_AFTER_RE.fullmatch(after):
            chars.append(" ")
            offs.append((fe, fe))
    excluded.sort(key=lambda b: b.span)
    return Segmentation(
        source=text,
        masked_text="".join(chars),
        formulas=tuple(formulas),
        placeholder_spans=tuple(ph_spans),
        excluded=tuple(excluded),
        _offsets=tuple(offs),
    )


def segment(text: str, *, bare_arithmetic: bool = False) -> Segmentation:
    """Split ``text`` into formulas and masked text (see the module docstring).

    Never raises on a ``str``; anything that is not recognised stays text.
    """
    if not isinstance(text, str):
        raise TypeError(f"segment() needs a str, not {type(text).__name__}")
    units = _scan(text)
    if bare_arithmetic:
        units = _apply_bare(units)
    return _assemble(text, units)


def without_excluded_blocks(text: str) -> str:
    """``text`` with its excluded blocks (``[asy]`` code, tabulars, GSM8K ``<<..>>``
    annotations) cut out, formulas kept as written: what a text encoder should read.

    Asymptote code is long and says nothing to a language model; left in, it
    fills the token budget of the problems that carry it.
    """
    pieces, position = [], 0
    for block in segment(text).excluded:
        pieces.append(text[position : block.span[0]])
        position = block.span[1]
    pieces.append(text[position:])
    return "".join(pieces)
