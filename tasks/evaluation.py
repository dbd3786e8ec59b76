"""Evaluate any trained model directory on a task file: a task model, a multi-task model or a TF-IDF baseline.

It sits above ``tasks.finetune`` and ``tasks.multitask`` (which do not import
each other in a circle) and dispatches on what the directory holds.
"""

from __future__ import annotations

from models.comus import CheckpointError
from tasks.baselines import evaluate_tfidf, is_tfidf_directory, load_tfidf
from tasks.finetune import TaskConfig, evaluate_examples
from tasks.loading import MULTITASK_MODEL, TASK_MODEL, describe, load_model, model_type
from tasks.multitask import MultiTaskModel


def load_task_model(task: str, model_dir: str, device: str | None = None):
    """The model of ``task`` in ``model_dir``: a ``TaskModel``, or the task's view of a multi-task model
    (loaded by ``tasks.loading.load_model``, on ``device``, default the CPU)."""
    kind = model_type(model_dir)
    if kind not in (TASK_MODEL, MULTITASK_MODEL):
        raise CheckpointError(f"{model_dir} is not a trained task model: it holds {describe(kind)}")
    model = load_model(model_dir, device=device)
    if isinstance(model, MultiTaskModel):
        return model.for_task(task)
    if model.config.task != task:
        raise ValueError(f"{model_dir} was trained for {model.config.task}, not {task}")
    return model


def evaluate_directory(task: str, model_dir: str, data_path: str, text_field: str | None = None,
                       label_field: str | None = None, batch_size: int = 32) -> dict:
    """Metrics of a trained model directory on a task file (its graphs come from the graph cache)."""
    if is_tfidf_directory(model_dir):
        config = TaskConfig(task, text_field=text_field or "problem", label_field=label_field or "subject")
        rows = [config.task_type.tfidf_row(e, config.text_field, config.label_field) for e in config.load(data_path)]
        return evaluate_tfidf(task, load_tfidf(model_dir), rows, text_field=config.text_field,
                              label_field=config.label_field)
    model = load_task_model(task, model_dir)
    model.config.text_field = text_field or model.config.text_field
    model.config.label_field = label_field or model.config.label_field
    return evaluate_examples(model, model.config.load(data_path), batch_size=batch_size)


__all__ = ["evaluate_directory", "load_task_model"]
