"""Worked solutions: the solution graph, checking a solution, and the alignment of a solution with its question.

The pieces, each in a module of its own:

- ``parsers.solution_reader``: the one reader of solutions (lines, the calculations each states, the value of
  the final answer, which ``parsers.final_answer`` finds);
- ``parsers.solution_arithmetic``: the exact, bounded arithmetic that computes each calculation;
- ``parsers.solution_graph``: ``parse_solution(problem, solution)`` -> ``SolutionGraph`` (every operand linked
  to a quantity of the problem, an earlier result, a known constant of ``parsers.constants``, or nothing);
- ``parsers.solution_check``: ``check_solution(problem, solution)`` -> ``SolutionCheck`` (findings: arithmetic,
  unexplained operands, unused quantities, an answer that follows from nothing, a solution that shows no work);
- ``parsers.solution_features``: ``solution_graph_features``, the named numbers of the graph that models read.
- ``parsers.solution_drawing``: ``SolutionGraph.draw()``.

This module re-exports them and holds ``align_solution(question, solution)``, a view of the graph: which
of the question's quantities the solution's calculations use, which operands come from nowhere, whether
the final answer is a quantity the question already gives, and the 17 ``SOLUTION_FEATURES`` the pair
models were trained on. These features have rules of their own (an operand is *given* when it equals a
quantity's value, *derived* when an earlier calculation gave it or it is one of ``COMMON_CONSTANTS``), not
the graph's links; only the calculations they count come from the graph.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph, Quantity
from mathgraph.parsers.solution_check import FINDING_KINDS, Finding, SolutionCheck, check_graph, check_solution
from mathgraph.parsers.solution_features import (
    COMMON_CONSTANTS,
    SOLUTION_GRAPH_FEATURES,
    solution_graph_features,
    written_numbers,
)
from mathgraph.parsers.solution_graph import (
    Calculation,
    Operand,
    SolutionGraph,
    SolutionStep,
    parse_solution,
)
from mathgraph.parsers.solution_reader import read_answer, read_lines

__all__ = [
    "align_solution",
    "final_answer",
    "solution_steps",
    "parse_solution",
    "check_solution",
    "check_graph",
    "solution_graph_features",
    "SolutionAlignment",
    "SolutionGraph",
    "SolutionStep",
    "Calculation",
    "Operand",
    "SolutionCheck",
    "Finding",
    "FINDING_KINDS",
    "SOLUTION_FEATURES",
    "SOLUTION_GRAPH_FEATURES",
    "COMMON_CONSTANTS",
]

SOLUTION_FEATURES = (
    "steps",
    "operands",
    "operands_given",
    "operands_derived",
    "operands_unexplained",
    "share_operands_explained",
    "question_quantities",
    "question_quantities_used",
    "share_question_used",
    "final_answer_found",
    "final_is_given",
    "final_from_steps",
    "results_matching_arithmetic",
    "unused_question_quantities",
    "solution_numbers_unexplained",
    "question_quantities_absent",
    "any_operand_unexplained",
)
_CALCULATOR_RE = re.compile(r"<<([^<>]*)>>")


@dataclass(frozen=True)
class SolutionAlignment:
    """How a solution's calculations use a question's quantities (see ``align_solution``); ``steps`` are the
    solution graph's calculations, in order."""

    steps: tuple[Calculation, ...]
    given_used: tuple[Quantity, ...]
    given_unused: tuple[Quantity, ...]
    unexplained_operands: tuple[Fraction, ...]
    final_answer: Fraction | None
    final_is_given: bool
    features: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def feature_vector(self) -> list[float]:
        """The features in ``SOLUTION_FEATURES`` order."""
        return [float(self.features[name]) for name in SOLUTION_FEATURES]

    def explain(self) -> str:
        """The solution's use of the question's quantities in words, one line each."""
        lines = [
            f"steps: {len(self.steps)}",
            "uses given quantities: " + (", ".join(repr(q.text) for q in self.given_used) or "none"),
            "does not use: " + (", ".join(repr(q.text) for q in self.given_unused) or "nothing"),
        ]
        if self.unexplained_operands:
            lines.append("operands from nowhere: " + ", ".join(str(v) for v in self.unexplained_operands))
        if self.final_answer is not None:
            lines.append(
                f"final answer: {self.final_answer}"
                + (" (a quantity the question gives)" if self.final_is_given else "")
            )
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """A JSON-ready summary: steps, given quantities used and unused, unexplained operands, final answer."""
        return {
            "steps": [
                {"expression": s.expression, "operands": [str(o.value) for o in s.operands], "result": str(s.result)}
                for s in self.steps
            ],
            "given_used": [q.to_dict() for q in self.given_used],
            "given_unused": [q.to_dict() for q in self.given_unused],
            "unexplained_operands": [str(v) for v in self.unexplained_operands],
            "final_answer": None if self.final_answer is None else str(self.final_answer),
            "final_is_given": self.final_is_given,
            "features": {k: round(float(v), 6) for k, v in self.features.items()},
            "notes": list(self.notes),
            "explanation": self.explain(),
        }


