r"""Search's structure-aware channel: what a problem asks, with its numbers and names abstracted.

Two rewrites of one problem with other numbers, other person names or other variable letters share little
surface text, but they share a skeleton. ``skeleton_tokens`` writes a problem as a bag of tokens:

- **formula paths** (``p:``): each formula (``parsers.segment``) is parsed into its operator tree
  (``parsers.latex.parse_latex``), and every leaf's path up to ``PATH_LENGTH`` nodes towards the root is one
  token, numbers written ``NUM``, variable names ``VAR`` and functions named by a letter ``FUN`` (``f(x)`` and
  ``g(t)`` are one shape; ``\sin`` keeps its name): ``$\frac{x+1}{2}$`` gives ``p:VAR<+<\frac``,
  ``p:NUM<+<\frac``, ``p:NUM<\frac``; with each operator's small subtrees (``t:``, depth ``SUBTREE_DEPTH``);
- **the quantity skeleton** (``w:``, ``q:``): the words of the text outside formulas, lower-cased, digits
  written ``NUM``, person names ``NAME``, as words and word pairs, and the words that quantities count (the one
  or two words after each number: ``q:apples``); the words that ask ("Compute", "Find", "What is", "Given") are
  left out and superlatives read as one ("smallest", "minimum": ``least``), as a rewording changes them freely;
- **the question** (``Q:``): the words of the last sentence that asks (``?``, or the last sentence).

A name is a capitalised word whose lower-case form the bank uses less often than the capitalised one, or never
(``NameCounts``: counted over the bank, so that "Janet" and "Mark" are names while "Find" and "What" are not).

``SkeletonIndex`` fits a TF-IDF model (sublinear term frequency, L2 rows) on the bank's token bags and scores a
query against every row by cosine; ``fuse_channels`` fuses it with the sentence encoder's cosine and the
TF-IDF cosine: a weighted sum of the cosines themselves (``SKELETON_FUSION`` ``"cosine"``) or of scores
standardised over the query's candidates (``"standardised"``, as ``models.late_fusion.fuse_scores`` fuses two).
``SKELETON_WEIGHTS`` are the TF-IDF weight and the skeleton's largest weight of ``mathgraph search`` (the rest
is the sentence encoder's). The skeleton's weight is per query, by how sure the channel is
(``confident_weight``): the full weight when the query's best skeleton cosine is 1 (a row with the very same
skeleton), falling linearly to 0 at ``SKELETON_CONFIDENCE[0]``, so a query whose skeleton matches no row well
(a reworded problem) is ranked mostly by the sentence encoder; shipped: ``0.9 * s`` for a best skeleton cosine
``s``. All were chosen on the dev queries of ``benchmarks/bank_search.py`` (docs/search.md). Tokens of MATH's
7,500 problems took 24 to 27 s on a shared 2-core CPU.

The skeleton sets numbers aside, so a problem and its **sibling** in the bank (the same problem with other
numbers: ``cos 210°`` and ``cos 270°``) score the same against a query, and small differences of wording decide
between them. ``problem_numbers`` reads a problem's literal numbers (every number leaf of its formulas and every
number in digits in its words, as a sorted multiset of exact values, a negated number with its sign); a row whose
numbers are exactly the query's (``SkeletonIndex.number_matches``) gets ``NUMBERS_BONUS`` times the match's
weight added to its fused score (``SkeletonIndex.number_weight``: the numbers' summed inverse document
frequencies over the bank, over ``NUMBERS_INFORMATION``, at most 1, so that a match of a few common small numbers
counts less than one of rare ones): a reworded query that keeps its numbers then finds its original before a
sibling that scores within the bonus of it, and a query with new numbers (which no row has, or only a row that
is the query's very problem) is left as it was. The order of the numbers is not required: of the 76 dev rewrites
whose numbers are their original's, 7 say them in another order. A rewording often writes a number in words that
the original writes in digits ("a seven-sided polygon", "a polygon with 7 sides"): a problem's numbers are matched
by two multisets (``number_keys``), its digits and, where it says some numbers in words (``spoken_numbers``: "two"
to "ninety-nine"; not "one" or "zero", which are mostly no number), its digits with those.

Where the sentence encoder is sure, the fused search keeps its answer (``keep_encoder_lead``): a query whose
encoder cosine to its best row leads its second best by at least ``ENCODER_LEAD`` gets that row first, whatever
the skeleton and the numbers say, so the fusion does not lose what the encoder alone finds with a clear lead.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from mathgraph.parsers.numbers import TENS_WORDS, UNIT_WORDS

# (TF-IDF weight, largest skeleton weight) of the fused default search; the sentence encoder's is 1 minus the
# TF-IDF weight and the query's skeleton weight. SKELETON_CONFIDENCE: (low, high) best skeleton cosines of a
# query between which its skeleton weight rises linearly from 0 to the largest (confident_weight). Chosen on the
# dev queries of both banks of benchmarks/bank_search.py (every kind's R@1 at least the sentence encoder's alone,
# then the largest expected worst per-kind margin over it under a bootstrap of the queries, then the best mean
# R@1 over the kinds, then the best mean MRR, then the smallest weights).
SKELETON_WEIGHTS = (0.0, 0.9)
SKELETON_CONFIDENCE = (0.0, 1.0)
# How the channels' scores are fused (fuse_channels): "standardised" (each channel's scores standardised over the
# candidates, then summed with the weights) or "cosine" (the cosines summed with the weights as they are: a row's
# score does not depend on which other rows are candidates, the same for an exact and an approximate index).
# Chosen on dev with the weights above (each choice measured over every row and over HYBRID_POOL candidates).
FUSIONS = ("standardised", "cosine")
SKELETON_FUSION = "cosine"
# Added, times SkeletonIndex.number_weight, to the fused score of a row whose numbers (problem_numbers, signed) are
# exactly the query's (a query with at least one number): chosen with NUMBERS_INFORMATION and the weights above on
# the dev queries of benchmarks/bank_search.py (every kind's R@1 at least the sentence encoder's, then the rule of
# the weights, then how far the answers lead, then the smallest bonus, then the largest NUMBERS_INFORMATION).
NUMBERS_BONUS = 0.1
# The information (summed inverse document frequencies of the matched numbers, SkeletonIndex.number_weight) at
# which a match of the query's numbers gets the whole NUMBERS_BONUS; below it, a share of it.
NUMBERS_INFORMATION = 5.0
# A query whose sentence-encoder cosine to its best row leads its second best by at least ENCODER_LEAD keeps that
# row first (keep_encoder_lead), whatever the skeleton and the numbers say: the smallest lead of a 0.05 grid at or
# above which the encoder's first row was every dev query's answer in both banks of benchmarks/bank_search.py
# (--choose-lead; the largest lead of a wrong first row there was 0.184), so the fused search falls back on the
# sentence encoder where it is sure.
ENCODER_LEAD = 0.2
FEATURES_VERSION = 4  # raise when the tokens or numbers change: caches of older ones are then recomputed
PATH_LENGTH = 4  # nodes of a leaf-to-root formula path
SUBTREE_DEPTH = 2  # depth of the operator subtrees kept as tokens
MAX_FORMULA_NODES = 400  # larger formulas (tables, long arrays) give their first paths only

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d[\d,]*(?:\.\d+)?|\?|[.!;]")
_NUMBER = re.compile(r"^\d")
_STOP = frozenset(
    "a an the of to in on at for and or is are was were be been it its this that these those with by as from "
    "has have had do does did will would can could if then than so".split()
)
# the words that ask or set up ("Compute", "Find", "What is", "Given", "Let"), read as stop words: a rewording
# changes them freely, they say nothing of the problem's structure (stems as ``stem`` writes them)
_ASKING = frozenset(
    "compute comput find determine determin evaluate evaluat calculate calculat what given giv suppose suppos let".split()
)
_IGNORED = _STOP | _ASKING
# superlatives said in other words, read as one
_SYNONYMS = {
    "smallest": "least",
    "minimum": "least",
    "largest": "greatest",
    "biggest": "greatest",
    "maximum": "greatest",
    "maximal": "greatest",
}


class NameCounts:
    """How often each word is written lower-case and capitalised inside a sentence in a bank, to tell person
    names (and other proper names) from ordinary words."""

    def __init__(self, texts: Iterable[str] = ()):
        self.lower: Counter = Counter()
        self.capital: Counter = Counter()
        for text in texts:
            self.add(text)

    def add(self, text: str) -> None:
        """Count the words of one text."""
        previous = "."
        for word in _WORD.findall(text):
            if word[0].isalpha():
                if word[0].isupper():
                    if previous not in (".", "!", "?", ";"):
                        self.capital[word.lower()] += 1
                else:
                    self.lower[word.lower()] += 1
            previous = word

    def is_name(self, word: str, sentence_start: bool = False) -> bool:
        """Whether a capitalised ``word`` is a name: the bank writes it capitalised inside sentences more often
        than lower-case; a word the bank never has is a name inside a sentence, not at its start ("Compute").
        Single letters (variables, points) and words in capitals are not names."""
        if len(word) < 2 or not word[0].isupper() or not word[1:].islower():
            return False
        key = word.lower()
        if self.lower[key] == 0 and self.capital[key] == 0:
            return not sentence_start
        return self.capital[key] > self.lower[key]


def formula_tokens(latex: str) -> list[str]:
    """Leaf-to-root paths (``p:``) and small subtrees (``t:``) of one formula's operator tree, numbers as
    ``NUM`` and variables as ``VAR``."""
    from mathgraph.parsers.latex import parse_latex

    return _tree_tokens(parse_latex(latex))


def _tree_tokens(tree) -> list[str]:
    """``formula_tokens`` of an operator tree already parsed."""
    nodes = tree.nodes[:MAX_FORMULA_NODES]
    if not nodes:
        return []
    labels = [_abstract(node.type, node.label) for node in tree.nodes]
    parent = [-1] * len(tree.nodes)
    children: list[list[int]] = [[] for _ in tree.nodes]
    for edge in tree.edges:
        parent[edge.dst] = edge.src
        children[edge.src].append(edge.dst)
    tokens = []
    for node in nodes:
        if children[node.id]:
            tokens.append("t:" + _subtree(node.id, labels, children, SUBTREE_DEPTH))
            continue
        path, current = [labels[node.id]], parent[node.id]
        while current >= 0 and len(path) < PATH_LENGTH:
            path.append(labels[current])
            current = parent[current]
        tokens += ["p:" + "<".join(path[: i + 1]) for i in range(1, len(path))] or ["p:" + path[0]]
    return tokens


def _abstract(kind: str, label: str) -> str:
    if kind == "N":
        return "NUM"
    if kind == "V":
        return "VAR"
    if kind == "F" and _FUNCTION_NAME.match(label):
        return "FUN"  # a function named by a letter (f, g', P), not a named one (\sin, \log)
    return _SIGNS.get(label, label)


_FUNCTION_NAME = re.compile(r"^[A-Za-z]'*$")


# a sum and a difference are one shape: other numbers often flip a sign ("x+5" for "x-3")
_SIGNS = {"-": "+", "neg": "+", r"\pm": "+", r"\mp": "+"}
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "es", "ed", "ly", "s")


def stem(word: str) -> str:
    """A crude stem of an English word (plurals, -ing, -ed, -ly, -ation), enough to match "seats" with
    "seating" and "numbers" with "number"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "es" and word[-3] not in "sxz":
                continue  # "values" -> "value" below, "boxes" -> "box" here
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _subtree(node: int, labels: list[str], children: list[list[int]], depth: int) -> str:
    if depth == 0 or not children[node]:
        return labels[node]
    return f"({labels[node]} " + " ".join(_subtree(c, labels, children, depth - 1) for c in children[node]) + ")"


