"""The sentences of two problems matched: kept, changed, moved, inserted and deleted (``parsers.compare``).

Nothing compares every sentence with every other (``parsers.matching``). Equal texts pair by occurrence
and the heaviest chain of those pairs in order is kept, the rest moved; between two kept sentences,
candidates come from shared rare words, equal word keys and the diagonal, and the most similar chain of
them in order is changed; what is left pairs with an equal word key anywhere (moved: the same sentence up
to case, punctuation and numbers). Each step treats a and b alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from mathgraph.graph import MathSyntaxGraph
from mathgraph.parsers.matching import DIAGONAL_WIDTH, band_pairs, best_chain, occurrence_pairs, tie_breaker
from mathgraph.parsers.quantities import ProblemSentence, parse_number
from mathgraph.parsers.sentence_changes import sentence_changes

# Two sentences are "the same sentence, changed" above this share of common words.
CHANGED_SENTENCE_SIMILARITY = 0.5
ALL_PAIRS_UP_TO = 256  # a stretch between kept sentences with at most this many pairs tries them all
RARE_WORD = 4  # a word in at most this many sentences of each side proposes their pairs
# Longer pairs of sentences (words of both) are compared as bags of words: the ordered matching is quadratic
# in the length of a sentence that repeats a word (a list of 5,000 numbers took 20 s)
LONGEST_ORDERED_MATCH = 600


@dataclass(frozen=True)
class SentenceMatch:
    """Sentence ``a`` of the first problem matched to sentence ``b`` of the second (``None`` where absent), with
    their word similarity and what changed (``parsers.sentence_changes``; empty for kept text)."""

    kind: str
    a: int | None
    b: int | None
    similarity: float
    changes: tuple[str, ...] = ()


def sentence_words(graph: MathSyntaxGraph, sentences: Sequence[ProblemSentence]) -> list[list[str]]:
    """Each sentence's words, lower-cased, numbers as ``#`` (so a changed number keeps the sentence the same),
    without punctuation: one pass over the nodes."""
    numbers = {q.node for q in graph.quantities()}
    position = {s.index: k for k, s in enumerate(sentences)}
    words: list[list[str]] = [[] for _ in sentences]
    for node in graph.nodes:
        k = position.get(node.sentence)
        if k is None or node.kind not in ("word", "math") or node.upos == "PUNCT":
            continue
        words[k].append("#" if node.id in numbers or _is_number(node.label) else node.label)
    return words


@lru_cache(maxsize=65536)
def _is_number(label: str) -> bool:
    """Whether a word is a number; words repeat, across sentences and problems: each is read once."""
    return parse_number(label) is not None


def word_similarity(a: list[str], b: list[str]) -> float:
    """The share of words two sentences have in order (``SequenceMatcher.ratio``), the two taken in a fixed
    order (the smaller list first): the matcher breaks ties by position, so ``ratio(a, b)`` and ``ratio(b, a)``
    can differ, and a against b must give what b against a gives. Sentences longer than
    ``LONGEST_ORDERED_MATCH`` words together: the share they have in common, in any order."""
    if not a and not b:
        return 1.0
    if len(a) + len(b) > LONGEST_ORDERED_MATCH:
        return 2 * sum((Counter(a) & Counter(b)).values()) / (len(a) + len(b))
    first, second = sorted((a, b))
    return SequenceMatcher(None, first, second, autojunk=False).ratio()


def _similarity_above(a: list[str], b: list[str], counts_a: Counter, counts_b: Counter) -> float | None:
    """``word_similarity(a, b)`` where it reaches ``CHANGED_SENTENCE_SIMILARITY``, else None; the bag-of-words
    bound (linear) rules most pairs out before the ordered matching (quadratic in sentence length) runs."""
    if not a and not b:
        return 1.0
    if 2 * sum((counts_a & counts_b).values()) < CHANGED_SENTENCE_SIMILARITY * (len(a) + len(b)):
        return None
    similarity = word_similarity(a, b)
    return similarity if similarity >= CHANGED_SENTENCE_SIMILARITY else None


def align_sentences(sentences_a, sentences_b, words_a, words_b) -> list[SentenceMatch]:
    """Kept, changed and moved sentences (module docstring), listed in reading order: a's deleted or moved
    sentences, then b's inserted ones, before the next pair in order."""
    n, m = len(sentences_a), len(sentences_b)
    texts_a, texts_b = [s.text for s in sentences_a], [s.text for s in sentences_b]
    exact_a, exact_b = [" ".join(t.split()) for t in texts_a], [" ".join(t.split()) for t in texts_b]
    partner_a: dict[int, tuple[int, str, float]] = {}  # i -> (j, kind, similarity)
    in_order: set[int] = set()  # the a side of the pairs in order (kept or changed)

    def pair(i: int, j: int, kind: str, similarity: float) -> None:
        partner_a[i] = (j, kind, similarity)
        if kind != "moved":
            in_order.add(i)

    exact = occurrence_pairs(exact_a, exact_b)
    chain = set(best_chain(exact, [(1.0, *tie_breaker(i, j, n, m, exact_a[i])) for i, j in exact]))
    for k, (i, j) in enumerate(exact):
        pair(i, j, "kept" if k in chain else "moved", 1.0)
    used_b = {j for j, _, _ in partner_a.values()}
    anchors = sorted((i, partner_a[i][0]) for i in in_order) + [(n, m)]
    counts_a, counts_b = [Counter(w) for w in words_a], [Counter(w) for w in words_b]
    previous = (-1, -1)
    for anchor in anchors:
        gap_a = [i for i in range(previous[0] + 1, anchor[0]) if i not in partner_a]
        gap_b = [j for j in range(previous[1] + 1, anchor[1]) if j not in used_b]
        for i, j, similarity in _align_gap(gap_a, gap_b, words_a, words_b, counts_a, counts_b, texts_a, texts_b):
            pair(i, j, "kept" if exact_a[i] == exact_b[j] else "changed", similarity)
        previous = anchor
    used_b = {j for j, _, _ in partner_a.values()}
    left_a = [i for i in range(n) if i not in partner_a]
    left_b = [j for j in range(m) if j not in used_b]
    keys_a = [tuple(words_a[i]) or None for i in left_a]
    for p, q in occurrence_pairs(keys_a, [tuple(words_b[j]) or None for j in left_b]):
        pair(left_a[p], left_b[q], "moved", 1.0)

    partner_b = {j: i for i, (j, _, _) in partner_a.items()}
    matches, i, j = [], 0, 0
    while i < n or j < m:
        if i < n and i not in in_order:
            if i in partner_a:
                j_moved, kind, similarity = partner_a[i]
                changes = sentence_changes(texts_a[i], texts_b[j_moved])
                matches.append(SentenceMatch(kind, i, j_moved, similarity, changes))
            else:
                matches.append(SentenceMatch("deleted", i, None, 0.0))
            i += 1
        elif j < m and (j not in partner_b or partner_b[j] not in in_order):
            if j not in partner_b:
                matches.append(SentenceMatch("inserted", None, j, 0.0))
            j += 1
        else:
            _, kind, similarity = partner_a[i]
            changes = sentence_changes(texts_a[i], texts_b[j]) if kind == "changed" else ()
            matches.append(SentenceMatch(kind, i, j, similarity, changes))
            i, j = i + 1, j + 1
    return matches


