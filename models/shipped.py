"""The trained model that ships inside the package (``mathgraph/data/shipped_model``).

    encoder/     the pre-trained COMUS encoder: MathEncoder.from_pretrained("shipped")
                 (``models.encoder.load_shipped_encoder``)
    multitask/   the multi-task model fine-tuned from it (KPC, QRC, QAM, SQR): `mathgraph predict TASK`
                 (``tasks.release.shipped.load_shipped_multitask``)
    tfidf/TASK/  the TF-IDF baselines the hybrid predictions fuse with
    release.json the hybrid weights chosen on dev, and the figures of the model card
    MODEL_CARD.md
    checksums.json  sha256 of every other file

Both models are stored as what differs from the model below them (``models.delta``,
fp16): the encoder from the packaged all-MiniLM-L6-v2, the multi-task model from the
encoder. Every file is checked against ``checksums.json`` before it is used, so a
damaged or edited install is refused with a ``CheckpointError`` naming the file.
Nothing here needs a network.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path

import torch

from mathgraph.checksums import file_sha256
from mathgraph.models.comus import CheckpointError

SHIPPED_DIR = Path(str(files("mathgraph") / "data" / "shipped_model"))
CHECKSUMS_NAME = "checksums.json"
RELEASE_NAME = "release.json"
ENCODER_DIR, MULTITASK_DIR, TFIDF_DIR, STRUCTURE_DIR = "encoder", "multitask", "tfidf", "structure"


def shipped_path(*parts: str, root: Path | None = None) -> Path:
    """A file or folder of the shipped model, after checking every file under it against its checksum."""
    root = SHIPPED_DIR if root is None else root
    path = root.joinpath(*parts)
    expected = _checksums(root)
    files = (
        [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and p != root / CHECKSUMS_NAME)
    )
    for file in files:
        name = file.relative_to(root).as_posix()
        if name not in expected:
            raise CheckpointError(f"the shipped model has a file {name} that its {CHECKSUMS_NAME} does not list")
    for name, digest in expected.items():
        if (root / name).is_relative_to(path):
            _check_file(root, name, digest)
    return path


def release_info(root: Path | None = None) -> dict:
    """``release.json``: hybrid weights per task (``hybrid``), and the figures of the model card."""
    return json.loads(shipped_path(RELEASE_NAME, root=root).read_text(encoding="utf-8"))


def text_encoder_base(name: str = "minilm") -> dict[str, torch.Tensor]:
    """The weights of the text encoder ``name`` (a model's ``text_encoder``: ``"minilm"`` is the packaged
    all-MiniLM-L6-v2) under ``ComusModel``'s names (``text.``): what the shipped encoder is stored against."""
    from mathgraph.models.text_encoder import load_text_encoder

    text, _ = load_text_encoder(name)
    return {f"text.{key}": tensor for key, tensor in text.state_dict().items()}


@cache
def _checksums(root: Path) -> dict[str, str]:
    path = root / CHECKSUMS_NAME
    if not path.is_file():
        raise CheckpointError(
            f"no shipped model in {root} (no {CHECKSUMS_NAME}): reinstall mathgraph, or pass --model DIR"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def forget_checksums() -> None:
    """Drop the checksum lists read so far (after a package is rewritten in the same process)."""
    _checksums.cache_clear()


def _check_file(root: Path, name: str, digest: str) -> None:
    path = root / name
    if not path.is_file():
        raise CheckpointError(f"the shipped model file {name} is missing: reinstall mathgraph")
    if file_sha256(path) != digest:
        raise CheckpointError(
            f"the shipped model file {name} does not match its checksum (damaged or edited): reinstall mathgraph"
        )


__all__ = ["SHIPPED_DIR", "shipped_path", "release_info", "text_encoder_base"]
