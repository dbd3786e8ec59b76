"""What a prediction reads and gives, for every task: the shapes of inputs and results.

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

``TaskModel.predict`` (``models.prediction.predict_inputs``), the TF-IDF predictor and
the late fusion (``models.tfidf.TfidfPredictor``, ``models.late_fusion``) all read and give these.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from mathgraph.errors import UserError
from mathgraph.task_specs import task_spec

if TYPE_CHECKING:  # checking inputs and ranking results needs neither (prediction on ONNX Runtime runs without torch)
    import torch

    from mathgraph.models.task_heads import TaskHead

# An input's shape (``TaskHead.input_shape``): one text, a pair of
# texts, or a query with candidates.
SHAPES = {"single": "one text (a str)", "pair": "a pair (text_a, text_b)", "ranker": "(query, [candidates])"}


class InputError(UserError):
    """An input that is not what the task reads: an empty text, or the wrong shape (a ``str`` given to QRC)."""


def check_input(task: TaskHead, item, position: int = 0) -> tuple:
    """The texts of one input, validated for ``task``: ``(text,)``, ``(text_a, text_b)`` or
    ``(query, (candidate, ...))``; ``InputError`` naming the input's ``position`` otherwise."""
    where = f"input {position}"
    kind = task.input_shape
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


def build_examples(task: TaskHead, inputs: Iterable) -> list:
    """The task's examples (``models.examples``) of ``inputs`` (``TaskHead.input_example``), with placeholder gold the
    prediction does not read (SQR: the first candidate relevant, since the loss computed beside the scores
    needs one). Every input is checked before the first example is made."""
    checked = [check_input(task, item, i) for i, item in enumerate(inputs)]
    return [task.input_example(texts, i) for i, texts in enumerate(checked)]


def input_from_texts(task: str | TaskHead, texts: Sequence[str]) -> object:
    """One input from command-line texts: KPC one text, QRC/QAM two (``text_a text_b``), SQR the query
    and then its candidates."""
    task = task_spec(task) if isinstance(task, str) else task
    kind, texts = task.input_shape, list(texts)
    if kind == "single" and len(texts) == 1:
        return texts[0]
    if kind == "pair" and len(texts) == 2:
        return tuple(texts)
    if kind == "ranker" and len(texts) >= 2:
        return texts[0], texts[1:]
    wanted = {"single": "one TEXT", "pair": "two TEXTs (text_a text_b)", "ranker": "a QUERY and its CANDIDATEs"}[kind]
    raise InputError(f"{task.name} takes {wanted}, got {len(texts)} (or give --input FILE)")


def label_values(task: str | TaskHead, labels: Sequence[str]) -> list:
    """The labels of ``task`` (a name or a ``TaskHead``) as it predicts them (QAM's ``"0"``, ``"1"`` become
    ints), in logit order."""
    decode = task_spec(task if isinstance(task, str) else task.name).decode_label
    return [decode(label) for label in labels]


def aligned_with(task: str) -> str:
    """What the second text of ``task``'s pairs is for their alignment: ``"problem"`` or ``"solution"``."""
    return task_spec(task).aligned_with


def classification_result(logits: torch.Tensor, labels: Sequence) -> dict:
    """``{"label", "probabilities"}`` of one example's logits ``[C]`` over ``labels``."""
    import torch

    probabilities = torch.softmax(logits.double(), dim=-1).tolist()
    return {"label": labels[int(logits.argmax())], "probabilities": dict(zip(labels, probabilities))}


def ranking_result(scores: Sequence[float]) -> dict:
    """``{"scores", "ranking"}`` of one list's candidate scores (ranking best first, ties in candidate order)."""
    scores = [float(s) for s in scores]
    return {"scores": scores, "ranking": sorted(range(len(scores)), key=lambda j: -scores[j])}


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


__all__ = [
    "SHAPES",
    "aligned_with",
    "InputError",
    "check_input",
    "build_examples",
    "input_from_texts",
    "label_values",
    "classification_result",
    "ranking_result",
]
