"""Autocast questions answered on every device, the meta device (which has no autocast) included."""

import torch

from mathgraph.models.precision import autocast_dtype, full_precision


def test_autocast_dtype_and_full_precision():
    assert autocast_dtype("cpu") is None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert autocast_dtype("cpu") == torch.bfloat16
        with full_precision("cpu"):
            assert autocast_dtype("cpu") is None
            assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    assert autocast_dtype("meta") is None
    with full_precision("meta"):  # nothing to turn off, and no error
        assert (torch.ones(2, 2, device="meta") @ torch.ones(2, 2, device="meta")).device.type == "meta"
