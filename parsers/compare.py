"""What changed between two problems, read off their math syntax graphs.

``align_problems(graph_a, graph_b)`` (graphs, or the texts to parse) matches

* sentences: ``kept`` (the same text, in order), ``changed`` (mostly the same words, in order; what changed
  is named: ``case``, ``punctuation``, ``numbers``, ``words: 'gives away' -> 'receives'``), ``moved`` (the
  same sentence, perhaps with other numbers, case or punctuation, at another place), ``inserted`` (only in
  b), ``deleted`` (only in a);
* quantities: ``same`` value (its form may change: ``three`` -> ``3``), ``changed`` value at the same place
  (its sentence's match, or the same unit and object), ``swapped`` (two places that traded values:
  ``5 apples and 7 pears`` -> ``7 apples and 5 pears``), ``new`` in b, ``removed`` from a; a changed value
  notes its form change (``integer -> decimal``) and whether it grew by a power of ten (more digits);
* the question sentence: ``same``, ``changed`` (with its changed words), ``missing`` (in b, not a),
  ``added`` or ``none``;
* formulas: each formula of a paired with one of b, with a tree-edit summary (node labels kept, changed,
  added, removed).

Two problems whose texts differ at most in whitespace are ``same_problem``: ``compared_relations`` then
gives the relation ``"same problem"`` instead of asking a QRC model to name one.

How: nothing compares every sentence (or quantity) with every other (``parsers.matching``). Sentences are
hashed: equal texts pair by occurrence, and the heaviest chain of those pairs in order is kept (the rest
moved); between two kept sentences, candidates come from shared rare words, equal word keys and the
diagonal, and the most similar chain of them in order is changed; what is left pairs with an equal word
key anywhere (moved). Quantities are matched once, optimally (the most weight in total: same place, same
unit and object, same value, same order, nearest), among candidates indexed by sentence pair, by value and
by unit and object. Each step treats a and b alike, so aligning b with a gives the mirror image.

The result explains itself in words (``explain()``) and gives a fixed-length vector of named features
(``ALIGNMENT_FEATURES``, ``feature_vector()``) for the pair models; a moved sentence counts there as kept
(unchanged) or changed, a swapped quantity as changed. ``align_solution`` (a question and its solution)
lives in ``parsers/solution.py`` and is re-exported here.

Nothing here raises on odd input: an empty problem, one with no quantities, or with formulas that did not
parse gives an alignment whose ``notes`` say what was degraded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph, Quantity
from mathgraph.parsers.matching import (
    DIAGONAL_WIDTH,
    band_pairs,
    best_chain,
    max_weight_matching,
    occurrence_pairs,
    tie_breaker,
)
from mathgraph.parsers.quantities import ProblemSentence, problem_sentences
from mathgraph.parsers.sentence_alignment import SentenceMatch, align_sentences, question_kind, sentence_words
from mathgraph.parsers.solution import SOLUTION_FEATURES, SolutionAlignment, align_solution

__all__ = [
    "align_problems",
    "align_solution",
    "align_texts",
    "compared_relations",
    "describe_relation",
    "ProblemAlignment",
    "SolutionAlignment",
    "SentenceMatch",
    "QuantityMatch",
    "FormulaMatch",
    "ALIGNMENT_FEATURES",
    "SOLUTION_FEATURES",
    "SAME_PROBLEM",
]

SENTENCE_KINDS = ("kept", "changed", "moved", "inserted", "deleted")
QUANTITY_KINDS = ("same", "changed", "swapped", "new", "removed")
QUESTION_KINDS = ("same", "changed", "missing", "added", "none")
SAME_PROBLEM = "same problem"  # the relation of two problems whose texts differ at most in whitespace
# What a quantity pair weighs (``_align_quantities``): its place decides before its value (5 apples and 7 pears
# -> 7 apples and 5 pears is two swapped values, not two kept), and in a sentence the order between equal
# values before unit and object (105 members -> 1.05 times of one hundred members: 105 -> 1.05). Equal values
# in order, then nearness in the text, break ties (below one point).
SAME_SENTENCE, SAME_ORDER, SAME_ROLE, SAME_PART_OF_ROLE, SAME_VALUE = 8, 5, 4, 1, 3
NEARNESS_UNITS = 1_000_000
ALIGNMENT_FEATURES = (
    "sentences_a",
    "sentences_b",
    "sentences_kept",
    "sentences_changed",
    "sentences_inserted",
    "sentences_deleted",
    "share_sentences_kept",
    "inserted_with_quantities",
    "deleted_with_quantities",
    "inserted_words",
    "quantities_a",
    "quantities_b",
    "quantities_same",
    "quantities_changed",
    "quantities_new",
    "quantities_removed",
    "share_quantities_same",
    "same_value_other_form",
    "changed_same_role",
    "changed_power_of_ten",
    "changed_more_digits",
    "changed_fewer_digits",
    "changed_to_decimal",
    "changed_to_fraction",
    "changed_to_percent",
    "changed_from_non_integer",
    "non_integers_a",
    "non_integers_b",
    "new_in_question",
    "removed_from_question",
    "new_outside_question",
    "removed_outside_question",
    "question_same",
    "question_changed",
    "question_missing",
    "question_added",
    "question_similarity",
    "question_quantities_a",
    "question_quantities_b",
    "word_overlap",
    "words_only_in_b",
    "words_only_in_a",
    "length_ratio",
    "character_similarity",
    "formulas_a",
    "formulas_b",
    "formulas_same",
    "formula_label_edits",
    "formulas_unparsed",
)


@dataclass(frozen=True)
class QuantityMatch:
    """A quantity of a matched to one of b; ``form_change`` is ``"integer -> decimal"`` or ``None``."""

    kind: str
    a: Quantity | None
    b: Quantity | None
    form_change: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready: the kind, both quantities (``Quantity.to_dict``) and the form change."""
        return {
            "kind": self.kind,
            "a": None if self.a is None else self.a.to_dict(),
            "b": None if self.b is None else self.b.to_dict(),
            "form_change": self.form_change,
        }


