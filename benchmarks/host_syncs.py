"""Host-device syncs and CPU time of one training step, per architecture (a COMUS step makes none).

    python benchmarks/host_syncs.py [--batch-size 16] [--repeats 5] [--smoke]

Each model is built from the untrained architecture (the packaged MiniLM with a
fresh graph side; ``--smoke``: a tiny one) and takes one batch of GSM8K
questions (KPC-style labels: the question's number of sentences, mod 2; ``--smoke``: the smoke
data's, ``benchmarks/smoke.py``). A step is
forward, loss, backward and an AdamW step, in training mode. The table gives the
syncs of the forward and backward (``tasks.training.host_syncs``: ``.item()``, boolean-mask indexing,
``nonzero``... which on a GPU stop the host until the device catches up) by
call, and the median CPU step time of ``--repeats`` steps after one warm-up.
The trainer's own loop is counted apart: syncs per step of ``fit`` on the COMUS
model, over 8 steps with ``log_every`` 4. Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mathgraph.tasks.training.host_syncs import count_host_syncs  # noqa: E402

from results import DATA, machine  # noqa: E402
from smoke import SMOKE_DATA, tiny_model_options  # noqa: E402

SMOKE_MODELS = Path(tempfile.gettempdir()) / "mathgraph-host-syncs-smoke"  # the tiny BERT, made once


def main() -> None:
    args = _arguments()
    torch.manual_seed(0)
    texts = _questions(SMOKE_DATA if args.smoke else DATA, args.batch_size)
    labels = [str(t.count(".") % 2) for t in texts]
    rows = {}
    for name, build in (
        ("comus", _task_model("comus")),
        ("bert", _task_model("bert")),
        ("multitask moe", _multitask("moe")),
        ("multitask reasonformer", _multitask("reasonformer")),
    ):
        model, batch = build(texts, labels, args.smoke)
        rows[name] = _measure(model, batch, args.repeats)
        print(name, json.dumps(rows[name]), flush=True)
    rows["trainer loop (comus)"] = _trainer_loop(texts, labels, args.smoke)
    print("\n| model | syncs per step | by call | CPU step (ms) |\n|---|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['syncs']} | {row['calls']} | {row.get('step_ms', '')} |")
    print(f"\n{machine()}; batch of {len(texts)} GSM8K questions; {'tiny models' if args.smoke else 'MiniLM size'}")


def _questions(data: Path, count: int) -> list[str]:
    with open(data / "gsm8k" / "train.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["question"] for _, line in zip(range(count), f)]


def _examples(texts: list[str], labels: list[str]) -> list:
    from mathgraph.models.examples import KpcExample

    return [KpcExample(t, y) for t, y in zip(texts, labels)]


def _encoder(smoke: bool):
    from mathgraph.tasks.training.finetune import load_start_encoder

    return load_start_encoder("untrained", **(tiny_model_options(SMOKE_MODELS) if smoke else {}))


def _task_model(architecture: str):
    def build(texts, labels, smoke):
        from mathgraph.models.prediction import feature_store
        from mathgraph.models.task_batches import TaskCollator
        from mathgraph.models.task_model import TaskConfig, TaskModel

        config = TaskConfig("kpc", architecture=architecture, labels=sorted(set(labels)))
        model = TaskModel(_encoder(smoke), config)
        collate = TaskCollator(config.task_type, feature_store(model, texts), config.labels)
        return model, collate(_examples(texts, labels))

    return build


def _multitask(adapter: str):
    def build(texts, labels, smoke):
        from mathgraph.models.multitask import MultiTaskBatch, MultiTaskConfig, MultiTaskModel
        from mathgraph.models.prediction import feature_store
        from mathgraph.models.task_batches import TaskCollator

        options = {"moe_layers": "last-2", "moe_experts": 4} if adapter == "moe" else {}
        config = MultiTaskConfig([{"task": "kpc", "labels": sorted(set(labels))}], adapter=adapter, **options)
        model = MultiTaskModel(_encoder(smoke), config)
        task = config.task_configs[0]
        collate = TaskCollator(task.task_type, feature_store(model.for_task("kpc"), texts), task.labels)
        return model, MultiTaskBatch(0, collate(_examples(texts, labels)))

    return build


def _measure(model, batch, repeats: int) -> dict:
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)

    def step(syncs=None):
        with syncs or count_host_syncs():  # the optimizer is left out: its step counters live on the host
            model(batch)["loss"].backward()
        optimizer.step()
        optimizer.zero_grad()

    syncs = count_host_syncs()
    step(syncs)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return {"syncs": syncs.total, "calls": dict(syncs.calls), "step_ms": round(1000 * statistics.median(times), 1)}


def _trainer_loop(texts, labels, smoke: bool) -> dict:
    """Syncs per step of ``fit`` itself, less those of the model's forward (counted above)."""
    from mathgraph.models.prediction import feature_store
    from mathgraph.models.task_batches import TaskCollator
    from mathgraph.models.task_model import TaskConfig, TaskModel
    from mathgraph.tasks.training.bucketing import LengthBucketSampler
    from mathgraph.tasks.training.trainer import TrainingArguments, TrainingData, fit

    config = TaskConfig("kpc", labels=sorted(set(labels)))
    model = TaskModel(_encoder(smoke), config)
    examples = _examples(texts, labels) * 4
    collate = TaskCollator(config.task_type, feature_store(model, texts), config.labels)
    with count_host_syncs() as forward_only:
        model.train()(collate(examples[:4]))
    steps = len(examples) // 4
    with tempfile.TemporaryDirectory() as output, count_host_syncs() as syncs:
        fit(
            model,
            TrainingData(examples, LengthBucketSampler([1] * len(examples), 4, seed=0), collate),
            TrainingArguments(output_dir=output, epochs=1, batch_size=4, log_every=4, cpu=True),
        )
    # fit also collates (host tensors, no device) and saves checkpoints at the epoch's end: count per step
    loop = {name: count - forward_only.calls.get(name, 0) * steps for name, count in syncs.calls.items()}
    return {
        "syncs": round(sum(loop.values()) / steps, 2),
        "calls": {k: v for k, v in loop.items() if v},
        "note": f"{steps} steps, log_every 4, with collation and the end-of-epoch checkpoint",
    }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="tiny models, 4 questions, 1 repeat: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.batch_size, args.repeats = 4, 1
    return args


if __name__ == "__main__":
    main()
