"""One loader for every kind of model directory mathgraph writes: ``load_model(directory)``.

Each directory names its kind in a ``model_type`` field of its own config file:

- encoder, ``comus``: ``config.json`` (``models.comus``) -> ``MathEncoder``;
- task model, ``task-model``: ``task_config.json`` (``tasks.training.finetune.TaskConfig``) -> ``models.task_model.TaskModel``;
- multi-task model, ``multi-task-model``: ``multitask_config.json`` (``tasks.training.multitask``) -> ``MultiTaskModel``;
- TF-IDF baseline, ``tfidf``: ``config.json`` (``tasks.baselines``) -> ``TfidfClassifier`` or ``TfidfRanker``;
- search index, ``search-index``: ``manifest.json`` (``tasks.search.index``) -> ``SearchIndex``.

A task or multi-task model directory also holds its encoder's ``config.json``
(``model_type`` ``comus``), so the more specific config files are looked at
first. Directories written before the field existed still load: their kind is
inferred from the files present (a TF-IDF ``config.json`` names its ``model``;
a search index's manifest its ``format``).
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from mathgraph.models.comus import CONFIG_NAME, CheckpointError
from mathgraph.tasks.model_types import (
    ENCODER,
    MODEL_TYPES,
    MULTITASK_MODEL,
    SEARCH_INDEX,
    STRUCTURE,
    TASK_MODEL,
    TFIDF,
    _read_json,
    describe,
    known_kinds,
    model_type,
)


def load_model(directory: str | PathLike, device: str | None = None):
    """The model saved in ``directory``, whatever its kind (see the module docstring): a ``MathEncoder``,
    ``TaskModel``, ``MultiTaskModel``, ``TfidfClassifier`` / ``TfidfRanker``, ``StructureModel`` or ``SearchIndex``.

    Neural models go to ``device`` (default: the CPU) in eval mode. A search index comes with the encoder
    that built it, ready for text queries (``SearchIndex.from_pretrained``). A directory of none of these
    kinds raises ``CheckpointError`` (a ``ValueError``) naming it and the kinds known, as does a name that is
    no directory (``no such directory: ...``).
    """
    from mathgraph.hub import local_directory

    try:
        directory = local_directory(directory)  # a Hugging Face Hub id is downloaded
    except FileNotFoundError as err:
        raise CheckpointError(f"{err}; it loads: {known_kinds()}") from err
    kind = model_type(directory)
    if kind is None:
        raise CheckpointError(
            f"{directory} is not a model directory mathgraph can load (no config file of a known kind in it); "
            f"it loads: {known_kinds()}"
        )
    if kind not in _LOADERS:
        raise CheckpointError(
            f"{directory} holds a model of type {kind!r}, which mathgraph does not load; it loads: {known_kinds()}"
        )
    return _LOADERS[kind](directory, device or "cpu")


def _load_encoder(directory, device):
    from mathgraph.models.encoder import MathEncoder

    return MathEncoder.from_pretrained(directory, device=device)


def _load_task_model(directory, device):
    from mathgraph.models.task_model import TaskModel
    from mathgraph.tasks.training.finetune import TaskConfig

    return TaskModel.from_pretrained(directory, TaskConfig, device=device)


def _load_multitask_model(directory, device):
    from mathgraph.tasks.training.multitask import MultiTaskModel

    return MultiTaskModel.from_pretrained(directory, device=device)


def _load_tfidf(directory, device):
    from mathgraph.tasks.baselines import TfidfClassifier, TfidfRanker

    model = _read_json(Path(directory) / CONFIG_NAME).get("model")  # model_type said TF-IDF: which of the two
    return (TfidfRanker if model == "tfidf_ranker" else TfidfClassifier).from_pretrained(directory)


def _load_structure(directory, device):
    from mathgraph.tasks.structure import StructureModel

    return StructureModel.from_pretrained(directory)


def _load_search_index(directory, device):
    from mathgraph.tasks.search.index import SearchIndex

    return SearchIndex.from_pretrained(directory, device=device)


_LOADERS = {
    ENCODER: _load_encoder,
    TASK_MODEL: _load_task_model,
    MULTITASK_MODEL: _load_multitask_model,
    TFIDF: _load_tfidf,
    SEARCH_INDEX: _load_search_index,
    STRUCTURE: _load_structure,
}

__all__ = [
    "load_model",
    "model_type",
    "describe",
    "known_kinds",
    "MODEL_TYPES",
    "ENCODER",
    "TASK_MODEL",
    "MULTITASK_MODEL",
    "TFIDF",
    "SEARCH_INDEX",
    "STRUCTURE",
]
