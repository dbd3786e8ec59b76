"""The solution graph: a worked solution as a computation over its problem's quantities.

``parse_solution(problem, solution)`` reads the solution's lines (``parsers.solution_reader``: the
calculations each states, in four forms) and links every operand to where it comes from:

- ``problem``: a quantity of the problem (``quantity`` is its index in ``problem.quantities()``). A
  quantity also explains the numbers it implies: a percentage times 100 (``25%`` -> ``25 / 100``), the
  whole a unit fraction divides (``half`` -> ``48 / 2``) and the complement (``20%`` off -> ``0.8``,
  ``80``; ``50%`` longer -> ``1.5``, ``150``). A number written in the problem that is not one of its quantities
  (a year, a clock time), or a count the problem names without writing it (three or more things listed:
  ``Gretchen, Mitzi, and Beth`` is 3; a range of days or months; an ordinal: ``every seventh page``, ``cut into
  fifths``; three or more days of the week named) is ``problem`` with ``quantity`` ``None``;
- ``step``: the result of an earlier calculation (``step`` is its line, ``calculation`` its index there);
- ``constant``: a known constant (``parsers.constants``: 60 minutes in an hour where the texts speak of
  time, 100 for a percentage, 12 in a dozen...), ``constant`` naming it;
- ``none``: none of these (a miscopied number, or one the solution knows and does not say).

When a number could come from several places, the order is: a quantity of the problem that no calculation
has used yet, the result of an earlier calculation (the latest), a quantity already used, what the
quantities imply, a number written in the problem, a known constant, and last a number an earlier line
(or this line, before the calculation) writes as a fact it found (``Dave won 10 games``, then ``10 + 5``:
``step``, with no ``calculation``). Two exceptions come first: a fraction written as the problem writes
it (``2/5`` for "two fifths") links both its numbers to that quantity, and a known constant named right
after the number (``12 months``, ``100%``) wins where no quantity of that value is counted in that unit.
This order agreed best with the hand-labelled gold file (``benchmarks/solution_graph.py``). The final answer (``#### 12``, ``\\boxed{12}``, "the answer is 12") links to the last
calculation whose result it is (``answer_step``).

``SolutionGraph.to_dict()`` is JSON (values as exact fractions in strings, ``"3/2"``, as
``Quantity.to_dict``), ``to_networkx()`` a ``DiGraph`` (nodes for the problem's quantities, the constants,
each calculation's result and the answer; an edge from each operand's source to the result it feeds),
and ``draw()`` draws that graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from os import PathLike
from typing import TYPE_CHECKING

from mathgraph.graph import MathSyntaxGraph, Quantity
from mathgraph.parsers.constants import KNOWN_CONSTANTS, available_constants
from mathgraph.parsers.numbers import (
    DIGITS_PATTERN,
    MAX_DIGITS,
    ORDINAL_DENOMINATORS,
    TENS_WORDS,
    UNIT_WORDS,
    parse_number,
)
from mathgraph.parsers.solution_arithmetic import agrees, evaluate
from mathgraph.parsers.solution_reader import (
    ReadAnswer,
    ReadCalculation,
    ReadLine,
    ReadOperand,
    read_answer,
    read_lines,
    shown_decimals,
)

if TYPE_CHECKING:
    import matplotlib.axes
    import matplotlib.figure
    import networkx

__all__ = [
    "Operand",
    "Calculation",
    "SolutionStep",
    "SolutionGraph",
    "parse_solution",
    "problem_values",
    "implied_values",
    "OPERAND_SOURCES",
    "FORMS",
]

OPERAND_SOURCES = ("problem", "step", "constant", "none")
FORMS = ("annotation", "equation", "latex", "words")
_PROBLEM_NUMBER_RE = re.compile(DIGITS_PATTERN)
_NEXT_WORD_RE = re.compile(r"\s*([A-Za-z]+)")


@dataclass(frozen=True)
class Operand:
    """A number a calculation computes with and where it comes from (module docstring): ``source`` is one of
    ``OPERAND_SOURCES``; ``quantity`` indexes ``problem.quantities()``, ``step`` and ``calculation`` name an
    earlier result, ``constant`` names a known constant."""

    value: Fraction
    text: str
    span: tuple[int, int]
    source: str
    quantity: int | None = None
    step: int | None = None
    constant: str | None = None
    calculation: int | None = None

    def to_dict(self) -> dict:
        """JSON-ready; the value as an exact fraction string (``"1/5"``)."""
        return {
            "value": str(self.value),
            "text": self.text,
            "span": list(self.span),
            "source": self.source,
            "quantity": self.quantity,
            "step": self.step,
            "calculation": self.calculation,
            "constant": self.constant,
        }


@dataclass(frozen=True)
class Calculation:
    """A calculation a solution states: ``expression`` (its left side), ``operands``, the stated ``result``,
    the ``computed`` value (``None`` where it is not evaluated: see ``note``), its ``form`` (one of
    ``FORMS``), its ``span`` in the solution, the result as written (``result_text``) and the digits it
    shows after the point (``decimals``; ``None`` for a fraction)."""

    expression: str
    operands: tuple[Operand, ...]
    result: Fraction
    computed: Fraction | None
    form: str
    span: tuple[int, int]
    result_text: str = ""
    decimals: int | None = 0
    note: str | None = None
    # the expression as ``parsers.solution_arithmetic.evaluate`` takes it (a Fraction per operand, in order)
    terms: tuple = field(default=(), repr=False, compare=False)

    def computed_with(self, position: int, value: Fraction) -> Fraction | None:
        """The value of the expression with its ``position``-th operand replaced by ``value``."""
        terms = list(self.terms)
        numbers = [k for k, term in enumerate(terms) if isinstance(term, Fraction)]
        if position >= len(numbers):
            return None
        terms[numbers[position]] = value
        return evaluate(terms).value

    @property
    def checks_out(self) -> bool | None:
        """Whether the computed value is the stated result as far as its rounding shows (``9 / 21 * 100% =
        42.857`` as a percentage too), in any reading a teacher accepts (``_readings``); where a number of
        four decimals or more takes part (a rounded value computed on), to one part in 10,000. ``None`` when
        the calculation is not evaluated."""
        if self.computed is None:
            return None
        readings = _readings(self)
        if any(agrees(self.result, value, self.decimals) for value in readings):
            return True
        rounded = any((shown_decimals(t) or 0) >= 4 for t in [self.result_text, *(o.text for o in self.operands)])
        return rounded and any(abs(value - self.result) <= abs(self.result) / 10000 for value in readings)

    def to_dict(self) -> dict:
        """JSON-ready: expression, form, span, operands, result, computed value and note."""
        return {
            "expression": self.expression,
            "form": self.form,
            "span": list(self.span),
            "operands": [o.to_dict() for o in self.operands],
            "result": str(self.result),
            "result_text": self.result_text,
            "computed": None if self.computed is None else str(self.computed),
            "checks_out": self.checks_out,
            "note": self.note,
        }


@dataclass(frozen=True)
class SolutionStep:
    """A non-blank line of the solution: ``index`` is its 0-based line number, then its text, the
    calculations it states and its span."""

    index: int
    text: str
    calculations: tuple[Calculation, ...]
    span: tuple[int, int] = (0, 0)

    def to_dict(self) -> dict:
        """JSON-ready: index, text, span and calculations."""
        return {
            "index": self.index,
            "text": self.text,
            "span": list(self.span),
            "calculations": [c.to_dict() for c in self.calculations],
        }


@dataclass(frozen=True)
class SolutionGraph:
    """A solution read against its problem (module docstring). ``answer`` is the final answer's value,
    ``answer_step`` the line of the calculation that computed it (``None`` when none did), ``answer_line``
    the line where the answer is written, ``answer_text`` its text."""

    problem: MathSyntaxGraph
    solution: str
    steps: tuple[SolutionStep, ...]
    answer: Fraction | None
    answer_step: int | None
    notes: tuple[str, ...] = ()
    answer_line: int | None = None
    answer_text: str | None = None

    def calculations(self) -> list[tuple[int, Calculation]]:
        """Every calculation with its step's line, in order."""
        return [(step.index, c) for step in self.steps for c in step.calculations]

    def operands(self) -> list[tuple[int, Operand]]:
        """Every operand with its step's line, in order."""
        return [(line, o) for line, c in self.calculations() for o in c.operands]

    def used_quantities(self) -> set[int]:
        """Indices of the problem's quantities that some operand uses (a quantity of the same value as a
        used one counts as used: the text does not say which of two equal numbers a solution meant)."""
        quantities = self.problem.quantities()
        values = {quantities[o.quantity].value for _, o in self.operands() if o.quantity is not None}
        return {k for k, q in enumerate(quantities) if q.value in values}

    def written_quantities(self) -> set[int]:
        """Indices of the problem's quantities that the solution uses (``used_quantities``) or writes anywhere,
        in digits or in words, with or without a sign, as they are or as a value they imply (``implied_values``:
        ``25%`` as 25), and of those of value 1 (``one mouse every 4 weeks``: seldom written down). An equation
        with an unknown (``$\\frac{23+x}{2}=27$``) uses 23 and 27, though no calculation computes with them."""
        used = self.used_quantities()
        written = set(written_numbers(self.solution))
        written |= {abs(value) for value in written}
        written |= {Fraction(_SPOKEN_VALUES[w.lower()]) for w in _SPOKEN_NUMBER_RE.findall(self.solution)}
        return {
            k
            for k, quantity in enumerate(self.problem.quantities())
            if k in used
            or quantity.value in written
            or quantity.value == 1
            or any(v in written for v in implied_values(quantity))
        }

    def to_dict(self) -> dict:
        """JSON-ready: the problem's text and quantities, the solution, its steps, answer and notes."""
        return {
            "problem": self.problem.text,
            "quantities": [q.to_dict() for q in self.problem.quantities()],
            "solution": self.solution,
            "steps": [s.to_dict() for s in self.steps],
            "answer": None if self.answer is None else str(self.answer),
            "answer_text": self.answer_text,
            "answer_step": self.answer_step,
            "answer_line": self.answer_line,
            "notes": list(self.notes),
        }

    def to_networkx(self) -> networkx.DiGraph:
        """A ``networkx.DiGraph``: a node per problem quantity (``q0``...), constant (``k:60``), calculation
        result (``s1.0``: line 1, first calculation), unexplained operand (``u1.0.2``) and the answer
        (``answer``), each with ``kind``, ``label`` and ``value``; an edge (``relation`` "operand", with the
        operand's ``position`` and ``text``) from each operand's source to the result it feeds, and
        (``relation`` "answer") from the computing result to the answer."""
        import networkx as nx

        graph = nx.DiGraph(problem=self.problem.text, solution=self.solution)
        for k, quantity in enumerate(self.problem.quantities()):
            graph.add_node(f"q{k}", kind="quantity", label=quantity.text, value=str(quantity.value))
        for line, step in ((s.index, s) for s in self.steps):
            for c, calculation in enumerate(step.calculations):
                result = f"s{line}.{c}"
                graph.add_node(
                    result,
                    kind="result",
                    label=f"{calculation.expression} = {calculation.result_text}",
                    value=str(calculation.result),
                    step=line,
                )
                for position, operand in enumerate(calculation.operands):
                    source = _source_node(operand, f"u{line}.{c}.{position}")
                    if source not in graph:
                        kind = "unexplained" if operand.source == "none" else operand.source
                        kind = "quantity" if kind == "problem" else kind
                        label = operand.constant or operand.text
                        graph.add_node(source, kind=kind, label=label, value=str(operand.value))
                    graph.add_edge(source, result, relation="operand", position=position, text=operand.text)
        if self.answer is not None or self.answer_text is not None:
            graph.add_node("answer", kind="answer", label=self.answer_text or "", value=_text(self.answer))
            if self.answer_step is not None:
                computing = self._answer_calculation()
                if computing is not None:
                    graph.add_edge(computing, "answer", relation="answer")
        return graph

    def _answer_calculation(self) -> str | None:
        for line, step in ((s.index, s) for s in reversed(self.steps)):
            if line != self.answer_step:
                continue
            for c in reversed(range(len(step.calculations))):
                if _gives(step.calculations[c], self.answer):
                    return f"s{line}.{c}"
        return None

    def draw(
        self, path: str | PathLike | None = None, ax: matplotlib.axes.Axes | None = None
    ) -> matplotlib.figure.Figure:
        """Draw ``to_networkx()`` left to right: the problem's quantities and the constants in the first
        column, each line's results in a column of their own, the answer last; saved to ``path`` if given.
        Returns the figure."""
        from mathgraph.parsers.solution_drawing import draw_solution_graph

        return draw_solution_graph(self.to_networkx(), path=path, ax=ax)


