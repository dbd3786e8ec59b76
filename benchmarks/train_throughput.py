"""Training throughput of the KPC model: BERT-only against BERT+GAT and COMUS, on the same batches.

    python benchmarks/train_throughput.py [--limit 128] [--batch-size 16] [--repeats 3] [--threads 2]

The first ``--limit`` MATH train problems are parsed and collated once into KPC
batches (subject labels). One training step (forward, cross-entropy, backward,
AdamW step) of each model takes turns batch by batch, the order rotating with
each repetition so machine noise hits all models alike; a warm-up pass is not
timed. All three models start from the untrained default encoder and differ only
in the problem vector (``tasks.finetune``: ``bert`` = ``[CLS]``; ``bert+gat`` =
``[CLS] ; mean node`` with no memory; ``comus`` = the fused vector of the last
k = 2 memory layers). Prints examples/s per model and the time ratio to BERT-only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from mathgraph.encoder import MathEncoder
from tasks.data import KpcExample
from tasks.finetune import ENCODER_KINDS, TaskCollator, TaskConfig, TaskModel

MATH = Path(__file__).resolve().parents[2] / "shared" / "data" / "math" / "train.jsonl"


def main() -> None:
    args = _arguments()
    torch.set_num_threads(args.threads)
    with open(args.math, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][: args.limit]
    examples = [KpcExample(r["problem"], r["subject"]) for r in rows]
    labels = sorted({e.label for e in examples})
    models, optimizers, batches = {}, {}, None
    for kind in ENCODER_KINDS:
        encoder = MathEncoder.from_pretrained("default", device="cpu")
        config = TaskConfig("kpc", encoder=kind, labels=labels)
        torch.manual_seed(0)
        models[kind] = TaskModel(encoder, config).train()
        optimizers[kind] = torch.optim.AdamW(models[kind].parameters(), lr=3e-5)
        if batches is None:  # the same collated batches for every model
            graphs = dict(zip([e.text for e in examples], encoder.parse([e.text for e in examples])))
            collate = TaskCollator(encoder, config, graphs)
            batches = [collate(examples[i:i + args.batch_size]) for i in range(0, len(examples), args.batch_size)]

    def step(kind: str, batch) -> float:
        started = time.perf_counter()
        loss = models[kind](batch)["loss"]
        loss.backward()
        optimizers[kind].step()
        optimizers[kind].zero_grad()
        return time.perf_counter() - started

    for kind in ENCODER_KINDS:  # warm-up
        step(kind, batches[0])
    seconds = {kind: [] for kind in ENCODER_KINDS}
    for repeat in range(args.repeats):
        order = ENCODER_KINDS[repeat % 3:] + ENCODER_KINDS[: repeat % 3]
        for batch in batches:
            for kind in order:
                seconds[kind].append(step(kind, batch))

    examples_per_pass = len(examples)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"torch.set_num_threads({args.threads}), torch {torch.__version__}, fp32; first {len(examples)} MATH train "
          f"problems, batches of {args.batch_size}, {args.repeats} repetitions\n")
    print("| model | train examples/s | median step s | time ratio to BERT-only |")
    print("|---|---:|---:|---:|")
    base = sum(seconds["bert"])
    for kind in ENCODER_KINDS:
        total = sum(seconds[kind])
        print(f"| {kind} | {examples_per_pass * args.repeats / total:.2f} | {statistics.median(seconds[kind]):.2f} | "
              f"{total / base:.2f}x |")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--math", default=str(MATH))
    return parser.parse_args()


if __name__ == "__main__":
    main()
