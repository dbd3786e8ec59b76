"""Relations a word problem states between its quantities, and steps that apply them the wrong way round.

A problem says how one amount follows from another: "Sam has *half as many* apples *as Jo*", "Tim has *3
fewer* than Sam", "Pat earns *20% more than* Jo", "Max ate *a third of the 30* cookies". Each is a
``Relation``: its ``kind`` (``times``: the other amount multiplied by ``factor``, ``more``/``fewer``: ``amount``
added or taken away, ``percent_more``/``percent_less``), the quantity its number is (``quantity``, an index
of ``problem.quantities()``), and the quantity it is applied to (``reference``), where the problem gives that
one as a number: in the phrase itself ("a third of the 30 cookies", "3 more than 12"), after the name ("as
Jo, who has 12"), in a clause whose subject the reference is ("Jo has 12 apples", "On Monday, Jo picked
12"), or, where the phrase names nothing ("Sam has twice as many"), the number just before it.

``problem_relations(problem)`` finds them; ``inverted_relations(graph)`` the calculations of a solution that
compute with the reference and the relation's number by the inverse operation: ``12 * 2`` or ``12 / 0.5``
for "half as many as Jo (12)", ``12 / 2`` for "twice as many", ``12 + 3`` for "3 fewer than", ``12 * 0.8``
for "20% more than". Only that pairing is judged: a step that starts from the *other* amount ("Sam has
6, half as many as Jo": Jo is ``6 * 2``) computes with the subject's number, not the reference's, and is
left alone, as is any relation whose reference the problem does not give as a number (a pronoun, a
result the solution computes: "half of the rest").

``answer_unit(graph)`` reads the unit the question asks the answer in ("How many minutes ...?", "How far, in
miles, ...?": ``asked_unit``) and where the final answer is last written in the solution with a unit: another
unit of the same measure there (``1.5 hours`` where minutes are asked, ``200 cents`` where dollars are) is an
answer not converted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph, Quantity

__all__ = [
    "Relation",
    "InvertedRelation",
    "AnswerUnit",
    "problem_relations",
    "inverted_relations",
    "asked_unit",
    "answer_unit",
    "relation_applied",
    "unit_word",
    "RELATION_KINDS",
]

RELATION_KINDS = ("times", "more", "fewer", "percent_more", "percent_less")

_MULTIPLIERS = {"twice": Fraction(2), "double": Fraction(2), "triple": Fraction(3), "thrice": Fraction(3)}
_MULTIPLIERS.update({"quadruple": Fraction(4), "half": Fraction(1, 2)})
_FRACTIONS = {"half": Fraction(1, 2), "third": Fraction(1, 3), "quarter": Fraction(1, 4), "fourth": Fraction(1, 4)}
_FRACTIONS.update({"fifth": Fraction(1, 5), "tenth": Fraction(1, 10)})
_MORE = ("more", "older", "taller", "longer", "heavier", "bigger", "larger", "higher", "greater", "faster")
_MORE += ("further", "farther", "later", "extra")
_FEWER = ("fewer", "less", "younger", "shorter", "lighter", "smaller", "lower", "cheaper", "slower", "earlier")
_COMPARATIVE = "|".join(_MORE + _FEWER)
_AS_WORDS = "many|much|long|far|old|tall|big|heavy|fast|often|large|high|wide|deep|expensive|quickly|hard"
# after the quantity's own text: "times as many apples as", "as much as", "more apples than", "of the"
_TIMES_TAIL_RE = re.compile(rf"^\s*(?:times\s+)?as\s+(?:{_AS_WORDS})\b(?P<between>(?:\s+[\w'$-]+){{0,4}}?)\s+as\s+")
# "half as many clips in May.": no "as" naming the reference before the clause ends
_TIMES_BARE_RE = re.compile(
    rf"^\s*(?:times\s+)?as\s+(?:{_AS_WORDS})(?:\s+(?!as\b|than\b)[\w'$-]+){{0,4}}\s*(?:[.,;!?]|$)"
)
_THAT_NOUNS = "number|amount|time|much|many|age|distance|price|cost|long|far|size|weight|sum|money"
# "half that time on ...", "twice that number.", "double that": the number just before
_THAT_RE = re.compile(
    rf"^\s*(?:that|this)(?:\s+(?:{_THAT_NOUNS}))?\s*(?:[.,;!?]|$|(?=\s+(?:on|in|at|for|from|to|and|by|with)\b))"
)
_OF_RE = re.compile(r"^\s*of\s+(?:(?:the|his|her|their|its|my|your|our|these|those)\s+)?(?=[$\d])")
_OF_IT_RE = re.compile(r"^\s*of\s+(?:it|them|that|this)\b")
_THAN_RE = re.compile(rf"^\s*(?:[\w$'-]+\s+){{0,3}}?(?P<word>{_COMPARATIVE})\b(?:\s+[\w'-]+){{0,3}}?\s+than\s+")
_REFERENCE_END = re.compile(
    r"[.,;:!?]|\b(?:does|did|do|has|had|have|is|was|were|are|can|could|will|would|on|in|at|for|to|and|but|who|"
    r"which|if|when|because|so|after|before|during|each|per|by|with|while|does|now|then|combined|together)\b"
)
_PRONOUNS = {"he", "she", "they", "it", "him", "her", "them", "his", "hers", "their", "theirs", "that", "this", "i"}
_PRONOUNS |= {"we", "you", "me", "us", "before", "usual", "normal", "planned", "expected", "last", "what", "yesterday"}
_LEADING = re.compile(r"^(?:(?:if|and|but|then|so|while|now|also|the|meanwhile|since|because)\s+)+", re.IGNORECASE)
_CLAUSE_SPLIT = re.compile(r"[.;!?]\s+|,\s*|\s+and\s+(?=[A-Z])|\s+but\s+|\s+while\s+|\n")
_BARE_END = re.compile(r"[.,;:!?]|\s+(?:on|in|at|for|from|to|and|by|with)\b|$")
_WHO_RE = re.compile(r"^(?:who|which|whose)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Relation:
    """A relation the problem states (module docstring): ``kind`` is one of ``RELATION_KINDS``; ``factor`` the
    multiplier of a ``times`` relation, the amount of ``more``/``fewer``, the rate of a percentage (``1/5``
    for 20%); ``quantity`` and ``reference`` index ``problem.quantities()``; ``phrase`` is the problem's
    words, ``span`` where they stand."""

    kind: str
    factor: Fraction
    quantity: int
    reference: int
    phrase: str
    span: tuple[int, int]


@dataclass(frozen=True)
class InvertedRelation:
    """A calculation (at ``line``, ``calculation`` its index among that line's) that applies ``relation`` the
    wrong way round; ``message`` says so in words."""

    line: int
    calculation: int
    relation: Relation
    message: str


def problem_relations(problem: MathSyntaxGraph) -> list[Relation]:
    """The relations of ``problem`` whose reference it gives as a number (module docstring)."""
    text = problem.text
    quantities = problem.quantities()
    relations = []
    clauses = _clauses(text)
    for k, quantity in enumerate(quantities):
        found = _relation_at(text, quantities, k, quantity, clauses)
        if found is not None:
            relations.append(found)
    return relations


def _relation_at(text: str, quantities: list[Quantity], k: int, quantity: Quantity, clauses) -> Relation | None:
    """The relation whose number is ``quantity``, where the words after it state one and name its reference."""
    word = quantity.text.lower().strip()
    after = text[quantity.span[1] :]
    start = quantity.span[0]
    percent = quantity.form == "percent" or quantity.unit == "%" or word.endswith("%")
    if percent:
        match = _THAN_RE.match(after)
        if not match:
            return None
        kind = "percent_more" if match.group("word") in _MORE else "percent_less"
        return _with_reference(
            text, quantities, k, kind, quantity.value, start, quantity.span[1] + match.end(), clauses
        )
    times_word = quantity.unit == "times" or after.lstrip().lower().startswith("times ")
    factor = _MULTIPLIERS.get(word, quantity.value if times_word else None)
    if factor is not None and factor > 0:
        match = _TIMES_TAIL_RE.match(after)
        if match:
            return _with_reference(text, quantities, k, "times", factor, start, quantity.span[1] + match.end(), clauses)
        if _TIMES_BARE_RE.match(after) or (word in _MULTIPLIERS and _THAT_RE.match(after)):
            return _with_reference(text, quantities, k, "times", factor, start, None, clauses)
    fraction = _FRACTIONS.get(word.split()[-1].rstrip("s").split("-")[-1]) if word else None
    if fraction is not None or (quantity.form == "fraction" and 0 < quantity.value < 1):
        value = quantity.value if 0 < quantity.value < 1 else fraction
        match = _OF_RE.match(after)
        if match:
            return _with_reference(text, quantities, k, "times", value, start, quantity.span[1] + match.end(), clauses)
        if _OF_IT_RE.match(after):
            return _with_reference(text, quantities, k, "times", value, start, None, clauses)
        return None
    if quantity.value.denominator == 1 and quantity.value > 0 and not times_word:
        match = _THAN_RE.match(after)
        if match:
            kind = "more" if match.group("word") in _MORE else "fewer"
            return _with_reference(
                text, quantities, k, kind, quantity.value, start, quantity.span[1] + match.end(), clauses
            )
    return None


def _with_reference(
    text: str,
    quantities: list[Quantity],
    k: int,
    kind: str,
    factor: Fraction,
    start: int,
    reference_at: int | None,
    clauses: list[tuple[int, int]],
) -> Relation | None:
    """The relation with its reference resolved (``reference_at``: where the reference's words begin, after
    "as", "than" or "of"; ``None`` where the phrase names none); ``None`` where no number is the reference."""
    if reference_at is None:
        reference = _number_before(quantities, k, text, clauses)
        stop = _BARE_END.search(text, start + len(quantities[k].text))
    else:
        reference = _reference_named(text, quantities, k, reference_at, clauses)
        stop = _REFERENCE_END.search(text, reference_at)
    if reference is None or reference == k:
        return None
    end = stop.start() if stop else len(text)
    if reference_at is not None and reference_at <= quantities[reference].span[0] < end + 2:
        end = max(end, quantities[reference].span[1])
    return Relation(kind, factor, k, reference, text[start:end].strip(), (start, end))


def _reference_named(
    text: str, quantities: list[Quantity], k: int, at: int, clauses: list[tuple[int, int]]
) -> int | None:
    """The quantity the words at ``at`` name: a number right there ("of the 30", "than 12"), the number after
    an appositive ("as Jo, who has 12"), or the number of the one clause whose subject is the name."""
    stop = _REFERENCE_END.search(text, at)
    words_end = stop.start() if stop else len(text)
    words = text[at:words_end].strip()
    direct = [j for j, q in enumerate(quantities) if at <= q.span[0] < at + max(len(words), 1) + 1 and j != k]
    if direct:
        first = quantities[direct[0]]
        # "than twice", "than 3 times": the reference is itself related, not a number of the problem
        if _relation_word(first) or text[first.span[1] :].lstrip().lower().startswith("times"):
            return None
        return direct[0]
    key = _subject_key(words)
    if key is None:
        return None
    appositive = re.match(
        r"\s*,\s*(?:who|which)\s+(?:has|had|is|was|owns|owned|weighs|costs|scored|made)\s+", text[at + len(words) :]
    )
    if appositive:
        begin = at + len(words) + appositive.end()
        numbers = [j for j, q in enumerate(quantities) if begin <= q.span[0] <= begin + 2 and j != k]
        if numbers and not _relation_word(quantities[numbers[0]]):
            return numbers[0]
    found = _subject_numbers(text, quantities, k, key, clauses)
    if found:
        return found[0] if len(found) == 1 and found[0] >= 0 else None
    return _object_number(text, quantities, k, key)


def _object_number(text: str, quantities: list[Quantity], k: int, key: str) -> int | None:
    """The one plain number of the problem that counts what ``key`` names ("half as many crickets as roaches",
    where the problem has "12 giant roaches")."""
    head = key.split()[-1]
    found = [
        j
        for j, q in enumerate(quantities)
        if j != k
        and q.object is not None
        and q.object.lower() == head
        and not q.in_question
        and not _relation_word(q)
        and not _states_relation(text, q)
    ]
    return found[0] if len(found) == 1 else None


def _subject_key(words: str) -> str | None:
    """The words that name a reference, lower-cased, without "the" and a trailing "'s"; ``None`` for a
    pronoun, a number word or nothing."""
    words = _LEADING.sub("", words.strip()).lower()
    words = re.sub(r"'s?$", "", words).strip()
    if not words or words.split()[0] in _PRONOUNS or not re.match(r"^[a-z]", words):
        return None
    return words


def _clauses(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the clauses of ``text``: its sentences cut at commas, semicolons, "but", "while"
    and an "and" before a capital."""
    spans, begin = [], 0
    for match in _CLAUSE_SPLIT.finditer(text):
        spans.append((begin, match.start()))
        begin = match.end()
    spans.append((begin, len(text)))
    return [(a, b) for a, b in spans if b > a]


def _subject_numbers(
    text: str, quantities: list[Quantity], k: int, key: str, clauses: list[tuple[int, int]]
) -> list[int]:
    """The number of each clause whose subject ``key`` is ("Jo has 12 apples", "If Jo picked 12", "her friend
    Brock buys 7"), -1 for a clause with several; a clause that states a relation itself ("Jo has 3 more than
    Tim") gives none. One number is the reference; none or several (its amount changes) are not."""
    subject_re = re.compile(rf"^(?:(?:his|her|their|my|our|the)\s+)?(?:[a-z]+\s+)?{re.escape(key)}(?:\b|'s)")
    own = quantities[k].span[0]
    found: list[int] = []
    for index, (a, b) in enumerate(clauses):
        if a <= own < b:
            continue
        clause = text[a:b]
        subject = _LEADING.sub("", clause.strip()).lower()
        if _WHO_RE.match(subject) and index > 0:
            previous = text[clauses[index - 1][0] : clauses[index - 1][1]].lower()
            subject = key if previous.rstrip().endswith(key) else ""
        if not subject_re.match(subject):
            continue
        numbers = [j for j, q in enumerate(quantities) if a <= q.span[0] < b]
        if any(_states_relation(text, q) for q in (quantities[j] for j in numbers)):
            continue
        plain = [j for j in numbers if not _relation_word(quantities[j]) and not quantities[j].in_question]
        found += plain[:1] if len(plain) == 1 else ([-1] if plain else [])
    return found


def _relation_word(quantity: Quantity) -> bool:
    """A multiplier or fraction word ("twice", "half", "a third"), not a number word ("four")."""
    word = quantity.text.lower().strip()
    return quantity.form == "word" and (word in _MULTIPLIERS or not 0 < quantity.value or quantity.value < 1)


def _states_relation(text: str, quantity: Quantity) -> bool:
    """Whether the words after ``quantity`` make it a relation's number ("3 more than", "twice as", "half of")."""
    after = text[quantity.span[1] :]
    word = quantity.text.lower().strip()
    return bool(
        _THAN_RE.match(after)
        or _TIMES_TAIL_RE.match(after)
        or _TIMES_BARE_RE.match(after)
        or (word in _MULTIPLIERS or word.split()[-1] in _FRACTIONS)
        or after.lstrip().lower().startswith("times")
    )


def _number_before(quantities: list[Quantity], k: int, text: str, clauses: list[tuple[int, int]]) -> int | None:
    """For a phrase that names no reference ("Sam has twice as many", "half of it"): the quantity just before
    it, in its own clause's sentence or the sentence before, where that is a plain number."""
    own = quantities[k]
    before = [j for j, q in enumerate(quantities) if q.span[1] <= own.span[0]]
    if not before:
        return None
    j = before[-1]
    candidate = quantities[j]
    if _relation_word(candidate) or _states_relation(text, candidate) or candidate.in_question:
        return None
    if own.sentence is not None and candidate.sentence is not None and own.sentence - candidate.sentence > 1:
        return None
    return j


# ------------------------------------------------------------------ steps that apply a relation the wrong way
def inverted_relations(graph) -> list[InvertedRelation]:
    """The calculations of ``graph`` (a ``parsers.solution_graph.SolutionGraph``) that apply a relation of its
    problem by the inverse operation to the relation's reference (module docstring)."""
    relations = problem_relations(graph.problem)
    if not relations:
        return []
    quantities = graph.problem.quantities()
    found = []
    for step in graph.steps:
        for index, calculation in enumerate(step.calculations):
            for relation in relations:
                pairing = _pairing(calculation, relation, quantities)
                if pairing is not None and _stated_before(graph, step.index, pairing[1]):
                    continue  # "25 – 21 = 4 hours left", then "4 hours / 2": the 4 may be that result
                if pairing is not None and not _read_otherwise(
                    graph.problem.text, relations, relation, quantities, *pairing
                ):
                    message = _message(graph.problem.text, relation, quantities, calculation, *pairing)
                    found.append(InvertedRelation(step.index, index, relation, message))
                    break
    return found


def _stated_before(graph, line: int, reference) -> bool:
    """Whether a line before ``line`` states the reference's number as a result (``= 4``), which the reader may
    not have read as a calculation (``25 – 21 = 4``): the step may compute with that result, not the reference."""
    stated = re.compile(r"=\s*\$?\s*" + re.escape(reference.text.strip("$ ")) + r"(?![\d.,]\d)")
    return any(stated.search(step.text) for step in graph.steps if step.index < line)


_COUNTED_IN = {"pair": 2, "pairs": 2, "couple": 2, "couples": 2, "dozen": 12, "dozens": 12, "twins": 2}


def _read_otherwise(text: str, relations: list[Relation], relation: Relation, quantities, operator, reference, operand):
    """Whether the pair may have a right reading after all: another relation or multiplier word of the problem
    that the same number may stand for ("twice that much and ... half its value"), or a unit the reference is
    counted in that the number converts ("12 pairs of earrings": 12 * 2 earrings)."""
    # the problem's other multiplier and fraction words, whether or not their reference was found
    words = [
        Relation("times", _word_factor(q), j, relation.reference, q.text, q.span)
        for j, q in enumerate(quantities)
        if j != relation.quantity and _relation_word(q) and _word_factor(q)
    ]
    for other in relations + words:
        # the same number may be the other relation's, read from either side ("half as many robots as
        # helmets and half as many helmets as footballs": footballs are helmets * 2)
        if other is not relation and operand.value in _excusing(other):
            return True
    after = text[quantities[relation.reference].span[1] :][:20].lower().split()
    return bool(after) and _COUNTED_IN.get(after[0]) == operand.value


def _word_factor(quantity: Quantity) -> Fraction | None:
    """The multiplier a multiplier or fraction word stands for (twice: 2, half: 1/2, a third: 1/3)."""
    word = quantity.text.lower().strip()
    return _MULTIPLIERS.get(word, quantity.value if 0 < quantity.value < 1 else None)


def _excusing(relation: Relation) -> set[Fraction]:
    """The numbers by which another relation may account for a pair: its own values (not the numerator of
    two fifths, which a product of three numbers would show)."""
    if relation.kind != "times":
        return _numbers_of(relation)
    f = relation.factor
    return {f, 1 / f} | ({Fraction(f.denominator)} if f.numerator == 1 else set())


def _numbers_of(relation: Relation) -> set[Fraction]:
    """The values a step may write for the relation's number (half: 1/2 and 2; 20%: 20, 1/5, 6/5, 4/5...)."""
    f = relation.factor
    if relation.kind == "times":
        return {f, 1 / f, Fraction(f.numerator), Fraction(f.denominator)} - {Fraction(1)}
    if relation.kind in ("more", "fewer"):
        return {f}
    return {f, f * 100, 1 + f, 1 - f, 100 + f * 100, 100 - f * 100}


def _pairing(calculation, relation: Relation, quantities: list[Quantity], inverse: bool = True):
    """``(operator, reference operand, relation operand)`` where ``calculation`` applies ``relation``'s
    inverse to its reference (with ``inverse`` false: applies it the right way, and has an inverse that would
    be flagged); ``None`` otherwise. Only a pair of numbers that the operator joins on its own (no ``*`` or
    ``/`` binding either of them to a neighbour first) is read."""
    terms = list(calculation.terms)
    positions = [p for p, term in enumerate(terms) if isinstance(term, Fraction)]
    if len(positions) != len(calculation.operands):
        return None
    values = _numbers_of(relation)
    for n, p in enumerate(positions):
        operand = calculation.operands[n]
        if not _is_relation_number(operand, relation, values) or _said_elsewhere(operand.value, relation, quantities):
            continue
        for side in (-1, 1):
            q = p + 2 * side
            if not (0 <= q < len(terms)) or not isinstance(terms[q], Fraction):
                continue
            operator = terms[p + side]
            if operator not in _INVERSE_OPERATOR:
                continue
            other = calculation.operands[positions.index(q)]
            if not _is_reference(other, relation):
                continue
            first, second = (q, p) if side == -1 else (p, q)
            if not _alone(terms, first, second, operator):
                continue
            wrong = _inverse(relation, operator, operand.value, reference_first=side == -1)
            if wrong if inverse else _inverse(relation, _INVERSE_OPERATOR[operator], operand.value, side == -1):
                return operator, other, operand
    return None


_INVERSE_OPERATOR = {"+": "-", "-": "+", "*": "/", "/": "*"}


def relation_applied(calculation, relations: list[Relation], quantities: list[Quantity]):
    """``(relation, operator)`` where ``calculation`` applies one of ``relations`` the right way, with an
    operator whose inverse (``_INVERSE_OPERATOR``) ``inverted_relations`` would flag; ``None`` where it
    applies none. What a benchmark turns round to make the error this module finds."""
    for relation in relations:
        pairing = _pairing(calculation, relation, quantities, inverse=False)
        if pairing is not None:
            return relation, pairing[0]
    return None


def _said_elsewhere(value: Fraction, relation: Relation, quantities: list[Quantity]) -> bool:
    """Whether another quantity of the problem has ``value`` too ("5 years younger ... in 5 years"): which of
    the two a step computes with, the text does not say."""
    return any(q.value == value for j, q in enumerate(quantities) if j not in (relation.quantity, relation.reference))


def _is_relation_number(operand, relation: Relation, values: set[Fraction]) -> bool:
    """Whether ``operand`` is the relation's number: linked to its quantity, or of one of its values and
    linked to no other quantity of the problem."""
    if operand.source == "problem" and operand.quantity is not None:
        return operand.quantity == relation.quantity and operand.value in values
    return operand.source in ("none", "problem") and operand.value in values


def _is_reference(operand, relation: Relation) -> bool:
    """Whether ``operand`` is the relation's reference: linked to its quantity (an earlier result of the same
    value is not: "the remaining 4 hours" is no "4 hours on Monday")."""
    return operand.source == "problem" and operand.quantity == relation.reference


def _alone(terms: list, first: int, second: int, operator: str) -> bool:
    """Whether ``terms[first] operator terms[second]`` is computed on its own: no bracket splits them, and for
    ``+``/``-`` no ``*`` or ``/`` binds either number to its other neighbour."""
    if operator in "+-":
        before = terms[first - 1] if first > 0 else None
        after = terms[second + 1] if second + 1 < len(terms) else None
        return before not in ("*", "/", "-") and after not in ("*", "/")
    before = terms[first - 1] if first > 0 else None
    return before != "/"


def _inverse(relation: Relation, operator: str, value: Fraction, reference_first: bool) -> bool:
    """Whether ``reference operator value`` (or ``value operator reference``) undoes what the relation says."""
    f = relation.factor
    if relation.kind == "times":
        if f == 1:
            return False
        if operator == "*":
            return value == 1 / f
        return operator == "/" and reference_first and value == f
    if relation.kind == "more":
        return operator == "-" and reference_first
    if relation.kind == "fewer":
        return operator == "+"
    if operator != "*":
        return False
    if relation.kind == "percent_more":
        return value in (1 - f, 100 - f * 100) and value not in (f, f * 100)
    return value in (1 + f, 100 + f * 100)


_VERBS = {"*": "multiplies", "/": "divides", "+": "adds", "-": "subtracts"}


def _message(text: str, relation: Relation, quantities, calculation, operator: str, reference, operand) -> str:
    """What the calculation does, what the problem's words say, and what they ask for."""
    ref, f = reference.text, relation.factor
    if relation.kind == "times":
        right = f"{ref} * {_show(f)}" if f.denominator == 1 or f.numerator != 1 else f"{ref} / {_show(1 / f)}"
    elif relation.kind in ("more", "fewer"):
        right = f"{ref} {'+' if relation.kind == 'more' else '-'} {_show(f)}"
    else:
        right = f"{ref} * {_show(1 + f if relation.kind == 'percent_more' else 1 - f)}"
    if operator in "+-":
        did = f"adds {operand.text} to {ref}" if operator == "+" else f"subtracts {operand.text} from {ref}"
    else:
        did = f"{_VERBS[operator]} {ref} by {operand.text}"
    of = "" if ref in relation.phrase else f" ({ref})"
    return (
        f"“{calculation.expression} = {calculation.result_text}” {did}, but the problem says "
        f"“{relation.phrase}”{of}: that is {right}, the other way round."
    )


def _show(value: Fraction) -> str:
    """A value as a step writes it: ``2``, ``0.5``, ``1/3``."""
    if value.denominator == 1:
        return str(value.numerator)
    if (value * 100).denominator == 1:
        return f"{float(value):g}"
    return str(value)


# ------------------------------------------------------------------ the unit the question asks for
# a unit word (singular, lower-cased) -> (what it measures, its size in the smallest unit of that measure)
_UNITS = {
    "second": ("time", 1),
    "minute": ("time", 60),
    "hour": ("time", 3600),
    "day": ("time", 86400),
    "week": ("time", 604800),
    "inch": ("length", 1),
    "foot": ("length", 12),
    "yard": ("length", 36),
    "mile": ("length", 63360),
    "centimeter": ("metric length", 1),
    "meter": ("metric length", 100),
    "kilometer": ("metric length", 100000),
    "ounce": ("weight", 1),
    "pound": ("weight", 16),
    "gram": ("mass", 1),
    "kilogram": ("mass", 1000),
    "cent": ("money", 1),
    "dollar": ("money", 100),
    "milliliter": ("volume", 1),
    "liter": ("volume", 1000),
}
_UNIT_SPELLINGS = {"feet": "foot", "inches": "inch", "hrs": "hour", "hr": "hour", "mins": "minute", "secs": "second"}
_UNIT_SPELLINGS.update({"metre": "meter", "metres": "meter", "centimetre": "centimeter", "kilometre": "kilometer"})
_UNIT_SPELLINGS.update({"centimetres": "centimeter", "kilometres": "kilometer", "litre": "liter", "litres": "liter"})
_ASKED_RE = re.compile(
    r"\bhow\s+many\s+(?:more\s+|fewer\s+|less\s+|total\s+|additional\s+|extra\s+)?([a-z]+)|\bin\s+([a-z]+)\s*[?,]"
)
_NUMBER_AT_RE = re.compile(r"(\$\s?)?(\d[\d,]*(?:\.\d+)?|\.\d+)(?![\d.,]*\d)(?:\s+([a-z]+))?")


@dataclass(frozen=True)
class AnswerUnit:
    """A final answer stated in another unit than the question asks for: the ``line`` that states it, the unit
    ``asked`` and the one ``given`` (singular words), and a ``message``."""

    line: int
    asked: str
    given: str
    message: str


def unit_word(word: str | None) -> str | None:
    """The unit a word names, singular (``"minutes"`` -> ``"minute"``, ``"feet"`` -> ``"foot"``); ``None`` for
    a word that names no unit of ``_UNITS``."""
    if not word:
        return None
    word = word.lower()
    word = _UNIT_SPELLINGS.get(word, word)
    for candidate in (word, word[:-1] if word.endswith("s") else None, word[:-2] if word.endswith("es") else None):
        if candidate in _UNITS:
            return candidate
    return None


def asked_unit(problem_text: str) -> str | None:
    """The unit the question asks the answer in ("How many minutes ...?", "How long, in hours, ...?"); ``None``
    where it names none, or names a rate ("miles per hour") or two units of one measure ("hours and
    minutes")."""
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", problem_text.strip()) if s]
    questions = [s for s in sentences if "?" in s or re.match(r"(?i)(how|what|find|calculate)\b", s)]
    if not questions:
        return None
    question = questions[-1].lower()
    units = {u for u in (unit_word(w) for w in re.findall(r"[a-z]+", question)) if u is not None}
    if len(units) != 1 or re.search(r"\b(?:per|an?|each|every)\s+(?:[a-z]+\s+)?" + next(iter(units)), question):
        return None
    for match in _ASKED_RE.finditer(question):
        unit = unit_word(match.group(1) or match.group(2))
        if unit is not None:
            return unit
    return None


def answer_unit(graph) -> AnswerUnit | None:
    """Where ``graph``'s final answer is last written in the solution with a unit of the same measure as the one
    the question asks for, but another (module docstring): ``AnswerUnit``; ``None`` otherwise."""
    if graph.answer is None or graph.answer <= 0:
        return None
    asked = asked_unit(graph.problem.text)
    if asked is None:
        return None
    last = None
    for step in graph.steps:
        text = re.sub(r"<<[^<>]*>>", " ", step.text)
        if graph.answer_line is not None and step.index == graph.answer_line:
            text = text.split("####")[0]
        for match in _NUMBER_AT_RE.finditer(text):
            value = _number_value(match.group(2))
            if value == graph.answer:
                given = "dollar" if match.group(1) else unit_word(match.group(3))
                last = (step.index, given, match.group(0).strip())
    if last is None or last[1] is None or last[1] == asked or _UNITS[last[1]][0] != _UNITS[asked][0]:
        return None
    line, given, written = last
    size = Fraction(_UNITS[given][1], _UNITS[asked][1])
    converted = graph.answer * size
    return AnswerUnit(
        line,
        asked,
        given,
        f"The question asks for {_plural(asked)}, but the final answer {graph.answer_text.strip()} is in "
        f"{_plural(given)} (“{written}”): in {_plural(asked)} it is {_show(converted)}.",
    )


def _plural(unit: str) -> str:
    """``foot`` -> ``feet``, ``inch`` -> ``inches``, ``hour`` -> ``hours``."""
    return {"foot": "feet", "inch": "inches"}.get(unit, unit + "s")


def _number_value(digits: str) -> Fraction | None:
    """The value of digits as a solution writes them (``1,200``, ``2.5``)."""
    try:
        return Fraction(digits.replace(",", ""))
    except ValueError:
        return None