def _source_node(operand: Operand, unexplained: str) -> str:
    if operand.source == "problem":
        return f"q{operand.quantity}" if operand.quantity is not None else f"p:{operand.value}"
    if operand.source == "step":
        return f"s{operand.step}.{operand.calculation}"
    if operand.source == "constant":
        return f"k:{operand.value}"
    return unexplained


def _text(value: Fraction | None) -> str | None:
    return None if value is None else str(value)


def _readings(calculation: Calculation) -> list[Fraction]:
    """The computed value, and 100 times it where the calculation multiplies by ``100%`` to give a percentage."""
    readings = [calculation.computed]
    if any(o.text.replace("\\", "").strip() == "100%" for o in calculation.operands):
        readings.append(calculation.computed * 100)
    if calculation.result_text.rstrip().endswith(("%", "cent")):
        readings.append(calculation.computed / 100)  # 0.5 * 100 = 50%: the percentage written as its number
    grouped = _fractions_grouped(list(calculation.terms))
    if grouped is not None:
        value = evaluate(grouped).value  # 18÷3/4 = 24, 1÷1/2 = 2: divided by the fraction
        if value is not None:
            readings.append(value)
    return readings


def _fractions_grouped(terms: list) -> list | None:
    """``a / b / c`` read as ``a / (b / c)``, each fraction after a division sign as one number (a teacher's
    reading of ``18÷3/4``); ``None`` where the terms hold no such fraction."""
    out, k, changed = [], 0, False
    while k < len(terms):
        window = terms[k : k + 4]
        if (
            len(window) == 4
            and window[0] == "/"
            and isinstance(window[1], Fraction)
            and window[2] == "/"
            and isinstance(window[3], Fraction)
        ):
            out += ["/", "(", window[1], "/", window[3], ")"]
            k += 4
            changed = True
        else:
            out.append(terms[k])
            k += 1
    return out if changed else None


