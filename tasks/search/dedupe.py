"""Near-duplicates in a bank: which rows are the same problem (the same quantities, counting the same things,
and the same question, in any wording or formatting), as group ids.

    result = find_duplicates(texts, load_embedder("text:minilm"))             # tuned for finding copies
    result = find_duplicates(texts, embedder, STRICT)                         # precision first, for merging
    result.groups        # one id a row: the position of the first row of its group
    result.pairs         # the pairs that joined them, each with what matched (``DuplicatePair``)

Four steps:

1. Copies: rows whose text is the same once formatting is set aside (``canonical_text``: whitespace, math
   delimiters, LaTeX spacing and sizing commands, braces around one character) are one problem outright.
2. Candidates: one row per distinct text is embedded into a search index (``write_index``; its index type by
   size, so a large bank is searched approximately) and each row's ``neighbours`` nearest rows with a cosine
   of at least ``min_cosine`` are candidates. The cosine only proposes pairs; it never confirms one.
3. Confirmation (``pair_evidence``, then ``decide``): the alignment of the two graphs
   (``parsers.compare.align_problems``, graphs through the graph cache) and the quantities decide. Two rows
   are the same problem when they have the same formulas (up to renamed variables: ``x^2+1`` and ``y^2+1``
   are one problem, ``x^2-1`` another) and state the same values as a multiset ("12 apples" and "12.5
   apples" differ; ``small_numbers`` small numbers written in words, "one crate" -> "a single box", may be
   missing on one side), each value written the same way (``distinct_forms``: "2/5 of the cards" and "0.4
   times of the cards", "341 cards" and "3.41 hundred cards" are two problems), counting the same things
   (``check_units``: a value matched to the same value on the other side is in the same unit, "5 hours" is
   not "5 minutes"), with the same numerals where the quantity reader sets some aside (``check_unread``:
   "in 2007"), a question on both sides where ``require_question`` asks for it (reworded at most:
   ``min_question_similarity``), no sentence on one side only while the other side keeps all of its own
   (``one_sided_sentences``: a step or a distraction added to an otherwise unchanged text), and, for an
   edited copy, few new words in the sentences it changed (``max_edit_words``).
4. Groups (``linkage``): ``"complete"``, the default and ``STRICT``'s, only puts rows in one group when every
   pair inside it is confirmed (pairs that were not candidates are aligned when a join asks for them), so two
   different problems are never chained through a third; ``"single"`` joins every confirmed pair (connected
   components, ``networkx``).

The default settings are tuned for finding copies (the best F1), ``STRICT`` for merging (precision first: no
more than one small number in words on one side, the same units, edited copies with at most one new word).
Every joining pair carries its evidence and the rule that decided (``DuplicatePair``; ``mathgraph dedupe
--explain`` prints them per group). The defaults and ``STRICT`` were chosen by the grouped cross-validation of
``benchmarks/dedupe_quality.py`` (docs/search.md has the held-out figures).
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from mathgraph.errors import UserError

# Chosen by the grouped cross-validation of benchmarks/dedupe_quality.py (docs/search.md): a reworded question
# shares few words with the original (GSM-Plus paraphrases: similarity 0.1 to 0.5), so its word similarity is
# not asked for.
NEIGHBOURS = 10
MIN_COSINE = 0.7
MIN_QUESTION_SIMILARITY = 0.0
CHECK_SENTENCES = False
SMALL_NUMBERS = 2
SMALL_VALUE = 1
MAX_EDIT_WORDS = 3
LINKAGES = ("single", "complete")
# A sentence on one side only rules a pair out when it brings at least this many words the other side lacks
# (fewer: a sentence split another way, "Assume $f$ and $g$ are polynomials, and" | "that ...").
ONE_SIDED_NEW_WORDS = 2
# Query vectors searched at a time while finding candidates.
QUERY_BATCH = 1024
# Forms of one value that a rewrite only changes on purpose: a decimal for a fraction, percent or word.
_CONVERTED = {"decimal"}
_CONVERTED_FROM = {"fraction", "percent", "word"}

# What canonical_text removes or rewrites: formatting that never changes a problem.
_SIZING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])")
_SPACING = re.compile(r"\\[,;:! ]|\\(?:quad|qquad)(?![a-zA-Z])|~")
_FRACTION = re.compile(r"\\[dt]frac(?![a-zA-Z])")
_DELIMITERS = re.compile(r"\$\$?|\\\(|\\\)|\\\[|\\\]")
_ONE_CHARACTER_GROUP = re.compile(r"\{(\w)\}")
_SPACE_AT_SYMBOL = re.compile(r" ?([^\w\s]) ?")
_WORD = re.compile(r"[a-z]{2,}")
_NUMERAL = re.compile(r"\d+(?:\.\d+)?")
_NON_ZERO_DECIMALS = re.compile(r"\.\d*[1-9]")
# A LaTeX command (kept) or one letter (a variable, renamed by ``renamed_formulas``).
_FORMULA_TOKEN = re.compile(r"\\(?:begin|end|text|textbf|mathrm|operatorname)\{[^}]*\}|\\[a-zA-Z]+|[a-zA-Z]")


@dataclass(frozen=True)
class DedupeSettings:
    """What makes two rows one problem (module docstring, step 3) and how groups form (step 4).

    ``neighbours``, ``min_cosine``: how near a pair must be to be compared at all. ``min_question_similarity``:
    the least word similarity of two question sentences (0: any rewording). ``check_sentences``: no sentence
    with quantities inserted or deleted (a rewording that regroups numbers makes such sentences too).
    ``small_numbers``: how many numbers of at most ``small_value`` may be stated on one side only ("one
    week" -> "a week"). ``distinct_forms``: a value written as a decimal on one side and as a fraction,
    percent or word on the other makes two problems. ``check_units``: two matched equal values in different
    units make two problems. ``one_sided_sentences``: a sentence inserted while none is deleted (or the
    reverse), with at least ``ONE_SIDED_NEW_WORDS`` words the other problem lacks, makes two problems.
    ``require_question``: a question found on one side only makes two problems (off: a question reworded as a
    command the parser does not take for one, "Determine ..."). ``check_unread``: a numeral the quantity reader
    set aside (a year, a name) on one side only makes two problems. ``max_edit_words``: an edited copy (at least
    half of the sentences kept word for word) whose other sentences bring more new words than this is another
    problem (a step or a distraction added, a condition taken out; None: not checked). ``linkage``: ``"single"`` (chains of confirmed
    pairs) or ``"complete"`` (every pair in a group confirmed)."""

    neighbours: int = NEIGHBOURS
    min_cosine: float = MIN_COSINE
    min_question_similarity: float = MIN_QUESTION_SIMILARITY
    check_sentences: bool = CHECK_SENTENCES
    small_numbers: int = SMALL_NUMBERS
    small_value: int = SMALL_VALUE
    distinct_forms: bool = True
    check_units: bool = False
    one_sided_sentences: bool = True
    require_question: bool = False
    check_unread: bool = True
    max_edit_words: int | None = MAX_EDIT_WORDS
    linkage: str = "complete"

    def __post_init__(self) -> None:
        if self.neighbours < 1:
            raise UserError(f"neighbours must be >= 1, got {self.neighbours}")
        for name in ("min_cosine", "min_question_similarity"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise UserError(f"{name} must be in [-1, 1], got {getattr(self, name)}")
        if self.small_numbers < 0 or self.small_value < 0:
            raise UserError(f"small_numbers and small_value must be >= 0, got {self.small_numbers}, {self.small_value}")
        if self.linkage not in LINKAGES:
            raise UserError(f"linkage must be one of {', '.join(LINKAGES)}, got {self.linkage!r}")


# Precision first, for merging (the best recall at a precision of at least 0.99 on the training folds, else the
# best precision; four folds of five chose this): at most one small number in words on one side only, equal
# values in the same units, an edited copy with at most one new word (and, as by default, every pair in a group
# confirmed).
STRICT = DedupeSettings(small_numbers=1, check_units=True, max_edit_words=1)


@dataclass(frozen=True)
class PairEvidence:
    """What the alignment and the quantities say about two problems, whatever the settings: the ``cosine`` of
    their vectors; ``quantities_a``/``quantities_b`` (how many each states), ``values_matched`` (how many of
    those are the same value on both sides, as multisets) and ``only_one_side`` (the values stated on one
    side only) and ``one_side_in_words`` (whether each of those is written in words on its side: "one",
    "twice"); ``converted`` (equal values written as a decimal on one side and a fraction, percent or word
    on the other); ``units_matched`` / ``units_differ`` (matched equal values with a unit on both sides: the
    same unit, or another); ``question`` (``same``, ``changed``, ``missing``, ``added``, ``none``) and
    ``question_similarity`` (word similarity); ``sentences_inserted`` / ``sentences_deleted`` and how many of
    them carry quantities; ``one_sided_new_words``: where sentences were only inserted (or only deleted), the
    distinct words of those sentences that the other problem never uses (0 otherwise); ``unread_differ``: the
    numerals the quantity reader set aside (years, names: "in 2007", "Voyager 2") found on one side only;
    ``edit_new_words``: where at least half of the sentences are kept word for word (an edited copy, not a
    rewording), the most distinct words that the other sentences of one side bring and the other problem never
    uses (0 otherwise);
    ``formulas`` (``none``: no formula on either side, ``same``, ``renamed``: the same up
    to the names of variables, ``differ``)."""

    cosine: float
    quantities_a: int
    quantities_b: int
    values_matched: int
    only_one_side: tuple[Fraction, ...]
    one_side_in_words: bool
    converted: int
    units_matched: int
    units_differ: int
    question: str
    question_similarity: float
    sentences_inserted: int
    sentences_deleted: int
    inserted_with_quantities: int
    deleted_with_quantities: int
    one_sided_new_words: int
    unread_differ: tuple[str, ...]
    edit_new_words: int
    formulas: str

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {
            "cosine": round(self.cosine, 6),
            "quantities_a": self.quantities_a,
            "quantities_b": self.quantities_b,
            "values_matched": self.values_matched,
            "only_one_side": [str(v) for v in self.only_one_side],
            "one_side_in_words": self.one_side_in_words,
            "converted": self.converted,
            "units_matched": self.units_matched,
            "units_differ": self.units_differ,
            "question": self.question,
            "question_similarity": round(self.question_similarity, 4),
            "sentences_inserted": self.sentences_inserted,
            "sentences_deleted": self.sentences_deleted,
            "one_sided_new_words": self.one_sided_new_words,
            "unread_differ": list(self.unread_differ),
            "edit_new_words": self.edit_new_words,
            "formulas": self.formulas,
        }


@dataclass(frozen=True)
class DuplicatePair:
    """Rows ``a`` < ``b`` found to be the same problem: ``how`` is ``"copy"`` (the same canonical text) or
    ``"aligned"`` (a candidate confirmed by the alignment), with the cosine of their vectors (1 for a copy),
    the ``rule`` that decided (``decide``) and, for an aligned pair, its ``evidence``."""

    a: int
    b: int
    cosine: float
    how: str
    rule: str = "the same text once formatting is set aside"
    evidence: PairEvidence | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready."""
        out = {"a": self.a, "b": self.b, "cosine": round(self.cosine, 6), "how": self.how, "rule": self.rule}
        if self.evidence is not None:
            out["evidence"] = self.evidence.to_dict()
        return out

    def explain(self) -> str:
        """What matched, in words, on one line."""
        if self.evidence is None:
            return f"copy: {self.rule}"
        e = self.evidence
        units = f", {e.units_matched} in the same unit" if e.units_matched else ""
        question = {"same": "the same question", "changed": "the question reworded"}.get(e.question, e.question)
        formulas = {"same": "; formulas the same", "renamed": "; formulas the same up to renamed variables"}
        return (
            f"cosine {e.cosine:.3f}; quantities {e.values_matched} of {e.quantities_a}/{e.quantities_b} "
            f"the same values{units}; {question} (word similarity {e.question_similarity:.2f})"
            f"{formulas.get(e.formulas, '')}; rule: {self.rule}"
        )


@dataclass(frozen=True)
class DedupeResult:
    """``groups``: a group id per row (the position of the group's first row); ``pairs``: the pairs that joined
    them; ``candidates``: candidate pairs compared by alignment, confirmed or not; ``rejected``: why each
    candidate that was not confirmed was not (reason -> count; ``linkage``: confirmed, but with complete
    linkage not every pair of the two groups was)."""

    groups: np.ndarray
    pairs: list[DuplicatePair]
    candidates: int
    rejected: dict[str, int]

    @property
    def group_count(self) -> int:
        """How many distinct problems the rows are."""
        return len(np.unique(self.groups))

    def explain(self) -> list[str]:
        """For each group of more than one row, its rows and, for each row after the first, the pair that
        joined it and what matched (``DuplicatePair.explain``), one line each."""
        members: dict[int, list[int]] = {}
        for row, group in enumerate(self.groups.tolist()):
            members.setdefault(group, []).append(row)
        lines = []
        for group, rows in members.items():
            if len(rows) > 1:
                lines.append(f"group {group}: rows {', '.join(map(str, rows))}")
                lines += [
                    f"  row {row} joined by row {by}: {pair.explain()}"
                    for row, by, pair in joining_pairs(rows, self.pairs)
                ]
        return lines


def joining_pairs(rows: list[int], pairs: Sequence[DuplicatePair]) -> list[tuple[int, int, DuplicatePair]]:
    """``(row, by, pair)`` for each of ``rows`` after the first: the row it was reached from, going out from
    the first row through ``pairs`` (breadth first, the highest cosine first), and the pair between them."""
    inside = set(rows)
    edges: dict[int, list[DuplicatePair]] = {}
    for p in pairs:
        if p.a in inside and p.b in inside:
            edges.setdefault(p.a, []).append(p)
            edges.setdefault(p.b, []).append(p)
    seen, order, out = {rows[0]}, [rows[0]], []
    for row in order:
        for p in sorted(edges.get(row, []), key=lambda p: (-p.cosine, p.a, p.b)):
            other = p.b if p.a == row else p.a
            if other not in seen:
                seen.add(other)
                order.append(other)
                out.append((other, row, p))
    return out


def canonical_text(text: str) -> str:
    """``text`` with formatting set aside: math delimiters (``$``, ``\\(``, ``\\[``), LaTeX spacing (``\\,``,
    ``\\quad``) and sizing (``\\left``, ``\\big``) commands, ``\\dfrac``/``\\tfrac`` written ``\\frac``, braces
    around one character (``x^{2}`` -> ``x^2``), runs of whitespace, and spaces next to symbols. Two texts with
    the same canonical text differ in formatting only."""
    text = _SIZING.sub("", text)
    text = _SPACING.sub(" ", text)
    text = _FRACTION.sub(r"\\frac", text)
    text = _DELIMITERS.sub(" ", text)
    text = _ONE_CHARACTER_GROUP.sub(r"\1", text)
    text = " ".join(text.split())
    return _SPACE_AT_SYMBOL.sub(r"\1", text)


def renamed_formulas(latex: Sequence[str]) -> list[str]:
    """The formulas ``latex`` of one problem with their variables renamed in order of first appearance across
    the problem (``x`` and then ``y`` become ``v0`` and ``v1`` everywhere; LaTeX commands kept), then in
    canonical form (``canonical_text``), so two problems that differ only in the names of their variables give
    the same list."""
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        token = match.group(0)
        return token if token.startswith("\\") else names.setdefault(token, f"v{len(names)}")

    return [canonical_text(_FORMULA_TOKEN.sub(rename, text)) for text in latex]


def pair_evidence(alignment, graph_a, graph_b, cosine: float = 1.0) -> PairEvidence:
    """The ``PairEvidence`` of two problems: ``alignment`` is ``align_problems(graph_a, graph_b)``, ``cosine``
    the cosine of their vectors."""
    values_a = Counter(q.value for q in graph_a.quantities())
    values_b = Counter(q.value for q in graph_b.quantities())
    converted = units_matched = units_differ = 0
    for match in alignment.quantities:
        if match.kind != "same":
            continue
        forms = {match.a.form, match.b.form}
        converted += len(forms) == 2 and bool(forms & _CONVERTED) and bool(forms & _CONVERTED_FROM)
        # an integer written as a decimal with a scale: 341 -> 3.41 hundred (not $20 -> $20.00)
        converted += forms == {"integer", "decimal"} and any(
            q.form == "decimal" and _NON_ZERO_DECIMALS.search(q.text) for q in (match.a, match.b)
        )
        if match.a.unit and match.b.unit:
            same_unit = _word_stem(match.a.unit) == _word_stem(match.b.unit)
            units_matched += same_unit
            units_differ += not same_unit
    unread_a, unread_b = _unread_numerals(graph_a), _unread_numerals(graph_b)
    features = alignment.features
    if features["formulas_a"] == features["formulas_b"] == 0:
        formulas = "none"
    elif features["formulas_a"] == features["formulas_b"] == features["formulas_same"]:
        formulas = "same"
    elif renamed_formulas([f.latex for f in graph_a.formulas]) == renamed_formulas([f.latex for f in graph_b.formulas]):
        formulas = "renamed"
    else:
        formulas = "differ"
    return PairEvidence(
        cosine=float(cosine),
        quantities_a=sum(values_a.values()),
        quantities_b=sum(values_b.values()),
        values_matched=sum((values_a & values_b).values()),
        only_one_side=tuple(sorted(((values_a - values_b) + (values_b - values_a)).elements())),
        one_side_in_words=all(
            any(q.value == value and q.form == "word" for q in graph.quantities())
            for graph, extra in ((graph_a, values_a - values_b), (graph_b, values_b - values_a))
            for value in extra
        ),
        converted=converted,
        units_matched=units_matched,
        units_differ=units_differ,
        question=alignment.question,
        question_similarity=float(alignment.question_similarity),
        sentences_inserted=int(features["sentences_inserted"]),
        sentences_deleted=int(features["sentences_deleted"]),
        inserted_with_quantities=int(features["inserted_with_quantities"]),
        deleted_with_quantities=int(features["deleted_with_quantities"]),
        one_sided_new_words=_one_sided_new_words(alignment),
        unread_differ=tuple(sorted(((unread_a - unread_b) + (unread_b - unread_a)).elements())),
        edit_new_words=_edit_new_words(alignment),
        formulas=formulas,
    )


def _unread_numerals(graph) -> Counter:
    """The numerals of the problem's text outside every quantity the reader took (years, names, ordinals)."""
    spans = [q.span for q in graph.quantities()]
    return Counter(m.group(0) for m in _NUMERAL.finditer(graph.text) if not any(a <= m.start() < b for a, b in spans))


def _edit_new_words(alignment) -> int:
    """Where at least half of the sentences of each problem are kept word for word, the most distinct words
    (not English stop words) that the sentences not kept on one side bring and the other problem never uses;
    0 where the texts are reworded throughout."""
    from mathgraph.models.tfidf_features import ENGLISH_STOP_WORDS

    kept = [m for m in alignment.sentences if m.kind in ("kept", "moved") and not m.changes]
    if 2 * len(kept) < max(len(alignment.sentences_a), len(alignment.sentences_b), 1):
        return 0
    kept_a, kept_b = {m.a for m in kept}, {m.b for m in kept}
    most = 0
    for own, kept_own, other in (
        (alignment.sentences_a, kept_a, alignment.sentences_b),
        (alignment.sentences_b, kept_b, alignment.sentences_a),
    ):
        known = {w for sentence in other for w in _WORD.findall(sentence.text.lower())} | ENGLISH_STOP_WORDS
        words = {w for k, sentence in enumerate(own) if k not in kept_own for w in _WORD.findall(sentence.text.lower())}
        most = max(most, len(words - known))
    return most


def _one_sided_new_words(alignment) -> int:
    """Where the alignment only inserts sentences (or only deletes them), how many distinct words of those
    sentences (not English stop words) the other problem does not use; 0 where it does both or neither."""
    inserted = [alignment.sentences_b[m.b].text for m in alignment.sentences if m.kind == "inserted"]
    deleted = [alignment.sentences_a[m.a].text for m in alignment.sentences if m.kind == "deleted"]
    if bool(inserted) == bool(deleted):
        return 0
    one_side, other = (inserted, alignment.sentences_a) if inserted else (deleted, alignment.sentences_b)
    from mathgraph.models.tfidf_features import ENGLISH_STOP_WORDS

    known = {w for sentence in other for w in _WORD.findall(sentence.text.lower())} | ENGLISH_STOP_WORDS
    return len({w for text in one_side for w in _WORD.findall(text.lower())} - known)


def _word_stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def decide(evidence: PairEvidence, settings: DedupeSettings = DedupeSettings()) -> tuple[bool, str]:
    """``(same, rule)``: whether the two problems of ``evidence`` are one problem under ``settings``, and the
    rule that decided, checked in this order. Not the same: ``formulas`` (a formula added, removed or edited
    beyond renamed variables), ``quantities`` (other values), ``written another way`` (``distinct_forms``),
    ``units`` (``check_units``), ``numbers set aside`` (``check_unread``), ``question`` (missing on one side,
    or below ``min_question_similarity``), ``sentence on one side`` (``one_sided_sentences``), ``edited
    sentences`` (``max_edit_words``), ``sentences`` (``check_sentences``). The same: ``same quantities`` or
    ``same quantities but small numbers in words`` (``small_numbers``), each with ``, renamed variables``
    where the formulas only differ in those."""
    e, s = evidence, settings
    if e.formulas == "differ":
        return False, "formulas"
    small = e.one_side_in_words and all(v.denominator == 1 and 0 <= v <= s.small_value for v in e.only_one_side)
    if e.only_one_side and not (small and len(e.only_one_side) <= s.small_numbers):
        return False, "quantities"
    if s.distinct_forms and e.converted:
        return False, "written another way"
    if s.check_unread and e.unread_differ:
        return False, "numbers set aside"
    if s.check_units and e.units_differ:
        return False, "units"
    if (s.require_question and e.question in ("missing", "added")) or (
        e.question == "changed" and e.question_similarity < s.min_question_similarity
    ):
        return False, "question"
    if s.one_sided_sentences and e.one_sided_new_words >= ONE_SIDED_NEW_WORDS:
        return False, "sentence on one side"
    if s.max_edit_words is not None and e.edit_new_words > s.max_edit_words:
        return False, "edited sentences"
    if s.check_sentences and (e.inserted_with_quantities or e.deleted_with_quantities):
        return False, "sentences"
    rule = "same quantities" if not e.only_one_side else "same quantities but small numbers in words"
    return True, rule + (", renamed variables" if e.formulas == "renamed" else "")


def same_problem(alignment, graph_a, graph_b, settings: DedupeSettings = DedupeSettings()) -> str | None:
    """None when an aligned pair of problems is the same problem (``decide``), else the reason it is not.
    ``alignment``: ``align_problems(graph_a, graph_b)``."""
    same, rule = decide(pair_evidence(alignment, graph_a, graph_b), settings)
    return None if same else rule


def copy_groups(texts: Sequence[str]) -> tuple[list[int], np.ndarray]:
    """``(representatives, copy_of)``: the first row of each distinct canonical text, and for every row the
    representative it is a copy of (itself for a representative)."""
    first: dict[str, int] = {}
    copy_of = np.empty(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        copy_of[i] = first.setdefault(canonical_text(text), i)
    return list(first.values()), copy_of


def candidate_pairs(index, settings: DedupeSettings) -> list[tuple[int, int, float]]:
    """``(a, b, cosine)`` with ``a < b``: each row of ``index`` (a ``SearchIndex``) with its ``neighbours``
    nearest other rows whose cosine is at least ``min_cosine``, each pair once, in order."""
    pairs: dict[tuple[int, int], float] = {}
    k = min(len(index), settings.neighbours + 1)  # + the row itself
    for start in range(0, len(index), QUERY_BATCH):
        queries = np.asarray(index.embeddings[start : start + QUERY_BATCH], dtype=np.float32)
        indices, scores = index.top_k(queries, k)
        for offset, (row_i, row_s) in enumerate(zip(indices, scores)):
            row = start + offset
            for other, score in zip(row_i.tolist(), row_s.tolist()):
                if other >= 0 and other != row and score >= settings.min_cosine:
                    pairs[min(row, other), max(row, other)] = score
    return [(a, b, score) for (a, b), score in sorted(pairs.items())]


def group_ids(count: int, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """A group id for each of ``count`` rows joined by ``pairs``: the connected components, each named by its
    first row (so a row alone is its own group)."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(range(count))
    graph.add_edges_from((int(a), int(b)) for a, b, *_ in pairs)
    groups = np.arange(count, dtype=np.int64)
    for component in nx.connected_components(graph):
        members = np.fromiter(component, dtype=np.int64)
        groups[members] = members.min()
    return groups


def complete_linkage(count: int, confirmed: Sequence[tuple[int, int, float]], is_same) -> list[tuple[int, int]]:
    """The confirmed pairs ``(a, b, cosine)`` of ``count`` rows that complete linkage keeps: going through them
    from the highest cosine, two groups are joined only when every pair of a row of one and a row of the other
    is the same problem (``is_same(a, b)``, asked only for pairs that were not confirmed already). Returns the
    pairs kept: every pair inside a group of the result is the same problem."""
    group = list(range(count))
    members = {i: [i] for i in range(count)}
    known = {(a, b) for a, b, _ in confirmed}
    kept = []
    for a, b, _ in sorted(confirmed, key=lambda p: (-p[2], p[0], p[1])):
        ga, gb = group[a], group[b]
        if ga == gb:
            kept.append((a, b))
            continue
        if all(
            (min(x, y), max(x, y)) in known or is_same(min(x, y), max(x, y)) for x in members[ga] for y in members[gb]
        ):
            for x in members[gb]:
                group[x] = ga
            members[ga] += members.pop(gb)
            kept.append((a, b))
    return kept


def find_duplicates(
    texts: Sequence[str],
    embedder,
    settings: DedupeSettings = DedupeSettings(),
    batch_size: int = 32,
    show_progress: bool = False,
) -> DedupeResult:
    """Group the rows ``texts`` of a bank by problem (module docstring): copies, then candidates from a search
    index of one row per distinct text (``embedder``: a ``tasks.search.embedders`` encoder), confirmed by
    alignment and quantities, grouped by ``settings.linkage`` (``STRICT`` for precision first). The index is
    written to a temporary directory, so the vectors are held once, memory-mapped."""
    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.graph_cache import parse_cached
    from mathgraph.tasks.search.commands import encode_shards
    from mathgraph.tasks.search.index import write_index

    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"row {i}: the text is empty or not a string: {text!r}")
    representatives, copy_of = copy_groups(texts)
    pairs = [DuplicatePair(int(copy_of[i]), i, 1.0, "copy") for i in range(len(texts)) if copy_of[i] != i]
    unique = [texts[i] for i in representatives]
    rejected: Counter[str] = Counter()
    candidates: list[tuple[int, int, float]] = []
    if len(unique) > 1:
        with tempfile.TemporaryDirectory(prefix="mathgraph-dedupe-") as directory:
            shards = encode_shards(embedder, unique, batch_size, show_progress)
            index = write_index(directory, shards, ({"text": t} for t in unique), "text", embedder.identity())
            candidates = candidate_pairs(index, settings)
            involved = sorted({i for a, b, _ in candidates for i in (a, b)})
            vectors = {i: np.asarray(index.embeddings[i], dtype=np.float32) for i in involved}
            del index  # its files are mapped: let them go before the directory is removed
        graphs = dict(zip(involved, parse_cached([unique[i] for i in involved], show_progress=show_progress)))
        verdicts: dict[tuple[int, int], tuple[bool, str, PairEvidence]] = {}

        def judge(a: int, b: int, cosine: float | None = None) -> tuple[bool, str, PairEvidence]:
            if (a, b) not in verdicts:
                cosine = float(vectors[a] @ vectors[b]) if cosine is None else cosine
                evidence = pair_evidence(align_problems(graphs[a], graphs[b]), graphs[a], graphs[b], cosine)
                verdicts[a, b] = (*decide(evidence, settings), evidence)
            return verdicts[a, b]

        confirmed = [(a, b, cosine) for a, b, cosine in candidates if judge(a, b, cosine)[0]]
        for a, b, _ in candidates:
            same, rule, _ = verdicts[a, b]
            if not same:
                rejected[rule] += 1
        if settings.linkage == "complete":
            kept = set(complete_linkage(len(unique), confirmed, lambda a, b: judge(a, b)[0]))
            rejected["linkage"] += len(confirmed) - len(kept)
            confirmed = [p for p in confirmed if (p[0], p[1]) in kept]
        for a, b, cosine in confirmed:
            _, rule, evidence = verdicts[a, b]
            pairs.append(DuplicatePair(representatives[a], representatives[b], cosine, "aligned", rule, evidence))
    groups = group_ids(len(texts), [(p.a, p.b) for p in pairs])
    rejected = {reason: count for reason, count in rejected.items() if count}
    return DedupeResult(groups, sorted(pairs, key=lambda p: (p.a, p.b)), len(candidates), rejected)


__all__ = [
    "DedupeSettings",
    "STRICT",
    "PairEvidence",
    "DuplicatePair",
    "DedupeResult",
    "canonical_text",
    "renamed_formulas",
    "pair_evidence",
    "decide",
    "same_problem",
    "copy_groups",
    "candidate_pairs",
    "group_ids",
    "complete_linkage",
    "joining_pairs",
    "find_duplicates",
]
