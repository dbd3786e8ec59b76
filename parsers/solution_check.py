"""Checking a worked solution against its problem, on its solution graph (``parsers.solution_graph``).

``check_solution(problem, solution)`` returns a ``SolutionCheck``: ``ok`` (no error), the ``findings``
in the order of the solution, the graph, and ``first_error_step`` (the 0-based line of the earliest
error; ``None`` when ok). Each ``Finding`` has a ``kind``, a ``severity``, the ``step`` (0-based line
of the solution; ``None`` for a finding about the problem) and a message a student can read:

| kind | severity | when |
|---|---|---|
| ``arithmetic`` | error | a stated calculation whose result is wrong beyond the rounding the solution shows (``26/6 = 4.33`` is right: 4.33 shows two decimals) |
| ``unexplained_operand`` | error | an operand that is not a quantity of the problem, an earlier result or a known constant (a miscopied number) |
| ``unused_quantity`` | warning | a quantity of the problem that no calculation uses (it may be a distractor) |
| ``answer_mismatch`` | error | the final answer is not the result of any calculation (only where the solution states calculations) |

``solution_graph_features(problem, solution)`` gives the numbers of ``SOLUTION_GRAPH_FEATURES``, read
off the same graph, for models that judge whether a solution fits a problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph
from mathgraph.parsers.solution_graph import Calculation, SolutionGraph, parse_solution, problem_values

__all__ = [
    "Finding",
    "SolutionCheck",
    "check_solution",
    "check_graph",
    "FINDING_KINDS",
    "SOLUTION_GRAPH_FEATURES",
    "solution_graph_features",
    "graph_features",
]

FINDING_KINDS = {
    "arithmetic": "error",
    "unexplained_operand": "error",
    "unused_quantity": "warning",
    "answer_mismatch": "error",
}
SOLUTION_GRAPH_FEATURES = (
    "calculations",
    "operands",
    "share_operands_from_problem",
    "share_operands_from_steps",
    "share_operands_from_constants",
    "operands_unexplained",
    "share_operands_explained",
    "quantities_unused",
    "share_quantities_used",
    "calculations_wrong",
    "answer_found",
    "answer_follows",
    "answer_is_quantity",
    "errors",
    "warnings",
)


@dataclass(frozen=True)
class Finding:
    """One thing a check found: ``kind`` (a key of ``FINDING_KINDS``), ``severity`` ("error" or "warning"),
    ``step`` (the 0-based line of the solution, ``None`` for the problem) and a ``message`` in words."""

    kind: str
    severity: str
    step: int | None
    message: str

    def to_dict(self) -> dict:
        """JSON-ready: kind, severity, step and message."""
        return {"kind": self.kind, "severity": self.severity, "step": self.step, "message": self.message}


@dataclass(frozen=True)
class SolutionCheck:
    """What ``check_solution`` found (module docstring)."""

    ok: bool
    findings: tuple[Finding, ...]
    graph: SolutionGraph
    first_error_step: int | None

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


def check_solution(problem: MathSyntaxGraph | str, solution: str) -> SolutionCheck:
    """Check ``solution`` against ``problem`` (module docstring); a ``str`` problem is parsed first."""
    return check_graph(parse_solution(problem, solution))


def check_graph(graph: SolutionGraph) -> SolutionCheck:
    """The findings of a solution graph (``check_solution`` without the reading)."""
    findings: list[Finding] = []
    repairs = _miscopies(graph)
    for line, calculation in graph.calculations():
        if calculation.checks_out is False:
            findings.append(_finding("arithmetic", line, _arithmetic_message(calculation)))
        for operand in calculation.operands:
            if operand.source == "none" and id(operand) not in repairs.explained | repairs.miscopied:
                findings.append(_finding("unexplained_operand", line, _unexplained_message(calculation, operand)))
    findings += repairs.findings
    if graph.answer is not None and graph.answer_step is None and graph.calculations():
        findings.append(
            _finding(
                "answer_mismatch",
                graph.answer_line,
                f"The final answer {graph.answer_text} is not the result of any calculation in the solution: "
                "check that it is the number the last step computed.",
            )
        )
    used = graph.used_quantities()
    for k, quantity in enumerate(graph.problem.quantities()):
        if k not in used:
            what = f"{quantity.text} {quantity.object}" if quantity.object else quantity.text
            findings.append(
                _finding(
                    "unused_quantity",
                    None,
                    f"The problem gives “{what}”, but no step uses it: it may be a distractor, or a step may be "
                    "missing.",
                )
            )
    findings.sort(key=lambda f: (f.step is None, f.step if f.step is not None else 0))
    errors = [f.step for f in findings if f.severity == "error" and f.step is not None]
    ok = not any(f.severity == "error" for f in findings)
    return SolutionCheck(ok, tuple(findings), graph, min(errors) if errors else None)


@dataclass
class _Repairs:
    findings: list[Finding]
    explained: set[int]  # ids of the unexplained operands a miscopy accounts for
    miscopied: set[int]  # ids of the operands reported as miscopied (said once, with the better message)


def _miscopies(graph: SolutionGraph) -> _Repairs:
    """Unexplained operands that an earlier miscopied number accounts for.

    A solution that copies 46 for the problem's 48 in ``46/2 = 23`` and later goes on with 24 leaves 24
    unexplained two lines down, though the error is where 46 was written. So for each unexplained operand,
    look back for a calculation that gives exactly it when one of its numbers is replaced by a value of the
    problem: that number is reported (once) as miscopied, at its line, and the operand it explains is not.
    """
    repairs = _Repairs([], set(), set())
    values = sorted(problem_values(graph.problem))
    calculations = graph.calculations()
    reported: set[tuple[int, int]] = set()
    by_place = {
        (line, k): c for line, step in ((s.index, s) for s in graph.steps) for k, c in enumerate(step.calculations)
    }
    used = {id(by_place[(o.step, o.calculation)]) for _, o in graph.operands() if (o.step, o.calculation) in by_place}
    for index, (_, calculation) in enumerate(calculations):
        for operand in calculation.operands:
            if operand.source != "none":
                continue
            repair = _repair(calculations[:index], values, operand.value, used)
            if repair is None:
                continue
            (earlier_line, earlier), position, value = repair
            repairs.explained.add(id(operand))
            if (earlier_line, id(earlier)) in reported:
                continue
            reported.add((earlier_line, id(earlier)))
            copied = earlier.operands[position]
            repairs.miscopied.add(id(copied))
            repairs.findings.append(
                _finding(
                    "unexplained_operand",
                    earlier_line,
                    f"{copied.text} in “{earlier.expression} = {earlier.result_text}” looks miscopied: with "
                    f"{_readable(value)} from the problem this step gives {_readable(operand.value)}, the number a "
                    f"later step goes on with.",
                )
            )
    return repairs


def _repair(earlier: list, values: list[Fraction], wanted: Fraction, used: set[int]):
    """The latest earlier calculation whose result no later step uses, the position of a number in it and the
    problem's value for that number with which the calculation gives ``wanted``; ``None`` when there is none."""
    for line, calculation in reversed(earlier):
        if not calculation.terms or calculation.computed is None:
            continue
        if id(calculation) in used:
            continue  # a later step goes on with its result: its numbers were copied as meant
        # an unexplained number first (it is the likelier miscopy), then the others
        order = ("none", "problem", "constant", "step")
        positions = sorted(range(len(calculation.operands)), key=lambda k: order.index(calculation.operands[k].source))
        for position in positions:
            operand = calculation.operands[position]
            for value in values:
                if value != operand.value and calculation.computed_with(position, value) == wanted:
                    return (line, calculation), position, value
    return None


