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
   missing on one side; with ``implied_values`` a value may be said another way on the other side, "30
   minutes" -> "half an hour", "60 minutes" -> "an hour", "two websites" -> "both", "One ballet class costs
   $12" -> "A ballet class is $12", "1 mile in 10 minutes" -> "each mile in 10 minutes", "they" -> "the three of
   them"), each value written the same way (``distinct_forms``: "2/5 of the cards" and "0.4
   times of the cards", "341 cards" and "3.41 hundred cards" are two problems), counting the same things
   (never a value measuring time on one side and length, money, mass or volume on the other, "4 years" | "4
   feet"; with ``check_units`` a value matched to the same value on the other side is in the same unit, "5
   hours" is not "5 minutes"), with the same numerals where the quantity reader sets some aside (``check_unread``:
   "in 2007"), a question on both sides where ``require_question`` asks for it (reworded at most:
   ``min_question_similarity``), no sentence on one side only while the other side keeps all of its own
   (``one_sided_sentences``: a step or a distraction added to an otherwise unchanged text), and, for an
   edited copy (at least ``min_kept_share`` of its sentences kept word for word), few new words in the
   sentences it changed and no sentence on one side only (``max_edit_words``), a question that asks for the
   same thing (``max_question_words``: "what was his initial weight" is not "... final weight") and no clause
   added to or taken out of a sentence (``max_changed_words``: "If both tanks have the same number of fish,
   how many fish ..." is not "How many fish ...") and none with the same words in another order ("final ...
   initial" is not "initial ... final").
4. Groups (``linkage``): ``"complete"``, the default and ``STRICT``'s, only puts rows in one group when every
   pair inside it is confirmed (pairs that were not candidates are aligned when a join asks for them), so two
   different problems are never chained through a third; ``"single"`` joins every confirmed pair (connected
   components, ``networkx``).

The default settings are tuned for finding copies (the best F1), ``STRICT`` for merging (precision first: no
more than one small number in words on one side, no value said another way, the same units, and edited copies
from a tenth of their sentences kept).
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
from mathgraph.tasks.search.index_types import APPROXIMATE_TYPES, choose_index_type, import_faiss

# Chosen by the grouped cross-validation of benchmarks/dedupe_quality.py (docs/search.md; the best F1 on its whole
# bank): a reworded question shares few words with the original (GSM-Plus paraphrases: similarity 0.1 to 0.5), so
# its word similarity is not asked for; values said another way count; an edited copy (half of its sentences kept)
# asks with at most one other content word and gains or loses at most two in any sentence.
NEIGHBOURS = 10
MIN_COSINE = 0.7
MIN_QUESTION_SIMILARITY = 0.0
CHECK_SENTENCES = False
SMALL_NUMBERS = 2
SMALL_VALUE = 1
MAX_EDIT_WORDS = 3
IMPLIED_VALUES = True
MIN_KEPT_SHARE = 0.5
MAX_QUESTION_WORDS = 1
MAX_CHANGED_WORDS = 2
LINKAGES = ("single", "complete")
# A sentence on one side only rules a pair out when it brings at least this many words the other side lacks
# (fewer: a sentence split another way, "Assume $f$ and $g$ are polynomials, and" | "that ...").
ONE_SIDED_NEW_WORDS = 2
# An edited copy that keeps at least this share of its sentences word for word and has a sentence on one side only
# is another problem under ``max_edit_words`` ("She bought another set of pots." added); below it, a sentence split
# another way in a light rewording ("... in it. They are red, white, purple, and yellow.") is not.
ONE_SIDED_KEPT_SHARE = 0.75
# Formulas, set aside where sentences are compared word by word (a renamed variable is no new word).
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
# Query vectors searched at a time while finding candidates.
QUERY_BATCH = 1024
# Forms of one value that a rewrite only changes on purpose: a decimal for a fraction, percent or word.
_CONVERTED = {"decimal"}
_CONVERTED_FROM = {"fraction", "percent", "word"}

# Units of time and how long each is, in two scales that do not convert into each other exactly: seconds up to a
# week, months from a month up ("30 minutes" is "half an hour", "six months" "half of the year", "a decade" 10 years).
_TIME_UNITS = {
    **{u: ("s", 1) for u in ("second", "sec")},
    **{u: ("s", 60) for u in ("minute", "min")},
    **{u: ("s", 3600) for u in ("hour", "hr")},
    "day": ("s", 86400),
    "week": ("s", 604800),
    "fortnight": ("s", 1209600),
    "month": ("mo", 1),
    "year": ("mo", 12),
    "decade": ("mo", 120),
    "century": ("mo", 1200),
}
# Units of measure by what they measure: two equal values measured in different dimensions ("4 years" | "4
# feet", "$10" | "10 kg") count different things, whatever the settings. Units not listed say nothing ("pound" is
# money or mass, "m" metres or millions).
_DIMENSIONS = {
    **dict.fromkeys(("$", "dollar", "cent", "euro", "€", "£", "pound sterling"), "money"),
    **dict.fromkeys(
        ("inch", "inche", "foot", "feet", "yard", "mile", "meter", "metre", "cm", "mm", "km", "m"), "length"
    ),
    **dict.fromkeys(("second", "sec", "minute", "min", "hour", "hr", "day", "week", "month", "year"), "time"),
    **dict.fromkeys(("gram", "g", "kg", "kilogram", "ounce", "oz", "lb", "ton"), "mass"),
    **dict.fromkeys(("liter", "litre", "ml", "milliliter", "gallon", "quart", "pint", "cup"), "volume"),
}
# Numbers a text implies without writing one (the quantity reader leaves them out: "an hour" is a unit, not a count;
# "doubles" a verb): each a value, and its unit of time where it has one (the word the pattern captures, or fixed).
_IMPLIED = (
    (re.compile(r"\ban? (second|minute|hour|day|week|fortnight|month|year|decade|century)\b"), 1, None),
    (re.compile(r"\bweekend\b"), 2, "day"),
    (re.compile(r"\bboth\b"), 2, None),
    (re.compile(r"\ba (?:pair|couple) of\b"), 2, None),
    (re.compile(r"\bdoubl(?:e|es|ed|ing)\b"), 2, None),
    (re.compile(r"\b(?:tripl(?:e|es|ed|ing)|thrice)\b"), 3, None),
    (re.compile(r"\bquadrupl(?:e|es|ed|ing)\b"), 4, None),
    (re.compile(r"\b(?:a|one) single\b"), 1, None),
)
# A count of the people a problem already named, in words ("the three of them", "all four of us"): stated on one
# side only, it is no new value.
_GROUP_COUNT = re.compile(r"\s+of (?:them|us|you)\b", re.IGNORECASE)
_GROUP_BEFORE = re.compile(r"\b(?:the|all)\s+$", re.IGNORECASE)
_ASKING = re.compile(r"\b(?:how|what|which|who|whom|whose|when|where|why)\b", re.IGNORECASE)

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
    ``min_kept_share`` of the sentences kept word for word) whose other sentences bring more new words than
    this, or that has a sentence on one side only (keeping ``ONE_SIDED_KEPT_SHARE`` of them), is another problem (a step or a distraction added, a
    condition taken out; None: not checked). ``linkage``: ``"single"`` (chains of confirmed
    pairs) or ``"complete"`` (every pair in a group confirmed). ``implied_values``: a value stated on one side
    only counts as stated on both when the other side says it another way: in another unit of time ("30
    minutes", "half an hour"; "a week", "7 days") or with no number ("both", "doubles", "a single"; a value 1 of
    what the other side counts with "a", "each", "every" or "per" in a phrase of its own: "1 mile" | "each
    mile"; a count in words of the people named: "the three of them").
    ``min_kept_share``: the share of sentences kept word for word that makes a pair an *edited copy*, where
    ``max_edit_words``, ``max_question_words`` and ``max_changed_words`` look. ``max_question_words``: an edited
    copy whose question asks with more than this many content words the other question does not use asks
    another thing ("what was his initial weight" | "final weight"; None: not checked).
    ``max_changed_words``: an edited copy with a sentence that gained or lost more content words than this
    against the sentence it is matched to is another problem (a clause added or taken out; None: not checked).
    An edited copy with a sentence that has the same words as its match in another order ("final ... initial")
    is always another problem."""

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
    implied_values: bool = IMPLIED_VALUES
    min_kept_share: float = MIN_KEPT_SHARE
    max_question_words: int | None = MAX_QUESTION_WORDS
    max_changed_words: int | None = MAX_CHANGED_WORDS

    def __post_init__(self) -> None:
        if self.neighbours < 1:
            raise UserError(f"neighbours must be >= 1, got {self.neighbours}")
        for name in ("min_cosine", "min_question_similarity"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise UserError(f"{name} must be in [-1, 1], got {getattr(self, name)}")
        if self.small_numbers < 0 or self.small_value < 0:
            raise UserError(f"small_numbers and small_value must be >= 0, got {self.small_numbers}, {self.small_value}")
        if not 0.0 < self.min_kept_share <= 1.0:
            raise UserError(f"min_kept_share must be in (0, 1], got {self.min_kept_share}")
        if self.linkage not in LINKAGES:
            raise UserError(f"linkage must be one of {', '.join(LINKAGES)}, got {self.linkage!r}")


# Precision first, for merging (the best recall at a precision of at least 0.99 on the bank of
# benchmarks/dedupe_quality.py, among the settings its training folds chose): at most one small number in words on
# one side only, no value said another way, equal values in the same units, and a pair is an edited copy (where
# its question, its clauses and its new words are checked) from a tenth of its sentences kept word for word.
STRICT = DedupeSettings(
    small_numbers=1,
    check_units=True,
    implied_values=False,
    min_kept_share=0.1,
    max_question_words=1,
    max_changed_words=2,
)


@dataclass(frozen=True)
class PairEvidence:
    """What the alignment and the quantities say about two problems, whatever the settings: the ``cosine`` of
    their vectors; ``quantities_a``/``quantities_b`` (how many each states), ``values_matched`` (how many of
    those are the same value on both sides, as multisets) and ``only_one_side`` (the values stated on one
    side only) and ``one_side_in_words`` (whether each of those is written in words on its side: "one",
    "twice"); ``converted`` (equal values written as a decimal on one side and a fraction, percent or word
    on the other); ``units_matched`` / ``units_differ`` (matched equal values with a unit on both sides: the
    same unit, or another) and ``dimensions_differ`` (those whose units measure different things: money, length,
    time, mass, volume); ``question`` (``same``, ``changed``, ``missing``, ``added``, ``none``) and
    ``question_similarity`` (word similarity); ``sentences_inserted`` / ``sentences_deleted`` and how many of
    them carry quantities; ``one_sided_new_words``: where sentences were only inserted (or only deleted), the
    distinct words of those sentences that the other problem never uses (0 otherwise); ``unread_differ``: the
    numerals the quantity reader set aside (years, names: "in 2007", "Voyager 2") found on one side only;
    ``edit_new_words``: where at least half of the sentences are kept word for word (an edited copy, not a
    rewording), the most distinct words that the other sentences of one side bring and the other problem never
    uses (0 otherwise);
    ``formulas`` (``none``: no formula on either side, ``same``, ``renamed``: the same up
    to the names of variables, ``differ``); ``implied``: the values of ``only_one_side`` that the other side says
    another way (in another unit of time, or with no number: "both", "an hour"); ``in_words``: those written in words on their side; ``kept_share``: the share
    of sentences kept word for word (of the longer problem); ``changed_new_words``: the most distinct words that
    the sentences not kept of one side bring and the other problem never uses, whatever ``kept_share``;
    ``question_new_words``: the most distinct content words of one question's asking part (from its "how",
    "what"... on, or after its first word) that the other question's does not use (0 where either has none);
    ``changed_words``: over the sentences matched to one another but not kept word for word, the most content
    words (counted with repeats) one of the two has and the other lacks (a clause taken out of a sentence: "If
    both aquariums have the same number of fish in them, how many fish ..." | "How many fish ..."); ``swapped_words``:
    whether two such sentences have the same words in another order ("final ... initial" | "initial ...
    final"); ``values_swapped``: the quantities the alignment pairs with one another whose values trade places in
    sentences that are otherwise the same ("bought 4 items ... cost $3" | "bought 3 items ... cost $4": the same
    values, in other roles)."""

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
    implied: tuple[Fraction, ...] = ()
    in_words: tuple[Fraction, ...] = ()
    kept_share: float = 0.0
    changed_new_words: int = 0
    question_new_words: int = 0
    changed_words: int = 0
    swapped_words: bool = False
    dimensions_differ: int = 0
    values_swapped: int = 0

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
            "implied": [str(v) for v in self.implied],
            "in_words": [str(v) for v in self.in_words],
            "kept_share": round(self.kept_share, 4),
            "changed_new_words": self.changed_new_words,
            "question_new_words": self.question_new_words,
            "changed_words": self.changed_words,
            "swapped_words": self.swapped_words,
            "dimensions_differ": self.dimensions_differ,
            "values_swapped": self.values_swapped,
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
    converted = units_matched = units_differ = dimensions_differ = 0
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
            dimensions = {_dimension(match.a.unit), _dimension(match.b.unit)}
            dimensions_differ += None not in dimensions and len(dimensions) == 2
    unread_a, unread_b = _unread_numerals(graph_a), _unread_numerals(graph_b)
    extra_a, extra_b = values_a - values_b, values_b - values_a
    kept_share, changed_new_words = _kept_and_new_words(alignment)
    changed_words, swapped_words = _changed_words(alignment)
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
            for graph, extra in ((graph_a, extra_a), (graph_b, extra_b))
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
        edit_new_words=changed_new_words if kept_share >= 0.5 else 0,
        formulas=formulas,
        implied=_implied(graph_a, graph_b, extra_a, extra_b),
        in_words=tuple(
            sorted(
                v
                for graph, extra in ((graph_a, extra_a), (graph_b, extra_b))
                for v in extra.elements()
                if any(q.value == v and q.form == "word" for q in graph.quantities())
            )
        ),
        kept_share=kept_share,
        changed_new_words=changed_new_words,
        question_new_words=_question_new_words(alignment),
        changed_words=changed_words,
        swapped_words=swapped_words,
        dimensions_differ=dimensions_differ,
        values_swapped=_values_swapped(alignment, graph_a, graph_b),
    )


def _values_swapped(alignment, graph_a, graph_b) -> int:
    """The quantities the alignment finds swapped ("bought 4 items ... cost $3" | "bought 3 items ... cost $4") whose
    sentences are the same on both sides but for their numbers: an edit that moved values between roles, not a
    rewording that the alignment paired by position ("Bob is 75 miles ahead ..., driving 55 miles per hour" | "Tom
    is trailing Bob by 75 miles. ... Tom's speed is 70 miles per hour": no swap)."""
    from mathgraph.parsers.quantities import problem_sentences

    def sentence_words(graph, quantity) -> list[str]:
        sentence = next((s for s in problem_sentences(graph) if s.span[0] <= quantity.span[0] < s.span[1]), None)
        return _NUMERAL.sub("#", sentence.text.lower()).split() if sentence is not None else []

    return sum(
        match.kind == "swapped" and sentence_words(graph_a, match.a) == sentence_words(graph_b, match.b) != []
        for match in alignment.quantities
    )


def _unread_numerals(graph) -> Counter:
    """The numerals of the problem's text outside every quantity the reader took (years, names, ordinals)."""
    spans = [q.span for q in graph.quantities()]
    return Counter(m.group(0) for m in _NUMERAL.finditer(graph.text) if not any(a <= m.start() < b for a, b in spans))


def _kept_and_new_words(alignment) -> tuple[float, int]:
    """The share of sentences kept word for word (of the problem with more sentences) and the most distinct
    words (not English stop words) that the sentences not kept on one side bring and the other problem never
    uses (0 where no sentence is kept: a text reworded throughout)."""
    from mathgraph.models.tfidf_features import ENGLISH_STOP_WORDS

    kept = [m for m in alignment.sentences if m.kind in ("kept", "moved") and not m.changes]
    share = len(kept) / max(len(alignment.sentences_a), len(alignment.sentences_b), 1)
    if not kept:
        return share, 0
    kept_a, kept_b = {m.a for m in kept}, {m.b for m in kept}
    most = 0
    for own, kept_own, other in (
        (alignment.sentences_a, kept_a, alignment.sentences_b),
        (alignment.sentences_b, kept_b, alignment.sentences_a),
    ):
        known = {w for sentence in other for w in _prose_words(sentence.text)} | ENGLISH_STOP_WORDS
        words = {w for k, sentence in enumerate(own) if k not in kept_own for w in _prose_words(sentence.text)}
        most = max(most, len(words - known))
    return share, most


def _changed_words(alignment) -> tuple[int, bool]:
    """Over the pairs of matched sentences that are not word for word the same, the most content words (not
    English stop words, with repeats, outside formulas) one sentence has and the other lacks, and whether two
    of them have the same words in another order ("If his final weight was 100 pounds, what was his initial
    weight?" | "If his initial weight ... final weight?") or the same content words with one of them said in
    another place ("If the number of misses is 50, how many hits and misses ...?" | "If the number of hits is
    50, how many hits and misses ...?")."""
    from mathgraph.models.tfidf_features import ENGLISH_STOP_WORDS

    most, swapped = 0, False
    for m in alignment.sentences:
        if m.a is None or m.b is None or (m.kind in ("kept", "moved") and not m.changes):
            continue
        words_a, words_b = (
            _prose_words(s[k].text) for s, k in ((alignment.sentences_a, m.a), (alignment.sentences_b, m.b))
        )
        content_a, content_b = (
            [_word_stem(w) for w in words if w not in ENGLISH_STOP_WORDS] for words in (words_a, words_b)
        )
        swapped = swapped or (words_a != words_b and sorted(words_a) == sorted(words_b))
        # the same content words, one of them said in another place: what a number counts moved to another word
        swapped = swapped or (content_a != content_b and set(content_a) == set(content_b))
        a, b = Counter(content_a), Counter(content_b)
        most = max(most, (a - b).total(), (b - a).total())
    return most, swapped


def _prose_words(text: str) -> list[str]:
    """The words of ``text`` outside its formulas, lower-cased."""
    return _WORD.findall(_MATH.sub(" ", text).lower())


def _asking_words(sentences) -> set[str] | None:
    """The content words (stems, not English stop words) of the asking part of the question among
    ``sentences``: from its first "how", "what"... on, or all of it after its first word ("Find ...",
    "Calculate ..."); None without a question."""
    from mathgraph.models.tfidf_features import ENGLISH_STOP_WORDS

    question = next((s.text for s in sentences if s.is_question), None)
    if question is None:
        return None
    found = _ASKING.search(question)
    asking = question[found.start() :] if found else question.split(maxsplit=1)[-1]
    return {_word_stem(w) for w in _prose_words(asking) if w not in ENGLISH_STOP_WORDS}


def _question_new_words(alignment) -> int:
    """The most content words of one question's asking part (``_asking_words``) the other's does not use."""
    a, b = _asking_words(alignment.sentences_a), _asking_words(alignment.sentences_b)
    return 0 if a is None or b is None else max(len(a - b), len(b - a))


def _time_of(quantity) -> tuple[str, Fraction] | None:
    """How long ``quantity`` is, as (scale, amount) of ``_TIME_UNITS``, where its unit (or, with none, what it
    counts: "half of the year") is a unit of time; else None."""
    unit = _word_stem(quantity.unit or quantity.object or "")
    unit = {"hrs": "hr", "mins": "min", "secs": "sec", "centurie": "century"}.get(unit, unit)
    if unit not in _TIME_UNITS:
        return None
    scale, length = _TIME_UNITS[unit]
    return scale, quantity.value * length


def _implied_values(text: str) -> list[tuple[Fraction, tuple[str, Fraction] | None]]:
    """The numbers ``text`` implies without writing one (``_IMPLIED``), each with its length in time or None."""
    found = []
    for pattern, value, unit in _IMPLIED:
        for match in pattern.finditer(text.lower()):
            word = unit or (match.group(1) if pattern.groups else None)
            time = None
            if word is not None:
                scale, length = _TIME_UNITS[word]
                time = (scale, Fraction(value * length))
            found.append((Fraction(value), time))
    return found


def _implied(graph_a, graph_b, extra_a: Counter, extra_b: Counter) -> tuple[Fraction, ...]:
    """The values of ``extra_a`` (stated by ``graph_a`` only) and ``extra_b`` that the other side says another
    way: the same length of time in another unit, stated on that side only too ("30 minutes" | "half an hour"),
    or implied there without a number (``_implied_values``: "an hour" for 60 minutes, "both" for two; a value 1
    said with an article or "each": ``_single_on_other_side``), and counts in words of the people named ("the
    three of them": ``_GROUP_COUNT``), which need nothing on the other side."""

    def leftovers(graph, extra: Counter) -> list:
        out, wanted = [], Counter(extra)
        for q in reversed(graph.quantities()):
            if wanted[q.value] > 0:
                wanted[q.value] -= 1
                out.append(q)
        return out

    left_a, left_b = leftovers(graph_a, extra_a), leftovers(graph_b, extra_b)
    explained: list[Fraction] = []
    for qa in list(left_a):  # the same time in two units, each stated on one side only
        time = _time_of(qa)
        match = next((qb for qb in left_b if time is not None and _time_of(qb) == time), None)
        if match is not None:
            left_a.remove(qa)
            left_b.remove(match)
            explained += [qa.value, match.value]
    for left, own, other in ((left_a, graph_a, graph_b), (left_b, graph_b, graph_a)):
        offers = _implied_values(other.text)
        singles: dict[str, int] = {}  # "a"/"each" ... phrases already taken by a value 1, by noun
        for q in left:
            time = _time_of(q)
            offer = next(
                (o for o in offers if (o[1] == time if o[1] is not None else q.value == o[0] and time is None)), None
            )
            if offer is not None:
                offers.remove(offer)
                explained.append(q.value)
            elif q.value == 1 and _single_on_other_side(q, own.text, other.text, singles):
                explained.append(q.value)
            elif (
                q.form == "word"
                and _GROUP_COUNT.match(own.text[q.span[1] :])
                and _GROUP_BEFORE.search(own.text[: q.span[0]])
            ):
                explained.append(q.value)
    return tuple(sorted(explained))


def _single_on_other_side(quantity, own_text: str, other_text: str, taken: dict[str, int]) -> bool:
    """Whether ``other_text`` says one of what ``quantity`` (a value 1 of ``own_text``: "1 mile", "One ballet
    class") counts with an article or "each", "every", "per" instead ("each mile", "a ballet class"), in a
    phrase that ``own_text`` does not have as well ("he buys 1 cow" is not explained by "5 liters from a cow"
    when both sides say "from a cow") and that no other value took (``taken``: phrases used, by noun)."""
    noun = (quantity.unit or quantity.object or "").split()
    if not noun or not noun[-1].isalpha():
        return False
    stem = _word_stem(noun[-1])
    pattern = re.compile(rf"\b(?:a|an|each|every|per)\s+(?:[\w'-]+\s+){{0,2}}?{re.escape(stem)}(?:s|es)?\b", re.I)
    spare = len(pattern.findall(other_text)) - len(pattern.findall(own_text)) - taken.get(stem, 0)
    if spare > 0:
        taken[stem] = taken.get(stem, 0) + 1
    return spare > 0


def _one_sided_new_words(alignment) -> int:
    """Where the alignment only inserts sentences (or only deletes them), how many distinct words of those
    sentences (not English stop words) the other problem does not use in any inflection (``_word_forms``:
    "fence" is in "fences", "build" in "building"); 0 where it does both or neither."""
    inserted = [alignment.sentences_b[m.b].text for m in alignment.sentences if m.kind == "inserted"]
    deleted = [alignment.sentences_a[m.a].text for m in alignment.sentences if m.kind == "deleted"]
    if bool(inserted) == bool(deleted):
        return 0
    one_side, other = (inserted, alignment.sentences_a) if inserted else (deleted, alignment.sentences_b)
    from mathgraph.models.tfidf_features import ENGLISH_STOP_WORDS

    known = {v for sentence in other for w in _WORD.findall(sentence.text.lower()) for v in _word_forms(w)}
    known |= ENGLISH_STOP_WORDS
    words = {w for text in one_side for w in _WORD.findall(text.lower())}
    return sum(not (_word_forms(w) & known) for w in words)


def _word_forms(word: str) -> set[str]:
    """``word`` and what it may be without an ending ("fences" -> "fence", "building" -> "build", "used" ->
    "use"), so that two inflections of one word share a form."""
    forms = {word}
    for ending, add in (("s", ""), ("es", ""), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("d", "")):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            forms.add(word[: -len(ending)] + add)
    return forms


def _word_stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _dimension(unit: str) -> str | None:
    """What ``unit`` measures (``_DIMENSIONS``: money, length, time, mass, volume), or None when not known."""
    unit = unit.lower().strip()
    return _DIMENSIONS.get(unit, _DIMENSIONS.get(_word_stem(unit)))


def decide(evidence: PairEvidence, settings: DedupeSettings = DedupeSettings()) -> tuple[bool, str]:
    """``(same, rule)``: whether the two problems of ``evidence`` are one problem under ``settings``, and the
    rule that decided, checked in this order. Not the same: ``formulas`` (a formula added, removed or edited
    beyond renamed variables), ``quantities`` (other values, once those said another way are set aside where
    ``implied_values`` asks), ``values swapped`` (the same values in other roles), ``written another way``
    (``distinct_forms``), ``numbers set
    aside`` (``check_unread``), ``units`` (equal values measuring different things, "4 years" | "4 feet",
    always; any other unit with ``check_units``),
    ``question`` (missing on one side, or below ``min_question_similarity``), ``question asks another thing``
    (``max_question_words``, an edited copy), ``sentence on one side`` (``one_sided_sentences``), ``edited
    sentences`` (``max_edit_words``: an edited copy whose changed sentences bring more new words, or that has a
    sentence on one side only while keeping at least ``ONE_SIDED_KEPT_SHARE`` of its sentences), ``clause added
    or taken out`` (``max_changed_words``, an edited copy), ``words swapped`` (an edited copy), ``sentences`` (``check_sentences``). The same: ``same quantities``, ``same
    quantities, some said another way`` or ``same quantities but small numbers in words`` (``small_numbers``),
    each with ``, renamed variables`` where the formulas only differ in those. An *edited copy* keeps at least
    ``min_kept_share`` of its sentences word for word."""
    e, s = evidence, settings
    if e.formulas == "differ":
        return False, "formulas"
    left = Counter(e.only_one_side)
    if s.implied_values:
        left -= Counter(e.implied)
    in_words = Counter(e.in_words)
    small = all(v.denominator == 1 and 0 <= v <= s.small_value and n <= in_words[v] for v, n in left.items())
    if left and not (small and left.total() <= s.small_numbers):
        return False, "quantities"
    if e.values_swapped:
        return False, "values swapped"
    if s.distinct_forms and e.converted:
        return False, "written another way"
    if s.check_unread and e.unread_differ:
        return False, "numbers set aside"
    edited = e.kept_share > 0 and e.kept_share >= s.min_kept_share
    if e.dimensions_differ or (s.check_units and e.units_differ):
        return False, "units"
    if (s.require_question and e.question in ("missing", "added")) or (
        e.question == "changed" and e.question_similarity < s.min_question_similarity
    ):
        return False, "question"
    if s.max_question_words is not None and edited and e.question_new_words > s.max_question_words:
        return False, "question asks another thing"
    if s.one_sided_sentences and e.one_sided_new_words >= ONE_SIDED_NEW_WORDS:
        return False, "sentence on one side"
    one_sided = (e.sentences_inserted > 0) != (e.sentences_deleted > 0) and e.kept_share >= ONE_SIDED_KEPT_SHARE
    if s.max_edit_words is not None and edited and (e.changed_new_words > s.max_edit_words or one_sided):
        return False, "edited sentences"
    if s.max_changed_words is not None and edited and e.changed_words > s.max_changed_words:
        return False, "clause added or taken out"
    if edited and e.swapped_words:
        return False, "words swapped"
    if s.check_sentences and (e.inserted_with_quantities or e.deleted_with_quantities):
        return False, "sentences"
    if not left and not e.only_one_side:
        rule = "same quantities"
    elif not left:
        rule = "same quantities, some said another way"
    else:
        rule = "same quantities but small numbers in words"
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
    if len(unique) > 1 and choose_index_type("auto", len(unique)) in APPROXIMATE_TYPES:
        import_faiss()  # a bank this large is searched approximately: FaissMissing before the encoding's hours
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
