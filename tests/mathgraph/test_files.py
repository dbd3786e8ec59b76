"""Files mathgraph writes are readable as the user's umask says, not 0600 as safetensors and mkstemp leave them."""

import os
import stat

import pytest
import torch

from mathgraph.jsonl import atomic_writer
from mathgraph.models.delta import save_delta


@pytest.fixture(params=[0o022, 0o077])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_weights_and_jsonl_files_follow_the_umask(tmp_path, umask):
    save_delta(tmp_path / "w.safetensors", {"a": torch.ones(2)}, {})
    with atomic_writer(tmp_path / "rows.jsonl") as f:
        f.write("{}\n")
    expected = 0o666 & ~umask
    assert _mode(tmp_path / "w.safetensors") == expected
    assert _mode(tmp_path / "rows.jsonl") == expected


def test_a_saved_encoder_is_readable_by_others_under_umask_022(tiny_encoder, tmp_path):
    old = os.umask(0o022)
    try:
        tiny_encoder.save_pretrained(tmp_path / "model")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "model" / "model.safetensors") == 0o644