def text_tokens(text: str, names: NameCounts) -> list[str]:
    """The words outside formulas (``w:`` words and word pairs, ``q:`` what numbers count, ``Q:`` the
    question's words), numbers as ``NUM`` and names as ``NAME``; ``text`` is the masked text of
    ``parsers.segment`` (formulas written ``MATH``)."""
    sentences: list[list[str]] = [[]]
    for word in _WORD.findall(text):
        if word in (".", "!", ";", "?"):
            if word == "?":
                sentences[-1].append("?")
            sentences.append([])
            continue
        if _NUMBER.match(word):
            sentences[-1].append("NUM")
        elif word == "MATH":
            sentences[-1].append("MATH")
        elif names.is_name(word.split("'")[0], sentence_start=not sentences[-1]):
            sentences[-1].append("NAME")
        else:
            lower = word.lower().split("'")[0]
            word = lower if lower in _STOP else stem(lower)
            sentences[-1].append(_SYNONYMS.get(word, word))
    sentences = [s for s in sentences if s]
    tokens = []
    for sentence in sentences:
        words = [w for w in sentence if w != "?"]
        kept = [w for w in words if w not in _IGNORED]
        tokens += [f"w:{w}" for w in kept if w != "MATH"]
        tokens += [f"w:{a}_{b}" for a, b in zip(kept, kept[1:])]
        for i, word in enumerate(words):
            if word == "NUM":
                following = [w for w in words[i + 1 : i + 3] if w not in ("NUM", "MATH")]
                tokens += [f"q:{w}" for w in following[:2] if w not in _IGNORED]
    asking = [s for s in sentences if "?" in s] or sentences[-1:]
    if asking:
        tokens += [f"Q:{w}" for w in asking[-1] if w not in _IGNORED and w not in ("?", "MATH")]
    return tokens


