"""``mathgraph predict``: one input from TEXT arguments, JSONL files in and out, every kind of model directory."""

import json

import pytest

from mathgraph.cli import main
from mathgraph.samples import sample_problems

PROBLEMS = [row["problem"] for row in sample_problems()]
LABELS = ["Algebra", "Geometry", "Number Theory"]


@pytest.fixture
def kpc_dir(tmp_path, tiny_encoder):
    """An untrained tiny KPC task model, saved."""
    from mathgraph.models.task_model import TaskConfig, TaskModel

    directory = tmp_path / "kpc"
    TaskModel(tiny_encoder, TaskConfig("kpc", labels=list(LABELS))).save_pretrained(directory)
    return directory


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_one_text_prints_the_label_and_top_probabilities(kpc_dir, capsys):
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir), "--device", "cpu", "--top", "2", PROBLEMS[0]]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("label: ") and printed[0][len("label: ") :] in LABELS
    assert printed[1] == "probabilities (top 2):" and len(printed) == 4
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir), "--format", "json", PROBLEMS[0]]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["probabilities"]) == set(LABELS) and sum(result["probabilities"].values()) == pytest.approx(1)
    assert result["label"] == printed[0][len("label: ") :]


def test_jsonl_file_round_trip_keeps_order_and_ids(kpc_dir, tmp_path, capsys):
    from mathgraph.models.task_model import TaskModel

    texts = sorted(PROBLEMS[:5], key=len, reverse=True)  # longest first: batching reorders them
    rows = [json.dumps({"id": f"p{i}", "problem": t}) for i, t in enumerate(texts)]
    source = write_lines(tmp_path / "in.jsonl", rows)
    output = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "predict",
                "kpc",
                "--model",
                str(kpc_dir),
                "--input",
                str(source),
                "--output",
                str(output),
                "--batch-size",
                "2",
            ]
        )
        == 0
    )
    assert "wrote 5 predictions" in capsys.readouterr().err
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["id"] for r in records] == [f"p{i}" for i in range(5)] and [r["line"] for r in records] == [1, 2, 3, 4, 5]
    expected = TaskModel.from_pretrained(kpc_dir).predict(texts, batch_size=1)
    for record, result in zip(records, expected):
        assert record["label"] == result["label"]
        assert record["probabilities"] == pytest.approx(result["probabilities"], abs=1e-4)

    # another text field, no ids, to stdout
    other = write_lines(tmp_path / "q.jsonl", [json.dumps({"q": t}) for t in texts[:2]])
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir), "--input", str(other), "--text-field", "q"]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["line"] for r in printed] == [1, 2] and "id" not in printed[0]


