"""The numbers of a graph's formulas, read off their operator trees (``formula_quantities``).

Every numeric literal of a formula is a quantity, except that a *number written in
notation* is one quantity with its exact value: a fraction of numbers (``\\frac{1}{2}``,
``\\dfrac12``, ``3/4``; but ``48/2`` in bare arithmetic is a division, 48 and 2), a mixed
number (``2\\frac{1}{3}`` -> 7/3), a power of ten (``10^3``, ``10^{-2}``), scientific notation
(``2\\times 10^3``, ``6.5 \\cdot 10^{-5}``), a repeating decimal (``0.\\overline{3}`` -> 1/3,
``0.1\\overline{6}`` -> 1/6; over letters, ``0.\\overline{abc}``, the literal 0), digits grouped by thin
spaces (``12\\,000`` -> 12000), and a
unary sign on any of these (``-4``, ``-\\frac{2}{3}``, ``-2\\frac{1}{3}`` -> -7/3, ``(-2, 0)``).
A number that opens a ``\\text{...}`` is read too (``\\text{ 510}``, ``\\text{8 digits}``).
A computation keeps its literals (``2+3``, ``2^{10}``, ``8\\times 2^{10}``, ``5(1+i)``, ``5i``,
``\\log_2 x``, ``\\frac{x}{2}``, ``25\\%``; a binary minus is an operator). Values are exact
(``Fraction``) and bounded by ``MAX_DIGITS``; each quantity sits in the sentence of its
``[MATH]`` node and has no unit or object. ``parsers.quantities.find_quantities`` calls this.
"""

from __future__ import annotations

import re
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph, Node, Quantity
from mathgraph.parsers.numbers import DIGITS_PATTERN, MAX_DIGITS, parse_number

__all__ = ["formula_quantities"]

_FRACTIONS = {"\\frac", "\\dfrac", "\\tfrac", "/"}
_TIMES = {"\\times", "\\cdot"}
# a number that opens the text of a \text{...}: "\text{ 510}", "\text{8 digits}" (not "3rd", "2x", "5-digit")
_TEXT_NUMBER = re.compile(rf"\s*({DIGITS_PATTERN})(?=\s|$)")


def formula_quantities(graph: MathSyntaxGraph, question: int | None) -> list[Quantity]:
    """The numbers of the formulas, each in the sentence of its ``[MATH]`` node: a number written in notation
    (``\\frac{1}{2}``, ``2\\times 10^3``, ``-4``) as one quantity, every other numeric literal on its own."""
    sentence_of_formula = {n.formula: n.sentence for n in graph.nodes if n.kind == "math"}
    children: dict[int, list[int]] = {}
    below: set[int] = set()
    for edge in graph.edges:
        if edge.relation.startswith("opt:"):
            children.setdefault(edge.src, []).append(edge.dst)
            below.add(edge.dst)
    constants = _Constants(graph, children)
    stack = [n.id for n in graph.nodes if n.kind == "formula" and n.id not in below]
    found = []
    while stack:  # a loop, not recursion: a formula tree may be deep
        node = graph.nodes[stack.pop()]
        value = constants.value(node.id) if node.span is not None else None
        span = node.span
        if value is None and node.opt_type == "T" and node.span is not None:
            span, value = _text_number(graph.text, node) or (span, None)
        if value is None:
            stack.extend(children.get(node.id, []))
            continue
        sentence = sentence_of_formula.get(node.formula)
        written = graph.text[span[0] : span[1]]
        if node.opt_type == "N" and parse_number(written) != parse_number(node.label):
            written = node.label  # a bare formula joined around a calculator annotation: the span does not spell it
        found.append(
            Quantity(
                text=written,
                span=span,
                value=value,
                form="formula",
                node=node.id,
                sentence=sentence,
                in_question=sentence is not None and sentence == question,
            )
        )
    return found


def _text_number(text: str, node: Node) -> tuple[tuple[int, int], Fraction] | None:
    """The span and value of the number that opens a ``\\text{...}`` node (``\\text{ 510}``, ``\\text{8 digits}``)."""
    match = _TEXT_NUMBER.match(node.label)
    if match is None:
        return None
    start = text.find(match.group(1), node.span[0], node.span[1])
    parsed = parse_number(match.group(1))
    if start < 0 or parsed is None:  # the source spells the text otherwise (a macro inside it)
        return None
    return (start, start + len(match.group(1))), parsed[0]


