"""The results table: TF-IDF, BERT and COMUS (and ablations) on KPC, QRC, QAM and SQR, dev and test.

    python benchmarks/results.py --work results/ [--rows tfidf,bert,comus,...] [--tasks kpc,qrc,qam,sqr]
                                 [--epochs kpc=3,qrc=8,qam=2,sqr=3] [--qam-questions 500] [--smoke]

1. Splits first, then builds each part's task file, so no dev/test text ever
   reaches training (not even as a distractor), 80/10/10, seed 0:
   - KPC: MATH train stratified by subject (6,000 / 750 / 750).
   - QRC and SQR: GSM-Plus split by seed problem, then QRC pairs (8 variants + 1
     irrelevant per seed) and graded SQR lists per part.
   - QAM: trained on GSM8K pairs with hard negatives (``--qam-questions`` train
     questions drawn at random, each with its solution and the solution of its most
     TF-IDF-similar other train question) plus the GSM-Plus number-swap pairs of the
     train seeds; the best epoch is picked on the number-swap pairs of the dev seeds.
     Tested on the number-swap pairs of the test seeds (``test``) and on the GSM8K
     hard-negative pairs of 300 test questions drawn at random (``test-gsm8k``; the
     same for dev).
2. Fine-tunes every row on every task with the fast path and the recipe of
   ``tasks.training.finetune`` (encoder 3e-5, fresh parts 1e-3, 5% warm-up, mean pooling,
   cross-encoder pairs), keeps the best epoch on dev, and evaluates it on dev and test.
   Rows already in ``WORK/results.json`` are kept, so an interrupted run resumes.

Rows: ``tfidf``; ``bert`` (text only) and ``comus`` from the untrained architecture (the packaged
MiniLM, a fresh graph side); ``comus-pt`` from the pre-trained encoder (``--pretrained``, default the
shipped one: COMUS pre-trained, the paper's central claim is comus-pt > comus on KPC);
ablations on QRC: ``comus-cross`` (the default, as their control at the ablations'
budget), ``comus-bi`` (bi-encoder pairs), ``comus-split-digits`` (a new COMUS
model whose tokenizer splits numbers into digits) and ``comus-cls`` ([CLS] pooling); on the pair
tasks, ``comus-align``, ``comus-pt-align`` and ``bert-align``: the same rows with heads that also read
each pair's graph alignment (``TaskConfig.alignment``, ``parsers.compare``).
Accuracy comes with a 95% Wilson interval, ranking metrics with a 95% bootstrap
interval over lists. Prints markdown tables; ``results.json`` holds everything.
``--smoke``: the same on the smoke data (``benchmarks/smoke.py``: at most 12 examples a part), rows
tfidf and comus unless ``--rows`` says otherwise, tiny new models (a 6-layer, 32-wide BERT), 2
training steps of 2 examples, in ``WORK/smoke``: seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from pathlib import Path

import numpy as np
import torch

from mathgraph.api import evaluate, task_predictor
from mathgraph.models.task_model import TaskConfig
from mathgraph.tasks.data import (
    build_qam_number_swap,
    build_qam_pairs,
    build_qrc_pairs,
    build_sqr_lists,
    group_seeds,
    split_by_group,
    split_rows,
)
from mathgraph.tasks.release.build import metrics_with_interval, wilson  # noqa: E402,F401 (the benchmarks read them here)
from mathgraph.tasks.training.finetune import train_task
from mathgraph.tasks.training.tfidf import train_tfidf
from mathgraph.tasks.training.trainer import TrainingArguments

from smoke import SMOKE_DATA, smoke_work, tiny_model_options

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
TASKS = ("kpc", "qrc", "qam", "sqr")
EPOCHS = {"kpc": 3, "qrc": 8, "qam": 2, "sqr": 3}
# An SQR example is a list of 13 problems; 4 lists (52 problems) a step: 16 lists padded together took
# 10x the time of 4 on the 2-core CPU (not 4x), the memory layers' [B, m, L, T] tensors growing with the batch.
BATCH_SIZES = {"sqr": 4}
# row -> (architecture, TaskConfig options, new-model options); the start is the untrained architecture
# (the packaged MiniLM with a fresh graph side), except for comus-pt (--pretrained: the shipped encoder by default)
ROWS = {
    "tfidf": None,
    "bert": ("bert", {}, {}),
    "comus": ("comus", {}, {}),
    "comus-pt": ("comus", {}, {}),
    "bert-gat": ("bert+gat", {}, {}),
    "dapt-bert": ("bert", {}, {}),  # --dapt: a `mathgraph pretrain --architecture bert --tasks mlm` directory
    "released": "shipped",  # the shipped multi-task model as it is, no training
    "released-hybrid": "shipped",  # the same fused with its TF-IDF baseline (the weight chosen on dev)
    "comus-cross": ("comus", {"pair_mode": "cross"}, {}),  # = comus; the ablations' control at their budget
    "comus-bi": ("comus", {"pair_mode": "bi"}, {}),
    "comus-split-digits": ("comus", {}, {"split_digits": True}),
    "comus-cls": ("comus", {"pooling": "cls"}, {}),
    "comus-align": ("comus", {"alignment": True}, {}),  # the head also reads the pair's graph alignment
    "comus-pt-align": ("comus", {"alignment": True}, {}),
    "bert-align": ("bert", {"alignment": True}, {}),
}
PRETRAINED_ROWS = {
    "comus-pt": "pretrained",
    "comus-pt-align": "pretrained",
    "dapt-bert": "dapt",
}  # row -> the option naming its start
# the ablations run on QRC, whose relations are about numbers and about how two problems differ
ROW_TASKS = {
    "comus-cross": ("qrc",),
    "comus-bi": ("qrc",),
    "comus-split-digits": ("qrc",),
    "comus-cls": ("qrc",),
    **{row: ("qrc", "qam", "sqr") for row in ("comus-align", "comus-pt-align", "bert-align")},
}
FIELDS = {"text_field": "problem", "label_field": "subject"}
SMOKE_ROWS = 12  # examples of each part of a task in --smoke runs


def main() -> None:
    args = _arguments()
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    files = build_task_files(work / "data", args.seed, args.qam_questions, smoke=args.smoke)
    epochs = {**EPOCHS, **{k: int(v) for k, v in (item.split("=") for item in args.epochs.split(",") if item)}}

    results_path = work / "results.json"
    results: dict = json.loads(results_path.read_text()) if results_path.exists() else {}
    results["machine"] = machine()
    for row in args.rows.split(","):
        if row not in ROWS:
            raise SystemExit(f"unknown row {row!r}; choose from {sorted(ROWS)}")
        for task in args.tasks.split(","):
            if row in results.get(task, {}) or task not in ROW_TASKS.get(row, TASKS):
                continue
            results.setdefault(task, {})[row] = run_row(
                task, row, files[task], work / "models" / f"{task}-{row}", epochs[task], args
            )
            results_path.write_text(json.dumps(results, indent=1))
            print(f"{task} {row}: {json.dumps(results[task][row]['test'])}", flush=True)
    print_tables(results)


def run_row(task: str, row: str, split: dict[str, str], output: Path, epochs: int, args) -> dict:
    """Train one row on one task (TF-IDF, or a fine-tune kept at its best dev epoch), evaluate every part."""
    started = time.perf_counter()
    record: dict = {"n_train": sum(1 for _ in open(split["train"], encoding="utf-8"))}
    if ROWS[row] == "shipped":
        predictor = task_predictor(task, "shipped", hybrid=row == "released-hybrid")
        record.update(epochs=None, train_examples_per_s=None, train_seconds=None)
        for part in (name for name in split if name != "train"):
            record[part] = evaluate_predictor(task, predictor, split[part])
        return record
    if ROWS[row] is None:
        train_rows = [json.loads(line) for line in open(split["train"], encoding="utf-8")]
        train_tfidf(task, train_rows, **FIELDS).save_pretrained(output)
        record.update(epochs=None, train_examples_per_s=None)
    else:
        architecture, options, new_model = ROWS[row]
        training = TrainingArguments(
            output_dir=str(output),
            epochs=epochs,
            max_steps=2 if args.smoke else None,
            batch_size=2 if args.smoke else BATCH_SIZES.get(task, args.batch_size),
            learning_rate=args.lr,
            head_learning_rate=args.head_lr,
            seed=args.seed,
            parse_workers=args.workers,
            resume=(output / "checkpoint-last").exists(),
        )
        start = getattr(args, PRETRAINED_ROWS[row]) if row in PRETRAINED_ROWS else "untrained"
        if args.smoke and start == "untrained":
            new_model = {**tiny_model_options(output.parent), **new_model}
        trained = train_task(
            TaskConfig(task, architecture=architecture, **FIELDS, **options),
            split["train"],
            training,
            dev_path=split["dev"],
            model=start,
            **new_model,
        )
        history = trained["history"]
        record.update(
            epochs=epochs,
            history=history,
            train_examples_per_s=round(float(np.mean([r["train_examples_per_s"] for r in history])), 2),
        )
    record["train_seconds"] = round(time.perf_counter() - started, 1)
    for part in (name for name in split if name != "train"):
        record[part] = evaluate_with_interval(task, output, split[part])
    return record


def evaluate_with_interval(task: str, directory: Path, path: str) -> dict:
    """The task's metrics on ``path`` with 95% intervals: Wilson for accuracy, bootstrap over lists for SQR."""
    if task != "sqr":
        metrics = evaluate(directory, task, path, **FIELDS)
        metrics["accuracy_ci95"] = wilson(metrics["accuracy"], metrics["n"])
        return metrics
    return evaluate_predictor(task, task_predictor(task, directory), path)


