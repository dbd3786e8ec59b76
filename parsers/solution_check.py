"""Checking a worked solution against its problem, on its solution graph (``parsers.solution_graph``).

``check_solution(problem, solution)`` returns a ``SolutionCheck``: ``ok`` (no error), the ``findings``
in the order of the solution, the graph, and ``first_error_step`` (the 0-based line of the earliest
error; ``None`` when ok). Each ``Finding`` has a ``kind``, a ``severity``, the ``step`` (0-based line
of the solution; ``None`` for a finding about the problem) and a message a student can read:

| kind | severity | when |
|---|---|---|
| ``arithmetic`` | error | a stated calculation whose result is wrong beyond the rounding the solution shows (``26/6 = 4.33`` is right: 4.33 shows two decimals) |
| ``unexplained_operand`` | error | an operand that is not a quantity of the problem, an earlier result or a known constant; or a number miscopied into a calculation whose result goes nowhere, where a later step goes on with (or the answer is) what the calculation gives with a value of the problem in its place (``_miscopies``) |
| ``unused_quantity`` | warning | a quantity of the problem that the solution never uses or writes (it may be a distractor) |
| ``answer_mismatch`` | error | the final answer is not the result of any calculation, and no miscopied number accounts for it (only where the solution states calculations; a line left open before the answer, ``300*$920 =`` then ``#### 276000``, is completed by it, and is an ``arithmetic`` error where it makes another number) |
| ``false_claim`` | error | an equality of the solution's LaTeX math that does not hold, as ``parsers.solution_claims`` evaluates it: ``\\sqrt{50} = 7``, ``\\binom{5}{2} = 12``, or a rewrite ``(x+1)^2 = x^2 + x + 1`` in a chain; or the equation where the working goes over to a wrong value, found by substituting the value solved for back (``substituted_back``: ``3x + 2 = 14`` then ``3x = 10``, ``x = 10/3``) |
| ``suspect_step`` | error | the line the step verifier (``parsers.step_verifier``) finds most likely to be the first wrong step, where its probability reaches the verifier's threshold and no rule found an error there; the finding carries the ``probability`` |
| ``inverse_operation`` | error | a calculation that applies a relation the problem's words state the other way round to the number it relates to (``parsers.solution_relations``): ``12 * 2`` where the problem says "half as many as Jo, who has 12", ``12 + 3`` for "3 fewer than", ``10 * 0.8`` for "20% more than" |
| ``answer_unit`` | error | the final answer is last written with another unit of the measure the question asks in (``parsers.solution_relations.answer_unit``): the question asks "how many minutes", the solution ends on "1.5 hours" |
| ``no_work`` | warning | the solution shows no work: no calculation, and no number but its final answer ("The answer is 8.", or a bare "8"; not where the answer is no number, ``#### None``); it then gets no ``unused_quantity`` warnings, since no step uses any quantity |

The named numbers of the same graph that models read (``solution_graph_features``) are
``parsers.solution_features``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph
from mathgraph.parsers.numbers import DIGITS_PATTERN, parse_number
from mathgraph.parsers.solution_claims import Claim, latex_claims, substituted_back
from mathgraph.parsers.solution_graph import Calculation, SolutionGraph, implied_values, parse_solution, problem_values
from mathgraph.parsers.solution_reader import math_spans, read_lines
from mathgraph.parsers.solution_relations import answer_unit, inverted_relations

__all__ = [
    "Finding",
    "SolutionCheck",
    "check_solution",
    "check_graph",
    "with_verifier",
    "FINDING_KINDS",
]

FINDING_KINDS = {
    "arithmetic": "error",
    "unexplained_operand": "error",
    "unused_quantity": "warning",
    "answer_mismatch": "error",
    "false_claim": "error",
    "suspect_step": "error",
    "inverse_operation": "error",
    "answer_unit": "error",
    "no_work": "warning",
}


@dataclass(frozen=True)
class Finding:
    """One thing a check found: ``kind`` (a key of ``FINDING_KINDS``), ``severity`` ("error" or "warning"),
    ``step`` (the 0-based line of the solution, ``None`` for the problem) and a ``message`` in words."""

    kind: str
    severity: str
    step: int | None
    message: str
    probability: float | None = None  # the step verifier's, for a ``suspect_step``

    def to_dict(self) -> dict:
        """JSON-ready: kind, severity, step and message (and probability, where there is one)."""
        data = {"kind": self.kind, "severity": self.severity, "step": self.step, "message": self.message}
        if self.probability is not None:
            data["probability"] = round(self.probability, 4)
        return data


@dataclass(frozen=True)
class SolutionCheck:
    """What ``check_solution`` found (module docstring)."""

    ok: bool
    findings: tuple[Finding, ...]
    graph: SolutionGraph
    first_error_step: int | None
    claims: tuple[Claim, ...] = ()  # the equalities of its LaTeX math (``parsers.solution_claims``)

    def errors(self) -> list[Finding]:
        """The findings of severity ``error``."""
        return [f for f in self.findings if f.severity == "error"]

    def to_dict(self, graph: bool = True) -> dict:
        """JSON-ready: ok, first_error_step, findings and (unless ``graph`` is false) the solution graph."""
        data = {
            "ok": self.ok,
            "first_error_step": self.first_error_step,
            "findings": [f.to_dict() for f in self.findings],
        }
        if graph:
            data["graph"] = self.graph.to_dict()
        return data


def check_solution(problem: MathSyntaxGraph | str, solution: str, verifier="auto") -> SolutionCheck:
    """Check ``solution`` against ``problem`` (module docstring); a ``str`` problem is parsed first.
    ``verifier``: the step verifier that adds ``suspect_step`` findings ("auto": the packaged one where its
    weights are installed; ``None``: the rules alone; or a ``parsers.step_verifier.StepVerifier``)."""
    return check_graph(parse_solution(problem, solution), verifier)


def check_graph(graph: SolutionGraph, verifier="auto") -> SolutionCheck:
    """The findings of a solution graph (``check_solution`` without the reading)."""
    return with_verifier(_rule_check(graph), verifier)


def with_verifier(check: SolutionCheck, verifier="auto") -> SolutionCheck:
    """``check`` (of the rules) with the ``suspect_step`` findings of ``verifier`` added ("auto": the packaged
    step verifier where its weights are installed; ``None``: none)."""
    graph = check.graph
    verifier = _packaged_verifier() if isinstance(verifier, str) and verifier == "auto" else verifier
    if verifier is None or not check.graph.steps:
        return check
    suspect = verifier.suspect_line(check)
    if suspect is None or suspect[0] in {f.step for f in check.errors()}:
        return check
    line, p = suspect
    message = f"This step looks wrong to the step verifier (probability {p:.2f}): check what it claims."
    return _result([*check.findings, Finding("suspect_step", "error", line, message, p)], graph, check.claims)


_VERIFIER: list = []


def _packaged_verifier():
    """The packaged step verifier (``mathgraph/data/step_verifier.json``), loaded once; ``None`` without it."""
    if not _VERIFIER:
        from mathgraph.parsers.step_verifier import WEIGHTS, StepVerifier

        _VERIFIER.append(StepVerifier.load(WEIGHTS) if WEIGHTS.exists() else None)
    return _VERIFIER[0]


def _result(findings: list[Finding], graph: SolutionGraph, claims: tuple) -> SolutionCheck:
    findings.sort(key=lambda f: (f.step is None, f.step if f.step is not None else 0))
    errors = [f.step for f in findings if f.severity == "error" and f.step is not None]
    ok = not any(f.severity == "error" for f in findings)
    return SolutionCheck(ok, tuple(findings), graph, min(errors) if errors else None, claims)


_SUBSTITUTED_MESSAGE = (
    "The value this solution solves for does not satisfy the equations written before this step, but it "
    "satisfies this step's equation: the equation was changed wrongly here."
)


def _rule_check(graph: SolutionGraph) -> SolutionCheck:
    """The findings of the rules alone."""
    findings: list[Finding] = []
    claims: tuple[Claim, ...] = ()
    symbolic = _symbolic_style(graph)
    repairs = _Repairs([], set(), set()) if symbolic else _miscopies(graph)
    written = _written_before(graph) if symbolic else {}
    for line, calculation in graph.calculations():
        if calculation.checks_out is False:
            findings.append(_finding("arithmetic", line, _arithmetic_message(calculation)))
        for operand in calculation.operands:
            if operand.source == "none" and id(operand) not in repairs.explained | repairs.miscopied:
                if symbolic and _introduced(operand, written):
                    continue
                findings.append(_finding("unexplained_operand", line, _unexplained_message(calculation, operand)))
    findings += repairs.findings
    findings += [_finding("inverse_operation", r.line, r.message) for r in inverted_relations(graph)]
    unit = answer_unit(graph)
    if unit is not None:
        findings.append(_finding("answer_unit", unit.line, unit.message))
    if symbolic:
        claims = tuple(latex_claims(graph.solution))
        findings += [_finding("false_claim", c.line, _claim_message(c)) for c in claims if c.verdict == "fails"]
        failing = {c.line for c in claims if c.verdict == "fails"}
        findings += [
            _finding("false_claim", line, _SUBSTITUTED_MESSAGE)
            for line in substituted_back(graph.solution)
            if line not in failing
        ]
    completion = _open_line(graph) if graph.answer_step is None else None
    if completion is not None and completion[1].computed != graph.answer:
        line, calculation = completion
        findings.append(
            _finding(
                "arithmetic",
                line,
                f"“{calculation.expression} =” makes {_readable(calculation.computed)}, not the final answer "
                f"{graph.answer_text}.",
            )
        )
    if (
        graph.answer is not None
        and graph.answer_step is None
        and graph.calculations()
        and not repairs.answer
        and completion is None
    ):
        mismatch = _finding(
            "answer_mismatch",
            graph.answer_line,
            f"The final answer {graph.answer_text} is not the result of any calculation in the solution: "
            "check that it is the number the last step computed.",
        )
        # an answer a symbolic solution argues for (a count, a root, a case) need not be a calculation's result
        findings.append(Finding(mismatch.kind, "warning", mismatch.step, mismatch.message) if symbolic else mismatch)
    no_work = _shows_no_work(graph)
    if no_work:
        findings.append(_finding("no_work", _no_work_line(graph), _no_work_message(graph)))
    written = graph.written_quantities()
    for k, quantity in enumerate(graph.problem.quantities()):
        if k not in written and not no_work:
            what = f"{quantity.text} {quantity.object}" if quantity.object else quantity.text
            findings.append(
                _finding(
                    "unused_quantity",
                    None,
                    f"The problem gives “{what}”, but no step uses it: it may be a distractor, or a step may be "
                    "missing.",
                )
            )
    return _result(findings, graph, claims)


@dataclass
class _Repairs:
    findings: list[Finding]
    explained: set[int]  # ids of the unexplained operands a miscopy accounts for
    miscopied: set[int]  # ids of the operands reported as miscopied (said once, with the better message)
    answer: bool = False  # a miscopy accounts for a final answer that no calculation gives


def _miscopies(graph: SolutionGraph) -> _Repairs:
    """Numbers miscopied into a calculation whose result then goes nowhere, found from what comes after it.

    A solution that copies 46 for the problem's 48 in ``46/2 = 23`` and later goes on with 24 leaves 23
    *dangling* (no later step computes with it, and it is not the answer) and 24 unexplained two lines
    down, though the error is where 46 was written. So for each later number, look back for a dangling
    calculation that gives exactly that number when one of its numbers is replaced by a value of the
    problem: that number is reported (once) as miscopied, at its line. The later number may be
    unexplained (it is then not reported itself) or explained by chance, where the wrong number and what
    it should have been still show (``_repair``). The final answer counts as a later number too, for the
    dangling calculations after the one that gives it (all of them where none does: a miscopy in the last
    step leaves the answer following from nothing, and is then reported there, not as ``answer_mismatch``).
    """
    repairs = _Repairs([], set(), set())
    calculations = graph.calculations()
    # the values a miscopied number may have stood for; a value with more than two decimals (7/128, that a
    # unit conversion implies) gives some result by chance more often than a miscopy does
    values = sorted(v for v in problem_values(graph.problem) if (v * 100).denominator == 1)
    chance = _chance_sources(calculations)
    unused = _unused_values(graph)
    dangling = _dangling(graph, calculations)
    gives: dict = {}  # what each dangling calculation gives with one number replaced (``_repair``)
    reported: set[int] = set()

    def report(repair, wanted: Fraction, what: str) -> None:
        (earlier_line, earlier), position, value = repair
        if id(earlier) in reported:
            return
        reported.add(id(earlier))
        copied = earlier.operands[position]
        repairs.miscopied.add(id(copied))
        repairs.findings.append(
            _finding(
                "unexplained_operand",
                earlier_line,
                f"{copied.text} in “{earlier.expression} = {earlier.result_text}” looks miscopied: with "
                f"{_readable(value)} from the problem this step gives {_readable(wanted)}, {what}.",
            )
        )

    for index, (_, calculation) in enumerate(calculations):
        earlier = [calculations[k] for k in sorted(dangling) if k < index]
        for operand in calculation.operands:
            if operand.source == "none":
                repair = _repair(earlier, values, operand.value, chance, gives=gives)
                if repair is not None:
                    repairs.explained.add(id(operand))
            else:
                repair = _repair(earlier, values, operand.value, chance, unused, gives)
            if repair is not None:
                report(repair, operand.value, "the number a later step goes on with")
    if graph.answer is not None and calculations:
        after = -1 if graph.answer_step is None else graph.answer_step
        earlier = [c for k, c in enumerate(calculations) if k in dangling and c[0] > after]
        repair = _repair(earlier, values, graph.answer, chance, unused, gives)
        if repair is not None:
            repairs.answer = graph.answer_step is None
            report(repair, graph.answer, "the final answer")
    return repairs


_OPEN_LINE_RE = re.compile(r"=\s*\$?\s*$")


def _open_line(graph: SolutionGraph):
    """The last line before the final answer left open (``300*$920 =``, then ``#### 276000``), read again with
    the answer written after its equals sign: ``(line, calculation)``, ``None`` where no line is open or it
    states no calculation so."""
    found = None
    for step in graph.steps:
        if graph.answer is None or (graph.answer_line is not None and step.index >= graph.answer_line):
            break
        if _OPEN_LINE_RE.search(step.text):
            completed = read_lines(step.text.rstrip() + " " + graph.answer_text.strip())
            calculations = [c for line in completed for c in line.calculations]
            if calculations and calculations[-1].result == graph.answer and calculations[-1].computed is not None:
                found = step.index, calculations[-1]
    return found


def _symbolic_style(graph: SolutionGraph) -> bool:
    """Whether the solution is written in LaTeX math (``\\frac``, ``\\(x^2\\)``, ``$a_1 r^4$``), as competition
    solutions are: it works with numbers it introduces itself (a case, a substitution, a power, a count)."""
    return bool(math_spans(graph.solution)) or any(c.form == "latex" for _, c in graph.calculations())


def _written_before(graph: SolutionGraph) -> tuple[set[Fraction], list[tuple[int, Fraction]]]:
    """The numbers the problem writes, and ``(end, value)`` of each number the solution writes."""
    solution = [
        (m.end(), read[0]) for m in _NUMBER_RE.finditer(graph.solution) if (read := parse_number(m.group())) is not None
    ]
    return _numbers(graph.problem.text), solution


def _introduced(operand, written: tuple[set[Fraction], list[tuple[int, Fraction]]]) -> bool:
    """An operand a symbolic solution may introduce itself: a whole number up to 12 (a count, a case, a
    small factor), a number written before it (by the problem or the solution: a value found in words or
    in an expression, ``7^2`` before ``3 \\cdot 49``), or one such number's square, cube, reciprocal,
    neighbour (``30 \\times 29``), percentage (``10%`` -> 0.1, 1.1, 0.9), or the product or quotient of
    two (``\\frac{84}{7}`` where 12 and 7 are written)."""
    value = operand.value
    if value.denominator == 1 and abs(value) <= 12:
        return True
    problem, solution = written
    seen = problem | {v for end, v in solution if end <= operand.span[0]}
    if value in seen or -value in seen:
        return True
    small = sorted(v for v in seen if v and abs(v) < 1000)[:60]
    derived = {w for v in small for w in (v * v, v**3, 1 / v, v + 1, v - 1, v / 100, 1 + v / 100, 1 - v / 100)}
    derived |= {a * b for a in small for b in small} | {a / b for a in small for b in small}
    return value in derived


def _shows_no_work(graph: SolutionGraph) -> bool:
    """No calculation, and no number written but the final answer. A solution that is one bare number, which
    ``read_answer`` takes for no answer, counts as that answer; one whose answer is no number (``#### None``
    where the problem cannot be answered, GSM-Plus "critical thinking") argues in words, not in numbers."""
    if graph.calculations() or (graph.answer is None and graph.answer_text is not None):
        return False
    numbers = set().union(*(_numbers(step.text) for step in graph.steps)) - {graph.answer}
    return len(numbers) <= (graph.answer is None)


def _no_work_line(graph: SolutionGraph) -> int | None:
    """The line of the final answer, else the solution's first line (``None`` for an empty solution)."""
    if graph.answer_line is not None:
        return graph.answer_line
    return graph.steps[0].index if graph.steps else None


def _no_work_message(graph: SolutionGraph) -> str:
    given = "an answer" if graph.answer is None else f"the answer {graph.answer_text}"
    return (
        f"The solution shows no work: no calculation and no number that lead to {given}, so there is no step "
        "to check. Write the steps that give the answer."
    )


def _chance_sources(calculations: list) -> set[int]:
    """Ids of the operands whose source a miscopied number may have by chance: none, a number an earlier
    line writes, a known constant, a number of the problem that is not a quantity, or a quantity that an
    earlier calculation already used (6 * 20 for 6 * 15, where the problem says 20 and a step used it)."""
    chance, seen = set(), set()
    for _, calculation in calculations:
        for operand in calculation.operands:
            if operand.source == "step":
                weak = operand.calculation is None
            elif operand.source == "problem":
                weak = operand.quantity is None or operand.quantity in seen
                seen.add(operand.quantity)
            else:
                weak = True
            if weak:
                chance.add(id(operand))
    return chance


def _unused_values(graph: SolutionGraph) -> set[Fraction]:
    """The values (and implied values) of the problem's quantities that no operand is linked to. Unlike
    ``used_quantities`` this counts quantities, not values: where the problem says 5 twice and the
    solution computes with one 5, the other is unused (a miscopy may have replaced it)."""
    linked = {o.quantity for _, o in graph.operands()}
    return {
        v
        for k, quantity in enumerate(graph.problem.quantities())
        if k not in linked
        for v in (quantity.value, *implied_values(quantity))
    }


def _dangling(graph: SolutionGraph, calculations: list) -> set[int]:
    """Indices of the calculations whose result goes nowhere: no later operand is linked to it or has its
    value (also as a percentage, 0.2 and 20, or as the whole it divides, 1/3 and 3, or as a fraction that
    two numbers write, 2/3), no later line writes it (unless it is also a quantity of the problem), and it
    is not the final answer."""
    quantities = {q.value for q in graph.problem.quantities()}
    written = {step.index: _numbers(step.text) - quantities for step in graph.steps}
    places = {}  # id of a calculation -> (line, its index in the line)
    for line, step in ((s.index, s) for s in graph.steps):
        places.update({id(c): (line, k) for k, c in enumerate(step.calculations)})
    # walking back from the end: what the calculations after this one compute with, and what the lines
    # after this one write
    linked, values, lines_after, seen_lines = set(), set(), set(), set()
    dangling = set()
    for index in reversed(range(len(calculations))):
        line, calculation = calculations[index]
        for later in (s for s in graph.steps if s.index > line and s.index not in seen_lines):
            lines_after |= written[later.index]
            seen_lines.add(later.index)
        gives = {calculation.result, calculation.computed} - {None}
        gives |= {v * f for v in gives for f in (100, Fraction(1, 100))} | {1 / v for v in gives if v}
        if places[id(calculation)] not in linked and not gives & (values | lines_after) and graph.answer not in gives:
            dangling.add(index)
        operands = calculation.operands
        linked |= {(o.step, o.calculation) for o in operands if o.source == "step"}
        values |= {o.value for o in operands} | {a.value / b.value for a, b in zip(operands, operands[1:]) if b.value}
    return dangling


# Unsigned: a minus in a line is a subtraction ("50-20" writes 20). Never from inside a longer run of digits
# that is no one number ("12,3456" does not write 6, "1.2.3" does not write .3).
_NUMBER_RE = re.compile(rf"(?<![\d.]){DIGITS_PATTERN}")


def _numbers(text: str) -> set[Fraction]:
    """The numbers a line writes (in its words and its annotations alike), read by ``parse_number``: none
    longer than ``MAX_DIGITS`` digits, which no step reads either."""
    return {read[0] for m in _NUMBER_RE.finditer(text) if (read := parse_number(m.group())) is not None}


def _repair(
    earlier: list,
    values: list[Fraction],
    wanted: Fraction,
    chance: set[int],
    unused: set[Fraction] | None = None,
    gives: dict | None = None,
):
    """The latest of ``earlier`` (dangling calculations) whose result would be ``wanted`` with one of its
    numbers replaced by a value of the problem: that calculation, the position of the number and the value;
    ``None`` when there is none. Unexplained numbers are tried first, then those with a source they may
    have by chance (ids in ``chance``), then the others.

    With ``unused`` (for a ``wanted`` that is explained), a number may be replaced only where its own
    source is one it may have by chance, or by a value of a quantity that no step uses (``unused``): a
    step that takes one quantity for another leaves the right one unused. Without, any number may be
    (``wanted`` is unexplained: the error is there already, only its place is in question). ``gives``
    keeps, per calculation, what each replacement gives (``_replacements``), for the next call."""
    gives = {} if gives is None else gives
    for line, calculation in reversed(earlier):
        if id(calculation) not in gives:
            gives[id(calculation)] = _replacements(calculation, values, chance)
        for position, value in gives[id(calculation)].get(wanted, ()):
            operand = calculation.operands[position]
            if unused is None or id(operand) in chance or value in unused:
                return (line, calculation), position, value
    return None


def _replacements(calculation: Calculation, values: list[Fraction], chance: set[int]) -> dict:
    """``{result: [(position, value), ...]}``: what the calculation gives with the number at ``position``
    replaced by ``value`` (in the order ``_repair`` tries them), leaving out its own result."""
    found: dict[Fraction, list[tuple[int, Fraction]]] = {}
    if not calculation.terms or calculation.computed is None:
        return found
    operands = calculation.operands
    positions = sorted(
        range(len(operands)), key=lambda k: (operands[k].source != "none", id(operands[k]) not in chance)
    )
    for position in positions:
        for value in values:
            if value == operands[position].value:
                continue
            result = calculation.computed_with(position, value)
            if result is not None and result not in (calculation.result, calculation.computed):
                found.setdefault(result, []).append((position, value))
    return found


def _unexplained_message(calculation: Calculation, operand) -> str:
    return (
        f"Where does {operand.text} in “{calculation.expression} = {calculation.result_text}” come from? It is not "
        "a number of the problem, the result of an earlier step or a known constant (such as 60 minutes in an "
        "hour): check that it was copied right."
    )


def _claim_message(claim: Claim) -> str:
    if claim.values is None:
        return f"“{claim.left} = {claim.right}” does not hold: the two sides differ for other values of the letters."
    left, right = (f"{v:.6g}" for v in claim.values)
    return f"“{claim.left} = {claim.right}” does not hold: the left side makes {left}, the right side {right}."


def _finding(kind: str, step: int | None, message: str) -> Finding:
    return Finding(kind, FINDING_KINDS[kind], step, message)


def _arithmetic_message(calculation: Calculation) -> str:
    return (
        f"“{calculation.expression} = {calculation.result_text}” does not check out: "
        f"{calculation.expression} makes {_readable(calculation.computed)}, not {calculation.result_text}."
    )


def _readable(value: Fraction) -> str:
    """A value as a student writes it: ``24``, ``0.25``, or ``13/3 (about 4.33)``."""
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    for factor in (2, 5):
        while denominator % factor == 0:
            denominator //= factor
    if denominator == 1 and value.denominator <= 10**6 and abs(value.numerator).bit_length() < 900:
        digits = len(str(value.denominator)) - 1 + 3
        return f"{float(value):.{digits}f}".rstrip("0").rstrip(".")
    magnitude = abs(value.numerator) // value.denominator
    if magnitude.bit_length() > 64:
        return str(value)
    return f"{value} (about {float(value):.2f})"
