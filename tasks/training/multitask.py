"""Multi-task fine-tuning: one encoder serving KPC, QRC, QAM and SQR, one head per task
(``models.multitask.MultiTaskModel``).

Batches hold one task each and are mixed across tasks (``--sampling``):
``proportional`` visits every task's batches once per epoch in random order;
``uniform`` and ``temperature`` draw the task of each batch with probability
``1 / N_T`` or ``n_t^(1/T) / sum n^(1/T)`` (JiuZhang 2.0-style balancing), for
the same number of batches per epoch.

The adapters (``--adapter``: ``moe``, ``cgc-lora``, ``reasonformer``, ``none``), task
prompts, label spaces and frozen embeddings are the model's (``models.multitask``).
With ``reasonformer``, skill pre-training (``skill_pretraining_steps``,
``tasks.training.reasoning_pretraining``) can come first; adaptation trains with the
task loss only. ``mathgraph evaluate TASK --model DIR`` loads the result like a
single-task model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

import torch

from mathgraph.errors import UserError
from mathgraph.models.features import FeatureStore
from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
from mathgraph.models.task_batches import TaskCollator, example_lengths
from mathgraph.models.task_model import TaskConfig
from mathgraph.tasks.task_types import TASKS, load_examples, task_of
from mathgraph.tasks.training.finetune import evaluate_examples, load_start_encoder, require_two_labels
from mathgraph.tasks.training.reasoning_pretraining import pretrain_skills
from mathgraph.tasks.training.task_mixing import MultiTaskCollator, TaskMixingSampler
from mathgraph.tasks.training.trainer import LAST_CHECKPOINT, TrainingArguments, TrainingData, fit


def train_multitask(
    task_files: Sequence[tuple[TaskConfig, str, str | None]],
    args: TrainingArguments,
    model: str = "shipped",
    adapter: str = "none",
    architecture: str = "comus",
    skill_pretraining_steps: int = 0,
    routing_weight: float = 1.0,
    **config_options,
) -> dict:
    """Train one model on several tasks: ``task_files`` holds ``(TaskConfig, train_path, dev_path or None)``.

    ``config_options`` set ``MultiTaskConfig`` fields (``moe_layers``, ``moe_experts``,
    ``moe_top_k``, ``task_prompts``, ``lora_rank``, ``lora_common``, ``sampling``,
    ``temperature``, ``label_space``, and for ``reasonformer`` ``skills``, ``reasoning_depth``,
    ``reasoning_layers``, ``reasoning_top_k``, ``reasoning_modules``). The dev metric is the mean
    over tasks of their metrics (accuracy; NDCG@3 for SQR); the best epoch is saved to
    ``args.output_dir``. With ``reasonformer``, ``skill_pretraining_steps`` batches of skill
    pre-training (``tasks.training.reasoning_pretraining``, routing loss weighted ``routing_weight``) come
    before adaptation. Returns the history (and the skill pre-training's under ``skill_pretraining``).
    """
    if not task_files:
        raise UserError("give at least one task")
    if args.freeze_text_layers:
        raise UserError(
            "--freeze-text-layers is for single-task training: task prompts and adapters change "
            "what the text layers compute per task"
        )
    if skill_pretraining_steps and adapter != "reasonformer":
        raise UserError("skill pre-training is for --adapter reasonformer")
    train, dev = [], []
    for task_config, train_path, dev_path in task_files:
        task_config.architecture = architecture
        examples = load_examples(task_config, train_path, args.skip_bad)
        if not examples:
            raise UserError(f"{train_path}: no training examples")
        task_config.labels = task_config.task_type.label_names(examples)
        require_two_labels(task_config.task_type, task_config.labels, train_path)
        train.append(examples)
        dev.append(load_examples(task_config, dev_path, args.skip_bad) if dev_path else [])
    config = MultiTaskConfig(
        [asdict(t) for t, _, _ in task_files], architecture=architecture, adapter=adapter, **config_options
    )
    math_encoder = load_start_encoder(model)
    tasks = [t.task_type for t in config.task_configs]
    texts = [t for task, examples in zip(tasks * 2, [*train, *dev]) for e in examples for t in task.example_texts(e)]
    store = FeatureStore.for_run(math_encoder, texts, args, with_graphs=architecture != "bert")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(args.seed)  # adapter and head weights depend on the seed only
        multitask = MultiTaskModel(math_encoder, config)
    flat = [(task_id, example) for task_id, examples in enumerate(train) for example in examples]
    lengths = [n for task, examples in zip(tasks, train) for n in example_lengths(task, examples, store)]
    sampler = TaskMixingSampler(
        [len(e) for e in train], args.batch_size, config.sampling, config.temperature, args.seed, lengths
    )
    collate = MultiTaskCollator([TaskCollator(task, store, t.labels) for task, t in zip(tasks, config.task_configs)])
    result = {}
    # A resumed run whose adaptation has a checkpoint already has the skill pre-training in its weights.
    if skill_pretraining_steps and not (args.resume and (Path(args.output_dir) / LAST_CHECKPOINT).is_dir()):
        result["skill_pretraining"] = pretrain_skills(
            multitask, train, store, args, skill_pretraining_steps, routing_weight
        )
        args = replace(args, resume=False)
    state = fit(
        multitask,
        TrainingData(flat, sampler, collate),
        args,
        evaluate=(lambda m: evaluate_tasks(m, dev, store, args.eval_batch_size)) if any(dev) else None,
        metric_name="mean",
        save=lambda m, directory: m.save_pretrained(directory),
        epoch_log=lambda m: {"expert_load": m.take_expert_load()} if m.moe else {},
    )
    return {"history": state.history, "best_dev": state.best_metric, **result}


def evaluate_tasks(
    model: MultiTaskModel, dev: Sequence[Sequence], store: FeatureStore | None = None, batch_size: int = 32
) -> dict:
    """Dev metrics of every task with dev examples (``kpc_accuracy``, ``sqr_ndcg@3``...) and their ``mean``
    (of each task's own metric: accuracy, or NDCG@3 for SQR)."""
    metrics: dict = {}
    main = []
    for task_id, examples in enumerate(dev):
        if not examples:
            continue
        view = model.for_task(model.config.task_names[task_id])
        result = evaluate_examples(view, examples, store, batch_size)
        metrics.update({f"{view.config.task}_{k}": v for k, v in result.items()})
        main.append(result[task_of(view.config).metric])
    metrics["mean"] = sum(main) / len(main)
    return metrics


def parse_task_spec(spec: str) -> tuple[str, str, str | None]:
    """``TASK:TRAIN[:DEV]`` (the ``--task`` option) -> ``(task, train_path, dev_path)``."""
    parts = spec.split(":")
    if len(parts) not in (2, 3) or parts[0] not in TASKS or not all(parts[1:]):
        raise UserError(f"--task {spec!r}: expected TASK:TRAIN.jsonl[:DEV.jsonl] with TASK one of {tuple(TASKS)}")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


__all__ = ["train_multitask", "evaluate_tasks", "parse_task_spec"]
