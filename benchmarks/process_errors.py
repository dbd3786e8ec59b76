"""Finding the first wrong step of real solutions: ``check_solution`` under ProcessBench's protocol.

    python benchmarks/process_errors.py [--data DIR] [--parts math olympiadbench] [--limit N]
        [--output FILE] [--as-baseline] [--smoke]

ProcessBench (``shared/data/processbench``) holds solutions written by open models, each labelled by
experts with the index of its earliest wrong step (-1 where every step is right). The protocol: the steps
are joined by newlines, the checker predicts the earliest wrong step or -1 (here: the step holding the line
of ``first_error_step``); *error acc* is the share of wrong solutions whose earliest wrong step is found
exactly, *correct acc* the share of right solutions predicted -1, **F1** their harmonic mean.

Each part is split into dev and test halves by a hash of the problem text with a fixed seed (``SPLIT_SEED``:
the solutions of one problem stay together); thresholds are chosen on dev only, test is reported beside it.
Reported per part and half: error acc and correct acc with 95% Wilson intervals, F1 with a 95% bootstrap
interval (1,000 resamples); per generator; per error kind (``calculation``: the labelled step states a
calculation that does not check out, ``other``: a misread condition, a wrong plan or formula, an
unjustified claim); the finding kinds that flag right solutions; and the time to check one solution beside
the time to parse its problem (ms, on this machine, shared with other jobs: noisy).

The results go to ``benchmarks/results/process_errors.json``; ``--as-baseline`` stores the run as the
baseline the later runs keep beside theirs. ``--smoke``: 6 solutions a part, written nowhere but
``--output``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from collections import Counter, defaultdict
from pathlib import Path

from mathgraph.parsers.graph_cache import parse_cached
from mathgraph.parsers.problem import parse_problem
from mathgraph.parsers.solution import check_solution

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "benchmarks" / "results" / "process_errors.json"
SPLIT_SEED = 0
PARTS = ("math", "olympiadbench")
BOOTSTRAP = 1000
TIMED_PARSES = 30  # problems parsed one at a time, without the cache, for the parse time


def main() -> None:
    """Run the benchmark (module docstring) and print its tables."""
    args = _arguments()
    limit = 6 if args.smoke else args.limit
    output = Path(args.output) if args.output else (None if args.smoke else RESULTS)
    report = {"protocol": "ProcessBench: steps joined by newlines, earliest wrong step or -1", "parts": {}}
    for part in args.parts:
        rows = load_part(Path(args.data), part, limit, args.smoke)
        report["parts"][part] = evaluate_part(rows, timed_parses=2 if args.smoke else TIMED_PARSES)
        _print_part(part, report["parts"][part])
    if output is not None:
        previous = json.loads(output.read_text()) if output.exists() else {}
        if args.as_baseline:
            report["baseline"] = {p: _summary(r) for p, r in report["parts"].items()}
        elif "baseline" in previous:
            report["baseline"] = previous["baseline"]
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {output}")


def load_part(data: Path, part: str, limit: int | None = None, smoke: bool = False) -> list[dict]:
    """The rows of ``data/processbench/PART.jsonl``, each with its ``half`` ("dev" or "test"); the first
    ``limit`` only when given (``smoke``: half right, half wrong ones)."""
    path = data / "processbench" / f"{part}.jsonl"
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            row["half"] = half_of(row["problem"])
            rows.append(row)
    if limit and smoke:  # some of each: right and wrong solutions
        right = [r for r in rows if r["label"] == -1][: limit // 2]
        return right + [r for r in rows if r["label"] != -1][: limit - len(right)]
    return rows[:limit] if limit else rows


def half_of(problem: str, seed: int = SPLIT_SEED) -> str:
    """ "dev" or "test" for a problem text: the parity of a SHA-256 of the seed and the text."""
    digest = hashlib.sha256(f"{seed}\n{problem}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def step_of_line(steps: list[str]) -> list[int]:
    """For each line of the steps joined by newlines, the index of the step it belongs to."""
    return [k for k, step in enumerate(steps) for _ in step.split("\n")]


def predict(graph, steps: list[str]) -> tuple[int, list[str]]:
    """The predicted earliest wrong step (-1 for none) of the steps of one solution, and the kinds of the
    error findings on that step's line."""
    check = check_solution(graph, "\n".join(steps))
    if check.first_error_step is None:
        return -1, []
    kinds = [f.kind for f in check.errors() if f.step == check.first_error_step]
    return step_of_line(steps)[check.first_error_step], kinds


def error_kind(graph, row: dict) -> str:
    """``calculation`` when the labelled wrong step states a calculation that does not check out (as the
    solution reader reads it), else ``other``."""
    steps = row["steps"]
    lines = step_of_line(steps)
    check = check_solution(graph, "\n".join(steps))
    for line, calculation in check.graph.calculations():
        if lines[line] == row["label"] and calculation.checks_out is False:
            return "calculation"
    return "other"


def evaluate_part(rows: list[dict], timed_parses: int = TIMED_PARSES) -> dict:
    """Predictions and scores of one part (module docstring)."""
    graphs = parse_cached([r["problem"] for r in rows])
    outcomes = []
    started = time.perf_counter()
    for row, graph in zip(rows, graphs):
        predicted, kinds = predict(graph, row["steps"])
        outcomes.append({"row": row, "predicted": predicted, "kinds": kinds})
    check_ms = 1000 * (time.perf_counter() - started) / max(len(rows), 1)
    for outcome, graph in zip(outcomes, graphs):
        row = outcome["row"]
        outcome["error_kind"] = error_kind(graph, row) if row["label"] != -1 else None
    distinct = list(dict.fromkeys(r["problem"] for r in rows))[:timed_parses]
    started = time.perf_counter()
    for problem in distinct:
        parse_problem(problem)
    parse_ms = 1000 * (time.perf_counter() - started) / max(len(distinct), 1)
    result = {"ms_per_solution_check": round(check_ms, 2), "ms_per_problem_parse": round(parse_ms, 2)}
    for half in ("dev", "test", "all"):
        chosen = [o for o in outcomes if half == "all" or o["row"]["half"] == half]
        result[half] = _scores(chosen)
    return result


