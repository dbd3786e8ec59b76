"""The fine-tuning tasks with their data side, and the registry that names them.

A task is its model side (``models.task_heads``: what one input to a prediction becomes, the problem texts of a
batch, the head, the loss and outputs, the decoding) with the data side added here by one class, ``Task``, that
reads the task's definition (``mathgraph.task_definitions``): how its examples are read and validated (``load``,
``tasks.data.load_task``), which metrics it reports (``metrics``, with ``metric`` the one that picks the best
epoch), its rows for the TF-IDF models (``tfidf_row``), the gold answer of a row (``gold``), and how the model
card names it (``title``, ``hub_type``, ``dataset``). The data side follows from the task's input shape and
whether it classifies, so no task needs code of its own here. Training, evaluation, multi-task training, the
TF-IDF models and the release go through this interface.

    task = get_task("qrc")
    examples = task.load("qrc.train.jsonl")
    examples = load_examples(config, "qrc.train.jsonl")  # a TaskConfig's task, fields, pair mode, alignment
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from mathgraph.models.task_heads import PAIR_MODES, TASK_HEADS, KpcHead, QamHead, QrcHead, SqrHead
from mathgraph.tasks.data import load_task, sqr_relevance
from mathgraph.tasks.metrics import accuracy_metric, ndcg_metric


class Task:
    """The data side of a task (see the module docstring), mixed into the task's head (``models.task_heads``):
    every method reads ``name``, ``definition`` and the input shape that the head gives."""

    name: str

    @property
    def metric(self) -> str:
        """The dev metric (higher is better) that picks the best epoch."""
        return self.definition.metric

    @property
    def title(self) -> str:
        """The task in words, for the model card (``tasks.release.model_card``)."""
        return self.definition.title

    @property
    def hub_type(self) -> str:
        """The task's Hugging Face Hub task type, for the model card."""
        return self.definition.hub_type

    @property
    def dataset(self) -> tuple[str, str]:
        """The data set the task is built from: its Hub id and name, for the model card."""
        return self.definition.dataset

    def load(
        self, path: str, text_field: str = "problem", label_field: str = "subject", skip_bad: bool = False
    ) -> list:
        """The validated examples of a JSONL file (formats in ``tasks.data``); the fields are KPC's."""
        return load_task(self.name, path, text_field, label_field, skip_bad)

    def metrics(self, examples: Sequence, predictions: Sequence) -> dict:
        """Accuracy and macro-F1 with the number of examples where the task classifies; HR@k, NDCG@k and MAP
        of the rankings against the graded relevance where it ranks."""
        from mathgraph.tasks.metrics import classification_metrics, ranking_metrics

        if self.classifies:
            return classification_metrics([e.label for e in examples], predictions)
        return ranking_metrics(predictions, [e.relevance for e in examples])

    def tfidf_row(self, example, text_field: str = "problem", label_field: str = "subject") -> dict:
        """The example as the dict row the TF-IDF models read (a single problem under the given fields)."""
        if self.input_shape == "single":
            return {text_field: example.text, label_field: example.label}
        row = asdict(example)
        if self.input_shape == "ranker":
            row["candidates"], row["relevance"] = list(example.candidates), list(example.relevance)
        return row

    def gold(self, row: dict, label_field: str | None = None):
        """The gold answer of one row of the task's file, in the shape of a prediction's ``label``: the
        ``label_field`` (default ``subject`` for a single problem, ``label`` for a pair), or the graded relevance
        of each candidate of a ranking (``tasks.data.sqr_relevance``)."""
        if self.input_shape == "ranker":
            return list(sqr_relevance(row))
        return row[label_field or ("subject" if self.input_shape == "single" else "label")]

    def result_metric(self, gold: Sequence):
        """``metric(results) -> float`` of predictions (``models.task_io`` results) against ``gold``: accuracy
        where the task classifies, NDCG@3 of the rankings against the graded relevance lists where it ranks."""
        return accuracy_metric(gold) if self.classifies else ndcg_metric(gold)


# one class per head with the data side mixed in, named at module level so that a task pickles (worker processes)
class KpcTask(Task, KpcHead):
    """KPC with its data side."""


class QrcTask(Task, QrcHead):
    """QRC with its data side."""


class QamTask(Task, QamHead):
    """QAM with its data side."""


class SqrTask(Task, SqrHead):
    """SQR with its data side."""


TASKS: dict[str, Task] = {task.name: task for task in (KpcTask(), QrcTask(), QamTask(), SqrTask())}
if set(TASKS) != set(TASK_HEADS):  # a head registered without its data side
    raise ImportError(f"tasks {sorted(TASKS)} do not match the task heads {sorted(TASK_HEADS)}")


def get_task(name: str) -> Task:
    """The task registered as ``name`` (``kpc``, ``qrc``, ``qam``, ``sqr``)."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {tuple(TASKS)}")
    return TASKS[name]


def task_of(config) -> Task:
    """The task of a ``models.task_model.TaskConfig`` with its data side: the task read in the config's
    pair mode, with the alignment features the config names when it asks for them (``config.task_type`` is its
    model side)."""
    return (
        get_task(config.task)
        .with_pair_mode(config.pair_mode)
        .with_alignment(config.alignment, config.alignment_features)
    )


def load_examples(config, path: str, skip_bad: bool = False) -> list:
    """The examples of a ``TaskConfig``'s task in a JSONL file (formats in ``tasks.data``), read with the
    config's text and label fields."""
    return task_of(config).load(path, config.text_field, config.label_field, skip_bad)


__all__ = [
    "Task",
    "TASKS",
    "get_task",
    "task_of",
    "load_examples",
    "PAIR_MODES",
    "KpcTask",
    "QrcTask",
    "QamTask",
    "SqrTask",
]