def test_bad_lines_stop_or_are_skipped_as_parse_does(kpc_dir, tmp_path, capsys):
    source = write_lines(
        tmp_path / "in.jsonl",
        [
            json.dumps({"id": "a", "problem": PROBLEMS[0]}),
            "{oops",
            json.dumps({"id": "c", "problem": ""}),
            json.dumps({"id": "d", "problem": PROBLEMS[1]}),
        ],
    )
    output = tmp_path / "out.jsonl"
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir), "--input", str(source), "--output", str(output)]) == 2
    assert f"{source}:2: not valid JSON" in capsys.readouterr().err and not output.exists()
    assert (
        main(
            [
                "-q",
                "predict",
                "kpc",
                "--model",
                str(kpc_dir),
                "--input",
                str(source),
                "--output",
                str(output),
                "--skip-bad",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "skipped 2 bad lines" in err and f"{source}:3: field 'problem' is empty" in err
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [(r["id"], r["line"]) for r in records] == [("a", 1), ("d", 4)]


def test_pairs_rankings_and_other_model_kinds(tmp_path, tiny_encoder, capsys):
    from pathlib import Path

    import mathgraph
    from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
    from mathgraph.tasks.data import build_qrc_pairs, group_seeds
    from mathgraph.tasks.training.tfidf import train_tfidf

    sample = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"
    gsmplus = [json.loads(line) for line in sample.read_text().splitlines()]
    pairs = build_qrc_pairs(group_seeds(gsmplus), random_state=0)
    tfidf = tmp_path / "tfidf"
    train_tfidf("qrc", pairs).save_pretrained(tfidf)
    assert (
        main(
            ["-q", "predict", "qrc", "--model", str(tfidf), "--format", "json", pairs[0]["text_a"], pairs[0]["text_b"]]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["label"] in {p["label"] for p in pairs} and sum(result["probabilities"].values()) == pytest.approx(1)
    source = write_lines(tmp_path / "pairs.jsonl", [json.dumps(p) for p in pairs[:3]])
    assert main(["-q", "predict", "qrc", "--model", str(tfidf), "--input", str(source)]) == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == [p["id"] for p in pairs[:3]]
    assert main(["-q", "predict", "qrc", "--model", str(tfidf), pairs[0]["text_a"]]) == 2
    assert "qrc takes two TEXTs" in capsys.readouterr().err

    multi = tmp_path / "multi"
    MultiTaskModel(
        tiny_encoder, MultiTaskConfig([{"task": "kpc", "labels": list(LABELS)}, {"task": "sqr", "labels": []}])
    ).save_pretrained(multi)
    assert main(["-q", "predict", "sqr", "--model", str(multi), PROBLEMS[0], PROBLEMS[1], PROBLEMS[2]]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "ranking (best first):" and len(printed) == 3
    rows = [
        json.dumps({"id": "s1", "query": PROBLEMS[0], "candidates": PROBLEMS[1:4]}),
        json.dumps({"id": "s2", "query": PROBLEMS[4], "candidates": "no"}),
    ]
    lists = write_lines(tmp_path / "sqr.jsonl", rows)
    assert main(["-q", "predict", "sqr", "--model", str(multi), "--input", str(lists), "--skip-bad"]) == 0
    captured = capsys.readouterr()
    [record] = [json.loads(line) for line in captured.out.splitlines()]
    assert record["id"] == "s1" and len(record["scores"]) == 3 and sorted(record["ranking"]) == [0, 1, 2]
    assert "'candidates' must be a non-empty list" in captured.err
    assert main(["-q", "predict", "qam", "--model", str(multi), "a", "b"]) == 2
    assert "no qam head" in capsys.readouterr().err


def test_usage_errors_are_clear(kpc_dir, tmp_path, capsys):
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir)]) == 2
    assert "give the input as TEXT arguments, or --input FILE" in capsys.readouterr().err
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir), "x", "--input", "f.jsonl"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir), "x", "--output", "o.jsonl"]) == 2
    assert "apply to --input files only" in capsys.readouterr().err
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir), "   "]) == 2
    assert "the text is empty" in capsys.readouterr().err
    assert main(["-q", "predict", "qrc", "--model", str(kpc_dir), "a", "b"]) == 2
    assert "trained for kpc, not qrc" in capsys.readouterr().err
    assert main(["-q", "predict", "kpc", "--model", str(tmp_path), "x"]) == 2
    assert "holds nothing mathgraph can load" in capsys.readouterr().err


def test_a_directory_that_does_not_exist_is_not_one_that_holds_nothing(tmp_path, capsys):
    """A --model that does not exist once said it 'holds nothing mathgraph can load'."""
    from mathgraph.api import task_predictor
    from mathgraph.registry import load

    empty, gone = tmp_path / "empty", tmp_path / "gone"
    empty.mkdir()
    assert main(["-q", "predict", "kpc", "--model", str(empty), "x"]) == 2
    err = capsys.readouterr().err
    assert f"{empty} holds nothing mathgraph can load" in err
    assert "no such model" not in err
    assert main(["-q", "predict", "kpc", "--model", str(gone), "x"]) == 2
    err = capsys.readouterr().err
    assert f"--model: no such model: {gone}" in err and "holds nothing" not in err
    # past the command line's check, the library says the same
    for call in (lambda: task_predictor("kpc", str(gone)), lambda: load(str(gone))):
        with pytest.raises(FileNotFoundError, match=f"no such model: {gone}"):
            call()


def test_hybrid_needs_a_package(kpc_dir, capsys):
    assert main(["-q", "predict", "kpc", "--model", str(kpc_dir), "--hybrid", PROBLEMS[0]]) == 2
    assert "hybrid fusion needs a model package such as 'shipped'" in capsys.readouterr().err