def solution_steps(solution: str) -> list[Calculation]:
    """The calculations a solution states, in order (``parse_solution`` without a problem: operands unlinked)."""
    return [
        Calculation(
            expression=c.expression,
            operands=tuple(Operand(o.value, o.text, o.span, source="none") for o in c.operands),
            result=c.result,
            computed=c.computed,
            form=c.form,
            span=c.span,
            result_text=c.result_text,
            decimals=c.decimals,
            note=c.note,
        )
        for line in read_lines(solution)
        for c in line.calculations
    ]


def final_answer(solution: str) -> Fraction | None:
    """The value of the solution's final answer (``#### N``, else ``\\boxed{N}``, else "the answer is N": see
    ``parsers.final_answer``); ``None`` when it states none, or one that is not a number (``\\boxed{1 : 2}``)."""
    answer = read_answer(solution)
    return None if answer is None else answer.value


def align_solution(question: MathSyntaxGraph, solution: str | MathSyntaxGraph) -> SolutionAlignment:
    """Which of ``question``'s quantities the calculations of ``solution`` use (module docstring).

    An operand is *given* when it equals a quantity of the question, *derived* when an earlier
    calculation produced it (or it is a common constant such as 100 or 60), and *unexplained* otherwise:
    a solution written for other numbers has many unexplained operands.
    """
    graph = parse_solution(question, solution)
    text = graph.solution
    given = question.quantities()
    given_values = Counter(q.value for q in given)
    steps = [c for _, c in graph.calculations()]
    notes = [] if steps else ["no computation steps found in the solution"]
    if not given:
        notes.append("the question states no quantities")
    notes += [n for n in graph.notes if n.startswith("line ")]
    derived: set[Fraction] = set()
    used_values: Counter = Counter()
    unexplained: list[Fraction] = []
    counts: Counter = Counter()
    for step in steps:
        for operand in step.operands:
            counts["operands"] += 1
            if operand.value in given_values:
                counts["given"] += 1
                used_values[operand.value] += 1
            elif operand.value in derived or operand.value in COMMON_CONSTANTS:
                counts["derived"] += 1
            else:
                unexplained.append(operand.value)
        derived.add(step.result)
    final = graph.answer
    if final is None and steps:
        final = steps[-1].result
    given_used = tuple(q for q in given if q.value in used_values)
    given_unused = tuple(q for q in given if q.value not in used_values)
    all_numbers = written_numbers(_CALCULATOR_RE.sub(" ", text))
    written = set(all_numbers) | used_values.keys()
    stray = sum(
        v not in given_values and v not in derived and v not in COMMON_CONSTANTS and v != final for v in all_numbers
    )
    features = {
        "steps": len(steps),
        "operands": counts["operands"],
        "operands_given": counts["given"],
        "operands_derived": counts["derived"],
        "operands_unexplained": len(unexplained),
        "share_operands_explained": (counts["given"] + counts["derived"]) / max(counts["operands"], 1),
        "question_quantities": len(given),
        "question_quantities_used": len(given_used),
        "share_question_used": len(given_used) / max(len(given), 1),
        "final_answer_found": final is not None,
        "final_is_given": final is not None and final in given_values,
        "final_from_steps": final is not None and final in derived,
        "results_matching_arithmetic": sum(bool(s.checks_out) for s in steps) / max(len(steps), 1),
        "unused_question_quantities": len(given_unused),
        "solution_numbers_unexplained": stray,
        # a question's number that the solution never writes: a solution of a problem with other numbers
        "question_quantities_absent": sum(q.value not in written for q in given),
        "any_operand_unexplained": bool(unexplained),
    }
    return SolutionAlignment(
        tuple(steps),
        given_used,
        given_unused,
        tuple(unexplained),
        final,
        bool(features["final_is_given"]),
        {k: float(features[k]) for k in SOLUTION_FEATURES},
        tuple(notes),
    )
