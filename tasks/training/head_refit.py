"""Refit one pair head of a multi-task model on frozen vectors, with a new set of alignment features.

Re-training the whole multi-task model to give one head more alignment features (QAM's head reading the
solution graph's features, as the 0.4.0 model does) takes hours on a CPU. The encoder does not change, so its vectors need computing
only once: ``refit_head`` encodes every train and dev pair once (eval mode, no gradients), builds the head anew
for the new features, warm-started so that it gives the old head's logits before training, and trains only the
head on the cached vectors, keeping the epoch best on dev. The model then holds the new head and its config the
new feature names, so ``save_pretrained`` / ``save_delta`` write a model that reloads with them.

    inputs, gold = labelled_inputs("qam", "qam.train.jsonl")
    dev_inputs, dev_gold = labelled_inputs("qam", "qam.dev.jsonl")
    record = refit_head(model, "qam", inputs, gold, dev_inputs, dev_gold)
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence

import torch
from torch import nn

from mathgraph.models.multitask import MultiTaskModel
from mathgraph.models.prediction import feature_store
from mathgraph.models.task_batches import TaskBatch, TaskCollator, example_lengths, length_sorted_batches
from mathgraph.models.task_heads import TaskHead
from mathgraph.models.task_io import build_examples
from mathgraph.quiet import progress_bar

ALIGNMENT_WEIGHT = "alignment.linear.weight"  # the end of the name of AlignmentProjection's first layer's weight


def refit_head(
    model: MultiTaskModel,
    task: str,
    train_inputs: Sequence,
    train_gold: Sequence,
    dev_inputs: Sequence,
    dev_gold: Sequence,
    features: Sequence[str] | None = None,
    epochs: int = 10,
    lr: float = 1e-3,
    batch_size: int = 64,
    weight_decay: float = 0.01,
    seed: int = 0,
    say: Callable[[str], None] = print,
) -> dict:
    """Give ``task``'s head (a pair task whose head reads alignment features: QRC, QAM) the alignment
    ``features`` (default: every feature this mathgraph computes, ``available_features``) and
    train it alone on the frozen model's vectors of ``train_inputs`` (``(text_a, text_b)`` pairs, with
    ``train_gold`` labels: ``tasks.evaluation.labelled_inputs``) for ``epochs`` epochs (AdamW, cross-entropy,
    dropout on), keeping the epoch of best dev accuracy (the earlier on a tie).

    The model is changed in place: ``model.heads`` holds the new head and the task's config its feature names
    (views from ``for_task`` made before are stale). Returns the record of the refit: ``epochs``,
    ``dev_accuracy_before`` (the old head's), ``dev_accuracy_by_epoch``, ``train_loss_by_epoch``,
    ``chosen_epoch``, ``train_seconds`` (the head's training), ``encode_seconds``, ``n_train``, ``n_dev``,
    ``features`` and ``previous_features``.
    """
    task_id = model.for_task(task).task_id  # ValueError for a task the model has no head of
    config = model.config.task_configs[task_id]
    if config.task_type.input_shape != "pair" or not config.alignment:
        raise ValueError(f"refit_head refits a pair head that reads alignment features; {task}'s does not")
    if not train_inputs or not dev_inputs:
        raise ValueError("refit_head needs train and dev examples: dev picks the epoch")
    if epochs < 1:
        raise ValueError(f"refit_head trains for one or more epochs, not {epochs}")
    old_names = list(config.alignment_features)
    task_type = config.task_type.with_alignment(True, features)  # ValueError for a feature not computed
    names = list(task_type.alignment_names)  # None: every feature computed
    label_ids = {label: i for i, label in enumerate(config.labels)}

    started = time.perf_counter()
    train = _frozen_inputs(model, task_id, task_type, train_inputs, train_gold, label_ids, batch_size, "train")
    dev = _frozen_inputs(model, task_id, task_type, dev_inputs, dev_gold, label_ids, batch_size, "dev")
    encode_seconds = time.perf_counter() - started

    # The head trains on the CPU: a few thousand weights on cached vectors, and the refit is then the same on
    # every machine.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)  # dropout; every weight of the new head comes from the old one
        head = task_type.make_head(train.vectors.shape[-1], len(config.labels))
        warm_start(head, model.heads[task_id], old_names, names)
        before = _accuracy(task_type, head, dev)
        started = time.perf_counter()
        history = _train(task_type, head, train, dev, epochs, lr, batch_size, weight_decay, seed, say)
        train_seconds = time.perf_counter() - started
    accuracies = [accuracy for _, accuracy, _ in history]
    chosen = accuracies.index(max(accuracies))  # index() finds the earliest of equal ones
    head.load_state_dict(history[chosen][2])

    model.heads[task_id] = head.to(next(model.parameters()).device).eval()
    model.config.tasks[task_id] = {**model.config.tasks[task_id], "alignment_features": names}
    record = {
        "epochs": epochs,
        "dev_accuracy_before": round(before, 4),
        "dev_accuracy_by_epoch": [round(a, 4) for a in accuracies],
        "train_loss_by_epoch": [round(loss, 4) for loss, _, _ in history],
        "chosen_epoch": chosen + 1,
        "train_seconds": round(train_seconds, 1),
        "encode_seconds": round(encode_seconds, 1),
        "n_train": len(train_inputs),
        "n_dev": len(dev_inputs),
        "lr": lr,
        "batch_size": batch_size,
        "features": names,
        "previous_features": old_names,
    }
    say(
        f"{task} head refit: dev accuracy {record['dev_accuracy_before']} before, "
        f"{record['dev_accuracy_by_epoch'][chosen]} at epoch {chosen + 1} of {epochs}; "
        f"{len(names)} alignment features (was {len(old_names)})"
    )
    return record


def warm_start(head: nn.Module, old_head: nn.Module, old_names: Sequence[str], names: Sequence[str]) -> None:
    """Copy ``old_head``'s weights into ``head``, a head of the same task on the alignment features ``names``
    where the old one read ``old_names``: every tensor of the same shape as is, and of the alignment
    projection's first layer the column of each feature both read (matched by name), the new features' columns
    zero. The projection scales each feature on its own (``sign(x) log(1 + |x|)``; nothing learned or measured
    on data), so a zero column makes its feature read nothing: where ``names`` holds every old name, ``head``
    gives the logits of ``old_head``."""
    old_state = old_head.state_dict()
    state = head.state_dict()
    for name, tensor in state.items():
        if name not in old_state:
            raise ValueError(f"cannot warm-start {name}: the old head has no such tensor")
        old = old_state[name].to(tensor.device)
        if name.endswith(ALIGNMENT_WEIGHT):
            tensor.zero_()
            for column, feature in enumerate(names):
                if feature in old_names:
                    tensor[:, column] = old[:, old_names.index(feature)]
        elif old.shape == tensor.shape:
            tensor.copy_(old)
        else:
            raise ValueError(f"cannot warm-start {name}: {tuple(old.shape)} in the old head, {tuple(tensor.shape)} now")
    head.load_state_dict(state)


class _FrozenInputs:
    """What the head reads of each example, computed once: ``vectors: [n, k, dim]`` (the ``k`` problem
    vectors of each example: one for a cross-encoded pair, two for a bi-encoded one), ``alignment: [n, F]``
    and ``labels: [n]``."""

    def __init__(self, vectors: torch.Tensor, alignment: torch.Tensor, labels: torch.Tensor):
        self.vectors, self.alignment, self.labels = vectors, alignment, labels

    def batch(self, rows: torch.Tensor) -> tuple[torch.Tensor, TaskBatch]:
        """The problem vectors of ``rows`` in the layout ``TaskHead.logits`` reads (a batch's problems are
        all the first texts, then all the second ones) and their ``TaskBatch`` without problems."""
        vectors = self.vectors[rows].transpose(0, 1).reshape(-1, self.vectors.shape[-1])
        return vectors, TaskBatch(problems=None, labels=self.labels[rows], alignment=self.alignment[rows])


@torch.no_grad()
def _frozen_inputs(
    model: MultiTaskModel,
    task_id: int,
    task_type: TaskHead,
    inputs: Sequence,
    gold: Sequence,
    label_ids: dict[str, int],
    batch_size: int,
    part: str,
) -> _FrozenInputs:
    """Encode ``inputs`` once as ``MultiTaskModel.forward`` does (``vectors``, eval mode, batches of similar
    length as ``models.prediction`` makes them), with their alignment features as ``task_type`` names them."""
    unknown = sorted({str(g) for g in gold} - set(label_ids))
    if unknown:
        raise ValueError(f"{part} labels {unknown} are not the head's labels {sorted(label_ids)}")
    if len(gold) != len(inputs):
        raise ValueError(f"{len(inputs)} {part} inputs but {len(gold)} gold labels")
    model.eval()
    view = model.for_task(model.config.task_names[task_id])
    examples = build_examples(task_type, inputs)
    store = feature_store(view, [t for e in examples for t in task_type.example_texts(e)])
    collate = TaskCollator(task_type, store)  # its alignment: the features with the new names
    device = next(model.parameters()).device
    vectors: list = [None] * len(examples)
    alignment: list = [None] * len(examples)
    batches = length_sorted_batches(example_lengths(task_type, examples, store), batch_size)
    with model.merged_for(task_id):
        for rows in progress_bar(batches, desc=f"encoding {part}", unit="batch"):
            batch = collate([examples[i] for i in rows], with_labels=False).to(device)
            encoded = model.vectors(task_id, batch.problems).float().cpu()
            per_example = encoded.view(-1, len(rows), encoded.shape[-1]).transpose(0, 1)  # [B, k, dim]
            for j, i in enumerate(rows):
                vectors[i], alignment[i] = per_example[j], batch.alignment[j].cpu()
    labels = torch.tensor([label_ids[str(g)] for g in gold])
    return _FrozenInputs(torch.stack(vectors), torch.stack(alignment), labels)


def _train(
    task_type: TaskHead,
    head: nn.Module,
    train: _FrozenInputs,
    dev: _FrozenInputs,
    epochs: int,
    lr: float,
    batch_size: int,
    weight_decay: float,
    seed: int,
    say: Callable[[str], None],
) -> list[tuple[float, float, dict]]:
    """``(mean train loss, dev accuracy, head weights)`` after each epoch."""
    optimizer = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=weight_decay)
    order = torch.Generator().manual_seed(seed)
    history = []
    for epoch in range(1, epochs + 1):
        head.train()
        losses = []
        for rows in torch.randperm(len(train.labels), generator=order).split(batch_size):
            vectors, batch = train.batch(rows)
            loss = nn.functional.cross_entropy(task_type.logits(head, vectors, batch).float(), batch.labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item() * len(rows))
        train_loss = sum(losses) / len(train.labels)
        accuracy = _accuracy(task_type, head, dev)
        say(f"epoch {epoch}: train loss {train_loss:.4f}, dev accuracy {accuracy:.4f}")
        history.append((train_loss, accuracy, copy.deepcopy(head.state_dict())))
    return history


@torch.no_grad()
def _accuracy(task_type: TaskHead, head: nn.Module, inputs: _FrozenInputs) -> float:
    """The head's accuracy on ``inputs`` (eval mode: no dropout)."""
    head.eval()
    vectors, batch = inputs.batch(torch.arange(len(inputs.labels)))
    predicted = task_type.logits(head, vectors, batch).argmax(-1)
    return (predicted == batch.labels).float().mean().item()


__all__ = ["refit_head", "warm_start"]
