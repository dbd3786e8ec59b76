"""Graph files (``mathgraph.graph.write_graphs / read_graphs / read_problems``) and corpora
(``mathgraph.jsonl.read_corpora``): the reading and writing the CLI's parse, encode, vocab and training use."""

import json

import pytest

from mathgraph.graph import MathSyntaxGraph, read_graphs, read_problems, write_graphs
from mathgraph.jsonl import JsonlError, corpus_spec, read_corpora, read_text_records


@pytest.fixture
def problems_file(tmp_path, sample_graphs):
    path = tmp_path / "problems.jsonl"
    rows = [{"id": "a", "question": sample_graphs[0].text}, {"question": sample_graphs[1].text}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_graphs_round_trip_with_their_rows_id_and_line(tmp_path, problems_file, sample_graphs):
    records, _ = read_text_records(problems_file, "question")
    path = tmp_path / "graphs.jsonl"
    assert write_graphs(path, iter(sample_graphs[:2]), records) == 2
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert list(lines[0])[0] == "id" and lines[0]["id"] == "a" and "id" not in lines[1]
    assert [line["line"] for line in lines] == [1, 2]
    assert [g.to_dict() for g in read_graphs(path)] == [g.to_dict() for g in sample_graphs[:2]]
    assert write_graphs(path, sample_graphs[:3]) == 3  # without rows: the graphs alone
    assert "line" not in json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def test_write_graphs_reads_a_lazy_parser_to_its_end(tmp_path, problems_file, sample_graphs):
    finished = []

    def lazily():
        yield from sample_graphs[:2]
        finished.append(True)  # code after the last graph (closing a progress bar) runs

    records, _ = read_text_records(problems_file, "question")
    write_graphs(tmp_path / "graphs.jsonl", lazily(), records)
    assert finished == [True]


def test_a_bad_graph_line_names_file_and_line(tmp_path, sample_graphs):
    path = tmp_path / "graphs.jsonl"
    path.write_text(sample_graphs[0].to_json() + "\n\n" + '{"schema_version": 2}\n', encoding="utf-8")
    with pytest.raises(JsonlError, match=r"graphs.jsonl:3: malformed graph"):
        read_graphs(path)


def test_read_problems_texts_graphs_or_both_checked(tmp_path, problems_file, sample_graphs):
    graphs = tmp_path / "graphs.jsonl"
    write_graphs(graphs, sample_graphs[:2])
    assert read_problems(problems_file, "question") == [g.text for g in sample_graphs[:2]]
    alone = read_problems(graphs_path=graphs)
    assert all(isinstance(g, MathSyntaxGraph) for g in alone) and len(alone) == 2
    assert [g.text for g in read_problems(problems_file, "question", graphs)] == [g.text for g in sample_graphs[:2]]
    other = tmp_path / "other.jsonl"
    write_graphs(other, sample_graphs[1:3])
    with pytest.raises(ValueError, match=rf"{problems_file}:1: its graph in {other} is of another text"):
        read_problems(problems_file, "question", other)
    write_graphs(other, sample_graphs[:3])
    with pytest.raises(ValueError, match="has 3 graphs but .* has 2 problems"):
        read_problems(problems_file, "question", other)
    with pytest.raises(ValueError, match="give an input file"):
        read_problems()


def test_corpora_with_and_without_a_field(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b:c.jsonl"
    first.write_text('{"question": "one"}\n{"question": "two"}\n', encoding="utf-8")
    second.write_text('{"problem": "three"}\n', encoding="utf-8")
    assert corpus_spec(f"{first}:question") == (str(first), "question")
    assert corpus_spec(str(first)) == (str(first), "problem")
    assert corpus_spec(str(second)) == (str(second), "problem")  # an existing file's colon is part of its name
    corpora = read_corpora([f"{first}:question", str(second)])
    assert [(c.path, c.field, c.texts) for c in corpora] == [
        (str(first), "question", ["one", "two"]),
        (str(second), "problem", ["three"]),
    ]
    with pytest.raises(JsonlError, match=r"a.jsonl:1: no field 'problem'"):
        read_corpora([str(first)])
