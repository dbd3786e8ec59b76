"""What changed between two problems, read off their math syntax graphs.

``align_problems(graph_a, graph_b)`` matches

* sentences: ``kept`` (the same text), ``changed`` (mostly the same words, numbers
  aside), ``inserted``
  (only in b), ``deleted`` (only in a), in order (a monotone alignment);
* quantities: ``same`` value (its form may change: ``three`` -> ``3``), ``changed``
  value in the same place (same sentence pair, or the same unit and object), ``new``
  in b, ``removed`` from a; a changed value notes its form change (``integer ->
  decimal``) and whether it grew by a power of ten (more digits);
* the question sentence: ``same``, ``changed``, ``missing`` (in b, not a), ``added``
  or ``none``;
* formulas: each formula of a paired with the most similar of b, with a tree-edit
  summary (node labels kept, changed, added, removed).

The result explains itself in words (``explain()``) and gives a fixed-length
vector of named features (``ALIGNMENT_FEATURES``, ``feature_vector()``) for the
pair models. ``align_solution`` (a question and its solution) lives in ``parsers/solution.py``
and is re-exported here.

Nothing here raises on odd input: an empty problem, one with no quantities, or
with formulas that did not parse gives an alignment whose ``notes`` say what was
degraded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph, Quantity
from mathgraph.parsers.quantities import ProblemSentence, parse_number, problem_sentences
from mathgraph.parsers.solution import SOLUTION_FEATURES, SolutionAlignment, align_solution

__all__ = [
    "align_problems",
    "align_solution",
    "align_texts",
    "ProblemAlignment",
    "SolutionAlignment",
    "SentenceMatch",
    "QuantityMatch",
    "FormulaMatch",
    "ALIGNMENT_FEATURES",
    "SOLUTION_FEATURES",
]

SENTENCE_KINDS = ("kept", "changed", "inserted", "deleted")
QUANTITY_KINDS = ("same", "changed", "new", "removed")
QUESTION_KINDS = ("same", "changed", "missing", "added", "none")
# Two sentences are "the same sentence, changed" above this share of common words.
CHANGED_SENTENCE_SIMILARITY = 0.5

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
class SentenceMatch:
    """Sentence ``a`` of the first problem matched to sentence ``b`` of the second (``None`` where absent)."""

    kind: str
    a: int | None
    b: int | None
    similarity: float


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
    """The alignment of two problems (see the module docstring)."""

    sentences_a: tuple[ProblemSentence, ...]
    sentences_b: tuple[ProblemSentence, ...]
    sentences: tuple[SentenceMatch, ...]
    quantities: tuple[QuantityMatch, ...]
    question: str
    question_similarity: float
    formulas: tuple[FormulaMatch, ...]
    features: dict[str, float]
    notes: tuple[str, ...] = ()

    def feature_vector(self) -> list[float]:
        """The features in ``ALIGNMENT_FEATURES`` order."""
        return [float(self.features[name]) for name in ALIGNMENT_FEATURES]

    def explain(self) -> str:
        """The differences in words, one line each."""
        lines = []
        counts = Counter(m.kind for m in self.sentences)
        lines.append("sentences: " + ", ".join(f"{counts[k]} {k}" for k in SENTENCE_KINDS if counts[k]))
        for match in self.sentences:
            if match.kind == "inserted":
                lines.append(f"  + inserted: {self.sentences_b[match.b].text!r}")
            elif match.kind == "deleted":
                lines.append(f"  - deleted: {self.sentences_a[match.a].text!r}")
        lines.append(
            f"question: {self.question}"
            + (f" (similarity {self.question_similarity:.2f})" if self.question == "changed" else "")
        )
        counts_q = Counter(m.kind for m in self.quantities)
        lines.append(
            "quantities: " + (", ".join(f"{counts_q[k]} {k}" for k in QUANTITY_KINDS if counts_q[k]) or "none")
        )
        for match in self.quantities:
            if match.kind == "same" and match.form_change is None:
                continue
            a = f"{match.a.text!r} ({match.a.value})" if match.a else ""
            b = f"{match.b.text!r} ({match.b.value})" if match.b else ""
            form = f", {match.form_change}" if match.form_change else ""
            lines.append(
                {
                    "same": f"  = {a} written as {b}{form}",
                    "changed": f"  ~ {a} -> {b}{form}",
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
            "sentences": [
                {"kind": m.kind, "a": m.a, "b": m.b, "similarity": round(m.similarity, 4)} for m in self.sentences
            ],
            "sentence_spans_a": [list(s.span) for s in self.sentences_a],
            "sentence_spans_b": [list(s.span) for s in self.sentences_b],
            "quantities": [m.to_dict() for m in self.quantities],
            "question": self.question,
            "question_similarity": round(self.question_similarity, 4),
            "formulas": [
                {"a": m.a, "b": m.b, "kept": m.kept, "changed": m.changed, "added": m.added, "removed": m.removed}
                for m in self.formulas
            ],
            "features": {k: round(float(v), 6) for k, v in self.features.items()},
            "notes": list(self.notes),
            "explanation": self.explain(),
        }


def align_problems(graph_a: MathSyntaxGraph, graph_b: MathSyntaxGraph) -> ProblemAlignment:
    """Align two problems' graphs: sentences, quantities, the question and formulas (module docstring)."""
    sentences_a, sentences_b = problem_sentences(graph_a), problem_sentences(graph_b)
    words_a = [_sentence_words(graph_a, s.index) for s in sentences_a]
    words_b = [_sentence_words(graph_b, s.index) for s in sentences_b]
    sentence_matches = _align_sentences(words_a, words_b, sentences_a, sentences_b)
    pair_of = {m.a: m.b for m in sentence_matches if m.a is not None and m.b is not None}
    quantity_matches = _align_quantities(graph_a.quantities(), graph_b.quantities(), pair_of)
    question, question_similarity = _question_kind(sentences_a, sentences_b, words_a, words_b)
    formula_matches = _align_formulas(graph_a, graph_b)
    notes = []
    for name, graph in (("a", graph_a), ("b", graph_b)):
        if not graph.quantities():
            notes.append(f"problem {name} states no quantities")
        unparsed = sum(f.status != "ok" for f in graph.formulas)
        if unparsed:
            notes.append(f"problem {name}: {unparsed} formula(s) did not parse fully; their trees are partial")
        if not sentences_a if name == "a" else not sentences_b:
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


