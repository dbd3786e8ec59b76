"""The multi-task model: one encoder serving KPC, QRC, QAM and SQR, one head per task.

Adapters on the text encoder (``MultiTaskConfig.adapter``):

- ``moe``: JiuZhang 2.0's mixture-of-experts FFN (``models.moe``) in the chosen
  layers; its load-balance and z-losses are added to the task loss, and the
  tokens each expert received are counted per task for the training log.
- ``cgc-lora``: CGC-LoRA (``models.cgc_lora``) on Q, K, V and the dense layers;
  the text encoder is frozen except the embeddings of the LaTeX tokens added to
  the pre-trained vocabulary (they start random); the LoRA experts, the task
  gate, the graph side and the heads train.
- ``reasonformer``: ReasonFormer's reasoning modules (``models.reasoning``): the
  text encoder's top ``reasoning_layers`` layers become one module per skill,
  composed per problem by a skill router at each of ``reasoning_depth`` steps
  (top ``reasoning_top_k``), with a stop gate after each step.
- ``none``: one dense encoder shared by all tasks.

``freeze_embeddings`` keeps the word, position and node-label embeddings as the
start encoder has them: with an encoder pre-trained with a frozen vocabulary, the
model differs from it in its layers, graph side and heads only, which is what the
shipped model stores (``tasks.release.package``).

``task_prompts`` (JiuZhang 2.0, Eq. 7) inserts one learned embedding per task
right after ``[CLS]`` and, with MoE, adds it to the router input.

``label_space``: ``per-task`` gives every task its own head. ``unified`` is
JiuZhang 2.0's extended multi-label setting (Section 3.2.3): the classification
tasks (KPC, QRC, QAM) share one classifier over the union of their labels,
trained with a binary cross-entropy per label (an example's own label is its
only positive, so it also pushes down the other tasks' labels), and predict the
best of their own labels. The classifier takes the pair features of
``PairClassificationHead``; a single problem (KPC) is the pair ``(u, u)``. SQR
keeps its ranking head.

``for_task(task)`` is the model as a single-task model of one task (``TaskView``),
whose ``predict`` is ``models.prediction.predict_inputs``. Training is
``tasks.training.multitask.train_multitask``.

A model directory holds ``multitask_config.json``, every weight in
``multitask.safetensors`` (encoder with its adapters, task prompts, heads),
the encoder's ``config.json``, tokenizer and graph vocabularies.
``MultiTaskModel.from_pretrained(directory)`` loads it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from mathgraph.errors import UserError
from mathgraph.files import apply_umask
from mathgraph.models.batching import DeviceBatch, ProblemBatch
from mathgraph.models.cgc_lora import apply_cgc_lora, merge_cgc_lora, unmerge_cgc_lora
from mathgraph.models.comus import TOKENIZER_DIR, ComusConfig, ComusModel
from mathgraph.models.delta import DELTA_NAME, apply_delta, save_delta
from mathgraph.models.encoder import MathEncoder
from mathgraph.models.heads import PairClassificationHead
from mathgraph.models.moe import add_moe_layers, moe_aux_loss, moe_inputs, moe_load_stats
from mathgraph.models.pooling import DEFAULT_POOLING, POOLINGS, problem_vectors, vector_dim
from mathgraph.models.prediction import predict_inputs
from mathgraph.models.reasoning import SKILLS, ReasoningConfig, ReasoningModules
from mathgraph.models.task_batches import TaskBatch
from mathgraph.models.task_heads import TASK_HEADS, TaskHead
from mathgraph.models.task_model import TaskConfig, current_keys
from mathgraph.models.text_encoder import first_added_latex_row
from mathgraph.registry import CheckpointError, read_config, resolve, write_model_type

ADAPTERS = ("none", "moe", "cgc-lora", "reasonformer")
LABEL_SPACES = ("per-task", "unified")
MULTITASK_CONFIG_NAME = "multitask_config.json"
MULTITASK_MODEL_TYPE = "multi-task-model"  # multitask_config.json's model_type (mathgraph.registry)
MULTITASK_WEIGHTS_NAME = "multitask.safetensors"
TASK_PROMPT_TOKEN = "[TASK]"  # how token_routes shows a task prompt among the tokens
SAMPLING = (
    "proportional",
    "uniform",
    "temperature",
)  # how training mixes the tasks' batches (tasks.training.task_mixing)


@dataclass
class MultiTaskBatch(DeviceBatch):
    """A ``TaskBatch`` of one task, with that task's position in ``MultiTaskConfig.tasks``."""

    task_id: int
    batch: TaskBatch

    def __len__(self) -> int:
        return len(self.batch)


