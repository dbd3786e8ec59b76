"""A worked solution read against its problem: its computation steps and which of the problem's quantities
they use (``align_solution``, ``SOLUTION_FEATURES``).

``align_solution(question, solution)`` reads a solution's computation steps (``4 * 5 = 20``,
``<<4*5=20>>``, LaTeX ``\\frac{3}{4}\\times 8 = 6``) and says which of the question's quantities they use,
which operands come from nowhere, and whether the final answer is a quantity the question already gives.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from mathgraph.graph import MathSyntaxGraph, Quantity
from mathgraph.parsers.quantities import parse_number

__all__ = ["align_solution", "final_answer", "solution_steps", "SolutionAlignment", "SolutionStep", "SOLUTION_FEATURES"]

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

_NUMBER = r"-?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?|-?\.\d+%?"
_UNSIGNED_NUMBER = _NUMBER.replace("-?", "")  # an operand: in "24-5" the minus is the operator
_CALCULATOR_RE = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
# Tokens of written computations: numbers, LaTeX fractions, operators, brackets, "=", and words.
_TOKEN_RE = re.compile(rf"\\frac\{{\d+\}}\{{\d+\}}|{_UNSIGNED_NUMBER}|\\times|\\cdot|\\div|[-+*/×÷()=]|[A-Za-z]+|\S")
_OPERATORS = {"+", "-", "*", "/", "×", "÷", "x", "\\times", "\\cdot", "\\div"}
_FINAL_RE = re.compile(r"####\s*(\S+)|\\boxed\{([^{}]*)\}|[Tt]he (?:final )?answer is:?\s*\$?(" + _NUMBER + ")")
_FRAC_RE = re.compile(r"\\frac\{(\d+)\}\{(\d+)\}")
_ANY_NUMBER_RE = re.compile(_NUMBER)
_UNSIGNED_NUMBER_RE = re.compile(_UNSIGNED_NUMBER)
# Operands every solution may use without the question giving them (halves, doubling, percent, minutes in an hour).
COMMON_CONSTANTS = frozenset(Fraction(n) for n in (1, 2, 10, 12, 24, 60, 100, 1000))


@dataclass(frozen=True)
class SolutionStep:
    """One computation ``operands -> result`` found in a solution."""

    expression: str
    operands: tuple[Fraction, ...]
    result: Fraction | None


@dataclass(frozen=True)
class SolutionAlignment:
    """How a solution's steps use a question's quantities (see ``align_solution``)."""

    steps: tuple[SolutionStep, ...]
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
                {
                    "expression": s.expression,
                    "operands": [str(v) for v in s.operands],
                    "result": None if s.result is None else str(s.result),
                }
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


def _number_value(text: str) -> Fraction | None:
    text = text.strip().replace("$", "").rstrip(".")
    percent = text.endswith("%")
    parsed = parse_number(text.rstrip("%"))
    if parsed is None:
        return None
    return parsed[0] / 100 if percent else parsed[0]


def _operands(expression: str) -> list[Fraction]:
    values = [Fraction(int(n), int(d)) for n, d in _FRAC_RE.findall(expression) if int(d)]
    rest = _FRAC_RE.sub(" ", expression)
    values += [v for v in (_number_value(m.group()) for m in _UNSIGNED_NUMBER_RE.finditer(rest)) if v is not None]
    return values


def solution_steps(solution: str) -> list[SolutionStep]:
    """The computations of a solution: calculator annotations ``<<4*5=20>>`` where it has them, else the
    written equations ``4 * 5 = 20`` (plain or LaTeX)."""
    steps = []
    annotated = list(_CALCULATOR_RE.finditer(solution))
    for match in annotated:
        steps.append(SolutionStep(match.group(0), tuple(_operands(match.group(1))), _number_value(match.group(2))))
    if not annotated:
        steps = _written_steps(solution)
    return steps


def _written_steps(solution: str) -> list[SolutionStep]:
    """``a op b op c = r`` runs in plain or LaTeX text, read left to right over tokens (linear time).

    A number may carry up to two words after it (``240000 likes + 30000 likes = 270000``).
    """
    steps = []
    tokens = list(_TOKEN_RE.finditer(solution))
    run: list[re.Match] = []  # operands, operators and brackets of the expression being read
    operands: list[Fraction] = []
    words_after = 0
    expect_operand = True
    for k, token in enumerate(tokens):
        text = token.group()
        value = _operand_value(text)
        if text == "=" and operands and len(operands) >= 2 and not expect_operand:
            result = _operand_value(tokens[k + 1].group()) if k + 1 < len(tokens) else None
            start, end = run[0].start(), (tokens[k + 1].end() if result is not None else token.end())
            steps.append(SolutionStep(solution[start:end], tuple(operands), result))
        if value is not None and expect_operand:
            run.append(token), operands.append(value)
            expect_operand, words_after = False, 0
        elif text in _OPERATORS and not expect_operand:
            run.append(token)
            expect_operand = True
        elif text in "()" and text:
            run.append(token) if run or text == "(" else None
        elif text.isalpha() and not expect_operand and words_after < 2:
            words_after += 1
        else:
            run, operands, expect_operand, words_after = [], [], True, 0
            if value is not None:
                run, operands, expect_operand = [token], [value], False
    return steps


def _operand_value(text: str) -> Fraction | None:
    fraction = _FRAC_RE.fullmatch(text)
    if fraction:
        return Fraction(int(fraction.group(1)), int(fraction.group(2))) if int(fraction.group(2)) else None
    return _number_value(text)


def final_answer(solution: str) -> Fraction | None:
    """The solution's final answer: ``#### N``, ``\\boxed{N}`` or ``the answer is N``; ``None`` when absent."""
    matches = list(_FINAL_RE.finditer(solution))
    if not matches:
        return None
    raw = next(g for g in matches[-1].groups() if g is not None)
    return _number_value(raw)


