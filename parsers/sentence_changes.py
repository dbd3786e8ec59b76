"""What changed between two versions of a sentence, in words a reader can check.

``sentence_changes("Tom gives away 3 apples.", "Tom receives 3 apples.")`` is
``("words: 'gives away' -> 'receives'",)``; a change of case only is ``("case",)``, of punctuation only
``("punctuation",)``, of the numbers only ``("numbers",)`` (the quantities of an alignment say which), of
the spaces between words only ``("spacing",)``. Text is split into numbers, words and punctuation marks;
whitespace alone (more or fewer spaces, line breaks) is no change.
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher

_TOKEN_RE = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?|\w+|[^\w\s]")
MAX_EDITS_SHOWN = 5  # word edits named per sentence; the rest are counted
MAX_DIFF_TOKENS = 500  # longer sentences get a count of changed words, not a word-by-word diff (quadratic)


def sentence_changes(a: str, b: str) -> tuple[str, ...]:
    """How sentence ``b`` differs from sentence ``a``: any of ``"case"``, ``"punctuation"``, ``"numbers"`` and
    ``"words: ..."`` (the word runs replaced, added or dropped), or ``"spacing"`` alone; ``()`` when they differ
    at most in whitespace."""
    tokens_a, tokens_b = _TOKEN_RE.findall(a), _TOKEN_RE.findall(b)
    if tokens_a == tokens_b:
        return () if a.split() == b.split() else ("spacing",)  # "12apples" -> "12 apples"
    words_a, words_b = [t for t in tokens_a if _is_word(t)], [t for t in tokens_b if _is_word(t)]
    numbers_differ = [t for t in words_a if _is_number(t)] != [t for t in words_b if _is_number(t)]
    if _masked(words_a) != _masked(words_b):
        return (*(("numbers",) if numbers_differ else ()), "words: " + word_edits(words_a, words_b))
    changes = []
    if [t for t in words_a if not _is_number(t)] != [t for t in words_b if not _is_number(t)]:
        changes.append("case")
    if _masked(tokens_a) != _masked(tokens_b):
        changes.append("punctuation")
    if numbers_differ:
        changes.append("numbers")
    return tuple(changes)


def word_edits(words_a: list[str], words_b: list[str]) -> str:
    """The runs of words replaced (``'gives away' -> 'receives'``), added (``added 'of them'``) and dropped
    (``dropped 'now'``) between two word lists, compared lower-cased with numbers alike."""
    if len(words_a) + len(words_b) > MAX_DIFF_TOKENS:
        gone = sum((Counter(_masked(words_a)) - Counter(_masked(words_b))).values())
        come = sum((Counter(_masked(words_b)) - Counter(_masked(words_a))).values())
        return f"{gone} words dropped and {come} added (a long sentence)"
    edits = []
    matcher = SequenceMatcher(None, _masked(words_a), _masked(words_b), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old, new = " ".join(words_a[i1:i2]), " ".join(words_b[j1:j2])
        if tag == "replace":
            edits.append(f"{old!r} -> {new!r}")
        elif tag == "insert":
            edits.append(f"added {new!r}")
        elif tag == "delete":
            edits.append(f"dropped {old!r}")
    shown = "; ".join(edits[:MAX_EDITS_SHOWN])
    return shown + (f"; and {len(edits) - MAX_EDITS_SHOWN} more" if len(edits) > MAX_EDITS_SHOWN else "")


def _is_word(token: str) -> bool:
    return token[0].isalnum() or token[0] == "_"


def _is_number(token: str) -> bool:
    return token[0].isdigit()


def _masked(tokens: list[str]) -> list[str]:
    """Tokens lower-cased, every number as ``#``: what stays when only case or numbers change."""
    return ["#" if _is_number(t) else t.lower() for t in tokens]


__all__ = ["sentence_changes", "word_edits"]