@dataclass
class MultiTaskConfig:
    """The tasks (each a ``TaskConfig`` as a dict, labels included) and how the shared encoder is adapted."""

    tasks: list[dict]
    architecture: str = "comus"
    adapter: str = "none"
    moe_layers: str = "last-2"
    moe_experts: int = 4
    moe_top_k: int = 1
    task_prompts: bool = False
    lora_rank: int = 8
    lora_common: int = 2
    sampling: str = "proportional"
    temperature: float = 2.0
    label_space: str = "per-task"
    freeze_embeddings: bool = False
    skills: list[str] = field(default_factory=lambda: list(SKILLS))
    reasoning_depth: int = 3
    reasoning_layers: int = 1
    reasoning_top_k: int = 2
    reasoning_modules: str = "shared"
    reasoning_checkpointing: bool = False
    # how every head's problem vector pools the text (models.pooling; the tasks' own pooling fields are not read)
    pooling: str = DEFAULT_POOLING

    def __post_init__(self) -> None:
        if self.adapter not in ADAPTERS:
            raise ValueError(f"unknown adapter {self.adapter!r}; choose one of {ADAPTERS}")
        if self.label_space not in LABEL_SPACES:
            raise ValueError(f"unknown label space {self.label_space!r}; choose one of {LABEL_SPACES}")
        if self.pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {self.pooling!r}; choose one of {POOLINGS}")
        if self.sampling not in SAMPLING:
            raise ValueError(f"unknown sampling {self.sampling!r}; choose one of {SAMPLING}")
        names = [t["task"] for t in self.tasks]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"need one or more distinct tasks, got {names}")
        for task in self.task_configs:
            if task.architecture != self.architecture:
                raise ValueError(
                    f"task {task.task} uses architecture {task.architecture}, the model {self.architecture}"
                )
            if task.alignment and self.label_space == "unified":
                raise ValueError(
                    "the unified label space has one classifier for every task, which reads no "
                    "alignment features: use per-task heads with --alignment"
                )
        self.skills = list(self.skills)
        if self.adapter == "reasonformer":
            self.reasoning_config()  # checks the reasoning fields

    def reasoning_config(self) -> ReasoningConfig:
        """The ``models.reasoning`` layout of a ``reasonformer`` model."""
        return ReasoningConfig(
            skills=tuple(self.skills),
            layers=self.reasoning_layers,
            depth=self.reasoning_depth,
            top_k=self.reasoning_top_k,
            sharing=self.reasoning_modules,
            checkpointing=self.reasoning_checkpointing,
        )

    @property
    def task_configs(self) -> list[TaskConfig]:
        """Each task's config (``TaskConfig.from_dict``: a head saved before ``alignment_features`` reads the
        legacy set)."""
        return [TaskConfig.from_dict(t) for t in self.tasks]

    @property
    def task_names(self) -> list[str]:
        return [t["task"] for t in self.tasks]

    def label_offsets(self) -> dict[int, tuple[int, int]]:
        """``task_id -> (start, end)`` of each classification task's labels in the unified label space."""
        offsets, start = {}, 0
        for task_id, task in enumerate(self.tasks):
            if TASK_HEADS[task["task"]].classifies:
                offsets[task_id] = (start, start + len(task["labels"]))
                start += len(task["labels"])
        return offsets


@dataclass
class TokenRoutes:
    """``tokens[i]`` went to expert ``experts[layer][i]`` with router probability ``probabilities[layer][i]``
    (top-1 choice); ``layers`` are the encoder layer indices of the MoE layers (``mathgraph.routing_pictures`` draws them)."""

    text: str
    task: str
    tokens: list[str]
    layers: list[int]
    experts: list[list[int]]
    probabilities: list[list[float]]