@dataclass(frozen=True)
class FormulaMatch:
    """Formula ``a`` of the first problem paired with formula ``b`` of the second, with its label edits."""

    a: int | None
    b: int | None
    kept: int
    changed: int
    added: int
    removed: int

    @property
    def same(self) -> bool:
        return self.changed == self.added == self.removed == 0


@dataclass(frozen=True)
class ProblemAlignment:
    """The alignment of two problems (see the module docstring); ``same_problem`` when their texts differ at
    most in whitespace, ``question_changes`` what changed in a changed question (``SentenceMatch.changes``)."""

    sentences_a: tuple[ProblemSentence, ...]
    sentences_b: tuple[ProblemSentence, ...]
    sentences: tuple[SentenceMatch, ...]
    quantities: tuple[QuantityMatch, ...]
    question: str
    question_similarity: float
    formulas: tuple[FormulaMatch, ...]
    features: dict[str, float]
    notes: tuple[str, ...] = ()
    same_problem: bool = False
    question_changes: tuple[str, ...] = ()

    def feature_vector(self) -> list[float]:
        """The features in ``ALIGNMENT_FEATURES`` order."""
        return [float(self.features[name]) for name in ALIGNMENT_FEATURES]

    def word_changes(self) -> list[str]:
        """The changed words of every changed or moved sentence (``"'gives away' -> 'receives'"``), in order."""
        return [
            change.removeprefix("words: ")
            for match in self.sentences
            for change in match.changes
            if change.startswith("words: ")
        ]

    def only_words_changed(self) -> bool:
        """Whether words changed and nothing else did: every quantity the same, no sentence inserted or deleted
        (a change no relation names for certain: ``gives away`` -> ``receives`` turns the problem around)."""
        return (
            bool(self.word_changes())
            and all(m.kind == "same" for m in self.quantities)
            and not any(m.kind in ("inserted", "deleted") for m in self.sentences)
        )

    def explain(self) -> str:
        """The differences in words, one line each."""
        lines = ["the same problem: the texts differ at most in whitespace"] if self.same_problem else []
        counts = Counter(m.kind for m in self.sentences)
        lines.append("sentences: " + (", ".join(f"{counts[k]} {k}" for k in SENTENCE_KINDS if counts[k]) or "none"))
        for match in self.sentences:
            a = self.sentences_a[match.a].text if match.a is not None else ""
            b = self.sentences_b[match.b].text if match.b is not None else ""
            changes = "; ".join(match.changes)
            if match.kind == "inserted":
                lines.append(f"  + inserted: {b!r}")
            elif match.kind == "deleted":
                lines.append(f"  - deleted: {a!r}")
            elif match.kind == "changed":
                lines.append(f"  ~ changed: {a!r} -> {b!r} ({changes})")
            elif match.kind == "moved":
                where = f"sentence {match.a + 1} -> {match.b + 1}"
                lines.append(
                    f"  > moved: {a!r} ({where})" if not changes else f"  > moved: {a!r} -> {b!r} ({where}; {changes})"
                )
        question = f"question: {self.question}"
        if self.question == "changed":
            question += f" ({'; '.join(self.question_changes)})" if self.question_changes else ""
            if self.question_similarity == 0:
                question += "; no words in common: reworded, or another question"
        lines.append(question)
        counts_q = Counter(m.kind for m in self.quantities)
        lines.append(
            "quantities: " + (", ".join(f"{counts_q[k]} {k}" for k in QUANTITY_KINDS if counts_q[k]) or "none")
        )
        for match in self.quantities:
            if match.kind == "same" and match.form_change is None:
                continue
            a = f"{match.a.text!r} ({_value_text(match.a.value)})" if match.a else ""
            b = f"{match.b.text!r} ({_value_text(match.b.value)})" if match.b else ""
            form = f", {match.form_change}" if match.form_change else ""
            lines.append(
                {
                    "same": f"  = {a} written as {b}{form}",
                    "changed": f"  ~ {a} -> {b}{form}",
                    "swapped": f"  x {a} -> {b}{form} (values swapped)",
                    "new": f"  + new quantity {b}",
                    "removed": f"  - removed quantity {a}",
                }[match.kind]
            )
        edited = [m for m in self.formulas if not m.same]
        if self.formulas:
            lines.append(f"formulas: {len(self.formulas) - len(edited)} same, {len(edited)} edited")
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """A JSON-ready summary: matches, the question, formula edits, features and notes."""
        return {
            "same_problem": self.same_problem,
            "sentences": [
                {"kind": m.kind, "a": m.a, "b": m.b, "similarity": round(m.similarity, 4), "changes": list(m.changes)}
                for m in self.sentences
            ],
            "sentence_spans_a": [list(s.span) for s in self.sentences_a],
            "sentence_spans_b": [list(s.span) for s in self.sentences_b],
            "quantities": [m.to_dict() for m in self.quantities],
            "question": self.question,
            "question_similarity": round(self.question_similarity, 4),
            "question_changes": list(self.question_changes),
            "word_changes": self.word_changes(),
            "only_words_changed": self.only_words_changed(),
            "formulas": [
                {"a": m.a, "b": m.b, "kept": m.kept, "changed": m.changed, "added": m.added, "removed": m.removed}
                for m in self.formulas
            ],
            "features": {k: round(float(v), 6) for k, v in self.features.items()},
            "notes": list(self.notes),
            "explanation": self.explain(),
        }


