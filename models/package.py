"""A model package: an encoder, a multi-task model, TF-IDF and alignment models, and the weights that fuse them.

The shipped model (``mathgraph/data/shipped_model``, the name ``"shipped"``) is one; an exported copy
(``mathgraph export``) or a copy on the Hugging Face Hub is another, and all load the same way:

    config.json     model_type "package", and what the package holds (``package_config``):
                    {"encoder": "encoder", "multitask": "multitask",
                     "tasks": {TASK: {"tfidf": {"path", "weight", "on"},
                                      "structure": {"path", "weight", "on"}}},
                     "search": {"encoder": "text:minilm", "tfidf": {...},
                                "structure": {"path", "weight", "on", "min_cosine"}}}
                    "on": whether the late fusion applies when the caller leaves ``hybrid`` unset
    encoder/        the pre-trained COMUS encoder (``MathEncoder.from_pretrained("shipped")``)
    multitask/      the multi-task model fine-tuned from it (KPC, QRC, QAM, SQR heads)
    tfidf/TASK/     the TF-IDF models the predictions are fused with (late fusion)
    structure/TASK/ the alignment models (gradient-boosted trees on graph alignment features)
    release.json    the figures of the model card (measured at release; nothing here reads them to predict)
    MODEL_CARD.md
    checksums.json  sha256 of every other file

The encoder and the multi-task model may be stored as what differs from the model below them
(``models.delta``, fp16): the encoder from the packaged all-MiniLM-L6-v2, the multi-task model from the
encoder. Every file is checked against ``checksums.json`` before it is used, so a damaged or edited package
is refused with a ``CheckpointError`` naming the file. Nothing here needs a network.
"""

from __future__ import annotations

import json
from functools import cache, cached_property
from os import PathLike
from pathlib import Path

from mathgraph.checksums import file_sha256
from mathgraph.errors import UserError
from mathgraph.registry import SHIPPED_DIR, CheckpointError, read_config

CHECKSUMS_NAME = "checksums.json"
RUNTIMES = ("torch", "onnx", "onnx-int8")
RELEASE_NAME = "release.json"
ENCODER_DIR, MULTITASK_DIR, TFIDF_DIR, STRUCTURE_DIR, ONNX_DIR = "encoder", "multitask", "tfidf", "structure", "onnx"


def package_config(release: dict) -> dict:
    """A package's ``config.json`` from the release notes (``release.json``) the release wrote: which models
    it holds and, per task and for search, the late-fusion weights dev chose and whether each is on when the
    caller does not say (``hybrid=None``)."""

    def fusion(entry: dict | None, path: str) -> dict | None:
        if entry is None:
            return None
        return {"path": path, "weight": entry["weight"], "on": entry["default"]}

    tasks = {
        task: {
            "tfidf": fusion(info["hybrid"], f"{TFIDF_DIR}/{task}"),
            "structure": fusion(info.get("structure"), f"{STRUCTURE_DIR}/{task}"),
        }
        for task, info in release["tasks"].items()
    }
    search = release.get("search", {})
    structure = search.get("structure")
    search_structure = fusion(structure, (structure or {}).get("path", f"{STRUCTURE_DIR}/sqr"))
    if search_structure is not None:
        search_structure["min_cosine"] = structure.get("min_cosine", 0.0)
    config = {
        "model_type": "package",
        "encoder": ENCODER_DIR,
        "multitask": MULTITASK_DIR,
        "tasks": tasks,
        "search": {"tfidf": fusion(search.get("hybrid"), f"{TFIDF_DIR}/sqr"), "structure": search_structure},
    }
    if "encoder" in search:  # search's first stage when it is not the package's encoder
        config["search"]["encoder"] = search["encoder"]
    if "onnx" in release:  # the graphs ONNX Runtime runs (models.onnx_export)
        config["onnx"] = release["onnx"]
    return config


