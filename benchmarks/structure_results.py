"""The alignment model (``models.alignment_model``: gradient-boosted trees on graph alignment features) on the pair tasks, next to TF-IDF and their hybrid: seed-0 splits, dev and test.

    python benchmarks/structure_results.py --work results/ [--tasks qrc,qam,sqr] [--smoke]

Builds (or reuses) the task files of ``benchmarks/results.py`` (GSM-Plus split by
seed, 80/10/10, seed 0; QAM trained on 500 GSM8K questions with hard negatives plus
the train seeds' number-swap pairs, tested on the test seeds' number-swap pairs),
then per task:

- ``tfidf``: the TF-IDF baseline (``models.tfidf``);
- ``structure``: ``models.structure.AlignmentModel`` on the alignment features;
- ``structure+tfidf``: the two fused (``models.late_fusion``), the weight chosen on dev.

Accuracy with a 95% Wilson interval, NDCG@3 with a 95% bootstrap interval over lists.
Test is never used for a choice. Also the time to align a pair, as a ratio to parsing
its two problems. Writes ``WORK/structure_results.json``, the models under
``WORK/models/structure-TASK``, and prints markdown tables. ``--smoke`` runs on the smoke
data (``benchmarks/smoke.py``), an alignment model of 20 iterations, in ``WORK/smoke``: seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mathgraph.models.alignment_model import AlignmentModel  # noqa: E402
from mathgraph.models.late_fusion import fuse  # noqa: E402
from mathgraph.models.tfidf import TfidfPredictor  # noqa: E402
from mathgraph.tasks.evaluation import labelled_inputs, task_metric  # noqa: E402
from mathgraph.tasks.training.late_fusion import choose_weight  # noqa: E402
from mathgraph.tasks.training.tfidf import train_tfidf  # noqa: E402

from results import build_task_files, machine, metrics_with_interval  # noqa: E402
from smoke import smoke_work  # noqa: E402

TASKS = ("qrc", "qam", "sqr")


def main() -> None:
    args = _arguments()
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    files = build_task_files(work / "data", seed=0, smoke=args.smoke)
    results = {"machine": machine(), "split": "seed 0 (benchmarks/results.py)", "smoke": args.smoke}
    for task in args.tasks.split(","):
        results[task] = run_task(task, files[task], work / "models", args.smoke)
        print(f"{task}: " + json.dumps({row: r["test"] for row, r in results[task].items() if "test" in r}), flush=True)
    results["align_time"] = align_time(files["qrc"]["test"], limit=10 if args.smoke else 180)
    (work / "structure_results.json").write_text(json.dumps(results, indent=1))
    print_tables(results)


def _read(task: str, path: str, limit: int | None):
    inputs, gold = labelled_inputs(task, path)
    return (inputs[:limit], gold[:limit]) if limit else (inputs, gold)


def run_task(task: str, split: dict[str, str], models: Path, smoke: bool) -> dict:
    """TF-IDF, the alignment model and their late fusion on one task: dev and test metrics with intervals."""
    limit = 40 if smoke else None
    train_inputs, train_gold = _read(task, split["train"], limit)
    rows = [json.loads(line) for line in open(split["train"], encoding="utf-8")][: limit or None]
    started = time.perf_counter()
    tfidf = TfidfPredictor(task, train_tfidf(task, rows))
    tfidf_seconds = time.perf_counter() - started
    started = time.perf_counter()
    structure = AlignmentModel(task, {"max_iter": 20} if smoke else None).fit(
        train_inputs, train_gold, show_progress=True
    )
    structure_seconds = time.perf_counter() - started
    structure.save_pretrained(models / f"structure-{task}")
    parts = [p for p in split if p != "train"]
    predictions = {}
    for part in parts:
        inputs, gold = _read(task, split[part], limit)
        predictions[part] = (gold, tfidf.predict(inputs), structure.predict(inputs))
    gold_dev, tfidf_dev, structure_dev = predictions["dev"]
    weight, tried = choose_weight(structure_dev, tfidf_dev, task_metric(task, gold_dev))
    record = {
        "tfidf": {"train_seconds": round(tfidf_seconds, 1)},
        "structure": {"train_seconds": round(structure_seconds, 1), "n_train": len(train_inputs)},
        "structure+tfidf": {"weight_on_tfidf": weight, "dev_by_weight": tried},
    }
    for part, (gold, sparse, dense) in predictions.items():
        record["tfidf"][part] = metrics_with_interval(task, sparse, gold)
        record["structure"][part] = metrics_with_interval(task, dense, gold)
        record["structure+tfidf"][part] = metrics_with_interval(
            task, [fuse(d, s, weight) for d, s in zip(dense, sparse)], gold
        )
    return record


def align_time(path: str, limit: int) -> dict:
    """Seconds to parse the two problems of a pair and to align them, over ``limit`` QRC pairs (no cache)."""
    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.problem import ProblemParser

    inputs, _ = labelled_inputs("qrc", path)
    inputs = inputs[:limit]
    parser = ProblemParser("auto")
    parser.parse("Warm up the parser.")
    started = time.perf_counter()
    graphs = [(parser.parse(a), parser.parse(b)) for a, b in inputs]
    parse_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for a, b in graphs:
        align_problems(a, b)
    align_seconds = time.perf_counter() - started
    return {
        "pairs": len(inputs),
        "parse_ms_per_pair": round(1000 * parse_seconds / len(inputs), 2),
        "align_ms_per_pair": round(1000 * align_seconds / len(inputs), 2),
        "align_to_parse_ratio": round(align_seconds / parse_seconds, 4),
    }


def print_tables(results: dict) -> None:
    print(f"\nmachine: {results['machine']}; split: {results['split']}")
    for task in TASKS:
        if task not in results:
            continue
        metric = "ndcg@3" if task == "sqr" else "accuracy"
        for part in [p for p in results[task]["structure"] if p.startswith(("dev", "test"))]:
            print(f"\n### {task.upper()} {part} ({metric})\n")
            print(f"| model | {metric} | 95% CI | n |")
            print("|---|---:|---|---:|")
            for row, record in results[task].items():
                m = record[part]
                ci = m[f"{metric}_ci95"]
                print(f"| {row} | {m[metric]:.4f} | {ci[0]:.4f}-{ci[1]:.4f} | {m['n']} |")
        print(f"\nhybrid weight on TF-IDF (chosen on dev): {results[task]['structure+tfidf']['weight_on_tfidf']}")
    t = results["align_time"]
    print(
        f"\nalign a pair: {t['align_ms_per_pair']} ms; parse its two problems: {t['parse_ms_per_pair']} ms "
        f"(ratio {t['align_to_parse_ratio']}, {t['pairs']} QRC test pairs)"
    )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--smoke", action="store_true", help="the smoke data, seconds (WORK/smoke)")
    return parser.parse_args()


if __name__ == "__main__":
    main()
