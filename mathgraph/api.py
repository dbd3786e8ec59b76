"""The front door: ``load`` any model mathgraph writes, and a ``Predictor`` for one task.

    import mathgraph
    kpc = mathgraph.Predictor.from_pretrained("shipped", task="kpc")
    kpc.predict(["Find $x$ if $2x + 3 = 7$."])      # [{"label": ..., "probabilities": {...}}]
    encoder = mathgraph.load("shipped")              # the shipped encoder, a MathEncoder
    model = mathgraph.load("runs/kpc")               # whatever the directory holds (tasks.loading)

A name is one of three things, looked at in this order:

- ``"shipped"`` (or its alias ``"default"``): the model inside the package;
- a local directory: a model directory (``tasks.loading.model_type`` says which kind), or a package of the
  shipped model's layout (``tasks.release.package.export_package``: a ``release.json`` in it);
- ``"org/name"``: a repository on the Hugging Face Hub holding either, downloaded once to the Hub's cache by
  ``huggingface_hub`` (``HF_HUB_OFFLINE=1`` reads the cache only).
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path

from mathgraph.hub import local_directory

SHIPPED_NAMES = ("shipped", "default")
_PACKAGE_FILE = "release.json"  # what marks a directory of the shipped model's layout (models.shipped)


def resolve(name_or_dir: str | PathLike) -> str | Path:
    """``"shipped"`` for the packaged model, else the local directory ``name_or_dir`` names (a Hub id is
    downloaded, or found in the Hub's cache). A name that is none of these raises ``FileNotFoundError``."""
    if str(name_or_dir) in SHIPPED_NAMES:
        return "shipped"
    try:
        return local_directory(name_or_dir)
    except FileNotFoundError as err:
        raise FileNotFoundError(f"{err}; train a model with `mathgraph train ...`, or use 'shipped'") from None


def load(name_or_dir: str | PathLike = "shipped", device: str | None = None):
    """The model ``name_or_dir`` names (see the module docstring): ``"shipped"`` and packages give their
    encoder (a ``MathEncoder``); a model directory gives what it holds: ``MathEncoder``, ``TaskModel``,
    ``MultiTaskModel``, ``TfidfClassifier`` / ``TfidfRanker``, ``StructureModel`` or ``SearchIndex`` (with the
    encoder that built it). Neural models go to ``device`` (default: the CPU) in eval mode."""
    where = resolve(name_or_dir)
    if where == "shipped" or _is_package(where):
        from mathgraph.models.encoder import load_shipped_encoder

        encoder = load_shipped_encoder(None if where == "shipped" else where)
        encoder.model.to(device or "cpu")
        return encoder
    from mathgraph.tasks.loading import load_model

    return load_model(where, device=device)


class Predictor:
    """Predictions of one task (``kpc``, ``qrc``, ``qam`` or ``sqr``) from a model, one result per input.

    Inputs: a list of problem texts (KPC), of ``(text_a, text_b)`` pairs (QRC, QAM) or of
    ``(query, [candidates])`` (SQR). Results (``tasks.task_io``): ``{"label", "probabilities"}`` per input, or
    ``{"ranking", "scores"}`` for SQR. A lone input is refused: always a list in, a list out.
    """

    def __init__(self, task: str, model):
        from mathgraph.tasks.task_types import get_task

        self.task = get_task(task).name
        self.model = model

    @classmethod
    def from_pretrained(
        cls, name_or_dir: str | PathLike = "shipped", task: str = "kpc", hybrid: bool | None = None, device=None
    ) -> Predictor:
        """The predictor of ``task`` from ``name_or_dir`` (see the module docstring).

        The shipped model and packages predict as ``mathgraph predict`` does: the multi-task head, fused with
        TF-IDF and the structure model where dev said so (``hybrid=None``), always (``True``) or never
        (``False``). A model directory predicts with what it holds: a task model trained for ``task``, the
        ``task`` head of a multi-task model, a TF-IDF baseline or a structure model of ``task``."""
        from mathgraph.tasks.task_types import get_task

        task = get_task(task).name  # an unknown task fails here, before any loading
        where = resolve(name_or_dir)
        if where == "shipped" or _is_package(where):
            from mathgraph.tasks.release.shipped import shipped_predictor

            return cls(task, shipped_predictor(task, hybrid=hybrid, root=None if where == "shipped" else where))
        if hybrid:
            raise ValueError("hybrid=True fuses a package's models; a model directory predicts with what it holds")
        from mathgraph.tasks.inference import load_predictor

        return cls(task, load_predictor(task, where, device=device))

    def predict(self, inputs: Sequence, batch_size: int = 32) -> list[dict]:
        """One result per input, in input order (see the class docstring)."""
        if isinstance(inputs, (str, tuple)):
            raise TypeError(f"predict takes a list of {self.task} inputs; wrap a single input in a list")
        return self.model.predict(list(inputs), batch_size=batch_size)

    def __repr__(self) -> str:
        return f"Predictor(task={self.task!r}, model={type(self.model).__name__})"


def _is_package(where) -> bool:
    return isinstance(where, Path) and (where / _PACKAGE_FILE).is_file()


__all__ = ["load", "Predictor", "resolve", "SHIPPED_NAMES"]
