"""Error detection: ``check_solution`` on GSM8K dev solutions with one error injected, and on the untouched ones.

    python benchmarks/solution_errors.py [--split dev|test|train] [--limit N] [--seed 0] [--timing 100]
        [--show-misses 5] [--smoke]

The rows are GSM8K's dev split as the project splits it (``tasks.data.split_by_group`` by question, seed 0:
the split of ``benchmarks/results.py``; ``--split test`` takes the held-out test part of the same split);
every solution is checked in two forms, as written (with its ``<<...>>`` calculator annotations) and plain
(the annotations stripped, as a student writes). Into each form of each solution one error is injected at a
calculation chosen at random (seeded) among those that check out:

- ``arithmetic slip``: the stated result changed by 1 to 9 units of its last digit (everywhere the line
  writes it: the annotation and the number after it);
- ``miscopied number``: an operand that comes from the problem changed by 1 to 9 units of its last digit,
  and that calculation's result recomputed from it (the line stays right in itself; later lines are left
  as they were);
- ``relation reversed``: a calculation that applies a relation the problem's words state ("half as many as",
  "3 fewer than", ``parsers.solution_relations``) the right way to the number it relates to, its operator
  turned to the inverse (``48/2`` -> ``48*2``, in the annotation and its written copy) and its result
  recomputed; later lines are left as they were. Only solutions whose problem states such a relation and
  whose steps apply it can take this error.

Reported: detection recall (the check is not ok), the share located at the right step (``first_error_step``
is the line of the injected error), and false alarms (untouched solutions that are not ok), with 95% Wilson
intervals. Then the cost of checking one solution against parsing its problem (``parse_problem``, one at a
time). ``--smoke``: 6 rows (seconds).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

from mathgraph.parsers.problem import parse_problem, parse_problems
from mathgraph.parsers.solution import Calculation, check_solution, parse_solution
from mathgraph.parsers.solution_arithmetic import evaluate
from mathgraph.parsers.solution_relations import problem_relations, relation_applied
from mathgraph.tasks.data import split_by_group

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SPLIT_SEED = 0
_ANNOTATION_RE = re.compile(r"<<[^<>]*>>")


def main() -> None:
    args = _arguments()
    data = Path(args.data)
    if args.smoke:
        from smoke import SMOKE_DATA

        data, args.limit, args.timing = SMOKE_DATA, 6, 2
    rows = [json.loads(line) for line in open(data / "gsm8k" / "train.jsonl", encoding="utf-8")]
    part = split_by_group(rows, "question", seed=SPLIT_SEED)[args.split] or rows  # the smoke file is too small to split
    part = part[: args.limit] if args.limit else part
    graphs = list(parse_problems([r["question"] for r in part], batch_size=64))
    tally: dict[str, Counter] = {}
    misses: list[str] = []
    for k, (row, graph) in enumerate(zip(part, graphs)):
        for form in ("annotated", "plain"):
            solution = row["answer"] if form == "annotated" else _ANNOTATION_RE.sub("", row["answer"])
            untouched = check_solution(graph, solution)
            counts = tally.setdefault(form, Counter())
            counts["rows"] += 1
            counts["false_alarms"] += not untouched.ok
            for kind, inject in (
                ("arithmetic slip", slip),
                ("miscopied number", miscopy),
                ("relation reversed", reversal),
            ):
                injected = inject(graph, solution, random.Random(f"{args.seed}-{k}-{form}-{kind}"))
                counts = tally.setdefault(f"{form}: {kind}", Counter())
                if injected is None:
                    counts["not_injectable"] += 1
                    continue
                broken, step = injected
                check = check_solution(graph, broken)
                counts["injected"] += 1
                counts["detected"] += not check.ok
                counts["located"] += check.first_error_step == step
                if check.first_error_step != step and len(misses) < args.show_misses:
                    misses.append(f"{kind} at line {step} ({form}), first error {check.first_error_step}:\n{broken}")
    print(
        f"{len(part)} GSM8K {args.split} solutions (split seed {SPLIT_SEED}), each as written and plain; injection seed {args.seed}\n"
    )
    print("| form: injected error | injected | detected (95% CI) | located at its step (95% CI) | not injectable |")
    print("|---|---:|---|---|---:|")
    for name, counts in tally.items():
        if "injected" in counts or "not_injectable" in counts:
            n = counts["injected"]
            print(
                f"| {name} | {n} | {_rate(counts['detected'], n)} | {_rate(counts['located'], n)} | "
                f"{counts['not_injectable']} |"
            )
    print("\n| form | untouched solutions | false alarms (95% CI) |")
    print("|---|---:|---|")
    for form in ("annotated", "plain"):
        counts = tally[form]
        print(f"| {form} | {counts['rows']} | {_rate(counts['false_alarms'], counts['rows'])} |")
    for miss in misses:
        print("\nmissed or misplaced: " + miss)
    _timing(part[: args.timing])


def slip(graph, solution: str, rng: random.Random) -> tuple[str, int] | None:
    """``solution`` with the stated result of one correct calculation changed, and that calculation's line."""
    chosen = _choose(graph, solution, rng, lambda c: True)
    if chosen is None:
        return None
    line, calculation = chosen
    for _ in range(20):
        wrong = _nudge(calculation.result_text, rng)
        if wrong is not None and not _agrees_text(wrong, calculation):
            return _replace_result(solution, calculation, wrong), line
    return None


