"""Reading a delta file (``models.delta``) without PyTorch: the one merge of a base's tensors with a delta's,
for PyTorch tensors (``models.delta.apply_delta``) and NumPy arrays (``models.onnx_forward``) alike."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from os import PathLike

from mathgraph.registry import CheckpointError

APPENDED_ROWS = "appended_rows"  # metadata: the tensors stored from a row on, {"name": first_row}
DELTA_NAME = "weights.delta.safetensors"  # the file name of a model stored as a delta, wherever it is


def merge_delta(
    base: Mapping,
    path: str | PathLike,
    framework: str,
    cast: Callable,
    concatenate: Callable,
) -> dict:
    """``base`` with the tensors of the delta file at ``path`` put in: each read with safetensors'
    ``framework`` (``"pt"``, ``"numpy"``), cast to its base tensor's dtype (``cast(tensor, reference)``), and
    a tensor stored from a row on put after the base's rows (``concatenate([reference, tensor])``).

    Raises ``CheckpointError`` for an unreadable file or a tensor that does not fit the base."""
    from safetensors import safe_open

    weights = dict(base)
    try:
        with safe_open(str(path), framework=framework) as f:
            appended = json.loads((f.metadata() or {}).get(APPENDED_ROWS, "{}"))
            for name in f.keys():
                tensor = f.get_tensor(name)
                reference = base.get(name)
                if reference is not None:
                    tensor = cast(tensor, reference)
                if name in appended:
                    if reference is None or reference.shape[0] != appended[name]:
                        raise CheckpointError(
                            f"{path}: {name} extends a base tensor of {appended[name]} rows, "
                            "which the base model does not have"
                        )
                    tensor = concatenate([reference, tensor])
                weights[name] = tensor
    except CheckpointError:
        raise
    except Exception as err:  # safetensors header, JSON metadata, dtype: all mean a damaged file
        raise CheckpointError(f"cannot read the weights file {path} (truncated or not safetensors): {err}") from err
    return weights


__all__ = ["APPENDED_ROWS", "DELTA_NAME", "merge_delta"]
