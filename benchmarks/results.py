"""The results table: TF-IDF, BERT, DAPT-BERT, BERT+GAT and COMUS on KPC, QRC, QAM and SQR.

    python benchmarks/results.py --work results/ [--pretrain-steps 2000] [--epochs 3] [--limit N] [--eval-limit N]
                                 [--rows tfidf,bert,dapt-bert,bert+gat,comus] [--tasks kpc,qrc,qam,sqr]

1. Splits first, then builds each part's task file, so no dev/test text ever
   reaches training (not even as a distractor): MATH train stratified by
   subject (KPC); GSM-Plus split by seed problem, then QRC pairs and SQR lists
   per part; GSM8K split by question, then QAM pairs per part. 80/10/10, seed 0.
2. Pre-trains DAPT-BERT (MLM, text only) and COMUS (MLM + DTC + TGCL) on the
   training parts only: MATH problems, GSM8K questions and solutions.
3. Fine-tunes every row on every task (best epoch on dev) and evaluates on test.

Prints markdown tables (and writes ``results.json``) with the data split and
machine. On a CPU the full run takes many hours; ``--limit`` caps the
training examples per task and ``--eval-limit`` the dev and test examples per
task (a seeded sample of each, the same for every row).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from pathlib import Path

import torch

from tasks.baselines import train_tfidf
from tasks.data import build_qam_pairs, build_qrc_pairs, build_sqr_lists, group_seeds, split_by_group, split_rows
from tasks.evaluation import evaluate_directory
from tasks.finetune import TaskConfig, train_task
from tasks.pretrain import run_pretraining
from tasks.trainer import TrainingArguments

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
ROWS = ("tfidf", "bert", "dapt-bert", "bert+gat", "comus")
TASKS = ("kpc", "qrc", "qam", "sqr")
# row -> (encoder kind for fine-tuning, pre-trained model to start from)
ROW_MODELS = {"bert": ("bert", "default"), "dapt-bert": ("bert", "dapt-bert"), "bert+gat": ("bert+gat", "default"),
              "comus": ("comus", "comus-pt")}


def main() -> None:
    args = _arguments()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    files, corpus = build_task_files(work / "data", args.seed, args.limit, args.eval_limit)
    rows, tasks = args.rows.split(","), args.tasks.split(",")

    # Rows already measured (results.json of an earlier, interrupted run in the same --work) are kept, not redone.
    results_path = work / "results.json"
    results: dict = json.loads(results_path.read_text()) if results_path.exists() else {"pretraining": {}}
    for name, tasks_flag, encoder in (("dapt-bert", ["mlm"], "bert"), ("comus-pt", ["mlm", "dtc", "tgcl"], "comus")):
        needed = "dapt-bert" in rows if name == "dapt-bert" else "comus" in rows
        if needed and not (work / name / "config.json").exists():
            started = time.perf_counter()
            # Pre-training keeps its own learning rate, 5e-5 (as `mathgraph pretrain`); --lr is fine-tuning's.
            training = TrainingArguments(output_dir=str(work / name), max_steps=args.pretrain_steps,
                                         batch_size=args.batch_size, learning_rate=5e-5, seed=args.seed,
                                         parse_workers=args.workers)
            run_pretraining(corpus, training, tasks=tasks_flag, encoder=encoder)
            seconds = time.perf_counter() - started
            results["pretraining"][name] = {"steps": args.pretrain_steps, "seconds": round(seconds, 1)}
            print(f"pre-trained {name}: {args.pretrain_steps} steps in {seconds:.0f} s", flush=True)
            results_path.write_text(json.dumps(results, indent=1))

    for task in tasks:
        split = files[task]
        fields = {"text_field": "problem", "label_field": "subject"}
        for row in rows:
            if row in results.get(task, {}):
                continue
            output = work / "models" / f"{task}-{row}"
            started = time.perf_counter()
            if row == "tfidf":
                train_rows = [json.loads(line) for line in open(split["train"], encoding="utf-8")]
                train_tfidf(task, train_rows, **fields).save(output)
                dev, rate = evaluate_directory(task, str(output), split["dev"], **fields), None
            else:
                encoder, start = ROW_MODELS[row]
                model = start if start == "default" else str(work / start)
                training = TrainingArguments(output_dir=str(output), epochs=args.epochs, batch_size=args.batch_size,
                                             learning_rate=args.lr, seed=args.seed, parse_workers=args.workers)
                trained = train_task(TaskConfig(task, encoder=encoder, **fields), split["train"], training,
                                     dev_path=split["dev"], model=model)
                # The kept model is the best epoch on dev: its dev metrics are already in the history.
                history = trained["history"]
                best = max(history, key=lambda record: record[f"dev_{trained['metric']}"])
                dev = {key[4:]: value for key, value in best.items() if key.startswith("dev_")}
                rate = round(sum(record["train_examples_per_s"] for record in history) / len(history), 2)
            seconds = time.perf_counter() - started
            results.setdefault(task, {})[row] = {
                "dev": dev,
                "test": evaluate_directory(task, str(output), split["test"], **fields),
                "train_seconds": round(seconds, 1),
                "train_examples_per_s": rate,
                "n_train": sum(1 for _ in open(split["train"], encoding="utf-8")),
                "epochs": None if row == "tfidf" else args.epochs,
            }
            print(f"{task} {row}: test {results[task][row]['test']}", flush=True)
            results_path.write_text(json.dumps(results, indent=1))
    print_tables(results, args)


def build_task_files(directory: Path, seed: int, limit: int | None,
                     eval_limit: int | None = None) -> tuple[dict, list[str]]:
    """Split the shared data, build each part's task file; returns their paths and the pre-training corpus."""
    directory.mkdir(parents=True, exist_ok=True)
    read = lambda path: [json.loads(line) for line in open(path, encoding="utf-8")]  # noqa: E731
    files: dict[str, dict[str, str]] = {}

    def write(task: str, parts: dict[str, list[dict]]) -> None:
        caps = {"train": limit, "dev": eval_limit, "test": eval_limit}
        for name, cap in caps.items():
            if cap and cap < len(parts[name]):
                parts[name] = random.Random(seed).sample(parts[name], cap)
        files[task] = {}
        for name, part in parts.items():
            path = directory / f"{task}.{name}.jsonl"
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part), encoding="utf-8")
            files[task][name] = str(path)

    math_parts = split_rows(read(DATA / "math" / "train.jsonl"), seed=seed, stratify_field="subject")
    write("kpc", math_parts)
    variants = split_by_group(read(DATA / "gsmplus" / "variants.jsonl"), "seed_question", seed=seed)
    write("qrc", {name: build_qrc_pairs(group_seeds(part), seed=seed) for name, part in variants.items()})
    write("sqr", {name: build_sqr_lists(group_seeds(part), seed=seed) for name, part in variants.items()})
    gsm8k = split_by_group(read(DATA / "gsm8k" / "train.jsonl"), "question", seed=seed)
    write("qam", {name: build_qam_pairs(part, seed=seed) for name, part in gsm8k.items()})
    corpus = [r["problem"] for r in math_parts["train"]]
    corpus += [text for r in gsm8k["train"] for text in (r["question"], r["answer"])]
    return files, corpus


