"""Named numbers of a solution graph, for models that judge whether a solution fits a problem (QAM).

``solution_graph_features(problem, solution)`` checks the solution (``parsers.solution_check``) and reads
``SOLUTION_GRAPH_FEATURES`` off its graph: where the operands come from, which of the problem's quantities
no step uses, whether the answer follows, how many findings the check made.

The last ten tell a solution written for a *variant* of the problem (GSM-Plus "adding
operation": the variant adds a step, and the two solutions differ by one calculation) from the problem's
own, where the first fifteen cannot:

- a quantity the problem writes in digits that no step uses is a better sign of a step missing than one
  written in words ("one day", "half of them": a solution often uses those without writing them), so the
  unused quantities are counted in both forms, and a problem sentence whose every quantity the solution
  leaves alone (neither uses nor writes it) is counted too;
- an operand the graph explains only by a number the solution itself wrote before ("a duvet cover, 9
  feet long and 11 feet wide, so 9 * 11 = 99": ``source == "step"`` with no calculation) is explained by
  the solution, not by the problem: counted apart, and with the unexplained ones in the strict count;
- an operand linked to a quantity through an implied value (``implied_values``: a unit conversion, a
  percent's complement) is a weaker link than the quantity's own value: counted;
- the numbers the solution writes anywhere (its prose too) that are neither a value the problem gives or
  implies, a result, a known constant, the answer nor 1 (stray numbers): counted, all and distinct.

On the 2,874 GSM-Plus pairs of the train and dev seeds (grouped 5-fold cross-validation, gradient-boosted
trees on all the solution features) the ten raise accuracy from 0.8247 to 0.8570, every fold gaining
(``docs/solutions.md``).
"""

from __future__ import annotations

import re
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph
from mathgraph.parsers.constants import available_constants
from mathgraph.parsers.solution_check import SolutionCheck, check_solution
from mathgraph.parsers.solution_graph import implied_values, problem_values, written_numbers

__all__ = [
    "SOLUTION_GRAPH_FEATURES",
    "solution_graph_features",
    "graph_features",
    "written_numbers",
    "COMMON_CONSTANTS",
]

SOLUTION_GRAPH_FEATURES = (
    "calculations",
    "graph_operands",
    "share_operands_from_problem",
    "share_operands_from_steps",
    "share_operands_from_constants",
    "graph_operands_unexplained",
    "graph_share_operands_explained",
    "quantities_unused",
    "share_quantities_used",
    "calculations_wrong",
    "answer_found",
    "answer_follows",
    "answer_is_quantity",
    "errors",
    "warnings",
    # a solution of a variant of the problem (module docstring)
    "quantities_unused_digits",
    "quantities_unused_words",
    "operands_from_own_mentions",
    "operands_from_implied_values",
    "operands_unexplained_strict",
    "share_operands_explained_strict",
    "quantities_never_written",
    "sentences_unused",
    "solution_numbers_stray",
    "solution_numbers_stray_distinct",
)
# Operands every solution may use without the question giving them (halves, doubling, percent, minutes in an
# hour): the rule of parsers.solution's SOLUTION_FEATURES, kept as the models learnt it (the graph itself
# uses parsers.constants).
COMMON_CONSTANTS = frozenset(Fraction(n) for n in (1, 2, 10, 12, 24, 60, 100, 1000))
_DIGIT_RE = re.compile(r"\d")


def solution_graph_features(problem: MathSyntaxGraph | str, solution: str) -> dict[str, float]:
    """``{name: value}`` for every name of ``SOLUTION_GRAPH_FEATURES``, read off the solution graph."""
    return graph_features(check_solution(problem, solution, verifier=None))  # the rules, as the models learnt them


def graph_features(check: SolutionCheck) -> dict[str, float]:
    """``solution_graph_features`` of a check already made."""
    graph = check.graph
    operands = [o for _, o in graph.operands()]
    sources = {s: sum(o.source == s for o in operands) for s in ("problem", "step", "constant", "none")}
    total = max(len(operands), 1)
    quantities = graph.problem.quantities()
    used = graph.used_quantities()
    calculations = graph.calculations()
    given = problem_values(graph.problem)
    # a number the solution wrote before and then computes with, where the problem gives no such value
    own_mentions = sum(o.source == "step" and o.calculation is None and o.value not in given for o in operands)
    strict_unexplained = sources["none"] + own_mentions
    numbers = written_numbers(graph.solution)
    written = set(numbers) | {o.value for o in operands}

    # not SolutionGraph.written_quantities, which also reads number words and signs for check's warning: these
    # features stay as the shipped models learnt them
    def written_down(k: int) -> bool:
        quantity = quantities[k]
        return k in used or quantity.value in written or any(v in written for v in implied_values(quantity))

    counted = [k for k, q in enumerate(quantities) if q.value != 1]  # "one day", "1 week": seldom computed with
    in_digits = [k for k in counted if _DIGIT_RE.search(quantities[k].text)]
    sentences = {quantities[k].sentence for k in counted}
    sentences_written = {quantities[k].sentence for k in counted if written_down(k)}
    results = {c.result for _, c in calculations} | {c.computed for _, c in calculations if c.computed is not None}
    explained = given | results | set(available_constants(graph.problem.text + "\n" + graph.solution))
    explained |= COMMON_CONSTANTS | {graph.answer}
    stray = [v for v in numbers if v not in explained]
    features = {
        "calculations": len(calculations),
        "graph_operands": len(operands),
        "share_operands_from_problem": sources["problem"] / total,
        "share_operands_from_steps": sources["step"] / total,
        "share_operands_from_constants": sources["constant"] / total,
        "graph_operands_unexplained": sources["none"],
        "graph_share_operands_explained": (len(operands) - sources["none"]) / total,
        "quantities_unused": len(quantities) - len(used),
        "share_quantities_used": len(used) / max(len(quantities), 1),
        "calculations_wrong": sum(c.checks_out is False for _, c in calculations),
        "answer_found": graph.answer is not None,
        "answer_follows": graph.answer_step is not None,
        "answer_is_quantity": graph.answer is not None and any(q.value == graph.answer for q in quantities),
        "errors": sum(f.severity == "error" for f in check.findings),
        # the unused_quantity warnings, which were the only warnings when the shipped models were trained on
        # this count: a solution with no work gets one no_work warning in their place, but the same value here
        "warnings": len(quantities) - len(used),
        "quantities_unused_digits": sum(k not in used for k in in_digits),
        "quantities_unused_words": sum(k not in used and k not in in_digits for k in counted),
        "operands_from_own_mentions": own_mentions,
        "operands_from_implied_values": sum(
            o.source == "problem" and o.quantity is not None and quantities[o.quantity].value != o.value
            for o in operands
        ),
        "operands_unexplained_strict": strict_unexplained,
        "share_operands_explained_strict": 1 - strict_unexplained / total,
        "quantities_never_written": sum(not written_down(k) for k in in_digits),
        "sentences_unused": len(sentences - sentences_written),
        "solution_numbers_stray": len(stray),
        "solution_numbers_stray_distinct": len(set(stray)),
    }
    return {name: float(features[name]) for name in SOLUTION_GRAPH_FEATURES}
