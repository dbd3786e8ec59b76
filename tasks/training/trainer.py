"""One training recipe for pre-training, SimCSE and every task: ``fit(model, data, args)`` on Accelerate.

Accelerate places the model and batches on the device, runs bf16/fp16
autocast on GPUs (``mixed_precision``), accumulates gradients, and runs the
same script on several processes or GPUs under ``accelerate launch`` (gloo on
CPUs). The loop adds what every run here needs: a seeded start, a progress
bar with the loss and throughput, evaluation after every epoch with the best
checkpoint kept, checkpoints written atomically (to a temporary directory,
then renamed), ``resume`` from the last checkpoint, and a clear stop on a
non-finite loss. At the end the kept checkpoint (the best on dev, or the last)
is loaded back and the caller's ``save`` writes the model to ``output_dir``.

The model is any ``nn.Module`` whose ``forward(batch)`` returns a dict with a
scalar ``"loss"``. A checkpoint holds what resuming needs and nothing a user
loads: ``checkpoint-last`` the whole training module's weights
(``training_weights.safetensors``, encoder and heads), the optimizer and
scheduler state, and under fp16 the gradient scaler's (``optimizer.pt``, loaded with ``weights_only=True``: tensors
and numbers only, no arbitrary objects) and ``trainer_state.json``; ``checkpoint-best`` only the weights and
the state. Once ``save`` has written the best weights to ``output_dir``, ``checkpoint-best`` is removed: a
finished run keeps one copy of the kept weights (the model) and what ``resume`` needs (``checkpoint-last``).
"""

from __future__ import annotations

import json
import math
import shutil
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
from torch import nn

from mathgraph.errors import UserError
from mathgraph.files import apply_umask
from mathgraph.models.reasoning import PRETRAINED_LAYERS_NAME
from mathgraph.models.threads import available_cores, configure_threads  # noqa: F401 (re-exported)
from mathgraph.quiet import progress_bar

LAST_CHECKPOINT = "checkpoint-last"
# The loss curve: every ``log_every`` steps, the mean of each loss term since the last line.
TRAINING_LOG = "training_log.jsonl"
BEST_CHECKPOINT = "checkpoint-best"
STEP_PREFIX = "step-"  # ``save_steps``: the model after N steps in ``step-N``
STATE_NAME = "trainer_state.json"
WEIGHTS_NAME = "training_weights.safetensors"
OPTIMIZER_NAME = "optimizer.pt"
PLANNED_EVERY_STEP_UNTIL = 20  # a run with a time limit re-plans its schedule at each of its first steps


class NonFiniteLossError(RuntimeError):
    """The loss became NaN or infinite; training stops instead of writing garbage."""