def _gives(calculation: Calculation, value: Fraction | None, decimals: int | None = None) -> bool:
    """Whether ``calculation``'s result is ``value``: its stated result, or its computed value as far as the
    result's (or ``value``'s own, ``decimals``) rounding shows; a percentage counts in either form
    (``0.6`` gives ``60``)."""
    if value is None:
        return False
    stated = [calculation.result, calculation.result * 100]
    computed = [] if calculation.computed is None else [r * f for r in _readings(calculation) for f in (1, 100)]
    if value in stated:
        return True
    return any(agrees(value, c, calculation.decimals) or agrees(value, c, decimals) for c in computed)


# ------------------------------------------------------------------ parse_solution
def parse_solution(problem: MathSyntaxGraph | str, solution: str | MathSyntaxGraph) -> SolutionGraph:
    """The solution graph of ``solution`` against ``problem`` (module docstring). A ``str`` problem is parsed
    with ``parse_problem``; the solution is read as text (a parsed solution gives its text)."""
    if isinstance(problem, str):
        from mathgraph.parsers.problem import parse_problem

        problem = parse_problem(problem)
    if not isinstance(problem, MathSyntaxGraph):
        raise TypeError(f"the problem must be a text or a MathSyntaxGraph, not {type(problem).__name__}")
    text = solution.text if isinstance(solution, MathSyntaxGraph) else solution
    if not isinstance(text, str):
        raise TypeError(f"the solution must be a text, not {type(solution).__name__}")
    linker = _Linker(problem, text)
    steps = []
    notes: list[str] = []
    for line in read_lines(text):
        calculations = tuple(linker.link(line.index, c, line.mentions) for c in line.calculations)
        linker.mentioned(line)
        steps.append(SolutionStep(line.index, line.text, calculations, line.span))
        notes += [f"line {line.index}: {note}" for note in line.notes]
    if not any(step.calculations for step in steps):
        notes.append("no calculations found in the solution")
    if not problem.quantities():
        notes.append("the problem states no quantities")
    answer = read_answer(text)
    return SolutionGraph(
        problem=problem,
        solution=text,
        steps=tuple(steps),
        answer=None if answer is None else answer.value,
        answer_step=_answer_step(steps, answer, linker.solved),
        notes=tuple(notes),
        answer_line=None if answer is None else answer.line,
        answer_text=None if answer is None else answer.text,
    )


