"""The model of one task (KPC, QRC, QAM or SQR): an encoder, one problem vector per problem, and the task's head.

The head reads one problem vector per problem (``models.pooling``): COMUS's
``text ; mean node`` (``architecture="comus"``), the text encoder's pooled states
alone (``bert``: nothing is parsed), or ``text ; mean node`` of the text and graph
encoders run side by side without memory (``bert+gat``), all on the same backbone;
the text pooled by the mean of its tokens (``pooling``, default ``"mean"``) and
each half normed (``vector_norm``, ``models.pooling.SplitLayerNorm``).

What the head is, its loss, outputs and decoding come from the task's model side
(``models.task_heads``), named by the model's config (``TaskConfig``); prediction
from text is ``models.prediction``. ``TaskModel.from_pretrained(directory)`` reads
the config and the weights of a saved model.

A trained model directory holds the encoder (``save_pretrained``), the head and
the vector norm (``head.safetensors``) and ``task_config.json`` (the config, with
the label names and the alignment features the head reads).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from mathgraph.files import apply_umask
from mathgraph.models.alignment_features import feature_names
from mathgraph.models.batching import ProblemBatch
from mathgraph.models.encoder import MathEncoder
from mathgraph.models.frozen_prefix import FrozenTextPrefix
from mathgraph.models.pooling import DEFAULT_POOLING, POOLINGS, SplitLayerNorm, problem_vectors, vector_dim
from mathgraph.models.prediction import predict_inputs
from mathgraph.models.task_batches import TaskBatch
from mathgraph.models.task_heads import TaskHead, get_task_head
from mathgraph.registry import CheckpointError, read_config, resolve, write_model_type

TASK_CONFIG_NAME = "task_config.json"
TASK_MODEL_TYPE = "task-model"  # task_config.json's model_type (mathgraph.registry)
HEAD_NAME = "head.safetensors"
NORM_PREFIX = "vector_norm."  # the problem-vector norm's weights (SplitLayerNorm), saved in HEAD_NAME beside the head's


ARCHITECTURES = ("comus", "bert", "bert+gat")  # what makes the problem vector (TF-IDF trains elsewhere)
LEGACY_KEYS = {"encoder": "architecture"}  # configs saved before the rename
DEFAULT_PAIR_MODE = "cross"


def current_keys(data: dict) -> dict:
    """A saved config's fields with the names they have now (``encoder`` is ``architecture``)."""
    return {LEGACY_KEYS.get(key, key): value for key, value in data.items()}