@dataclass
class TrainingArguments:
    """Every setting of a training run, built by the CLI from its flags and saved with each checkpoint.

    ``threads``: torch CPU threads (default: the cores this process may use).
    ``loader_workers``: processes that collate batches (0: the training process itself;
    with cached features a batch is only padding, so on a 2-core CPU a worker mostly
    takes a core from the model). ``graph_cache``: ``"default"`` (see
    ``parsers.graph_cache.default_cache_path``), a file, or ``"none"``.
    ``freeze_text_layers``: freeze the text encoder's embeddings and first N layers and
    compute their outputs once per problem (``models.frozen_prefix``).
    ``learning_rate`` is the pre-trained text encoder's; ``head_learning_rate`` that of the
    parameters that start fresh (heads, GAT, memory, MoE routers, LoRA experts; see
    ``is_pretrained_parameter``), ``None`` for one rate for all.
    """

    output_dir: str = "out"
    epochs: int = 3
    max_steps: int | None = None
    batch_size: int = 16
    eval_batch_size: int = 32
    learning_rate: float = 3e-5
    head_learning_rate: float | None = 1e-3
    weight_decay: float = 0.01
    warmup_ratio: float = 0.05
    gradient_accumulation_steps: int = 1
    max_grad_norm: float = 1.0
    mixed_precision: str = "no"  # "no" | "fp16" | "bf16" (GPU)
    seed: int = 0
    resume: bool = False
    log_every: int = 10
    save_steps: int | None = None  # also write the model (``save``) to ``output_dir/step-N`` every N steps
    # the learning-rate schedule's length when the run stops earlier (``max_steps``): the first max_steps steps
    # of a longer run, exactly (warm-up and decay as that run's), e.g. a point of a pre-training curve
    schedule_steps: int | None = None
    cpu: bool = False
    threads: int | None = None
    loader_workers: int = 0
    parse_workers: int = 1
    graph_cache: str = "default"
    skip_bad: bool = False
    freeze_text_layers: int = 0
    # a folder of problems parsed and packed beforehand (``models.packed_features``): the run parses nothing
    packed_features: str | None = None
    # stop after this many seconds of training; the schedule is re-planned to end then (``Trainer.train``)
    time_limit_s: float | None = None
    # write checkpoint-last every N epochs (and always after the last): a GPU run of many short epochs saves
    # the time of writing optimizer states it will not resume from
    checkpoint_every: int = 1

    def __post_init__(self) -> None:
        for name in (
            "epochs",
            "batch_size",
            "eval_batch_size",
            "gradient_accumulation_steps",
            "parse_workers",
            "checkpoint_every",
        ):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_steps is not None and self.max_steps < 1:
            raise UserError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.save_steps is not None and self.save_steps < 1:
            raise UserError(f"save_steps must be >= 1, got {self.save_steps}")
        if self.schedule_steps is not None and (self.max_steps is None or self.schedule_steps < self.max_steps):
            raise UserError(f"schedule_steps needs max_steps <= schedule_steps, got {self.schedule_steps}")
        if self.loader_workers < 0 or self.freeze_text_layers < 0:
            raise UserError("loader_workers and freeze_text_layers must be >= 0")
        if self.time_limit_s is not None and self.time_limit_s <= 0:
            raise UserError(f"time_limit_s must be > 0, got {self.time_limit_s}")
        if self.mixed_precision not in ("no", "fp16", "bf16"):
            raise UserError(f"mixed_precision must be no, fp16 or bf16, got {self.mixed_precision!r}")

    @classmethod
    def from_namespace(cls, namespace, **overrides) -> TrainingArguments:
        """The arguments from an ``argparse.Namespace`` holding (some of) these fields, plus ``overrides``."""
        values = {f.name: getattr(namespace, f.name) for f in fields(cls) if hasattr(namespace, f.name)}
        return cls(**{**values, **overrides})


def check_mixed_precision(mixed_precision: str, device: torch.device) -> None:
    """Refuse fp16 on a CPU (Accelerate would turn it off without a word and train in fp32) and warn that
    bf16 on a CPU runs, but gains nothing on CPUs without bf16 units."""
    if device.type != "cpu" or mixed_precision == "no":
        return
    if mixed_precision == "fp16":
        raise UserError(
            "--mixed-precision fp16 needs a GPU: on the CPU it would silently train in fp32; leave it out (or use bf16)"
        )
    warnings.warn(
        "--mixed-precision bf16 on the CPU: autocast runs, but most CPUs have no bf16 units, so expect "
        "no speed-up (and bf16-rounded numbers)",
        stacklevel=3,
    )


@dataclass
class TrainingData:
    """What ``fit`` draws batches from: ``examples``, a ``batch_sampler`` of index lists (its
    ``set_epoch``, if any, is called before each epoch) and ``collate(examples) -> batch``."""

    examples: Sequence
    batch_sampler: torch.utils.data.Sampler
    collate: Callable


# Modules outside the text encoder that start as copies of its layers (ReasonFormer's reasoning modules and
# router layers, ``models.reasoning``): pre-trained weights, trained at the pre-trained rate.
PRETRAINED_MODULE_NAMES = frozenset({"text", PRETRAINED_LAYERS_NAME})