def evaluate_predictor(task: str, predictor, path: str) -> dict:
    """The metrics of ``predictor.predict`` on a task file, with 95% intervals (``metrics_with_interval``)."""
    from mathgraph.tasks.evaluation import labelled_inputs

    inputs, gold = labelled_inputs(task, path)
    return metrics_with_interval(task, predictor.predict(inputs), gold)


def build_task_files(
    directory: Path, seed: int, qam_questions: int = 500, smoke: bool = False
) -> dict[str, dict[str, str]]:
    """Split the shared data, build each part's task file; returns their paths per task and part.
    ``smoke``: from the smoke data (``benchmarks/smoke.py``), QAM from 8 GSM8K train questions and 2 dev
    and 2 test ones, and at most ``SMOKE_ROWS`` of each part (a seeded sample in file order)."""
    data, qam_questions, eval_questions = (SMOKE_DATA, 8, 2) if smoke else (DATA, qam_questions, 300)
    directory.mkdir(parents=True, exist_ok=True)
    read = lambda path: [json.loads(line) for line in open(path, encoding="utf-8")]  # noqa: E731
    files: dict[str, dict[str, str]] = {}

    def write(task: str, parts: dict[str, list[dict]]) -> None:
        files[task] = {}
        for name, part in parts.items():
            if smoke and len(part) > SMOKE_ROWS:
                part = [part[i] for i in sorted(random.Random(seed).sample(range(len(part)), SMOKE_ROWS))]
            path = directory / f"{task}.{name}.jsonl"
            if not path.exists():  # built once: a resumed run trains and tests on the same files
                path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part), encoding="utf-8")
            files[task][name] = str(path)

    write("kpc", split_rows(read(data / "math" / "train.jsonl"), seed=seed, stratify_field="subject"))
    variants = split_by_group(read(data / "gsmplus" / "variants.jsonl"), "seed_question", seed=seed)
    write("qrc", {name: build_qrc_pairs(group_seeds(part), random_state=seed) for name, part in variants.items()})
    write("sqr", {name: build_sqr_lists(group_seeds(part), random_state=seed) for name, part in variants.items()})
    swap = {name: build_qam_number_swap(part) for name, part in variants.items()}
    gsm8k = split_by_group(read(data / "gsm8k" / "train.jsonl"), "question", seed=seed)
    hard = {name: build_qam_pairs(part, random_state=seed, negatives="hard") for name, part in gsm8k.items()}

    def questions(pairs: list[dict], count: int) -> list[dict]:  # the pairs of `count` random questions
        chosen = set(random.Random(seed).sample(sorted({p["group"] for p in pairs}), count))
        return [p for p in pairs if p["group"] in chosen]

    write(
        "qam",
        {
            "train": questions(hard["train"], qam_questions) + swap["train"],
            "dev": swap["dev"],
            "test": swap["test"],
            "dev-gsm8k": questions(hard["dev"], eval_questions),
            "test-gsm8k": questions(hard["test"], eval_questions),
        },
    )
    # The pre-training corpus (data README): the train parts only, MATH problems and GSM8K questions and
    # solutions; GSM-Plus seeds are GSM8K *test* questions, so none of them is here either.
    math_train = [{"text": r["problem"]} for r in read(files["kpc"]["train"])]
    gsm8k_train = [{"text": r[field]} for r in gsm8k["train"] for field in ("question", "answer")]
    write("pretrain", {"train": math_train + gsm8k_train})
    return files


