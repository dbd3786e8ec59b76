"""Quantity extraction against the hand-checked gold file: precision, recall, units and objects.

    python benchmarks/quantity_extraction.py [--gold benchmarks/data/quantities_gold.jsonl] [--limit N]
                                             [--show-errors] [--smoke]

The gold file (``benchmarks/data/QUANTITIES_GOLD.md``) holds whole problems drawn
at random from GSM8K and MATH with every quantity marked by hand. A found
quantity is correct when its span overlaps a gold span and the values are equal;
precision and recall come per source and overall, with 95% Wilson intervals.
Of the correct ones: how many have the gold form, and the gold unit and object
(compared lower-cased; both null counts as agreeing). ``--smoke``: the first 3 problems (seconds).
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from pathlib import Path

from mathgraph.parsers.problem import parse_problem

GOLD = Path(__file__).resolve().parent / "data" / "quantities_gold.jsonl"


def main() -> None:
    args = _arguments()
    if args.smoke:
        args.limit = 3
    problems = [json.loads(line) for line in open(args.gold, encoding="utf-8") if line.strip()]
    if args.limit is not None:
        problems = problems[: args.limit]
    counts: dict[str, dict[str, int]] = {}
    for problem in problems:
        graph = parse_problem(problem["text"])
        tally = counts.setdefault(
            problem["source"], dict.fromkeys(("gold", "found", "correct", "form", "unit", "object"), 0)
        )
        gold = [(q, (q["start"], q["end"]), Fraction(q["value"])) for q in problem["quantities"]]
        found = graph.quantities()
        tally["gold"] += len(gold)
        tally["found"] += len(found)
        matched: set[int] = set()
        for quantity in found:
            hit = next(
                (
                    k
                    for k, (_, span, value) in enumerate(gold)
                    if k not in matched
                    and span[0] < quantity.span[1]
                    and quantity.span[0] < span[1]
                    and value == quantity.value
                ),
                None,
            )
            if hit is None:
                if args.show_errors:
                    print(f"  extra  {problem['source']}:{problem['line']} {quantity.text!r} = {quantity.value}")
                continue
            matched.add(hit)
            row = gold[hit][0]
            tally["correct"] += 1
            tally["form"] += row["form"] == quantity.form
            tally["unit"] += _same(row["unit"], quantity.unit)
            tally["object"] += _same(row["object"], quantity.object)
        if args.show_errors:
            for k, (row, _, _) in enumerate(gold):
                if k not in matched:
                    print(f"  missed {problem['source']}:{problem['line']} {row['text']!r} = {row['value']}")
    counts["all"] = {
        key: sum(t[key] for t in counts.values()) for key in ("gold", "found", "correct", "form", "unit", "object")
    }
    print(f"{len(problems)} problems from {args.gold}\n")
    print("| source | gold | found | precision (95% CI) | recall (95% CI) | form | unit | object |")
    print("|---|---:|---:|---|---|---:|---:|---:|")
    for source, t in counts.items():
        print(
            f"| {source} | {t['gold']} | {t['found']} | {_rate(t['correct'], t['found'])} | "
            f"{_rate(t['correct'], t['gold'])} | "
            + " | ".join(f"{t[key] / max(t['correct'], 1):.2f}" for key in ("form", "unit", "object"))
            + " |"
        )


def _same(gold: str | None, found: str | None) -> bool:
    return (gold or "").lower() == (found or "").lower()


def _rate(hits: int, total: int) -> str:
    if total == 0:
        return "n/a"
    from scipy.stats import binomtest

    interval = binomtest(hits, total).proportion_ci(confidence_level=0.95, method="wilson")
    return f"{hits / total:.3f} ({interval.low:.3f}-{interval.high:.3f})"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", default=str(GOLD))
    parser.add_argument("--limit", type=int, help="the first N problems only (a smoke run)")
    parser.add_argument("--show-errors", action="store_true", help="list every missed and extra quantity")
    parser.add_argument("--smoke", action="store_true", help="the first 3 problems: seconds")
    return parser.parse_args()


if __name__ == "__main__":
    main()
