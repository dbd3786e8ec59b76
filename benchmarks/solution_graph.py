"""The solution graph against the hand-labelled gold file: calculations found and operand provenance.

    python benchmarks/solution_graph.py [--gold benchmarks/data/solution_steps_gold.jsonl] [--show-errors] [--smoke]

The gold file (``benchmarks/data/SOLUTION_STEPS_GOLD.md``) holds GSM8K train solutions (half of them with
their ``<<...>>`` annotations stripped, as a student writes) and MATH train solutions, every line labelled
by hand: the calculations it states (result and operands) and where each operand comes from (a quantity of
the problem, the result of an earlier line, a known constant, or nothing), and the final answer with the
line that computed it.

A found calculation is correct when the gold line has one with the same result and the same operand
values; an operand's provenance is correct when its calculation is correct and the source agrees (for an
earlier result: the same line). Precision is over what ``parse_solution`` found, recall over the gold;
95% Wilson intervals. For MATH: the share of lines whose calculations were all read. ``--smoke``: the
first 3 rows of each source (seconds).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

from mathgraph.parsers.problem import parse_problem
from mathgraph.parsers.solution import parse_solution

GOLD = Path(__file__).resolve().parent / "data" / "solution_steps_gold.jsonl"
GROUPS = ("gsm8k annotated", "gsm8k plain", "gsm8k", "math")


def main() -> None:
    args = _arguments()
    rows = [json.loads(line) for line in open(args.gold, encoding="utf-8") if line.strip()]
    if args.smoke:
        rows = [r for s in ("gsm8k", "math") for r in [r for r in rows if r["source"] == s][:3]]
    tallies = {group: Counter() for group in GROUPS}
    for row in rows:
        graph = parse_solution(parse_problem(row["problem"]), row["solution"])
        tally = score(row, graph, show_errors=args.show_errors)
        group = "math" if row["source"] == "math" else f"gsm8k {row['form']}"
        for name in {group, row["source"]}:
            tallies[name].update(tally)
    print(f"{len(rows)} solutions from {args.gold}\n")
    print(
        "| solutions | lines | calculations (gold / found) | calculations P (95% CI) | R (95% CI) | "
        "provenance P (95% CI) | R (95% CI) | answers read | answer step |"
    )
    print("|---|---:|---|---|---|---|---|---:|---:|")
    for group in GROUPS:
        t = tallies[group]
        if not t["rows"]:
            continue
        print(
            f"| {group} | {t['lines']} | {t['gold_calculations']} / {t['found_calculations']} | "
            f"{_rate(t['correct_calculations'], t['found_calculations'])} | "
            f"{_rate(t['correct_calculations'], t['gold_calculations'])} | "
            f"{_rate(t['correct_operands'], t['found_operands'])} | {_rate(t['correct_operands'], t['gold_operands'])} | "
            f"{t['answers_right']}/{t['rows']} | {t['answer_steps_right']}/{t['rows']} |"
        )
    math = tallies["math"]
    if math["rows"]:
        print(
            f"\nMATH: {math['lines_read']} of {math['lines_with_calculations']} lines that state calculations were read "
            f"in full ({_share(math['lines_read'], math['lines_with_calculations'])}); "
            f"{math['lines_exact']} of {math['lines']} lines read exactly as labelled "
            f"({_share(math['lines_exact'], math['lines'])})."
        )
    sources = Counter()
    for group in ("gsm8k", "math"):
        sources.update({f"{group} {k}": v for k, v in tallies[group].items() if k.startswith("source ")})
    print(
        "\noperand sources (gold -> found, correct calculations only): "
        + ", ".join(f"{k.split(' ', 2)[2]} {v}" for k, v in sorted(sources.items()) if k.startswith("gsm8k"))
    )


def score(row: dict, graph, show_errors: bool = False) -> Counter:
    """The counts of one gold row against its solution graph."""
    tally = Counter(rows=1)
    found_by_line = {step.index: list(step.calculations) for step in graph.steps}
    for step in row["steps"]:
        tally["lines"] += 1
        gold = step["calculations"]
        found = found_by_line.get(step["line"], [])
        tally["gold_calculations"] += len(gold)
        tally["found_calculations"] += len(found)
        tally["gold_operands"] += sum(len(c["operands"]) for c in gold)
        tally["found_operands"] += sum(len(c.operands) for c in found)
        matched = 0
        unused = list(found)
        for calculation in gold:
            hit = next((c for c in unused if _same_calculation(calculation, c)), None)
            if hit is None:
                if show_errors:
                    print(f"  missed  {row['id']} line {step['line']}: {_gold_text(calculation)}")
                continue
            unused.remove(hit)
            matched += 1
            tally["correct_calculations"] += 1
            for want, got in zip(_by_value(calculation["operands"]), sorted(hit.operands, key=lambda o: o.value)):
                right = want["source"] == got.source and (want["source"] != "step" or want["step"] == got.step)
                tally["correct_operands"] += right
                tally[f"source {want['source']} -> {got.source}"] += 1
                if show_errors and not right:
                    print(
                        f"  source  {row['id']} line {step['line']}: {got.text} in {hit.expression!r} is "
                        f"{got.source}{'' if got.step is None else f' {got.step}'}, gold {want['source']}"
                        f"{'' if want.get('step') is None else ' ' + str(want['step'])}"
                    )
        if show_errors:
            for c in unused:
                print(f"  extra   {row['id']} line {step['line']}: {c.expression} = {c.result_text}")
        if gold:
            tally["lines_with_calculations"] += 1
            tally["lines_read"] += matched == len(gold)
        tally["lines_exact"] += matched == len(gold) == len(found)
    gold_answer = None if row["answer"] is None else Fraction(row["answer"])
    tally["answers_right"] += graph.answer == gold_answer
    tally["answer_steps_right"] += graph.answer_step == row["answer_step"]
    if show_errors and graph.answer_step != row["answer_step"]:
        print(f"  answer  {row['id']}: step {graph.answer_step}, gold {row['answer_step']}")
    return tally


def _same_calculation(gold: dict, found) -> bool:
    values = sorted(Fraction(o["value"]) for o in gold["operands"])
    return Fraction(gold["result"]) == found.result and values == sorted(o.value for o in found.operands)


def _by_value(operands: list[dict]) -> list[dict]:
    return sorted(operands, key=lambda o: Fraction(o["value"]))


def _gold_text(calculation: dict) -> str:
    return " ? ".join(o["value"] for o in calculation["operands"]) + f" = {calculation['result']}"


def _rate(hits: int, n: int) -> str:
    if not n:
        return "-"
    from scipy.stats import binomtest

    interval = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="wilson")
    return f"{hits / n:.3f} ({interval.low:.3f}-{interval.high:.3f})"


def _share(hits: int, n: int) -> str:
    return f"{hits / n:.3f}" if n else "-"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", default=str(GOLD), help="the gold JSONL file")
    parser.add_argument("--show-errors", action="store_true", help="print every missed or extra calculation")
    parser.add_argument("--smoke", action="store_true", help="3 rows of each source, for the test suite")
    return parser.parse_args()


if __name__ == "__main__":
    main()