class ModelPackage:
    """A package directory (see the module docstring), its parts loaded when first asked for.

    ``encode`` encodes with the package's encoder; ``predictor(task)`` predicts as ``mathgraph predict`` does.
    Both run on ``runtime``: ``"onnx"`` (ONNX Runtime on the CPU, ``models.onnx_package``; float32, what
    PyTorch computes within 1e-4), ``"onnx-int8"`` (the same graphs dynamically quantized to int8 on first
    use: faster, less exact), ``"torch"``, or ``None``: ``"onnx"`` when the package carries ONNX graphs, ONNX
    Runtime is installed and no device other than the CPU is asked for, else PyTorch. ``encoder`` and
    ``multitask`` are always the PyTorch models.
    """

    def __init__(self, root: str | PathLike, device=None, runtime: str | None = None):
        self.root = Path(root)
        self.device = device
        self.name_or_path = "shipped" if self.root == SHIPPED_DIR else str(self.root)
        self.config = self._config()
        self.runtime = self._runtime(runtime)

    @classmethod
    def from_pretrained(cls, directory: str | PathLike, device=None, runtime: str | None = None) -> ModelPackage:
        """The package in ``directory`` (``mathgraph.registry.load`` resolves names first); its neural models
        go to ``device`` (``None``: CUDA when available, else the CPU) when they load; ``runtime`` as the
        class says."""
        return cls(directory, device=device, runtime=runtime)

    def _runtime(self, runtime: str | None) -> str:
        from mathgraph.models.onnx_package import package_has_onnx

        if runtime not in RUNTIMES + (None,):
            raise UserError(f"unknown runtime {runtime!r}; choose one of {RUNTIMES}")
        on_cpu = self.device is None or str(self.device) == "cpu"
        onnx = runtime is not None and runtime.startswith("onnx")
        if onnx and not on_cpu:
            raise UserError(f"the {runtime} runtime runs on the CPU: use --runtime torch for --device {self.device}")
        if onnx and not package_has_onnx(self):
            raise CheckpointError(
                f"the package {self.name_or_path} carries no ONNX graphs (or onnxruntime is not installed): "
                "use --runtime torch"
            )
        if runtime is None:
            return "onnx" if on_cpu and package_has_onnx(self) else "torch"
        if runtime == "torch":
            require_torch("--runtime torch")
        return runtime

    @cached_property
    def onnx(self):
        """The package's networks under ONNX Runtime (``models.onnx_package.OnnxPackageRuntime``)."""
        from mathgraph.models.onnx_package import OnnxPackageRuntime

        return OnnxPackageRuntime(self, int8=self.runtime == "onnx-int8")

    def _config(self) -> dict:
        if (self.root / "config.json").is_file():
            self.path("config.json")  # checked against checksums.json
            return read_config(self.root)
        # a package written before packages had a config.json: the same facts from its release notes
        return package_config(self.release_info())

    def path(self, *parts: str) -> Path:
        """A file or folder of the package, after checking every file under it against its checksum."""
        return checked_path(self.root, *parts)

    def release_info(self) -> dict:
        """``release.json``: the figures of the model card."""
        self.path(RELEASE_NAME)  # checked against checksums.json
        return read_config(self.root, RELEASE_NAME)

    @property
    def tasks(self) -> tuple[str, ...]:
        """The tasks the package predicts."""
        return tuple(self.config["tasks"])

    @cached_property
    def encoder(self):
        """The package's pre-trained encoder, a ``MathEncoder`` in eval mode."""
        require_torch(f"the PyTorch models of the package {self.name_or_path}")
        return load_package_encoder(self, device=self.device)

    @cached_property
    def multitask(self):
        """The multi-task model (one head per task), a ``MultiTaskModel`` in eval mode."""
        require_torch(f"the PyTorch models of the package {self.name_or_path}")
        from mathgraph.models.delta import DELTA_NAME
        from mathgraph.models.multitask import MultiTaskModel

        directory = self.path(self.config["multitask"])
        if not (directory / DELTA_NAME).is_file():  # a self-contained export: full weights
            return MultiTaskModel.from_pretrained(directory, device=self.device)
        return MultiTaskModel.from_pretrained(directory, base=self.encoder, device=self.device)

    def encode(self, texts, **options):
        """The encoder's vectors of ``texts`` (``MathEncoder.encode``), on the package's runtime."""
        if self.runtime != "torch":
            return self.onnx.encode(texts, **options)
        return self.encoder.encode(texts, **options)

    def tfidf(self, task: str, setting: dict | None = None):
        """The TF-IDF model of ``task`` as a predictor (``TfidfPredictor``)."""
        from mathgraph.models.tfidf import TfidfModel, TfidfPredictor

        setting = setting or self._task(task)["tfidf"]
        return TfidfPredictor(task, TfidfModel.from_pretrained(self.path(setting["path"])))

    def structure(self, task: str, setting: dict | None = None):
        """The alignment model of ``task`` (a ``AlignmentModel``), or ``None`` when the package has none."""
        from mathgraph.models.alignment_model import AlignmentModel

        setting = setting if setting is not None else self._task(task)["structure"]
        return None if setting is None else AlignmentModel.from_pretrained(self.path(setting["path"]))

    def search_setting(self, part: str) -> dict | None:
        """How search fuses ``part`` (``"tfidf"`` or ``"structure"``) with the encoder's cosine, or ``None``."""
        return self.config.get("search", {}).get(part)

    def predictor(self, task: str, hybrid: bool | None = None):
        """The ``task`` head of the multi-task model, fused with the TF-IDF model and then the alignment model
        (late fusion; pair tasks only) when ``hybrid`` is True, or, with ``None``, each where dev said it
        helps (``config.json``); ``hybrid=False`` is the neural head alone."""
        from mathgraph.models.late_fusion import HybridPredictor

        setting = self._task(task)
        predictor = self.multitask.for_task(task) if self.runtime == "torch" else self.onnx.predictor(task)
        tfidf, structure = setting["tfidf"], setting.get("structure")
        if tfidf is not None and (tfidf["on"] if hybrid is None else hybrid):
            predictor = HybridPredictor(predictor, self._tfidf_predictor(task), tfidf["weight"])
        if structure is not None and (structure["on"] if hybrid is None else hybrid):
            predictor = HybridPredictor(predictor, self.structure(task, structure), structure["weight"])
        return predictor

    def _tfidf_predictor(self, task: str):
        cache = self.__dict__.setdefault("_tfidf_predictors", {})
        if task not in cache:
            cache[task] = self.tfidf(task)
        return cache[task]

    def _task(self, task: str) -> dict:
        if task not in self.config["tasks"]:
            raise ValueError(f"the package {self.name_or_path} has no {task} model (tasks: {', '.join(self.tasks)})")
        return self.config["tasks"][task]

    def __repr__(self) -> str:
        return f"ModelPackage({self.name_or_path!r}, tasks={self.tasks})"