def _answer_step(steps: list[SolutionStep], answer: ReadAnswer | None, solved: dict[Fraction, int]) -> int | None:
    """The line of the last calculation, up to the answer's line, whose result is the answer (or the
    answer in percent: ``0.60`` for ``#### 60``); else the line of a value found by solving (``x = 9``)."""
    if answer is None or answer.value is None:
        return None
    for step in reversed(steps):
        if step.index > answer.line:
            continue
        decimals = shown_decimals(answer.text)
        if any(_gives(c, answer.value, decimals) for c in step.calculations):
            return step.index
    return solved.get(answer.value)


@dataclass
class _Linker:
    """Links the operands of a solution's calculations, in order, to their sources."""

    problem: MathSyntaxGraph
    solution: str
    results: dict[Fraction, tuple[int, int]] = field(default_factory=dict)  # value -> (line, calculation)
    by_start: dict[int, tuple[int, int]] = field(default_factory=dict)  # span start -> (line, calculation)
    used: set[int] = field(default_factory=set)
    mentions: dict[Fraction, int] = field(default_factory=dict)  # value -> line that wrote it
    solved: dict[Fraction, int] = field(default_factory=dict)  # value -> line that found it by solving

    def __post_init__(self):
        quantities = self.problem.quantities()
        self.exact: dict[Fraction, list[int]] = {}
        self.implied: dict[Fraction, list[int]] = {}
        for k, quantity in enumerate(quantities):
            self.exact.setdefault(quantity.value, []).append(k)
            for value in implied_values(quantity):
                self.implied.setdefault(value, []).append(k)
        self.written = {
            read[0]
            for read in (parse_number(m.group()) for m in _PROBLEM_NUMBER_RE.finditer(self.problem.text))
            if read is not None
        }
        self.written |= (
            _named_ranges(self.problem.text) | _listed(self.problem.text) | _ordinal_counts(self.problem.text)
        )
        self.constants = available_constants(self.problem.text + "\n" + self.solution)
        self.counts: dict[int, int] = {}
        self.written_here: set[Fraction] = set()
        self.sum_terms: dict[Fraction, int] = {}  # the result of each sum, and how many terms it added
        self.averages = bool(_AVERAGE_RE.search(self.problem.text))

    def mentioned(self, line: ReadLine) -> None:
        """Remember the numbers ``line`` writes outside its calculations, for the lines after it."""
        for mention in line.mentions:
            self.mentions.setdefault(mention.value, line.index)
            if "%" in mention.text:  # "an even split is 50%", then "14 * 50 * .01"
                self.mentions.setdefault(mention.value * 100, line.index)
            if mention.solved:
                self.solved[mention.value] = line.index

    def _pick(self, candidates: list[int]) -> int:
        """Of the problem's quantities with a value, the first one not used yet (else the first)."""
        quantity = next((k for k in candidates if k not in self.used), candidates[0])
        self.used.add(quantity)
        return quantity

    def _cued_constant(self, read) -> str | None:
        """A known constant the solution names right after the number (``12 months``, ``60 minutes``), where no
        quantity of the problem with that value is counted in that unit."""
        constant = self.constants.get(read.value)
        word = _next_word(self.solution, read.span[1])
        if constant is None or not word or not any(word.startswith(cue) for cue in constant.cues):
            return None
        for k in self.exact.get(read.value, []):
            quantity = self.problem.quantities()[k]
            said = " ".join(filter(None, (quantity.text, quantity.unit, quantity.object))).lower()
            if any(cue in said for cue in constant.cues):
                return None
        return constant.name

    def link(self, line: int, read: ReadCalculation, mentions: tuple = ()) -> Calculation:
        index = self.counts.get(line, 0)
        self.counts[line] = index + 1
        self.written_here = set()  # a number the problem writes or names explains one operand of a calculation
        before = {m.value * f for m in mentions if m.span[1] <= read.span[0] for f in (1, 100 if "%" in m.text else 1)}
        operands = self._averaged(read, tuple(self._linked(line, operand, before) for operand in read.operands))
        calculation = Calculation(
            expression=read.expression,
            operands=operands,
            result=read.result,
            computed=read.computed,
            form=read.form,
            span=read.span,
            result_text=read.result_text,
            decimals=read.decimals,
            note=read.note,
            terms=read.items,
        )
        self.by_start[read.span[0]] = (line, index)
        self.results[read.result] = (line, index)
        if len(read.operands) > 1 and set(read.items[1::2]) == {"+"}:
            self.sum_terms[read.result] = len(read.operands)
        if read.result.numerator == 1 and read.result > 0:
            # "20/60 = 1/3 of an hour", then "6 / 3": dividing by the whole that a unit fraction is a part of
            self.results.setdefault(Fraction(read.result.denominator), (line, index))
        if read.computed is not None:
            # after a slip (48/2 = 25), later lines may go on from the right value: this calculation gives it too
            self.results.setdefault(read.computed, (line, index))
        return calculation

    def _averaged(self, read: ReadCalculation, operands: tuple[Operand, ...]) -> tuple[Operand, ...]:
        """Where the problem asks for an average or a mean, the divisor of an earlier sum's result that is
        how many terms the sum added (``60 + 30 + 15 = 105``, then ``105 / 3``): the count of the values
        averaged, not an operand from nowhere."""
        if not self.averages or len(operands) != 2 or tuple(read.items[1::2]) not in (("/",), ("÷",)):
            return operands
        dividend, divisor = operands
        if divisor.source != "none" or self.sum_terms.get(dividend.value) != divisor.value:
            return operands
        return dividend, replace(divisor, source="constant", constant="the number of values averaged")

    def _linked(self, line: int, read, mentioned_before: set[Fraction]) -> Operand:
        """The operand's source; a number after a minus sign (``-48 / 4``) may be the negative it follows."""
        operand = self._operand(line, read, mentioned_before)
        loosely = operand.source == "none" or (operand.source == "problem" and operand.quantity is None)
        if loosely and read.value:  # nothing, or only the digits of a problem's number ("4" of "-4")
            negative = self._operand(line, ReadOperand(-read.value, read.text, read.span), mentioned_before)
            if negative.source != "none" and (operand.source == "none" or negative.quantity is not None):
                return Operand(**{**negative.__dict__, "value": read.value})
        return operand

    def _operand(self, line: int, read, mentioned_before: set[Fraction]) -> Operand:
        base = {"value": read.value, "text": read.text, "span": read.span}
        if read.text.replace("\\", "").strip() == "100%":
            return Operand(**base, source="constant", constant="one whole (100%)")
        if read.fraction is not None and read.value != 100:
            # 2 and 5 of "2/5 * 30" where the problem says "2/5" (or "two fifths"); 3 and 4 of "1 - 3/4" where it
            # says "one-fourth", 1 and 3 of "1/3" hour where it says "20 minutes" (what a quantity implies)
            # (a proper fraction only, for what is implied: "300/200" is no 1.5 hours that 90 minutes imply)
            for table in (self.exact, self.implied) if read.fraction < 1 else (self.exact,):
                if read.fraction in table:
                    return Operand(**base, source="problem", quantity=self._pick(table[read.fraction]))
        cued = self._cued_constant(read)
        if cued is not None:
            return Operand(**base, source="constant", constant=cued)
        if read.chained_from is not None and read.chained_from in self.by_start:
            step, calculation = self.by_start[read.chained_from]
            return Operand(**base, source="step", step=step, calculation=calculation)
        unused = [k for k in self.exact.get(read.value, []) if k not in self.used]
        if unused:
            return Operand(**base, source="problem", quantity=self._pick(unused))
        if read.value in self.results:
            step, calculation = self.results[read.value]
            return Operand(**base, source="step", step=step, calculation=calculation)
        for table in (self.exact, self.implied):
            if read.value in table:
                return Operand(**base, source="problem", quantity=self._pick(table[read.value]))
        if read.value in self.written and read.value not in self.written_here:
            self.written_here.add(read.value)  # "3 * 3" for 3 days: one 3 is the count, the other is not
            return Operand(**base, source="problem")
        constant = self.constants.get(read.value)
        # one explains a product too ("1 * 7" for a sandwich a day): what a problem's "a" or "each" counts
        if constant is not None:
            return Operand(**base, source="constant", constant=constant.name)
        # a number an earlier line (or this one, before the calculation) writes as a fact it found:
        # "Dave won 10 games", then "10 + 5 = 15"
        if read.value in mentioned_before:
            return Operand(**base, source="step", step=line)
        if read.value in self.mentions:
            return Operand(**base, source="step", step=self.mentions[read.value])
        return Operand(**base, source="none")