def skeleton_tokens(text: str, names: NameCounts) -> list[str]:
    """All tokens of one problem: its formulas' paths and subtrees, then its words (see the module's notes)."""
    return problem_skeleton(text, names)[0]


def problem_numbers(text: str) -> tuple[str, ...]:
    """The literal numbers of a problem, sorted (a multiset): every number leaf of its formulas' operator trees
    (``parsers.latex.parse_latex``) and every number in digits in its words (``parsers.numbers.DIGITS_PATTERN``),
    each written as its exact value (``str(Fraction)``: ``0.50`` and ``.5`` are ``1/2``, ``1,000`` is ``1000``),
    with its sign where it is negated (a formula's unary minus, ``(4,-2)``: ``-2``; a subtraction's ``x - 2``
    is an operator and leaves ``2``); number words ("five") are left out (a rewording writes them as it likes).
    ``"If $2x-3=-7$, find x for 10 cats."`` gives ``("-7", "10", "2", "3")``."""
    masked_text, trees = _parse(text)
    return _numbers(trees, masked_text)


def problem_skeleton(text: str, names: NameCounts) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    """``skeleton_tokens``, ``problem_numbers`` and ``spoken_numbers`` of one problem, its text segmented and its
    formulas parsed once."""
    masked_text, trees = _parse(text)
    tokens = [token for tree in trees for token in _tree_tokens(tree)]
    return tokens + text_tokens(masked_text, names), _numbers(trees, masked_text), _spoken(masked_text)


