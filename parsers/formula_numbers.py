"""The numbers of a graph's formulas, read off their operator trees (``formula_quantities``).

Every numeric literal of a formula is a quantity, except that a *number written in
notation* is one quantity with its exact value: a fraction of numbers (``\\frac{1}{2}``,
``\\dfrac12``, ``3/4``; but ``48/2`` in bare arithmetic is a division, 48 and 2), a mixed
number (``2\\frac{1}{3}`` -> 7/3), a power of ten (``10^3``, ``10^{-2}``), scientific notation
(``2\\times 10^3``, ``6.5 \\cdot 10^{-5}``), and a unary sign on any of these (``-4``,
``-\\frac{2}{3}``, ``(-2, 0)``). A computation keeps its literals (``2+3``, ``2^{10}``,
``\\frac{x}{2}``, ``25\\%``; a binary minus is an operator). Values are exact
(``Fraction``) and bounded by ``MAX_DIGITS``; each quantity sits in the sentence of its
``[MATH]`` node and has no unit or object. ``parsers.quantities.find_quantities`` calls this.
"""

from __future__ import annotations

from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph, Quantity
from mathgraph.parsers.numbers import MAX_DIGITS, parse_number

__all__ = ["formula_quantities"]

_FRACTIONS = {"\\frac", "\\dfrac", "\\tfrac", "/"}
_TIMES = {"\\times", "\\cdot"}


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
        if value is None:
            stack.extend(children.get(node.id, []))
            continue
        sentence = sentence_of_formula.get(node.formula)
        written = graph.text[node.span[0] : node.span[1]]
        if node.opt_type == "N" and parse_number(written) != parse_number(node.label):
            written = node.label  # a bare formula joined around a calculator annotation: the span does not spell it
        found.append(
            Quantity(
                text=written,
                span=node.span,
                value=value,
                form="formula",
                node=node.id,
                sentence=sentence,
                in_question=sentence is not None and sentence == question,
            )
        )
    return found


class _Constants:
    """The value of an operator-tree node that is a number written in notation, or ``None``.

    Grammar (anything else is a computation whose literals are read one by one): a literal;
    a power of ten ``10^{n}``; ``a \\times 10^{n}``; a fraction ``\\frac{p}{q}`` or ``p/q`` of
    signed literals or powers of ten (``p/q`` not in bare arithmetic, where it is a division); a
    mixed number ``2\\frac{1}{3}``; a unary ``-`` or ``+`` on any of these.
    """

    def __init__(self, graph: MathSyntaxGraph, children: dict[int, list[int]]):
        self.nodes, self.children = graph.nodes, children
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
        if node.opt_type == "N":
            parsed = parse_number(node.label)
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
            whole, fraction = self.unsigned(kids[0]), self.unsigned(kids[1])
            return None if whole is None or fraction is None else whole + fraction
        return None

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
        """``2\\frac{1}{3}``: an integer literal glued to a fraction of two integer literals."""
        whole, fraction = self.nodes[whole_id], self.nodes[fraction_id]
        if whole.opt_type != "N" or not whole.label.isdigit() or fraction.label not in _FRACTIONS:
            return False
        parts = self.children.get(fraction_id, [])
        return (
            whole.span is not None
            and fraction.span is not None
            and whole.span[1] == fraction.span[0]
            and len(parts) == 2
            and all(self.nodes[p].opt_type == "N" and self.nodes[p].label.isdigit() for p in parts)
        )