TRAIN_EXTRA = 'pip install "mathgraph[train]"'


def require_torch(what: str) -> None:
    """``UserError`` naming the ``train`` extra when PyTorch is not installed (an install without
    ``mathgraph[train]``): ``what`` needs it. Finds PyTorch without importing it."""
    import importlib.util

    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UserError(f"{what} needs PyTorch, which comes with the training extra: {TRAIN_EXTRA}")


def onnx_encoder(name_or_dir: str | PathLike, device=None, runtime: str | None = None):
    """The encoder of the model package ``name_or_dir`` on ONNX Runtime (``OnnxPackageRuntime``: ``encode``,
    ``dimension``) when ``runtime`` puts it there (``ModelPackage``'s rule), else ``None``: PyTorch, or not a
    package (``runtime`` ``"onnx"`` for one is a ``UserError``)."""
    from mathgraph.registry import model_type, resolve

    if str(name_or_dir) == "untrained" or model_type(resolve(name_or_dir)) != "package":
        if runtime not in (None, "torch"):
            raise UserError(f"--runtime {runtime}: ONNX graphs come with model packages, not {name_or_dir}")
        return None
    package = ModelPackage.from_pretrained(resolve(name_or_dir), device=device, runtime=runtime)
    return None if package.runtime == "torch" else package.onnx