def spoken_numbers(text: str) -> tuple[str, ...]:
    """The numbers of a problem said in words outside its formulas, sorted: "two" to "nineteen" and the tens
    ("twenty", "forty-five": 45), also inside a compound ("seven-sided": 7). "one" and "zero" are left out:
    "one of them", "no one", "non-zero" say no number. ``"A seven-sided die and twenty-one cards"`` gives
    ``("21", "7")``."""
    return _spoken(_parse(text)[0])


def number_keys(numbers: Sequence[str], spoken: Sequence[str]) -> list[tuple[str, ...]]:
    """The multisets a problem's numbers are matched by (``SkeletonIndex.number_matches``): its numbers in
    digits, and, where it says some in words, those with the spoken ones, so that "a polygon with 7 sides" and
    "a seven-sided polygon" match; none for a problem without numbers."""
    keys = [tuple(sorted(numbers))] if numbers else []
    if spoken:
        keys.append(tuple(sorted([*numbers, *spoken])))
    return keys


def _parse(text: str) -> tuple[str, list]:
    """A problem's masked text (``parsers.segment``: formulas written ``MATH``) and its formulas' operator trees."""
    from mathgraph.parsers.latex import parse_latex
    from mathgraph.parsers.segment import segment

    segmentation = segment(text)
    return segmentation.masked_text, [parse_latex(formula.latex) for formula in segmentation.formulas]