@dataclass
class SkillRoutes:
    """Which skills a ``reasonformer`` model's routers activated at each reasoning step, for ``texts`` read as
    ``task``: ``weights[b][i][j]`` is the weight of skill ``skills[j]`` at step ``i`` for problem ``b`` (0 where
    the skill was not activated; a problem's activated weights sum to one) and ``stop_gates[b][i]`` the stop
    gate after step ``i`` (``mathgraph.routing_pictures`` draws them)."""

    task: str
    texts: list[str]
    skills: list[str]
    weights: list[list[list[float]]]
    stop_gates: list[list[float]]

    @property
    def depth(self) -> int:
        """Reasoning steps."""
        return len(self.stop_gates[0])

    def mean_weights(self) -> list[list[float]]:
        """``[step][skill]``: the mean weight over the problems."""
        return torch.tensor(self.weights).mean(0).tolist()

    def activation_rates(self) -> list[list[float]]:
        """``[step][skill]``: the share of problems that activated the skill at that step."""
        return (torch.tensor(self.weights) > 0).float().mean(0).tolist()

    def mean_stop_gates(self) -> list[float]:
        """``[step]``: the mean stop-gate value over the problems."""
        return torch.tensor(self.stop_gates).mean(0).tolist()


class MultiTaskModel(nn.Module):
    """A ``MathEncoder``'s backbone with the configured adapter, optional task prompts and one head per task."""

    def __init__(self, encoder: MathEncoder, config: MultiTaskConfig):
        super().__init__()
        self.encoder, self.config = encoder, config
        self.backbone = encoder.model
        text = self.backbone.text
        self.moe = (
            add_moe_layers(text, config.moe_layers, config.moe_experts, config.moe_top_k)
            if config.adapter == "moe"
            else []
        )
        # The frozen encoder keeps the embeddings of the LaTeX tokens added after pre-training trainable.
        self.task_gate = (
            apply_cgc_lora(
                text,
                len(config.tasks),
                config.lora_common,
                config.lora_rank,
                new_token_start=first_added_latex_row(encoder.tokenizer),
            )
            if config.adapter == "cgc-lora"
            else None
        )
        # The top text layers become the reasoning modules; the representation keeps COMUS's fusion layers.
        self.reasoning = (
            ReasoningModules.take_top_layers(text, config.reasoning_config(), keep=self.backbone.config.fusion_layers)
            if config.adapter == "reasonformer"
            else None
        )
        if config.freeze_embeddings:
            for embedding in (
                text.embeddings.word_embeddings,
                text.embeddings.position_embeddings,
                self.backbone.graph.label_embedding,
            ):
                embedding.weight.requires_grad_(False)
        hidden = self.backbone.config.text_hidden
        self.task_prompts = nn.Embedding(len(config.tasks), hidden) if config.task_prompts else None
        if self.task_prompts is not None:
            nn.init.normal_(self.task_prompts.weight, std=text.config.initializer_range)
        dim = vector_dim(self.backbone, config.architecture)
        self.label_offsets = config.label_offsets() if config.label_space == "unified" else {}
        self.unified_head = (
            PairClassificationHead(dim, max(end for _, end in self.label_offsets.values()))
            if self.label_offsets
            else None
        )
        # Classification tasks of the unified label space have no head of their own (an empty placeholder
        # keeps ``heads[task_id]`` aligned with the tasks).
        self.heads = nn.ModuleList(
            nn.Identity() if task_id in self.label_offsets else t.task_type.make_head(dim, len(t.labels))
            for task_id, t in enumerate(config.task_configs)
        )
        # Tokens routed to each expert, per task, since the last ``take_expert_load()`` (for the training log).
        self.expert_load = (
            torch.zeros(len(config.tasks), len(self.moe), config.moe_experts, dtype=torch.long) if self.moe else None
        )

    def vectors(self, task_id: int, problems: ProblemBatch) -> torch.Tensor:
        """Problem vectors ``[N, dim]`` with the adapters set for task ``task_id``."""
        inputs = problems.as_model_inputs()
        prompt = None
        if self.task_prompts is not None:
            prompt = self.task_prompts.weight[task_id].expand(len(problems), -1)
            inputs = _insert_after_cls(self.backbone.text, inputs, prompt)
        if self.task_gate is not None:
            self.task_gate.current_task = task_id
        with moe_inputs(self.moe, token_mask=inputs["attention_mask"].bool(), task_prompt=prompt):
            vectors = problem_vectors(
                self.backbone, self.config.architecture, inputs, self.config.pooling, reasoning=self.reasoning
            )
            if self.moe and self.training:
                stats = moe_load_stats(self.moe)
                self.expert_load = self.expert_load.to(stats.device)  # counted where routed: no sync per step
                self.expert_load[task_id] += stats
        return vectors

    def forward(self, batch: MultiTaskBatch) -> dict[str, torch.Tensor]:
        task = self.config.task_configs[batch.task_id].task_type
        vectors = self.vectors(batch.task_id, batch.batch.problems)
        if batch.task_id in self.label_offsets:
            outputs = self._unified_outputs(task, self.label_offsets[batch.task_id], vectors, batch.batch)
        else:
            outputs = task.outputs(self.heads[batch.task_id], vectors, batch.batch)
        if self.moe:
            aux = moe_aux_loss(self.moe)
            outputs["aux_loss"] = aux
            outputs["loss"] = outputs["loss"] + aux
        return outputs

    def _unified_outputs(
        self, task: TaskHead, offsets: tuple[int, int], vectors: torch.Tensor, batch: TaskBatch
    ) -> dict[str, torch.Tensor]:
        """Loss over the whole unified label space and ``logits`` over the task's own labels."""
        half = len(batch.labels)
        u, v = task.pair_vectors(vectors, batch)
        logits = self.unified_head(u, v).float()
        start, end = offsets
        targets = torch.zeros_like(logits)
        targets[torch.arange(half, device=logits.device), start + batch.labels] = 1.0
        # Multi-label: one sigmoid per label, summed over labels, averaged over the batch.
        loss = nn.functional.binary_cross_entropy_with_logits(logits, targets, reduction="sum") / half
        return {"loss": loss, "logits": logits[:, start:end]}

    def for_task(self, task: str) -> TaskView:
        """This model as a single-task model of ``task`` (what ``predict`` and ``evaluate`` take)."""
        if task not in self.config.task_names:
            raise UserError(f"this multi-task model has no {task} head (tasks: {self.config.task_names})")
        return TaskView(self, self.config.task_names.index(task))

    @torch.inference_mode()
    def token_routes(self, text: str, task: str | None = None) -> TokenRoutes:
        """Which expert each token of ``text`` goes to in every MoE layer, read as ``task`` (default: the
        first task)."""
        if not self.moe:
            raise ValueError("this model has no MoE layers (train it with --adapter moe)")
        view = self.for_task(task or self.config.task_names[0])  # checks the task
        if not text or not text.strip():
            raise ValueError("give a non-empty problem text")
        self.eval()
        batch = self.encoder.collator(self.encoder.parse([text])).to(next(self.parameters()).device)
        self.vectors(view.task_id, batch)
        tokens = self.encoder.tokenizer.convert_ids_to_tokens(batch.input_ids[0].tolist())
        if self.task_prompts is not None:
            tokens = tokens[:1] + [TASK_PROMPT_TOKEN] + tokens[1:]
        layers = [i for i, layer in enumerate(self.backbone.text.encoder.layer) if layer.intermediate in self.moe]
        experts, probabilities = [], []
        for module in self.moe:
            routing = module.last_routing
            chosen = routing.expert_index[0, :, 0]
            experts.append(chosen.tolist())
            probabilities.append(routing.probs[0].gather(-1, chosen[:, None])[:, 0].tolist())
        return TokenRoutes(text, self.config.task_names[view.task_id], tokens, layers, experts, probabilities)

    @torch.inference_mode()
    def skill_routes(self, texts: Sequence[str], task: str | None = None, batch_size: int = 32) -> SkillRoutes:
        """The skills the reasoning modules activate at each step for ``texts``, read as ``task`` (default:
        the first task), with the stop gates (a ``reasonformer`` model only)."""
        if self.reasoning is None:
            raise ValueError("this model has no reasoning modules (train it with --adapter reasonformer)")
        view = self.for_task(task or self.config.task_names[0])  # checks the task
        texts = list(texts)
        if not texts or any(not isinstance(t, str) or not t.strip() for t in texts):
            raise ValueError("give one or more non-empty problem texts")
        self.eval()
        device = next(self.parameters()).device
        weights, stop_gates = [], []
        for start in range(0, len(texts), batch_size):
            chunk = texts[start : start + batch_size]
            self.vectors(view.task_id, self.encoder.collator(self.encoder.parse(chunk)).to(device))
            trace = self.reasoning.last_trace
            dense = torch.zeros(len(chunk), len(trace.chosen), len(self.config.skills))
            for step, (chosen, step_weights) in enumerate(zip(trace.chosen, trace.weights)):
                dense[:, step].scatter_(1, chosen.cpu(), step_weights.float().cpu())
            weights += dense.tolist()
            stop_gates += torch.stack(trace.stop_gates, 1).float().cpu().tolist()
        return SkillRoutes(self.config.task_names[view.task_id], texts, list(self.config.skills), weights, stop_gates)

    @contextmanager
    def merged_for(self, task_id: int):
        """With CGC-LoRA, task ``task_id``'s update folded into the frozen weights for the block (Eq. 8:
        plain linear layers, no expert arithmetic per token), restored exactly after; otherwise nothing."""
        if self.task_gate is None:
            yield
            return
        merge_cgc_lora(self.backbone, task_id)
        try:
            yield
        finally:
            unmerge_cgc_lora(self.backbone)

    def take_expert_load(self) -> dict[str, list[list[int]]]:
        """Tokens per expert ``[layer][expert]`` for each task since the last call, then reset."""
        if self.expert_load is None:
            return {}
        load = {name: self.expert_load[i].tolist() for i, name in enumerate(self.config.task_names)}
        self.expert_load.zero_()
        return load

    # ------------------------------------------------------------ saving
    def save_pretrained(self, directory: str | Path) -> None:
        """All weights in ``multitask.safetensors``, the configs, tokenizer and vocabularies."""
        from safetensors.torch import save_model

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        save_model(self, str(directory / MULTITASK_WEIGHTS_NAME))
        apply_umask(directory / MULTITASK_WEIGHTS_NAME)
        self.backbone.save_config(directory)
        self.encoder.tokenizer.save_pretrained(directory / TOKENIZER_DIR)
        self.encoder.vocab.save_pretrained(directory)
        (directory / MULTITASK_CONFIG_NAME).write_text(
            json.dumps({"model_type": MULTITASK_MODEL_TYPE, **asdict(self.config)}, indent=1), encoding="utf-8"
        )
        write_model_type(directory, MULTITASK_MODEL_TYPE)  # config.json says what the directory holds

    @classmethod
    def from_pretrained(
        cls, directory: str | Path, device: str | None = None, base: MathEncoder | None = None
    ) -> MultiTaskModel:
        """Load a directory written by ``save_pretrained`` (safetensors only; ``CheckpointError`` if it cannot).

        With ``base`` (the encoder it was fine-tuned from), the directory holds only what differs from
        it (``models.delta``, ``DELTA_NAME``): how the shipped model is stored."""
        from safetensors.torch import load_model
        from transformers import AutoTokenizer

        from mathgraph.graph import GraphVocabulary

        directory = resolve(directory)  # a Hugging Face Hub id is downloaded
        try:
            data = read_config(directory, MULTITASK_CONFIG_NAME)
            if isinstance(data, dict):
                data.pop("model_type", None)  # what the registry reads; models saved before it have none
                data.setdefault("pooling", "cls")  # models saved before the field pooled by [CLS]
            config = MultiTaskConfig(**current_keys(data))
            if base is None:
                backbone = ComusModel(ComusConfig.from_dict(read_config(directory)))
                encoder = MathEncoder(
                    backbone,
                    AutoTokenizer.from_pretrained(directory / TOKENIZER_DIR),
                    GraphVocabulary.from_pretrained(directory),
                )
            else:
                encoder = base
        except (OSError, ValueError, TypeError, json.JSONDecodeError) as err:
            raise CheckpointError(f"{directory} is not a multi-task model: {err}") from err
        model = cls(encoder, config)
        if base is not None:
            model.load_delta(directory / DELTA_NAME)
        else:
            try:
                load_model(model, str(directory / MULTITASK_WEIGHTS_NAME))
            except Exception as err:  # safetensors header, missing or mis-shaped tensors alike
                raise CheckpointError(f"cannot load {directory / MULTITASK_WEIGHTS_NAME}: {err}") from err
        return model.to(device or "cpu").eval()

    def save_delta(self, directory: str | Path, base: MathEncoder) -> int:
        """Write this model as ``from_pretrained(directory, base=base)`` loads it: configs, tokenizer and
        vocabularies, and in ``DELTA_NAME`` only the (fp16) tensors that differ from ``base``'s.
        Returns the number of values stored."""
        directory = Path(directory)
        self.save_pretrained(directory)
        (directory / MULTITASK_WEIGHTS_NAME).unlink()
        return save_delta(directory / DELTA_NAME, _state(self), _backbone_state(base))

    def load_delta(self, path: Path) -> None:
        """Put the tensors of the delta file at ``path`` (``save_delta``) over this model's encoder's weights."""
        state = apply_delta(_backbone_state(self.encoder), path)
        missing, unexpected = self.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise CheckpointError(
                f"{path} does not fit the model: missing {sorted(missing)[:5]}, unexpected {sorted(unexpected)[:5]}"
            )


