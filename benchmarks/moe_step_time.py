"""Training-step time of the packaged MiniLM with JiuZhang 2.0 MoE layers against the dense model.

    python benchmarks/moe_step_time.py [--math ../shared/data/math/train.jsonl] [--batch-size 32]
                                       [--max-length 256] [--warmup 1] [--repeats 5] [--threads N] [--device cpu|cuda]
                                       [--smoke]

One fixed batch: the first ``--batch-size`` MATH train problems, tokenised
(padded to the longest, at most ``--max-length`` tokens), labelled by subject.
Three models start from the same MiniLM (``load_text_encoder("minilm")``) and
the same linear head on ``[CLS]``: dense, MoE (K=4, top-1) in the last 2
layers, MoE in all layers. A step is forward + cross-entropy (+ the MoE
auxiliary losses) + backward + AdamW step, in training mode. After warm-up
steps, the models take turns step by step, the order rotating each repetition
so machine noise hits all alike; the table gives the median step time and its
ratio to the dense model (JiuZhang 2.0, Table 8: 370 ms vs 330 ms, 1.12).
Nothing here asserts a speed. ``--smoke``: 4 problems of the smoke data (``benchmarks/smoke.py``),
32 tokens, one step per model (no warm-up): seconds.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import statistics
import time
from pathlib import Path

import torch
from torch import nn

from mathgraph.models.moe import add_moe_layers, moe_aux_loss, moe_inputs
from mathgraph.models.text_encoder import load_text_encoder

from smoke import SMOKE_MATH

REPO = Path(__file__).resolve().parents[1]
VARIANTS = (("dense", None), ("MoE last 2", "last-2"), ("MoE all", "all"))


class Classifier(nn.Module):
    """MiniLM (optionally with MoE layers) + a linear head on ``[CLS]``; ``forward -> (logits, aux loss)``."""

    def __init__(self, encoder: nn.Module, head: nn.Linear, moe_layers: str | None):
        super().__init__()
        self.encoder, self.head = encoder, head
        self.moe = add_moe_layers(encoder, moe_layers, num_experts=4, top_k=1) if moe_layers else []

    def forward(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        with moe_inputs(self.moe, token_mask=batch["attention_mask"]):
            hidden = self.encoder(**batch).last_hidden_state
        aux = moe_aux_loss(self.moe).to(hidden.device) if self.moe else hidden.new_zeros(())
        return self.head(hidden[:, 0]), aux


def main() -> None:
    args = _arguments()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    with open(args.math, encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(args.batch_size), f)]
    encoder, tokenizer = load_text_encoder("minilm")
    batch = tokenizer(
        [r["problem"] for r in rows], padding=True, truncation=True, max_length=args.max_length, return_tensors="pt"
    )
    batch = {k: v.to(device) for k, v in batch.items()}
    subjects = sorted({r["subject"] for r in rows})
    labels = torch.tensor([subjects.index(r["subject"]) for r in rows], device=device)
    torch.manual_seed(0)
    head = nn.Linear(encoder.config.hidden_size, len(subjects))

    models, optimizers = {}, {}
    for name, layers in VARIANTS:
        torch.manual_seed(0)  # same routers for every run of the script
        model = Classifier(copy.deepcopy(encoder), copy.deepcopy(head), layers).to(device).train()
        models[name], optimizers[name] = model, torch.optim.AdamW(model.parameters(), lr=1e-5)

    def step(name: str) -> float:
        model, optimizer = models[name], optimizers[name]
        sync(device)
        start = time.perf_counter()
        logits, aux = model(batch)
        loss = nn.functional.cross_entropy(logits, labels) + aux
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        sync(device)
        return time.perf_counter() - start

    names = [name for name, _ in VARIANTS]
    times = interleaved_step_times(step, names, args.warmup, args.repeats)

    real_tokens = int(batch["attention_mask"].sum())
    machine = platform.processor() or platform.machine()
    print(f"torch {torch.__version__}, {device}, {torch.get_num_threads()} threads, {machine}")
    print(
        f"batch: {tuple(batch['input_ids'].shape)} ({real_tokens} real tokens), fp32, "
        f"{args.warmup} warm-up + {args.repeats} timed steps per model, interleaved\n"
    )
    dense = statistics.median(times["dense"])
    print("| model | parameters | median step (ms) | min (ms) | max (ms) | ratio to dense |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in names:
        median = statistics.median(times[name])
        params = sum(p.numel() for p in models[name].parameters())
        print(
            f"| {name} | {params / 1e6:.1f} M | {median * 1e3:.0f} | {min(times[name]) * 1e3:.0f} | "
            f"{max(times[name]) * 1e3:.0f} | {median / dense:.3f} |"
        )
    print("\ntokens per expert in the last step (MoE all, layer by layer):")
    for i, moe in enumerate(models["MoE all"].moe):
        print(f"  layer {i}: {moe.last_routing.tokens_per_expert.tolist()}")


def interleaved_step_times(step, names: list[str], warmup: int, repeats: int) -> dict[str, list[float]]:
    """``step(name) -> seconds`` for every model ``name``: ``warmup`` untimed rounds, then ``repeats`` timed
    ones, the models taking turns step by step with the order rotating each round, so machine noise hits
    all alike."""
    for _ in range(warmup):
        for name in names:
            step(name)
    times = {name: [] for name in names}
    for rep in range(repeats):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            times[name].append(step(name))
    return times


def sync(device: torch.device) -> None:
    """Wait for the device's queued work (CUDA), so a wall-clock time covers it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--math", type=Path, default=REPO.parent / "shared" / "data" / "math" / "train.jsonl")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None, help="default: cuda when available")
    parser.add_argument("--smoke", action="store_true", help="4 problems of the smoke data, one step: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.math, args.batch_size, args.max_length, args.warmup, args.repeats = SMOKE_MATH, 4, 32, 0, 1
    return args


if __name__ == "__main__":
    main()