def _numbers(trees, masked_text: str) -> tuple[str, ...]:
    """``problem_numbers`` from a problem's parsed formulas and its masked text."""
    from fractions import Fraction

    from mathgraph.parsers.numbers import DIGITS_PATTERN

    def exact(written: str) -> str:
        written = re.sub(r"[,\s]", "", written)  # thousands commas and spaces
        try:
            return str(Fraction(written))
        except (ValueError, ZeroDivisionError):
            return written

    numbers = []
    for tree in trees:
        parent: dict[int, int] = {}
        arity: Counter = Counter()
        for edge in tree.edges:
            parent[edge.dst] = edge.src
            arity[edge.src] += 1
        labels = {node.id: node.label for node in tree.nodes}
        for node in tree.nodes:
            if node.type == "N":
                above = parent.get(node.id)
                negated = above is not None and labels[above] == "-" and arity[above] == 1
                numbers.append(("-" if negated else "") + exact(node.label))
    numbers += [exact(match.group()) for match in re.finditer(DIGITS_PATTERN, masked_text)]
    return tuple(sorted(numbers))


# number words read alone ("one" and "zero" left out: spoken_numbers) and after a tens word ("twenty-one")
_UNITS = {word: value for word, value in UNIT_WORDS.items() if value >= 2}
_DIGIT_WORDS = {word: value for word, value in UNIT_WORDS.items() if 1 <= value <= 9}
_SPOKEN = re.compile(
    r"(?<![A-Za-z])(?:("
    + "|".join(TENS_WORDS)
    + r")(?:[- ]("
    + "|".join(_DIGIT_WORDS)
    + r"))?|("
    + "|".join(sorted(_UNITS, key=len, reverse=True))
    + r"))(?![A-Za-z])",
    re.IGNORECASE,
)


def _spoken(masked_text: str) -> tuple[str, ...]:
    """``spoken_numbers`` of a masked text (formulas written ``MATH``)."""
    numbers = []
    for match in _SPOKEN.finditer(masked_text):
        tens, unit, alone = (g.lower() if g else None for g in match.groups())
        numbers.append(str(_UNITS[alone] if alone else TENS_WORDS[tens] + (_DIGIT_WORDS[unit] if unit else 0)))
    return tuple(sorted(numbers))