class _Constants:
    """The value of an operator-tree node that is a number written in notation, or ``None``.

    Grammar (anything else is a computation whose literals are read one by one): a literal;
    a power of ten ``10^{n}``; ``a \\times 10^{n}``; a fraction ``\\frac{p}{q}`` or ``p/q`` of
    signed literals or powers of ten (``p/q`` not in bare arithmetic, where it is a division); a
    mixed number ``2\\frac{1}{3}`` (its whole part may carry the sign: ``-2\\frac{1}{3}``); a
    repeating decimal ``0.1\\overline{6}``; digit groups joined by thin spaces ``12\\,345\\,678``;
    a unary ``-`` or ``+`` on any of these.
    """

    def __init__(self, graph: MathSyntaxGraph, children: dict[int, list[int]]):
        self.nodes, self.children, self.text = graph.nodes, children, graph.text
        # in arithmetic written without delimiters ("48/2 = 24" in a solution) a slash divides: 48 and 2
        self.bare = {i for i, formula in enumerate(graph.formulas) if formula.delimiter == "bare"}

    def value(self, node_id: int) -> Fraction | None:
        node, kids = self.nodes[node_id], self.children.get(node_id, [])
        if node.label in ("-", "+") and len(kids) == 1:
            value = self.value(kids[0])
            return None if value is None else (-value if node.label == "-" else value)
        return self.unsigned(node_id)

    def unsigned(self, node_id: int) -> Fraction | None:
        node, kids = self.nodes[node_id], self.children.get(node_id, [])
        if node.opt_type == "N":  # "0." before a bar over letters (0.\overline{abc}) is the literal 0
            label = node.label[:-1] if node.label[:-1].isdigit() and node.label.endswith(".") else node.label
            parsed = parse_number(label)
            return parsed[0] if parsed is not None and not kids else None
        if node.label in _FRACTIONS and len(kids) == 2 and (node.label != "/" or node.formula not in self.bare):
            numerator, denominator = self.term(kids[0]), self.term(kids[1])
            if numerator is None or not denominator:
                return None
            return numerator / denominator
        if node.label in _TIMES and len(kids) == 2 and self.nodes[kids[0]].opt_type == "N":
            mantissa, power = self.unsigned(kids[0]), self.power_of_ten(kids[1])
            return None if mantissa is None or power is None else mantissa * power
        if node.label == "^":
            return self.power_of_ten(node_id)
        if node.label == "mul" and len(kids) == 2 and self.mixed(kids[0], kids[1]):
            whole, fraction = self.value(kids[0]), self.unsigned(kids[1])
            if whole is None or fraction is None:
                return None
            return whole - fraction if self.nodes[kids[0]].label == "-" else whole + fraction
        if node.label == "mul" and node.span is not None and self.thin_spaced(kids):
            return Fraction(int(self.text[node.span[0] : node.span[1]].replace("\\,", "")))
        if node.label == "repeat" and len(kids) == 2:
            return self.repeating(kids[0], kids[1])
        return None

    def repeating(self, prefix_id: int, period_id: int) -> Fraction | None:
        """``0.1\\overline{6}`` -> 1/6: the digits before the bar, then the bar's digits repeated for ever."""
        prefix, period = self.nodes[prefix_id].label, self.nodes[period_id].label
        whole, dot, decimals = prefix.partition(".")
        digits = whole + decimals
        if not dot or (digits and not digits.isdigit()) or not period.isdigit():
            return None
        if len(prefix) + len(period) > MAX_DIGITS or self.children.get(period_id):
            return None
        start = Fraction(int(digits or "0"), 10 ** len(decimals))
        return start + Fraction(int(period), 10 ** len(decimals) * (10 ** len(period) - 1))

    def thin_spaced(self, kids: list[int]) -> bool:
        """``12\\,345\\,678``: integer literals joined by ``\\,`` only, one to three digits then groups of three."""
        parts = [self.nodes[k] for k in kids]
        if len(parts) < 2 or any(p.opt_type != "N" or not p.label.isdigit() or p.span is None for p in parts):
            return False
        if not 1 <= len(parts[0].label) <= 3 or any(len(p.label) != 3 for p in parts[1:]):
            return False
        if sum(len(p.label) for p in parts) > MAX_DIGITS:
            return False
        return all(self.text[a.span[1] : b.span[0]] == "\\," for a, b in zip(parts, parts[1:]))

    def term(self, node_id: int) -> Fraction | None:
        """A numerator or denominator: a signed literal or a power of ten."""
        node, kids = self.nodes[node_id], self.children.get(node_id, [])
        inner = kids[0] if node.label in ("-", "+") and len(kids) == 1 else node_id
        if self.nodes[inner].opt_type != "N" and self.nodes[inner].label != "^":
            return None
        return self.value(node_id)

    def power_of_ten(self, node_id: int) -> Fraction | None:
        node, kids = self.nodes[node_id], self.children.get(node_id, [])
        if node.label != "^" or len(kids) != 2 or self.nodes[kids[0]].label != "10":
            return None
        exponent = self.value(kids[1]) if self.nodes[kids[1]].label in ("-", "+") else self.unsigned(kids[1])
        if exponent is None or exponent.denominator != 1 or abs(exponent) > MAX_DIGITS:
            return None
        return Fraction(10) ** int(exponent)

    def mixed(self, whole_id: int, fraction_id: int) -> bool:
        """``2\\frac{1}{3}``: an integer literal, unsigned or signed (``-2``), glued to a fraction of two integer literals."""
        whole, fraction = self.nodes[whole_id], self.nodes[fraction_id]
        signed = self.children.get(whole_id, [])
        if whole.label in ("-", "+") and len(signed) == 1:
            digits = self.nodes[signed[0]]
            if digits.span is None or whole.span is None or digits.span[1] != whole.span[1]:
                return False
        else:
            digits = whole
        if digits.opt_type != "N" or not digits.label.isdigit() or fraction.label not in _FRACTIONS:
            return False
        parts = self.children.get(fraction_id, [])
        return (
            whole.span is not None
            and fraction.span is not None
            and whole.span[1] == fraction.span[0]
            and len(parts) == 2
            and all(self.nodes[p].opt_type == "N" and self.nodes[p].label.isdigit() for p in parts)
        )
