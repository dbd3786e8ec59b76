"""Unsupervised SimCSE (Gao et al., 2021) on a mathgraph encoder, as JiuZhang 2.0 trains its exemplar retriever.

Each problem is encoded twice in training mode; the two dropout masks make two
views, whose vectors are the positive pair, and the other problems of the batch
are the negatives (in-batch InfoNCE, temperature 0.05 as in SimCSE):

    L = -1/B sum_i log exp(cos(v_i, v'_i) / tau) / sum_j exp(cos(v_i, v'_j) / tau)

The vector is the encoder's joint vector ``[CLS] ; mean node`` (default), its
``text`` ``[CLS]`` or its ``graph`` mean node, the same modes
``MathEncoder.encode`` and the search index use. The result is an encoder
directory that ``MathEncoder.from_pretrained`` and ``mathgraph index build --model`` load.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from mathgraph.errors import UserError
from mathgraph.models.encoder import canonical_mode
from mathgraph.models.heads import info_nce
from mathgraph.tasks.training.trainer import TrainingArguments, TrainingData, fit

SIMCSE_TEMPERATURE = 0.05


class SimCSEModel(nn.Module):
    """``forward(ProblemBatch) -> {"loss"}``: two dropout views of every problem, in-batch InfoNCE."""

    def __init__(self, backbone: nn.Module, mode: str = "joint", temperature: float = SIMCSE_TEMPERATURE):
        super().__init__()
        self.backbone, self.mode, self.temperature = backbone, canonical_mode(mode), temperature

    def vectors(self, batch) -> torch.Tensor:
        """``[B, d]`` vectors of ``mode`` (``joint``, ``text`` or ``graph``)."""
        output = self.backbone(**batch.as_model_inputs())
        return {"joint": output.joint, "text": output.cls, "graph": output.mean_node}[self.mode]

    def forward(self, batch) -> dict[str, torch.Tensor]:
        if len(batch) < 2:
            raise UserError("SimCSE needs batches of 2 or more problems: the others are the negatives")
        first, second = self.vectors(batch), self.vectors(batch)
        return {"loss": info_nce(first, second, self.temperature)}


def train_simcse(
    texts: Sequence[str],
    args: TrainingArguments,
    model: str = "shipped",
    mode: str = "joint",
    temperature: float = SIMCSE_TEMPERATURE,
) -> dict:
    """Train ``model`` (an encoder directory or ``"shipped"``) with SimCSE on ``texts`` for
    ``args.max_steps`` steps and save the encoder to ``args.output_dir``. Returns the training history.

    Graphs come from the graph cache; batches are length-bucketed.
    """
    from mathgraph.models.features import FeatureStore
    from mathgraph.tasks.training.bucketing import LengthBucketSampler
    from mathgraph.tasks.training.finetune import load_start_encoder

    texts = list(dict.fromkeys(t for t in texts if t and t.strip()))
    if len(texts) < 2:
        raise UserError(f"SimCSE needs at least 2 distinct non-empty texts, got {len(texts)}")
    if args.batch_size < 2:
        raise UserError(f"batch_size must be >= 2 (in-batch negatives), got {args.batch_size}")
    if args.freeze_text_layers:
        raise UserError("--freeze-text-layers does not apply to SimCSE: its two views come from dropout in every layer")
    math_encoder = load_start_encoder(model)
    simcse = SimCSEModel(math_encoder.model, mode, temperature)
    store = FeatureStore.for_run(math_encoder, texts, args)
    sampler = LengthBucketSampler(
        [store.length(t) for t in texts], args.batch_size, args.seed, drop_last=len(texts) > args.batch_size
    )  # no batch of 1
    state = fit(
        simcse,
        TrainingData(texts, sampler, store.batch),
        args,
        save=lambda module, directory: math_encoder.save_pretrained(directory),
    )
    math_encoder.model.eval()
    return {"history": state.history, "steps": state.step}


__all__ = ["SimCSEModel", "train_simcse", "SIMCSE_TEMPERATURE"]