class SkeletonIndex:
    """The skeleton TF-IDF vectors of a bank's texts: ``scores(queries)`` gives each query's cosine to every
    row, ``number_matches(queries)`` which rows have exactly the query's numbers. ``tokens`` / ``numbers`` /
    ``spoken``: the bank's token bags, ``problem_numbers`` and ``spoken_numbers`` when already computed (a cache),
    else computed here."""

    def __init__(
        self,
        texts: Sequence[str],
        tokens: Sequence[Sequence[str]] | None = None,
        numbers: Sequence[Sequence[str]] | None = None,
        spoken: Sequence[Sequence[str]] | None = None,
    ):
        from mathgraph.models.tfidf_features import ColumnMatrix, TfidfFeatures

        texts = list(texts)
        if not texts:
            raise ValueError("a skeleton index needs at least one text")
        self.names = NameCounts(texts)
        if tokens is None or numbers is None or spoken is None:
            read = [problem_skeleton(text, self.names) for text in texts]
            tokens = [bag for bag, _, _ in read] if tokens is None else tokens
            numbers = [row for _, row, _ in read] if numbers is None else numbers
            spoken = [row for _, _, row in read] if spoken is None else spoken
        if len(tokens) != len(texts):
            raise ValueError(f"{len(tokens)} token bags for {len(texts)} texts")
        self.bags = [list(bag) for bag in tokens]
        if len(numbers) != len(texts) or len(spoken) != len(texts):
            raise ValueError(f"{len(numbers)} number lists and {len(spoken)} spoken ones for {len(texts)} texts")
        self.numbers = [tuple(sorted(str(n) for n in row)) for row in numbers]
        self.spoken = [tuple(sorted(str(n) for n in row)) for row in spoken]
        self._rows_by_numbers: dict[tuple[str, ...], list[int]] = {}
        for row, (key, said) in enumerate(zip(self.numbers, self.spoken)):
            for each in number_keys(key, said):
                self._rows_by_numbers.setdefault(each, []).append(row)
        # each number's inverse document frequency over the bank, its sign set aside (number_weight)
        rows_with = Counter(value for key in self.numbers for value in {n.lstrip("-") for n in key})
        self.number_idf = {value: math.log((1 + len(texts)) / (1 + count)) for value, count in rows_with.items()}
        # scikit-learn's TfidfVectorizer(analyzer=bag, sublinear_tf=True), fitted in NumPy
        self.vectorizer = TfidfFeatures.fit(self.bags, {"sublinear_tf": True, "norm": "l2"}, analyze=_identity)
        self.matrix = ColumnMatrix(self.vectorizer.transform(self.bags), len(self.vectorizer))

    @classmethod
    def cached(cls, texts: Sequence[str], path: str | os.PathLike | None, key: str) -> SkeletonIndex:
        """The skeleton index of ``texts`` with its token bags kept in ``path`` (gzipped JSON, beside a search
        index's files): read from there when its ``key`` (the rows' checksum), ``FEATURES_VERSION`` and the
        parser's version (``parsers.PARSER_VERSION``: the formulas' trees and numbers come from the LaTeX parser)
        match, else computed and written there (quietly not, where the directory is read-only)."""
        from mathgraph.parsers import PARSER_VERSION

        texts = list(texts)
        stamp = f"{FEATURES_VERSION}:{PARSER_VERSION}:{key}"
        if path is not None and os.path.isfile(path):
            try:
                with gzip.open(path, "rt", encoding="utf-8") as f:
                    saved = json.load(f)
                if saved.get("key") == stamp and all(
                    len(saved.get(field, ())) == len(texts) for field in ("tokens", "numbers", "spoken")
                ):
                    return cls(texts, tokens=saved["tokens"], numbers=saved["numbers"], spoken=saved["spoken"])
            except (OSError, ValueError, EOFError):
                pass  # a damaged cache is recomputed
        index = cls(texts)
        if path is not None:
            partial = f"{path}.{os.getpid()}.tmp"
            try:
                with gzip.open(partial, "wt", encoding="utf-8") as f:
                    json.dump({"key": stamp, "tokens": index.bags, "numbers": index.numbers, "spoken": index.spoken}, f)
                os.replace(partial, path)
            except OSError:
                if os.path.exists(partial):
                    os.remove(partial)
        return index

    def tokens(self, text: str) -> list[str]:
        """``text``'s tokens, names told by this bank's counts."""
        return skeleton_tokens(text, self.names)

    def transform(self, texts: Sequence[str]):
        """L2-normalised skeleton vectors of ``texts``, one ``SparseRow`` each."""
        return self.vectorizer.transform([self.tokens(text) for text in texts])

    def scores(self, texts: Sequence[str], rows: Sequence[np.ndarray | None] | None = None) -> list[np.ndarray]:
        """Per query, its skeleton cosine to every row (``rows[i]`` None), or to the rows ``rows[i]``."""
        queries = self.transform(texts)
        rows = rows if rows is not None else [None] * len(texts)
        return [self.matrix.dot(query, chosen) for query, chosen in zip(queries, rows)]

    def number_weight(self, numbers: Sequence[str], information: float | None = None) -> float:
        """How much a match of exactly these numbers says: the sum of their inverse document frequencies over the
        bank (``ln((1 + rows) / (1 + rows with the number))``, ``ln(1 + rows)`` for a number no row has) over
        ``information`` (None: ``NUMBERS_INFORMATION``), at most 1. Three small integers that many problems hold
        (3, 4, 5) weigh less than one rare number (2019)."""
        scale = NUMBERS_INFORMATION if information is None else float(information)
        if scale <= 0:
            raise ValueError(f"numbers information must be > 0, got {scale}")
        unseen = math.log(1 + len(self.numbers))
        total = sum(self.number_idf.get(n.lstrip("-"), unseen) for n in numbers)
        return min(1.0, total / scale)

    def number_matches(
        self,
        texts: Sequence[str],
        rows: Sequence[np.ndarray | None] | None = None,
        information: float | None = None,
    ) -> list[np.ndarray]:
        """Per query, ``number_weight`` of its numbers (``information`` as there) for each row whose numbers
        (signed, as a multiset) are exactly the query's and 0.0 elsewhere, over every row (``rows[i]`` None) or
        the rows ``rows[i]``; all 0 for a query without numbers. Numbers are matched in digits
        (``problem_numbers``) and, where a side says some in words, with those too (``number_keys``): a row
        matched both ways gets the larger weight."""
        rows = rows if rows is not None else [None] * len(texts)
        matches = []
        for text, chosen in zip(texts, rows):
            masked_text, trees = _parse(text)
            same = np.zeros(len(self.numbers))
            for key in number_keys(_numbers(trees, masked_text), _spoken(masked_text)):
                found = self._rows_by_numbers.get(key, [])
                same[found] = np.maximum(same[found], self.number_weight(key, information))
            matches.append(same if chosen is None else same[np.asarray(chosen, dtype=int)])
        return matches


