"""Writing the shipped model (``models.shipped`` reads it; ``tasks.release.shipped`` predicts with it).

``write_package`` stores a pre-trained encoder and a multi-task model fine-tuned
from it as fp16 deltas (``models.delta``: the encoder against the packaged
all-MiniLM-L6-v2, the multi-task model against the encoder) with the TF-IDF
baselines (their arrays as float32); ``finish_package`` adds ``release.json``
(hybrid weights and measured figures), the model card and ``checksums.json``.
``export_package`` writes the shipped model as a self-contained directory (full
weights, no deltas: nothing to resolve against the packaged MiniLM), the form to
publish on the Hugging Face Hub.
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
from mathgraph.models.shipped import (
    CHECKSUMS_NAME,
    ENCODER_DIR,
    MULTITASK_DIR,
    RELEASE_NAME,
    STRUCTURE_DIR,
    TFIDF_DIR,
    forget_checksums,
    shipped_path,
    text_encoder_base,
)

CARD_NAME = "MODEL_CARD.md"


def write_package(output: Path, encoder, multitask, tfidf_dirs: dict[str, Path]) -> dict[str, int]:
    """Write the encoder, the multi-task model and the TF-IDF baselines to ``output`` (replacing it) with
    their ``checksums.json``, so the package loads; returns the values stored per model."""
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
    write_checksums(output)
    return stored


def finish_package(output: Path, release: dict) -> None:
    """Write ``release.json`` and the model card from ``release`` (see ``tasks.release.model_card``), and the
    checksums again."""
    from mathgraph.tasks.release.model_card import model_card

    (output / RELEASE_NAME).write_text(json.dumps(release, indent=1), encoding="utf-8")
    (output / CARD_NAME).write_text(model_card(release), encoding="utf-8")
    write_checksums(output)


def write_checksums(output: Path) -> None:
    """``checksums.json``: the sha256 of every file under ``output`` but itself."""
    files = sorted(p for p in output.rglob("*") if p.is_file() and p.name != CHECKSUMS_NAME)
    sums = {p.relative_to(output).as_posix(): file_sha256(p) for p in files}
    (output / CHECKSUMS_NAME).write_text(json.dumps(sums, indent=1), encoding="utf-8")
    forget_checksums()


def export_package(output: str | Path, root: Path | None = None) -> Path:
    """The shipped model (or the package at ``root``) as a self-contained directory at ``output``: the encoder
    and the multi-task model with their full weights (``save_pretrained``; no deltas), the TF-IDF and structure
    models, ``release.json``, the model card and new checksums. ``mathgraph.load(output)`` and
    ``mathgraph.Predictor.from_pretrained(output, task=...)`` read it as they read the shipped model."""
    from mathgraph.tasks.release.shipped import load_shipped_multitask

    output = Path(output)
    if output.exists() and any(output.iterdir()):
        raise FileExistsError(f"{output} exists and is not empty: export to a new directory")
    multitask = load_shipped_multitask(root)
    multitask.encoder.save_pretrained(output / ENCODER_DIR)
    multitask.save_pretrained(output / MULTITASK_DIR)
    source = shipped_path(root=root)  # every file checked against its checksum
    for folder in (TFIDF_DIR, STRUCTURE_DIR):
        if (source / folder).is_dir():
            shutil.copytree(source / folder, output / folder)
    for name in (RELEASE_NAME, CARD_NAME):
        shutil.copy2(source / name, output / name)
    write_checksums(output)
    return output


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


__all__ = ["write_package", "finish_package", "write_checksums", "export_package", "CARD_NAME"]
