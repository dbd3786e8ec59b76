"""One training loop for pre-training and every task, on Hugging Face Accelerate.

Accelerate places the model and batches on the device, runs bf16/fp16
autocast on GPUs (``mixed_precision``), accumulates gradients, and runs the
same script on several processes or GPUs under ``accelerate launch`` (gloo on
CPUs). The loop adds what every run here needs: a seeded start, a progress
bar with the loss and throughput, evaluation after every epoch with the best
checkpoint kept, checkpoints written atomically (to a temporary directory,
then renamed), ``resume`` from the last checkpoint, and a clear stop on a
non-finite loss.

The model is any ``nn.Module`` whose ``forward(batch)`` returns a dict with a
scalar ``"loss"``. A checkpoint holds the whole training module's weights
(``training_weights.safetensors``, encoder and heads), the optimizer and
scheduler state (``optimizer.pt``, loaded with ``weights_only=True``: tensors
and numbers only, no arbitrary objects), ``trainer_state.json``, and whatever
the caller's ``save`` writes for users (e.g. ``save_pretrained``).
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

LAST_CHECKPOINT = "checkpoint-last"
BEST_CHECKPOINT = "checkpoint-best"
STATE_NAME = "trainer_state.json"
WEIGHTS_NAME = "training_weights.safetensors"


class NonFiniteLossError(RuntimeError):
    """The loss became NaN or infinite; training stops instead of writing garbage."""


@dataclass
class TrainingConfig:
    """Settings of a run (saved next to its checkpoints)."""

    epochs: int = 1
    max_steps: int | None = None
    learning_rate: float = 3e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.05
    gradient_accumulation_steps: int = 1
    max_grad_norm: float = 1.0
    mixed_precision: str = "no"  # "no" | "fp16" | "bf16" (GPU)
    seed: int = 0
    log_every: int = 10
    cpu: bool = False


@dataclass
class TrainerState:
    """Where a run is: saved with each checkpoint so ``resume`` continues from it."""

    epoch: int = 0
    step: int = 0
    best_metric: float | None = None
    history: list | None = None


class Trainer:
    """Train ``model`` on batches from ``train_loader`` and keep checkpoints in ``output_dir``.

    ``evaluate(model) -> dict`` is called after each epoch; its ``metric_name``
    entry (higher is better) decides the best checkpoint. ``save(model, dir)``,
    when given, also writes the model's user-facing files into each checkpoint.
    ``epoch_log(model) -> dict`` adds entries to each epoch's log record.
    """

    def __init__(
        self,
        model: nn.Module,
        train_loader: Iterable,
        output_dir: str | Path,
        config: TrainingConfig,
        save: Callable[[nn.Module, Path], None] | None = None,
        evaluate: Callable[[nn.Module], dict] | None = None,
        metric_name: str = "accuracy",
        epoch_log: Callable[[nn.Module], dict] | None = None,
    ):
        from accelerate import Accelerator
        from accelerate.utils import set_seed

        set_seed(config.seed)
        self.accelerator = Accelerator(
            mixed_precision=config.mixed_precision,
            gradient_accumulation_steps=config.gradient_accumulation_steps,
            cpu=config.cpu,
        )
        self.config, self.output_dir = config, Path(output_dir)
        self.save_user_files, self.evaluate, self.metric_name = save, evaluate, metric_name
        self.epoch_log = epoch_log
        optimizer = torch.optim.AdamW(
            [p for p in model.parameters() if p.requires_grad], lr=config.learning_rate, weight_decay=config.weight_decay
        )
        steps_per_epoch = math.ceil(len(train_loader) / config.gradient_accumulation_steps)
        self.total_steps = config.max_steps or steps_per_epoch * config.epochs
        warmup = int(config.warmup_ratio * self.total_steps)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer,
            lambda step: min((step + 1) / max(1, warmup), max(0.0, (self.total_steps - step) / max(1, self.total_steps - warmup))),
        )
        self.model, self.optimizer, self.train_loader, self.scheduler = self.accelerator.prepare(
            model, optimizer, train_loader, scheduler
        )
        self.state = TrainerState(history=[])

    # ----------------------------------------------------------------- loop
    def train(self, resume: bool = False) -> TrainerState:
        """Run until ``epochs`` or ``max_steps``; with ``resume`` continue from the last checkpoint."""
        from tqdm import tqdm

        if resume:
            self._resume()
        bar = tqdm(total=self.total_steps, initial=self.state.step, desc="training", unit="step",
                   disable=not self.accelerator.is_main_process)
        while self.state.step < self.total_steps and self.state.epoch < self.config.epochs:
            self.model.train()
            # Throughput counts training time only: the dev evaluation after the epoch is left out.
            started, examples = time.perf_counter(), 0
            for batch in self.train_loader:
                with self.accelerator.accumulate(self.model):
                    outputs = self.model(batch)
                    loss = outputs["loss"]
                    if not torch.isfinite(loss.detach()):
                        raise NonFiniteLossError(
                            f"the loss became {loss.item()} at step {self.state.step} (epoch {self.state.epoch}); "
                            "lower the learning rate or check the data; the last good checkpoint is kept"
                        )
                    self.accelerator.backward(loss)
                    if self.accelerator.sync_gradients:
                        self.accelerator.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
                    self.optimizer.step()
                    self.scheduler.step()
                    self.optimizer.zero_grad()
                examples += _batch_size(batch)
                if self.accelerator.sync_gradients:
                    self.state.step += 1
                    bar.update(1)
                    if self.state.step % self.config.log_every == 0 or self.state.step == 1:
                        rate = examples * self.accelerator.num_processes / (time.perf_counter() - started)
                        bar.set_postfix(loss=f"{loss.item():.4f}", ex_per_s=f"{rate:.1f}")
                    if self.state.step >= self.total_steps:
                        break
            self.state.epoch += 1
            rate = examples * self.accelerator.num_processes / (time.perf_counter() - started)
            self._end_of_epoch(loss.item(), rate)
        bar.close()
        return self.state

    def _end_of_epoch(self, last_loss: float, examples_per_second: float) -> None:
        record = {"epoch": self.state.epoch, "step": self.state.step, "loss": last_loss,
                  "train_examples_per_s": round(examples_per_second, 2)}
        if self.epoch_log is not None:
            record.update(self.epoch_log(self.accelerator.unwrap_model(self.model)))
        improved = False
        if self.evaluate is not None:
            metrics = self.evaluate(self.accelerator.unwrap_model(self.model))
            record.update({f"dev_{k}": v for k, v in metrics.items()})
            value = metrics[self.metric_name]
            improved = self.state.best_metric is None or value > self.state.best_metric
            if improved:
                self.state.best_metric = value
        self.state.history.append(record)
        if self.accelerator.is_main_process:
            print(json.dumps(record))
        self._checkpoint(LAST_CHECKPOINT)
        if improved:
            self._checkpoint(BEST_CHECKPOINT)

    # ---------------------------------------------------------- checkpoints
    def _checkpoint(self, name: str) -> None:
        """Write a checkpoint to a temporary directory, then swap it in, so a crash never leaves half of one."""
        self.accelerator.wait_for_everyone()
        if not self.accelerator.is_main_process:
            return
        final = self.output_dir / name
        partial = self.output_dir / f".{name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        from safetensors.torch import save_model

        model = self.accelerator.unwrap_model(self.model)
        save_model(model, str(partial / WEIGHTS_NAME))  # handles tied weights (MLM decoder = embeddings)
        if self.save_user_files is not None:
            self.save_user_files(model, partial)
        torch.save({"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict()},
                   partial / "optimizer.pt")
        with open(partial / STATE_NAME, "w", encoding="utf-8") as f:
            json.dump({"state": asdict(self.state), "config": asdict(self.config)}, f, indent=1)
        old = self.output_dir / f".{name}.old"
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            final.rename(old)
        partial.rename(final)
        shutil.rmtree(old, ignore_errors=True)

    def _resume(self) -> None:
        from safetensors.torch import load_model

        directory = self.output_dir / LAST_CHECKPOINT
        if not (directory / STATE_NAME).is_file():
            raise FileNotFoundError(f"nothing to resume: no {LAST_CHECKPOINT}/{STATE_NAME} in {self.output_dir}")
        with open(directory / STATE_NAME, encoding="utf-8") as f:
            saved = json.load(f)
        load_model(self.accelerator.unwrap_model(self.model), str(directory / WEIGHTS_NAME))
        # Optimizer state is our own file from this run, not an untrusted download: weights_only keeps it pickle-free.
        optimizer_state = torch.load(directory / "optimizer.pt", map_location="cpu", weights_only=True)
        self.optimizer.load_state_dict(optimizer_state["optimizer"])
        self.scheduler.load_state_dict(optimizer_state["scheduler"])
        self.state = TrainerState(**saved["state"])


def _batch_size(batch) -> int:
    if isinstance(batch, dict):
        batch = next(iter(batch.values()))
    return len(batch) if hasattr(batch, "__len__") else 1
