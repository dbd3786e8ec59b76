"""The model of one task (KPC, QRC, QAM or SQR): an encoder, one problem vector per problem, and the task's head.

The head reads one problem vector per problem (``models.pooling``): COMUS's
``text ; mean node`` (``architecture="comus"``), the text encoder's pooled states
alone (``bert``: nothing is parsed), or ``text ; mean node`` of the text and graph
encoders run side by side without memory (``bert+gat``), all on the same backbone;
the text pooled by the mean of its tokens (``pooling``, default ``"mean"``) and
each half normed (``vector_norm``, ``models.pooling.SplitLayerNorm``).

What the head is, its loss and outputs come from the task, and prediction from
text reads the task's input formats: both belong to the tasks layer
(``tasks.task_types``, ``tasks.training.finetune``), which this layer does not import. The
model reads them from its config (``TaskModelConfig``; ``tasks.training.finetune.TaskConfig``
is one), and ``from_pretrained`` is given the config's type to read a saved one.

A trained model directory holds the encoder (``save_pretrained``), the head and
the vector norm (``head.safetensors``) and ``task_config.json`` (the config, with
the label names).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import torch
from torch import nn

from mathgraph.files import apply_umask
from mathgraph.hub import local_directory
from mathgraph.models.batching import DeviceBatch, ProblemBatch
from mathgraph.models.comus import CheckpointError
from mathgraph.models.encoder import MathEncoder
from mathgraph.models.frozen_prefix import FrozenTextPrefix
from mathgraph.models.pooling import SplitLayerNorm, problem_vectors, vector_dim

TASK_CONFIG_NAME = "task_config.json"
TASK_MODEL_TYPE = "task-model"  # task_config.json's model_type (tasks.loading)
HEAD_NAME = "head.safetensors"
NORM_PREFIX = "vector_norm."  # the problem-vector norm's weights (SplitLayerNorm), saved in HEAD_NAME beside the head's


@dataclass
class TaskBatch(DeviceBatch):
    """A batch's problems in one ``ProblemBatch`` (in the task's ``batch_texts`` layout) and its targets:
    ``labels: [B]`` (classification) or ``candidates, candidate_mask, relevant: [B, N]`` (SQR), and the
    pairs' ``alignment`` features (``[B, F]``, SQR ``[B, N, F]``) when the head reads them."""

    problems: ProblemBatch
    labels: torch.Tensor | None = None
    candidates: torch.Tensor | None = None
    candidate_mask: torch.Tensor | None = None
    relevant: torch.Tensor | None = None
    alignment: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.labels) if self.labels is not None else len(self.candidates)


class TaskHead(Protocol):
    """What the model reads of its task (``tasks.task_types.Task``): the head, and the loss and outputs."""

    def make_head(self, dim: int, num_labels: int) -> nn.Module: ...

    def outputs(self, head: nn.Module, vectors: torch.Tensor, batch: TaskBatch) -> dict[str, torch.Tensor]: ...


class TaskModelConfig(Protocol):
    """The config of a ``TaskModel`` (``tasks.training.finetune.TaskConfig``), a dataclass: what the model reads of it."""

    architecture: str
    labels: list[str]
    pooling: str
    vector_norm: bool

    @property
    def task_type(self) -> TaskHead: ...

    def predict_inputs(self, model: TaskModel, inputs: Sequence, batch_size: int) -> list[dict]:
        """``model``'s results of ``inputs`` in the task's formats (``TaskModel.predict``)."""
        ...

    @classmethod
    def from_pretrained(cls, directory: Path) -> TaskModelConfig:
        """The config saved in ``directory``'s ``TASK_CONFIG_NAME``; ``CheckpointError`` if it holds none."""
        ...


