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
Three checkers are scored: the rules alone (``rules``), ``check`` as shipped (the rules and the step verifier at
its default ``strict`` operating point) and ``check-f1`` (the step verifier at its ``f1`` point).
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
import dataclasses
import hashlib
import json
import math
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from mathgraph.parsers.graph_cache import parse_cached
from mathgraph.parsers.problem import parse_problem
from mathgraph.parsers.solution import check_solution
from mathgraph.parsers.solution_check import with_verifier
from mathgraph.parsers.step_verifier import STEP_FEATURES, WEIGHTS, StepVerifier, fit, line_features

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "benchmarks" / "results" / "process_errors.json"
SPLIT_SEED = 0
PARTS = ("math", "olympiadbench", "gsmplus")
PROCESSBENCH = ("math", "olympiadbench")
SYSTEMS = ("rules", "check", "check-f1")  # the rules alone; with the step verifier at "strict" and at "f1"
BOOTSTRAP = 1000
FOLDS = 5  # grouped folds of the dev halves for the verifier's calibration
TIMED_PARSES = 30  # problems parsed one at a time, without the cache, for the parse time


def main() -> None:
    """Run the benchmark (module docstring) and print its tables."""
    args = _arguments()
    limit = 6 if args.smoke else args.limit
    output = Path(args.output) if args.output else (None if args.smoke else RESULTS)
    report = {"protocol": "ProcessBench: steps joined by newlines, earliest wrong step or -1", "parts": {}}
    verifier = None if args.rules_only else "auto"
    if args.verifier:
        verifier = StepVerifier.load(args.verifier)
    if args.fit_verifier:
        verifier = fit_verifier(Path(args.data), args, Path(args.fit_verifier))
    elif verifier == "auto" and WEIGHTS.exists():
        verifier = StepVerifier.load(WEIGHTS)
    if isinstance(verifier, StepVerifier):
        report["verifier"] = {
            **(verifier.info or {}),
            "threshold": verifier.threshold,
            "thresholds": verifier.thresholds,
        }
    if args.dev_fit_comparison:
        report["in_domain_fit_comparison"] = dev_fit_comparison(Path(args.data), args)
    for part in args.parts:
        rows = load_part(Path(args.data), part, limit, args.smoke)
        result = evaluate_part(rows, timed_parses=2 if args.smoke else TIMED_PARSES, verifier=verifier)
        report["parts"][part] = result
        for system in SYSTEMS:
            if system in result:
                _print_part(f"{part}, {system}", result[system], result["ms_per_problem_parse"])
    if output is not None:
        previous = json.loads(output.read_text()) if output.exists() else {}
        if args.as_baseline:
            report["baseline"] = {p: _summary(r["rules"]) for p, r in report["parts"].items()}
        elif "baseline" in previous:
            report["baseline"] = previous["baseline"]
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {output}")


