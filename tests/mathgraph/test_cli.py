"""The `mathgraph parse` command on files with good and bad lines (real spaCy parser)."""

import json

import pytest

from mathgraph.cli import main
from mathgraph.samples import sample_problems

PROBLEMS = [row["problem"] for row in sample_problems()]


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_graphs(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_file_graphs_keep_input_order_with_two_workers(tmp_path):
    source = write_lines(tmp_path / "in.jsonl", [json.dumps({"problem": p, "n": i}) for i, p in enumerate(PROBLEMS)])
    output = tmp_path / "out.jsonl"
    assert main(["-q", "parse", "--input", str(source), "--output", str(output), "--workers", "2", "--batch-size", "2"]) == 0
    graphs = read_graphs(output)
    assert [g["text"] for g in graphs] == PROBLEMS
    assert [g["line"] for g in graphs] == list(range(1, len(PROBLEMS) + 1))
    first = graphs[0]
    assert {"nodes", "edges", "formulas", "parser", "schema_version"} <= set(first)
    assert {"id", "kind", "label"} <= set(first["nodes"][0]) and {"src", "dst", "relation"} == set(first["edges"][0])
    assert {"latex", "span", "status"} <= set(first["formulas"][0])
    assert first["parser"] == "spacy"


def test_bad_line_stops_with_file_and_line_and_writes_nothing(tmp_path, capsys):
    source = write_lines(tmp_path / "in.jsonl", [json.dumps({"problem": PROBLEMS[0]}), "{not json", json.dumps({"problem": "x"})])
    output = tmp_path / "out.jsonl"
    assert main(["-q", "parse", "--input", str(source), "--output", str(output)]) == 2
    assert f"{source}:2: not valid JSON" in capsys.readouterr().err
    assert not output.exists()


@pytest.mark.parametrize(
    "row, reason",
    [
        ({"question": "What is $1+1$?"}, "no field 'problem' (fields: question)"),
        ({"problem": 7}, "field 'problem' must be a string, got int"),
        ({"problem": "   "}, "field 'problem' is empty"),
        ([1, 2], "expected a JSON object, got list"),
    ],
)
def test_each_kind_of_bad_line_is_named(tmp_path, capsys, row, reason):
    source = write_lines(tmp_path / "in.jsonl", [json.dumps(row)])
    assert main(["-q", "parse", "--input", str(source), "--output", str(tmp_path / "out.jsonl")]) == 2
    assert f"{source}:1: {reason}" in capsys.readouterr().err


def test_skip_bad_counts_and_reports_and_keeps_order(tmp_path, capsys):
    lines = [
        json.dumps({"problem": PROBLEMS[0]}),
        "not json at all",
        "",
        json.dumps({"text": "wrong field"}),
        json.dumps({"problem": PROBLEMS[1]}),
        json.dumps({"problem": PROBLEMS[2]}),
    ]
    source = write_lines(tmp_path / "in.jsonl", lines)
    output = tmp_path / "out.jsonl"
    assert main(["-q", "parse", "--input", str(source), "--output", str(output), "--skip-bad"]) == 0
    graphs = read_graphs(output)
    assert [g["text"] for g in graphs] == PROBLEMS[:3]
    assert [g["line"] for g in graphs] == [1, 5, 6]
    err = capsys.readouterr().err
    assert "wrote 3 graphs" in err and "skipped 2 bad lines" in err
    assert f"{source}:2: not valid JSON" in err and f"{source}:4: no field 'problem'" in err


def test_one_text_as_json_and_drawn(tmp_path, capsys):
    picture = tmp_path / "graph.png"
    assert main(["-q", "parse", "Find $x$ if $2x+3=7$.", "--format", "json", "--draw", str(picture)]) == 0
    graph = json.loads(capsys.readouterr().out)
    assert [f["latex"] for f in graph["formulas"]] == ["x", "2x+3=7"]
    assert picture.stat().st_size > 5_000


def test_sample_as_text_tree(capsys):
    assert main(["-q", "parse", "--sample", "math-1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("parser: spacy") and "math→ \\triangle" in out


def test_usage_errors_are_clear(tmp_path, capsys):
    assert main(["-q", "parse"]) == 2
    assert "give the problem TEXT" in capsys.readouterr().err
    assert main(["-q", "parse", "--input", str(tmp_path / "missing.jsonl"), "--output", str(tmp_path / "o.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert main(["-q", "parse", "--sample", "99"]) == 2
    assert "no sample '99'" in capsys.readouterr().err
