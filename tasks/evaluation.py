"""Evaluate any trained model directory on a task file: a task model, a multi-task model or a TF-IDF baseline.

It sits above ``tasks.training.finetune`` and ``tasks.training.multitask`` (which do not import
each other in a circle) and dispatches on what the directory holds.
"""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

from mathgraph.hub import local_directory
from mathgraph.tasks.baselines import evaluate_tfidf
from mathgraph.tasks.inference import load_task_model, read_inputs
from mathgraph.tasks.loading import TFIDF, load_model, model_type
from mathgraph.tasks.task_types import get_task
from mathgraph.tasks.training.finetune import TaskConfig, evaluate_examples


def evaluate_directory(
    task: str,
    model_dir: str,
    data_path: str,
    text_field: str | None = None,
    label_field: str | None = None,
    batch_size: int = 32,
) -> dict:
    """Metrics of a trained model directory on a task file (its graphs come from the graph cache).

    Gold labels the model never saw in training cannot be predicted: they are counted in
    ``unseen_labels`` (``{label: examples}``) and warned about, never passed over in silence."""
    if model_type(local_directory(model_dir)) == TFIDF:  # a Hub id is downloaded
        config = TaskConfig(task, text_field=text_field or "problem", label_field=label_field or "subject")
        examples = config.load(data_path)
        rows = [config.task_type.tfidf_row(e, config.text_field, config.label_field) for e in examples]
        model = load_model(model_dir)
        metrics = evaluate_tfidf(task, model, rows, text_field=config.text_field, label_field=config.label_field)
        known = getattr(model, "classes_", None)
    else:
        model = load_task_model(task, model_dir)
        model.config.text_field = text_field or model.config.text_field
        model.config.label_field = label_field or model.config.label_field
        examples = model.config.load(data_path)
        metrics = evaluate_examples(model, examples, batch_size=batch_size)
        known = model.config.labels
    if get_task(task).classifies and known is not None:
        unseen = Counter(str(e.label) for e in examples if str(e.label) not in {str(k) for k in known})
        if unseen:
            metrics["unseen_labels"] = dict(sorted(unseen.items()))
            warnings.warn(
                f"{data_path}: {sum(unseen.values())} examples have labels the model never saw in "
                f"training, so it cannot get them right: {dict(sorted(unseen.items()))}",
                stacklevel=2,
            )
    return metrics


def labelled_inputs(task: str, path: str | Path) -> tuple[list, list]:
    """The prediction inputs of a task file and their gold (``Task.gold``): labels (KPC's ``subject``, QRC's
    and QAM's ``label``), or SQR's graded relevance lists."""
    rows, inputs, _ = read_inputs(task, path)
    return inputs, [get_task(task).gold(row) for _, row in rows]


def task_metric(task: str, gold: list):
    """``metric(results) -> float`` of a task against ``gold`` (``Task.result_metric``): NDCG@3 for SQR,
    accuracy otherwise."""
    return get_task(task).result_metric(gold)


__all__ = ["evaluate_directory", "labelled_inputs", "task_metric"]