def fit_verifier(data: Path, args: argparse.Namespace, path: Path) -> StepVerifier:
    """Fit the step verifier (``parsers.step_verifier``) on the dev halves and write it to ``path``.

    Training: every line of the dev halves' solutions up to its first wrong step, labelled 1 on the lines of
    that step and 0 before it (every line of a right solution is 0). Calibration (Platt) and the threshold
    are chosen on out-of-fold scores: ``FOLDS`` folds of the dev halves grouped by problem, each fold
    scored by a verifier fitted on the others; the threshold is the one of best mean dev F1 over the parts
    of ``--threshold-parts`` among those that keep each of their dev correct accs at 90 or more. The
    verifier shipped is then fitted on all the dev lines. No test half is read."""
    limit = 6 if args.smoke else None
    parts = [part for part in args.parts if part in PROCESSBENCH]
    items: list[tuple[str, dict]] = []  # (part, item) of every dev solution
    for part in parts:
        rows = [r for r in load_part(data, part, limit, args.smoke) if r["half"] == "dev"]
        for row, graph in zip(rows, parse_cached([r["problem"] for r in rows])):
            check = check_solution(graph, "\n".join(row["steps"]), verifier=None)
            numbers, features = line_features(check)
            item = {"label": row["label"], "steps": step_of_line(row["steps"]), "rule_line": check.first_error_step}
            item.update({"lines": numbers, "features": features, "problem": row["problem"]})
            items.append((part, item))
    folds = [fold_of(item["problem"]) for _, item in items]
    for fold in range(FOLDS):
        x, y = _training_lines([item for (_, item), f in zip(items, folds) if f != fold])
        verifier = fit(x, y) if len(set(y.tolist())) == 2 else None  # a fold without both labels scores 0
        for (_, item), f in zip(items, folds):
            if f == fold:
                scored = verifier is not None and len(item["lines"])
                item["scores"] = verifier.scores(item["features"]) if scored else np.zeros(len(item["lines"]))
    calibration: dict[str, list[dict]] = {part: [] for part in parts}
    for part, item in items:
        calibration[part].append(item)
    x, y = _training_lines([item for _, item in items])
    if len(set(y.tolist())) < 2:
        raise SystemExit("--fit-verifier: the dev halves need right lines and first wrong steps to fit on")
    verifier = dataclasses.replace(fit(x, y), platt=_platt(calibration))
    chosen_parts = [p for p in args.threshold_parts if p in calibration] or parts
    chosen_on = {p: calibration[p] for p in chosen_parts}
    strict, strict_dev = _threshold(chosen_on, verifier, floor=90.0)
    best, best_dev = _threshold(chosen_on, verifier, floor=None)
    info = {
        "trained_on": f"ProcessBench dev halves ({', '.join(f'{p} {len(r)}' for p, r in calibration.items())} "
        f"solutions): {len(y)} lines up to each first wrong step, {int(y.sum())} of it",
        "calibrated_on": f"out-of-fold scores of the dev halves ({FOLDS} folds grouped by problem); thresholds "
        f"for the mean F1 of {', '.join(chosen_parts)}: strict with correct acc >= 90, f1 without a floor",
        "threshold_dev": {"strict": strict_dev, "f1": best_dev},
    }
    verifier = dataclasses.replace(verifier, threshold=strict, info=info, thresholds={"strict": strict, "f1": best})
    path.parent.mkdir(parents=True, exist_ok=True)
    verifier.save(path)
    print(f"step verifier: {info['trained_on']}; thresholds strict {strict:.4f}, f1 {best:.4f}")
    print(f"dev at them: {json.dumps(info['threshold_dev'])}; wrote {path}")
    return verifier