def miscopy(graph, solution: str, rng: random.Random) -> tuple[str, int] | None:
    """``solution`` with one problem number miscopied into a correct calculation, that calculation recomputed."""
    chosen = _choose(
        graph, solution, rng, lambda c: any(o.source == "problem" and o.quantity is not None for o in c.operands)
    )
    if chosen is None:
        return None
    line, calculation = chosen
    position = _position_in_line(parse_solution(graph, solution), line, calculation)
    operand = rng.choice([o for o in calculation.operands if o.source == "problem" and o.quantity is not None])
    new_text = _nudge(operand.text, rng)
    if new_text is None:
        return None
    changed = solution[: operand.span[0]] + new_text + solution[operand.span[1] :]
    if calculation.form == "annotation":
        changed = _copy_into_written(changed, calculation, operand, new_text)
    step = next((s for s in parse_solution(graph, changed).steps if s.index == line), None)
    if step is None or len(step.calculations) <= position or step.calculations[position].computed is None:
        return None
    recomputed = step.calculations[position]
    return _replace_result(changed, recomputed, _format_like(recomputed.computed, calculation.result_text)), line


_OPERATOR_TEXT = {"*": r"[*x×]", "/": r"[/÷]", "+": r"\+", "-": r"-"}
_INVERSE = {"+": "-", "-": "+", "*": "/", "/": "*"}


def reversal(graph, solution: str, rng: random.Random) -> tuple[str, int] | None:
    """``solution`` with one calculation that applies a relation of the problem turned the other way round
    (``48/2`` for "half as many" made ``48*2``), its result recomputed, and that calculation's line."""
    relations = problem_relations(graph)
    if not relations:
        return None
    quantities = graph.quantities()
    parsed = parse_solution(graph, solution)
    candidates = []
    for line, calculation in parsed.calculations():
        applied = relation_applied(calculation, relations, quantities) if calculation.checks_out else None
        if applied is not None and len(calculation.operands) == 2:
            candidates.append((line, calculation, applied[1]))
    if not candidates:
        return None
    line, calculation, operator = rng.choice(candidates)
    first, second = calculation.operands
    pattern = re.compile(rf"(\s*){_OPERATOR_TEXT[operator]}(\s*)")
    between = solution[first.span[1] : second.span[0]]
    if len(pattern.findall(between)) != 1:
        return None
    turned = _INVERSE[operator]
    changed = solution[: first.span[1]] + pattern.sub(rf"\g<1>{turned}\g<2>", between) + solution[second.span[0] :]
    if calculation.form == "annotation":  # the written copy before the annotation: 48/2 = <<48/2=24>>24
        line_start = changed.rfind("\n", 0, calculation.span[0]) + 1
        before = changed[line_start : calculation.span[0]]
        written = list(
            re.finditer(
                rf"(?<![\d.]){re.escape(first.text)}\s*{_OPERATOR_TEXT[operator]}\s*{re.escape(second.text)}(?![\d])",
                before,
            )
        )
        if written:
            last = written[-1]
            fixed = pattern.sub(rf"\g<1>{turned}\g<2>", last.group(), count=1)
            changed = changed[: line_start + last.start()] + fixed + changed[line_start + last.end() :]
    terms = [_INVERSE[t] if t == operator else t for t in calculation.terms]
    value = evaluate(terms).value
    if value is None or value <= 0:
        return None
    return _replace_result(changed, calculation, _format_like(value, calculation.result_text)), line


def _position_in_line(parsed, line: int, calculation: Calculation) -> int:
    step = next(s for s in parsed.steps if s.index == line)
    return next(k for k, c in enumerate(step.calculations) if c.span == calculation.span)