def align_problems(graph_a: MathSyntaxGraph | str, graph_b: MathSyntaxGraph | str) -> ProblemAlignment:
    """Align two problems: sentences, quantities, the question and formulas (module docstring). Each problem
    is its graph (``parse_problem``) or its text, parsed here; anything else is a ``TypeError``."""
    graph_a, graph_b = _as_graph(graph_a, "a"), _as_graph(graph_b, "b")
    sentences_a, sentences_b = problem_sentences(graph_a), problem_sentences(graph_b)
    words_a, words_b = sentence_words(graph_a, sentences_a), sentence_words(graph_b, sentences_b)
    sentence_matches = align_sentences(sentences_a, sentences_b, words_a, words_b)
    quantity_matches = _align_quantities(graph_a, graph_b, sentences_a, sentences_b, sentence_matches)
    question, question_similarity, question_changes = question_kind(sentences_a, sentences_b, words_a, words_b)
    formula_matches = _align_formulas(graph_a, graph_b)
    notes = []
    for name, graph, sentences in (("a", graph_a, sentences_a), ("b", graph_b, sentences_b)):
        if not graph.quantities():
            notes.append(f"problem {name} states no quantities")
        unparsed = sum(f.status != "ok" for f in graph.formulas)
        if unparsed:
            notes.append(f"problem {name}: {unparsed} formula(s) did not parse fully; their trees are partial")
        if not sentences:
            notes.append(f"problem {name} has no sentences")
    features = _features(
        graph_a,
        graph_b,
        sentences_a,
        sentences_b,
        words_a,
        words_b,
        sentence_matches,
        quantity_matches,
        question,
        question_similarity,
        formula_matches,
    )
    return ProblemAlignment(
        tuple(sentences_a),
        tuple(sentences_b),
        tuple(sentence_matches),
        tuple(quantity_matches),
        question,
        question_similarity,
        tuple(formula_matches),
        features,
        tuple(notes),
        same_problem=graph_a.text.split() == graph_b.text.split(),
        question_changes=question_changes,
    )