def _training_lines(items: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of the lines of ``items`` up to each one's first wrong step (1 on its lines)."""
    features, labels = [], []
    for item in items:
        for number, x in zip(item["lines"], item["features"]):
            step = item["steps"][number]
            if item["label"] == -1 or step <= item["label"]:
                features.append(x)
                labels.append(int(step == item["label"]))
    return np.asarray(features).reshape(len(features), len(STEP_FEATURES)), np.asarray(labels)


def dev_fit_comparison(data: Path, args: argparse.Namespace) -> dict:
    """What an in-domain fit would give, for comparison only (not shipped): the same logistic regression
    fitted on the dev halves' real labels (each line up to its solution's first wrong step: 1 on that step),
    calibrated and thresholded on dev as the shipped verifier is, scored on the test halves."""
    limit = 6 if args.smoke else None
    parts = [part for part in args.parts if part in PROCESSBENCH]
    lines: dict[str, dict[str, list[dict]]] = {"dev": {}, "test": {}}
    features, labels = [], []
    for part in parts:
        rows = load_part(data, part, limit, args.smoke)
        for half in ("dev", "test"):
            lines[half][part] = []
        for row, graph in zip(rows, parse_cached([r["problem"] for r in rows])):
            check = check_solution(graph, "\n".join(row["steps"]), verifier=None)
            numbers, rows_of = line_features(check)
            steps = step_of_line(row["steps"])
            item = {"label": row["label"], "steps": steps, "rule_line": check.first_error_step, "lines": numbers}
            item["features"] = rows_of
            lines[row["half"]][part].append(item)
            if row["half"] == "dev":
                for number, x in zip(numbers, rows_of):
                    if row["label"] == -1 or steps[number] <= row["label"]:
                        features.append(x)
                        labels.append(int(steps[number] == row["label"]))
    verifier = fit(np.asarray(features), np.asarray(labels))
    for half in lines.values():
        for items in half.values():
            for item in items:
                item["scores"] = verifier.scores(item["features"]) if len(item["lines"]) else np.zeros(0)
    verifier = dataclasses.replace(verifier, platt=_platt(lines["dev"]))
    threshold, dev = _threshold(lines["dev"], verifier)
    verifier = dataclasses.replace(verifier, threshold=threshold)
    test = {part: _small(_threshold_scores(items, verifier)) for part, items in lines["test"].items()}
    result = {
        "threshold": threshold,
        "dev": dev,
        "test": test,
        "dev_lines": len(labels),
        "dev_wrong_lines": sum(labels),
    }
    print(f"in-domain fit, for comparison (not shipped): {json.dumps(result)}")
    return result


def _threshold_scores(items: list[dict], verifier: StepVerifier) -> dict:
    """ProcessBench scores of the rules and ``verifier`` at its threshold, from precomputed line scores."""
    labels = [item["label"] for item in items]
    return scores(labels, [_predicted_step(item, verifier, verifier.threshold) for item in items])


def _predicted_step(item: dict, verifier: StepVerifier, threshold: float) -> int:
    """The step ``check`` predicts from an item's precomputed line scores: the earlier of the rules' first error
    line and the verifier's most probable line where its probability reaches ``threshold``; -1 for neither."""
    a, b = verifier.platt
    flagged = [] if item["rule_line"] is None else [item["rule_line"]]
    if len(item["scores"]):
        k = int(np.argmax(item["scores"]))
        if _sigmoid(a * item["scores"][k] + b) >= threshold:
            flagged.append(item["lines"][k])
    return item["steps"][min(flagged)] if flagged else -1


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-min(max(z, -700.0), 700.0)))


def _dev_lines(dev: dict[str, list[dict]], verifier: StepVerifier) -> dict[str, list[dict]]:
    """Per part and dev solution: its label, the step of each line, the rules' first error line and each
    line's uncalibrated score."""
    out = {}
    for part, rows in dev.items():
        graphs = parse_cached([r["problem"] for r in rows])
        out[part] = []
        for row, graph in zip(rows, graphs):
            check = check_solution(graph, "\n".join(row["steps"]), verifier=None)
            numbers, features = line_features(check)
            scores = verifier.scores(features) if len(numbers) else np.zeros(0)
            out[part].append(
                {
                    "label": row["label"],
                    "steps": step_of_line(row["steps"]),
                    "rule_line": check.first_error_step,
                    "lines": numbers,
                    "scores": scores,
                }
            )
    return out


def _platt(calibration: dict[str, list[dict]]) -> tuple[float, float]:
    """Platt scaling of the scores on the dev lines up to each solution's first wrong step."""
    from sklearn.linear_model import LogisticRegression

    scores, labels = [], []
    for rows in calibration.values():
        for row in rows:
            for line, score in zip(row["lines"], row["scores"]):
                step = row["steps"][line]
                if row["label"] == -1 or step <= row["label"]:
                    scores.append(score)
                    labels.append(int(step == row["label"]))
    if len(set(labels)) < 2:
        return 1.0, 0.0
    model = LogisticRegression(C=1e4).fit(np.asarray(scores).reshape(-1, 1), labels)
    return float(model.coef_[0][0]), float(model.intercept_[0])


def _threshold(
    calibration: dict[str, list[dict]], verifier: StepVerifier, floor: float | None = 90.0
) -> tuple[float, dict]:
    """The threshold of best mean dev F1 over the parts of ``calibration``, among those keeping every part's dev
    correct acc at ``floor`` or more (``None``: no floor), and the parts' dev figures there."""
    candidates = sorted({round(float(t), 4) for t in np.linspace(0.02, 0.98, 97)} | {1.01})
    best = (1.01, {}, -1.0)
    for t in candidates:
        per_part = {}
        for part, rows in calibration.items():
            labels = [row["label"] for row in rows]
            per_part[part] = _small(scores(labels, [_predicted_step(row, verifier, t) for row in rows]))
        f1s = [p["f1"] or 0.0 for p in per_part.values()]
        kept = floor is None or all((p["correct_acc"] or 0) >= floor for p in per_part.values())
        if kept and sum(f1s) / len(f1s) > best[2]:
            best = (t, per_part, sum(f1s) / len(f1s))
    return best[0], best[1]


