"""Resumable batch jobs (``mathgraph.batch_jobs``): shards planned from the input, a manifest, ``--resume`` after
a kill giving the output of an uninterrupted run, one-file outputs, and the commands that run as jobs."""

import json
import logging
import os
import signal
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

from mathgraph.bank_files import BankReader
from mathgraph.batch_jobs import FieldInput, Job, finished_files, plan_shards, read_manifest, read_shard, run_job
from mathgraph.cli import main
from mathgraph.job_outputs import PredictionShards
from mathgraph.samples import sample_problems

PROBLEMS = [row["problem"] for row in sample_problems()]


def write_bank(path, rows):
    path.write_text("".join(r if isinstance(r, str) else json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def bank(tmp_path):
    """Seven records on lines 1-8 (line 4 blank): two bad (line 3 not JSON, line 6 an empty problem)."""
    rows = [
        {"id": "p0", "problem": "one"},
        {"id": "p1", "problem": "two"},
        "{broken\n",
        "\n",
        {"id": "p3", "problem": "three"},
        {"id": "p4", "problem": ""},
        {"id": "p5", "problem": "four"},
        {"problem": "five"},
    ]
    return write_bank(tmp_path / "bank.jsonl", rows)


class Shout:
    """A CPU stage for these tests: the problem in capitals, as a result."""

    kind = "cpu"

    def __init__(self):
        self.loads = 0

    def load(self):
        self.loads += 1

    def __call__(self, items):
        for item in items:
            item["result"] = {"text": item["input"].upper()}
        return items


def shout_job(bank, output, **options):
    return Job(
        name="shout",
        reader=BankReader.open(bank, fields=("problem",)),
        to_input=FieldInput("problem"),
        writer=PredictionShards(options.pop("format", "jsonl")),
        output=output,
        stages=[options.pop("stage", Shout())],
        **options,
    )


def test_the_plan_counts_records_bad_ones_included(bank):
    reader = BankReader.open(bank, fields=("problem",))
    with pytest.raises(ValueError, match=f"{bank}:3: not valid JSON"):
        plan_shards(reader, 3)
    plan = plan_shards(reader, 3, skip_bad=True)
    assert (plan.records, plan.rows, plan.bad_count) == (7, 5, 2)
    assert plan.bad == [
        f"{bank}:3: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
        f"{bank}:6: field 'problem' is empty",
    ]
    assert [(s.first_record, s.records, s.rows, s.first_line, s.last_line) for s in plan.shards] == [
        (0, 3, 2, 1, 3),
        (3, 3, 2, 5, 7),
        (6, 1, 1, 8, 8),
    ]
    job = shout_job(bank, None, shard_size=3, skip_bad=True)
    second = read_shard(job, plan.shards[1])  # read from where it starts, nothing before it
    assert [(i["record"], i["line"], i.get("id"), i["input"]) for i in second] == [
        (3, 5, "p3", "three"),
        (5, 7, "p5", "four"),
    ]


def test_a_directory_job_writes_shards_and_a_manifest(bank, tmp_path):
    stage = Shout()
    result = run_job(shout_job(bank, tmp_path / "out", shard_size=3, skip_bad=True, stage=stage))
    assert (result.rows, result.shards, result.shards_resumed, result.bad_count) == (5, 3, 0, 2)
    manifest = read_manifest(tmp_path / "out")
    assert manifest["complete"] and manifest["job"] == "shout" and manifest["input"]["records"] == 7
    assert [(s["rows"], s["lines"], s["files"]) for s in manifest["shards"]] == [
        (2, [1, 3], ["shard-00000.jsonl"]),
        (2, [5, 7], ["shard-00001.jsonl"]),
        (1, [8, 8], ["shard-00002.jsonl"]),
    ]
    rows = [
        json.loads(line) for files in finished_files(tmp_path / "out") for line in files[0].read_text().splitlines()
    ]
    assert rows == [
        {"id": "p0", "line": 1, "text": "ONE"},
        {"id": "p1", "line": 2, "text": "TWO"},
        {"id": "p3", "line": 5, "text": "THREE"},
        {"id": "p5", "line": 7, "text": "FOUR"},
        {"line": 8, "text": "FIVE"},
    ]
    assert stage.loads == 1

    # a finished job resumed does nothing, and loads nothing
    again = Shout()
    result = run_job(shout_job(bank, tmp_path / "out", shard_size=3, skip_bad=True, stage=again), resume=True)
    assert (result.shards_resumed, again.loads) == (3, 0)


def test_resume_refuses_another_job_and_a_fresh_run_refuses_an_old_output(bank, tmp_path):
    out = tmp_path / "out"
    run_job(shout_job(bank, out, shard_size=3, skip_bad=True))
    with pytest.raises(ValueError, match="holds a job's output already: give --resume to finish it"):
        run_job(shout_job(bank, out, shard_size=3, skip_bad=True))
    with pytest.raises(ValueError, match=r"cannot resume .*: its shard_size differs \(3 there, 2 now\)"):
        run_job(shout_job(bank, out, shard_size=2, skip_bad=True), resume=True)
    with pytest.raises(ValueError, match="its settings differ"):
        run_job(shout_job(bank, out, shard_size=3, skip_bad=True, settings={"model": "other"}), resume=True)
    with open(bank, "a", encoding="utf-8") as f:
        f.write(json.dumps({"problem": "six"}) + "\n")
    with pytest.raises(ValueError, match="its input differs"):
        run_job(shout_job(bank, out, shard_size=3, skip_bad=True), resume=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="exists and holds other files"):
        run_job(shout_job(bank, tmp_path / "other", skip_bad=True))


class Failing(Shout):
    """Fails on the item of one problem, as a job killed there."""

    def __init__(self, at):
        super().__init__()
        self.at = at

    def __call__(self, items):
        if any(item["input"] == self.at for item in items):
            raise KeyboardInterrupt
        return super().__call__(items)


@pytest.mark.parametrize("format", ["jsonl", "parquet"])
def test_a_one_file_output_is_merged_and_an_interrupted_one_resumes(bank, tmp_path, format):
    whole = tmp_path / f"whole.{format}"
    run_job(shout_job(bank, whole, shard_size=2, skip_bad=True, format=format))
    assert not (tmp_path / f"whole.{format}.parts").exists()

    target = tmp_path / f"out.{format}"
    with pytest.raises(KeyboardInterrupt):
        run_job(shout_job(bank, target, shard_size=2, skip_bad=True, format=format, stage=Failing("four")))
    parts = tmp_path / f"out.{format}.parts"
    assert not target.exists() and [s["done"] for s in read_manifest(parts)["shards"]] == [True, True, False, False]
    result = run_job(shout_job(bank, target, shard_size=2, skip_bad=True, format=format), resume=True)
    assert (result.shards_resumed, result.output) == (2, str(target))
    assert not parts.exists()
    if format == "jsonl":
        assert target.read_bytes() == whole.read_bytes()
    else:
        assert pq.read_table(target).to_pylist() == pq.read_table(whole).to_pylist()
        assert pq.read_table(target).to_pylist()[-1] == {"id": None, "line": 8, "text": "FIVE"}


def test_a_shard_of_bad_rows_only_is_an_empty_shard(tmp_path):
    source = write_bank(tmp_path / "bank.jsonl", [{"problem": "a"}, {"problem": ""}, {"problem": ""}, {"problem": "b"}])
    result = run_job(shout_job(source, tmp_path / "out", shard_size=1, skip_bad=True))
    assert (result.rows, result.shards) == (2, 4)
    sizes = [
        (entry["rows"], (tmp_path / "out" / entry["files"][0]).stat().st_size == 0)
        for entry in read_manifest(tmp_path / "out")["shards"]
    ]
    assert sizes == [(1, False), (0, True), (0, True), (1, False)]
    # merged into one Parquet file, the empty shards (columns of no type) add no rows and no schema
    run_job(shout_job(source, tmp_path / "out.parquet", shard_size=1, skip_bad=True, format="parquet"))
    assert [row["text"] for row in pq.read_table(tmp_path / "out.parquet").to_pylist()] == ["A", "B"]
    with pytest.raises(ValueError, match="no good input rows \\(1 bad rows skipped\\)"):
        run_job(shout_job(write_bank(tmp_path / "bad.jsonl", [{"problem": ""}]), None, skip_bad=True))


# ------------------------------------------------------------------ the commands, killed and resumed
KILL_AFTER_SHARDS = """
import os, signal, sys
from mathgraph.job_outputs import GraphShards
from mathgraph.cli import main

write, written = GraphShards.write, []

def write_then_die(self, directory, index, items):
    files = write(self, directory, index, items)
    written.append(index)
    if len(written) == {shards}:
        os.kill(os.getpid(), signal.SIGKILL)  # as the machine would: no cleanup, no flush, no exception
    return files

GraphShards.write = write_then_die
sys.exit(main({argv!r}))
"""


def test_a_killed_parse_job_resumes_to_the_uninterrupted_output(tmp_path):
    source = write_bank(tmp_path / "bank.jsonl", [{"id": f"q{i}", "problem": p} for i, p in enumerate(PROBLEMS[:9])])
    common = ["-q", "parse", "--input", str(source), "--shard-size", "2", "--parser", "spacy"]
    assert main([*common, "--output", str(tmp_path / "whole")]) == 0

    argv = [*common, "--output", str(tmp_path / "out")]
    script = KILL_AFTER_SHARDS.format(shards=2, argv=argv)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == -signal.SIGKILL, done.stderr
    manifest = read_manifest(tmp_path / "out")
    # killed between writing shard 1's file and noting it in the manifest: the file is whole, and done again
    assert [s["done"] for s in manifest["shards"]] == [True, False, False, False, False] and not manifest["complete"]
    assert (tmp_path / "out" / "shard-00001.jsonl").exists()

    assert main([*argv, "--resume"]) == 0
    names = sorted(p.name for p in (tmp_path / "whole").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "out").iterdir())
    for name in names:
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


def test_an_interrupted_encode_job_resumes_to_the_same_vectors(tmp_path, tiny_encoder, monkeypatch, capsys):
    model = tmp_path / "model"
    tiny_encoder.save_pretrained(model)
    source = write_bank(tmp_path / "bank.jsonl", [{"id": i, "problem": p} for i, p in enumerate(PROBLEMS[:7])])
    common = ["-q", "encode", "--input", str(source), "--model", str(model), "--shard-size", "3", "--device", "cpu"]
    assert main([*common, "--output", str(tmp_path / "whole")]) == 0

    from mathgraph.job_outputs import VectorShards

    write = VectorShards.write

    def write_once(self, directory, index, items):
        if index == 1:
            raise KeyboardInterrupt  # killed after the first shard
        return write(self, directory, index, items)

    monkeypatch.setattr(VectorShards, "write", write_once)
    with pytest.raises(KeyboardInterrupt):
        main([*common, "--output", str(tmp_path / "out")])
    monkeypatch.setattr(VectorShards, "write", write)
    assert main([*common[1:], "--output", str(tmp_path / "out"), "--resume"]) == 0  # without -q: what it did
    assert "(1 of 3 shards done before)" in capsys.readouterr().err

    whole, resumed = finished_files(tmp_path / "whole", "vectors"), finished_files(tmp_path / "out", "vectors")
    for a, b in zip(whole, resumed):
        assert np.array_equal(np.load(a[0]), np.load(b[0]))
        assert a[1].read_text() == b[1].read_text()
    vectors = np.concatenate([np.load(files[0]) for files in resumed])
    assert vectors.shape == (7, 48)
    assert np.allclose(vectors, tiny_encoder.encode(PROBLEMS[:7]), atol=1e-5)
    ids = [json.loads(line) for files in resumed for line in files[1].read_text().splitlines()]
    assert ids == [{"id": i, "line": i + 1} for i in range(7)]


# ------------------------------------------------------------------ formats in and out, through the commands
def test_banks_in_any_format_and_outputs_in_jsonl_or_parquet(tmp_path, tiny_encoder):
    import pyarrow as pa

    model = tmp_path / "model"
    tiny_encoder.save_pretrained(model)
    rows = [{"uid": f"u{i}", "question": p} for i, p in enumerate(PROBLEMS[:4])]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "bank.parquet")
    ids = ["--id-field", "uid", "--text-field", "question"]

    assert (
        main(
            [
                "-q",
                "parse",
                "--input",
                str(tmp_path / "bank.parquet"),
                "--output",
                str(tmp_path / "graphs.parquet"),
                *ids,
            ]
        )
        == 0
    )
    graphs = pq.read_table(tmp_path / "graphs.parquet").to_pylist()
    assert [(g["id"], g["line"], json.loads(g["graph"])["text"]) for g in graphs] == [
        (f"u{i}", i + 1, p) for i, p in enumerate(PROBLEMS[:4])
    ]
    encode = ["-q", "encode", "--model", str(model), "--device", "cpu"]
    assert main([*encode, "--graphs", str(tmp_path / "graphs.parquet"), "--output", str(tmp_path / "v.parquet")]) == 0
    table = pq.read_table(tmp_path / "v.parquet").to_pylist()
    assert [(r["id"], r["line"]) for r in table] == [(f"u{i}", i + 1) for i in range(4)]
    expected = tiny_encoder.encode(PROBLEMS[:4])
    assert np.allclose(np.array([r["vector"] for r in table]), expected, atol=1e-5)

    assert main([*encode, "--input", str(tmp_path / "bank.parquet"), *ids, "--output", str(tmp_path / "v.jsonl")]) == 0
    lines = [json.loads(line) for line in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == ["u0", "u1", "u2", "u3"]
    assert np.allclose(np.array([r["vector"] for r in lines]), expected, atol=1e-5)

    # a parse output directory is a graph input too; its vectors as shards an index is built from
    assert (
        main(
            [
                "-q",
                "parse",
                "--input",
                str(tmp_path / "bank.parquet"),
                "--output",
                str(tmp_path / "gdir"),
                *ids,
                "--shard-size",
                "3",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                *encode,
                "--graphs",
                str(tmp_path / "gdir"),
                "--output",
                str(tmp_path / "vdir"),
                "--output-format",
                "parquet",
                "--shard-size",
                "3",
            ]
        )
        == 0
    )
    manifest = read_manifest(tmp_path / "vdir")
    assert manifest["output"] == {"kind": "vectors", "format": "parquet", "dimension": 48}
    shards = finished_files(tmp_path / "vdir", "vectors")
    assert [[p.name for p in files] for files in shards] == [
        ["shard-00000.npy", "shard-00000.rows.parquet"],
        ["shard-00001.npy", "shard-00001.rows.parquet"],
    ]
    assert np.allclose(np.concatenate([np.load(files[0], mmap_mode="r") for files in shards]), expected, atol=1e-5)
    assert [r["id"] for files in shards for r in pq.read_table(files[1]).to_pylist()] == ["u0", "u1", "u2", "u3"]


def test_predictions_of_a_csv_bank_to_parquet(tmp_path, tiny_encoder, capsys):
    import csv

    from mathgraph.models.task_model import TaskConfig, TaskModel

    model = tmp_path / "kpc"
    TaskModel(tiny_encoder, TaskConfig("kpc", labels=["Algebra", "Geometry"])).save_pretrained(model)
    with open(tmp_path / "bank.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "problem"])
        writer.writerows([[f"r{i}", p] for i, p in enumerate(PROBLEMS[:3])] + [["r3", ""]])
    argv = ["-q", "predict", "kpc", "--model", str(model), "--input", str(tmp_path / "bank.csv"), "--device", "cpu"]
    assert main([*argv, "--output", str(tmp_path / "p.parquet")]) == 2
    assert f"{tmp_path / 'bank.csv'}:5: field 'problem' is empty" in capsys.readouterr().err
    assert main([*argv, "--output", str(tmp_path / "p.parquet"), "--skip-bad"]) == 0
    table = pq.read_table(tmp_path / "p.parquet").to_pylist()
    assert [(r["id"], r["line"]) for r in table] == [("r0", 2), ("r1", 3), ("r2", 4)]  # CSV lines: the header is 1
    expected = TaskModel.from_pretrained(model).predict(PROBLEMS[:3])
    for row, result in zip(table, expected):
        assert row["label"] == result["label"]
        assert row["probabilities"] == pytest.approx(result["probabilities"], abs=1e-5)


def test_job_options_are_checked_before_anything_loads(tmp_path, capsys):
    source = write_bank(tmp_path / "bank.jsonl", [{"problem": "x"}])
    cases = [
        (
            ["parse", "--input", str(source), "--output", str(tmp_path / "o"), "--shard-size", "0"],
            "--shard-size must be >= 1",
        ),
        (
            ["parse", "--input", str(source), "--output", str(tmp_path / "g.npy")],
            "graphs go to a .jsonl or .parquet file",
        ),
        (["parse", "Find $x$.", "--resume"], "apply to --input files only"),
        (
            ["encode", "--input", str(source), "--output", str(tmp_path / "v.jsonl"), "--output-format", "parquet"],
            "ends in .jsonl, but --output-format says parquet",
        ),
        (["predict", "kpc", "--input", str(source), "--address", "ray://x:1"], "apply to --engine ray only"),
        (
            ["predict", "kpc", "--input", str(source), "--output-format", "parquet"],
            "--output-format parquet needs an --output",
        ),
        # a file name in a format no job writes is refused, not made a directory of shards of that name
        (["predict", "kpc", "--input", str(source), "--output", str(tmp_path / "p.csv")], "cannot write a .csv file"),
        (["parse", "--input", str(source), "--output", str(tmp_path / "g.json")], "cannot write a .json file"),
        # counts below 1 are the option parser's usage errors, not tracebacks from inside the job
        (["parse", "--input", str(source), "--output", str(tmp_path / "o2"), "--batch-size", "0"], "1 or more, got 0"),
        (["predict", "kpc", "--input", str(source), "--batch-size", "-1"], "1 or more, got -1"),
        (["index", "build", "--input", str(source), "--output", str(tmp_path / "i"), "--batch-size", "0"], "got 0"),
        (["search", "--index", str(tmp_path), "x", "-k", "0"], "argument -k: must be 1 or more, got 0"),
        (["predict", "kpc", "--top", "0", "x"], "argument --top: must be 1 or more"),
        (["predict", "kpc", "--threads", "0", "x"], "argument --threads: must be 1 or more, got 0"),
        (["compare", "a", "b", "--threads", "-1"], "argument --threads: must be 1 or more, got -1"),
        (["serve", "--threads", "0"], "argument --threads: must be 1 or more, got 0"),
        (["encode", "--input", str(source), "--output", str(tmp_path / "v"), "--threads", "0"], "got 0"),
        (["dedupe", "--input", str(source), "--output", str(tmp_path / "g.jsonl"), "--batch-size", "0"], "got 0"),
        (["parse", "--input", str(source), "--output", str(tmp_path / "o3"), "--workers", "0"], "got 0"),
    ]
    for argv, message in cases:
        assert main(["-q", *argv]) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert not (tmp_path / "p.csv").exists() and not (tmp_path / "i").exists()


def test_the_job_modules_import_no_model_code():
    code = (
        "import sys; import mathgraph.batch_jobs, mathgraph.tasks.jobs.stages, mathgraph.cli.prediction_files, mathgraph.api; "
        "print(sorted(m for m in ('torch', 'transformers', 'spacy', 'ray', 'pyarrow', 'datasets') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ})
    assert done.stdout.splitlines()[-1] == "[]"


def test_a_saved_datasets_directory_is_a_bank(tmp_path):
    from datasets import Dataset

    Dataset.from_list([{"id": f"d{i}", "problem": p} for i, p in enumerate(PROBLEMS[:3])]).save_to_disk(
        str(tmp_path / "bank")
    )
    assert main(["-q", "parse", "--input", str(tmp_path / "bank"), "--output", str(tmp_path / "g.jsonl")]) == 0
    graphs = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert [(g["id"], g["line"], g["text"]) for g in graphs] == [
        (f"d{i}", i + 1, p) for i, p in enumerate(PROBLEMS[:3])
    ]


def test_the_parse_stage_notes_its_graph_cache_hits(tmp_path, caplog):
    from mathgraph.tasks.jobs.stages import ParseStage

    stage = ParseStage(parser="spacy", cache=str(tmp_path / "graphs.sqlite"))
    items = [{"input": "Find $x$ if $x+1=2$."}, {"input": "Tom has 3 apples."}]
    with caplog.at_level(logging.DEBUG, logger="mathgraph"):
        stage([dict(item) for item in items])
        stage([dict(item) for item in items[:1]])
    stage.close()
    notes = [r.getMessage() for r in caplog.records if "graph cache" in r.getMessage()]
    assert notes == [
        f"graph cache {tmp_path / 'graphs.sqlite'}: 0 hits, 2 parsed",
        f"graph cache {tmp_path / 'graphs.sqlite'}: 1 hits, 0 parsed",
    ]