def load_package_encoder(package: ModelPackage, device=None):
    """The encoder of a model package (``models.package``) as a ``MathEncoder`` on ``device``, in eval mode:
    stored as a delta against its text encoder (the shipped model), or with full weights (an export)."""
    from transformers import AutoTokenizer

    from mathgraph.graph import GraphVocabulary
    from mathgraph.models.comus import TOKENIZER_DIR, ComusModel
    from mathgraph.models.delta import DELTA_NAME, apply_delta
    from mathgraph.models.encoder import MathEncoder, resolve_device

    directory = package.path(package.config["encoder"])
    if not (directory / DELTA_NAME).is_file():  # a self-contained export (mathgraph export)
        return MathEncoder.from_pretrained(directory, device=device)
    config = read_config(directory)
    state = apply_delta(text_encoder_base(config.get("text_encoder", "minilm")), directory / DELTA_NAME)
    model = ComusModel.from_state(config, state, where=directory / DELTA_NAME)
    tokenizer = AutoTokenizer.from_pretrained(directory / TOKENIZER_DIR)
    encoder = MathEncoder(model, tokenizer, GraphVocabulary.from_pretrained(directory))
    encoder.model.to(resolve_device(device)).eval()
    return encoder


def checked_path(root: Path, *parts: str) -> Path:
    """A file or folder of the package at ``root``, after checking every file under it against its checksum."""
    path = root.joinpath(*parts)
    expected = _checksums(root)
    files = (
        [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and p != root / CHECKSUMS_NAME)
    )
    for file in files:
        name = file.relative_to(root).as_posix()
        if name not in expected:
            raise CheckpointError(f"the model package has a file {name} that its {CHECKSUMS_NAME} does not list")
    for name, digest in expected.items():
        if (root / name).is_relative_to(path):
            _check_file(root, name, digest)
    return path


def text_encoder_base(name: str = "minilm") -> dict:
    """The weights of the text encoder ``name`` (a model's ``text_encoder``: ``"minilm"`` is the packaged
    all-MiniLM-L6-v2) under ``ComusModel``'s names (``text.``): what a package's encoder is stored against."""
    from mathgraph.models.text_encoder import text_encoder_state

    return {f"text.{key}": tensor for key, tensor in text_encoder_state(name).items()}


@cache
def _checksums(root: Path) -> dict[str, str]:
    path = root / CHECKSUMS_NAME
    if not path.is_file():
        raise CheckpointError(
            f"no model package in {root} (no {CHECKSUMS_NAME}): reinstall mathgraph, or pass --model DIR"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def forget_checksums() -> None:
    """Drop the checksum lists read so far and the files found to match them (after a package is rewritten
    in the same process)."""
    _checksums.cache_clear()
    _CHECKED.clear()


# (path, size, modification time, digest) of the files found to match their checksum in this process: a package
# reads the same folder several times while it loads, and a file is hashed again only when it changed
_CHECKED: set[tuple[str, int, int, str]] = set()


def _check_file(root: Path, name: str, digest: str) -> None:
    path = root / name
    if not path.is_file():
        raise CheckpointError(f"the model package file {name} is missing: reinstall mathgraph, or export it again")
    stat = path.stat()
    seen = (str(path), stat.st_size, stat.st_mtime_ns, digest)
    if seen in _CHECKED:
        return
    if file_sha256(path) != digest:
        raise CheckpointError(
            f"the model package file {name} does not match its checksum (damaged or edited): "
            "reinstall mathgraph, or export it again"
        )
    _CHECKED.add(seen)


__all__ = [
    "ModelPackage",
    "RUNTIMES",
    "package_config",
    "load_package_encoder",
    "onnx_encoder",
    "checked_path",
    "text_encoder_base",
    "forget_checksums",
    "require_torch",
    "TRAIN_EXTRA",
]