def _unexplained_message(calculation: Calculation, operand) -> str:
    return (
        f"Where does {operand.text} in “{calculation.expression} = {calculation.result_text}” come from? It is not "
        "a number of the problem, the result of an earlier step or a known constant (such as 60 minutes in an "
        "hour): check that it was copied right."
    )


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


# ------------------------------------------------------------------ features
def solution_graph_features(problem: MathSyntaxGraph | str, solution: str) -> dict[str, float]:
    """``{name: value}`` for every name of ``SOLUTION_GRAPH_FEATURES``, read off the solution graph."""
    return graph_features(check_solution(problem, solution))


def graph_features(check: SolutionCheck) -> dict[str, float]:
    """``solution_graph_features`` of a check already made."""
    graph = check.graph
    operands = [o for _, o in graph.operands()]
    sources = {s: sum(o.source == s for o in operands) for s in ("problem", "step", "constant", "none")}
    total = max(len(operands), 1)
    quantities = graph.problem.quantities()
    used = graph.used_quantities()
    calculations = graph.calculations()
    features = {
        "calculations": len(calculations),
        "operands": len(operands),
        "share_operands_from_problem": sources["problem"] / total,
        "share_operands_from_steps": sources["step"] / total,
        "share_operands_from_constants": sources["constant"] / total,
        "operands_unexplained": sources["none"],
        "share_operands_explained": (len(operands) - sources["none"]) / total,
        "quantities_unused": len(quantities) - len(used),
        "share_quantities_used": len(used) / max(len(quantities), 1),
        "calculations_wrong": sum(c.checks_out is False for _, c in calculations),
        "answer_found": graph.answer is not None,
        "answer_follows": graph.answer_step is not None,
        "answer_is_quantity": graph.answer is not None and any(q.value == graph.answer for q in quantities),
        "errors": sum(f.severity == "error" for f in check.findings),
        "warnings": sum(f.severity == "warning" for f in check.findings),
    }
    return {name: float(features[name]) for name in SOLUTION_GRAPH_FEATURES}