# ------------------------------------------------------------------ sentences
def _sentence_words(graph: MathSyntaxGraph, sentence: int) -> list[str]:
    """The sentence's words, lower-cased, numbers as ``#`` (so a changed number keeps the sentence the same)."""
    numbers = {q.node for q in graph.quantities()}
    words = []
    for node in graph.nodes:
        if node.sentence != sentence or node.kind not in ("word", "math") or node.upos == "PUNCT":
            continue
        words.append("#" if node.id in numbers or parse_number(node.label) is not None else node.label)
    return words


def _similarity(a: list[str], b: list[str]) -> float:
    if not a and not b:
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def _align_sentences(words_a, words_b, sentences_a, sentences_b) -> list[SentenceMatch]:
    """A monotone alignment maximising the summed similarity of matched sentences (edit-distance DP)."""
    n, m = len(words_a), len(words_b)
    sim = [[_similarity(words_a[i], words_b[j]) for j in range(m)] for i in range(n)]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            pair = best[i + 1][j + 1] + sim[i][j] if sim[i][j] >= CHANGED_SENTENCE_SIMILARITY else -1.0
            best[i][j] = max(pair, best[i + 1][j], best[i][j + 1])
    matches, i, j = [], 0, 0
    while i < n or j < m:
        if (
            i < n
            and j < m
            and sim[i][j] >= CHANGED_SENTENCE_SIMILARITY
            and best[i][j] == best[i + 1][j + 1] + sim[i][j]
        ):
            same = " ".join(sentences_a[i].text.split()) == " ".join(sentences_b[j].text.split())
            matches.append(SentenceMatch("kept" if same else "changed", i, j, sim[i][j]))
            i, j = i + 1, j + 1
        elif i < n and (j == m or best[i][j] == best[i + 1][j]):
            matches.append(SentenceMatch("deleted", i, None, 0.0))
            i += 1
        else:
            matches.append(SentenceMatch("inserted", None, j, 0.0))
            j += 1
    return matches


def _question_kind(sentences_a, sentences_b, words_a, words_b) -> tuple[str, float]:
    qa = next((s.index for s in sentences_a if s.is_question), None)
    qb = next((s.index for s in sentences_b if s.is_question), None)
    if qa is None and qb is None:
        return "none", 0.0
    if qb is None:
        return "missing", 0.0
    if qa is None:
        return "added", 0.0
    similarity = _similarity(words_a[qa], words_b[qb])
    return ("same" if words_a[qa] == words_b[qb] else "changed"), similarity


