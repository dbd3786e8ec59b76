"""The model side of the fine-tuning tasks, one small class each, and the registry that names them.

A task head says what one input to a prediction becomes (``input_example``), which
problem texts the model encodes for a batch of examples and in what layout
(``batch_texts``), the tensors of a batch beside its problems (``targets``), what
the head is (``make_head``), the loss and outputs (``outputs``) and how outputs
decode to predictions (``decode``). ``TaskModel`` and ``MultiTaskModel`` read their
task through this interface; the data side of a task (reading its files, its
metrics, its TF-IDF rows) extends it in ``tasks.task_types``.

What a task is without torch (its input shape, example type, how an input becomes
an example, how a label decodes, its label names) is defined in the task's module of
``mathgraph.task_definitions``; a head reads it there (``definition``) and adds only
what needs torch. The heads stay in the models layer so that a torch-free install
can import every task's definition without importing torch.

    head = get_task_head("qrc").with_pair_mode("cross")
    example = head.input_example(("a problem", "another problem"))
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Sequence

import torch
from torch import nn

from mathgraph.models.alignment_features import alignment_features, available_features
from mathgraph.models.examples import KpcExample, SqrList
from mathgraph.models.heads import BiEncoderScorer, ClassificationHead, PairClassificationHead
from mathgraph.task_definitions import TASK_DEFINITIONS, TaskDefinition

PAIR_MODES = ("cross", "bi")


class TaskHead(ABC):
    """The interface; see the module docstring. Subclasses set ``name`` and implement the abstract methods."""

    name: str = ""
    alignment: bool = False  # the head also reads the alignment features of each pair (models.alignment_features)
    alignment_names: tuple[str, ...] = ()  # the features the head reads, in order (with alignment on)

    @property
    def definition(self) -> TaskDefinition:
        """The task's torch-free definition (``mathgraph.task_definitions``)."""
        return TASK_DEFINITIONS[self.name]

    @property
    def aligned_with(self) -> str:
        """The second text of the task's pairs, for their alignment features: a ``"problem"`` or a ``"solution"``."""
        return self.definition.aligned_with

    @property
    def classifies(self) -> bool:
        """Whether the task predicts one label per example (else it ranks candidates)."""
        return self.definition.classifies

    @property
    def input_shape(self) -> str:
        """What one input is (``models.task_io``): a ``"single"`` text, a ``"pair"`` of texts, or a query with
        candidates to rank (``"ranker"``); the TF-IDF model of the task is the model of that shape. The task's
        definition says it, for the commands (before torch loads) and for the heads."""
        return self.definition.input_shape

    def with_pair_mode(self, mode: str | None) -> TaskHead:
        """This task reading its pairs as ``mode`` (``PAIR_MODES``); only pair tasks take one."""
        if mode is not None:
            raise ValueError(f"{self.name} reads one problem per example: --pair-mode is for qrc and qam")
        return self

    def with_alignment(self, alignment: bool, names: Sequence[str] | None = None) -> TaskHead:
        """This task with heads that read each pair's alignment features too, ``names`` in that order (default:
        every feature this mathgraph computes, ``available_features(aligned_with)``); only pair
        and ranking tasks. ``ValueError`` for a name it does not compute, a name twice, or no name."""
        if not alignment:
            return self
        if self.input_shape == "single":
            raise ValueError(f"{self.name} reads one problem per example: alignment features are for qrc, qam, sqr")
        available = available_features(self.aligned_with)
        names = available if names is None else tuple(names)
        unknown = [name for name in names if name not in available]
        if unknown:
            raise ValueError(
                f"unknown {self.aligned_with} alignment features {unknown}: this mathgraph computes {list(available)}"
            )
        if not names or len(set(names)) != len(names):
            raise ValueError(f"a {self.name} head reads one or more alignment features, each once: got {list(names)}")
        task = copy.copy(self)
        task.alignment, task.alignment_names = True, names
        return task

    @property
    def alignment_dim(self) -> int:
        """How many alignment features the head reads (0 without them)."""
        return len(self.alignment_names) if self.alignment else 0

    def alignment_pairs(self, examples: Sequence) -> list[tuple[str, str]]:
        """The ``(text_a, text_b)`` pairs whose alignment the head reads, in the layout of ``targets``."""
        return [(e.text_a, e.text_b) for e in examples]

    def input_example(self, texts: tuple, position: int = 0):
        """The example (``models.examples``) of one input to a prediction, its texts as
        ``models.task_io.check_input`` gives them, with placeholder gold the prediction does not read;
        ``position`` numbers its ``id`` (the task's definition makes it)."""
        return self.definition.input_example(texts, position)

    @abstractmethod
    def example_texts(self, example) -> list[str]:
        """Every problem text ``example`` needs encoded (a cross-encoder pair is one ``(text_a, text_b)`` entry)."""

    def batch_texts(self, examples: Sequence) -> list[str]:
        """The problems of a batch of ``examples``, in the layout ``outputs`` reads."""
        return [t for e in examples for t in self.example_texts(e)]

    def label_names(self, examples: Sequence) -> list[str]:
        """Label names in a deterministic (sorted) order."""
        return sorted({str(e.label) for e in examples}) if self.classifies else []

    def targets(self, examples: Sequence, label_ids: dict[str, int] | None, rows=None) -> dict[str, torch.Tensor]:
        """Gold tensors of a batch (``label_ids=None`` when predicting: zeros stand in for labels), and
        ``alignment: [B, F]`` when the head reads alignment features (``rows``: ``alignment_targets``')."""
        labels = (
            torch.zeros(len(examples), dtype=torch.long)
            if label_ids is None
            else torch.tensor([_label_id(label_ids, e.label) for e in examples])
        )
        return {"labels": labels, **self.alignment_targets(examples, rows)}

    def alignment_targets(self, examples: Sequence, rows=None) -> dict[str, torch.Tensor]:
        """``{"alignment": [B, F] float32}`` of a batch when ``alignment`` is on, else nothing. ``rows``: the
        ``models.alignment_features.AlignmentRows`` the pairs' rows are read from and kept in (the batch's
        ``FeatureStore``'s; None: ``TRAINING_ROWS``)."""
        if not self.alignment:
            return {}
        pairs = self.alignment_pairs(examples)
        features = alignment_features(self.aligned_with, pairs, names=self.alignment_names, rows=rows)
        return {"alignment": torch.from_numpy(features).float()}

    @abstractmethod
    def make_head(self, dim: int, num_labels: int) -> nn.Module:
        """The head on problem vectors of length ``dim`` (``num_labels`` classes where the task classifies)."""

    def pair_vectors(self, vectors: torch.Tensor, batch) -> tuple[torch.Tensor, torch.Tensor]:
        """``(u, v)`` of each example for a pair classifier (a single problem is the pair ``(u, u)``)."""
        return vectors, vectors

    def logits(self, head: nn.Module, vectors: torch.Tensor, batch) -> torch.Tensor:
        """Class logits ``[B, C]`` of the head (KPC: on the problem vectors)."""
        return head(vectors)

    def outputs(self, head: nn.Module, vectors: torch.Tensor, batch) -> dict[str, torch.Tensor]:
        """``loss`` and ``logits [B, C]`` of a ``TaskBatch`` whose problems are encoded as ``vectors``."""
        logits = self.logits(head, vectors, batch)
        return {"loss": nn.functional.cross_entropy(logits.float(), batch.labels), "logits": logits}

    def decode(self, outputs: dict[str, torch.Tensor], examples: Sequence, labels: Sequence[str]) -> list:
        """Predicted labels of a batch: the label names the model was trained on, decoded as the task's definition
        says (QAM's ``"1"`` is the int 1)."""
        decode_label = self.definition.decode_label
        return [decode_label(labels[i]) for i in outputs["logits"].argmax(-1).tolist()]


