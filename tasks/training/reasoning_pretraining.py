"""Skill pre-training of a ``reasonformer`` multi-task model (ReasonFormer, Section 3.3).

Before adaptation, the reasoning modules learn one skill each. Every batch
teaches one skill with the objective or task that ``models.reasoning.SKILL_SOURCES``
maps it to: ``language`` with MLM and ``alignment`` with TGCL (on the training
texts of all tasks; ``tasks.training.pretrain``'s objectives, run on the reasoning
modules' output), ``knowledge`` with KPC and ``relation`` with QRC (their training
examples, when the run has those tasks). The router is told the skill: the loss
is the objective's plus ``routing_weight`` times the skill routing loss towards
``{skill, general}`` (``models.reasoning.skill_routing_loss``). Skills take turns
with equal shares of the batches (uniform sampling over skills), so a skill with
little data is not drowned by MLM. Skills with no source (``general``, or one
whose task is not in the run) get no batches of their own; ``general`` is in
every batch's target.

The stage's checkpoints go to ``OUTPUT/skill-pretraining`` (so ``resume`` works
for it too); adaptation then starts from its weights with the task loss only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn

from mathgraph.errors import UserError
from mathgraph.models.batching import DeviceBatch
from mathgraph.models.comus import ComusOutput
from mathgraph.models.encoder import MathEncoder
from mathgraph.models.features import FeatureStore
from mathgraph.models.multitask import MultiTaskBatch
from mathgraph.models.reasoning import SKILL_SOURCES, skill_routing_loss
from mathgraph.models.task_batches import TaskCollator, example_lengths
from mathgraph.tasks.training.pretrain import OBJECTIVES, PretrainingBatch, PretrainingCollator
from mathgraph.tasks.training.task_mixing import TaskMixingSampler
from mathgraph.tasks.training.trainer import LAST_CHECKPOINT, TrainingArguments, TrainingData, fit


class ReasoningModel(Protocol):
    """What skill pre-training needs of a ``reasonformer`` ``models.multitask.MultiTaskModel``, named here so
    that this module does not import the one that imports it (``MultiTaskModel`` runs ``pretrain_skills``)."""

    encoder: MathEncoder
    backbone: nn.Module
    reasoning: nn.Module | None
    config: Any  # a MultiTaskConfig: architecture, skills, task_names, task_configs


SKILL_PRETRAINING_DIR = "skill-pretraining"


@dataclass
class SkillBatch(DeviceBatch):
    """A batch that teaches ``skill`` through ``source`` (an objective of ``tasks.training.pretrain`` or a task)."""

    skill: str
    source: str
    payload: PretrainingBatch | MultiTaskBatch

    def __len__(self) -> int:
        return len(self.payload)


class SkillPretrainer(nn.Module):
    """A ``reasonformer`` ``ReasoningModel`` with the heads of the pre-training objectives it uses;
    ``forward(SkillBatch)`` gives ``loss = objective + routing_weight * routing_loss`` and both terms."""

    def __init__(self, model: ReasoningModel, objectives: Sequence[str], routing_weight: float = 1.0):
        super().__init__()
        if model.reasoning is None:
            raise UserError("skill pre-training needs a model with reasoning modules (--adapter reasonformer)")
        self.model, self.routing_weight = model, routing_weight
        self.heads = nn.ModuleDict({name: OBJECTIVES[name].make_head(model.backbone, 1.0) for name in objectives})

    def forward(self, batch: SkillBatch) -> dict[str, torch.Tensor]:
        if isinstance(batch.payload, MultiTaskBatch):
            objective = self.model(batch.payload)["loss"]
        else:
            objective = self._objective_loss(batch.source, batch.payload)
        reasoning = self.model.reasoning
        targets = reasoning.skill_targets([batch.skill] * len(batch))
        routing = skill_routing_loss(reasoning.last_trace.probabilities, targets)
        return {"loss": objective + self.routing_weight * routing, "objective_loss": objective, "routing_loss": routing}

    def _objective_loss(self, name: str, item: PretrainingBatch) -> torch.Tensor:
        """``name``'s loss with the token states after the reasoning modules (the graph side as COMUS has it)."""
        backbone, inputs = self.model.backbone, item.batch.as_model_inputs()
        mask = inputs["attention_mask"]
        if self.model.config.architecture == "bert":
            states, _ = backbone.run_text_layers(inputs["input_ids"], mask, inputs.get("token_type_ids"))
            nodes = mean_node = None
        else:
            output = backbone(**inputs, fuse=self.model.config.architecture == "comus")
            states, nodes, mean_node = output.token_states, output.node_states, output.mean_node
        states = self.model.reasoning(states, mask)
        output = ComusOutput(states, nodes, states[:, 0], mean_node, None, [])
        return OBJECTIVES[name].loss(self.heads[name], backbone, output, item)


