"""Unsupervised SimCSE (Gao et al., 2021) on a mathgraph encoder, as JiuZhang 2.0 trains its exemplar retriever.

Each problem is encoded twice in training mode; the two dropout masks make two
views, whose vectors are the positive pair, and the other problems of the batch
are the negatives (in-batch InfoNCE, temperature 0.05 as in SimCSE):

    L = -1/B sum_i log exp(cos(v_i, v'_i) / tau) / sum_j exp(cos(v_i, v'_j) / tau)

The vector is the encoder's ``fused`` ``[CLS] ; mean node`` (default), its
``text`` ``[CLS]`` or its ``graph`` mean node, the same modes
``MathEncoder.encode`` and the search index use. The result is an encoder
directory that ``MathEncoder.from_pretrained`` and ``mathgraph index build --model`` load.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from models.heads import info_nce

SIMCSE_TEMPERATURE = 0.05
MODES = ("fused", "text", "graph")


class SimCSEModel(nn.Module):
    """``forward(ProblemBatch) -> {"loss"}``: two dropout views of every problem, in-batch InfoNCE."""

    def __init__(self, backbone: nn.Module, mode: str = "fused", temperature: float = SIMCSE_TEMPERATURE):
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
        self.backbone, self.mode, self.temperature = backbone, mode, temperature

    def vectors(self, batch) -> torch.Tensor:
        """``[B, d]`` vectors of ``mode`` (``fused``, ``text`` or ``graph``)."""
        output = self.backbone(**batch.as_model_inputs())
        return {"fused": output.fused, "text": output.cls, "graph": output.mean_node}[self.mode]

    def forward(self, batch) -> dict[str, torch.Tensor]:
        if len(batch) < 2:
            raise ValueError("SimCSE needs batches of 2 or more problems: the others are the negatives")
        first, second = self.vectors(batch), self.vectors(batch)
        return {"loss": info_nce(first, second, self.temperature)}


class _ParsingCollator:
    """Texts -> ``ProblemBatch``, parsing each batch when it is drawn (only the texts a run uses get parsed)."""

    def __init__(self, encoder):
        self.encoder = encoder

    def __call__(self, texts: Sequence[str]):
        return self.encoder.collator(self.encoder.parse(list(texts)))


def train_simcse(
    texts: Sequence[str],
    output_dir: str,
    model: str = "default",
    mode: str = "fused",
    steps: int = 1000,
    batch_size: int = 32,
    learning_rate: float = 3e-5,
    temperature: float = SIMCSE_TEMPERATURE,
    seed: int = 0,
    resume: bool = False,
    mixed_precision: str = "no",
) -> dict:
    """Train ``model`` (an encoder directory or ``"default"``) with SimCSE on ``texts`` for ``steps``
    steps and save the encoder to ``output_dir``. Returns the training history."""
    from mathgraph.encoder import MathEncoder
    from tasks.trainer import Trainer, TrainingConfig

    texts = [t for t in texts if t and t.strip()]
    if len(texts) < 2:
        raise ValueError(f"SimCSE needs at least 2 non-empty texts, got {len(texts)}")
    if batch_size < 2:
        raise ValueError(f"batch_size must be >= 2 (in-batch negatives), got {batch_size}")
    math_encoder = MathEncoder.from_pretrained(model, device="cpu")
    simcse = SimCSEModel(math_encoder.model, mode, temperature)
    loader = torch.utils.data.DataLoader(
        texts, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(seed),
        collate_fn=_ParsingCollator(math_encoder), drop_last=len(texts) > batch_size,  # no batch of 1
    )
    config = TrainingConfig(epochs=math.ceil(steps / len(loader)), max_steps=steps, learning_rate=learning_rate,
                            seed=seed, mixed_precision=mixed_precision)
    trainer = Trainer(simcse, loader, output_dir, config,
                      save=lambda module, directory: math_encoder.save_pretrained(directory))
    state = trainer.train(resume=resume)
    if trainer.accelerator.is_main_process:
        math_encoder.model.eval()
        math_encoder.save_pretrained(output_dir)
    return {"history": state.history, "steps": state.step}


__all__ = ["SimCSEModel", "train_simcse", "SIMCSE_TEMPERATURE"]
