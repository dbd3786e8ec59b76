"""Batches of a task's examples: the problems of a batch in one ``ProblemBatch`` and the tensors beside them.

``TaskCollator`` turns examples (``models.examples``) into a ``TaskBatch`` with the
problems' features from a ``FeatureStore`` and the task's targets
(``TaskHead.targets``); predicting collates without labels. ``example_lengths``
says how long each example is, and ``length_sorted_batches`` cuts examples
sorted by length into batches, the order of prediction (callers put the results
back in input order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from mathgraph.models.batching import DeviceBatch, ProblemBatch
from mathgraph.models.features import FeatureStore
from mathgraph.models.task_heads import TaskHead


@dataclass
class TaskBatch(DeviceBatch):
    """A batch's problems in one ``ProblemBatch`` (in the task's ``batch_texts`` layout) and its targets:
    ``labels: [B]`` (classification) or ``candidates, candidate_mask, relevant: [B, N]`` (SQR), and the
    pairs' ``alignment`` features (``[B, F]``, SQR ``[B, N, F]``) when the head reads them."""

    problems: ProblemBatch
    labels: torch.Tensor | None = None
    candidates: torch.Tensor | None = None
    candidate_mask: torch.Tensor | None = None
    relevant: torch.Tensor | None = None
    alignment: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.labels) if self.labels is not None else len(self.candidates)


class TaskCollator:
    """Examples of a task -> ``TaskBatch``, with problems and the pairs' alignment rows from a ``FeatureStore``."""

    def __init__(self, task: TaskHead, store: FeatureStore, labels: Sequence[str] = ()):
        self.task, self.store = task, store
        self.label_ids = {label: i for i, label in enumerate(labels)}

    def __call__(self, examples: Sequence, with_labels: bool = True) -> TaskBatch:
        """Collate ``examples``; ``with_labels=False`` (prediction) puts zeros where gold labels go."""
        label_ids = self.label_ids if with_labels else None
        targets = self.task.targets(examples, label_ids, rows=self.store.alignment_rows)
        return TaskBatch(self.store.batch(self.task.batch_texts(examples)), **targets)


def example_lengths(task: TaskHead, examples: Sequence, store: FeatureStore) -> list[int]:
    """Tokens of each example (summed over its problems): what batches are bucketed by."""
    return [sum(store.length(t) for t in task.example_texts(e)) for e in examples]


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices ``0..n-1`` sorted by length (stable) and cut into batches: the order for prediction."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


__all__ = ["TaskBatch", "TaskCollator", "example_lengths", "length_sorted_batches"]