def _state(module: nn.Module) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().cpu() for name, tensor in module.state_dict().items()}


def _backbone_state(encoder: MathEncoder) -> dict[str, torch.Tensor]:
    """``encoder``'s weights under the names they have in a ``MultiTaskModel``."""
    return {f"backbone.{name}": tensor for name, tensor in _state(encoder.model).items()}


class TaskView(nn.Module):
    """One task of a ``MultiTaskModel``, with the ``encoder``, ``config`` and ``forward(TaskBatch)`` of a
    ``models.task_model.TaskModel``, so ``models.prediction.predict`` and
    ``tasks.training.finetune.evaluate_examples`` work on it unchanged."""

    def __init__(self, model: MultiTaskModel, task_id: int):
        super().__init__()
        self.model, self.task_id = model, task_id
        self.encoder, self.config = model.encoder, model.config.task_configs[task_id]

    def forward(self, batch: TaskBatch) -> dict[str, torch.Tensor]:
        return self.model(MultiTaskBatch(self.task_id, batch))

    def predict(self, inputs: Sequence, batch_size: int = 32, graphs=None, rows=None) -> list[dict]:
        """Predictions from text with this task's head, as ``TaskModel.predict`` gives them (``models.task_io``;
        ``graphs`` and ``rows`` as there); a CGC-LoRA model predicts with the task's update merged into its
        weights."""
        with self.model.merged_for(self.task_id):
            return predict_inputs(self, inputs, batch_size, graphs=graphs, rows=rows)


