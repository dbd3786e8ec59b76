"""Fine-tuning for one task (KPC, QRC, QAM or SQR; ``tasks.task_types``) on one encoder.

The model is ``models.task_model.TaskModel``: an encoder, one problem vector per
problem and the task's head. ``models.task_model.TaskConfig`` says what it predicts
and how: the task, the architecture (``comus``, ``bert``, ``bert+gat``), the
pooling, the vector norm, and for QRC and QAM whether the two texts are read as one
input (``pair_mode="cross"``, the default; ``models.task_heads.PairHead``). The task
supplies the head, the loss and the decoding; this module the training job
(``train_task``) and the evaluation of examples (``evaluate_examples``); the
batches and prediction are ``models.task_batches`` and ``models.prediction``.

A trained model directory holds the encoder (``save_pretrained``), the head
(``head.safetensors``) and ``task_config.json`` with the label names;
``TaskModel.from_pretrained(directory)`` loads it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import torch

from mathgraph.errors import UserError
from mathgraph.models.encoder import UNTRAINED, MathEncoder
from mathgraph.models.features import FeatureStore
from mathgraph.models.prediction import feature_store, predict
from mathgraph.models.task_batches import TaskCollator, example_lengths
from mathgraph.models.task_heads import TaskHead
from mathgraph.models.task_model import TaskConfig, TaskModel
from mathgraph.tasks.task_types import load_examples, task_of
from mathgraph.tasks.training.bucketing import LengthBucketSampler
from mathgraph.tasks.training.trainer import TrainingArguments, TrainingData, fit

logger = logging.getLogger("mathgraph")


def evaluate_examples(model, examples: Sequence, store: FeatureStore | None = None, batch_size: int = 32) -> dict:
    """The task's metrics (accuracy and macro-F1, or HR/NDCG at 1, 3, 5 for SQR) with the number of examples."""
    return task_of(model.config).metrics(examples, predict(model, examples, store, batch_size))


def require_two_labels(task: TaskHead, labels: Sequence, train_path: str) -> None:
    """A classifier trained on one label learns nothing (loss 0, accuracy 1 on the same label): refuse it,
    naming the label (a sorted file cut short often holds a single one)."""
    if task.classifies and len(labels) < 2:
        raise UserError(
            f"{train_path}: every example has the label {list(labels)}; a classifier needs two or more "
            "(is the file sorted by label? shuffle it before taking a part)"
        )


def load_start_encoder(model: str = "shipped", **new_model_options) -> MathEncoder:
    """The encoder to fine-tune: a saved directory, the shipped pre-trained ``"shipped"``, or ``"untrained"``
    built with ``new_model_options`` (``ComusConfig`` fields such as ``gat_heads=12`` for COMUS's 768-wide GAT)."""
    options = {k: v for k, v in new_model_options.items() if v is not None}
    if str(model) != UNTRAINED:
        if options:
            raise UserError(f"{sorted(options)} set up a new model: they apply to --model {UNTRAINED}, not {model}")
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
    task = task_of(config)
    train = load_examples(config, train_path, args.skip_bad)
    dev = load_examples(config, dev_path, args.skip_bad) if dev_path else []
    if not train:
        raise UserError(f"{train_path}: no training examples")
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
    "evaluate_examples",
    "train_task",
    "load_start_encoder",
    "require_two_labels",
]
