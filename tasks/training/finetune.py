"""Fine-tuning and prediction for one task (KPC, QRC, QAM or SQR; ``tasks.task_types``) on one encoder.

The model is ``models.task_model.TaskModel``: an encoder, one problem vector per
problem and the task's head. ``TaskConfig`` says what it predicts and how: the
task, the architecture (``comus``, ``bert``, ``bert+gat``), the pooling, the vector
norm, and for QRC and QAM whether the two texts are read as one input
(``pair_mode="cross"``, the default; ``tasks.task_types.PairClassification``). The
task supplies the head, the loss and the decoding; this module the examples, the
batches, the training job (``train_task``) and prediction from text
(``predict_inputs``, what ``TaskModel.predict`` runs).

A trained model directory holds the encoder (``save_pretrained``), the head
(``head.safetensors``) and ``task_config.json`` with the label names;
``TaskModel.from_pretrained(directory, TaskConfig)`` loads it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from mathgraph.hub import local_directory
from mathgraph.models.comus import CheckpointError
from mathgraph.models.encoder import UNTRAINED, MathEncoder
from mathgraph.models.pooling import DEFAULT_POOLING, POOLINGS
from mathgraph.models.task_model import TASK_CONFIG_NAME, TaskBatch, TaskModel
from mathgraph.tasks.features import FeatureStore
from mathgraph.tasks.task_io import build_examples, classification_result, label_values, ranking_result
from mathgraph.tasks.task_types import TASKS, Task, get_task
from mathgraph.tasks.training.bucketing import LengthBucketSampler, length_sorted_batches
from mathgraph.tasks.training.trainer import TrainingArguments, TrainingData, fit

logger = logging.getLogger("mathgraph")

ARCHITECTURES = ("comus", "bert", "bert+gat")  # what makes the problem vector (TF-IDF trains elsewhere)
LEGACY_KEYS = {"encoder": "architecture"}  # configs saved before the rename
DEFAULT_PAIR_MODE = "cross"


def current_keys(data: dict) -> dict:
    """A saved config's fields with the names they have now (``encoder`` is ``architecture``)."""
    return {LEGACY_KEYS.get(key, key): value for key, value in data.items()}


@dataclass
class TaskConfig:
    """What a task model predicts and how it reads its data."""

    task: str
    architecture: str = "comus"
    labels: list[str] = field(default_factory=list)
    text_field: str = "problem"
    label_field: str = "subject"
    pooling: str = DEFAULT_POOLING
    pair_mode: str | None = None  # QRC/QAM: "cross" (default) or "bi"; None for the other tasks
    vector_norm: bool = True
    alignment: bool = False  # QRC/QAM/SQR: the head also reads each pair's alignment features (parsers.compare)

    def __post_init__(self) -> None:
        task = get_task(self.task)
        if self.architecture not in ARCHITECTURES:
            raise ValueError(f"unknown architecture {self.architecture!r}; choose one of {ARCHITECTURES} (or tfidf)")
        if self.pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {self.pooling!r}; choose one of {POOLINGS}")
        if self.pair_mode is None and task.input_shape == "pair":
            self.pair_mode = DEFAULT_PAIR_MODE
        task.with_pair_mode(self.pair_mode).with_alignment(self.alignment)  # refuses what the task cannot read

    @property
    def task_type(self) -> Task:
        return get_task(self.task).with_pair_mode(self.pair_mode).with_alignment(self.alignment)

    @property
    def uses_graph(self) -> bool:
        """Whether the encoder reads the math syntax graph (``bert`` does not: nothing is parsed)."""
        return self.architecture != "bert"

    def load(self, path: str, skip_bad: bool = False) -> list:
        """The task's examples in a JSONL file (formats in ``tasks.data``)."""
        return self.task_type.load(path, self.text_field, self.label_field, skip_bad)

    def predict_inputs(self, model, inputs: Iterable, batch_size: int = 32) -> list[dict]:
        """``TaskModel.predict``: ``model``'s results of ``inputs`` (``predict_inputs``)."""
        return predict_inputs(model, inputs, batch_size)

    @classmethod
    def from_pretrained(cls, directory: str | Path) -> TaskConfig:
        """The config in a task model directory's ``task_config.json`` (what ``TaskModel.from_pretrained``
        reads); ``CheckpointError`` if it holds none."""
        directory = local_directory(directory)  # a Hugging Face Hub id is downloaded
        try:
            data = json.loads((directory / TASK_CONFIG_NAME).read_text(encoding="utf-8"))
            if isinstance(data, dict):
                data.pop("model_type", None)  # what tasks.loading reads; models saved before it have none
            # Models saved before these options existed: [CLS], no vector norm, bi-encoder pairs.
            data.setdefault("pooling", "cls")
            data.setdefault("vector_norm", False)
            if get_task(data.get("task")).input_shape == "pair":
                data.setdefault("pair_mode", "bi")
            return cls(**current_keys(data))
        except (OSError, json.JSONDecodeError, TypeError, ValueError) as err:
            raise CheckpointError(f"{directory} is not a trained task model: {err}") from err


