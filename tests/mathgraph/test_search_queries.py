"""`mathgraph search --queries FILE`: many queries against one loaded model and index, and the library
functions behind it (``tasks.search.commands.search_records``, ``mathgraph.jsonl.read_text_lines``)."""

import json
from pathlib import Path

import pytest

import mathgraph
from mathgraph.cli import main
from mathgraph.jsonl import JsonlError, TextRecord, read_text_lines

SAMPLE = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"
QUESTIONS = [json.loads(line)["question"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def tiny_index(tmp_path, tiny_encoder):
    """An index of the bundled GSM-Plus sample's questions, built by `mathgraph index build` with the tiny model."""
    start, index = tmp_path / "start", tmp_path / "index"
    tiny_encoder.save_pretrained(start)
    assert (
        main(
            [
                "-q",
                "index",
                "build",
                "--input",
                str(SAMPLE),
                "--text-field",
                "question",
                "--model",
                str(start),
                "--output",
                str(index),
            ]
        )
        == 0
    )
    return index


def single_search(capsys, index, query):
    capsys.readouterr()
    assert main(["-q", "search", "--index", str(index), query, "-k", "3", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def read_results(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_a_text_file_and_a_jsonl_file_give_the_single_searches(tmp_path, tiny_index, capsys):
    queries = [QUESTIONS[3], QUESTIONS[10], QUESTIONS[17]]
    text_file = tmp_path / "queries.txt"
    text_file.write_text(f"{queries[0]}\n\n{queries[1]}\n{queries[2]}\n", encoding="utf-8")  # a blank line is skipped
    jsonl_file = tmp_path / "queries.jsonl"
    jsonl_file.write_text(
        "".join(
            json.dumps(row) + "\n"
            for row in (
                {"id": "a", "question": queries[0]},
                {"question": queries[1]},
                {"id": 7, "question": queries[2]},
            )
        ),
        encoding="utf-8",
    )
    from_text, from_jsonl = tmp_path / "text-hits.jsonl", tmp_path / "jsonl-hits.jsonl"
    assert (
        main(
            [
                "search",
                "--index",
                str(tiny_index),
                "--queries",
                str(text_file),
                "-k",
                "3",
                "--output",
                str(from_text),
                "--batch-size",
                "2",
            ]
        )
        == 0
    )
    assert "searched 3 queries" in capsys.readouterr().err
    assert (
        main(
            [
                "-q",
                "search",
                "--index",
                str(tiny_index),
                "--queries",
                str(jsonl_file),
                "--text-field",
                "question",
                "-k",
                "3",
                "--output",
                str(from_jsonl),
            ]
        )
        == 0
    )

    text_results, jsonl_results = read_results(from_text), read_results(from_jsonl)
    assert [(r["query"], r["line"]) for r in text_results] == [(queries[0], 1), (queries[1], 3), (queries[2], 4)]
    assert [list(r) for r in jsonl_results] == [
        ["query", "id", "line", "hits"],
        ["query", "line", "hits"],
        ["query", "id", "line", "hits"],
    ]
    assert [r.get("id") for r in jsonl_results] == ["a", None, 7] and [r["line"] for r in jsonl_results] == [1, 2, 3]
    for query, from_text_file, from_jsonl_file in zip(queries, text_results, jsonl_results):
        alone = single_search(capsys, tiny_index, query)
        for hits in (from_text_file["hits"], from_jsonl_file["hits"]):
            assert [h["rank"] for h in hits] == [1, 2, 3]
            assert [h["index"] for h in hits] == [h["index"] for h in alone]
            assert [h["row"] for h in hits] == [h["row"] for h in alone]
            assert [h["score"] for h in hits] == pytest.approx([h["score"] for h in alone], abs=1e-5)
    assert text_results[0]["hits"][0]["index"] == 3  # the query itself comes first


def test_results_go_to_stdout_without_output(tmp_path, tiny_index, capsys):
    text_file = tmp_path / "queries.txt"
    text_file.write_text(QUESTIONS[5] + "\n", encoding="utf-8")
    assert main(["-q", "search", "--index", str(tiny_index), "--queries", str(text_file), "-k", "2"]) == 0
    [result] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert result["line"] == 1 and len(result["hits"]) == 2 and result["hits"][0]["index"] == 5


def test_a_bad_line_is_named_or_skipped(tmp_path, tiny_index, capsys):
    source = tmp_path / "queries.jsonl"
    source.write_text(
        "\n".join(
            [
                json.dumps({"problem": QUESTIONS[0]}),
                "{not json",
                json.dumps({"problem": "  "}),
                json.dumps({"question": "no problem field"}),
                json.dumps({"problem": QUESTIONS[1]}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    output = tmp_path / "hits.jsonl"
    assert main(["-q", "search", "--index", str(tiny_index), "--queries", str(source), "--output", str(output)]) == 2
    assert f"{source}:2: not valid JSON" in capsys.readouterr().err
    assert not output.exists()
    assert (
        main(
            [
                "-q",
                "search",
                "--index",
                str(tiny_index),
                "--queries",
                str(source),
                "--output",
                str(output),
                "--skip-bad",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "skipped 3 bad lines" in err and f"{source}:3: field 'problem' is empty" in err
    assert f"{source}:4: no field 'problem'" in err
    assert [r["line"] for r in read_results(output)] == [1, 5]


def test_usage_errors(tmp_path, tiny_index, capsys):
    assert main(["-q", "search", "--index", str(tiny_index)]) == 2
    assert "give one QUERY or --queries FILE" in capsys.readouterr().err
    assert main(["-q", "search", "--index", str(tiny_index), "x", "--queries", "q.txt"]) == 2
    assert "give one QUERY or --queries FILE" in capsys.readouterr().err
    assert main(["-q", "search", "--index", str(tiny_index), "x", "--output", "o.jsonl"]) == 2
    assert "apply to --queries files only" in capsys.readouterr().err
    assert main(["-q", "search", "--index", str(tiny_index), "--queries", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt" in capsys.readouterr().err


def test_read_text_lines_plain_and_jsonl(tmp_path):
    plain = tmp_path / "q.txt"
    plain.write_text("  first query \n\n{not json, just text}\n", encoding="utf-8")
    records, bad = read_text_lines(plain)
    assert records == [TextRecord(1, "first query", {}), TextRecord(3, "{not json, just text}", {})] and bad == []
    rows = tmp_path / "q.JSONL"
    rows.write_text('{"id": 1, "problem": "a"}\n\n{"problem": ""}\n', encoding="utf-8")
    with pytest.raises(JsonlError, match=r"q.JSONL:3: field 'problem' is empty"):
        read_text_lines(rows)
    records, bad = read_text_lines(rows, skip_bad=True)
    assert records == [TextRecord(1, "a", {"id": 1, "problem": "a"})] and [e.line for e in bad] == [3]


def test_an_approximate_index_type_searches_like_the_flat_one(tmp_path, tiny_index, capsys):
    """`index build --index-type ivf-pq`; `search` on it, `--exact`, and `--nprobe` over every cell
    give the flat index's hits (24 rows: its cells are few, and the candidates are re-scored exactly)."""
    start, index = tmp_path / "start", tmp_path / "ivf-pq"
    argv = ["-q", "index", "build", "--input", str(SAMPLE), "--text-field", "question", "--model", str(start)]
    assert main([*argv, "--output", str(index), "--index-type", "ivf-pq"]) == 0
    manifest = json.loads((index / "manifest.json").read_text())
    assert manifest["index_type"] == "ivf-pq" and (index / "ann.faiss").is_file()
    flat = single_search(capsys, tiny_index, QUESTIONS[4])
    for extra in ([], ["--exact"], ["--nprobe", "64"]):
        capsys.readouterr()
        assert main(["-q", "search", "--index", str(index), QUESTIONS[4], "-k", "3", "--format", "json", *extra]) == 0
        hits = json.loads(capsys.readouterr().out)
        assert [h["index"] for h in hits] == [h["index"] for h in flat]
        assert [h["score"] for h in hits] == pytest.approx([h["score"] for h in flat], abs=1e-5)
    assert main(["-q", "search", "--index", str(index), QUESTIONS[4], "--nprobe", "0"]) == 2
    assert "--nprobe must be >= 1" in capsys.readouterr().err
    assert main(["-q", "search", "--index", str(index), QUESTIONS[4], "--exact", "--approximate"]) == 2


def test_the_text_output_names_each_rows_id_its_cosine_and_a_fused_score(tmp_path, tiny_encoder, capsys):
    bank = Path(mathgraph.__file__).parent / "data" / "kpc_sample.jsonl"
    rows = [json.loads(line) for line in bank.read_text(encoding="utf-8").splitlines()[:12]]
    source, start, index = tmp_path / "bank.jsonl", tmp_path / "start", tmp_path / "index"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    tiny_encoder.save_pretrained(start)
    assert main(["-q", "index", "build", "--input", str(source), "--model", str(start), "--output", str(index)]) == 0
    query = rows[4]["problem"]
    search = ["-q", "search", "--index", str(index), query, "-k", "3", "--hybrid"]
    assert main([*search, "--format", "json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert main(search) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for rank, (line, hit) in enumerate(zip(lines, hits), 1):
        # the row's id from the bank, not its position; the cosine, then the fused score it was ranked by
        assert line.startswith(f"{rank}. cosine {hit['cosine']:.4f}  score {hit['score']:.2f}  {hit['row']['id']}  ")
        assert -1.0 <= hit["cosine"] <= 1.0 + 1e-6
    assert hits[0]["row"]["id"] == rows[4]["id"] and hits[0]["score"] > 1.0  # a fused score, not a cosine

    assert main([*search[:-1], "--no-hybrid"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"1. cosine 1.0000  {rows[4]['id']}  ") and "score" not in first  # cosine order
