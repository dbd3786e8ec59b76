"""Batches of one task at a time, mixed across tasks: what multi-task training draws from.

``TaskMixingSampler`` picks each batch's task (``SAMPLING``: ``proportional``
visits every task's batches once per pass in random order; ``uniform`` and
``temperature`` draw the task with probability ``1 / N_T`` or
``n_t^(1/T) / sum n^(1/T)``); ``MultiTaskCollator`` turns a batch of
``(task_id, example)`` into a ``MultiTaskBatch``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence

import torch

from mathgraph.models.multitask import SAMPLING, MultiTaskBatch
from mathgraph.models.task_batches import TaskCollator
from mathgraph.tasks.training.bucketing import bucketed_batches


class TaskMixingSampler(torch.utils.data.Sampler):
    """Batches of indices into the concatenation of the tasks' examples, one task per batch.

    ``sizes``: examples per task; ``lengths``: tokens of each example of the
    concatenation (batches are length-bucketed within a task; ``None``: plain
    shuffled batches). Each pass (epoch) reshuffles with ``seed + epoch``
    (``set_epoch``); its length is the number of batches of one pass over every task.
    """

    def __init__(
        self,
        sizes: Sequence[int],
        batch_size: int,
        sampling: str = "proportional",
        temperature: float = 2.0,
        seed: int = 0,
        lengths: Sequence[int] | None = None,
    ):
        if sampling not in SAMPLING:
            raise ValueError(f"unknown sampling {sampling!r}; choose one of {SAMPLING}")
        if batch_size < 1 or min(sizes) < 1:
            raise ValueError("need batch_size >= 1 and at least one example per task")
        self.sizes, self.batch_size, self.sampling, self.seed = list(sizes), batch_size, sampling, seed
        self.lengths = list(lengths) if lengths is not None else [0] * sum(self.sizes)
        self.offsets = [sum(self.sizes[:i]) for i in range(len(self.sizes))]
        power = {"proportional": 1.0, "uniform": 0.0, "temperature": 1.0 / temperature}[sampling]
        total = sum(n**power for n in self.sizes)
        self.task_probabilities = [n**power / total for n in self.sizes]
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return sum(math.ceil(n / self.batch_size) for n in self.sizes)

    def __iter__(self) -> Iterator[list[int]]:
        rng = random.Random(self.seed + self.epoch)
        batches = [self._task_batches(t, rng) for t in range(len(self.sizes))]
        if self.sampling == "proportional":
            order = [t for t, task_batches in enumerate(batches) for _ in task_batches]
            rng.shuffle(order)
        else:
            order = rng.choices(range(len(self.sizes)), weights=self.task_probabilities, k=len(self))
        for task in order:
            if not batches[task]:  # a task drawn more often than it has batches starts a new pass over its data
                batches[task] = self._task_batches(task, rng)
            yield batches[task].pop()

    def _task_batches(self, task: int, rng: random.Random) -> list[list[int]]:
        indices = range(self.offsets[task], self.offsets[task] + self.sizes[task])
        return bucketed_batches(indices, self.lengths, self.batch_size, rng)


class MultiTaskCollator:
    """A list of ``(task_id, example)`` of one task -> ``MultiTaskBatch``."""

    def __init__(self, collators: Sequence[TaskCollator]):
        self.collators = list(collators)

    def __call__(self, items: Sequence[tuple[int, object]]) -> MultiTaskBatch:
        task_id = items[0][0]
        return MultiTaskBatch(task_id, self.collators[task_id]([example for _, example in items]))


__all__ = ["TaskMixingSampler", "MultiTaskCollator"]