def load_part(data: Path, part: str, limit: int | None = None, smoke: bool = False) -> list[dict]:
    """The rows of ``data/processbench/PART.jsonl``, each with its ``half`` ("dev" or "test"); the first
    ``limit`` only when given (``smoke``: half right, half wrong ones)."""
    if part == "gsmplus":
        rows = gsmplus_rows(data)
        if limit and smoke:
            right = [r for r in rows if r["label"] == -1][: limit // 2]
            return right + [r for r in rows if r["label"] != -1][: limit - len(right)]
        return rows[:limit] if limit else rows
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


def gsmplus_rows(data: Path) -> list[dict]:
    """Grade-school solutions no part of the checker was fitted on, from ``gsmplus/variants.jsonl`` (GSM-Plus,
    whose seeds are GSM8K *test* problems): each variant's own solution, right (label -1; not the "critical
    thinking" variants, which cannot be answered); and, for the "numerical substitution" and "digit
    expansion" variants, the seed's solution read against the variant's question, wrong from its first
    line that writes a number of the seed's question that the variant changed (where there is one). Steps
    are the solutions' non-blank lines; ``generator`` names the variant's kind."""
    rows = []
    with open(data / "gsmplus" / "variants.jsonl", encoding="utf-8") as f:
        variants = [json.loads(line) for line in f]
    for k, v in enumerate(variants):
        if v["perturbation_type"] == "critical thinking":
            continue
        half = half_of(v["seed_question"])
        steps = [line for line in v["solution"].split("\n") if line.strip()]
        rows.append({"id": f"gsmplus-{k}", "generator": v["perturbation_type"], "problem": v["question"]})
        rows[-1].update({"steps": steps, "label": -1, "half": half})
        if v["perturbation_type"] not in ("numerical substitution", "digit expansion"):
            continue
        changed = _numbers_of(v["seed_question"]) - _numbers_of(v["question"])
        seed_steps = [line for line in v["seed_solution"].split("\n") if line.strip()]
        wrong = [j for j, line in enumerate(seed_steps) if _numbers_of(line) & changed]
        if changed and wrong:
            rows.append({"id": f"gsmplus-{k}-seed", "generator": v["perturbation_type"], "problem": v["question"]})
            rows[-1].update({"steps": seed_steps, "label": wrong[0], "half": half})
    return rows


def _numbers_of(text: str) -> set[str]:
    return {m.replace(",", "") for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


def half_of(problem: str, seed: int = SPLIT_SEED) -> str:
    """ "dev" or "test" for a problem text: the parity of a SHA-256 of the seed and the text."""
    digest = hashlib.sha256(f"{seed}\n{problem}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def fold_of(problem: str, folds: int = FOLDS) -> int:
    """The dev fold of a problem text (the verifier's grouped folds): a byte of its SHA-256 modulo ``folds``."""
    return int(hashlib.sha256(problem.encode()).digest()[1]) % folds


def step_of_line(steps: list[str]) -> list[int]:
    """For each line of the steps joined by newlines, the index of the step it belongs to."""
    return [k for k, step in enumerate(steps) for _ in step.split("\n")]


def first_step(check, steps: list[str]) -> tuple[int, list[str]]:
    """The predicted earliest wrong step (-1 for none) of a check of the steps joined by newlines, and the
    kinds of the error findings on that step's line."""
    if check.first_error_step is None:
        return -1, []
    kinds = [f.kind for f in check.errors() if f.step == check.first_error_step]
    return step_of_line(steps)[check.first_error_step], kinds


def error_kind(check, label: int, steps: list[str]) -> str:
    """``calculation`` when the labelled wrong step states a calculation that does not check out (as the
    solution reader reads it), else ``other``."""
    lines = step_of_line(steps)
    for line, calculation in check.graph.calculations():
        if lines[line] == label and calculation.checks_out is False:
            return "calculation"
    return "other"


def evaluate_part(rows: list[dict], timed_parses: int = TIMED_PARSES, verifier="auto") -> dict:
    """Predictions and scores of one part (module docstring): ``check`` as shipped (the rules and
    ``verifier`` at its default, strict, operating point), ``check-f1`` (the same at the verifier's ``f1``
    operating point, where it has one), and under ``rules`` the rules alone."""
    graphs = parse_cached([r["problem"] for r in rows])
    verifiers = {"check": verifier} if verifier is not None else {}
    if isinstance(verifier, StepVerifier) and "f1" in verifier.thresholds:
        verifiers["check-f1"] = verifier.at("f1")
    outcomes: dict[str, list] = {system: [] for system in SYSTEMS}
    seconds = dict.fromkeys(SYSTEMS, 0.0)
    for row, graph in zip(rows, graphs):
        started = time.perf_counter()
        rules = check_solution(graph, "\n".join(row["steps"]), verifier=None)
        seconds["rules"] += time.perf_counter() - started
        kind = error_kind(rules, row["label"], row["steps"]) if row["label"] != -1 else None
        checks = {"rules": rules}
        for system, at_point in verifiers.items():
            started = time.perf_counter()
            checks[system] = with_verifier(rules, at_point)
            seconds[system] += time.perf_counter() - started
        for system, check in checks.items():
            predicted, kinds = first_step(check, row["steps"])
            outcomes[system].append({"row": row, "predicted": predicted, "kinds": kinds, "error_kind": kind})
    result = {}
    for system in SYSTEMS:
        if not outcomes[system]:
            continue
        spent = seconds["rules"] + (seconds[system] if system != "rules" else 0.0)
        part = {"ms_per_solution_check": round(1000 * spent / max(len(rows), 1), 2)}
        for half in ("dev", "test", "all"):
            part[half] = _scores([o for o in outcomes[system] if half == "all" or o["row"]["half"] == half])
        result[system] = part
    result["ms_per_problem_parse"] = _parse_ms(rows, timed_parses)
    return result


def _parse_ms(rows: list[dict], timed_parses: int) -> float:
    """ms to parse one problem (``parse_problem``, one at a time, no cache)."""
    distinct = list(dict.fromkeys(r["problem"] for r in rows))[:timed_parses]
    started = time.perf_counter()
    for problem in distinct:
        parse_problem(problem)
    return round(1000 * (time.perf_counter() - started) / max(len(distinct), 1), 2)


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


def _print_part(name: str, part: dict, parse_ms: float) -> None:
    print(f"## {name}: check {part['ms_per_solution_check']} ms/solution, parse {parse_ms} ms/problem")
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
    parser.add_argument("--as-baseline", action="store_true", help="store this run (the rules) as the baseline")
    parser.add_argument("--rules-only", action="store_true", help="measure the rules alone, no step verifier")
    parser.add_argument("--verifier", help="a step verifier's weights (default: the packaged ones, if any)")
    parser.add_argument(
        "--fit-verifier",
        metavar="FILE",
        help="fit the step verifier on the dev halves' real labels (calibration and threshold on out-of-fold "
        "dev scores), write its weights to FILE, then measure with it",
    )
    parser.add_argument(
        "--dev-fit-comparison",
        action="store_true",
        help="also fit the verifier on the dev halves' real labels and score it on test (comparison, not shipped)",
    )
    parser.add_argument(
        "--threshold-parts",
        nargs="+",
        default=list(PROCESSBENCH),
        choices=PROCESSBENCH,
        help="the parts whose mean dev F1 chooses the verifier's thresholds (strict: each with correct acc >= 90)",
    )
    parser.add_argument("--smoke", action="store_true", help="6 solutions a part, no results file")
    return parser.parse_args()


if __name__ == "__main__":
    main()
