"""Predictions from text with a model directory: ``mathgraph predict``.

Inputs and results have the shapes of ``tasks.task_io``.

``mathgraph predict --input FILE`` reads JSONL rows in the task's file format
(``tasks.data``) without the gold fields: KPC ``{TEXT_FIELD: text}`` (``problem``
by default), QRC/QAM ``{"text_a", "text_b"}``, SQR ``{"query", "candidates"}``.
It writes one line per good input row, in input order: the row's ``id`` (when
it has one), its ``line`` number in the input file and the result's fields.
Bad rows stop with the file and line, or with ``skip_bad`` are left out and
returned, as ``mathgraph parse`` does.

The model is a ``TaskModel``, the ``TaskView`` of one task of a multi-task
model, or a TF-IDF baseline (``TfidfPredictor``, its ``predict_proba``);
``load_predictor`` loads any of them from a directory.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from os import PathLike
from typing import IO

import torch

from mathgraph.hub import local_directory
from mathgraph.jsonl import JsonlError, atomic_writer, read_rows, write_jsonl
from mathgraph.tasks.task_io import InputError, check_input, input_from_texts, ranking_result
from mathgraph.tasks.task_types import Task, get_task


# ---------------------------------------------------------------- TF-IDF baselines
class TfidfPredictor:
    """A TF-IDF baseline (``tasks.baselines``) with the ``predict(inputs)`` of a ``TaskModel``: class
    probabilities from ``predict_proba``, or the ranker's cosine scores."""

    def __init__(self, task: str | Task, model):
        from mathgraph.tasks.baselines import TfidfRanker

        self.task = get_task(task) if isinstance(task, str) else task
        self.model = model
        kind = "ranker" if isinstance(model, TfidfRanker) else model.kind
        if kind != self.task.input_shape:
            raise ValueError(
                f"a TF-IDF {kind} model cannot predict {self.task.name} (that needs a {self.task.input_shape} model)"
            )

    def predict(self, inputs: Iterable, batch_size: int = 32) -> list[dict]:
        """Results of ``inputs`` in the format of ``TaskModel.predict`` (``batch_size`` is not used)."""
        checked = [check_input(self.task, item, i) for i, item in enumerate(inputs)]
        if not checked:
            return []
        if self.task.input_shape == "ranker":
            return [ranking_result(self.model.score(query, list(candidates)).tolist()) for query, candidates in checked]
        texts = [text for (text,) in checked] if self.task.input_shape == "single" else checked
        classes = self.model.classes_
        return [
            {"label": classes[int(row.argmax())], "probabilities": dict(zip(classes, row.tolist()))}
            for row in self.model.predict_proba(texts)
        ]


def load_task_model(task: str, model_dir: str, device: str | None = None):
    """The model of ``task`` in ``model_dir``: a ``TaskModel``, or the task's view of a multi-task model
    (loaded by ``tasks.loading.load_model``, on ``device``, default the CPU)."""
    from mathgraph.models.comus import CheckpointError
    from mathgraph.tasks.loading import MULTITASK_MODEL, TASK_MODEL, describe, load_model, model_type

    kind = model_type(local_directory(model_dir))  # a Hub id is downloaded; no directory: "no such directory"
    if kind not in (TASK_MODEL, MULTITASK_MODEL):
        raise CheckpointError(f"{model_dir} is not a trained task model: it holds {describe(kind)}")
    model = load_model(model_dir, device=device)
    if kind == MULTITASK_MODEL:
        return model.for_task(task)
    if model.config.task != task:
        raise ValueError(f"{model_dir} was trained for {model.config.task}, not {task}")
    return model


def load_predictor(task: str, directory: str | PathLike, device: str | torch.device | None = None):
    """What predicts ``task`` from the model directory ``directory``: a ``TaskModel`` (trained for ``task``),
    the ``task`` view of a multi-task model, a ``TfidfPredictor`` or a ``StructureModel`` (trained for ``task``);
    each has ``predict(inputs, batch_size)``."""
    from mathgraph.tasks.loading import STRUCTURE, TFIDF, load_model, model_type

    kind = model_type(local_directory(directory))  # a Hub id is downloaded; no directory: "no such directory"
    if kind == TFIDF:
        return TfidfPredictor(task, load_model(directory))
    if kind == STRUCTURE:
        model = load_model(directory)
        if model.task != task:
            raise ValueError(f"{directory} holds a structure model for {model.task}, not {task}")
        return model
    return load_task_model(task, str(directory), device=device)