@dataclass
class TaskConfig:
    """What a task model predicts and how it reads its data."""

    task: str
    architecture: str = "comus"
    labels: list[str] = field(default_factory=list)
    text_field: str = "problem"
    label_field: str = "subject"
    pooling: str = DEFAULT_POOLING
    pair_mode: str | None = None  # QRC/QAM: "cross" (default) or "bi"; None for the other tasks
    vector_norm: bool = True
    alignment: bool = False  # QRC/QAM/SQR: the head also reads each pair's alignment features (parsers.compare)
    # the names of the alignment features the head reads, in order (models.alignment_features); with alignment
    # and none given, every feature this mathgraph computes (available_features)
    alignment_features: list[str] | None = None

    def __post_init__(self) -> None:
        task = get_task_head(self.task)
        if self.architecture not in ARCHITECTURES:
            raise ValueError(f"unknown architecture {self.architecture!r}; choose one of {ARCHITECTURES} (or tfidf)")
        if self.pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {self.pooling!r}; choose one of {POOLINGS}")
        if self.pair_mode is None and task.input_shape == "pair":
            self.pair_mode = DEFAULT_PAIR_MODE
        if self.alignment_features is not None and not self.alignment:
            raise ValueError(f"{self.task}: alignment_features are the features of a head with alignment on")
        # refuses what the task cannot read: a pair mode, alignment, a feature this mathgraph does not compute
        task = task.with_pair_mode(self.pair_mode).with_alignment(self.alignment, self.alignment_features)
        if self.alignment:  # None became every feature computed (TaskHead.with_alignment)
            self.alignment_features = list(task.alignment_names)

    @property
    def task_type(self) -> TaskHead:
        """The model side of the task (``models.task_heads``) in this config's pair mode and alignment;
        ``tasks.task_types.task_of(config)`` is the task with its data side."""
        return (
            get_task_head(self.task)
            .with_pair_mode(self.pair_mode)
            .with_alignment(self.alignment, self.alignment_features)
        )

    @property
    def uses_graph(self) -> bool:
        """Whether the encoder reads the math syntax graph (``bert`` does not: nothing is parsed)."""
        return self.architecture != "bert"

    @classmethod
    def from_pretrained(cls, directory: str | Path) -> TaskConfig:
        """The config in a task model directory's ``task_config.json`` (what ``TaskModel.from_pretrained``
        reads); ``CheckpointError`` if it holds none."""
        directory = resolve(directory)  # a Hugging Face Hub id is downloaded
        try:
            data = read_config(directory, TASK_CONFIG_NAME)
            if isinstance(data, dict):
                data.pop("model_type", None)  # what the registry reads; models saved before it have none
            # Models saved before these options existed: [CLS], no vector norm, bi-encoder pairs.
            data.setdefault("pooling", "cls")
            data.setdefault("vector_norm", False)
            if get_task_head(data.get("task")).input_shape == "pair":
                data.setdefault("pair_mode", "bi")
            return cls.from_dict(data)
        except (OSError, json.JSONDecodeError, TypeError, ValueError) as err:
            raise CheckpointError(f"{directory} is not a trained task model: {err}") from err

    @classmethod
    def from_dict(cls, data: dict) -> TaskConfig:
        """The config of a saved dict (``asdict``: ``task_config.json``, or a task of a multi-task model's
        ``multitask_config.json``), with the keys it has now (``current_keys``). A head with alignment saved
        before ``alignment_features`` existed reads the set it was trained on, ``feature_names(aligned_with)``
        (the shipped model's QRC, QAM and SQR heads), not every feature computed now."""
        data = current_keys(data)
        if data.get("alignment") and "alignment_features" not in data:
            data["alignment_features"] = list(feature_names(get_task_head(data.get("task")).aligned_with))
        return cls(**data)


class TaskModel(nn.Module):
    """An encoder with the head of one task; ``forward(TaskBatch)`` gives the loss and outputs."""

    def __init__(self, encoder: MathEncoder, config: TaskConfig):
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

    def predict(self, inputs: Sequence, batch_size: int = 32, graphs=None, rows=None) -> list[dict]:
        """Predictions from text, one per input in input order (formats in ``models.task_io``): a ``str``
        (KPC), ``(text_a, text_b)`` (QRC, QAM) or ``(query, [candidates])`` (SQR) each
        (``models.prediction.predict_inputs``). ``graphs``: a ``parsers.graph_cache.ParsedGraphs`` holding
        the problems' graphs already parsed, and the cache the others are parsed through (None: the default
        graph cache); ``rows``: the alignment rows of the pairs (``models.alignment_features.AlignmentRows``;
        None: ``TRAINING_ROWS``)."""
        return predict_inputs(self, inputs, batch_size, graphs=graphs, rows=rows)

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
        write_model_type(directory, TASK_MODEL_TYPE)  # config.json says what the directory holds

    @classmethod
    def from_pretrained(cls, directory: str | Path, device: str | None = None) -> TaskModel:
        """Load a directory written by ``save_pretrained`` (safetensors only), its ``task_config.json`` read
        by ``TaskConfig.from_pretrained``, on ``device`` (default the CPU)."""
        from safetensors.torch import load_file

        directory = resolve(directory)  # a Hugging Face Hub id is downloaded
        config = TaskConfig.from_pretrained(directory)  # first: a directory of another kind fails fast
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
    "TaskConfig",
    "ARCHITECTURES",
    "current_keys",
    "TASK_CONFIG_NAME",
    "TASK_MODEL_TYPE",
    "HEAD_NAME",
]
