"""The front door: ``load`` any model mathgraph writes, and a ``Predictor`` for one task.

    import mathgraph
    kpc = mathgraph.Predictor.from_pretrained("shipped", task="kpc")
    kpc.predict(["Find $x$ if $2x + 3 = 7$."])      # [{"label": ..., "probabilities": {...}}]
    package = mathgraph.load("shipped")              # the shipped ModelPackage: .encode(...), .predictor(task)
    model = mathgraph.load("runs/kpc")               # whatever the directory holds: a TaskModel here

A name is ``"shipped"`` (alias ``"default"``), a local directory, or a Hugging Face Hub id ``org/name``
(``mathgraph.registry.resolve``); what a directory holds is its ``config.json``'s ``model_type``
(``mathgraph.registry``). ``mathgraph predict``, ``evaluate``, ``compare`` and the server predict through
``Predictor``, so every entry point accepts and refuses the same names with the same message.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike

from mathgraph.registry import CheckpointError, describe, load, loader_of, model_type, resolve

# what predicts a task, by model_type (a search index or an encoder predicts no task)
PREDICTING_TYPES = ("package", "task-model", "multi-task-model", "tfidf", "structure")


def _predicting_model(name_or_dir: str | PathLike, hybrid: bool | None, device, runtime=None) -> tuple[str, object]:
    """``(model_type, loaded model)`` of a model that predicts tasks; anything else is refused here. ``runtime``
    (``"torch"``, ``"onnx"``, ``None`` for the package's default) applies to packages, the models that carry
    ONNX graphs."""
    directory = resolve(name_or_dir)
    type_name = model_type(directory)
    if hybrid and type_name != "package":
        raise CheckpointError(
            f"hybrid fusion needs a model package such as 'shipped'; {name_or_dir} holds {describe(type_name)}"
        )
    if type_name is None:
        raise CheckpointError(f"{name_or_dir} holds {describe(type_name)}")
    if type_name not in PREDICTING_TYPES:
        raise CheckpointError(f"{name_or_dir} holds {describe(type_name)}, which predicts no task")
    loader = loader_of(type_name, directory)
    if type_name == "package":
        return type_name, loader.from_pretrained(directory, device=device, runtime=runtime)
    if runtime not in (None, "torch"):
        raise CheckpointError(
            f"{name_or_dir} holds {describe(type_name)}; ONNX graphs come with model packages only: use --runtime torch"
        )
    return type_name, loader.from_pretrained(directory, device=device)


def task_predictor(
    task: str, name_or_dir: str | PathLike = "shipped", hybrid: bool | None = None, device=None, runtime=None
):
    """What predicts ``task`` from the model ``name_or_dir`` (each has ``predict(inputs, batch_size)``):

    - a package (``"shipped"``, an export, a Hub copy): its multi-task ``task`` head, fused with its TF-IDF and
      alignment models where dev said so (``hybrid=None``), always (``True``) or never (``False``);
    - a task model trained for ``task``, or the ``task`` head of a multi-task model;
    - a TF-IDF model or an alignment model of ``task``'s input shape.

    ``hybrid=True`` needs a package. ``device``: ``None`` is CUDA when available, else the CPU. ``runtime``:
    a package's neural models on ONNX Runtime (``"onnx"``, its default on the CPU where it carries graphs) or
    PyTorch (``"torch"``); ``models.package.ModelPackage``."""
    from mathgraph.models.task_heads import get_task_head

    task = get_task_head(task).name  # an unknown task fails here, before any loading
    type_name, model = _predicting_model(name_or_dir, hybrid, device, runtime)
    if type_name == "package":
        return model.predictor(task, hybrid=hybrid)
    if type_name == "multi-task-model":
        return model.for_task(task)
    if type_name == "tfidf":
        from mathgraph.models.tfidf import TfidfPredictor

        return TfidfPredictor(task, model)
    trained_for = model.config.task if type_name == "task-model" else model.task
    if trained_for != task:
        raise CheckpointError(f"{name_or_dir} holds {describe(type_name)} trained for {trained_for}, not {task}")
    return model


def task_predictors(
    name_or_dir: str | PathLike = "shipped", hybrid: bool | None = None, device=None, runtime=None
) -> dict:
    """``{task: predictor}`` of every task the model ``name_or_dir`` predicts (what the server serves): each
    head of a package or a multi-task model, a task model's or an alignment model's task. A TF-IDF model does
    not record which task it was trained for, so it is refused here (``task_predictor`` takes it with a task)."""
    if model_type(resolve(name_or_dir)) == "tfidf":
        raise CheckpointError(
            f"{name_or_dir} holds a TF-IDF model, which does not record its task: "
            "predict with `mathgraph predict TASK --model DIR`"
        )
    type_name, model = _predicting_model(name_or_dir, hybrid, device, runtime)
    if type_name == "package":
        return {task: model.predictor(task, hybrid=hybrid) for task in model.tasks}
    if type_name == "multi-task-model":
        return {task: model.for_task(task) for task in model.config.task_names}
    return {model.config.task if type_name == "task-model" else model.task: model}


def evaluate(
    name_or_dir: str | PathLike,
    task: str,
    data_path: str | PathLike,
    text_field: str | None = None,
    label_field: str | None = None,
    batch_size: int = 32,
    hybrid: bool | None = None,
    device=None,
    runtime=None,
) -> dict:
    """Metrics of the model ``name_or_dir`` on a task file (accuracy and macro-F1, or HR/NDCG at 1, 3, 5 and
    MAP for SQR), predicted as ``Predictor`` predicts. KPC's text and label fields default to those the model
    was trained with (else ``problem`` and ``subject``).

    Gold labels the model cannot predict (never seen in training) are counted in ``unseen_labels``
    (``{label: examples}``) and warned about, never passed over in silence."""
    import warnings
    from collections import Counter

    from mathgraph.tasks.task_types import get_task

    predictor = task_predictor(task, name_or_dir, hybrid=hybrid, device=device, runtime=runtime)
    config = getattr(predictor, "config", None)
    data_task = get_task(task)
    examples = data_task.load(
        str(data_path),
        text_field or getattr(config, "text_field", None) or "problem",
        label_field or getattr(config, "label_field", None) or "subject",
    )
    results = predictor.predict([_example_input(example) for example in examples], batch_size=batch_size)
    if not data_task.classifies:
        return data_task.metrics(examples, [result["scores"] for result in results])
    metrics = data_task.metrics(examples, [result["label"] for result in results])
    known = {str(label) for label in results[0]["probabilities"]} if results else set()
    unseen = Counter(str(e.label) for e in examples if str(e.label) not in known)
    if unseen:
        metrics["unseen_labels"] = dict(sorted(unseen.items()))
        warnings.warn(
            f"{data_path}: {sum(unseen.values())} examples have labels the model never saw in "
            f"training, so it cannot get them right: {dict(sorted(unseen.items()))}",
            stacklevel=2,
        )
    return metrics


def _example_input(example):
    """What ``predict`` takes for a task-file example: its text, its pair, or its query and candidates."""
    if hasattr(example, "query"):
        return example.query, list(example.candidates)
    if hasattr(example, "text_a"):
        return example.text_a, example.text_b
    return example.text


class Predictor:
    """Predictions of one task (``kpc``, ``qrc``, ``qam`` or ``sqr``) from a model, one result per input.

    Inputs: a list of problem texts (KPC), of ``(text_a, text_b)`` pairs (QRC, QAM) or of
    ``(query, [candidates])`` (SQR). Results: ``{"label", "probabilities"}`` per input, or
    ``{"ranking", "scores"}`` for SQR. A lone input is refused: always a list in, a list out.
    """

    def __init__(self, task: str, model):
        from mathgraph.models.task_heads import get_task_head

        self.task = get_task_head(task).name
        self.model = model

    @classmethod
    def from_pretrained(
        cls,
        name_or_dir: str | PathLike = "shipped",
        task: str = "kpc",
        hybrid: bool | None = None,
        device=None,
        runtime: str | None = None,
    ) -> Predictor:
        """The predictor of ``task`` from ``name_or_dir`` (``task_predictor`` says what each model gives and
        what ``runtime`` chooses)."""
        return cls(task, task_predictor(task, name_or_dir, hybrid=hybrid, device=device, runtime=runtime))

    def predict(self, inputs: Sequence, batch_size: int = 32) -> list[dict]:
        """One result per input, in input order (see the class docstring)."""
        if isinstance(inputs, (str, tuple)):
            raise TypeError(f"predict takes a list of {self.task} inputs; wrap a single input in a list")
        from mathgraph.labels import with_label_names  # QAM's 1/0 also as "matches"/"does not match"

        return with_label_names(self.task, self.model.predict(list(inputs), batch_size=batch_size))

    def __repr__(self) -> str:
        return f"Predictor(task={self.task!r}, model={type(self.model).__name__})"


__all__ = ["load", "resolve", "Predictor", "evaluate", "task_predictor", "task_predictors", "PREDICTING_TYPES"]
