"""Single-task models against one multi-task model: dense, MoE (with and without task prompts), CGC-LoRA,
ReasonFormer (with and without skill pre-training).

    python benchmarks/multitask_results.py --work results/ [--limit N] [--sqr-limit N] [--eval-limit N]
                                           [--epochs 2] [--lr 5e-5] [--lora-lr 5e-4] [--model DIR]
                                           [--variants single,dense,moe,moe+prompts,cgc-lora,reasonformer,...]
                                           [--smoke]

Uses the task files of ``benchmarks/results.py`` in ``WORK/data`` (run that first,
or this script builds them the same way), starts every model from the same
encoder (``--model``, default the untrained default; COMUS fused vectors) and
trains with the same budget: ``single`` is one model per task, the others one
model for the four tasks. CGC-LoRA trains at ``--lora-lr``: its B matrices
start at zero and LoRA is usually trained with a learning rate about ten times
that of full fine-tuning (Hu et al. 2021), so at ``--lr`` it would barely move
in a short run. Prints test metrics per task (dev metrics of the kept epoch in
brackets) with the number of trainable parameters, and writes
``WORK/multitask_results.json`` after every variant (a later run skips the
variants already there). ``--smoke``: the smoke task files (``benchmarks/results.py --smoke``'s),
4 training examples per task (1 SQR list), 2 dev and test ones, 1 epoch of batches of 2, from a
tiny untrained encoder, the variants single, moe+prompts and cgc-lora unless ``--variants`` says
otherwise, in ``WORK/smoke``: seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mathgraph.models.task_model import TaskConfig  # noqa: E402
from mathgraph.tasks.training.finetune import train_task  # noqa: E402
from mathgraph.tasks.training.multitask import train_multitask  # noqa: E402
from mathgraph.tasks.training.tfidf import train_tfidf_file  # noqa: E402
from mathgraph.tasks.training.trainer import TrainingArguments  # noqa: E402

from results import build_task_files, evaluate_with_interval  # noqa: E402
from smoke import smoke_work, tiny_encoder  # noqa: E402

TASKS = ("kpc", "qrc", "qam", "sqr")
VARIANTS = {
    "dense": {"adapter": "none"},
    "moe": {"adapter": "moe"},
    "moe+prompts": {"adapter": "moe", "task_prompts": True},
    "cgc-lora": {"adapter": "cgc-lora"},
    "dense+unified": {"adapter": "none", "label_space": "unified"},  # not in the default --variants
    # ReasonFormer (models.reasoning): 5 skills, depth 3, top-2, shared modules unless named private; with
    # and without skill pre-training (that many batches before the same adaptation budget). Checkpointing
    # changes no number; without it a batch of 16 SQR lists (208 problems) needs ~20 GB on a CPU.
    "reasonformer": {"adapter": "reasonformer", "reasoning_checkpointing": True},
    "reasonformer+skills": {"adapter": "reasonformer", "reasoning_checkpointing": True, "skill_pretraining_steps": 60},
    "reasonformer+skills240": {
        "adapter": "reasonformer",
        "reasoning_checkpointing": True,
        "skill_pretraining_steps": 240,
    },
    "reasonformer-private+skills240": {
        "adapter": "reasonformer",
        "reasoning_modules": "private",
        "reasoning_checkpointing": True,
        "skill_pretraining_steps": 240,
    },
}
DEFAULT_VARIANTS = "single,dense,moe,moe+prompts,cgc-lora"
SMOKE_VARIANTS = "single,moe+prompts,cgc-lora"
MAIN_METRIC = {"kpc": "accuracy", "qrc": "accuracy", "qam": "accuracy", "sqr": "ndcg@3"}


def main() -> None:
    args = _arguments()
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in ("single", "tfidf") and v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown}: choose from single, tfidf, {', '.join(VARIANTS)}")
    work = Path(args.work)
    if args.smoke:
        work = smoke_work(work)
        args.model, args.limit, args.sqr_limit, args.eval_limit = tiny_encoder(work), 4, 1, 2
        args.epochs, args.batch_size = 1, 2
    files = _capped(build_task_files(work / "data", args.seed, smoke=args.smoke), work / "data-capped", args)
    results_path = work / "multitask_results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    fields = {"text_field": "problem", "label_field": "subject"}
    budget = {"epochs": args.epochs, "batch_size": args.batch_size, "seed": args.seed}  # TrainingArguments fields
    for variant in variants:
        if variant in results:
            continue
        started = time.perf_counter()
        output = work / "multitask" / variant
        cgc_lora = VARIANTS.get(variant, {}).get("adapter") == "cgc-lora"
        lr = args.lora_lr if cgc_lora else args.lr
        if variant == "tfidf":  # the bag-of-words baseline on the same capped training files
            for task in TASKS:
                train_tfidf_file(TaskConfig(task, **fields), files[task]["train"], str(output / task))
            parameters, dev, lr = 0, {}, 0.0
            directories = {task: output / task for task in TASKS}
        elif variant == "single":
            parameters, dev = 0, {}
            for task in TASKS:
                trained = train_task(
                    TaskConfig(task, **fields),
                    files[task]["train"],
                    TrainingArguments(str(output / task), learning_rate=lr, **budget),
                    dev_path=files[task]["dev"],
                    model=args.model,
                )
                dev[task] = _kept_epoch(trained["history"], "dev_" + MAIN_METRIC[task], "dev_")
                parameters += _trainable(output / task)
            directories = {task: output / task for task in TASKS}
        else:
            trained = train_multitask(
                [(TaskConfig(task, **fields), files[task]["train"], files[task]["dev"]) for task in TASKS],
                TrainingArguments(str(output), learning_rate=lr, **budget),
                model=args.model,
                moe_experts=args.moe_experts,
                **VARIANTS[variant],
            )
            dev = {task: _kept_epoch(trained["history"], "dev_mean", f"dev_{task}_") for task in TASKS}
            parameters = _trainable(output)
            directories = {task: output for task in TASKS}
        results[variant] = {
            "trainable_parameters": parameters,
            "learning_rate": lr,
            "dev": dev,
            "train_seconds": round(time.perf_counter() - started, 1),
            "test": {task: evaluate_with_interval(task, directories[task], files[task]["test"]) for task in TASKS},
        }
        print(variant, json.dumps(results[variant]["test"]), flush=True)
        results_path.write_text(json.dumps(results, indent=1))
    print_table(results, files, args)


def _capped(files: dict[str, dict[str, str]], directory: Path, args) -> dict[str, dict[str, str]]:
    """Seeded samples of the task files in ``directory`` (results.py's own stay whole): ``--limit`` training
    examples (``--sqr-limit`` SQR lists: a list costs ten times a KPC problem), ``--eval-limit`` dev/test ones."""
    directory.mkdir(parents=True, exist_ok=True)
    capped: dict[str, dict[str, str]] = {}
    for task, parts in files.items():
        for part, path in parts.items():
            limit = (
                (args.sqr_limit or args.limit)
                if task == "sqr" and part == "train"
                else args.limit
                if part == "train"
                else args.eval_limit
            )
            rows = Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
            if limit and limit < len(rows):
                rows = random.Random(args.seed).sample(rows, limit)
            target = directory / Path(path).name
            target.write_text("".join(rows), encoding="utf-8")
            capped.setdefault(task, {})[part] = str(target)
    return capped


def _kept_epoch(history: list[dict], metric: str, prefix: str) -> dict:
    """Dev metrics (``prefix`` removed) of the epoch training kept: the best by ``metric``."""
    best = max(history, key=lambda record: record[metric])
    return {key[len(prefix) :]: value for key, value in best.items() if key.startswith(prefix)}


def _trainable(directory: Path) -> int:
    """Trainable parameters of the model saved in ``directory`` (frozen CGC-LoRA bases not counted)."""
    from mathgraph.registry import load

    model = load(directory, device="cpu")
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def print_table(results: dict, files: dict, args: argparse.Namespace) -> None:
    sizes = {task: sum(1 for _ in open(files[task]["train"], encoding="utf-8")) for task in TASKS}
    print(
        f"\nmachine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"cuda {torch.cuda.is_available()}; start model {args.model}; {args.epochs} epochs, batch {args.batch_size}; "
        f"training examples {sizes}; eval limit {args.eval_limit or 'none'}; test split, dev of the kept epoch "
        f"in brackets\n"
    )
    print(
        "| model | "
        + " | ".join(f"{t.upper()} {MAIN_METRIC[t]}" for t in TASKS)
        + " | trainable params | lr | train s |"
    )
    print("|---|" + "---:|" * (len(TASKS) + 3))
    for variant, result in results.items():
        cells = [_cell(result["test"][t], result["dev"].get(t, {}), MAIN_METRIC[t]) for t in TASKS]
        print(
            f"| {variant} | " + " | ".join(cells) + f" | {result['trainable_parameters']:,} | "
            f"{result['learning_rate']:g} | {result['train_seconds']} |"
        )


def _cell(test: dict, dev: dict, metric: str) -> str:
    """``test [95% interval] (dev)``; runs written before the intervals were recorded have none."""
    interval = test.get(f"{metric}_ci95")
    text = f"{test[metric]:.4f}" + (f" [{interval[0]:.3f}-{interval[1]:.3f}]" if interval else "")
    return text + (f" ({dev[metric]:.4f})" if metric in dev else "")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results")
    parser.add_argument(
        "--variants",
        help=f"comma-separated (default: {DEFAULT_VARIANTS}); also tfidf (the baseline on the same files), "
        "dense+unified (JiuZhang 2.0's unified label space), and the reasonformer variants",
    )
    parser.add_argument("--model", default="shipped", help="encoder every variant starts from")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--lora-lr", type=float, default=5e-4, help="learning rate of the CGC-LoRA variant")
    parser.add_argument("--moe-experts", type=int, default=4)
    parser.add_argument("--limit", type=int, help="at most this many training examples per task")
    parser.add_argument("--sqr-limit", type=int, help="at most this many SQR training lists (default --limit)")
    parser.add_argument("--eval-limit", type=int, help="at most this many dev and test examples per task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a few examples, a tiny encoder: seconds (WORK/smoke)")
    args = parser.parse_args()
    args.variants = args.variants or (SMOKE_VARIANTS if args.smoke else DEFAULT_VARIANTS)
    return args


if __name__ == "__main__":
    main()