def _next_word(text: str, end: int) -> str:
    match = _NEXT_WORD_RE.match(text, end)
    return match.group(1).lower() if match else ""


def problem_values(problem: MathSyntaxGraph) -> set[Fraction]:
    """Every value the problem's quantities give or imply (``implied_values``)."""
    return {v for q in problem.quantities() for v in (q.value, *implied_values(q))}


_AVERAGE_RE = re.compile(r"\b(?:average|mean)\b", re.IGNORECASE)
# number words a solution writes ("the first three episodes"): two to nineteen and the tens
_SPOKEN_VALUES = {word: value for word, value in {**UNIT_WORDS, **TENS_WORDS}.items() if value >= 2}
_SPOKEN_NUMBER_RE = re.compile(r"\b(" + "|".join(_SPOKEN_VALUES) + r")\b", re.IGNORECASE)
# A sign, a dollar sign and a percent sign are part of a number a solution writes: "-3", "$2.50", "25%".
_WRITTEN_NUMBER_RE = re.compile(rf"-?\$?{DIGITS_PATTERN}%?")


def written_numbers(text: str) -> list[Fraction]:
    """Every number ``text`` writes in digits, in order (``$2.50`` is 5/2, ``25%`` is 1/4, ``1,000`` is 1000);
    one with more digits than ``MAX_DIGITS`` is left out."""
    numbers = []
    for match in _WRITTEN_NUMBER_RE.finditer(text):
        written = match.group().replace("$", "")
        digits = written.rstrip("%")
        if sum(c.isdigit() for c in digits) > MAX_DIGITS:
            continue
        parsed = parse_number(digits)
        if parsed is not None:
            numbers.append(parsed[0] / 100 if written.endswith("%") else parsed[0])
    return numbers


