"""Batches move to the model's device as a whole, and encoding stays on the device the model was loaded on.

A GPU is not needed: the ``meta`` device stands in for it, and on a CPU-only machine any tensor
left behind on the CPU shows up as a tensor that did not move.
"""

import dataclasses

import pytest
import torch
from accelerate.utils import send_to_device

from tasks.pretrain import PretrainingBatch, PretrainingCollator
from tasks.reasoning_pretraining import SkillBatch

TEXTS = ["Find $x$ if $2x+3=7$.", "A shop sells 3 pens for $2. How much do 12 pens cost?"]


def tensors(value) -> list[torch.Tensor]:
    """Every tensor inside a (nested) dataclass batch."""
    if isinstance(value, torch.Tensor):
        return [value]
    if dataclasses.is_dataclass(value):
        return [t for f in dataclasses.fields(value) for t in tensors(getattr(value, f.name))]
    return []


@pytest.fixture
def pretraining_batch(tiny_encoder) -> PretrainingBatch:
    return PretrainingCollator(tiny_encoder.collator)(tiny_encoder.parse(TEXTS))


def test_a_pretraining_batch_moves_every_tensor(pretraining_batch):
    moved = send_to_device(pretraining_batch, "meta")
    assert len(tensors(moved)) == len(tensors(pretraining_batch)) >= 13
    assert all(t.device.type == "meta" for t in tensors(moved))


def test_a_skill_batch_moves_its_payload(pretraining_batch):
    moved = send_to_device(SkillBatch("arithmetic", "mlm", pretraining_batch), "meta")
    assert (moved.skill, moved.source) == ("arithmetic", "mlm")
    assert tensors(moved) and all(t.device.type == "meta" for t in tensors(moved))


def test_encode_stays_on_the_model_device(tiny_encoder, monkeypatch):
    # as on a GPU machine: CUDA "available", but the model was loaded on the CPU (serve --device cpu)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    vectors = tiny_encoder.encode(TEXTS)
    assert vectors.shape[0] == 2
    assert next(tiny_encoder.model.parameters()).device.type == "cpu"


def test_bf16_only_where_the_gpu_has_it(monkeypatch):
    from models.encoder import cuda_autocast_dtype

    # a T4 or V100: bf16 only through emulation
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: including_emulation)
    assert cuda_autocast_dtype() == torch.float16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)
    assert cuda_autocast_dtype() == torch.bfloat16
