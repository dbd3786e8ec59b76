"""Words a worked solution writes about its method, not its problem: ``METHOD_STEMS``.

Solutions say "total", "multiply", "left", "need", "altogether" whatever the problem; a word a solution writes
that its problem never writes is a sign of another problem only when it is not one of these. ``METHOD_STEMS``
are the stems (``content_stems``: lower-cased content words, lightly stemmed) that the solutions of GSM8K train
(7,473 questions) write without their question writing them, in at least ``MIN_SOLUTIONS`` (20) solutions each:
``method_stems`` of those pairs, as ``python -m mathgraph.parsers.solution_vocabulary
shared/data/gsm8k/train.jsonl`` prints them.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterable
from functools import cache

__all__ = ["METHOD_STEMS", "MIN_SOLUTIONS", "method_stems", "content_stems"]

_WORD_RE = re.compile(r"[a-z]+")
_CALCULATOR_RE = re.compile(r"<<[^<>]*>>")


@cache
def _stop_words() -> frozenset[str]:
    # scikit-learn's English stop words (the train extra): imported when first needed, so that importing the
    # features' modules costs nothing in the base install, where these candidate features are not computed
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


MIN_SOLUTIONS = 20
METHOD_STEMS = frozenset(
    (
        "abl",
        "add",
        "additional",
        "age",
        "altogether",
        "amount",
        "answer",
        "area",
        "ate",
        "awai",
        "bought",
        "bring",
        "buy",
        "calculat",
        "com",
        "combin",
        "contain",
        "convert",
        "cost",
        "count",
        "cover",
        "currentli",
        "day",
        "determin",
        "differenc",
        "discount",
        "distanc",
        "divid",
        "dollar",
        "doubl",
        "earn",
        "earning",
        "eat",
        "eaten",
        "end",
        "entir",
        "equal",
        "equation",
        "express",
        "extra",
        "far",
        "figur",
        "final",
        "finalli",
        "find",
        "foot",
        "fourth",
        "fraction",
        "gav",
        "get",
        "giv",
        "given",
        "going",
        "got",
        "group",
        "half",
        "height",
        "hour",
        "includ",
        "increas",
        "initial",
        "initialli",
        "item",
        "know",
        "leav",
        "left",
        "length",
        "let",
        "lik",
        "long",
        "lost",
        "mak",
        "mean",
        "monei",
        "month",
        "mph",
        "multipli",
        "need",
        "new",
        "number",
        "original",
        "originalli",
        "paid",
        "pay",
        "peopl",
        "percentag",
        "perform",
        "person",
        "piec",
        "plu",
        "pric",
        "purchas",
        "rat",
        "reach",
        "receiv",
        "reduc",
        "remain",
        "remov",
        "represent",
        "requir",
        "rest",
        "sal",
        "sav",
        "second",
        "sell",
        "set",
        "show",
        "sid",
        "sold",
        "spend",
        "spent",
        "start",
        "substitut",
        "subtract",
        "sum",
        "tak",
        "taken",
        "term",
        "tim",
        "took",
        "total",
        "travel",
        "trip",
        "twic",
        "typ",
        "use",
        "used",
        "using",
        "valu",
        "want",
        "week",
        "weekli",
        "weight",
        "work",
        "worth",
    )
)


def _stem(word: str) -> str:
    """A light stem, enough to match "cookies" with "cookie", "boxes" with "box", "walked" with "walking"."""
    for suffix in ("ches", "shes", "sses", "xes", "zes"):
        if word.endswith(suffix):
            return word[:-2]
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] in "ey":
        word = word[:-1] + ("i" if word[-1] == "y" else "")
    return word[:-1] if len(word) > 3 and word.endswith("ie") else word


def content_stems(text: str) -> set[str]:
    """The stems of the content words of ``text``: lower-cased words of three letters or more that are not
    English stop words, without calculator annotations (``<<3*4=12>>``)."""
    words = _WORD_RE.findall(_CALCULATOR_RE.sub(" ", text).lower())
    return {_stem(w) for w in words if len(w) >= 3 and w not in _stop_words()}


def method_stems(pairs: Iterable[tuple[str, str]], min_solutions: int = MIN_SOLUTIONS) -> frozenset[str]:
    """The stems that at least ``min_solutions`` of the ``(question, solution)`` pairs' solutions write (before
    their ``####`` answer) while their question does not."""
    counts: Counter = Counter()
    for question, solution in pairs:
        counts.update(content_stems(solution.split("####")[0]) - content_stems(question))
    return frozenset(stem for stem, count in counts.items() if count >= min_solutions)


if __name__ == "__main__":
    rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
    print(sorted(method_stems((r["question"], r["answer"]) for r in rows)))