def print_tables(results: dict, args: argparse.Namespace) -> None:
    print(f"\nmachine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"cuda {torch.cuda.is_available()}; seed {args.seed}; "
          f"eval limit {args.eval_limit or 'none'} (training sizes and epochs per row in the tables)")
    for name, run in results["pretraining"].items():
        print(f"pre-training {name}: {run['steps']} steps of {args.batch_size} texts in {run['seconds']} s")
    for task, rows in results.items():
        if task == "pretraining":
            continue
        ranking = task == "sqr"
        columns = ["hr@3", "ndcg@3", "hr@1", "hr@5"] if ranking else ["accuracy", "macro_f1"]
        print(f"\n### {task.upper()} (test split; dev in brackets)\n")
        print("| model | " + " | ".join(columns) + " | n test | n train x epochs | train s | train examples/s |")
        print("|---|" + "---:|" * (len(columns) + 4))
        for row, result in rows.items():
            cells = [f"{result['test'][c]:.4f} ({result['dev'][c]:.4f})" for c in columns]
            rate = result["train_examples_per_s"]
            size = f"{result['n_train']} x {result['epochs'] or '-'}"
            print(f"| {row} | " + " | ".join(cells) + f" | {result['test']['n']} | {size} | {result['train_seconds']} | "
                  f"{'-' if rate is None else rate} |")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results")
    parser.add_argument("--rows", default=",".join(ROWS))
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--pretrain-steps", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--limit", type=int, help="at most this many training examples per task (quick checks)")
    parser.add_argument("--eval-limit", type=int, help="at most this many dev and test examples per task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="parser processes")
    return parser.parse_args()


if __name__ == "__main__":
    main()
