"""Predictions from text: ``TaskModel.predict(inputs)`` and ``mathgraph predict``.

Inputs, one per prediction, in the shape of the task:

- KPC: a problem text, ``"Find $x$ if $2x+3=7$."``;
- QRC, QAM: a pair ``(text_a, text_b)`` (QAM: question and solution);
- SQR: ``(query, [candidate, ...])``.

Results, one per input and in input order:

- KPC, QRC, QAM: ``{"label": L, "probabilities": {label: p, ...}}``, ``p`` the
  softmax of the logits (they sum to 1), ``L`` the most probable label; labels
  are what the task predicts (strings; QAM's the ints 0 and 1);
- SQR: ``{"scores": [s_0, ...], "ranking": [candidate indices, best first]}``
  (equal scores keep the candidate order).

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
from collections.abc import Iterable, Sequence
from os import PathLike
from typing import IO

import torch

from mathgraph.jsonl import JsonlError, atomic_writer, read_rows, write_jsonl
from tasks.data import KpcExample, QamPair, QrcPair, SqrList
from tasks.task_types import Task, get_task

# An input's shape is that of the task's TF-IDF baseline (``Task.tfidf_kind``): one text, a pair of
# texts, or a query with candidates.
SHAPES = {"single": "one text (a str)", "pair": "a pair (text_a, text_b)", "ranker": "(query, [candidates])"}


class InputError(ValueError):
    """An input that is not what the task reads: an empty text, or the wrong shape (a ``str`` given to QRC)."""


# ---------------------------------------------------------------- inputs
def check_input(task: Task, item, position: int = 0) -> tuple:
    """The texts of one input, validated for ``task``: ``(text,)``, ``(text_a, text_b)`` or
    ``(query, (candidate, ...))``; ``InputError`` naming the input's ``position`` otherwise."""
    where = f"input {position}"
    kind = task.tfidf_kind
    wrong = InputError(f"{where}: {task.name} takes {SHAPES[kind]} per input, got {_describe(item)}")
    if kind == "single":
        if not isinstance(item, str):
            raise wrong
        return (_text(item, where),)
    if isinstance(item, str) or not isinstance(item, (tuple, list)) or len(item) != 2:
        raise wrong
    if kind == "pair":
        return _text(item[0], f"{where}: text_a"), _text(item[1], f"{where}: text_b")
    query, candidates = item
    if isinstance(candidates, str) or not isinstance(candidates, (tuple, list)):
        raise wrong
    if not candidates:
        raise InputError(f"{where}: no candidates to rank")
    return _text(query, f"{where}: query"), tuple(_text(c, f"{where}: candidate {j}") for j, c in enumerate(candidates))


def build_examples(task: Task, inputs: Iterable) -> list:
    """The task's examples (``tasks.data``) of ``inputs``, with placeholder gold the prediction does not read
    (SQR: the first candidate relevant, since the loss computed beside the scores needs one)."""
    checked = [check_input(task, item, i) for i, item in enumerate(inputs)]
    if task.tfidf_kind == "single":
        return [KpcExample(text=text, label="") for (text,) in checked]
    if task.tfidf_kind == "pair":
        pair_type, label = (QamPair, 0) if task.name == "qam" else (QrcPair, "")
        return [pair_type(id=f"input-{i}", group="", text_a=a, text_b=b, label=label)
                for i, (a, b) in enumerate(checked)]
    return [SqrList(id=f"input-{i}", group="", query=query, candidates=candidates,
                    relevance=(1,) + (0,) * (len(candidates) - 1))
            for i, (query, candidates) in enumerate(checked)]


def input_from_texts(task: str | Task, texts: Sequence[str]) -> object:
    """One input from command-line texts: KPC one text, QRC/QAM two (``text_a text_b``), SQR the query
    and then its candidates."""
    task = get_task(task) if isinstance(task, str) else task
    kind, texts = task.tfidf_kind, list(texts)
    if kind == "single" and len(texts) == 1:
        return texts[0]
    if kind == "pair" and len(texts) == 2:
        return tuple(texts)
    if kind == "ranker" and len(texts) >= 2:
        return texts[0], texts[1:]
    wanted = {"single": "one TEXT", "pair": "two TEXTs (text_a text_b)", "ranker": "a QUERY and its CANDIDATEs"}[kind]
    raise InputError(f"{task.name} takes {wanted}, got {len(texts)} (or give --input FILE)")


# ---------------------------------------------------------------- neural models
def predict_inputs(model, inputs: Iterable, batch_size: int = 32, store=None) -> list[dict]:
    """``TaskModel.predict``: results of ``inputs`` (see the module docstring) with a ``TaskModel`` or
    ``TaskView``, through ``tasks.finetune.predict`` (length-sorted batches, graph cache, ``store``)."""
    from tasks.finetune import predict

    task = model.config.task_type
    examples = build_examples(task, inputs)
    if not examples:
        return []
    outputs = predict(model, examples, store, batch_size, raw=True)
    if task.classifies:
        names = label_values(task, model.config.labels)
        return [classification_result(out["logits"], names) for out in outputs]
    return [ranking_result(out["scores"][: len(e.candidates)].tolist()) for out, e in zip(outputs, examples)]


def label_values(task: Task, labels: Sequence[str]) -> list:
    """The labels as the task predicts them (``Task.decode``: QAM's ``"0"``, ``"1"`` become ints), in logit order."""
    return task.decode({"logits": torch.eye(len(labels))}, [None] * len(labels), labels)


