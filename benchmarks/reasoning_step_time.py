"""Training-step time and parameters of ReasonFormer multi-task models against the dense one.

    python benchmarks/reasoning_step_time.py [--math ../shared/data/math/train.jsonl] [--batch-size 16]
                                             [--warmup 1] [--repeats 5] [--threads N] [--device cpu|cuda]
                                             [--model DIR] [--work DIR] [--smoke]

One fixed KPC batch: the first ``--batch-size`` MATH train problems with their
subjects. Every model is a ``MultiTaskModel`` (KPC head) on the shipped COMUS
encoder (or ``--model``): dense (``--adapter none``), and ReasonFormer with 5 skills of one layer
(the MiniLM's top layer), depth 3: shared modules top-2 (the default), shared
modules with all skills active, private modules top-2, and the default with
``reasoning_checkpointing`` (the modules run again in the backward pass). A step is forward, loss,
backward and AdamW, in training mode. After warm-up the models take turns step
by step, the order rotating each repetition, so machine noise hits all alike.
Prints total and trainable parameters and the median step time with its ratio
to dense. Nothing here asserts a speed. ``--smoke``: 2 problems of the smoke data
(``benchmarks/smoke.py``), a tiny untrained encoder, one step per model (no warm-up), in
``WORK/smoke``: seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mathgraph.models.encoder import MathEncoder
from mathgraph.models.features import FeatureStore
from mathgraph.models.multitask import MultiTaskBatch, MultiTaskConfig, MultiTaskModel
from mathgraph.models.task_batches import TaskCollator
from mathgraph.models.task_model import TaskConfig
from mathgraph.tasks.task_types import load_examples  # noqa: E402
from mathgraph.tasks.training.trainer import TrainingArguments, build_optimizer

from moe_step_time import interleaved_step_times, sync  # noqa: E402
from smoke import SMOKE_MATH, smoke_work, tiny_encoder  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
VARIANTS = {
    "dense": {"adapter": "none"},
    "ReasonFormer shared, top-2": {"adapter": "reasonformer"},
    "ReasonFormer shared, all skills": {"adapter": "reasonformer", "reasoning_top_k": 0},
    "ReasonFormer private, top-2": {"adapter": "reasonformer", "reasoning_modules": "private"},
    "ReasonFormer shared, top-2, checkpointing": {"adapter": "reasonformer", "reasoning_checkpointing": True},
}


def main() -> None:
    args = _arguments()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    with open(args.math, encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(args.batch_size), f)]
    task = TaskConfig("kpc", text_field="problem", label_field="subject")
    path = Path(args.work) / "kpc_batch.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    examples = load_examples(task, str(path))
    task.labels = task.task_type.label_names(examples)
    models, optimizers, batch = {}, {}, None
    for name, options in VARIANTS.items():
        encoder = MathEncoder.from_pretrained(args.model, device="cpu")
        if batch is None:
            store = FeatureStore.for_run(
                encoder, [t for e in examples for t in task.task_type.example_texts(e)], TrainingArguments()
            )
            batch = MultiTaskBatch(0, TaskCollator(task.task_type, store, task.labels)(examples)).to(device)
        torch.manual_seed(0)
        model = MultiTaskModel(encoder, MultiTaskConfig([{"task": "kpc", "labels": task.labels}], **options))
        models[name] = model.to(device).train()
        optimizers[name] = build_optimizer(model, TrainingArguments(learning_rate=5e-5))

    def step(name: str) -> float:
        model, optimizer = models[name], optimizers[name]
        sync(device)
        start = time.perf_counter()
        loss = model(batch)["loss"]
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        sync(device)
        return time.perf_counter() - start

    names = list(VARIANTS)
    times = interleaved_step_times(step, names, args.warmup, args.repeats)

    machine = platform.processor() or platform.machine()
    print(f"torch {torch.__version__}, {device}, {torch.get_num_threads()} threads, {machine}")
    print(
        f"batch: {len(batch)} MATH train problems, {tuple(batch.batch.problems.input_ids.shape)} tokens, fp32, "
        f"{args.warmup} warm-up + {args.repeats} timed steps per model, interleaved\n"
    )
    dense = statistics.median(times["dense"])
    print("| model | parameters | trainable | median step (ms) | min (ms) | max (ms) | ratio to dense |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        model, median = models[name], statistics.median(times[name])
        total = sum(p.numel() for p in model.parameters())
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        print(
            f"| {name} | {total / 1e6:.1f} M | {trainable / 1e6:.1f} M | {median * 1e3:.0f} | "
            f"{min(times[name]) * 1e3:.0f} | {max(times[name]) * 1e3:.0f} | {median / dense:.3f} |"
        )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--math", default=str(REPO.parent / "shared" / "data" / "math" / "train.jsonl"))
    parser.add_argument("--work", default="results/reasoning_step_time", help="where the batch's task file goes")
    parser.add_argument("--model", default="shipped", help="the encoder (default: the shipped model)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--device", choices=("cpu", "cuda"))
    parser.add_argument("--smoke", action="store_true", help="2 problems of the smoke data, one step: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.math, args.work, args.batch_size, args.warmup, args.repeats = SMOKE_MATH, smoke_work(args.work), 2, 0, 1
        args.model = tiny_encoder(args.work)
    return args


if __name__ == "__main__":
    main()