def _choose(graph, solution: str, rng: random.Random, usable) -> tuple[int, Calculation] | None:
    parsed = parse_solution(graph, solution)
    candidates = [(line, c) for line, c in parsed.calculations() if c.checks_out and usable(c)]
    return rng.choice(candidates) if candidates else None


def _nudge(text: str, rng: random.Random) -> str | None:
    """A number written like ``text`` (its decimals, its % sign) that differs by 1 to 9 units of its last digit."""
    match = re.fullmatch(r"(\$?)(\d[\d,]*|\d*\.\d+)(%?)", text.strip())
    if match is None:
        return None
    digits = match.group(2).replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    value = Fraction(digits)
    for _ in range(20):
        changed = value + rng.choice([-1, 1]) * rng.randint(1, 9) * Fraction(1, 10**decimals)
        if changed > 0:
            return f"{match.group(1)}{changed.numerator / changed.denominator:.{decimals}f}{match.group(3)}"
    return None


def _format_like(value: Fraction, text: str) -> str:
    """``value`` written as a solution writes a result like ``text``: whole, or with as many decimals (2 at
    least where the value is not whole)."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator / value.denominator:.{max(decimals, 2)}f}"


def _agrees_text(text: str, calculation: Calculation) -> bool:
    value = Fraction(text.strip("$%").replace(",", ""))
    return Calculation(**{**calculation.__dict__, "result": value, "result_text": text}).checks_out


def _replace_result(solution: str, calculation: Calculation, new: str) -> str:
    """Write ``new`` for the calculation's result: in an annotation, its right side and the number after it."""
    start, end = calculation.span
    old = calculation.result_text
    if calculation.form == "annotation":
        marks = solution[start:end]
        equals = marks.rindex("=")
        marks = marks[: equals + 1] + new + ">>"
        after = re.match(r"\$?" + re.escape(old.strip()), solution[end:])
        shown = end + (after.end() if after else 0)
        displayed = new if after else ""
        prefix = "$" if after and solution[end:].startswith("$") else ""
        return solution[:start] + marks + prefix + displayed + solution[shown:]
    at = solution.rfind(old, start, end)
    if at < 0:
        return solution
    return solution[:at] + new + solution[at + len(old) :]


def _copy_into_written(solution: str, calculation: Calculation, operand, new_text: str) -> str:
    """In ``48/2 = <<48/2=24>>24``, the written copy before the annotation shows the miscopied number too."""
    line_start = solution.rfind("\n", 0, calculation.span[0]) + 1
    before = solution[line_start : calculation.span[0]]
    matches = list(re.finditer(rf"(?<![\d.]){re.escape(operand.text)}(?![\d])", before))
    if not matches:
        return solution
    last = matches[-1]
    return solution[: line_start + last.start()] + new_text + solution[line_start + last.end() :]


def _timing(rows: list[dict]) -> None:
    """Milliseconds to parse a problem, one at a time, against checking its solution on the parsed problem."""
    if not rows:
        return
    parse_ms, check_ms = [], []
    for row in rows:
        started = time.perf_counter()
        graph = parse_problem(row["question"])
        parse_ms.append(1000 * (time.perf_counter() - started))
        started = time.perf_counter()
        check_solution(graph, row["answer"])
        check_ms.append(1000 * (time.perf_counter() - started))
    parse, check = sum(parse_ms) / len(rows), sum(check_ms) / len(rows)
    print(f"\n| {len(rows)} solutions | mean ms |\n|---|---:|")
    print(f"| parse_problem (one problem) | {parse:.2f} |\n| check_solution (on the parsed problem) | {check:.2f} |")
    print(f"checking / parsing: {check / parse:.3f}")


def _rate(hits: int, n: int) -> str:
    if not n:
        return "-"
    from scipy.stats import binomtest

    interval = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="wilson")
    return f"{hits / n:.3f} ({interval.low:.3f}-{interval.high:.3f})"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA), help="the shared data folder (gsm8k/train.jsonl)")
    parser.add_argument("--limit", type=int, help="the first N rows of the split only")
    parser.add_argument(
        "--split",
        choices=("train", "dev", "test"),
        default="dev",
        help="GSM8K rows to use (default dev, the rows the checker's figures are reported on; train to develop on; "
        "test, held out, for a final check)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the injected errors")
    parser.add_argument("--timing", type=int, default=100, help="rows timed one at a time (default 100)")
    parser.add_argument(
        "--show-misses", type=int, default=0, help="print the first N injected errors missed or misplaced"
    )
    parser.add_argument("--smoke", action="store_true", help="6 rows of the smoke data, for the test suite")
    return parser.parse_args()


if __name__ == "__main__":
    main()