class KpcHead(TaskHead):
    """KPC: one problem -> its subject (a classifier on the problem vector)."""

    name = "kpc"

    def example_texts(self, example: KpcExample) -> list[str]:
        return [example.text]

    def make_head(self, dim, num_labels):
        return ClassificationHead(dim, num_labels)


class PairHead(TaskHead):
    """Two problems -> a relation label, read in one of two ``pair_mode``s.

    ``cross``: one input ``[CLS] a [SEP] b [SEP]`` whose graphs hang under one ROOT
    (``models.batching.pair_features``), so every token and memory read sees both
    problems; a classifier on its vector. ``bi``: each problem encoded alone (problems
    ``0..B-1`` of a batch are the ``text_a``, ``B..2B-1`` the ``text_b``), a classifier on
    ``[u; v; |u - v|; u * v]``; the vectors can be indexed for retrieval.
    """

    pair_mode = "bi"

    def with_pair_mode(self, mode):
        if mode not in PAIR_MODES:
            raise ValueError(f"unknown pair mode {mode!r}; choose one of {PAIR_MODES}")
        task = copy.copy(self)
        task.pair_mode = mode
        return task

    @property
    def cross(self) -> bool:
        return self.pair_mode == "cross"

    def example_texts(self, example) -> list:
        return [(example.text_a, example.text_b)] if self.cross else [example.text_a, example.text_b]

    def batch_texts(self, examples):
        if self.cross:
            return [(e.text_a, e.text_b) for e in examples]
        return [e.text_a for e in examples] + [e.text_b for e in examples]

    def make_head(self, dim, num_labels):
        head = ClassificationHead if self.cross else PairClassificationHead
        return head(dim, num_labels, alignment_dim=self.alignment_dim)

    def pair_vectors(self, vectors, batch):
        if self.cross:  # one vector already reads both problems
            return vectors, vectors
        half = len(batch.labels)
        return vectors[:half], vectors[half:]

    def logits(self, head, vectors, batch):
        alignment = getattr(batch, "alignment", None)
        return head(vectors, alignment) if self.cross else head(*self.pair_vectors(vectors, batch), alignment)


