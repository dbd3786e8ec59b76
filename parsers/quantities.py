"""Quantities of a problem: the numbers it states, read off its math syntax graph.

A quantity is a number written in the text (``12``, ``1,000.5``, ``.5``, ``3/4``,
``1 1/2``, ``25%``, ``25 percent``, ``$2.50``, ``1.5 million``, ``three``,
``twenty-five``, ``half``, ``twice``, ``a dozen``, ``two thirds``) or a numeric
literal of a formula's operator tree. Each gets its exact value (a ``Fraction``;
a percentage is divided by 100), its written form, its unit or object from the
dependency tree (``5 inch heels`` -> unit ``inch``, object ``heels``; ``2 skeins
of wool`` -> ``skeins``, ``wool``), its sentence and whether that sentence is the
question.

What is not a quantity: ``one`` as a pronoun (``the red one``: the tagger does not
call it ``NUM``), ordinals (``2nd``, ``third place``; but ``a third of`` is 1/3),
years (``in 2019``) and clock times (``3:30``).

The rules work on the tokens of the graph (the dependency parser's), so they
need no second tokenisation; ``find_quantities`` is called by
``parsers.syntax_graph.build_syntax_graph``, and ``graph.quantities()`` returns
what it found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph, Node, Quantity

__all__ = ["find_quantities", "problem_sentences", "ProblemSentence", "parse_number"]

_DIGITS_RE = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+")
_FRACTION_RE = re.compile(r"(\d+)/(\d+)")
_STARTS_WITH_DIGITS_RE = re.compile(r"-?\.?\d")
_CURRENCY = {"$", "€", "£", "¥"}
_PERCENT = {"%", "percent", "per cent", "percents"}
_SCALES = {"thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
# Words that are a number on their own (not part of a run of number words).
_SINGLE_WORDS = {
    "half": Fraction(1, 2),
    "twice": Fraction(2),
    "double": Fraction(2),
    "triple": Fraction(3),
    "thrice": Fraction(3),
    "dozen": Fraction(12),
    "quarter": Fraction(1, 4),
}
# Denominators written as ordinals: "two thirds", "a fifth of".
_ORDINAL_DENOMINATORS = {
    "half": 2,
    "halves": 2,
    "third": 3,
    "thirds": 3,
    "fourth": 4,
    "fourths": 4,
    "quarter": 4,
    "quarters": 4,
    "fifth": 5,
    "fifths": 5,
    "sixth": 6,
    "sixths": 6,
    "seventh": 7,
    "sevenths": 7,
    "eighth": 8,
    "eighths": 8,
    "ninth": 9,
    "ninths": 9,
    "tenth": 10,
    "tenths": 10,
    "hundredth": 100,
    "hundredths": 100,
}
_MONTHS = {
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
}
_YEAR_CUES = {"in", "since", "until", "till", "by", "from", "year", "during", "before", "after", "of", "between"}
# Nouns that measure rather than count: "3 hours", "5 inch heels" (other nouns are the counted object).
_MEASURES = {
    "inch",
    "foot",
    "feet",
    "yard",
    "mile",
    "meter",
    "metre",
    "centimeter",
    "centimetre",
    "millimeter",
    "kilometer",
    "cm",
    "mm",
    "km",
    "m",
    "kg",
    "g",
    "gram",
    "kilogram",
    "pound",
    "lb",
    "ounce",
    "oz",
    "ton",
    "liter",
    "litre",
    "ml",
    "gallon",
    "quart",
    "pint",
    "cup",
    "tablespoon",
    "teaspoon",
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "year",
    "dollar",
    "cent",
    "penny",
    "euro",
    "%",
    "percent",
    "degree",
    "mph",
    "acre",
    "dozen",
    "page",
    "time",
    "calorie",
    "piece",
    "slice",
    "box",
    "bag",
    "pack",
    "skein",
    "unit",
    "meal",
    "serving",
    "batch",
    "bottle",
    "can",
    "jar",
    "carton",
    "bunch",
    "pair",
    "set",
    "row",
    "lap",
    "step",
    "square",
    "cubic",
}
_QUESTION_STARTS = {
    "find",
    "compute",
    "calculate",
    "determine",
    "evaluate",
    "what",
    "how",
    "which",
    "who",
    "when",
    "where",
    "express",
    "simplify",
    "solve",
    "show",
    "prove",
    "give",
    "write",
    "list",
    "enter",
    "estimate",
    "factor",
    "expand",
    "rationalize",
    "convert",
}


@dataclass(frozen=True)
class ProblemSentence:
    """A sentence of a problem: its index, character span in the source, text, and whether it is the question."""

    index: int
    span: tuple[int, int]
    text: str
    is_question: bool


def problem_sentences(graph: MathSyntaxGraph) -> list[ProblemSentence]:
    """The sentences of ``graph`` in order, the question among them marked.

    The question is the last sentence with a ``?``, or else the last one that starts
    with an asking or commanding word (``How``, ``Find``, ``Compute``...); a problem
    may have none.
    """
    spans: dict[int, list[int]] = {}
    first_word: dict[int, str] = {}
    for node in graph.nodes:
        if node.sentence is None or node.span is None:
            continue
        bounds = spans.setdefault(node.sentence, [node.span[0], node.span[1]])
        if node.span[0] <= bounds[0]:
            bounds[0] = node.span[0]
            if node.kind == "word":
                first_word[node.sentence] = (node.lemma or node.label).lower()
        bounds[1] = max(bounds[1], node.span[1])
    order = sorted(spans)
    texts = {i: graph.text[spans[i][0] : spans[i][1]] for i in order}
    asking = [i for i in order if "?" in texts[i]] or [i for i in order if first_word.get(i) in _QUESTION_STARTS]
    question = asking[-1] if asking else None
    return [ProblemSentence(i, (spans[i][0], spans[i][1]), texts[i], i == question) for i in order]


def parse_number(text: str) -> tuple[Fraction, str] | None:
    """The exact value and form of a number written in digits: ``"1,000.5"`` -> ``(Fraction(2001, 2), "decimal")``.

    Forms: ``integer``, ``decimal`` or ``fraction`` (``3/4``); ``None`` for anything else.
    """
    text = text.strip()
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if sign < 0 else text
    if _DIGITS_RE.fullmatch(body):
        plain = body.replace(",", "")
        return sign * Fraction(plain), ("decimal" if "." in plain else "integer")
    match = _FRACTION_RE.fullmatch(body)
    if match and int(match.group(2)) != 0:
        return sign * Fraction(int(match.group(1)), int(match.group(2))), "fraction"
    return None


def find_quantities(graph: MathSyntaxGraph) -> tuple[Quantity, ...]:
    """Every quantity of ``graph`` in text order (see the module docstring for the rules)."""
    sentences = problem_sentences(graph)
    question = next((s.index for s in sentences if s.is_question), None)
    reader = _TreeReader(graph)
    found: list[Quantity] = []
    for tokens in reader.sentence_tokens():
        found.extend(_TokenScanner(graph, reader, tokens, question).scan())
    found.extend(_formula_quantities(graph, reader, question))
    return tuple(sorted(found, key=lambda q: (q.span[0], q.node)))


class _TreeReader:
    """Heads, children and tokens of a graph's dependency tree."""

    def __init__(self, graph: MathSyntaxGraph):
        self.graph = graph
        self.head: dict[int, tuple[int, str]] = {}
        self.children: dict[int, list[tuple[str, int]]] = {}
        for edge in graph.edges:
            self.head[edge.dst] = (edge.src, edge.relation)
            self.children.setdefault(edge.src, []).append((edge.relation, edge.dst))

    def sentence_tokens(self) -> list[list[Node]]:
        by_sentence: dict[int, list[Node]] = {}
        for node in self.graph.nodes:
            if node.kind in ("word", "math") and node.sentence is not None and node.span is not None:
                by_sentence.setdefault(node.sentence, []).append(node)
        return [sorted(tokens, key=lambda n: n.span[0]) for _, tokens in sorted(by_sentence.items())]

    def word(self, node_id: int | None) -> Node | None:
        if node_id is None or node_id == 0:
            return None
        node = self.graph.nodes[node_id]
        return node if node.kind == "word" else None

    def parent(self, node_id: int) -> tuple[Node | None, str]:
        src, relation = self.head.get(node_id, (0, ""))
        return self.word(src), relation

    def child(self, node_id: int, relations: tuple[str, ...]) -> Node | None:
        for relation, dst in self.children.get(node_id, []):
            if relation in relations and self.word(dst) is not None:
                return self.graph.nodes[dst]
        return None

    def of_object(self, node_id: int) -> Node | None:
        """The noun of an ``of`` phrase under ``node_id`` ("skeins of wool" -> wool)."""
        for relation, dst in self.children.get(node_id, []):
            prep = self.word(dst)
            if relation == "dep:prep" and prep is not None and prep.label == "of":
                return self.child(dst, ("dep:pobj",))
        return None

    def unit_and_object(self, node_ids: list[int]) -> tuple[str | None, str | None]:
        """Unit and counted object of the number spelled by ``node_ids``, from the tree around it."""
        inside = set(node_ids)
        noun = None
        for node_id in node_ids:
            parent, _ = self.parent(node_id)
            if parent is not None and parent.id not in inside and parent.upos in ("NOUN", "PROPN"):
                noun = parent
                break
        if noun is None:  # "3/4 of the rest", "half of them"
            for node_id in node_ids:
                counted = self.of_object(node_id)
                if counted is not None:
                    return None, counted.label
            return None, None
        measured = self.of_object(noun.id)
        above, relation = self.parent(noun.id)
        compound_head = above if relation == "dep:compound" and above is not None and above.upos == "NOUN" else None
        if measured is not None or compound_head is not None or (noun.lemma or noun.label).lower() in _MEASURES:
            counted = measured or compound_head
            return noun.label, counted.label if counted is not None else None
        return None, noun.label