def align_texts(
    pairs: Sequence[tuple[str, str]], solution: bool = False, show_progress: bool = False
) -> list[ProblemAlignment | SolutionAlignment]:
    """``align_problems`` of each ``(text_a, text_b)`` pair of texts, or with ``solution``, ``align_solution``
    of each (question, solution). The problems are parsed in one call through the graph cache
    (``parsers.graph_cache``), so a text in several pairs is parsed once, and a model that reads the same
    problems later finds their graphs there; a solution is read as text (its steps), not parsed."""
    from mathgraph.parsers.graph_cache import parse_cached

    pairs = [tuple(pair) for pair in pairs]
    if solution:
        graphs = parse_cached([a for a, _ in pairs], show_progress=show_progress)
        return [align_solution(graph, b) for graph, (_, b) in zip(graphs, pairs)]
    graphs = parse_cached([text for pair in pairs for text in pair], show_progress=show_progress)
    return [align_problems(graphs[2 * i], graphs[2 * i + 1]) for i in range(len(pairs))]


def compared_relations(
    alignments: Sequence[ProblemAlignment], pairs: Sequence[tuple[str, str]], predict: Callable[[list], list[dict]]
) -> list[dict]:
    """The relation of each compared pair, as ``mathgraph compare`` and the server give it: ``{"label":
    "same problem", "probabilities": {"same problem": 1.0}}`` where the alignment found the same problem (the
    model is not asked: any relation it named would be wrong), else the QRC model's ``{label, probabilities}``
    from ``predict`` (a list of pairs -> a list of results), called once for all the other pairs."""
    asked = [k for k, alignment in enumerate(alignments) if not alignment.same_problem]
    results = iter(predict([tuple(pairs[k]) for k in asked]) if asked else [])
    return [
        {"label": SAME_PROBLEM, "probabilities": {SAME_PROBLEM: 1.0}}
        if alignment.same_problem
        else {"label": (result := next(results))["label"], "probabilities": result["probabilities"]}
        for alignment in alignments
    ]


def describe_relation(alignment: dict, relation: dict | None) -> list[str]:
    """The relation of a comparison in words (``to_dict`` forms of the alignment and of the relation): the same
    problem as a fact; otherwise the model's likeliest relation as a probability, not a verdict, with the
    runner-up, and, where only words changed (a change no relation names for certain), those words first."""
    if relation is None:
        return []
    if relation["label"] == SAME_PROBLEM:
        return ["relation: the same problem (the texts differ at most in whitespace); no QRC relation to predict"]
    lines = []
    if alignment.get("only_words_changed"):
        lines.append(
            "only words changed: " + "; ".join(alignment["word_changes"]) + " (no relation names that for certain)"
        )
    ranked = sorted(relation["probabilities"].items(), key=lambda item: -item[1])
    text = f"QRC model: {relation['label']}, probability {relation['probabilities'][relation['label']]:.4f}"
    runner_up = next(((label, p) for label, p in ranked if label != relation["label"]), None)
    if runner_up is not None:
        text += f" (next: {runner_up[0]}, {runner_up[1]:.4f})"
    return [*lines, text]