def classification_result(logits: torch.Tensor, labels: Sequence) -> dict:
    """``{"label", "probabilities"}`` of one example's logits ``[C]`` over ``labels``."""
    probabilities = torch.softmax(logits.double(), dim=-1).tolist()
    return {"label": labels[int(logits.argmax())], "probabilities": dict(zip(labels, probabilities))}


def ranking_result(scores: Sequence[float]) -> dict:
    """``{"scores", "ranking"}`` of one list's candidate scores (ranking best first, ties in candidate order)."""
    scores = [float(s) for s in scores]
    return {"scores": scores, "ranking": sorted(range(len(scores)), key=lambda j: -scores[j])}


# ---------------------------------------------------------------- TF-IDF baselines
class TfidfPredictor:
    """A TF-IDF baseline (``tasks.baselines``) with the ``predict(inputs)`` of a ``TaskModel``: class
    probabilities from ``predict_proba``, or the ranker's cosine scores."""

    def __init__(self, task: str | Task, model):
        from tasks.baselines import TfidfRanker

        self.task = get_task(task) if isinstance(task, str) else task
        self.model = model
        kind = "ranker" if isinstance(model, TfidfRanker) else model.kind
        if kind != self.task.tfidf_kind:
            raise ValueError(f"a TF-IDF {kind} model cannot predict {self.task.name} "
                             f"(that needs a {self.task.tfidf_kind} model)")

    def predict(self, inputs: Iterable, batch_size: int = 32) -> list[dict]:
        """Results of ``inputs`` in the format of ``TaskModel.predict`` (``batch_size`` is not used)."""
        checked = [check_input(self.task, item, i) for i, item in enumerate(inputs)]
        if not checked:
            return []
        if self.task.tfidf_kind == "ranker":
            return [ranking_result(self.model.score(query, list(candidates)).tolist()) for query, candidates in checked]
        texts = [text for (text,) in checked] if self.task.tfidf_kind == "single" else checked
        classes = self.model.classes_
        return [{"label": classes[int(row.argmax())], "probabilities": dict(zip(classes, row.tolist()))}
                for row in self.model.predict_proba(texts)]


def load_predictor(task: str, directory: str | PathLike, device: str | torch.device | None = None):
    """What predicts ``task`` from the model directory ``directory``: a ``TaskModel`` (trained for ``task``),
    the ``task`` view of a multi-task model, or a ``TfidfPredictor``; each has ``predict(inputs, batch_size)``."""
    from tasks.evaluation import load_task_model
    from tasks.loading import TFIDF, load_model, model_type

    if model_type(directory) == TFIDF:
        return TfidfPredictor(task, load_model(directory))
    return load_task_model(task, str(directory), device=device)


# ---------------------------------------------------------------- files and printing
def read_inputs(task: str | Task, path: str | PathLike, text_field: str = "problem",
                skip_bad: bool = False) -> tuple[list[tuple[int, dict]], list, list[JsonlError]]:
    """``(line, row)`` of the good rows of a JSONL file in the task's format (see the module docstring),
    their inputs, and the bad rows (raised as ``JsonlError`` unless ``skip_bad``)."""
    task = get_task(task) if isinstance(task, str) else task
    kind = task.tfidf_kind
    fields = {"single": (text_field,), "pair": ("text_a", "text_b"), "ranker": ("query",)}[kind]

    def check(row: dict) -> None:
        if kind == "ranker":
            candidates = row.get("candidates")
            if not isinstance(candidates, list) or not candidates or \
                    not all(isinstance(c, str) and c.strip() for c in candidates):
                raise ValueError("field 'candidates' must be a non-empty list of non-empty strings")

    rows, bad = read_rows(path, fields, skip_bad, check)
    inputs = [row_input(kind, row, text_field) for _, row in rows]
    return rows, inputs, bad


def row_input(kind: str, row: dict, text_field: str = "problem") -> object:
    """The input of a validated row, for a task whose ``tfidf_kind`` is ``kind``."""
    if kind == "single":
        return row[text_field]
    if kind == "pair":
        return row["text_a"], row["text_b"]
    return row["query"], row["candidates"]


def predict_file(predictor, task: str, input_path: str | PathLike, output_path: str | PathLike | None = None,
                 text_field: str = "problem", batch_size: int = 32, skip_bad: bool = False,
                 out: IO[str] | None = None) -> tuple[int, list[JsonlError]]:
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
    best = sorted(result["probabilities"].items(), key=lambda kv: -kv[1])[:max(top, 1)]
    width = max(len(str(label)) for label, _ in best)
    lines = [f"label: {result['label']}", f"probabilities (top {len(best)}):"]
    lines.extend(f"  {label!s:<{width}}  {p:.4f}" for label, p in best)
    return "\n".join(lines)


def _text(value, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a text (str), got {_describe(value)}")
    if not value.strip():
        raise InputError(f"{where}: the text is empty")
    return value


def _describe(value) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__name__}"


__all__ = ["predict_inputs", "build_examples", "check_input", "input_from_texts", "classification_result",
           "ranking_result", "label_values", "TfidfPredictor", "load_predictor", "read_inputs", "predict_file",
           "format_prediction", "output_record", "row_input", "InputError"]
