"""Model directories: which directory a name points to, what a directory holds, and the class that loads it.

The pattern of transformers' ``AutoConfig``: every directory mathgraph writes has a ``config.json`` whose
``model_type`` says what it holds, and a map from ``model_type`` to the class that loads it, kept here as
strings (``"module:Class"``) so that this module imports no torch and no model code until a directory loads.

    directory = resolve("shipped")          # a name -> a local directory
    model_type(directory)                   # "package"
    model = load("runs/kpc", device="cpu")  # resolve, then the class of its model_type: a TaskModel

A name is one of: ``"shipped"`` (alias ``"default"``), the package inside mathgraph; a local directory; a
Hugging Face Hub id ``org/name`` (downloaded once to the Hub's cache; ``HF_HUB_OFFLINE=1`` reads the cache
only). ``mathgraph.load``, ``mathgraph.Predictor``, the server and every command that takes ``--model`` or
``--index`` go through ``resolve`` and ``load``, so they accept and refuse the same names with the same message.

Devices: ``device=None`` means CUDA when a GPU is present, else the CPU, everywhere.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from mathgraph.errors import UserError

CONFIG_NAME = "config.json"
SHIPPED_NAMES = ("shipped", "default")  # "default": the name the shipped model had first, kept as an alias
UNTRAINED = "untrained"  # an encoder name only: the architecture before training, built from the package data
ENCODER_NAMES = (*SHIPPED_NAMES, UNTRAINED)
SHIPPED_DIR = Path(__file__).parent / "data" / "shipped_model"


class CheckpointError(UserError):
    """A model directory that cannot be loaded: a missing or damaged file, or a directory of no known model_type."""


class ModelNotFoundError(UserError, FileNotFoundError):
    """A name that is no model: not ``shipped``, not a local directory, not a Hugging Face Hub id. A ``UserError``
    (the caller's to put right) and a ``FileNotFoundError`` (what it was before)."""


class IndexNotFoundError(ModelNotFoundError):
    """A name that is no search index: not a local directory, not a Hugging Face Hub id."""


@dataclass(frozen=True)
class ModelType:
    """One type of model directory: what it is in words, and the ``module:attribute`` whose
    ``from_pretrained(directory, device=None)`` loads it."""

    words: str
    loader: str


MODEL_TYPES = {
    "comus": ModelType("an encoder", "mathgraph.models.encoder:MathEncoder"),
    "task-model": ModelType("a task model", "mathgraph.models.task_model:TaskModel"),
    "multi-task-model": ModelType("a multi-task model", "mathgraph.models.multitask:MultiTaskModel"),
    "tfidf": ModelType("a TF-IDF model", "mathgraph.models.tfidf:TfidfModel"),
    "structure": ModelType(
        "an alignment model (gradient-boosted trees on graph alignment features)",
        "mathgraph.models.alignment_model:AlignmentModel",
    ),
    "search-index": ModelType("a search index", "mathgraph.tasks.search.index:SearchIndex"),
    "package": ModelType(
        "a model package (an encoder, a multi-task model, TF-IDF and alignment models, fusion weights)",
        "mathgraph.models.package:ModelPackage",
    ),
}

# Directories written before every type put its model_type in config.json: the file that tells their type,
# looked at in this order (a task model's config.json then named its encoder: model_type "comus").
_LEGACY_FILES = (
    ("release.json", "package"),
    ("task_config.json", "task-model"),
    ("multitask_config.json", "multi-task-model"),
    ("manifest.json", "search-index"),
)
# a TF-IDF config.json of that time named only its "model" (a fixed past format, not a copy to keep in step)
_LEGACY_TFIDF = ("tfidf_classifier", "tfidf_ranker")


def resolve(name_or_dir: str | PathLike) -> Path:
    """The local directory a model name points to (see the module docstring). A name that is none of these
    raises ``ModelNotFoundError`` (a ``FileNotFoundError``); a file ``NotADirectoryError``."""
    name = str(name_or_dir)
    if name in SHIPPED_NAMES:
        return SHIPPED_DIR
    path = Path(name_or_dir).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise NotADirectoryError(f"{name} is a file; mathgraph models are directories")
    if not is_hub_id(name) or (path.parent != Path(".") and path.parent.is_dir()):
        # "runs/kpc" where runs/ exists is a local path with a typo, not a Hub repository
        raise ModelNotFoundError(f"no such model: {name}{_listing(path.parent)} ({_NAMES})")
    try:
        return snapshot_directory(name)
    except FileNotFoundError as err:
        raise ModelNotFoundError(f"no such model: {name}; as a Hugging Face Hub id: {err}") from None


_NAMES = "a model is 'shipped', a directory mathgraph wrote, or a Hugging Face Hub id org/name"
_INDEX_NAMES = "an index is a directory `mathgraph index build --output DIR` wrote, or a Hugging Face Hub id of one"


def resolve_index(name_or_dir: str | PathLike, check_type: bool = False) -> Path:
    """The directory the search index ``name_or_dir`` names (``resolve``, said of an index): a name that is no
    directory (nor a Hub id to be had) raises ``IndexNotFoundError``, "no such index: NAME"; ``shipped``, or
    with ``check_type`` a directory whose ``model_type`` is not an index (empty, a model), ``CheckpointError``
    saying what it holds."""
    name = str(name_or_dir)
    if name in SHIPPED_NAMES:
        raise CheckpointError(f"{name} is the shipped model, not a search index; {_INDEX_NAMES}")
    try:
        directory = resolve(name_or_dir)
    except ModelNotFoundError:
        parent = Path(name_or_dir).expanduser().parent
        raise IndexNotFoundError(f"no such index: {name}{_listing(parent)} ({_INDEX_NAMES})") from None
    except NotADirectoryError:
        raise NotADirectoryError(f"{name} is a file; {_INDEX_NAMES}") from None
    kind = model_type(directory) if check_type else "search-index"
    if kind != "search-index":
        raise CheckpointError(f"{name} is not a search index: it holds {describe(kind)}; {_INDEX_NAMES}")
    return directory


def read_config(directory: str | PathLike, name: str = CONFIG_NAME) -> dict:
    """The JSON object in ``directory/name`` (default ``config.json``): the one reader of model config files.
    A missing or unreadable file raises ``CheckpointError`` naming it."""
    path = Path(directory) / name
    if not path.is_file():
        raise CheckpointError(f"{directory} is not a mathgraph model directory: no {name}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise CheckpointError(f"{path} is not valid JSON: {err}") from err
    except (OSError, UnicodeDecodeError) as err:
        raise CheckpointError(f"cannot read {path}: {err}") from err
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} must hold a JSON object")
    return data


def write_model_type(directory: str | PathLike, type_name: str) -> None:
    """Name what ``directory`` holds: set ``model_type`` in its ``config.json`` (written when absent). A task
    model's ``config.json`` also holds its encoder's configuration; the encoder reads it whatever the type."""
    if type_name not in MODEL_TYPES:
        raise ValueError(f"unknown model_type {type_name!r}; known: {', '.join(MODEL_TYPES)}")
    path = Path(directory) / CONFIG_NAME
    config = read_config(directory) if path.is_file() else {}
    config["model_type"] = type_name
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def model_type(directory: str | PathLike) -> str | None:
    """What a model directory holds: its ``config.json``'s ``model_type``, or for a directory written before
    that field named every type, the type its files say; ``None`` for a directory of no known model_type."""
    directory = Path(directory)
    config = read_config(directory) if (directory / CONFIG_NAME).is_file() else {}
    declared = config.get("model_type")
    if declared and declared != "comus":
        return str(declared)
    for name, legacy_type in _LEGACY_FILES:
        if (directory / name).is_file():
            if name == "manifest.json" and read_config(directory, name).get("format") != "mathgraph-search-index":
                continue  # some other manifest.json
            return legacy_type
    if declared:
        return str(declared)
    return "tfidf" if config.get("model") in _LEGACY_TFIDF else None


def describe(type_name: str | None) -> str:
    """A ``model_type`` in words, for messages."""
    if type_name is None:
        return "nothing mathgraph can load (no config.json with a model_type)"
    return MODEL_TYPES[type_name].words if type_name in MODEL_TYPES else f"a model of type {type_name!r}"


def loader_of(type_name: str | None, directory: str | PathLike):
    """The class whose ``from_pretrained`` loads a directory of ``model_type`` ``type_name``, imported now."""
    if type_name not in MODEL_TYPES:
        known = "; ".join(f"{name} ({t.words})" for name, t in MODEL_TYPES.items())
        raise CheckpointError(
            f"{directory} holds {describe(type_name)}, which mathgraph does not load; it loads: {known}"
        )
    module, attribute = MODEL_TYPES[type_name].loader.split(":")
    return getattr(importlib.import_module(module), attribute)


def load(name_or_dir: str | PathLike = "shipped", device=None):
    """What the model ``name_or_dir`` holds, loaded by the class of its ``model_type`` on ``device`` (``None``:
    CUDA when available, else the CPU), in eval mode: a ``MathEncoder``, ``TaskModel``, ``MultiTaskModel``,
    TF-IDF model, alignment model, ``SearchIndex`` or ``ModelPackage`` (``"shipped"`` is one)."""
    directory = resolve(name_or_dir)
    return loader_of(model_type(directory), directory).from_pretrained(directory, device=device)


def _listing(directory: Path, limit: int = 8) -> str:
    """``"; runs/ holds a/, b/"``: what the existing parent of a missing path holds, so a typo shows."""
    if directory == Path(".") or not directory.is_dir():
        return ""
    names = sorted(p.name + "/" for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    held = f"{', '.join(names[:limit])}{more}" if names else "no directory"
    return f"; {directory}/ holds {held}"


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def is_hub_id(name: str) -> bool:
    """Whether ``name`` has the form of a Hub repository id (``org/name``)."""
    return bool(_HUB_ID.fullmatch(name))


def snapshot_directory(repo_id: str) -> Path:
    """The local snapshot of the Hub repository ``repo_id``, downloaded when not in the cache. A repository
    that is neither cached nor downloadable raises ``FileNotFoundError`` saying why in one line."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id=repo_id))
    except LocalEntryNotFoundError as err:
        raise FileNotFoundError(
            f"not in the Hugging Face cache, and the Hub cannot be reached (offline?): {_first_line(err)}"
        ) from err
    except HfHubHTTPError as err:
        raise FileNotFoundError(f"cannot be downloaded: {_first_line(err)}") from err


def _first_line(err: Exception) -> str:
    """The first line of an error's message: huggingface_hub's go on with advice on connections."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


__all__ = [
    "is_hub_id",
    "snapshot_directory",
    "resolve",
    "load",
    "model_type",
    "describe",
    "read_config",
    "write_model_type",
    "loader_of",
    "MODEL_TYPES",
    "ModelType",
    "CheckpointError",
    "ModelNotFoundError",
    "IndexNotFoundError",
    "resolve_index",
    "SHIPPED_NAMES",
    "UNTRAINED",
    "ENCODER_NAMES",
    "SHIPPED_DIR",
    "CONFIG_NAME",
]