def _as_graph(problem: object, name: str) -> MathSyntaxGraph:
    """``problem`` as a graph: itself, or its text parsed; a clear ``TypeError`` for anything else."""
    if isinstance(problem, MathSyntaxGraph):
        return problem
    if isinstance(problem, str):
        from mathgraph.parsers.problem import parse_problem

        return parse_problem(problem)
    raise TypeError(
        f"align_problems compares two problems, each a parsed graph (mathgraph.parse_problem) or its text; "
        f"problem {name} is a {type(problem).__name__}"
    )


def _value_text(value: Fraction) -> str:
    """``value`` as ``str`` writes it, or its size where it has too many digits to print."""
    if max(abs(value.numerator), value.denominator).bit_length() > 3000:  # ~900 digits
        return f"a number of {_digit_count(abs(value.numerator) // value.denominator)} digits"
    return str(value)


# ----------------------------------------------------------------- quantities
def _align_quantities(graph_a, graph_b, sentences_a, sentences_b, sentence_matches) -> list[QuantityMatch]:
    """The heaviest one-to-one matching of a's quantities with b's (``parsers.matching.max_weight_matching``).

    A pair may match when the two are in matched sentences, have the same value, or the same unit and
    object; it weighs ``SAME_SENTENCE`` + ``SAME_ORDER`` (in order between equal values: ``_in_order``) +
    ``SAME_ROLE`` (or ``SAME_PART_OF_ROLE``: ``_role_score``) + ``SAME_VALUE`` for what holds, then
    nearness. Candidates come from indexes (sentence pairs, values, units and objects), near-diagonal where
    a group is large. Matched equal values are ``same``, other matches ``changed``, and two changes that
    trade values ``swapped``."""
    qa, qb = graph_a.quantities(), graph_b.quantities()
    position_a = {s.index: k for k, s in enumerate(sentences_a)}
    position_b = {s.index: k for k, s in enumerate(sentences_b)}
    sentence_a = [position_a.get(q.sentence) for q in qa]
    sentence_b = [position_b.get(q.sentence) for q in qb]
    partner = {m.a: m.b for m in sentence_matches if m.a is not None and m.b is not None}
    by_sentence_a, by_sentence_b = _by_sentence(sentence_a), _by_sentence(sentence_b)

    # plain tuples, compared many times below (Fraction equality is slow)
    value_a = [(q.value.numerator, q.value.denominator) for q in qa]
    value_b = [(q.value.numerator, q.value.denominator) for q in qb]
    candidates: set[tuple[int, int]] = set()
    in_order: set[tuple[int, int]] = set()
    equal_in_order: set[tuple[int, int]] = set()
    for k_a, k_b in partner.items():
        ia, ib = by_sentence_a.get(k_a, []), by_sentence_b.get(k_b, [])
        candidates.update((ia[p], ib[q]) for p, q in band_pairs(len(ia), len(ib), DIAGONAL_WIDTH))
        equal, between = _in_order(ia, ib, value_a, value_b)
        equal_in_order.update(equal)
        in_order.update(between)
    candidates |= in_order | equal_in_order
    role_a = [(q.unit, q.object) if _has_role(q) else None for q in qa]
    role_b = [(q.unit, q.object) if _has_role(q) else None for q in qb]
    for keys_a, keys_b in ((value_a, value_b), (role_a, role_b)):
        groups_a: dict = {}
        groups_b: dict = {}
        for groups, keys in ((groups_a, keys_a), (groups_b, keys_b)):
            for k, key in enumerate(keys):
                if key is not None:
                    groups.setdefault(key, []).append(k)
        for key, ia in groups_a.items():  # each quantity with the nearest few of its value (or role) in b
            ib = groups_b.get(key, [])
            candidates.update((ia[p], ib[q]) for p, q in band_pairs(len(ia), len(ib), 1))

    length_a, length_b = max(len(graph_a.text), 1), max(len(graph_b.text), 1)
    place_a = [q.span[0] / length_a for q in qa]
    place_b = [q.span[0] / length_b for q in qb]
    weights = {}
    for i, j in candidates:
        same_place = sentence_a[i] is not None and partner.get(sentence_a[i], -1) == sentence_b[j]
        same_role = role_a[i] is not None and role_a[i] == role_b[j]
        same_value = value_a[i] == value_b[j]
        if not (same_place or same_role or same_value):
            continue
        score = (
            SAME_SENTENCE * same_place
            + SAME_ORDER * ((i, j) in in_order)
            + _role_score(role_a[i], role_b[j])
            + SAME_VALUE * same_value
        )
        # ties: equal values in order first (3 pears and 3 pears: first with first), then nearness; the
        # squared distance, because the absolute one often ties a crossing pairing with the straight one
        nearness = round((1 - (place_a[i] - place_b[j]) ** 2) * (NEARNESS_UNITS // 2 - 1))
        weights[(i, j)] = score * NEARNESS_UNITS + (NEARNESS_UNITS // 2) * ((i, j) in equal_in_order) + nearness
    matched = max_weight_matching(len(qa), len(qb), weights)

    kinds = {(i, j): "same" if qa[i].value == qb[j].value else "changed" for i, j in matched}
    waiting: dict[tuple[Fraction, Fraction], list[tuple[int, int]]] = {}
    for i, j in matched:  # a change x -> y and a change y -> x are a swap
        if kinds[(i, j)] != "changed":
            continue
        x, y = qa[i].value, qb[j].value
        if waiting.get((y, x)):
            other = waiting[(y, x)].pop(0)
            kinds[(i, j)] = kinds[other] = "swapped"
        else:
            waiting.setdefault((x, y), []).append((i, j))
    matched_a, matched_b = {i for i, _ in matched}, {j for _, j in matched}
    result = [QuantityMatch(kinds[(i, j)], qa[i], qb[j], _form_change(qa[i], qb[j])) for i, j in matched]
    result += [QuantityMatch("removed", a, None) for i, a in enumerate(qa) if i not in matched_a]
    result += [QuantityMatch("new", None, b) for j, b in enumerate(qb) if j not in matched_b]
    order = {id(q): k for k, q in enumerate(qa)}
    return sorted(result, key=lambda m: (order.get(id(m.a), len(qa)), m.b.span[0] if m.b else -1))


def _by_sentence(sentence_of: list[int | None]) -> dict[int, list[int]]:
    """Each sentence's quantities, in order."""
    by_sentence: dict[int, list[int]] = {}
    for k, sentence in enumerate(sentence_of):
        if sentence is not None:
            by_sentence.setdefault(sentence, []).append(k)
    return by_sentence


def _in_order(ia: list[int], ib: list[int], value_a: list, value_b: list) -> tuple[list, list]:
    """The pairs of two matched sentences' quantities (``ia``, ``ib``) that keep their order: the equal values
    (the longest chain of them in order), and between two of those the others one to one from the left
    (``105`` -> ``1.05 times of one hundred``: 105 with 1.05)."""
    keys_a, keys_b = [value_a[i] for i in ia], [value_b[j] for j in ib]
    equal = occurrence_pairs(keys_a, keys_b)
    weights = [(1.0, *tie_breaker(p, q, len(ia), len(ib), str(keys_a[p]))) for p, q in equal]
    chain = [equal[k] for k in best_chain(equal, weights)]
    between, previous = [], (-1, -1)
    for p, q in [*chain, (len(ia), len(ib))]:
        for offset in range(min(p - previous[0], q - previous[1]) - 1):
            between.append((ia[previous[0] + 1 + offset], ib[previous[1] + 1 + offset]))
        previous = (p, q)
    return [(ia[p], ib[q]) for p, q in chain], between


def _role_score(a: tuple | None, b: tuple | None) -> int:
    """``SAME_ROLE`` for two ``(unit, object)`` that agree where both say something (``105 members`` and
    ``1.05 times of one hundred members``), ``SAME_PART_OF_ROLE`` where one of the two agrees, else 0."""
    if a is None or b is None:
        return 0
    agree = [x == y for x, y in zip(a, b) if x is not None and y is not None]
    if agree and all(agree):
        return SAME_ROLE
    return SAME_PART_OF_ROLE if any(agree) else 0


def _has_role(q: Quantity) -> bool:
    return (q.unit or q.object) is not None


def _same_role(a: Quantity, b: Quantity) -> bool:
    return _has_role(a) and (a.unit, a.object) == (b.unit, b.object)


def _form_change(a: Quantity, b: Quantity) -> str | None:
    return None if a.form == b.form else f"{a.form} -> {b.form}"


def _digit_count(n: int) -> int:
    """Decimal digits of the integer ``n >= 0``, without ``str`` (which refuses over 4,300 digits)."""
    digits = max(1, int(n.bit_length() * 0.30102999566398120))  # times log10(2): right, or off by one
    while 10**digits <= n:
        digits += 1
    while digits > 1 and 10 ** (digits - 1) > n:
        digits -= 1
    return digits


def _digits(value: Fraction) -> int:
    return _digit_count(abs(value.numerator) // max(value.denominator, 1))


def _is_power_of_ten_growth(a: Fraction, b: Fraction) -> bool:
    if a == 0 or b == 0:
        return False
    ratio = b / a
    return (
        ratio.denominator == 1
        and ratio.numerator >= 10
        and ratio.numerator == 10 ** (_digit_count(ratio.numerator) - 1)
    )


# ------------------------------------------------------------------- formulas
def _formula_labels(graph: MathSyntaxGraph) -> list[Counter]:
    labels = [Counter() for _ in graph.formulas]
    for node in graph.nodes:
        if node.kind == "formula" and node.formula is not None:
            labels[node.formula][node.label] += 1
    return labels


def _align_formulas(graph_a: MathSyntaxGraph, graph_b: MathSyntaxGraph) -> list[FormulaMatch]:
    """Pair formulas in order: equal LaTeX first (the longest chain in order), then the formulas between two
    such pairs one to one; count node-label edits between paired trees.

    The edit summary compares the multisets of tree node labels: ``kept`` labels in both,
    ``changed`` the pairs of a label gone and another come, ``added``/``removed`` the rest.
    """
    latex_a = [f.latex for f in graph_a.formulas]
    latex_b = [f.latex for f in graph_b.formulas]
    n, m = len(latex_a), len(latex_b)
    labels_a, labels_b = _formula_labels(graph_a), _formula_labels(graph_b)
    equal = occurrence_pairs(latex_a, latex_b)
    anchors = [equal[k] for k in best_chain(equal, [(1.0, *tie_breaker(i, j, n, m, latex_a[i])) for i, j in equal])]
    pairs, previous = [], (-1, -1)
    for i_anchor, j_anchor in [*anchors, (n, m)]:
        gap_a, gap_b = range(previous[0] + 1, i_anchor), range(previous[1] + 1, j_anchor)
        for offset in range(max(len(gap_a), len(gap_b))):
            pairs.append(
                (gap_a[offset] if offset < len(gap_a) else None, gap_b[offset] if offset < len(gap_b) else None)
            )
        if i_anchor < n:
            pairs.append((i_anchor, j_anchor))
        previous = (i_anchor, j_anchor)
    matches = []
    for i, j in pairs:
        la = labels_a[i] if i is not None else Counter()
        lb = labels_b[j] if j is not None else Counter()
        kept = sum((la & lb).values())
        gone, come = sum((la - lb).values()), sum((lb - la).values())
        changed = min(gone, come)
        matches.append(FormulaMatch(i, j, kept, changed, come - changed, gone - changed))
    return matches


# ------------------------------------------------------------------- features
def _features(
    graph_a,
    graph_b,
    sentences_a,
    sentences_b,
    words_a,
    words_b,
    sentence_matches,
    quantity_matches,
    question,
    question_similarity,
    formula_matches,
) -> dict[str, float]:
    # a moved sentence counts as kept when its text is, else as changed; a swapped value as a changed one
    kinds = Counter(("kept" if not m.changes else "changed") if m.kind == "moved" else m.kind for m in sentence_matches)
    quantity_kinds = Counter("changed" if m.kind == "swapped" else m.kind for m in quantity_matches)
    qa, qb = graph_a.quantities(), graph_b.quantities()
    position_a = {s.index: k for k, s in enumerate(sentences_a)}
    position_b = {s.index: k for k, s in enumerate(sentences_b)}
    sentences_with_quantities_a = {position_a.get(q.sentence) for q in qa}
    sentences_with_quantities_b = {position_b.get(q.sentence) for q in qb}
    inserted = [m.b for m in sentence_matches if m.kind == "inserted"]
    changed = [m for m in quantity_matches if m.kind in ("changed", "swapped")]
    bag_a, bag_b = Counter(w for ws in words_a for w in ws), Counter(w for ws in words_b for w in ws)
    common = sum((bag_a & bag_b).values())
    total_a, total_b = sum(bag_a.values()), sum(bag_b.values())
    question_a = [q for q in qa if q.in_question]
    question_b = [q for q in qb if q.in_question]
    features = {
        "sentences_a": len(sentences_a),
        "sentences_b": len(sentences_b),
        "sentences_kept": kinds["kept"],
        "sentences_changed": kinds["changed"],
        "sentences_inserted": kinds["inserted"],
        "sentences_deleted": kinds["deleted"],
        "share_sentences_kept": kinds["kept"] / max(len(sentences_a), 1),
        "inserted_with_quantities": sum(j in sentences_with_quantities_b for j in inserted),
        "deleted_with_quantities": sum(
            m.a in sentences_with_quantities_a for m in sentence_matches if m.kind == "deleted"
        ),
        "inserted_words": sum(len(words_b[j]) for j in inserted),
        "quantities_a": len(qa),
        "quantities_b": len(qb),
        "quantities_same": quantity_kinds["same"],
        "quantities_changed": quantity_kinds["changed"],
        "quantities_new": quantity_kinds["new"],
        "quantities_removed": quantity_kinds["removed"],
        "share_quantities_same": quantity_kinds["same"] / max(len(qa), 1),
        "same_value_other_form": sum(m.kind == "same" and m.form_change is not None for m in quantity_matches),
        "changed_same_role": sum(_same_role(m.a, m.b) for m in changed),
        "changed_power_of_ten": sum(_is_power_of_ten_growth(m.a.value, m.b.value) for m in changed),
        "changed_more_digits": sum(_digits(m.b.value) > _digits(m.a.value) for m in changed),
        "changed_fewer_digits": sum(_digits(m.b.value) < _digits(m.a.value) for m in changed),
        "changed_to_decimal": sum(m.b.form == "decimal" and m.a.form != "decimal" for m in changed),
        "changed_to_fraction": sum(m.b.form == "fraction" and m.a.form != "fraction" for m in changed),
        "changed_to_percent": sum(m.b.form == "percent" and m.a.form != "percent" for m in changed),
        "changed_from_non_integer": sum(m.a.value.denominator != 1 for m in changed),
        "non_integers_a": sum(q.value.denominator != 1 for q in qa),
        "non_integers_b": sum(q.value.denominator != 1 for q in qb),
        "new_in_question": sum(m.kind == "new" and m.b.in_question for m in quantity_matches),
        "removed_from_question": sum(m.kind == "removed" and m.a.in_question for m in quantity_matches),
        "new_outside_question": sum(m.kind == "new" and not m.b.in_question for m in quantity_matches),
        "removed_outside_question": sum(m.kind == "removed" and not m.a.in_question for m in quantity_matches),
        "question_same": question == "same",
        "question_changed": question == "changed",
        "question_missing": question == "missing",
        "question_added": question == "added",
        "question_similarity": question_similarity,
        "question_quantities_a": len(question_a),
        "question_quantities_b": len(question_b),
        "word_overlap": common / max(total_a + total_b - common, 1),
        "words_only_in_b": sum((bag_b - bag_a).values()) / max(total_b, 1),
        "words_only_in_a": sum((bag_a - bag_b).values()) / max(total_a, 1),
        "length_ratio": len(graph_b.text) / max(len(graph_a.text), 1),
        "character_similarity": _character_similarity(graph_a.text, graph_b.text),
        "formulas_a": len(graph_a.formulas),
        "formulas_b": len(graph_b.formulas),
        "formulas_same": sum(m.a is not None and m.b is not None and m.same for m in formula_matches),
        "formula_label_edits": sum(m.changed + m.added + m.removed for m in formula_matches),
        "formulas_unparsed": sum(f.status != "ok" for f in (*graph_a.formulas, *graph_b.formulas)),
    }
    return {name: float(features[name]) for name in ALIGNMENT_FEATURES}


def _character_similarity(a: str, b: str) -> float:
    # quick_ratio is an upper bound computed in linear time; a 10,000-character problem stays fast
    return SequenceMatcher(None, a, b, autojunk=True).quick_ratio() if a or b else 1.0