def _align_gap(gap_a, gap_b, words_a, words_b, counts_a, counts_b, texts_a, texts_b) -> list[tuple[int, int, float]]:
    """``(i, j, similarity)`` of the most similar sentences of two stretches between kept sentences, in order:
    the heaviest chain of candidate pairs (all pairs of a short stretch; else the diagonal, equal word keys
    and pairs that share a rare word) whose similarity reaches ``CHANGED_SENTENCE_SIMILARITY``."""
    if not gap_a or not gap_b:
        return []
    n, m = len(gap_a), len(gap_b)
    if n * m <= ALL_PAIRS_UP_TO:
        candidates = {(p, q) for p in range(n) for q in range(m)}
    else:
        candidates = set(band_pairs(n, m, DIAGONAL_WIDTH))
        candidates.update(
            occurrence_pairs([tuple(words_a[i]) or None for i in gap_a], [tuple(words_b[j]) or None for j in gap_b])
        )
        holders_a: dict[str, list[int]] = {}
        holders_b: dict[str, list[int]] = {}
        for holders, gap, words in ((holders_a, gap_a, words_a), (holders_b, gap_b, words_b)):
            for p, k in enumerate(gap):
                for word in set(words[k]):
                    holders.setdefault(word, []).append(p)
        for word, ps in holders_a.items():
            qs = holders_b.get(word, ())
            if len(ps) <= RARE_WORD and len(qs) <= RARE_WORD:
                candidates.update((p, q) for p in ps for q in qs)
    pairs, weights, similarities = [], [], []
    size_a, size_b = len(words_a), len(words_b)
    for p, q in sorted(candidates):
        i, j = gap_a[p], gap_b[q]
        similarity = _similarity_above(words_a[i], words_b[j], counts_a[i], counts_b[j])
        if similarity is not None:
            pairs.append((p, q))
            similarities.append(similarity)
            weights.append((similarity, *tie_breaker(i, j, size_a, size_b, texts_a[i], texts_b[j])))
    return [(gap_a[pairs[k][0]], gap_b[pairs[k][1]], similarities[k]) for k in best_chain(pairs, weights)]


def question_kind(sentences_a, sentences_b, words_a, words_b) -> tuple[str, float, tuple[str, ...]]:
    """The question's kind, the similarity of the two questions' words and what changed in a changed one."""
    qa = next((k for k, s in enumerate(sentences_a) if s.is_question), None)
    qb = next((k for k, s in enumerate(sentences_b) if s.is_question), None)
    if qa is None and qb is None:
        return "none", 0.0, ()
    if qb is None:
        return "missing", 0.0, ()
    if qa is None:
        return "added", 0.0, ()
    similarity = word_similarity(words_a[qa], words_b[qb])
    if words_a[qa] == words_b[qb]:
        return "same", similarity, ()
    return "changed", similarity, sentence_changes(sentences_a[qa].text, sentences_b[qb].text)


__all__ = ["SentenceMatch", "align_sentences", "question_kind", "sentence_words", "word_similarity"]
