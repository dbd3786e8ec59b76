"""Evaluate any trained model directory on a task file: a task model, a multi-task model or a TF-IDF baseline.

It sits above ``tasks.finetune`` and ``tasks.multitask`` (which do not import
each other in a circle) and dispatches on what the directory holds.
"""

from __future__ import annotations

from tasks.baselines import evaluate_tfidf, is_tfidf_directory, load_tfidf
from tasks.finetune import TaskConfig, TaskModel, evaluate_examples
from tasks.multitask import MultiTaskModel, is_multitask_directory


def load_task_model(task: str, model_dir: str):
    """The model of ``task`` in ``model_dir``: a ``TaskModel``, or the task's view of a multi-task model."""
    if is_multitask_directory(model_dir):
        return MultiTaskModel.from_pretrained(model_dir).for_task(task)
    model = TaskModel.from_pretrained(model_dir)
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
