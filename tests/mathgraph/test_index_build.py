"""`mathgraph index build` tells a new user what is coming (7,500 problems once ran 19 min with no estimate
and no hint to try a subset first): how many problems, a rough estimate, one progress bar with its own estimate,
``--limit N`` for the first N, and the hint to use it when the input is large."""

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

import mathgraph
from mathgraph.cli import main
from mathgraph.cli.search import LARGE_INPUT, SUBSET
from mathgraph.tasks.search.index import SearchIndex

SAMPLE = Path(mathgraph.__file__).parent / "data" / "kpc_sample.jsonl"


@pytest.fixture
def start(tmp_path, tiny_encoder):
    directory = tmp_path / "start"
    tiny_encoder.save_pretrained(directory)
    return directory


def bar_drawings(err: str) -> list[str]:
    """Every drawing of the indexing bar on a captured stderr (tqdm redraws with \\r)."""
    return [part for part in re.split(r"[\r\n]", err) if part.startswith("indexing:")]


def test_limit_indexes_the_first_n_with_a_count_an_estimate_and_a_bar(tmp_path, start, terminal_stderr):
    index = tmp_path / "index"
    argv = ["index", "build", "--input", str(SAMPLE), "--model", str(start), "--output", str(index)]
    assert main([*argv, "--limit", "20", "--batch-size", "2"]) == 0
    err = terminal_stderr.readouterr().err
    assert f"{SAMPLE}: 20 problems to index (the first 20 of 112: --limit)" in err
    assert re.search(r"indexing 20 problems: roughly \d+ s \(about [\d.]+ problems a second on ", err)
    drawn = bar_drawings(err)
    assert "0/20" in drawn[0] and "20/20" in drawn[-1] and "100%" in drawn[-1]
    assert "--limit 500" not in err  # 112 rows: no hint
    rows = SearchIndex.from_pretrained(index).rows
    first = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:20]]
    assert rows == first


def test_a_large_input_gets_the_hint_to_try_a_subset_first(tmp_path, start, capsys):
    problems = [json.loads(line)["problem"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:5]]
    large = tmp_path / "large.jsonl"  # five texts over and over: parsed once each, through the graph cache
    large.write_text("".join(json.dumps({"problem": problems[i % 5]}) + "\n" for i in range(LARGE_INPUT + 1)))
    argv = ["index", "build", "--input", str(large), "--model", str(start), "--output", str(tmp_path / "index")]
    assert main([*argv, "--limit", "3"]) == 0
    err = capsys.readouterr().err
    assert "the first 3 of 1,001" in err and f"--limit {SUBSET}" not in err
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "1,001 problems to index" in err
    assert "a large input, which may take a while" in err
    assert f"to try it first, --limit {SUBSET} indexes the first {SUBSET}" in err
    assert len(SearchIndex.from_pretrained(tmp_path / "index")) == LARGE_INPUT + 1


def test_an_index_of_the_vector_shards_of_mathgraph_encode(tmp_path, start, capsys):
    """``index build --vectors DIR``: the shards `mathgraph encode` wrote, with the bank's rows joined by line, no
    encoding again; the same index as one built from the text (up to float rounding of other batches)."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    bank, other = tmp_path / "bank.jsonl", tmp_path / "other.jsonl"
    bank.write_text("".join(lines[:20]), encoding="utf-8")
    other.write_text("".join(lines[:10]), encoding="utf-8")
    vectors, built, encoded = tmp_path / "vectors", tmp_path / "built", tmp_path / "encoded"
    argv = ["--output", str(vectors), "--model", str(start), "--shard-size", "8"]
    assert main(["-q", "encode", "--input", str(bank), *argv]) == 0
    argv = ["-q", "index", "build", "--input", str(bank), "--output"]
    assert main([*argv, str(built), "--model", str(start), "--mode", "joint"]) == 0
    assert capsys.readouterr().err == ""  # -q: no "indexed ..." line
    assert main([*argv[1:], str(encoded), "--vectors", str(vectors), "--index-type", "ivf-flat"]) == 0
    assert "indexed 20 rows (" in capsys.readouterr().err
    from_text, from_shards = SearchIndex.from_pretrained(built), SearchIndex.from_pretrained(encoded)
    assert from_shards.index_type == "ivf-flat" and from_shards.identity == from_text.identity
    assert list(from_shards.rows) == list(from_text.rows)
    np.testing.assert_allclose(np.asarray(from_shards.embeddings), np.asarray(from_text.embeddings), atol=1e-4)
    query = from_text.rows[5]["problem"]
    assert from_shards.search([query], k=1)[0][0].index == from_text.search([query], k=1)[0][0].index == 5
    assert main([*argv, str(tmp_path / "x"), "--vectors", str(vectors), "--model", str(start)]) == 2
    assert "leave out --model" in capsys.readouterr().err
    assert main([*argv, str(tmp_path / "x"), "--input", str(other), "--vectors", str(vectors)]) == 2
    assert "a vector of line 11, which" in capsys.readouterr().err


def test_a_parquet_or_csv_corpus_is_indexed_and_searched_like_jsonl(tmp_path, start, capsys):
    """``index build --input`` and ``search --queries`` read every bank format, rows with all their
    columns; a CSV file's numbers are its lines, the header being line 1."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:6]]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "bank.parquet")
    argv = ["-q", "index", "build", "--model", str(start), "--output"]
    assert main([*argv, str(tmp_path / "from_parquet"), "--input", str(tmp_path / "bank.parquet")]) == 0
    assert main([*argv, str(tmp_path / "from_jsonl"), "--input", str(SAMPLE), "--limit", "6"]) == 0
    from_parquet, from_jsonl = (SearchIndex.from_pretrained(tmp_path / name) for name in ("from_parquet", "from_jsonl"))
    assert list(from_parquet.rows) == list(from_jsonl.rows) == rows
    np.testing.assert_allclose(np.asarray(from_parquet.embeddings), np.asarray(from_jsonl.embeddings), atol=1e-5)

    queries = tmp_path / "queries.csv"
    with open(queries, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["problem"], *([row["problem"]] for row in rows[:2])])
    search = ["-q", "search", "--index", str(tmp_path / "from_parquet"), "--queries", str(queries), "-k", "1"]
    assert main(search) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [result["line"] for result in results] == [2, 3]
    assert [result["hits"][0]["index"] for result in results] == [0, 1]