def fresh_parameters(model: nn.Module) -> set[str]:
    """Names (as in ``named_parameters``) of the parameters that start fresh inside pre-trained modules: each
    adapter class declares its own in ``FRESH_PARAMETERS`` (MoE routers, CGC-LoRA experts, new LaTeX token
    rows, ReasonFormer's step adapters), so a new adapter needs no change here."""
    stems = [
        f"{prefix}.{name}" if prefix else name
        for prefix, module in model.named_modules()
        for name in getattr(module, "FRESH_PARAMETERS", ())
    ]
    return {n for n, _ in model.named_parameters() if any(n == s or n.startswith(s + ".") for s in stems)}


def is_pretrained_parameter(name: str, fresh: set[str] = frozenset()) -> bool:
    """Whether the parameter called ``name`` (as in ``named_parameters``) belongs to the pre-trained
    text encoder (a module named ``text``, or a copy of its layers), not to a part that starts fresh:
    heads, the GAT and the memory, or one of ``fresh`` (``fresh_parameters``: adapters inside the text
    encoder)."""
    return bool(PRETRAINED_MODULE_NAMES & set(name.split("."))) and name not in fresh


def parameter_groups(model: nn.Module, args: TrainingArguments) -> list[dict]:
    """The optimizer's groups: the pre-trained text encoder at ``learning_rate``, everything else at
    ``head_learning_rate`` (fresh weights need a rate ~30x larger to move in a fine-tuning budget:
    a head at 5e-5 stays at chance on QRC). Empty groups are left out."""
    fresh_rate = args.head_learning_rate if args.head_learning_rate is not None else args.learning_rate
    pretrained, fresh, starts_fresh = [], [], fresh_parameters(model)
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            (pretrained if is_pretrained_parameter(name, starts_fresh) else fresh).append(parameter)
    groups = [
        {"params": pretrained, "lr": args.learning_rate, "name": "pretrained"},
        {"params": fresh, "lr": fresh_rate, "name": "fresh"},
    ]
    return [group for group in groups if group["params"]]


def build_optimizer(model: nn.Module, args: TrainingArguments) -> torch.optim.Optimizer:
    """AdamW over the parameters that train, in ``parameter_groups``; the fused kernel (one pass over
    all of them, several times faster than the per-tensor loop on a CPU) wherever torch has it."""
    groups = parameter_groups(model, args)
    if not groups:
        raise ValueError("the model has no parameter that trains")
    try:
        return torch.optim.AdamW(groups, weight_decay=args.weight_decay, fused=True)
    except RuntimeError:  # a device or dtype without the fused kernel
        return torch.optim.AdamW(groups, weight_decay=args.weight_decay)


def fit(
    model: nn.Module,
    data: TrainingData,
    args: TrainingArguments,
    evaluate: Callable[[nn.Module], dict] | None = None,
    metric_name: str = "accuracy",
    save: Callable[[nn.Module, Path], None] | None = None,
    epoch_log: Callable[[nn.Module], dict] | None = None,
) -> TrainerState:
    """Train ``model`` on ``data`` with ``args``; returns the final ``TrainerState``.

    ``evaluate(model) -> dict`` runs after each epoch; its ``metric_name`` entry
    (higher is better) picks ``checkpoint-best``. ``save(model, directory)`` writes
    the user-facing files: at the end, of the kept weights (best on dev, else last)
    into ``args.output_dir``, and with ``save_steps`` into ``step-N``. ``epoch_log(model) -> dict``
    adds entries to each epoch's log record.
    """
    configure_threads(args.threads)
    loader = torch.utils.data.DataLoader(
        data.examples,
        batch_sampler=data.batch_sampler,
        collate_fn=data.collate,
        num_workers=args.loader_workers,
        persistent_workers=args.loader_workers > 0,
        pin_memory=_training_device(args).type == "cuda",  # pinned batches copy to the GPU asynchronously
    )
    trainer = Trainer(
        model,
        loader,
        args,
        save=save,
        evaluate=evaluate,
        metric_name=metric_name,
        epoch_log=epoch_log,
        batch_sampler=data.batch_sampler,
    )
    state = trainer.train(resume=args.resume)
    trainer.finish()
    return state