def scores(labels: list[int], predictions: list[int], seed: int = 0) -> dict:
    """error acc, correct acc and F1 (in %) of ``predictions`` against ``labels`` (-1: no wrong step), with
    95% Wilson intervals for the two accuracies and a bootstrap interval for F1."""
    import numpy as np

    labels_a, predicted_a = np.asarray(labels), np.asarray(predictions)
    wrong = labels_a != -1
    hit = predicted_a == labels_a
    n_wrong, n_right = int(wrong.sum()), int((~wrong).sum())
    error_acc = float(hit[wrong].mean()) if n_wrong else float("nan")
    correct_acc = float(hit[~wrong].mean()) if n_right else float("nan")
    rng = np.random.default_rng(seed)
    f1s = []
    for _ in range(BOOTSTRAP):
        pick = rng.integers(0, len(labels_a), len(labels_a))
        w, h = wrong[pick], hit[pick]
        if w.any() and (~w).any():
            f1s.append(_f1(h[w].mean(), h[~w].mean()))
    return {
        "n_wrong": n_wrong,
        "n_right": n_right,
        "error_acc": _percent(error_acc),
        "error_acc_ci95": [_percent(v) for v in wilson(int(hit[wrong].sum()), n_wrong)],
        "correct_acc": _percent(correct_acc),
        "correct_acc_ci95": [_percent(v) for v in wilson(int(hit[~wrong].sum()), n_right)],
        "f1": _percent(_f1(error_acc, correct_acc)),
        "f1_ci95": [round(100 * float(np.percentile(f1s, q)), 1) for q in (2.5, 97.5)] if f1s else None,
    }


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of ``successes`` out of ``n`` (``(nan, nan)`` for ``n == 0``)."""
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _percent(value: float) -> float | None:
    return None if value != value else round(100 * value, 1)  # NaN (no such solutions): None in JSON


def _f1(error_acc: float, correct_acc: float) -> float:
    total = error_acc + correct_acc
    if total != total:
        return float("nan")
    return 2 * error_acc * correct_acc / total if total else 0.0


def _scores(outcomes: list[dict]) -> dict:
    labels = [o["row"]["label"] for o in outcomes]
    predictions = [o["predicted"] for o in outcomes]
    result = scores(labels, predictions) if outcomes else {}
    by_generator = defaultdict(list)
    by_kind = defaultdict(list)
    for o in outcomes:
        by_generator[o["row"]["generator"]].append(o)
        if o["error_kind"]:
            by_kind[o["error_kind"]].append(o)
    result["by_generator"] = {
        g: _small(scores([o["row"]["label"] for o in os_], [o["predicted"] for o in os_]))
        for g, os_ in sorted(by_generator.items())
    }
    result["by_error_kind"] = {
        k: {"n": len(os_), "located": sum(o["predicted"] == o["row"]["label"] for o in os_)}
        for k, os_ in sorted(by_kind.items())
    }
    flags = Counter(k for o in outcomes if o["row"]["label"] == -1 and o["predicted"] != -1 for k in set(o["kinds"]))
    result["false_flag_kinds"] = dict(flags.most_common())
    return result


def _small(s: dict) -> dict:
    return {k: s[k] for k in ("n_wrong", "n_right", "error_acc", "correct_acc", "f1")}


def _summary(part: dict) -> dict:
    return {
        half: {k: v for k, v in part[half].items() if k not in ("by_generator", "by_error_kind")}
        for half in ("dev", "test", "all")
    } | {"ms_per_solution_check": part["ms_per_solution_check"]}


def _print_part(name: str, part: dict) -> None:
    print(
        f"## {name}: check {part['ms_per_solution_check']} ms/solution, parse {part['ms_per_problem_parse']} ms/problem"
    )
    print("| half | n wrong | n right | error acc | correct acc | F1 |")
    print("|---|---:|---:|---:|---:|---:|")
    for half in ("dev", "test", "all"):
        s = part[half]
        if "f1" not in s:
            continue
        print(
            f"| {half} | {s['n_wrong']} | {s['n_right']} | {s['error_acc']} {s['error_acc_ci95']} | "
            f"{s['correct_acc']} {s['correct_acc_ci95']} | {s['f1']} {s['f1_ci95']} |"
        )
    s = part["all"]
    print("error kinds (all):", json.dumps(s["by_error_kind"]))
    print("false flags on right solutions (all):", json.dumps(s["false_flag_kinds"]))
    print("| generator | n wrong | n right | error acc | correct acc | F1 |")
    print("|---|---:|---:|---:|---:|---:|")
    for g, t in s["by_generator"].items():
        print(f"| {g} | {t['n_wrong']} | {t['n_right']} | {t['error_acc']} | {t['correct_acc']} | {t['f1']} |")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA), help="the shared data folder (holds processbench/)")
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    parser.add_argument("--limit", type=int, help="the first N solutions of each part")
    parser.add_argument("--output", help=f"where to write the results (default {RESULTS.relative_to(REPO)})")
    parser.add_argument("--as-baseline", action="store_true", help="store this run as the baseline")
    parser.add_argument("--smoke", action="store_true", help="6 solutions a part, no results file")
    random.seed(SPLIT_SEED)
    return parser.parse_args()


if __name__ == "__main__":
    main()