def align_solution(question: MathSyntaxGraph, solution: str | MathSyntaxGraph) -> SolutionAlignment:
    """Which of ``question``'s quantities the computation steps of ``solution`` use (module docstring).

    An operand is *given* when it equals a quantity of the question, *derived* when an earlier
    step produced it (or it is a common constant such as 100 or 60), and *unexplained* otherwise:
    a solution written for other numbers has many unexplained operands.
    """
    text = solution.text if isinstance(solution, MathSyntaxGraph) else str(solution)
    given = question.quantities()
    given_values = Counter(q.value for q in given)
    steps = solution_steps(text)
    notes = [] if steps else ["no computation steps found in the solution"]
    if not given:
        notes.append("the question states no quantities")
    derived: set[Fraction] = set()
    used_values: Counter = Counter()
    unexplained: list[Fraction] = []
    counts = Counter()
    arithmetic_ok = 0
    for step in steps:
        for operand in step.operands:
            counts["operands"] += 1
            if operand in given_values:
                counts["given"] += 1
                used_values[operand] += 1
            elif operand in derived or operand in COMMON_CONSTANTS:
                counts["derived"] += 1
            else:
                unexplained.append(operand)
        if step.result is not None:
            derived.add(step.result)
            arithmetic_ok += _checks_out(step)
    final = final_answer(text)
    if final is None and steps and steps[-1].result is not None:
        final = steps[-1].result
    given_used = tuple(q for q in given if q.value in used_values)
    given_unused = tuple(q for q in given if q.value not in used_values)
    all_numbers = [
        v
        for v in (_number_value(m.group()) for m in _ANY_NUMBER_RE.finditer(_CALCULATOR_RE.sub(" ", text)))
        if v is not None
    ]
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
        "results_matching_arithmetic": arithmetic_ok / max(len(steps), 1),
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


def _checks_out(step: SolutionStep) -> bool:
    """Whether evaluating the step's expression gives its result (calculator annotations and plain arithmetic)."""
    expression = step.expression.split("=")[0].strip("<> ")
    expression = _FRAC_RE.sub(r"(\1/\2)", expression)
    expression = (
        re.sub(r"\\times|\\cdot|×|(?<=\d)\s*x\s*(?=\d)", "*", expression)
        .replace("\\div", "/")
        .replace("÷", "/")
        .replace("$", "")
        .replace(",", "")
    )
    expression = re.sub(r"(\d+(?:\.\d+)?)%", r"(\1/100)", expression)
    expression = re.sub(r"\b[A-Za-z]+\b", " ", expression)  # unit words after numbers ("240000 likes")
    if not re.fullmatch(r"[\d\s.+\-*/()]+", expression) or step.result is None:
        return False
    try:
        value = _evaluate(expression)
    except (ValueError, ZeroDivisionError, SyntaxError):
        return False
    return (
        value is not None and abs(float(value) - float(step.result)) <= 1e-6 * max(1.0, abs(float(step.result))) + 0.01
    )


def _evaluate(expression: str) -> Fraction | None:
    """Exact arithmetic of ``+ - * / ( )`` over decimals, without ``eval``."""
    import ast

    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return Fraction(str(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            return left / right
        raise ValueError("not arithmetic")

    return walk(ast.parse(expression, mode="eval"))