@dataclass
class TrainerState:
    """Where a run is: saved with each checkpoint so ``resume`` continues from it."""

    epoch: int = 0
    step: int = 0
    best_metric: float | None = None
    history: list | None = None


class Trainer:
    """The loop behind ``fit``: ``model`` on batches from ``train_loader``, checkpoints in ``args.output_dir``.

    ``evaluate``, ``metric_name``, ``save`` and ``epoch_log`` are ``fit``'s.
    ``batch_sampler.set_epoch(e)``, when it exists, is called before epoch ``e``.
    """

    def __init__(
        self,
        model: nn.Module,
        train_loader,
        args: TrainingArguments,
        save: Callable[[nn.Module, Path], None] | None = None,
        evaluate: Callable[[nn.Module], dict] | None = None,
        metric_name: str = "accuracy",
        epoch_log: Callable[[nn.Module], dict] | None = None,
        batch_sampler=None,
    ):
        from accelerate import Accelerator
        from accelerate.utils import DataLoaderConfiguration, set_seed

        set_seed(args.seed)
        device = _training_device(args)
        # before the Accelerator: its state is one per process, so a refused setting must not reach it
        check_mixed_precision(args.mixed_precision, device)
        if device.type == "cuda":
            # TF32 tensor cores for the float32 matmuls (Ampere and later): ~10-bit mantissas in the products,
            # float32 accumulation, as mixed precision already accepts; several times the fp32 matmul speed.
            torch.set_float32_matmul_precision("high")
        self.accelerator = Accelerator(
            mixed_precision=args.mixed_precision,
            gradient_accumulation_steps=args.gradient_accumulation_steps,
            cpu=args.cpu,
            dataloader_config=DataLoaderConfiguration(non_blocking=device.type == "cuda"),
        )
        self.args, self.output_dir = args, Path(args.output_dir)
        self.save_user_files, self.evaluate, self.metric_name = save, evaluate, metric_name
        self.epoch_log, self.batch_sampler = epoch_log, batch_sampler
        optimizer = build_optimizer(model, args)
        steps_per_epoch = math.ceil(len(train_loader) / args.gradient_accumulation_steps)
        self.total_steps = args.max_steps or steps_per_epoch * args.epochs
        self.epochs = math.ceil(self.total_steps / steps_per_epoch) if args.max_steps else args.epochs
        # linear warm-up, then linear decay to 0 at its end; a time limit re-plans its length (plan_to_deadline)
        self.schedule_steps = args.schedule_steps or self.total_steps
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: self.learning_rate_factor(step))
        self.model, self.optimizer, self.train_loader, self.scheduler = self.accelerator.prepare(
            model, optimizer, train_loader, scheduler
        )
        self.state = TrainerState(history=[])
        # Reading the losses makes the host wait for the device: on a GPU only every ``log_every`` steps (and
        # at step 1); on the CPU it costs nothing, so the progress bar's loss moves at every step.
        self.read_losses_every_step = self.accelerator.device.type == "cpu"
        self.started_at: float | None = None  # time_limit_s: when train() began, the first timed step, eval time
        self.timing_mark: tuple[int, float, float] | None = None
        self.eval_seconds = 0.0

    def learning_rate_factor(self, step: int) -> float:
        """The schedule's factor at ``step``: linear warm-up over ``warmup_ratio`` of it, then linear decay to 0."""
        schedule = self.schedule_steps
        warmup = int(self.args.warmup_ratio * schedule)
        return min((step + 1) / max(1, warmup), max(0.0, (schedule - step) / max(1, schedule - warmup)))

    def plan_to_deadline(self) -> None:
        """With ``time_limit_s``: set the run's last step (and the schedule's end, unless ``schedule_steps`` fixes
        it) to the step the time left allows, at the step time measured since the first timed step (evaluation
        time left out), so that the run stops on time with its learning rate decayed; past the limit, stop now."""
        now = time.perf_counter()
        elapsed = now - self.started_at
        if elapsed >= self.args.time_limit_s:
            self.total_steps = self.state.step
            return
        if self.timing_mark is None:  # the first step (compilation, caches) is not timed
            self.timing_mark = (self.state.step, now, self.eval_seconds)
            return
        first_step, first_time, first_eval = self.timing_mark
        if self.state.step <= first_step:
            return
        per_step = (now - first_time - (self.eval_seconds - first_eval)) / (self.state.step - first_step)
        fits = self.state.step + int((self.args.time_limit_s - elapsed) / max(per_step, 1e-9))
        self.total_steps = max(self.state.step, min(self.step_cap, fits))
        if not self.args.schedule_steps:
            self.schedule_steps = max(self.total_steps, 1)

    # ----------------------------------------------------------------- loop
    def train(self, resume: bool = False) -> TrainerState:
        """Run until ``epochs`` or ``max_steps``; with ``resume`` continue from the last checkpoint."""
        if resume:
            self._resume()
        self.step_cap, self.started_at = self.total_steps, time.perf_counter()
        limit = self.args.time_limit_s
        bar = progress_bar(
            total=self.total_steps,
            initial=self.state.step,
            desc="training",
            unit="step",
            show=self.accelerator.is_main_process,
        )
        while self.state.step < self.total_steps and self.state.epoch < self.epochs:
            self.model.train()
            # Accelerate's loader sets its sampler's epoch from a counter of its own, which restarts at 0 on
            # resume; one process reaches our sampler through it, several (a BatchSamplerShard) do not.
            if hasattr(self.train_loader, "set_epoch"):
                self.train_loader.set_epoch(self.state.epoch)
            if hasattr(self.batch_sampler, "set_epoch"):
                self.batch_sampler.set_epoch(self.state.epoch)
            # Throughput counts training time only: the dev evaluation after the epoch is left out.
            started, examples = time.perf_counter(), 0
            self._finite_through = self.state.step  # the losses were read and finite up to this step
            epoch_sums: dict[str, torch.Tensor] = {}  # on the device: summed without reading them
            since_log: dict[str, torch.Tensor] = {}
            for batch in self.train_loader:
                with self.accelerator.accumulate(self.model):
                    outputs = self.model(batch)
                    self.accelerator.backward(outputs["loss"])
                    if self.accelerator.sync_gradients:
                        self.accelerator.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    self.scheduler.step()
                    self.optimizer.zero_grad()
                examples += _batch_size(batch)
                for name, value in outputs.items():
                    if isinstance(value, torch.Tensor) and value.dim() == 0:
                        since_log[name] = since_log.get(name, 0.0) + value.detach().float()
                since_log["batches"] = since_log.get("batches", 0) + 1
                epoch_sums["loss"] = epoch_sums.get("loss", 0.0) + outputs["loss"].detach().float()
                epoch_sums["batches"] = epoch_sums.get("batches", 0) + 1
                if self.accelerator.sync_gradients:
                    self.state.step += 1
                    bar.update(1)
                    logged = self.state.step % self.args.log_every == 0 or self.state.step == 1
                    if logged or self.read_losses_every_step:
                        means = self._read_losses(since_log)
                        rate = examples * self.accelerator.num_processes / (time.perf_counter() - started)
                        bar.set_postfix(loss=f"{means['loss']:.4f}", ex_per_s=f"{rate:.1f}", refresh=False)
                        if logged:
                            self._log_losses(means, rate)
                            since_log = {}
                    if self.args.save_steps and self.state.step % self.args.save_steps == 0:
                        self._save_step()
                    # re-planned at the first steps (the schedule's length is a guess until then), then when
                    # the losses are read (on a GPU the clock means something only after that sync)
                    early = self.state.step <= PLANNED_EVERY_STEP_UNTIL
                    if limit and (logged or early or time.perf_counter() - self.started_at >= limit):
                        self.plan_to_deadline()
                        bar.total = self.total_steps
                    if self.state.step >= self.total_steps:
                        break
            self.state.epoch += 1
            rate = examples * self.accelerator.num_processes / (time.perf_counter() - started)
            mean_loss = self._read_losses(epoch_sums)["loss"] if epoch_sums else 0.0
            self._end_of_epoch(mean_loss, rate)
        bar.close()
        return self.state

    def _read_losses(self, sums: dict) -> dict[str, float]:
        """The mean of each summed loss term (``sums["batches"]`` batches), read from the device in one copy;
        stops on a non-finite loss, naming the steps since the last finite read."""
        batches = sums["batches"]
        names = [name for name in sums if name != "batches"]
        values = torch.stack([torch.as_tensor(sums[name]) for name in names]).tolist() if names else []
        means = {name: value / batches for name, value in zip(names, values)}
        if not math.isfinite(means.get("loss", 0.0)):
            first = self._finite_through + 1
            where = f"step {self.state.step}" if first >= self.state.step else f"one of steps {first}-{self.state.step}"
            raise NonFiniteLossError(
                f"the loss became {means['loss']} at {where} (epoch {self.state.epoch}); "
                "lower the learning rate or check the data; the last good checkpoint is kept"
            )
        self._finite_through = self.state.step
        return means

    def _log_losses(self, means: dict[str, float], examples_per_second: float) -> None:
        """Append the mean loss terms since the last line to ``training_log.jsonl`` (main process)."""
        if not self.accelerator.is_main_process:
            return
        record = {
            "step": self.state.step,
            "epoch": self.state.epoch,
            "lr": self.scheduler.get_last_lr()[0],
            "examples_per_s": round(examples_per_second, 2),
            **{name: round(value, 5) for name, value in means.items()},
        }
        self.output_dir.mkdir(parents=True, exist_ok=True)
        with open(self.output_dir / TRAINING_LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def _end_of_epoch(self, mean_loss: float, examples_per_second: float) -> None:
        record = {
            "epoch": self.state.epoch,
            "step": self.state.step,
            "loss": mean_loss,
            "train_examples_per_s": round(examples_per_second, 2),
        }
        if self.epoch_log is not None:
            record.update(self.epoch_log(self.accelerator.unwrap_model(self.model)))
        improved = False
        if self.evaluate is not None:
            evaluation_started = time.perf_counter()
            metrics = self.evaluate(self.accelerator.unwrap_model(self.model))
            self.eval_seconds += time.perf_counter() - evaluation_started
            record.update({f"dev_{k}": v for k, v in metrics.items()})
            value = metrics[self.metric_name]
            improved = self.state.best_metric is None or value > self.state.best_metric
            if improved:
                self.state.best_metric = value
        self.state.history.append(record)
        if self.accelerator.is_main_process:
            from tqdm import tqdm

            tqdm.write(json.dumps(record))  # on its own line, not inside the progress bar's
        last = self.state.step >= self.total_steps or self.state.epoch >= self.epochs
        if last or self.state.epoch % self.args.checkpoint_every == 0:
            self._checkpoint(LAST_CHECKPOINT)
        if improved:
            self._checkpoint(BEST_CHECKPOINT, resumable=False)

    # ---------------------------------------------------------- checkpoints
    def _checkpoint(self, name: str, resumable: bool = True) -> None:
        """Write a checkpoint to a temporary directory, then swap it in, so a crash never leaves half of one.

        The weights and ``trainer_state.json``, and for a ``resumable`` checkpoint the optimizer's state."""
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
        apply_umask(partial / WEIGHTS_NAME)
        if resumable:
            optimizer_state = {"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict()}
            if self.accelerator.scaler is not None:  # fp16: the loss scale it learned, or a resume starts at 65536
                optimizer_state["grad_scaler"] = self.accelerator.scaler.state_dict()
            torch.save(optimizer_state, partial / OPTIMIZER_NAME)
        with open(partial / STATE_NAME, "w", encoding="utf-8") as f:
            json.dump({"state": asdict(self.state), "arguments": asdict(self.args)}, f, indent=1)
        old = self.output_dir / f".{name}.old"
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            final.rename(old)
        partial.rename(final)
        shutil.rmtree(old, ignore_errors=True)

    def _save_step(self) -> None:
        """The model as it is now, written by ``save`` to ``output_dir/step-N`` (a point on a learning curve)."""
        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process and self.save_user_files is not None:
            directory = self.output_dir / f"{STEP_PREFIX}{self.state.step}"
            directory.mkdir(parents=True, exist_ok=True)
            self.save_user_files(self.accelerator.unwrap_model(self.model), directory)

    def finish(self) -> None:
        """Load the kept checkpoint (best on dev if there was an evaluation, else the last) into the model
        and write it with ``save`` to ``output_dir`` (main process only), then remove ``checkpoint-best``.

        A ``checkpoint-best`` that is gone was removed by an earlier ``finish`` after writing its weights, and
        no epoch since (a resumed run) did better: ``output_dir`` already holds the best model and is left as it
        is (the model in memory then holds the last checkpoint's weights)."""
        self.accelerator.wait_for_everyone()
        if not self.accelerator.is_main_process or self.save_user_files is None:
            return
        from safetensors.torch import load_model

        best = self.evaluate is not None and self.state.best_metric is not None
        kept = self.output_dir / (BEST_CHECKPOINT if best else LAST_CHECKPOINT)
        model = self.accelerator.unwrap_model(self.model)
        if best and not kept.exists():
            return
        load_model(model, str(kept / WEIGHTS_NAME))
        self.save_user_files(model, self.output_dir)
        if best:
            shutil.rmtree(kept)  # its weights are the model in output_dir now: one copy

    def _resume(self) -> None:
        from safetensors.torch import load_model

        directory = self.output_dir / LAST_CHECKPOINT
        if not (directory / STATE_NAME).is_file():
            raise FileNotFoundError(f"nothing to resume: no {LAST_CHECKPOINT}/{STATE_NAME} in {self.output_dir}")
        with open(directory / STATE_NAME, encoding="utf-8") as f:
            saved = json.load(f)
        load_model(self.accelerator.unwrap_model(self.model), str(directory / WEIGHTS_NAME))
        # Optimizer state is our own file from this run, not an untrusted download: weights_only keeps it pickle-free.
        optimizer_state = torch.load(directory / OPTIMIZER_NAME, map_location="cpu", weights_only=True)
        self.optimizer.load_state_dict(optimizer_state["optimizer"])
        self.scheduler.load_state_dict(optimizer_state["scheduler"])
        if self.accelerator.scaler is not None and "grad_scaler" in optimizer_state:
            self.accelerator.scaler.load_state_dict(optimizer_state["grad_scaler"])
        self.state = TrainerState(**saved["state"])
        self._truncate_log()

    def _truncate_log(self) -> None:
        """Drop loss-curve lines written after the checkpoint we resume from: those steps run again."""
        path = self.output_dir / TRAINING_LOG
        if not self.accelerator.is_main_process or not path.is_file():
            return
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text(
            "".join(line for line in lines if json.loads(line)["step"] <= self.state.step), encoding="utf-8"
        )


def _training_device(args: TrainingArguments) -> torch.device:
    """The kind of device Accelerate will train on: a GPU where there is one, unless ``cpu``."""
    return torch.device("cpu" if args.cpu or not torch.cuda.is_available() else "cuda")


def _batch_size(batch) -> int:
    if isinstance(batch, dict):
        batch = next(iter(batch.values()))
    return len(batch) if hasattr(batch, "__len__") else 1