# ---------------------------------------------------------------- files and printing
def read_inputs(
    task: str | Task, path: str | PathLike, text_field: str = "problem", skip_bad: bool = False
) -> tuple[list[tuple[int, dict]], list, list[JsonlError]]:
    """``(line, row)`` of the good rows of a JSONL file in the task's format (see the module docstring),
    their inputs, and the bad rows (raised as ``JsonlError`` unless ``skip_bad``)."""
    task = get_task(task) if isinstance(task, str) else task
    kind = task.input_shape
    fields = {"single": (text_field,), "pair": ("text_a", "text_b"), "ranker": ("query",)}[kind]

    def check(row: dict) -> None:
        if kind == "ranker":
            candidates = row.get("candidates")
            if (
                not isinstance(candidates, list)
                or not candidates
                or not all(isinstance(c, str) and c.strip() for c in candidates)
            ):
                raise ValueError("field 'candidates' must be a non-empty list of non-empty strings")

    rows, bad = read_rows(path, fields, skip_bad, check)
    inputs = [row_input(kind, row, text_field) for _, row in rows]
    return rows, inputs, bad


def row_input(kind: str, row: dict, text_field: str = "problem") -> object:
    """The input of a validated row, for a task whose ``input_shape`` is ``kind``."""
    if kind == "single":
        return row[text_field]
    if kind == "pair":
        return row["text_a"], row["text_b"]
    return row["query"], row["candidates"]


def predict_file(
    predictor,
    task: str,
    input_path: str | PathLike,
    output_path: str | PathLike | None = None,
    text_field: str = "problem",
    batch_size: int = 32,
    skip_bad: bool = False,
    out: IO[str] | None = None,
) -> tuple[int, list[JsonlError]]:
    """Predict every row of a JSONL file and write the results as JSONL (see the module docstring) to
    ``output_path`` (atomically) or ``out`` (default: stdout); returns the lines written and the bad rows."""
    rows, inputs, bad = read_inputs(task, input_path, text_field, skip_bad)
    results = predictor.predict(inputs, batch_size=batch_size)
    records = [output_record(line, row, result) for (line, row), result in zip(rows, results)]
    if output_path is None:
        return write_jsonl(out or sys.stdout, records), bad
    with atomic_writer(output_path) as f:
        return write_jsonl(f, records), bad


def output_record(line: int, row: dict, result: dict) -> dict:
    """One output line: the row's ``id`` (if any), its ``line`` number and the result."""
    record = {"id": row["id"]} if "id" in row else {}
    return {**record, "line": line, **result}


def format_prediction(item, result: dict, top: int = 5) -> str:
    """A result as readable text: the label and the ``top`` probabilities, or the ranked candidates."""
    if "ranking" in result:
        candidates = item[1]
        lines = ["ranking (best first):"]
        for rank, j in enumerate(result["ranking"], 1):
            text = " ".join(str(candidates[j]).split())
            lines.append(f"{rank:3d}. {result['scores'][j]:8.4f}  [{j}] {text[:100]}")
        return "\n".join(lines)
    best = sorted(result["probabilities"].items(), key=lambda kv: -kv[1])[: max(top, 1)]
    width = max(len(str(label)) for label, _ in best)
    lines = [f"label: {result['label']}", f"probabilities (top {len(best)}):"]
    lines.extend(f"  {label!s:<{width}}  {p:.4f}" for label, p in best)
    return "\n".join(lines)


__all__ = [
    "TfidfPredictor",
    "load_predictor",
    "load_task_model",
    "read_inputs",
    "predict_file",
    "format_prediction",
    "output_record",
    "row_input",
    "input_from_texts",
    "InputError",
]
