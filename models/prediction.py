"""Prediction from text with a task model: preprocess, forward, postprocess (the pattern of transformers'
pipelines).

``predict_inputs(model, inputs)`` is what ``TaskModel.predict`` and ``TaskView.predict`` run:

1. preprocess: each input is checked once for the task's shape (``models.task_io.check_input``)
   and made an example (``TaskHead.input_example``); the problems' graphs are taken from those passed in
   (``graphs``, a ``parsers.graph_cache.ParsedGraphs``) or parsed through the graph cache (the text-only
   ``bert`` architecture parses nothing) and their features built once (``FeatureStore``, which also
   carries the pairs' alignment ``rows`` passed in, for a head that reads them); examples of similar length
   are collated together, without labels;
2. forward: the model runs under ``torch.inference_mode()``;
3. postprocess: logits become ``{"label", "probabilities"}`` and scores ``{"scores", "ranking"}``
   (``models.task_io``), in input order.

``predict(model, examples)`` gives the decoded predictions of examples a task file holds: evaluation
(``tasks.training.finetune.evaluate_examples``) reads it. Nothing here imports the trainer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from mathgraph.models.features import FeatureStore
from mathgraph.models.task_batches import TaskCollator, example_lengths, length_sorted_batches
from mathgraph.models.task_io import build_examples, classification_result, label_values, ranking_result


def feature_store(model, texts: Sequence[str], args=None, graphs=None, rows=None) -> FeatureStore:
    """The ``FeatureStore`` of ``texts`` for a ``TaskModel`` (or ``TaskView``): graphs parsed once
    (through the graph cache), none for the text-only ``bert`` encoder. ``args`` (a training run's
    ``TrainingArguments``) chooses the graph cache and the parser processes; without it, ``graphs`` (a
    ``parsers.graph_cache.ParsedGraphs``: the graphs a prediction parsed, and its cache) or else the default
    graph cache, one process. ``rows``: the alignment rows of the pairs (``models.alignment_features.AlignmentRows``;
    None: ``TRAINING_ROWS``)."""
    if args is not None:
        return FeatureStore.for_run(model.encoder, texts, args, with_graphs=model.config.uses_graph)
    encoder = model.encoder
    return FeatureStore(
        encoder.collator,
        texts,
        parser=encoder.parser,
        with_graphs=model.config.uses_graph,
        graphs=graphs,
        alignment_rows=rows,
    )


@torch.inference_mode()
def predict_inputs(
    model, inputs: Iterable, batch_size: int = 32, store: FeatureStore | None = None, graphs=None, rows=None
) -> list[dict]:
    """``TaskModel.predict``: results of ``inputs`` (shapes in ``models.task_io``) with a ``TaskModel`` or
    ``TaskView`` (see the module docstring); ``store`` holds problems already built; else one is built from
    ``graphs`` and the alignment ``rows`` (``feature_store``)."""
    task = model.config.task_type
    examples = build_examples(task, inputs)
    if not examples:
        return []
    if store is None:
        store = feature_store(model, [t for e in examples for t in task.example_texts(e)], graphs=graphs, rows=rows)
    outputs = _run(model, examples, store, batch_size, raw=True)
    if task.classifies:
        names = label_values(task, model.config.labels)
        return [classification_result(out["logits"], names) for out in outputs]
    return [ranking_result(out["scores"][: len(e.candidates)].tolist()) for out, e in zip(outputs, examples)]


@torch.no_grad()  # not inference_mode: frozen-prefix states cached while evaluating are reused in training
def predict(
    model, examples: Sequence, store: FeatureStore | None = None, batch_size: int = 32, raw: bool = False
) -> list:
    """Predicted labels (KPC/QRC/QAM; QAM labels as ints) or score lists (SQR), in example order.

    Batches are formed from examples of similar length; ``store`` holds their
    problems (built here, through the graph cache, when not given). ``raw=True``
    gives each example's undecoded outputs instead: ``{"logits": [C]}``, or
    ``{"scores": [N]}`` (SQR, ``-inf`` past the example's candidates), as CPU tensors.
    """
    return _run(model, examples, store, batch_size, raw)


def _run(model, examples: Sequence, store: FeatureStore | None, batch_size: int, raw: bool) -> list:
    """``predict`` without its grad mode: the caller's (``no_grad`` or ``inference_mode``) applies."""
    model.eval()
    task = model.config.task_type
    if store is None:
        store = feature_store(model, [t for e in examples for t in task.example_texts(e)])
    else:
        store.add(t for e in examples for t in task.example_texts(e))
    device = next(model.parameters()).device
    collate = TaskCollator(task, store)
    outputs: list = [None] * len(examples)
    for rows in length_sorted_batches(example_lengths(task, examples, store), batch_size):
        chunk = [examples[i] for i in rows]
        result = model(collate(chunk, with_labels=False).to(device))
        decoded = _raw_outputs(result, len(chunk)) if raw else task.decode(result, chunk, model.config.labels)
        for i, prediction in zip(rows, decoded):
            outputs[i] = prediction
    return outputs


def _raw_outputs(result: dict[str, torch.Tensor], size: int) -> list[dict[str, torch.Tensor]]:
    """A batch's ``logits`` / ``scores`` split into one dict per example."""
    kept = {k: v.detach().float().cpu() for k, v in result.items() if k in ("logits", "scores")}
    return [{k: v[j] for k, v in kept.items()} for j in range(size)]


__all__ = ["predict_inputs", "predict", "feature_store"]