class TaskCollator:
    """Examples of a task -> ``TaskBatch``, with problems from a ``FeatureStore``."""

    def __init__(self, task: Task, store: FeatureStore, labels: Sequence[str] = ()):
        self.task, self.store = task, store
        self.label_ids = {label: i for i, label in enumerate(labels)}

    def __call__(self, examples: Sequence, with_labels: bool = True) -> TaskBatch:
        """Collate ``examples``; ``with_labels=False`` (prediction) puts zeros where gold labels go."""
        targets = self.task.targets(examples, self.label_ids if with_labels else None)
        return TaskBatch(self.store.batch(self.task.batch_texts(examples)), **targets)


def example_lengths(task: Task, examples: Sequence, store: FeatureStore) -> list[int]:
    """Tokens of each example (summed over its problems): what batches are bucketed by."""
    return [sum(store.length(t) for t in task.example_texts(e)) for e in examples]


# ---------------------------------------------------------------- running
def feature_store(model, texts: Sequence[str], args: TrainingArguments | None = None) -> FeatureStore:
    """The ``FeatureStore`` of ``texts`` for a ``TaskModel`` (or ``TaskView``): graphs parsed once
    (through the graph cache), none for the text-only ``bert`` encoder."""
    return FeatureStore.for_run(model.encoder, texts, args or TrainingArguments(), with_graphs=model.config.uses_graph)


@torch.no_grad()  # not inference_mode: frozen-prefix states cached here are reused in training
def predict_inputs(model, inputs: Iterable, batch_size: int = 32, store=None) -> list[dict]:
    """``TaskModel.predict``: results of ``inputs`` (shapes in ``tasks.task_io``) with a ``TaskModel`` or
    ``TaskView``, through ``predict`` (length-sorted batches, graph cache, ``store``)."""
    task = model.config.task_type
    examples = build_examples(task, inputs)
    if not examples:
        return []
    outputs = predict(model, examples, store, batch_size, raw=True)
    if task.classifies:
        names = label_values(task, model.config.labels)
        return [classification_result(out["logits"], names) for out in outputs]
    return [ranking_result(out["scores"][: len(e.candidates)].tolist()) for out, e in zip(outputs, examples)]


@torch.no_grad()  # evaluation during training too: without it every batch kept its autograd graph
def predict(
    model, examples: Sequence, store: FeatureStore | None = None, batch_size: int = 32, raw: bool = False
) -> list:
    """Predicted labels (KPC/QRC/QAM; QAM labels as ints) or score lists (SQR), in example order.

    Batches are formed from examples of similar length; ``store`` holds their
    problems (built here, through the graph cache, when not given). ``raw=True``
    gives each example's undecoded outputs instead: ``{"logits": [C]}``, or
    ``{"scores": [N]}`` (SQR, ``-inf`` past the example's candidates), as CPU tensors.
    """
    model.eval()
    task = model.config.task_type
    if store is None:
        store = feature_store(model, [t for e in examples for t in task.example_texts(e)])
    else:
        store.add(t for e in examples for t in task.example_texts(e))
    device = next(model.parameters()).device
    collate = TaskCollator(task, store)
    outputs: list = [None] * len(examples)
    for rows in length_sorted_batches(example_lengths(task, examples, store), batch_size):
        chunk = [examples[i] for i in rows]
        result = model(collate(chunk, with_labels=False).to(device))
        decoded = _raw_outputs(result, len(chunk)) if raw else task.decode(result, chunk, model.config.labels)
        for i, prediction in zip(rows, decoded):
            outputs[i] = prediction
    return outputs


