"""A task file's prediction inputs and gold, and the one number a task is judged by, for code that scores
predictions it made itself (the benchmarks). ``mathgraph.api.evaluate`` scores a model on a task file."""

from __future__ import annotations

from pathlib import Path

from mathgraph.tasks.data import read_inputs
from mathgraph.tasks.task_types import get_task


def labelled_inputs(task: str, path: str | Path) -> tuple[list, list]:
    """The prediction inputs of a task file and their gold (``Task.gold``): labels (KPC's ``subject``, QRC's
    and QAM's ``label``), or SQR's graded relevance lists."""
    rows, inputs, _ = read_inputs(task, path)
    return inputs, [get_task(task).gold(row) for _, row in rows]


def task_metric(task: str, gold: list):
    """``metric(results) -> float`` of a task against ``gold`` (``Task.result_metric``): NDCG@3 for SQR,
    accuracy otherwise."""
    return get_task(task).result_metric(gold)


__all__ = ["labelled_inputs", "task_metric"]
