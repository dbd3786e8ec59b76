"""Weights stored as differences from a base: round trip, appended rows, fp16, damaged files."""

import pytest
import torch

from mathgraph.models.comus import CheckpointError
from mathgraph.models.delta import apply_delta, save_delta, weights_delta


def _base():
    return {
        "same": torch.arange(6.0).reshape(2, 3),
        "changed": torch.ones(2, 2),
        "vocab": torch.arange(12.0).reshape(4, 3),
    }


def test_only_what_differs_is_stored_and_appended_rows_keep_their_suffix():
    base = _base()
    weights = {
        "same": base["same"].clone(),
        "changed": torch.full((2, 2), 3.0),
        "vocab": torch.cat([base["vocab"], torch.full((2, 3), 7.0)]),
        "fresh": torch.zeros(5),
    }
    stored, appended = weights_delta(weights, base)
    assert sorted(stored) == ["changed", "fresh", "vocab"]
    assert appended == {"vocab": 4}
    assert torch.equal(stored["vocab"], torch.full((2, 3), 7.0))  # only the 2 new rows


def test_round_trip_through_a_file_in_fp16(tmp_path):
    base = _base()
    weights = {
        "same": base["same"].clone(),
        "changed": torch.tensor([[0.1, 0.2], [0.3, 0.4]]),
        "vocab": torch.cat([base["vocab"], torch.tensor([[1.5, 2.5, 3.5]])]),
        "step": torch.tensor(3),
    }
    values = save_delta(tmp_path / "d.safetensors", weights, base)
    assert values == 4 + 3 + 1  # changed, one appended row, the int tensor
    restored = apply_delta(base, tmp_path / "d.safetensors")
    assert restored["same"] is base["same"]
    assert restored["changed"].dtype == torch.float32
    assert torch.allclose(restored["changed"], weights["changed"], atol=1e-3)  # fp16 rounding
    assert not torch.equal(restored["changed"], weights["changed"])
    assert torch.equal(restored["vocab"], weights["vocab"])  # these values are exact in fp16
    assert restored["step"].dtype == torch.int64 and restored["step"].item() == 3


def test_a_delta_on_the_wrong_base_or_a_truncated_file_is_refused(tmp_path):
    base = _base()
    weights = {**base, "vocab": torch.cat([base["vocab"], torch.ones(1, 3)])}
    save_delta(tmp_path / "d.safetensors", weights, base)
    with pytest.raises(CheckpointError, match="extends a base tensor of 4 rows"):
        apply_delta({**base, "vocab": torch.zeros(3, 3)}, tmp_path / "d.safetensors")
    data = (tmp_path / "d.safetensors").read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated or not safetensors"):
        apply_delta(base, tmp_path / "cut.safetensors")