class QrcHead(PairHead):
    """QRC: (seed, variant) -> perturbation type, or irrelevant (GSM-Plus)."""

    name = "qrc"


class QamHead(PairHead):
    """QAM: (question, solution) -> 1 if the solution solves the question, else 0; labels are ints."""

    name = "qam"


class SqrHead(TaskHead):
    """SQR: a query and its candidates -> a score per candidate (bi-encoder).

    Problems ``0..B-1`` of a batch are the queries; ``candidates: [B, N]`` indexes
    the problems of each list (``candidate_mask`` marks real ones) and
    ``relevant: [B, N]`` holds each candidate's graded relevance (long, 0..2; 0 on padding).
    """

    name = "sqr"

    def example_texts(self, example: SqrList) -> list[str]:
        return [example.query, *example.candidates]

    def batch_texts(self, examples):
        return [e.query for e in examples] + [c for e in examples for c in e.candidates]

    def targets(self, examples, label_ids, rows=None):
        width = max(len(e.candidates) for e in examples)
        candidates = torch.zeros(len(examples), width, dtype=torch.long)
        mask = torch.zeros(len(examples), width, dtype=torch.bool)
        relevant = torch.zeros(len(examples), width, dtype=torch.long)
        start = len(examples)
        for i, example in enumerate(examples):
            count = len(example.candidates)
            candidates[i, :count] = torch.arange(start, start + count)
            mask[i, :count] = True
            relevant[i, :count] = torch.tensor(example.relevance, dtype=torch.long)
            start += count
        targets = {"candidates": candidates, "candidate_mask": mask, "relevant": relevant}
        aligned = self.alignment_targets(examples, rows)
        if aligned:  # [B * N real candidates, F] -> [B, N, F], zeros on padding
            padded = torch.zeros(len(examples), width, aligned["alignment"].shape[-1])
            padded[mask] = aligned["alignment"]
            targets["alignment"] = padded
        return targets

    def alignment_pairs(self, examples):
        return [(e.query, c) for e in examples for c in e.candidates]

    def make_head(self, dim, num_labels):
        return BiEncoderScorer(dim, alignment_dim=self.alignment_dim)

    def outputs(self, head, vectors, batch):
        scores = head(vectors[: len(batch.candidates)], vectors[batch.candidates], getattr(batch, "alignment", None))
        loss = head.loss(scores, batch.relevant, batch.candidate_mask)
        return {"loss": loss, "scores": scores.masked_fill(~batch.candidate_mask, float("-inf"))}

    def decode(self, outputs, examples, labels):
        return [row[: len(e.candidates)].tolist() for row, e in zip(outputs["scores"].float().cpu(), examples)]


TASK_HEADS: dict[str, TaskHead] = {head.name: head for head in (KpcHead(), QrcHead(), QamHead(), SqrHead())}
if set(TASK_HEADS) != set(TASK_DEFINITIONS):  # a task defined without a head, or a head without a definition
    raise ImportError(f"task heads {sorted(TASK_HEADS)} do not match the task definitions {sorted(TASK_DEFINITIONS)}")


def get_task_head(name: str) -> TaskHead:
    """The model side of the task registered as ``name`` (``kpc``, ``qrc``, ``qam``, ``sqr``)."""
    if name not in TASK_HEADS:
        raise ValueError(f"unknown task {name!r}; choose one of {tuple(TASK_HEADS)}")
    return TASK_HEADS[name]


def _label_id(label_ids: dict[str, int], label) -> int:
    key = str(label)
    if key not in label_ids:
        raise ValueError(f"label {key!r} was not seen in training (labels: {sorted(label_ids)})")
    return label_ids[key]


__all__ = [
    "TaskHead",
    "TASK_HEADS",
    "get_task_head",
    "PAIR_MODES",
    "KpcHead",
    "PairHead",
    "QrcHead",
    "QamHead",
    "SqrHead",
]