# ----------------------------------------------------------------- quantities
def _align_quantities(qa: list[Quantity], qb: list[Quantity], pair_of: dict[int, int]) -> list[QuantityMatch]:
    """In place first, then across the problems.

    Within each pair of matched sentences the quantities are aligned in order: equal values are ``same``,
    and the values between two such anchors are ``changed`` one to one (so ``2000 ... 20000`` -> ``20000 ...
    200000`` is two changes, not one value kept). Then, over what is left, an equal value anywhere is
    ``same`` (a quantity moved or reworded: ``three`` -> ``3``), and a quantity with the same unit and object
    is ``changed``; the rest are ``new`` and ``removed``.
    """
    used_a: set[int] = set()
    used_b: set[int] = set()
    matches: list[tuple[int, int, str]] = []

    def match(i: int, j: int, kind: str) -> None:
        used_a.add(i), used_b.add(j)
        matches.append((i, j, kind))

    in_sentence_a: dict[int | None, list[int]] = {}
    in_sentence_b: dict[int | None, list[int]] = {}
    for i, q in enumerate(qa):
        in_sentence_a.setdefault(q.sentence, []).append(i)
    for j, q in enumerate(qb):
        in_sentence_b.setdefault(q.sentence, []).append(j)
    for sentence_a, sentence_b in pair_of.items():
        ia, ib = in_sentence_a.get(sentence_a, []), in_sentence_b.get(sentence_b, [])
        matcher = SequenceMatcher(None, [qa[i].value for i in ia], [qb[j].value for j in ib], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag in ("equal", "replace"):
                for offset in range(min(i2 - i1, j2 - j1)):
                    match(ia[i1 + offset], ib[j1 + offset], "same" if tag == "equal" else "changed")

    def place_score(a: Quantity, b: Quantity) -> int:
        return (a.unit == b.unit and a.unit is not None) + (a.object == b.object and a.object is not None)

    for i, a in enumerate(qa):
        candidates = [j for j, b in enumerate(qb) if j not in used_b and b.value == a.value]
        if i not in used_a and candidates:
            match(i, max(candidates, key=lambda j: (place_score(a, qb[j]), -abs(j - i))), "same")
    for i, a in enumerate(qa):
        same_role = [j for j, b in enumerate(qb) if j not in used_b and _same_role(a, b)]
        if i not in used_a and same_role:
            match(i, same_role[0], "changed")
    result = [QuantityMatch(kind, qa[i], qb[j], _form_change(qa[i], qb[j])) for i, j, kind in matches]
    result += [QuantityMatch("removed", a, None) for i, a in enumerate(qa) if i not in used_a]
    result += [QuantityMatch("new", None, b) for j, b in enumerate(qb) if j not in used_b]
    order = {id(q): k for k, q in enumerate(qa)}
    return sorted(result, key=lambda m: (order.get(id(m.a), len(qa)), m.b.span[0] if m.b else -1))


def _same_role(a: Quantity, b: Quantity) -> bool:
    return (a.unit or a.object) is not None and (a.unit, a.object) == (b.unit, b.object)


def _form_change(a: Quantity, b: Quantity) -> str | None:
    return None if a.form == b.form else f"{a.form} -> {b.form}"


def _digits(value: Fraction) -> int:
    return len(str(abs(value.numerator) // max(value.denominator, 1)))


def _is_power_of_ten_growth(a: Fraction, b: Fraction) -> bool:
    if a == 0 or b == 0:
        return False
    ratio = b / a
    return ratio.denominator == 1 and ratio.numerator >= 10 and str(ratio.numerator).rstrip("0") == "1"


# ------------------------------------------------------------------- formulas
def _formula_labels(graph: MathSyntaxGraph) -> list[Counter]:
    labels = [Counter() for _ in graph.formulas]
    for node in graph.nodes:
        if node.kind == "formula" and node.formula is not None:
            labels[node.formula][node.label] += 1
    return labels


def _align_formulas(graph_a: MathSyntaxGraph, graph_b: MathSyntaxGraph) -> list[FormulaMatch]:
    """Pair formulas in order by their LaTeX, and count node-label edits between paired trees.

    The edit summary compares the multisets of tree node labels: ``kept`` labels in both,
    ``changed`` the pairs of a label gone and another come, ``added``/``removed`` the rest.
    """
    latex_a = [f.latex for f in graph_a.formulas]
    latex_b = [f.latex for f in graph_b.formulas]
    labels_a, labels_b = _formula_labels(graph_a), _formula_labels(graph_b)
    matches = []
    for _tag, i1, i2, j1, j2 in SequenceMatcher(None, latex_a, latex_b, autojunk=False).get_opcodes():
        for offset in range(max(i2 - i1, j2 - j1)):
            i = i1 + offset if i1 + offset < i2 else None
            j = j1 + offset if j1 + offset < j2 else None
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
    kinds = Counter(m.kind for m in sentence_matches)
    quantity_kinds = Counter(m.kind for m in quantity_matches)
    qa, qb = graph_a.quantities(), graph_b.quantities()
    sentences_with_quantities_a = {q.sentence for q in qa}
    sentences_with_quantities_b = {q.sentence for q in qb}
    inserted = [m.b for m in sentence_matches if m.kind == "inserted"]
    changed = [m for m in quantity_matches if m.kind == "changed"]
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
