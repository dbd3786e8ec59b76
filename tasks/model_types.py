"""What a model directory holds: ``model_type(directory)``, the one place that decides it.

Each directory names its kind in a ``model_type`` field of its own config file (the kinds and files are
listed in ``tasks.loading``, which loads them). Kept apart from the loaders so that code a loader imports
(an index's embedders) can ask what a directory holds without importing every loader.
"""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path

from mathgraph.models.comus import CONFIG_NAME, CheckpointError
from mathgraph.models.task_model import TASK_CONFIG_NAME
from mathgraph.models.task_model import TASK_MODEL_TYPE as TASK_MODEL
from mathgraph.tasks.search.index_format import FORMAT as INDEX_FORMAT
from mathgraph.tasks.search.index_format import MANIFEST_FILE
from mathgraph.tasks.search.index_format import MODEL_TYPE as SEARCH_INDEX
from mathgraph.tasks.structure import MODEL_TYPE as STRUCTURE
from mathgraph.tasks.training.multitask import MULTITASK_CONFIG_NAME
from mathgraph.tasks.training.multitask import MULTITASK_MODEL_TYPE as MULTITASK_MODEL

ENCODER = "comus"
# tasks.baselines.MODEL_TYPE and TFIDF_MODELS, as literals: importing tasks.baselines imports scikit-learn, ~1 s
# that `mathgraph search` and `predict --model DIR` spent only to read two names (a test keeps them equal)
TFIDF = "tfidf"
TFIDF_MODELS = ("tfidf_classifier", "tfidf_ranker")
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

    A directory that does not exist raises ``FileNotFoundError`` (``no such directory: ...``; a Hugging Face Hub
    id is ``mathgraph.hub.local_directory``'s to resolve first), a file ``NotADirectoryError``, and a config file
    that is not valid JSON ``CheckpointError`` naming it.
    """
    directory = Path(directory)
    if not directory.is_dir():
        if directory.exists():
            raise NotADirectoryError(f"{directory} is a file; mathgraph models are directories")
        raise FileNotFoundError(f"no such directory: {directory}")
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


def describe(kind: str | None) -> str:
    """A ``model_type`` in words (``"a task model"``...), for messages; ``None``, what ``model_type`` says of an
    existing directory of no known kind, is nothing mathgraph loads."""
    if kind is None:
        return "nothing mathgraph can load (no config file of a known kind in it)"
    return MODEL_TYPES[kind][0] if kind in MODEL_TYPES else f"a model of type {kind!r}"


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"cannot read {path}: {err}") from err
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} must hold a JSON object")
    return data


__all__ = [
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
