"""TF-IDF baselines on the real data: the reference rows of every results table.

    python benchmarks/tfidf_baselines.py [--data ../shared/data] [--seed 0] [--tasks kpc qrc qam sqr] [--smoke]

- **KPC**: MATH train (7,500 problems) -> subject, split 80/10/10 by row, stratified by subject.
- **QRC**: GSM-Plus seed/variant pairs labelled with the perturbation type, plus one "irrelevant" pair per seed
  (`tasks.data.build_qrc_pairs`), split 80/10/10 by seed.
- **QAM**: GSM8K question with its own solution (1) or, as the hard negative, the solution of its most
  TF-IDF-similar other question (0) (`tasks.data.build_qam_pairs`), split 80/10/10 by question.
- **SQR** (graded): one candidate list per GSM-Plus seed (`tasks.data.build_sqr_lists`): its 8 variants, graded
  2 (same solution steps), 1 (adding / reversing operation) or 0 (critical thinking), and the 4 TF-IDF-nearest
  variants of other seeds (0), split 80/10/10 by seed. NDCG uses the gains 2^rel - 1; HR and MAP count
  relevance 2 as relevant.

Every model is fitted on the train split only (`tasks.training.tfidf.train_tfidf`, default hyperparameters, no tuning
on dev) and scored with `tasks.training.tfidf.evaluate_tfidf`. Everything uses `--seed`. Prints markdown tables.
`--smoke`: the smoke data (`benchmarks/smoke.py`), seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import sklearn

from mathgraph.tasks.training.tfidf import evaluate_tfidf, train_tfidf

from smoke import SMOKE_DATA

REPO = Path(__file__).resolve().parents[1]
SPLITS = ("train", "dev", "test")
RANKING_COLUMNS = ("hr@1", "ndcg@1", "hr@3", "ndcg@3", "hr@5", "ndcg@5", "map")

try:
    from mathgraph.tasks import data as task_data
except ImportError:  # the task builders are not there yet: KPC only
    task_data = None


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _kpc_splits(data_dir: Path, seed: int) -> dict[str, list[dict]]:
    rows = _read_jsonl(data_dir / "math" / "train.jsonl")
    if task_data is not None:
        return task_data.split_rows(rows, dev=0.1, test=0.1, seed=seed, stratify_field="subject")
    from sklearn.model_selection import train_test_split

    rest, test = train_test_split(rows, test_size=0.1, random_state=seed, stratify=[r["subject"] for r in rows])
    train, dev = train_test_split(rest, test_size=0.1 / 0.9, random_state=seed, stratify=[r["subject"] for r in rest])
    return {"train": train, "dev": dev, "test": test}


def _task_rows(task: str, data_dir: Path, seed: int) -> list[dict]:
    if task == "qam":
        return task_data.build_qam_pairs(_read_jsonl(data_dir / "gsm8k" / "train.jsonl"), random_state=seed)
    seeds, _ = task_data.read_seeds(data_dir / "gsmplus" / "variants.jsonl")
    builder = task_data.build_qrc_pairs if task == "qrc" else task_data.build_sqr_lists
    return builder(seeds, random_state=seed)


SOURCES = {
    "kpc": ("MATH train", "row, stratified by subject"),
    "qrc": ("GSM-Plus variants", "seed problem"),
    "qam": ("GSM8K train", "question"),
    "sqr": ("GSM-Plus variants", "seed problem"),
}


def _splits(task: str, data_dir: Path, seed: int) -> dict[str, list[dict]]:
    if task == "kpc":
        return _kpc_splits(data_dir, seed)
    return task_data.split_by_group(_task_rows(task, data_dir, seed), "group", dev=0.1, test=0.1, seed=seed)


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _fmt(value) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tasks", nargs="+", choices=tuple(SOURCES), default=list(SOURCES))
    parser.add_argument("--smoke", action="store_true", help="the smoke data: seconds")
    args = parser.parse_args()
    data_dir = SMOKE_DATA if args.smoke else Path(args.data)

    tasks = args.tasks
    if task_data is None:
        skipped = [t for t in tasks if t != "kpc"]
        tasks = [t for t in tasks if t == "kpc"]
        if skipped:
            print(f"tasks.data is not available: reporting KPC only ({', '.join(skipped)} skipped)\n")

    print(
        f"machine: {_cpu_name()}, {os.cpu_count()} cores; Python {platform.python_version()}, "
        f"scikit-learn {sklearn.__version__}; seed {args.seed}; data {data_dir}\n"
    )

    results, split_table = {}, []
    for task in tasks:
        splits = _splits(task, data_dir, args.seed)
        start = time.perf_counter()
        model = train_tfidf(task, splits["train"])
        fit_seconds = time.perf_counter() - start
        results[task] = {name: evaluate_tfidf(task, model, splits[name]) for name in ("dev", "test")}
        source, unit = SOURCES[task]
        sizes = [
            f"{len(splits[n])}" if task == "kpc" else f"{len(splits[n])} ({len({r['group'] for r in splits[n]})})"
            for n in SPLITS
        ]
        split_table.append((task.upper(), source, unit, *sizes, f"{fit_seconds:.1f}"))

    print("## Data splits (80/10/10; rows, and groups in brackets)\n")
    print("| task | source | split by | train | dev | test | fit s |")
    print("|---|---|---|---|---|---|---|")
    for row in split_table:
        print("| " + " | ".join(row) + " |")

    classification = [t for t in tasks if t != "sqr"]
    if classification:
        print("\n## Classification: TF-IDF + logistic regression\n")
        print("| task | dev accuracy | dev macro-F1 | test accuracy | test macro-F1 | dev n | test n |")
        print("|---|---|---|---|---|---|---|")
        for task in classification:
            dev, test = results[task]["dev"], results[task]["test"]
            print(
                f"| {task.upper()} | {_fmt(dev['accuracy'])} | {_fmt(dev['macro_f1'])} | "
                f"{_fmt(test['accuracy'])} | {_fmt(test['macro_f1'])} | {dev['n']} | {test['n']} |"
            )
    if "sqr" in tasks:
        print("\n## SQR: TF-IDF cosine ranking (ties counted pessimistically)\n")
        print("| split | " + " | ".join(RANKING_COLUMNS) + " | lists |")
        print("|---" * (len(RANKING_COLUMNS) + 2) + "|")
        for name in ("dev", "test"):
            metrics = results["sqr"][name]
            print(f"| {name} | " + " | ".join(_fmt(metrics[c]) for c in RANKING_COLUMNS) + f" | {metrics['n']} |")


if __name__ == "__main__":
    main()