class TaskModel(nn.Module):
    """An encoder with the head of one task; ``forward(TaskBatch)`` gives the loss and outputs."""

    def __init__(self, encoder: MathEncoder, config: TaskModelConfig):
        super().__init__()
        self.encoder, self.config = encoder, config
        self.backbone = encoder.model  # registered, so its weights train and save with the head
        self.head = config.task_type.make_head(vector_dim(self.backbone, config.architecture), len(config.labels))
        self.vector_norm = (
            SplitLayerNorm(self.backbone.config.text_hidden, self.backbone.config.gat_hidden)
            if config.vector_norm and config.architecture != "bert"
            else nn.Identity()
        )
        self.frozen_prefix: FrozenTextPrefix | None = None

    def freeze_text_layers(self, num_layers: int) -> None:
        """Freeze the embeddings and first ``num_layers`` text layers; cache their outputs per problem."""
        # COMUS and BERT+GAT run their last k text layers one by one beside the GAT: those must train.
        max_layers = len(self.backbone.text.encoder.layer) - (
            1 if self.config.architecture == "bert" else self.backbone.config.fusion_layers
        )
        self.frozen_prefix = FrozenTextPrefix(self.backbone, num_layers, max_layers)

    def vectors(self, problems: ProblemBatch) -> torch.Tensor:
        """One vector per problem ``[N, dim]``, as ``config.architecture`` defines it."""
        inputs = problems.as_model_inputs()
        if self.frozen_prefix is not None and problems.problem_ids is not None:
            inputs.update(text_states=self.frozen_prefix.states(problems), text_start=self.frozen_prefix.num_layers)
        return self.vector_norm(problem_vectors(self.backbone, self.config.architecture, inputs, self.config.pooling))

    def forward(self, batch: TaskBatch) -> dict[str, torch.Tensor]:
        return self.config.task_type.outputs(self.head, self.vectors(batch.problems), batch)

    def predict(self, inputs: Sequence, batch_size: int = 32) -> list[dict]:
        """Predictions from text, one per input in input order (formats in ``tasks.task_io``): a ``str``
        (KPC), ``(text_a, text_b)`` (QRC, QAM) or ``(query, [candidates])`` (SQR) each."""
        return self.config.predict_inputs(self, inputs, batch_size)

    # ------------------------------------------------------------ saving
    def save_pretrained(self, directory: str | Path) -> None:
        """Encoder files, ``head.safetensors`` and ``task_config.json`` in ``directory``."""
        from safetensors.torch import save_file

        directory = Path(directory)
        self.encoder.save_pretrained(directory)
        weights = {
            **self.head.state_dict(),
            **{f"{NORM_PREFIX}{k}": v for k, v in self.vector_norm.state_dict().items()},
        }
        save_file({k: v.detach().cpu().contiguous() for k, v in weights.items()}, str(directory / HEAD_NAME))
        apply_umask(directory / HEAD_NAME)
        with open(directory / TASK_CONFIG_NAME, "w", encoding="utf-8") as f:
            json.dump({"model_type": TASK_MODEL_TYPE, **asdict(self.config)}, f, indent=1)

    @classmethod
    def from_pretrained(
        cls, directory: str | Path, config_type: type[TaskModelConfig], device: str | None = None
    ) -> TaskModel:
        """Load a directory written by ``save_pretrained`` (safetensors only), its ``task_config.json`` read
        by ``config_type.from_pretrained`` (``tasks.training.finetune.TaskConfig``)."""
        from safetensors.torch import load_file

        directory = local_directory(directory)  # a Hugging Face Hub id is downloaded
        config = config_type.from_pretrained(directory)  # first: a directory of another kind fails fast
        model = cls(MathEncoder.from_pretrained(directory, device="cpu"), config)
        try:
            weights = load_file(str(directory / HEAD_NAME))
            model.vector_norm.load_state_dict(
                {k[len(NORM_PREFIX) :]: v for k, v in weights.items() if k.startswith(NORM_PREFIX)}
            )
            model.head.load_state_dict({k: v for k, v in weights.items() if not k.startswith(NORM_PREFIX)})
        except Exception as err:  # safetensors and shape errors alike
            raise CheckpointError(f"cannot load {directory / HEAD_NAME}: {err}") from err
        return model.to(device or "cpu").eval()


__all__ = [
    "TaskModel",
    "TaskBatch",
    "TaskModelConfig",
    "TaskHead",
    "TASK_CONFIG_NAME",
    "TASK_MODEL_TYPE",
    "HEAD_NAME",
]