class _TokenScanner:
    """Reads the quantities of one sentence's tokens, left to right."""

    def __init__(self, graph: MathSyntaxGraph, reader: _TreeReader, tokens: list[Node], question: int | None):
        self.graph, self.reader, self.tokens, self.question = graph, reader, tokens, question

    def text_of(self, i: int) -> str:
        return self.tokens[i].label if 0 <= i < len(self.tokens) else ""

    def adjacent(self, i: int, j: int) -> bool:
        """Tokens ``i`` and ``j = i + 1`` touch (no space between them)."""
        return 0 <= i and j < len(self.tokens) and self.tokens[i].span[1] == self.tokens[j].span[0]

    def scan(self) -> list[Quantity]:
        found: list[Quantity] = []
        i = 0
        while i < len(self.tokens):
            token = self.tokens[i]
            if token.kind != "word":
                i += 1
                continue
            result = self.digits_at(i) if _STARTS_WITH_DIGITS_RE.match(token.label) else self.words_at(i)
            if result is None:
                i += 1
                continue
            quantity, i = result
            found.append(quantity)
        return found

    def make(
        self,
        first: int,
        last: int,
        value: Fraction,
        form: str,
        unit: str | None = None,
        number_tokens: tuple[int, int] | None = None,
    ) -> Quantity:
        start, end = self.tokens[first].span[0], self.tokens[last].span[1]
        lo, hi = number_tokens or (first, last)
        found_unit, counted = self.reader.unit_and_object([self.tokens[k].id for k in range(lo, hi + 1)])
        if unit is not None and found_unit is not None and found_unit.lower() in _PERCENT | {unit}:
            found_unit = None  # the sign itself was read as the noun ("25 %")
        after = self.tokens[hi + 1] if hi + 1 < len(self.tokens) else None
        if found_unit is None and counted is None and after is not None and after.upos == "NOUN" and last == hi:
            # the parser hung the number elsewhere, but the noun right after it is what it counts ("-5 degrees")
            if (after.lemma or after.label).lower() in _MEASURES:
                found_unit = after.label
            else:
                counted = after.label
        if found_unit is None and counted is None and after is not None and after.label == "of":
            of_noun = self.reader.child(after.id, ("dep:pobj",))  # "3/4 of the rest" with "of" on the verb
            counted = of_noun.label if of_noun is not None else None
        sentence = self.tokens[first].sentence
        return Quantity(
            text=self.graph.text[start:end],
            span=(start, end),
            value=value,
            form=form,
            node=self.tokens[lo].id,
            sentence=sentence,
            in_question=sentence is not None and sentence == self.question,
            unit=unit or found_unit,
            object=counted,
        )

    def digits_at(self, i: int) -> tuple[Quantity, int] | None:
        parsed = parse_number(self.text_of(i))
        if parsed is None:
            return None  # "2nd", "3:30", "4x"
        value, form = parsed
        first, last, unit = i, i, None
        if form == "integer" and (self.is_year(i, value) or self.is_label(i)):
            return None
        mixed = parse_number(self.text_of(i + 1))
        if form == "integer" and mixed is not None and mixed[1] == "fraction" and mixed[0] < 1:
            value, form, last = value + mixed[0], "fraction", i + 1  # "1 1/2"
        if self.text_of(i - 1) == "-" and self.adjacent(i - 1, i) and not self.adjacent(i - 2, i - 1):
            value, first = -value, i - 1
        if self.text_of(first - 1) in _CURRENCY and self.adjacent(first - 1, first):
            unit, first = self.text_of(first - 1), first - 1
        scale = _SCALES.get(self.text_of(last + 1))
        if scale is not None:
            value, last = value * scale, last + 1
        number_last = last
        if self.text_of(last + 1) in _PERCENT:
            value, form, unit, last = value / 100, "percent", "%", last + 1
        return self.make(first, last, value, form, unit, number_tokens=(i, number_last)), last + 1

    def is_year(self, i: int, value: Fraction) -> bool:
        """``in 2019``, ``May 1995``: four digits after a time word, and no noun counted by them."""
        if not (1000 <= value <= 2100) or "," in self.text_of(i):
            return False
        before = self.text_of(i - 1)
        if before not in _YEAR_CUES and before.rstrip(".") not in _MONTHS and not before.rstrip(",").isdigit():
            return False
        parent, relation = self.reader.parent(self.tokens[i].id)
        return not (relation == "dep:nummod" and parent is not None and parent.upos == "NOUN")

    def is_label(self, i: int) -> bool:
        """``Route 66``, ``Level 5``: a capitalised noun right before the number, which names rather than counts."""
        before = self.tokens[i - 1] if i > 0 else None
        parent, _ = self.reader.parent(self.tokens[i].id)
        return (
            before is not None
            and parent is not None
            and parent.id == before.id
            and before.upos in ("NOUN", "PROPN")
            and self.graph.text[before.span[0]].isupper()
        )

    def words_at(self, i: int) -> tuple[Quantity, int] | None:
        word = self.text_of(i)
        token = self.tokens[i]
        if word in _UNITS or word in _TENS:
            if word == "one" and token.upos != "NUM" and not self.counts_of(i):
                return None  # "the red one", "one another": a pronoun, not a count
            return self.number_words_at(i)
        article = self.text_of(i - 1) in ("a", "an")
        if word in _ORDINAL_DENOMINATORS and article and word not in ("half", "halves", "quarters"):
            return self.make(i, i, Fraction(1, _ORDINAL_DENOMINATORS[word]), "word"), i + 1  # "a third of"
        single = _SINGLE_WORDS.get(word)
        if single is None:
            return None
        if word == "quarter" and not article:
            return None  # "the third quarter", "a quarter" is 1/4
        if word == "dozen" and self.previous_is_number(i):
            return None  # "2 dozen": the 2 is the quantity and dozen its unit
        if word == "double" and token.upos == "VERB":
            return None
        return self.make(i, i, single, "word"), i + 1

    def counts_of(self, i: int) -> bool:
        """``one of the boys`` counts; ``one`` alone tagged as a noun or pronoun does not."""
        return self.reader.of_object(self.tokens[i].id) is not None and self.text_of(i - 1) not in ("the", "which")

    def previous_is_number(self, i: int) -> bool:
        before = self.text_of(i - 1)
        return parse_number(before) is not None or before in _UNITS or before in _TENS

    def number_words_at(self, i: int) -> tuple[Quantity, int]:
        """A run of number words: ``twenty - five``, ``two hundred and five``, ``three thousand``, ``two thirds``."""
        total, current, last, j = 0, 0, i, i
        while j < len(self.tokens):
            word = self.text_of(j)
            if word in _UNITS:
                current += _UNITS[word]
            elif word in _TENS:
                current += _TENS[word]
            elif word == "hundred":
                current = max(current, 1) * 100
            elif word in _SCALES:
                total, current = total + max(current, 1) * _SCALES[word], 0
            elif (
                word in ("-", "and")
                and j + 1 < len(self.tokens)
                and j > i
                and (self.text_of(j + 1) in _UNITS or self.text_of(j + 1) in _TENS)
                and (word == "-" or self.text_of(j - 1) == "hundred")
            ):
                j += 1
                continue
            else:
                break
            last = j
            j += 1
        value = Fraction(total + current)
        denominator = _ORDINAL_DENOMINATORS.get(self.text_of(last + 1))
        if denominator is None and self.text_of(last + 1) == "-":
            denominator = _ORDINAL_DENOMINATORS.get(self.text_of(last + 2))
            if denominator is not None:
                last += 1
        if denominator is not None:  # "two thirds", "one-fifth"
            return self.make(i, last + 1, value / denominator, "word"), last + 2
        if self.text_of(last + 1) in _PERCENT:
            return self.make(i, last + 1, value / 100, "percent", "%", number_tokens=(i, last)), last + 2
        return self.make(i, last, value, "word"), last + 1


def _formula_quantities(graph: MathSyntaxGraph, reader: _TreeReader, question: int | None) -> list[Quantity]:
    """The numeric literals (Tangent type N) of the formulas, each in the sentence of its ``[MATH]`` node."""
    sentence_of_formula = {n.formula: n.sentence for n in graph.nodes if n.kind == "math"}
    found = []
    for node in graph.nodes:
        if node.kind != "formula" or node.opt_type != "N" or node.span is None:
            continue
        parsed = parse_number(node.label)
        if parsed is None:
            continue
        sentence = sentence_of_formula.get(node.formula)
        written = graph.text[node.span[0] : node.span[1]]
        # a bare-arithmetic formula joined around a calculator annotation has spans that do not spell the literal
        found.append(
            Quantity(
                text=written if parse_number(written) == parsed else node.label,
                span=node.span,
                value=parsed[0],
                form="formula",
                node=node.id,
                sentence=sentence,
                in_question=sentence is not None and sentence == question,
            )
        )
    return found
