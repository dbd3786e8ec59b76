"""The fine-tuning tasks, one small class each, and the registry that names them.

A task is its model side (``models.task_heads``: what one input to a prediction
becomes, the problem texts of a batch, the head, the loss and outputs, the
decoding) extended here with its data side: how its examples are read and
validated (``load``), which metrics it reports (``metrics``, with ``metric`` the
one that picks the best epoch), its rows for the TF-IDF models (``tfidf_row``),
the gold answer of a row (``gold``), and how the model card names it (``title``,
``hub_type``, ``dataset``). Training, evaluation, multi-task training, the TF-IDF
models and the release go through this interface.

    task = get_task("qrc")
    examples = task.load("qrc.train.jsonl")
    examples = load_examples(config, "qrc.train.jsonl")  # a TaskConfig's task, fields, pair mode, alignment
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import asdict

from mathgraph.models.task_heads import PAIR_MODES, KpcHead, PairHead, QamHead, QrcHead, SqrHead, TaskHead
from mathgraph.tasks.data import load_kpc, load_qam, load_qrc, load_sqr, sqr_relevance
from mathgraph.tasks.metrics import accuracy_metric, ndcg_metric


class Task(TaskHead):
    """The data side of a task (see the module docstring) on its model side (``models.task_heads.TaskHead``).
    Subclasses set ``name`` and implement the abstract methods."""

    metric: str = "accuracy"  # the dev metric (higher is better) that picks the best epoch
    # the model card (tasks.release.model_card): the task in words, its Hugging Face Hub task type, and the data set
    # (Hub id, name) it is built from
    title: str = ""
    hub_type: str = "text-classification"
    dataset: tuple[str, str] = ("", "")

    @abstractmethod
    def load(
        self, path: str, text_field: str = "problem", label_field: str = "subject", skip_bad: bool = False
    ) -> list:
        """The validated examples of a JSONL file (formats in ``tasks.data``); fields are KPC's."""

    def metrics(self, examples: Sequence, predictions: Sequence) -> dict:
        """Accuracy and macro-F1 with the number of examples."""
        from mathgraph.tasks.metrics import classification_metrics

        return classification_metrics([e.label for e in examples], predictions)

    def tfidf_row(self, example, text_field: str = "problem", label_field: str = "subject") -> dict:
        """The example as the dict row the TF-IDF models read."""
        return asdict(example)

    def gold(self, row: dict, label_field: str = "label"):
        """The gold answer of one row of the task's file, in the shape of a prediction's ``label``."""
        return row[label_field]

    def result_metric(self, gold: Sequence):
        """``metric(results) -> float`` of predictions (``models.task_io`` results) against ``gold``: accuracy."""
        return accuracy_metric(gold)


class KnowledgePointClassification(KpcHead, Task):
    """KPC: one problem -> its subject (a classifier on the problem vector)."""

    title = "KPC (MATH subject, 7 classes)"
    dataset = ("hendrycks/competition_math", "MATH")

    def load(self, path, text_field="problem", label_field="subject", skip_bad=False):
        return load_kpc(path, text_field, label_field, skip_bad)

    def tfidf_row(self, example, text_field="problem", label_field="subject"):
        return {text_field: example.text, label_field: example.label}

    def gold(self, row, label_field="subject"):
        return row[label_field]


class PairClassification(PairHead, Task):
    """Two problems -> a relation label (``models.task_heads.PairHead``: its two pair modes)."""

    dataset = ("qintongli/GSM-Plus", "GSM-Plus")


class QuestionRelationClassification(QrcHead, PairClassification):
    """QRC: (seed, variant) -> perturbation type, or irrelevant (GSM-Plus)."""

    title = "QRC (GSM-Plus relation, 9 classes)"

    def load(self, path, text_field="problem", label_field="subject", skip_bad=False):
        return load_qrc(path, skip_bad)


class QuestionAnswerMatching(QamHead, PairClassification):
    """QAM: (question, solution) -> 1 if the solution solves the question, else 0; labels are ints."""

    title = "QAM (GSM-Plus number-swap pairs)"

    def load(self, path, text_field="problem", label_field="subject", skip_bad=False):
        return load_qam(path, skip_bad)


class SimilarQuestionRecommendation(SqrHead, Task):
    """SQR: a query and its candidates -> a score per candidate (bi-encoder); HR@k, NDCG@k and MAP."""

    metric = "ndcg@3"
    title = "SQR (graded GSM-Plus lists)"
    hub_type = "text-ranking"
    dataset = ("qintongli/GSM-Plus", "GSM-Plus")

    def load(self, path, text_field="problem", label_field="subject", skip_bad=False):
        return load_sqr(path, skip_bad)

    def metrics(self, examples, predictions):
        from mathgraph.tasks.metrics import ranking_metrics

        return ranking_metrics(predictions, [e.relevance for e in examples])

    def tfidf_row(self, example, text_field="problem", label_field="subject"):
        row = asdict(example)
        row["candidates"], row["relevance"] = list(example.candidates), list(example.relevance)
        return row

    def gold(self, row, label_field="label"):
        """The graded relevance of each candidate (``tasks.data.sqr_relevance``)."""
        return list(sqr_relevance(row))

    def result_metric(self, gold):
        """NDCG@3 of the rankings against the graded relevance lists."""
        return ndcg_metric(gold)


TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        KnowledgePointClassification(),
        QuestionRelationClassification(),
        QuestionAnswerMatching(),
        SimilarQuestionRecommendation(),
    )
}


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
    "KnowledgePointClassification",
    "QuestionRelationClassification",
    "QuestionAnswerMatching",
    "SimilarQuestionRecommendation",
    "PairClassification",
]
