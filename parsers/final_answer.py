"""Where a worked solution states its final answer.

``find_final_answer(text)`` is the span of the answer as the solution writes it, or ``None``. The
marks are tried in this order, each only where the one before gives nothing:

1. GSM8K's ``#### N``: the rest of the last such line that is not a Markdown heading (words with more
   text below them, ``#### Step 2``);
2. the last ``\\boxed{...}`` or ``\\fbox{...}``, braces balanced (``\\{`` is escaped), so
   ``\\boxed{\\frac{1}{2}}`` is whole; ``\\boxed 5`` boxes the next token; an unclosed box is no answer;
3. the last "the answer is X", "final answer: X", "Answer: X" (any case; a mark repeated, "Final Answer:
   The final answer is 107", counts once): X up to the end of its first sentence on that line (a ``.``,
   ``!``, ``;`` or ``,`` followed by a space, outside ``$...$`` and ``\\(...\\)``, and for ``,`` outside
   brackets); an empty X is no answer.

So a box wins over the words around it ("the answer is $\\boxed{5}$" is ``5``). The span leaves out
what is around the answer rather than part of it: spaces, a full stop at its end, ``$...$`` or
``\\(...\\)`` around it as a whole (``$\\frac{3}{4}$``, not ``$30``) and Markdown bold (``**42**``).

``parsers.solution_reader.read_answer`` reads the value at this span for the solution graph;
``tasks.answers.extract_answer`` returns its text for grading, guessing the last number where there is
no span.
"""

from __future__ import annotations

import re

__all__ = ["find_final_answer"]

_HASHES_RE = re.compile(r"####[ \t]*([^\n]*)")
_BOX_RE = re.compile(r"\\(?:boxed|fbox)")
_BOXED_TOKEN_RE = re.compile(r"\\?[^\s$]+")
# The first mark of a line takes the rest of it, so a later "answer is" on that line is part of X.
_ANSWER_IS_RE = re.compile(
    r"(?:(?:the\s+)?(?:final\s+)?answer[ \t]*(?:is\b|:)[ \t]*:?[ \t]*)+([^\n]*)",
    re.IGNORECASE,
)
_SENTENCE_END_RE = re.compile(r"[.!;,]\s")


def find_final_answer(text: str) -> tuple[int, int] | None:
    """The ``(start, end)`` of the final answer in ``text`` (module docstring); ``None`` when it states none."""
    for find in (_after_hashes, _in_last_box, _after_answer_is):
        span = find(text)
        if span is not None:
            span = _trimmed(text, *span)
            if span[0] < span[1]:
                return span
    return None


def _after_hashes(text: str) -> tuple[int, int] | None:
    lines = [m for m in _HASHES_RE.finditer(text) if not _is_heading(text, m)]
    return lines[-1].span(1) if lines else None


def _is_heading(text: str, line: re.Match) -> bool:
    """Whether a ``####`` line is a Markdown heading (``#### Step 2`` and more text below it), not GSM8K's
    answer (``#### 72``, ``#### None`` as the last line)."""
    return line.group(1)[:1].isalpha() and bool(text[line.end() :].strip())


def _in_last_box(text: str) -> tuple[int, int] | None:
    boxes = list(_BOX_RE.finditer(text))
    if not boxes:
        return None
    i = boxes[-1].end()
    while i < len(text) and text[i] == " ":
        i += 1
    if i < len(text) and text[i] != "{":
        token = _BOXED_TOKEN_RE.match(text, i)
        return None if token is None else token.span()
    depth = 0
    for j in range(i, len(text)):
        if text[j] in "{}" and text[j - 1] != "\\":
            depth += 1 if text[j] == "{" else -1
            if depth == 0:
                return i + 1, j
    return None


def _after_answer_is(text: str) -> tuple[int, int] | None:
    stated = list(_ANSWER_IS_RE.finditer(text))
    if not stated:
        return None
    start, end = stated[-1].span(1)
    return start, start + _first_sentence(text[start:end])


def _first_sentence(line: str) -> int:
    """The length of the first sentence of ``line``: up to a ``.``, ``!``, ``;`` or ``,`` followed by a space,
    outside the math of ``$...$`` and ``\\(...\\)``, where ``.`` is a decimal point, and outside brackets,
    where ``,`` separates items (``(4, 2, 4)``)."""
    inside_math = False
    depth = 0
    for i, char in enumerate(line):
        if char == "$" and (i == 0 or line[i - 1] != "\\"):
            inside_math = not inside_math
        elif line.startswith("\\(", i):
            inside_math = True
        elif line.startswith("\\)", i):
            inside_math = False
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif not inside_math and _SENTENCE_END_RE.match(line, i) and (char != "," or depth == 0):
            return i
    return len(line)


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """``start, end`` without the spaces, final full stop, ``$...$`` or ``\\(...\\)`` and ``**`` around the answer."""
    while True:
        before = start, end
        while start < end and (text[start].isspace() or text[start] == "*"):
            start += 1
        while start < end and (text[end - 1].isspace() or text[end - 1] in "*."):
            end -= 1
        if end - start >= 2 and text[start] == "$" and text[end - 1] == "$" and text[end - 2] != "\\":
            start, end = start + 1, end - 1
        elif text.startswith("\\(", start, end) and text.endswith("\\)", start, end) and end - start >= 4:
            start, end = start + 2, end - 2
        if (start, end) == before:
            return start, end
