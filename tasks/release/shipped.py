"""Predicting with the shipped model (``models.shipped`` reads its files; ``tasks.release.package`` writes them).

``shipped_predictor(task)`` is what ``mathgraph predict TASK`` (and ``mathgraph.Predictor.from_pretrained("shipped",
task=TASK)``) uses: the multi-task model's head, fused with TF-IDF and the structure model where dev said so.
Every function takes ``root``: another package directory of the same layout (an ``export_package`` copy, or
one downloaded from the Hugging Face Hub); by default the one inside mathgraph.
"""

from __future__ import annotations

from pathlib import Path

from mathgraph.models.shipped import MULTITASK_DIR, STRUCTURE_DIR, TFIDF_DIR, release_info, shipped_path


def load_shipped_multitask(root: Path | None = None):
    """The shipped multi-task model (KPC, QRC, QAM, SQR heads) as a ``MultiTaskModel`` (CPU, eval mode)."""
    from mathgraph.models.delta import DELTA_NAME
    from mathgraph.models.encoder import load_shipped_encoder
    from mathgraph.tasks.training.multitask import MultiTaskModel

    directory = shipped_path(MULTITASK_DIR, root=root)
    if not (directory / DELTA_NAME).is_file():  # a self-contained export: full weights
        return MultiTaskModel.from_pretrained(directory)
    return MultiTaskModel.from_pretrained(directory, base=load_shipped_encoder(root))


def shipped_tfidf(task: str, root: Path | None = None):
    """The shipped TF-IDF baseline of ``task`` as a ``TfidfPredictor`` (checksums checked)."""
    from mathgraph.tasks.inference import TfidfPredictor
    from mathgraph.tasks.loading import load_model

    return TfidfPredictor(task, load_model(shipped_path(TFIDF_DIR, task, root=root)))


def shipped_structure(task: str, root: Path | None = None):
    """The shipped structure model of ``task`` (``tasks.structure``; checksums checked), or ``None`` when the
    package has none for it."""
    from mathgraph.tasks.structure import StructureModel

    info = release_info(root)["tasks"][task]
    return StructureModel.from_pretrained(shipped_path(STRUCTURE_DIR, task, root=root)) if "structure" in info else None


def shipped_parts(root: Path | None = None):
    """The shipped multi-task model and its TF-IDF predictors ``{task: TfidfPredictor}``, loaded once."""
    multitask = load_shipped_multitask(root)
    return multitask, {task: shipped_tfidf(task, root) for task in multitask.config.task_names}


def shipped_predictor(task: str, hybrid: bool | None = None, root: Path | None = None, parts=None):
    """What ``mathgraph predict TASK`` uses without ``--model``: the shipped multi-task model's ``task`` head,
    fused with the shipped TF-IDF model and then with the shipped structure model (``tasks.hybrid``,
    ``tasks.structure``; pair tasks only) when ``hybrid`` is True, or, with ``None``, each where dev said it
    helps (``release.json``); ``hybrid=False`` is the neural head alone. ``parts`` (from ``shipped_parts``)
    reuses models already loaded."""
    from mathgraph.tasks.hybrid import HybridPredictor

    info = release_info(root)["tasks"][task]
    multitask = parts[0] if parts is not None else load_shipped_multitask(root)
    predictor = multitask.for_task(task)
    if info["hybrid"]["default"] if hybrid is None else hybrid:
        sparse = parts[1][task] if parts is not None else shipped_tfidf(task, root)
        predictor = HybridPredictor(predictor, sparse, info["hybrid"]["weight"])
    structure = info.get("structure")
    if structure is not None and (structure["default"] if hybrid is None else hybrid):
        predictor = HybridPredictor(predictor, shipped_structure(task, root), structure["weight"])
    return predictor


__all__ = ["load_shipped_multitask", "shipped_tfidf", "shipped_structure", "shipped_parts", "shipped_predictor"]
