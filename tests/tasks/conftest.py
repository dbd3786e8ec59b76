"""Fixtures of the task tests: the bundled GSM-Plus sample, a JSONL writer and a tiny start model on disk."""

import json
from pathlib import Path

import pytest

import mathgraph


@pytest.fixture(scope="session")
def gsmplus():
    """The bundled GSM-Plus variants (``mathgraph/data/gsmplus_sample.jsonl``) as dicts."""
    path = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="session")
def write():
    """``write(path, rows)``: the rows as a JSONL file; returns the path as a string."""

    def write_rows(path, rows):
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(path)

    return write_rows


@pytest.fixture
def start_model(tiny_encoder, tmp_path):
    """The tiny COMUS encoder saved as a model directory, the start of every training test."""
    directory = tmp_path / "start"
    tiny_encoder.save_pretrained(directory)
    return str(directory)


@pytest.fixture
def task_files(tmp_path, gsmplus, write):
    """KPC (the bundled sample problems), QRC and SQR (from the GSM-Plus sample) task files, each its own dev
    file: ``[(TaskConfig, train, dev)]``, what ``train_multitask`` takes."""
    from mathgraph.models.task_model import TaskConfig
    from mathgraph.samples import sample_problems
    from mathgraph.tasks.data import build_qrc_pairs, build_sqr_lists, group_seeds

    kpc = write(
        tmp_path / "kpc.jsonl",
        [{"problem": r["problem"], "subject": r.get("subject", "Word problem")} for r in sample_problems()],
    )
    qrc = write(tmp_path / "qrc.jsonl", build_qrc_pairs(group_seeds(gsmplus), random_state=0))
    sqr = write(tmp_path / "sqr.jsonl", build_sqr_lists(group_seeds(gsmplus), random_state=0))
    return [(TaskConfig("kpc"), kpc, kpc), (TaskConfig("qrc"), qrc, qrc), (TaskConfig("sqr"), sqr, sqr)]