def _raw_outputs(result: dict[str, torch.Tensor], size: int) -> list[dict[str, torch.Tensor]]:
    """A batch's ``logits`` / ``scores`` split into one dict per example."""
    kept = {k: v.detach().float().cpu() for k, v in result.items() if k in ("logits", "scores")}
    return [{k: v[j] for k, v in kept.items()} for j in range(size)]


def evaluate_examples(model, examples: Sequence, store: FeatureStore | None = None, batch_size: int = 32) -> dict:
    """The task's metrics (accuracy and macro-F1, or HR/NDCG at 1, 3, 5 for SQR) with the number of examples."""
    return model.config.task_type.metrics(examples, predict(model, examples, store, batch_size))


def require_two_labels(task: Task, labels: Sequence, train_path: str) -> None:
    """A classifier trained on one label learns nothing (loss 0, accuracy 1 on the same label): refuse it,
    naming the label (a sorted file cut short often holds a single one)."""
    if task.classifies and len(labels) < 2:
        raise ValueError(
            f"{train_path}: every example has the label {list(labels)}; a classifier needs two or more "
            "(is the file sorted by label? shuffle it before taking a part)"
        )


def load_start_encoder(model: str = "shipped", **new_model_options) -> MathEncoder:
    """The encoder to fine-tune: a saved directory, the shipped pre-trained ``"shipped"``, or ``"untrained"``
    built with ``new_model_options`` (``ComusConfig`` fields such as ``gat_heads=12`` for COMUS's 768-wide GAT)."""
    options = {k: v for k, v in new_model_options.items() if v is not None}
    if str(model) != UNTRAINED:
        if options:
            raise ValueError(f"{sorted(options)} set up a new model: they apply to --model {UNTRAINED}, not {model}")
        return MathEncoder.from_pretrained(model, device="cpu")
    encoder = MathEncoder.build(**options)
    encoder.model.eval()
    return encoder


def train_task(
    config: TaskConfig,
    train_path: str,
    args: TrainingArguments,
    dev_path: str | None = None,
    model: str = "shipped",
    **new_model_options,
) -> dict:
    """Fine-tune ``model`` on a task file and save the best (by dev metric) model to ``args.output_dir``.

    The dev metric is the task's (accuracy; NDCG@3 for SQR); without a dev file
    the last epoch is kept. Returns the training history and the best dev metric.
    """
    task = config.task_type
    train = config.load(train_path, args.skip_bad)
    dev = config.load(dev_path, args.skip_bad) if dev_path else []
    if not train:
        raise ValueError(f"{train_path}: no training examples")
    config.labels = task.label_names(train)
    require_two_labels(task, config.labels, train_path)
    encoder = load_start_encoder(model, **new_model_options)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(args.seed)  # the head's initial weights depend on the seed only
        task_model = TaskModel(encoder, config)
    if args.freeze_text_layers:
        task_model.freeze_text_layers(args.freeze_text_layers)
    store = feature_store(task_model, [t for e in [*train, *dev] for t in task.example_texts(e)], args)
    data = TrainingData(
        train,
        LengthBucketSampler(example_lengths(task, train, store), args.batch_size, args.seed),
        TaskCollator(task, store, config.labels),
    )
    state = fit(
        task_model,
        data,
        args,
        evaluate=(lambda m: evaluate_examples(m, dev, store, args.eval_batch_size)) if dev else None,
        metric_name=task.metric,
        save=lambda m, directory: m.save_pretrained(directory),
        epoch_log=(lambda m: {"prefix_cache_mib": round(m.frozen_prefix.cached_mib, 1)})
        if args.freeze_text_layers
        else None,
    )
    return {"history": state.history, "best_dev": state.best_metric, "metric": task.metric}


__all__ = [
    "TaskConfig",
    "TaskCollator",
    "predict",
    "evaluate_examples",
    "train_task",
    "feature_store",
    "load_start_encoder",
    "example_lengths",
    "TASKS",
    "ARCHITECTURES",
    "POOLINGS",
]