def implied_values(quantity: Quantity) -> list[Fraction]:
    """The numbers a quantity implies (module docstring): ``25%`` -> 25, 3/4, 75; ``half`` -> 2, 1/2."""
    value = quantity.value
    implied = []
    percent = quantity.form == "percent" or quantity.unit == "%" or quantity.text.rstrip().endswith("%")
    said = " ".join(filter(None, (quantity.text, quantity.unit, quantity.object))).lower()
    for known in KNOWN_CONSTANTS:
        # "2 weeks" -> 14 days, "3 hours" -> 180 minutes, "$2.50" -> 250 cents, "500 grams" -> 0.5 kilograms:
        # the quantity in the units its own unit holds or is held in
        if known.conversion and any(re.search(rf"(?<![a-z]){re.escape(c)}", said) for c in known.cues):
            implied += [value * known.value, value / known.value]
    if percent:
        # 25% of: 25 / 100; 20% off: 80; 50% more: 1.5 or 150 (150 * .01 * 12)
        implied += [value * 100, 100 - value * 100, 1 + value, 100 + value * 100]
    if 0 < value < 1:
        # two thirds: 2/3 of 81 is 81 / 3 * 2; the rest: 1 - 2/3
        implied += [1 - value, Fraction(value.denominator)] + (
            [Fraction(value.numerator)] if value.numerator > 1 else []
        )
    return implied


