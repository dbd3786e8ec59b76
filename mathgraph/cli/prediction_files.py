"""Prediction files of ``mathgraph predict --input FILE``, and one prediction printed for a person.

``predict_file`` reads JSONL rows in the task's file format (``../shared/data/README.md``) without the gold
fields: KPC ``{TEXT_FIELD: text}`` (``problem`` by default), QRC/QAM ``{"text_a", "text_b"}``, SQR
``{"query", "candidates"}``. It writes one line per good input row, in input order: the row's ``id`` (when
it has one), its ``line`` number in the input file and the result's fields. Bad rows stop with the file and
line, or with ``skip_bad`` are left out and returned, as ``mathgraph parse`` does. The predictor is anything
``mathgraph.api.task_predictor`` gives.
"""

from __future__ import annotations

import sys
from os import PathLike
from typing import IO

from mathgraph.jsonl import JsonlError, atomic_writer, write_jsonl
from mathgraph.labels import label_text, with_label_names
from mathgraph.models.task_io import input_from_texts
from mathgraph.tasks.data import read_inputs, row_input


def predict_file(
    predictor,
    task: str,
    input_path: str | PathLike,
    output_path: str | PathLike | None = None,
    text_field: str = "problem",
    batch_size: int = 32,
    skip_bad: bool = False,
    out: IO[str] | None = None,
) -> tuple[int, list[JsonlError]]:
    """Predict every row of a JSONL file and write the results as JSONL (see the module docstring) to
    ``output_path`` (atomically) or ``out`` (default: stdout); returns the lines written and the bad rows."""
    rows, inputs, bad = read_inputs(task, input_path, text_field, skip_bad)
    results = with_label_names(task, predictor.predict(inputs, batch_size=batch_size))
    records = [output_record(line, row, result) for (line, row), result in zip(rows, results)]
    if output_path is None:
        return write_jsonl(out or sys.stdout, records), bad
    with atomic_writer(output_path) as f:
        return write_jsonl(f, records), bad


def output_record(line: int, row: dict, result: dict) -> dict:
    """One output line: the row's ``id`` (if any), its ``line`` number and the result."""
    record = {"id": row["id"]} if "id" in row else {}
    return {**record, "line": line, **result}


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


__all__ = ["read_inputs", "row_input", "predict_file", "output_record", "format_prediction", "input_from_texts"]
