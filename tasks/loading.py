"""One loader for every kind of model directory mathgraph writes: ``load_model(directory)``.

Each directory names its kind in a ``model_type`` field of its own config file:

- encoder, ``comus``: ``config.json`` (``models.comus``) -> ``MathEncoder``;
- task model, ``task-model``: ``task_config.json`` (``tasks.finetune``) -> ``TaskModel``;
- multi-task model, ``multi-task-model``: ``multitask_config.json`` (``tasks.multitask``) -> ``MultiTaskModel``;
- TF-IDF baseline, ``tfidf``: ``config.json`` (``tasks.baselines``) -> ``TfidfClassifier`` or ``TfidfRanker``;
- search index, ``search-index``: ``manifest.json`` (``tasks.search_index``) -> ``SearchIndex``.

A task or multi-task model directory also holds its encoder's ``config.json``
(``model_type`` ``comus``), so the more specific config files are looked at
first. Directories written before the field existed still load: their kind is
inferred from the files present (a TF-IDF ``config.json`` names its ``model``;
a search index's manifest its ``format``).
"""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path

from models.comus import CONFIG_NAME, CheckpointError
from tasks.baselines import MODEL_TYPE as TFIDF
from tasks.baselines import TFIDF_MODELS
from tasks.finetune import TASK_CONFIG_NAME
from tasks.finetune import TASK_MODEL_TYPE as TASK_MODEL
from tasks.multitask import MULTITASK_CONFIG_NAME
from tasks.multitask import MULTITASK_MODEL_TYPE as MULTITASK_MODEL
from tasks.search_index import FORMAT as INDEX_FORMAT
from tasks.search_index import MANIFEST_FILE
from tasks.search_index import MODEL_TYPE as SEARCH_INDEX
from tasks.structure import MODEL_TYPE as STRUCTURE

ENCODER = "comus"
# model_type -> (the kind in words, the file that tells it)
MODEL_TYPES = {
    ENCODER: ("an encoder", f"{CONFIG_NAME} with model_type 'comus'"),
    TASK_MODEL: ("a task model", TASK_CONFIG_NAME),
    MULTITASK_MODEL: ("a multi-task model", MULTITASK_CONFIG_NAME),
    TFIDF: ("a TF-IDF baseline", f"{CONFIG_NAME} of a tfidf_classifier or tfidf_ranker"),
    SEARCH_INDEX: ("a search index", MANIFEST_FILE),
    STRUCTURE: ("a structure model", f"{CONFIG_NAME} with model_type 'structure'"),
}
# Config files that name a kind more specific than the encoder config.json beside them, with the kind
# a directory written before ``model_type`` existed has.
_SPECIFIC_CONFIGS = (
    (TASK_CONFIG_NAME, TASK_MODEL),
    (MULTITASK_CONFIG_NAME, MULTITASK_MODEL),
    (MANIFEST_FILE, SEARCH_INDEX),
)


def known_kinds() -> str:
    """The kinds ``load_model`` knows, for error messages."""
    return "; ".join(f"{name} ({files})" for name, files in MODEL_TYPES.values())


def model_type(directory: str | PathLike) -> str | None:
    """The ``model_type`` of a model directory (one of ``MODEL_TYPES`` unless the directory declares another),
    inferred from its files when not written down; ``None`` for a directory of none of the kinds.

    A config file that is not valid JSON raises ``CheckpointError`` naming it.
    """
    directory = Path(directory)
    for name, kind in _SPECIFIC_CONFIGS:
        if (directory / name).is_file():
            config = _read_json(directory / name)
            if kind == SEARCH_INDEX and "model_type" not in config and config.get("format") != INDEX_FORMAT:
                continue  # some other manifest.json
            return str(config.get("model_type") or kind)
    if not (directory / CONFIG_NAME).is_file():
        return None
    config = _read_json(directory / CONFIG_NAME)
    if config.get("model_type"):
        return str(config["model_type"])
    return TFIDF if config.get("model") in TFIDF_MODELS else None


def load_model(directory: str | PathLike, device: str | None = None):
    """The model saved in ``directory``, whatever its kind (see the module docstring): a ``MathEncoder``,
    ``TaskModel``, ``MultiTaskModel``, ``TfidfClassifier`` / ``TfidfRanker``, ``StructureModel`` or ``SearchIndex``.

    Neural models go to ``device`` (default: the CPU) in eval mode. A search index comes with the encoder
    that built it, ready for text queries (``SearchIndex.from_pretrained``). A directory of none of these
    kinds raises ``CheckpointError`` (a ``ValueError``) naming it and the kinds known.
    """
    kind = model_type(directory)
    if kind is None:
        reason = "it does not exist" if not Path(directory).is_dir() else "no config file of a known kind in it"
        raise CheckpointError(
            f"{directory} is not a model directory mathgraph can load ({reason}); it loads: {known_kinds()}"
        )
    if kind not in _LOADERS:
        raise CheckpointError(
            f"{directory} holds a model of type {kind!r}, which mathgraph does not load; it loads: {known_kinds()}"
        )
    return _LOADERS[kind](directory, device or "cpu")


def describe(kind: str | None) -> str:
    """A ``model_type`` in words (``"a task model"``...), for messages; ``None`` is nothing mathgraph loads."""
    if kind is None:
        return "nothing mathgraph can load"
    return MODEL_TYPES[kind][0] if kind in MODEL_TYPES else f"a model of type {kind!r}"


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"cannot read {path}: {err}") from err
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} must hold a JSON object")
    return data


def _load_encoder(directory, device):
    from models.encoder import MathEncoder

    return MathEncoder.from_pretrained(directory, device=device)


def _load_task_model(directory, device):
    from tasks.finetune import TaskModel

    return TaskModel.from_pretrained(directory, device=device)


def _load_multitask_model(directory, device):
    from tasks.multitask import MultiTaskModel

    return MultiTaskModel.from_pretrained(directory, device=device)


def _load_tfidf(directory, device):
    from tasks.baselines import TfidfClassifier, TfidfRanker

    model = _read_json(Path(directory) / CONFIG_NAME).get("model")  # model_type said TF-IDF: which of the two
    return (TfidfRanker if model == "tfidf_ranker" else TfidfClassifier).from_pretrained(directory)


def _load_structure(directory, device):
    from tasks.structure import StructureModel

    return StructureModel.from_pretrained(directory)


def _load_search_index(directory, device):
    from tasks.search_index import SearchIndex

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
