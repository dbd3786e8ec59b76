"""Quantity extraction against the hand-checked gold file: precision, recall, units and objects.

    python benchmarks/quantity_extraction.py [--gold benchmarks/data/quantities_gold.jsonl] [--limit N]
                                             [--show-errors] [--smoke]

The gold file (``benchmarks/data/QUANTITIES_GOLD.md``) holds whole problems (random
GSM8K and MATH draws, GSM8K and MATH problems chosen for a hard case, and
hand-written sentences) with every quantity marked by hand; each gold quantity says
whether it is a ``hard`` case and its case ``kind`` (``ratio``, ``dozen``,
``formula-constant``...), and each problem lists the spans that look like numbers but
are not quantities (``not_quantities``: dates, years, phone numbers, clock times).
Problems are a ``random`` draw, ``chosen`` (drawn for a hard case) or ``handwritten``.

A found quantity is correct when its span overlaps a gold span and the values are
equal. Each found quantity is counted under a kind: the kind of the gold quantity it
matches or overlaps, else of the ``not_quantities`` span it overlaps (always hard),
else the problem's own ``kind`` and ``hard`` (``plain`` and false when absent).
Precision and recall come per source, per draw, hard against easy, and per kind, with 95%
Wilson intervals; of the correct ones, how many have the gold form, unit and object
(compared lower-cased; both null counts as agreeing). ``--smoke``: the first 3 problems (seconds).
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from pathlib import Path

from mathgraph.parsers.problem import parse_problem

GOLD = Path(__file__).resolve().parent / "data" / "quantities_gold.jsonl"
_KEYS = ("gold", "found", "correct", "form", "unit", "object")


def main() -> None:
    args = _arguments()
    if args.smoke:
        args.limit = 3
    problems = [json.loads(line) for line in open(args.gold, encoding="utf-8") if line.strip()]
    if args.limit is not None:
        problems = problems[: args.limit]
    tables: dict[str, dict[str, dict[str, int]]] = {"source": {}, "draw": {}, "hard": {}, "kind": {}}
    negatives: dict[str, list[int]] = {}  # kind -> [spans, read as a quantity]
    for problem in problems:
        _score(problem, tables, negatives, args.show_errors)
    print(f"{len(problems)} problems from {args.gold}\n")
    for name, table in tables.items():
        table["all"] = {key: sum(t[key] for t in table.values()) for key in _KEYS}
        _print_table(name, table)
    if negatives:
        print("| not a quantity (kind) | spans | read as a quantity |\n|---|---:|---:|")
        for kind, (spans, read) in sorted(negatives.items()):
            print(f"| {kind} | {spans} | {read} |")


def _score(problem: dict, tables: dict, negatives: dict, show_errors: bool) -> None:
    """Match one problem's found quantities to its gold ones and add the counts to ``tables``."""
    where = f"{problem['source']}:{problem['line']}"
    graph = parse_problem(problem["text"])
    gold = [(q, (q["start"], q["end"]), Fraction(q["value"])) for q in problem["quantities"]]
    not_quantities = problem.get("not_quantities", [])
    problem_key = (problem.get("kind", "plain"), bool(problem.get("hard", False)))

    def tally(row: dict | None, key: tuple[str, bool], field: str, amount: int = 1) -> None:
        kind, hard = (row.get("kind", "plain"), bool(row.get("hard", False))) if row is not None else key
        labels = {
            "source": problem["source"],
            "draw": problem.get("draw", "random"),
            "hard": "hard" if hard else "easy",
        }
        for name, label in (*labels.items(), ("kind", kind)):
            tables[name].setdefault(label, dict.fromkeys(_KEYS, 0))[field] += amount

    for row, _, _ in gold:
        tally(row, problem_key, "gold")
    for negative in not_quantities:
        negatives.setdefault(negative["kind"], [0, 0])[0] += 1
    matched: set[int] = set()
    for quantity in graph.quantities():
        overlaps = [
            k for k, (_, span, _) in enumerate(gold) if span[0] < quantity.span[1] and quantity.span[0] < span[1]
        ]
        hit = next((k for k in overlaps if k not in matched and gold[k][2] == quantity.value), None)
        if hit is None:
            negative = next(
                (n for n in not_quantities if n["start"] < quantity.span[1] and quantity.span[0] < n["end"]), None
            )
            if negative is not None:
                negatives[negative["kind"]][1] += 1
                row = {"kind": negative["kind"], "hard": True}
            else:
                row = gold[overlaps[0]][0] if overlaps else None
            tally(row, problem_key, "found")
            if show_errors:
                print(f"  extra  {where} {quantity.text!r} = {quantity.value}")
            continue
        matched.add(hit)
        row = gold[hit][0]
        for field, agrees in (
            ("found", True),
            ("correct", True),
            ("form", row["form"] == quantity.form),
            ("unit", _same(row["unit"], quantity.unit)),
            ("object", _same(row["object"], quantity.object)),
        ):
            tally(row, problem_key, field, int(agrees))
        if show_errors and not _same(row["unit"], quantity.unit):
            print(f"  unit   {where} {quantity.text!r}: {quantity.unit!r}, gold {row['unit']!r}")
        if show_errors and not _same(row["object"], quantity.object):
            print(f"  object {where} {quantity.text!r}: {quantity.object!r}, gold {row['object']!r}")
    if show_errors:
        for k, (row, _, _) in enumerate(gold):
            if k not in matched:
                print(f"  missed {where} {row['text']!r} = {row['value']}")


def _print_table(name: str, table: dict[str, dict[str, int]]) -> None:
    print(f"| {name} | gold | found | precision (95% CI) | recall (95% CI) | form | unit | object |")
    print("|---|---:|---:|---|---|---:|---:|---:|")
    for label, t in sorted(table.items(), key=lambda item: (item[0] == "all", item[0])):
        print(
            f"| {label} | {t['gold']} | {t['found']} | {_rate(t['correct'], t['found'])} | "
            f"{_rate(t['correct'], t['gold'])} | "
            + " | ".join(f"{t[key] / max(t['correct'], 1):.2f}" for key in ("form", "unit", "object"))
            + " |"
        )
    print()


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
