"""Encoding stays on the device the model was loaded on; bf16 only where the GPU has it.

(Batches moving to the device, and forwards there: ``test_meta_device.py``.)
"""

import torch

TEXTS = ["Find $x$ if $2x+3=7$.", "A shop sells 3 pens for $2. How much do 12 pens cost?"]


def test_encode_stays_on_the_model_device(tiny_encoder, monkeypatch):
    # as on a GPU machine: CUDA "available", but the model was loaded on the CPU (serve --device cpu)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    vectors = tiny_encoder.encode(TEXTS)
    assert vectors.shape[0] == 2
    assert next(tiny_encoder.model.parameters()).device.type == "cpu"


def test_bf16_only_where_the_gpu_has_it(monkeypatch):
    from mathgraph.models.encoder import cuda_autocast_dtype

    # a T4 or V100: bf16 only through emulation
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: including_emulation)
    assert cuda_autocast_dtype() == torch.float16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)
    assert cuda_autocast_dtype() == torch.bfloat16
