"""Prediction files of ``mathgraph predict --input BANK``, and one prediction printed for a person.

``prediction_job`` reads the rows of a bank (JSONL, CSV, Parquet or a saved datasets directory) in the task's
file format (``../shared/data/README.md``) without the gold fields: KPC ``{TEXT_FIELD: text}`` (``problem`` by
default), QRC/QAM ``{"text_a", "text_b"}``, SQR ``{"query", "candidates"}``. It writes one row per good input
row, in input order: the row's ``id`` (when it has one), its ``line`` number in the input and the result's
fields. Bad rows stop with the file and line, or with ``skip_bad`` are left out and counted, as ``mathgraph
parse`` does. It is a batch job (``mathgraph.batch_jobs``): the problems are parsed in a stage of their own
(Ray: CPU tasks), then ``PredictStage`` predicts with what ``mathgraph.api.task_predictor`` gives, loaded once
per process (Ray: per actor). Nothing here imports torch until a stage loads, so a bad input fails fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import ClassVar

from mathgraph.bank_files import BankReader
from mathgraph.batch_jobs import DEFAULT_SHARD_SIZE, Job
from mathgraph.job_outputs import PredictionShards
from mathgraph.labels import label_text, with_label_names
from mathgraph.task_specs import check_candidates, task_spec


@dataclass(frozen=True)
class TaskRowInput:
    """``to_input`` of a prediction job: a validated row's input for a task of ``input_shape`` ``kind``."""

    kind: str
    text_field: str = "problem"

    def __call__(self, row: dict) -> object:
        from mathgraph.tasks.data import row_input

        return row_input(self.kind, row, self.text_field)


@dataclass
class PredictStage:
    """``item["result"]``: the prediction of each item's input by ``task_predictor(task, model, hybrid)``, with
    the label names (QAM: ``label_name``), as ``mathgraph predict`` prints them. Graphs a parse stage made in
    another process (``item["graph_keys"]``) go into the graph cache first, where the predictor reads them."""

    kind: ClassVar[str] = "model"
    task: str
    model: str = "shipped"
    hybrid: bool | None = None
    batch_size: int = 32
    device: str | None = None
    threads: int | None = None
    graph_cache: bool | str = True
    runtime: str | None = None
    _loaded: dict = field(default_factory=dict, repr=False)

    def load(self) -> None:
        """Load the predictor (and set torch's threads: ``--threads``, else every core this process may use)."""
        if self._loaded:
            return
        from mathgraph.api import task_predictor
        from mathgraph.cli.common import configure_inference_threads

        configure_inference_threads(self.threads, single_input=False)
        self._loaded["predictor"] = task_predictor(
            self.task, self.model, hybrid=self.hybrid, device=self.device, runtime=self.runtime
        )

    def __call__(self, items: list[dict]) -> list[dict]:
        self.load()
        parsed = {
            key: graph for item in items for key, graph in zip(item.get("graph_keys", ()), item.get("graphs", ()))
        }
        if parsed:
            from mathgraph.parsers.graph_cache import GraphCache

            with GraphCache(None if self.graph_cache is True else self.graph_cache) as cache:
                cache.put_many(parsed)
        predictions = self._loaded["predictor"].predict([item["input"] for item in items], batch_size=self.batch_size)
        for item, result in zip(items, with_label_names(self.task, predictions)):
            item["result"] = result
        return items

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_loaded": {}}


def prediction_job(
    task: str,
    input_path: str | PathLike,
    output: str | PathLike | None,
    model: str = "shipped",
    hybrid: bool | None = None,
    text_field: str = "problem",
    id_field: str = "id",
    input_format: str | None = None,
    output_format: str = "jsonl",
    batch_size: int = 32,
    device: str | None = None,
    threads: int | None = None,
    runtime: str | None = None,
    skip_bad: bool = False,
    shard_size: int = DEFAULT_SHARD_SIZE,
    remote: bool = False,
) -> Job:
    """The batch job of ``mathgraph predict TASK --input BANK`` (see the module docstring). ``remote``: the
    model stage may run on other machines than the parse stage (Ray), so the graphs travel with the items."""
    from mathgraph.tasks.jobs.stages import ParseStage, model_parser

    spec = task_spec(task)
    reader = BankReader.open(
        input_path,
        input_format,
        fields=spec.input_fields(text_field),
        id_field=id_field,
        keep=("candidates",) if spec.input_shape == "ranker" else (),
        check=check_candidates if spec.input_shape == "ranker" else None,
    )
    parser = model_parser(model)
    parse = [ParseStage(parser=parser, cache=True, keys=remote)] if parser else []
    predict = PredictStage(
        task, model, hybrid=hybrid, batch_size=batch_size, device=device, threads=threads, runtime=runtime
    )
    return Job(
        name=f"predict {task}",
        progress="predicting",
        reader=reader,
        to_input=TaskRowInput(spec.input_shape, text_field),
        writer=PredictionShards(output_format),
        output=None if output is None else Path(output),
        stages=[*parse, predict],
        settings={
            "task": task,
            "model": str(Path(model).resolve()) if Path(model).is_dir() else model,
            "hybrid": hybrid,
            "text_field": text_field,
            "id_field": id_field,
        },
        shard_size=shard_size,
        skip_bad=skip_bad,
    )


def input_from_texts(task: str, texts: list[str]):
    """One input of ``task`` from command-line TEXTs (``models.task_io.input_from_texts``)."""
    from mathgraph.models.task_io import input_from_texts as from_texts

    return from_texts(task, texts)


def format_prediction(item, result: dict, top: int = 5, task: str | None = None) -> str:
    """A result as readable text: the label and the ``top`` probabilities, or the ranked candidates; with
    ``task``, a coded label says what it means (QAM: ``1 (matches)``, ``mathgraph.labels``)."""
    if "ranking" in result:
        candidates = item[1]
        lines = ["ranking (best first):"]
        for rank, j in enumerate(result["ranking"], 1):
            text = " ".join(str(candidates[j]).split())
            lines.append(f"{rank:3d}. {result['scores'][j]:8.4f}  [{j}] {text[:100]}")
        return "\n".join(lines)
    best = sorted(result["probabilities"].items(), key=lambda kv: -kv[1])[: max(top, 1)]
    width = max(len(label_text(task, label)) for label, _ in best)
    lines = [f"label: {label_text(task, result['label'])}", f"probabilities (top {len(best)}):"]
    lines.extend(f"  {label_text(task, label):<{width}}  {p:.4f}" for label, p in best)
    return "\n".join(lines)


__all__ = [
    "TaskRowInput",
    "PredictStage",
    "prediction_job",
    "format_prediction",
    "input_from_texts",
]