class SkillCollator:
    """A list of ``(source_id, item)`` of one source -> ``SkillBatch`` (objective items are texts, masked
    for MLM as ``tasks.training.pretrain`` does; task items are examples)."""

    def __init__(self, sources: Sequence[tuple[str, str]], model: ReasoningModel, store: FeatureStore, seed: int):
        self.sources = list(sources)  # (skill, objective or task name)
        self.pretraining = PretrainingCollator(model.encoder.collator, seed=seed, to_batch=store.batch)
        self.tasks = {}  # task name -> (task_id, its collator)
        for task_id, task in enumerate(model.config.task_configs):
            if any(task.task == name for _, name in self.sources):
                self.tasks[task.task] = (task_id, TaskCollator(task.task_type, store, task.labels))

    def __call__(self, items: Sequence[tuple[int, object]]) -> SkillBatch:
        skill, source = self.sources[items[0][0]]
        payload = [item for _, item in items]
        if source in self.tasks:
            task_id, collate = self.tasks[source]
            return SkillBatch(skill, source, MultiTaskBatch(task_id, collate(payload)))
        return SkillBatch(skill, source, self.pretraining(payload))


def skill_sources(model: ReasoningModel) -> list[tuple[str, str]]:
    """``(skill, source)`` for every skill of ``model`` that has data in this run: an objective the
    architecture can compute, or a task the model has."""
    sources = []
    for skill in model.config.skills:
        source = SKILL_SOURCES.get(skill)
        if source in OBJECTIVES and (model.config.architecture != "bert" or not OBJECTIVES[source].needs_graph):
            sources.append((skill, source))
        elif source in model.config.task_names:
            sources.append((skill, source))
    return sources


def pretrain_skills(
    model: ReasoningModel,
    train: Sequence[Sequence],
    store: FeatureStore,
    args: TrainingArguments,
    steps: int,
    routing_weight: float = 1.0,
) -> dict:
    """Train ``model``'s skills for ``steps`` batches (module docstring); ``train[task_id]`` are the training
    examples of each task. Checkpoints go to ``args.output_dir/skill-pretraining``. Returns the history."""
    if steps < 1:
        raise UserError(f"skill pre-training needs steps >= 1, got {steps}")
    sources = skill_sources(model)
    if not sources:
        raise UserError(
            f"none of the skills {model.config.skills} has data in this run: skills are taught by {SKILL_SOURCES}"
        )
    tasks = model.config.task_names
    texts = list(
        dict.fromkeys(
            t
            for task, examples in zip(model.config.task_configs, train)
            for e in examples
            for t in task.task_type.example_texts(e)
        )
    )
    items, sizes, lengths = [], [], []
    for source_id, (_, source) in enumerate(sources):
        if source in tasks:
            task_id = tasks.index(source)
            part = list(train[task_id])
            lengths += example_lengths(model.config.task_configs[task_id].task_type, part, store)
        else:
            part = texts
            lengths += [store.length(t) for t in part]
        items += [(source_id, item) for item in part]
        sizes.append(len(part))
    sampler = TaskMixingSampler(sizes, args.batch_size, "uniform", seed=args.seed, lengths=lengths)
    objectives = [source for _, source in sources if source in OBJECTIVES]
    directory = Path(args.output_dir) / SKILL_PRETRAINING_DIR
    stage_args = replace(
        args, output_dir=str(directory), max_steps=steps, resume=args.resume and (directory / LAST_CHECKPOINT).is_dir()
    )
    state = fit(
        SkillPretrainer(model, objectives, routing_weight),
        TrainingData(items, sampler, SkillCollator(sources, model, store, args.seed)),
        stage_args,
    )
    return {"history": state.history, "skills": dict(sources)}


__all__ = [
    "SkillBatch",
    "SkillPretrainer",
    "SkillCollator",
    "skill_sources",
    "pretrain_skills",
    "SKILL_PRETRAINING_DIR",
]
