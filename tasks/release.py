"""Writing the shipped model (``models.shipped`` reads it) and predicting with it.

``write_package`` stores a pre-trained encoder and a multi-task model fine-tuned
from it as fp16 deltas (``models.delta``: the encoder against the packaged
all-MiniLM-L6-v2, the multi-task model against the encoder) with the TF-IDF
baselines (their arrays as float32); ``finish_package`` adds ``release.json``
(hybrid weights and measured figures), the model card and ``checksums.json``.
``shipped_predictor(task)`` is what ``mathgraph predict TASK`` uses without
``--model``: the multi-task model's head, fused with TF-IDF where dev said so.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from mathgraph.checksums import file_sha256
from mathgraph.files import apply_umask
from models.comus import TOKENIZER_DIR
from models.delta import DELTA_NAME, save_delta
from models.shipped import (
    CHECKSUMS_NAME,
    ENCODER_DIR,
    MULTITASK_DIR,
    RELEASE_NAME,
    STRUCTURE_DIR,
    TFIDF_DIR,
    forget_checksums,
    release_info,
    shipped_path,
    text_encoder_base,
)

CARD_NAME = "MODEL_CARD.md"


def load_shipped_multitask(root: Path | None = None):
    """The shipped multi-task model (KPC, QRC, QAM, SQR heads) as a ``MultiTaskModel`` (CPU, eval mode)."""
    from models.encoder import load_shipped_encoder
    from tasks.multitask import MultiTaskModel

    directory = shipped_path(MULTITASK_DIR, root=root)
    encoder = load_shipped_encoder(root)
    return MultiTaskModel.from_pretrained(directory, base=encoder)


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
    """Write ``release.json`` and the model card from ``release`` (see ``tasks.model_card``), and the
    checksums again."""
    from tasks.model_card import model_card

    (output / RELEASE_NAME).write_text(json.dumps(release, indent=1), encoding="utf-8")
    (output / CARD_NAME).write_text(model_card(release), encoding="utf-8")
    write_checksums(output)


def write_checksums(output: Path) -> None:
    """``checksums.json``: the sha256 of every file under ``output`` but itself."""
    files = sorted(p for p in output.rglob("*") if p.is_file() and p.name != CHECKSUMS_NAME)
    sums = {p.relative_to(output).as_posix(): file_sha256(p) for p in files}
    (output / CHECKSUMS_NAME).write_text(json.dumps(sums, indent=1), encoding="utf-8")
    forget_checksums()


def shipped_tfidf(task: str, root: Path | None = None):
    """The shipped TF-IDF baseline of ``task`` as a ``TfidfPredictor`` (checksums checked)."""
    from tasks.inference import TfidfPredictor
    from tasks.loading import load_model

    return TfidfPredictor(task, load_model(shipped_path(TFIDF_DIR, task, root=root)))


def shipped_structure(task: str, root: Path | None = None):
    """The shipped structure model of ``task`` (``tasks.structure``; checksums checked), or ``None`` when the
    package has none for it."""
    from tasks.structure import StructureModel

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
    from tasks.hybrid import HybridPredictor

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


def labelled_inputs(task: str, path: str | Path) -> tuple[list, list]:
    """The prediction inputs of a task file and their gold: labels (KPC's ``subject``, QRC's and QAM's
    ``label``), or SQR's graded relevance lists."""
    from tasks.data import sqr_relevance
    from tasks.inference import read_inputs

    rows, inputs, _ = read_inputs(task, path)
    if task == "sqr":
        return inputs, [list(sqr_relevance(row)) for _, row in rows]
    return inputs, [row["subject"] if task == "kpc" else row["label"] for _, row in rows]


def task_metric(task: str, gold: list):
    """``metric(results) -> float`` of a task against ``gold``: NDCG@3 for SQR, accuracy otherwise."""
    from tasks.hybrid import accuracy_metric, ndcg_metric

    return ndcg_metric(gold) if task == "sqr" else accuracy_metric(gold)


def _copy_tfidf(source: Path, target: Path) -> None:
    """A TF-IDF model directory with its float64 arrays stored as float32 (half the size; the figures in
    ``release.json`` are measured on these)."""
    from safetensors.numpy import load_file, save_file

    from tasks.baselines import ARRAYS_FILE

    shutil.copytree(source, target)
    arrays = load_file(str(source / ARRAYS_FILE))
    save_file(
        {name: np.ascontiguousarray(a.astype(np.float32)) for name, a in arrays.items()}, str(target / ARRAYS_FILE)
    )
    apply_umask(target / ARRAYS_FILE)


__all__ = [
    "write_package",
    "finish_package",
    "write_checksums",
    "shipped_tfidf",
    "shipped_structure",
    "shipped_parts",
    "shipped_predictor",
    "labelled_inputs",
    "task_metric",
    "CARD_NAME",
]
