"""Writing a model package such as the shipped model (``models.package.ModelPackage`` reads and predicts with it;
``tasks.release.build`` builds the shipped one).

``write_package`` stores a pre-trained encoder and a multi-task model fine-tuned
from it as fp16 deltas (``models.delta``: the encoder against the packaged
all-MiniLM-L6-v2, the multi-task model against the encoder) with the TF-IDF
models (their arrays as float32), and a first ``config.json`` (late fusion off: no
weight chosen yet); ``finish_package`` adds ``release.json`` (late-fusion weights and
measured figures), the ``config.json`` made from it (``models.package.package_config``),
the model card and ``checksums.json``. ``export_package`` (``mathgraph export``) writes
a package, the shipped one unless told, as a self-contained directory (full weights,
no deltas: nothing to resolve against the packaged MiniLM), the form to publish on the
Hugging Face Hub.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from mathgraph.checksums import file_sha256
from mathgraph.files import apply_umask
from mathgraph.models.comus import TOKENIZER_DIR
from mathgraph.models.delta import DELTA_NAME, save_delta
from mathgraph.models.package import (
    CHECKSUMS_NAME,
    ENCODER_DIR,
    MULTITASK_DIR,
    ONNX_DIR,
    RELEASE_NAME,
    STRUCTURE_DIR,
    TFIDF_DIR,
    forget_checksums,
    package_config,
    text_encoder_base,
)
from mathgraph.registry import CONFIG_NAME, CheckpointError, describe, model_type, resolve

CARD_NAME = "MODEL_CARD.md"


def write_package(output: Path, encoder, multitask, tfidf_dirs: dict[str, Path]) -> dict[str, int]:
    """Write the encoder, the multi-task model and the TF-IDF models to ``output`` (replacing it) with a
    ``config.json`` that fuses nothing yet and their ``checksums.json``, so the package loads; returns the
    values stored per model."""
    if output.exists():
        shutil.rmtree(output)
    encoder_dir = output / ENCODER_DIR
    encoder_dir.mkdir(parents=True)
    encoder.model.save_config(encoder_dir)
    encoder.tokenizer.save_pretrained(encoder_dir / TOKENIZER_DIR)
    encoder.vocab.save_pretrained(encoder_dir)
    state = {name: tensor.detach().cpu() for name, tensor in encoder.model.state_dict().items()}
    base = text_encoder_base(encoder.model.config.text_encoder)
    stored = {"encoder": save_delta(encoder_dir / DELTA_NAME, state, base)}
    stored["multitask"] = multitask.save_delta(output / MULTITASK_DIR, encoder)
    for task, directory in tfidf_dirs.items():
        _copy_tfidf(Path(directory), output / TFIDF_DIR / task)
    unfused = {"weight": 0.0, "default": False}  # the weights are chosen on dev later (finish_package)
    tasks = {task: {"hybrid": unfused if task in tfidf_dirs else None} for task in multitask.config.task_names}
    _write_config(output, {"tasks": tasks})
    write_checksums(output)
    return stored


def finish_package(output: Path, release: dict) -> None:
    """Write ``release.json``, the ``config.json`` made from it (``package_config``: which models the package
    holds and the late-fusion weights dev chose) and the model card from ``release`` (see
    ``tasks.release.model_card``), and the checksums again."""
    from mathgraph.tasks.release.model_card import model_card

    (output / RELEASE_NAME).write_text(json.dumps(release, indent=1), encoding="utf-8")
    _write_config(output, release)
    (output / CARD_NAME).write_text(model_card(release), encoding="utf-8")
    write_checksums(output)


def _write_config(output: Path, release: dict) -> None:
    """``config.json``: model_type "package" and what the package holds (``models.package.package_config``)."""
    config = package_config(release)
    (output / CONFIG_NAME).write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")


def write_checksums(output: Path) -> None:
    """``checksums.json``: the sha256 of every file under ``output`` but itself."""
    files = sorted(p for p in output.rglob("*") if p.is_file() and p.name != CHECKSUMS_NAME)
    sums = {p.relative_to(output).as_posix(): file_sha256(p) for p in files}
    (output / CHECKSUMS_NAME).write_text(json.dumps(sums, indent=1), encoding="utf-8")
    forget_checksums()


def export_package(output: str | Path, model: str | Path = "shipped") -> Path:
    """The model package ``model`` (the shipped model unless told; any name ``mathgraph.registry.resolve``
    takes) as a self-contained directory at ``output``: the encoder and the multi-task model with their full
    weights (``save_pretrained``; no deltas), the TF-IDF and alignment models, ``release.json``, the model card,
    the ``config.json`` made from the release notes and new checksums. ``mathgraph.load(output)`` and
    ``mathgraph.Predictor.from_pretrained(output, task=...)`` read it as they read the shipped model."""
    from mathgraph.models.package import ModelPackage

    output = Path(output)
    if output.exists() and any(output.iterdir()):
        raise FileExistsError(f"{output} exists and is not empty: export to a new directory")
    source = resolve(model)
    held = model_type(source)
    if held != "package":
        raise CheckpointError(f"{model} holds {describe(held)}, not a model package: only packages are exported")
    package = ModelPackage(source, device="cpu")
    release = package.release_info()  # checked against its checksum, as every file copied below
    package.encoder.save_pretrained(output / ENCODER_DIR)
    package.multitask.save_pretrained(output / MULTITASK_DIR)
    for folder in (TFIDF_DIR, STRUCTURE_DIR, ONNX_DIR):
        if (source / folder).is_dir():
            shutil.copytree(package.path(folder), output / folder)
    for name in (RELEASE_NAME, CARD_NAME):
        shutil.copy2(package.path(name), output / name)
    _write_config(output, release)
    write_checksums(output)
    return output


def add_onnx_graphs(output: Path) -> dict:
    """Export the ONNX graphs of the package at ``output`` into ``output/onnx`` (``models.onnx_export``: the
    graphs without their weights, which the package already holds), name them in ``release.json`` and
    ``config.json`` (``"onnx"``) and write the checksums again; returns that entry."""
    from mathgraph.models.onnx_export import export_package_graphs
    from mathgraph.models.package import ModelPackage

    output = Path(output)
    package = ModelPackage(output, device="cpu")
    release = package.release_info()
    if (output / ONNX_DIR).exists():
        shutil.rmtree(output / ONNX_DIR)
    release["onnx"] = export_package_graphs(package, output / ONNX_DIR)
    (output / RELEASE_NAME).write_text(json.dumps(release, indent=1), encoding="utf-8")
    _write_config(output, release)
    write_checksums(output)
    return release["onnx"]


def _copy_tfidf(source: Path, target: Path) -> None:
    """A TF-IDF model directory with its float64 arrays stored as float32 (half the size; the figures in
    ``release.json`` are measured on these)."""
    from safetensors.numpy import load_file, save_file

    from mathgraph.models.tfidf import ARRAYS_FILE

    shutil.copytree(source, target)
    arrays = load_file(str(source / ARRAYS_FILE))
    save_file(
        {name: np.ascontiguousarray(a.astype(np.float32)) for name, a in arrays.items()}, str(target / ARRAYS_FILE)
    )
    apply_umask(target / ARRAYS_FILE)


__all__ = ["write_package", "finish_package", "write_checksums", "export_package", "add_onnx_graphs", "CARD_NAME"]