def machine() -> str:
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"cuda {torch.cuda.is_available()}"
    )


def print_tables(results: dict) -> None:
    print(f"\nmachine: {results['machine']}; seed 0")
    for task, rows in results.items():
        if task == "machine":
            continue
        columns = ["ndcg@3", "map", "hr@1"] if task == "sqr" else ["accuracy", "macro_f1"]
        parts = [p for p in next(iter(rows.values())) if p.startswith(("dev", "test"))]
        for part in parts:
            print(f"\n### {task.upper()} {part}\n")
            print("| model | " + " | ".join(columns) + " | 95% CI | n | n train x epochs | train s | train ex/s |")
            print("|---|" + "---:|" * (len(columns) + 5))
            for row, result in rows.items():
                metrics = result[part]
                ci = metrics.get(f"{columns[0]}_ci95")
                size = f"{result['n_train']} x {result['epochs'] or '-'}"
                print(
                    f"| {row} | "
                    + " | ".join(f"{metrics[c]:.4f}" for c in columns)
                    + f" | {ci[0]:.4f}-{ci[1]:.4f} | {metrics['n']} | {size} | {result['train_seconds']} | "
                    f"{result['train_examples_per_s'] or '-'} |"
                )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results")
    parser.add_argument("--rows", help="default tfidf,comus,bert (--smoke: tfidf,comus)")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--epochs", default="", help=f"per-task epochs, e.g. kpc=3,qrc=8 (defaults: {EPOCHS})")
    parser.add_argument("--qam-questions", type=int, default=500, help="GSM8K train questions for QAM (default 500)")
    parser.add_argument("--batch-size", type=int, default=16, help=f"examples a step (SQR: {BATCH_SIZES['sqr']} lists)")
    parser.add_argument("--lr", type=float, default=3e-5, help="the text encoder's learning rate")
    parser.add_argument("--head-lr", type=float, default=1e-3, help="the fresh parts' learning rate")
    parser.add_argument(
        "--pretrained",
        default="shipped",
        help="the pre-trained encoder of the comus-pt row (default: the shipped model)",
    )
    parser.add_argument(
        "--dapt",
        help="the DAPT-BERT encoder of the dapt-bert row (`mathgraph pretrain --architecture bert --tasks mlm`)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="parser processes")
    parser.add_argument("--smoke", action="store_true", help="the smoke data, 2 steps a row: seconds (WORK/smoke)")
    args = parser.parse_args()
    args.rows = args.rows or ("tfidf,comus" if args.smoke else "tfidf,comus,bert")
    return args


if __name__ == "__main__":
    main()
