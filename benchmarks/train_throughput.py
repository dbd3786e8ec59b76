"""Training throughput of the KPC model: BERT-only against BERT+GAT and COMUS, on the same batches.

    python benchmarks/train_throughput.py [--limit 128] [--batch-size 16] [--repeats 3] [--threads N]
                                          [--file-order] [--today-comus EX_PER_S] [--smoke]

The first ``--limit`` MATH train problems are parsed (through the graph cache)
and collated once into KPC batches (subject labels), length-bucketed as
training forms them (``LengthBucketSampler``, seed 0; ``--file-order``: batches
in file order, as the benchmark before the fast path formed them). One training
step (forward, cross-entropy, backward, the trainer's AdamW step) of each model takes turns
batch by batch, the order rotating with each repetition so machine noise hits
all models alike; a warm-up pass over the first batch is not timed. Rows:

- ``bert``: the text encoder's ``[CLS]`` alone (BERT-only);
- ``bert+gat``: ``[CLS] ; mean node`` with no memory;
- ``comus``: the fused vector of the last k = 2 memory layers, GAT as wide as the text encoder (6 x 64 = 384);
- ``comus-768``: the same with COMUS's 12 x 64 = 768-wide GAT (``--gat-heads 12``);
- ``comus-freeze4``: ``comus`` with ``--freeze-text-layers 4``; its untimed warm-up is a
  whole pass, which fills the prefix cache (as the first epoch of a run does), and that
  first pass is reported on its own.

All start from the untrained default encoder. Prints examples/s per model and the
time ratio to BERT-only (total time; and a pass of each batch at its median time over the
repetitions, which a burst of load from another process on a shared machine moves less);
the last line is
``ratio comus/bert-only: X.XX`` (total time). ``--smoke``: the first 16 problems of the smoke data
(``benchmarks/smoke.py``), batches of 8, one repetition, tiny models (a 6-layer, 32-wide BERT and
a small graph side, in a temporary directory): seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import torch

from mathgraph.models.examples import KpcExample
from mathgraph.models.features import FeatureStore
from mathgraph.models.task_batches import TaskCollator, example_lengths
from mathgraph.models.task_model import TaskConfig, TaskModel
from mathgraph.tasks.task_types import get_task
from mathgraph.tasks.training.bucketing import LengthBucketSampler
from mathgraph.tasks.training.finetune import load_start_encoder
from mathgraph.tasks.training.trainer import TrainingArguments, build_optimizer, configure_threads

from smoke import SMOKE_MATH, tiny_model_options

MATH = Path(__file__).resolve().parents[2] / "shared" / "data" / "math" / "train.jsonl"
# row -> (encoder kind, new-model options, frozen text layers)
ROWS = {
    "bert": ("bert", {}, 0),
    "bert+gat": ("bert+gat", {}, 0),
    "comus": ("comus", {}, 0),
    "comus-768": ("comus", {"gat_heads": 12}, 0),
    "comus-freeze4": ("comus", {}, 4),
}


def main() -> None:
    args = _arguments()
    threads = configure_threads(args.threads)
    with open(args.math, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][: args.limit]
    examples = [KpcExample(r["problem"], r["subject"]) for r in rows]
    labels = sorted({e.label for e in examples})
    task = get_task("kpc")
    models, optimizers, batches = {}, {}, None
    for name, (kind, options, frozen) in ROWS.items():
        encoder = load_start_encoder("untrained", **{**args.new_model, **options})
        torch.manual_seed(0)
        models[name] = TaskModel(encoder, TaskConfig("kpc", architecture=kind, labels=labels))
        if frozen:
            models[name].freeze_text_layers(frozen)
        models[name].train()
        optimizers[name] = build_optimizer(models[name], TrainingArguments(learning_rate=3e-5))
        if batches is None:  # the same collated batches for every model (graphs built for the graph rows)
            store = FeatureStore(encoder.collator, [e.text for e in examples], parser=encoder.parser)
            collate = TaskCollator(task, store, labels)
            if args.file_order:
                order = [
                    list(range(i, min(i + args.batch_size, len(examples))))
                    for i in range(0, len(examples), args.batch_size)
                ]
            else:
                order = list(LengthBucketSampler(example_lengths(task, examples, store), args.batch_size, seed=0))
            batches = [collate([examples[i] for i in rows]) for rows in order]

    def step(name: str, batch) -> float:
        started = time.perf_counter()
        loss = models[name](batch)["loss"]
        loss.backward()
        optimizers[name].step()
        optimizers[name].zero_grad()
        return time.perf_counter() - started

    first_pass = {}
    for name, (_, _, frozen) in ROWS.items():  # warm-up; the frozen row's whole first pass fills its cache
        warm = batches if frozen else batches[:1]
        first_pass[name] = sum(step(name, batch) for batch in warm)
    names = list(ROWS)
    seconds = {name: [] for name in names}
    for repeat in range(args.repeats):
        order = names[repeat % len(names) :] + names[: repeat % len(names)]
        for batch in batches:
            for name in order:
                seconds[name].append(step(name, batch))

    tokens = sum(int(b.problems.attention_mask.sum()) for b in batches)
    padded = sum(b.problems.input_ids.numel() for b in batches)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"torch.set_num_threads({threads}), torch {torch.__version__}, fp32; first {len(examples)} MATH train "
        f"problems, {len(batches)} {'file-order' if args.file_order else 'length-bucketed'} batches of up to "
        f"{args.batch_size} ({100 * (1 - tokens / padded):.0f} % padding), {args.repeats} repetitions\n"
    )
    print("| model | train examples/s | median step s | time ratio to BERT-only | ratio of per-batch medians |")
    print("|---|---:|---:|---:|---:|")
    base = sum(seconds["bert"])
    rates = {}
    for name in names:
        total = sum(seconds[name])
        rates[name] = len(examples) * args.repeats / total
        median_ratio = _median_pass(seconds[name], len(batches)) / _median_pass(seconds["bert"], len(batches))
        print(
            f"| {name} | {rates[name]:.2f} | {statistics.median(seconds[name]):.2f} | {total / base:.2f}x | "
            f"{median_ratio:.2f}x |"
        )
    print(
        f"\ncomus-freeze4 first pass (computes and caches the frozen prefix): "
        f"{len(examples) / first_pass['comus-freeze4']:.2f} examples/s"
    )
    if args.today_comus:
        print(
            f"default COMUS vs today's {args.today_comus:.2f} examples/s: {rates['comus'] / args.today_comus:.2f}x; "
            f"with --freeze-text-layers 4: {rates['comus-freeze4'] / args.today_comus:.2f}x"
        )
    print(f"ratio comus/bert-only: {sum(seconds['comus']) / base:.2f}")


def _median_pass(step_seconds: list[float], num_batches: int) -> float:
    """One pass over the batches, each batch at its median time over the repetitions."""
    by_batch = [step_seconds[i::num_batches] for i in range(num_batches)]
    return sum(statistics.median(times) for times in by_batch)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, help="torch threads (default: the cores this process may use)")
    parser.add_argument("--math", default=str(MATH))
    parser.add_argument("--file-order", action="store_true", help="batches in file order instead of length-bucketed")
    parser.add_argument(
        "--today-comus",
        type=float,
        metavar="EX_PER_S",
        help="default COMUS examples/s of the benchmark before the fast path, to print the speed-up",
    )
    parser.add_argument("--smoke", action="store_true", help="16 problems of the smoke data, one repetition: seconds")
    args = parser.parse_args()
    args.new_model = {}  # options of every row's new model
    if args.smoke:
        args.math, args.limit, args.batch_size, args.repeats = SMOKE_MATH, 16, 8, 1
        args.tiny = tempfile.TemporaryDirectory(prefix="train-throughput-smoke-")  # removed at exit
        args.new_model = tiny_model_options(args.tiny.name)
    return args


if __name__ == "__main__":
    main()
