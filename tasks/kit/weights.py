"""Weights small enough to travel: the kit's start encoder in bf16 without unused vocabulary rows, and a job's
results as fp16 deltas cut into files of a bounded size.

The start encoder of a kit is the untrained architecture (the packaged all-MiniLM-L6-v2 with LaTeX rows): its
text encoder is stored in bf16, and of the word embeddings only the rows of tokens the kit's data holds (and
every special and LaTeX token). The graph side is not stored: it starts fresh from the seed where the kit
runs. ``expand_text_state`` gives the full-size text weights back, with zero rows for the tokens left out;
those rows are never read in training (no packed text holds them, and masked-language-model noise draws its
random tokens from the kept rows), and the release puts the packaged MiniLM's own rows back.

``save_split`` writes tensors to safetensors files of at most ``max_bytes`` each; ``load_split`` reads them
back into one state and its ``appended_rows`` metadata (``models.delta``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from mathgraph.models.comus import CheckpointError
from mathgraph.models.delta import APPENDED_ROWS

WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"  # in the text encoder's own names (no "text." prefix)
KEPT_ROWS = "kept_rows"  # the word-embedding rows stored, ascending


def save_compact_text_state(path: Path, state: Mapping[str, torch.Tensor], kept_rows: Sequence[int]) -> int:
    """Write a text encoder's ``state`` in bf16 with only ``kept_rows`` of its word embeddings; returns bytes."""
    from safetensors.torch import save_file

    rows = torch.tensor(sorted(set(kept_rows)), dtype=torch.long)
    stored = {name: tensor.detach().to(torch.bfloat16).contiguous() for name, tensor in state.items()}
    stored[WORD_EMBEDDINGS] = stored[WORD_EMBEDDINGS][rows].contiguous()
    stored[KEPT_ROWS] = rows.to(torch.int32)
    rows_in_full = state[WORD_EMBEDDINGS].shape[0]
    save_file(stored, str(path), metadata={"word_embedding_rows": str(rows_in_full)})
    return path.stat().st_size


def expand_text_state(path: Path) -> dict[str, torch.Tensor]:
    """The float32 text-encoder state written by ``save_compact_text_state``: word embeddings at full size,
    zero in the rows not kept."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            rows_in_full = int((f.metadata() or {})["word_embedding_rows"])
            state = {name: f.get_tensor(name) for name in f.keys()}
    except Exception as err:  # a damaged or truncated file
        raise CheckpointError(f"cannot read the kit's start weights {path}: {err}") from err
    kept = state.pop(KEPT_ROWS).long()
    rows = state[WORD_EMBEDDINGS]
    full = torch.zeros(rows_in_full, rows.shape[1], dtype=torch.float32)
    full[kept] = rows.float()
    state = {name: tensor.float() for name, tensor in state.items()}
    state[WORD_EMBEDDINGS] = full
    return state


def kept_rows_of(path: Path) -> torch.Tensor:
    """The word-embedding rows a compact text state holds."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        return f.get_tensor(KEPT_ROWS).long()


def save_split(
    prefix: Path, state: Mapping[str, torch.Tensor], appended: Mapping[str, int], max_bytes: int
) -> list[Path]:
    """Write ``state`` to ``PREFIX-00.safetensors``, ``PREFIX-01.safetensors``... each at most ``max_bytes``
    (tensors whole, in name order), every file with the ``appended_rows`` of its own tensors."""
    from safetensors.torch import save_file

    parts: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    header_allowance = 64 * 1024  # safetensors' JSON header: names, shapes and offsets
    for name in sorted(state):
        tensor = state[name].contiguous()
        nbytes = tensor.numel() * tensor.element_size()
        if nbytes + header_allowance > max_bytes:
            raise ValueError(f"{name} alone ({nbytes:,} bytes) is larger than a file may be ({max_bytes:,})")
        if parts[-1] and size + nbytes + header_allowance > max_bytes:
            parts.append({})
            size = 0
        parts[-1][name] = tensor
        size += nbytes
    paths = []
    for number, part in enumerate(parts):
        path = prefix.with_name(f"{prefix.name}-{number:02d}.safetensors")
        rows = {name: appended[name] for name in part if name in appended}
        save_file(part, str(path), metadata={APPENDED_ROWS: json.dumps(rows)})
        paths.append(path)
    return paths


def load_split(paths: Sequence[Path]) -> tuple[dict[str, torch.Tensor], dict[str, int]]:
    """The tensors and ``appended_rows`` of the files ``save_split`` wrote (``CheckpointError`` if one is
    damaged)."""
    from safetensors import safe_open

    state: dict[str, torch.Tensor] = {}
    appended: dict[str, int] = {}
    if not paths:
        raise CheckpointError("no weight files to read")
    for path in paths:
        try:
            with safe_open(str(path), framework="pt") as f:
                appended.update(json.loads((f.metadata() or {}).get(APPENDED_ROWS, "{}")))
                state.update({name: f.get_tensor(name) for name in f.keys()})
        except Exception as err:
            raise CheckpointError(f"cannot read the weights file {path} (truncated or not safetensors): {err}") from err
    return state, appended


def join_split(paths: Sequence[Path], target: Path) -> Path:
    """One delta file (``models.delta``' format) from the parts ``save_split`` wrote."""
    from safetensors.torch import save_file

    state, appended = load_split(paths)
    save_file(state, str(target), metadata={APPENDED_ROWS: json.dumps(appended)})
    return target


__all__ = [
    "save_compact_text_state",
    "expand_text_state",
    "kept_rows_of",
    "save_split",
    "load_split",
    "join_split",
]
