"""The batch jobs on Ray (``--engine ray``, ``mathgraph.tasks.jobs.ray_engine``), on a local Ray started here with
two CPUs and tiny models: the same graphs, vectors within 1e-5 and the same predictions as the local engine,
parsing in tasks apart from the model actors, one-line errors, and ``--resume`` of a local run on Ray."""

import dataclasses
import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason='Ray is an optional extra: pip install "mathgraph[ray]"')

from mathgraph.batch_jobs import finished_files, read_manifest  # noqa: E402
from mathgraph.cli import main  # noqa: E402
from mathgraph.samples import sample_problems  # noqa: E402

PROBLEMS = [row["problem"] for row in sample_problems()]


@pytest.fixture(scope="module", autouse=True)
def local_ray(tmp_path_factory):
    """One local Ray for the module: two CPUs, the workers' graph cache in a temporary directory."""
    cache = tmp_path_factory.mktemp("ray-graph-cache")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"MATHGRAPH_CACHE_DIR": str(cache), "TQDM_DISABLE": "1"}},
    )
    yield
    ray.shutdown()


def write_bank(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" if isinstance(r, dict) else r for r in rows), encoding="utf-8")
    return path


def test_parse_on_ray_writes_the_local_engines_graphs(tmp_path):
    rows = [{"id": f"q{i}", "problem": p} for i, p in enumerate(PROBLEMS[:7])]
    source = write_bank(tmp_path / "bank.jsonl", [*rows[:3], '{"problem": ""}\n', *rows[3:]])
    common = ["-q", "parse", "--input", str(source), "--shard-size", "3", "--skip-bad", "--parser", "spacy"]
    assert main([*common, "--output", str(tmp_path / "local")]) == 0
    assert main([*common, "--output", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"]) == 0
    local, remote = read_manifest(tmp_path / "local"), read_manifest(tmp_path / "ray")
    assert local == remote  # the same shards, rows, bad line and settings
    for name in ("shard-00000.jsonl", "shard-00001.jsonl", "shard-00002.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    graphs = [
        json.loads(line)
        for name in sorted((tmp_path / "ray").glob("shard-*"))
        for line in name.read_text().splitlines()
    ]
    assert [(g["id"], g["line"]) for g in graphs] == [("q0", 1), ("q1", 2), ("q2", 3)] + [
        (f"q{i}", i + 2) for i in range(3, 7)
    ]


def test_encode_on_ray_parses_in_tasks_and_encodes_in_an_actor(tmp_path, tiny_encoder, capsys):
    from mathgraph.bank_files import BankReader
    from mathgraph.batch_jobs import FieldInput, Job
    from mathgraph.job_outputs import VectorShards
    from mathgraph.tasks.jobs.ray_engine import _pipeline, run_job_on_ray
    from mathgraph.tasks.jobs.stages import EncodeStage, ParseStage

    model = tmp_path / "model"
    tiny_encoder.save_pretrained(model)
    source = write_bank(tmp_path / "bank.jsonl", [{"id": i, "problem": p} for i, p in enumerate(PROBLEMS[:8])])
    common = ["-q", "encode", "--input", str(source), "--model", str(model), "--shard-size", "3", "--batch-size", "2"]
    assert main([*common, "--output", str(tmp_path / "local")]) == 0
    assert main([*common, "--output", str(tmp_path / "ray"), "--engine", "ray", "--workers", "1"]) == 0
    local, remote = finished_files(tmp_path / "local", "vectors"), finished_files(tmp_path / "ray", "vectors")
    for a, b in zip(local, remote, strict=True):
        assert np.allclose(np.load(a[0]), np.load(b[0]), atol=1e-5)
        assert a[1].read_text() == b[1].read_text()  # the same ids and lines, in the same order
    vectors = np.concatenate([np.load(files[0]) for files in remote])
    assert vectors.shape == (8, 48) and np.allclose(vectors, tiny_encoder.encode(PROBLEMS[:8]), atol=1e-5)

    # the plan Ray runs: parsing in tasks of its own, not fused into the model actors
    job = Job(
        name="encode",
        reader=BankReader.open(source, fields=("problem",)),
        to_input=FieldInput("problem"),
        writer=VectorShards(),
        output=tmp_path / "unused",
        stages=[ParseStage(parser="spacy", cache=True), EncodeStage(model=str(model))],
    )
    from mathgraph.batch_jobs import JobRun

    capsys.readouterr()
    _pipeline(job, JobRun(job).pending, workers=1, cpus=1.0, gpus=None).explain()
    optimized = capsys.readouterr().out.split("Physical Plan (Optimized)")[1]
    assert "ActorPoolMapOperator[MapBatches(_ModelActor)]" in optimized
    assert "+- TaskPoolMapOperator[MapBatches(_run_cpu_stage)]" in optimized
    with pytest.raises(ValueError, match="2 workers of 1 CPUs leave 0 of the cluster's 2 CPUs for parsing"):
        run_job_on_ray(dataclasses.replace(job, output=tmp_path / "crowded"), workers=2)
    assert not (tmp_path / "crowded").exists()  # nothing written, nothing to resume: no output left behind


def test_predict_on_ray_gives_the_local_engines_predictions(tmp_path, tiny_encoder):
    from mathgraph.models.task_model import TaskConfig, TaskModel

    model = tmp_path / "kpc"
    TaskModel(tiny_encoder, TaskConfig("kpc", labels=["Algebra", "Geometry", "Number Theory"])).save_pretrained(model)
    source = write_bank(tmp_path / "bank.jsonl", [{"id": f"p{i}", "problem": p} for i, p in enumerate(PROBLEMS[:6])])
    common = ["-q", "predict", "kpc", "--model", str(model), "--input", str(source), "--shard-size", "4"]
    assert main([*common, "--output", str(tmp_path / "local.jsonl")]) == 0
    assert main([*common, "--output", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--device", "cpu"]) == 0
    local = [json.loads(line) for line in (tmp_path / "local.jsonl").read_text().splitlines()]
    remote = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
    assert [(r["id"], r["line"], r["label"]) for r in remote] == [(r["id"], r["line"], r["label"]) for r in local]
    assert [r["id"] for r in remote] == [f"p{i}" for i in range(6)]
    for a, b in zip(local, remote):
        assert b["probabilities"] == pytest.approx(a["probabilities"], abs=1e-5)


def test_a_bad_graph_on_ray_is_one_line_naming_file_and_line(tmp_path, tiny_encoder, capsys):
    model = tmp_path / "model"
    tiny_encoder.save_pretrained(model)
    source = write_bank(tmp_path / "bank.jsonl", [{"problem": p} for p in PROBLEMS[:2]])
    assert main(["-q", "parse", "--input", str(source), "--output", str(tmp_path / "g.jsonl")]) == 0
    good = (tmp_path / "g.jsonl").read_text().splitlines()[0]
    broken = write_bank(tmp_path / "broken.jsonl", [good + "\n", '{"schema_version": 2}\n'])
    argv = ["-q", "encode", "--graphs", str(broken), "--model", str(model), "--output", str(tmp_path / "v.npy")]
    assert main([*argv, "--engine", "ray"]) == 2
    err = capsys.readouterr().err
    assert f"mathgraph: error: {broken}:2: malformed graph: KeyError: 'nodes'" in err
    assert "Traceback" not in err and not (tmp_path / "v.npy").exists()


def test_a_local_run_killed_half_way_is_finished_on_ray(tmp_path, monkeypatch):
    from mathgraph.job_outputs import GraphShards

    source = write_bank(tmp_path / "bank.jsonl", [{"problem": p} for p in PROBLEMS[:6]])
    common = ["-q", "parse", "--input", str(source), "--shard-size", "2", "--parser", "spacy"]
    assert main([*common, "--output", str(tmp_path / "whole.jsonl")]) == 0
    write = GraphShards.write

    def write_two(self, directory, index, items):
        if index == 2:
            raise KeyboardInterrupt
        return write(self, directory, index, items)

    monkeypatch.setattr(GraphShards, "write", write_two)
    with pytest.raises(KeyboardInterrupt):
        main([*common, "--output", str(tmp_path / "out.jsonl")])
    monkeypatch.setattr(GraphShards, "write", write)
    assert main([*common, "--output", str(tmp_path / "out.jsonl"), "--resume", "--engine", "ray"]) == 0
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


def test_a_ray_the_job_starts_is_quiet_unless_verbose():
    from mathgraph.tasks.jobs.ray_engine import ray_start_options

    quiet = ray_start_options()
    assert quiet["log_to_driver"] is False and quiet["logging_level"] >= logging.ERROR
    assert quiet["include_dashboard"] is False
    assert ray_start_options(verbose=True) == {"include_dashboard": False}  # -v: Ray's own output


@pytest.mark.slow
def test_a_batch_job_on_a_ray_it_starts_says_only_what_it_wrote(tmp_path):
    """A new process starts its own local Ray: Ray's start-up notices and Ray Data's progress logs (about 20 lines
    on a redirected stderr) stay off stderr; what the command wrote is the one line there."""
    source = write_bank(tmp_path / "bank.jsonl", [{"problem": p} for p in PROBLEMS[:3]])
    command = [sys.executable, "-m", "mathgraph.cli", "parse", "--input", str(source), "--parser", "spacy"]
    command += ["--output", "out", "--engine", "ray", "--workers", "1"]
    env = {**os.environ, "MATHGRAPH_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "wrote 3 graphs to out\n"
    assert len((tmp_path / "out" / "shard-00000.jsonl").read_text().splitlines()) == 3