def _insert_after_cls(text_model: nn.Module, inputs: dict, prompt: torch.Tensor) -> dict:
    """``inputs`` with ``prompt: [B, d]`` as an extra token embedding at position 1 (mask and types widened)."""
    words = text_model.embeddings.word_embeddings(inputs["input_ids"])
    one = torch.ones_like(inputs["attention_mask"][:, :1])
    widened = dict(inputs)
    widened["inputs_embeds"] = torch.cat([words[:, :1], prompt[:, None].to(words.dtype), words[:, 1:]], dim=1)
    widened["attention_mask"] = torch.cat([inputs["attention_mask"][:, :1], one, inputs["attention_mask"][:, 1:]], 1)
    if inputs.get("token_type_ids") is not None:
        types = inputs["token_type_ids"]
        widened["token_type_ids"] = torch.cat([types[:, :1], torch.zeros_like(one), types[:, 1:]], dim=1)
    return widened


__all__ = [
    "MultiTaskConfig",
    "MultiTaskModel",
    "MultiTaskBatch",
    "TaskView",
    "TokenRoutes",
    "SkillRoutes",
    "ADAPTERS",
    "LABEL_SPACES",
    "SAMPLING",
    "MULTITASK_CONFIG_NAME",
    "MULTITASK_MODEL_TYPE",
    "MULTITASK_WEIGHTS_NAME",
]