_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october")
_MONTHS += ("november", "december")
_RANGE_RE = re.compile(r"\b([a-z]+)\s+(?:to|through|thru|until|till|-|–)\s+([a-z]+)\b")


_ITEM = r"[A-Za-z][A-Za-z'\-]*(?: [A-Za-z][A-Za-z'\-]*)?"
# three to a dozen things named one after another: "Gretchen, Mitzi, and Beth", "knives, forks, and spoons" (the
# bound keeps a long run of commas with no "and" linear to scan)
_LISTED_RE = re.compile(rf"\b{_ITEM}(?:, {_ITEM}){{1,10}},? (?:and|or) {_ITEM}\b")
_LIST_SEPARATOR_RE = re.compile(r",? (?:and|or) |, ")


def _listed(text: str) -> set[Fraction]:
    """How many things a list of the problem names, three to twelve (``Gretchen, Mitzi, and Beth`` is 3): a
    solution divides by the count it never writes (``318/3`` for their average)."""
    return {Fraction(len(_LIST_SEPARATOR_RE.split(match.group()))) for match in _LISTED_RE.finditer(text)}


# "third" to "tenths" (half and quarter are constants already; "hundredth" is no count)
_ORDINALS = [word for word, n in ORDINAL_DENOMINATORS.items() if 3 <= n <= 10 and not word.startswith("quarter")]
_ORDINAL_RE = re.compile(r"\b(" + "|".join(_ORDINALS) + r")\b")
_DAY_RE = re.compile(r"\b(" + "|".join(_DAYS) + r")s?\b")


def _ordinal_counts(text: str) -> set[Fraction]:
    """The numbers the problem's ordinals name: "every seventh page" is one page in 7, "after the third week" 3
    weeks, "cut into fifths" 5 pieces; and how many days of the week it names, three or more ("On Thursday ...
    On Friday ... On Saturday": 3 days for a mean per day)."""
    lowered = text.lower()
    counts = {Fraction(ORDINAL_DENOMINATORS[word]) for word in _ORDINAL_RE.findall(lowered)}
    days = set(_DAY_RE.findall(lowered))
    return counts | ({Fraction(len(days))} if len(days) >= 3 else set())


def _named_ranges(text: str) -> set[Fraction]:
    """How many days or months a range the problem names holds: "Monday to Thursday" is 4, "from April to
    September" is 6."""
    counts = set()
    for first, last in _RANGE_RE.findall(text.lower()):
        for names in (_DAYS, _MONTHS):
            if first in names and last in names:
                counts.add(Fraction((names.index(last) - names.index(first)) % len(names) + 1))
    return counts