def _identity(tokens):
    return tokens


def confident_weight(best: float, weight: float, confidence: Sequence[float] | None) -> float:
    """A query's skeleton weight: ``weight`` scaled by how sure the channel is, from 0 where the query's best
    skeleton cosine among the candidates (``best``) is at most ``confidence[0]`` to 1 where it reaches
    ``confidence[1]``, linearly between; ``confidence`` None: ``weight`` for every query."""
    if confidence is None:
        return float(weight)
    low, high = (float(c) for c in confidence)
    if not 0.0 <= low < high:
        raise ValueError(f"skeleton confidence must be (low, high) with 0 <= low < high, got {tuple(confidence)}")
    return float(weight) * float(np.clip((float(best) - low) / (high - low), 0.0, 1.0))


def keep_encoder_lead(fused: np.ndarray, dense: np.ndarray, lead: float | None) -> np.ndarray:
    """One query's fused scores with the sentence encoder's best row put first where its cosine leads the second
    best by at least ``lead`` (its score raised to ``LEAD_STEP`` above the best other row's, where it is not
    already that far first); the scores as they are where it
    leads by less, for fewer than two rows, or with ``lead`` None. ``fused`` and ``dense`` are over the same
    rows."""
    fused = np.asarray(fused, dtype=float)
    dense = np.asarray(dense, dtype=float)
    if lead is None or len(dense) < 2:
        return fused
    if lead < 0:
        raise ValueError(f"encoder lead must be >= 0 or None, got {lead}")
    first = int(np.argmax(dense))
    if dense[first] - np.partition(dense, -2)[-2] < lead:
        return fused
    kept = fused.copy()
    others = float(np.max(np.delete(fused, first)))
    kept[first] = max(fused[first], others + LEAD_STEP)
    return kept


LEAD_STEP = 1e-6  # how far above the best fused score keep_encoder_lead puts the encoder's row


def fuse_channels(
    scores: Sequence[Sequence[float]], weights: Sequence[float], fusion: str = "standardised"
) -> np.ndarray:
    """One query's fused scores over its candidates, a weighted sum (weights non-negative, summing to 1):
    ``fusion`` ``"standardised"``: ``sum_c w_c z(s_c)``, each channel's scores standardised over the candidates
    (``models.late_fusion.standardise``); ``"cosine"``: ``sum_c w_c s_c``, the channels' cosines as they are, so
    a row's score does not depend on the other candidates (``FUSIONS``)."""
    from mathgraph.models.late_fusion import standardise

    if fusion not in FUSIONS:
        raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, got {fusion!r}")
    if len(scores) != len(weights):
        raise ValueError(f"{len(scores)} score lists but {len(weights)} weights")
    if any(w < 0 for w in weights) or abs(sum(weights) - 1.0) > 1e-6:
        raise ValueError(f"channel weights must be >= 0 and sum to 1, got {list(weights)}")
    lengths = {len(s) for s in scores}
    if len(lengths) != 1:
        raise ValueError(f"score lists of different lengths: {sorted(lengths)}")
    if fusion == "cosine":
        return sum(w * np.asarray(s, dtype=float) for w, s in zip(weights, scores) if w > 0)
    return sum(w * standardise(s) for w, s in zip(weights, scores) if w > 0)


__all__ = [
    "ENCODER_LEAD",
    "FUSIONS",
    "NUMBERS_BONUS",
    "NUMBERS_INFORMATION",
    "SKELETON_CONFIDENCE",
    "SKELETON_FUSION",
    "SKELETON_WEIGHTS",
    "NameCounts",
    "SkeletonIndex",
    "confident_weight",
    "formula_tokens",
    "fuse_channels",
    "keep_encoder_lead",
    "number_keys",
    "problem_numbers",
    "skeleton_tokens",
    "spoken_numbers",
    "text_tokens",
]
