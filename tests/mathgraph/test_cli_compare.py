"""``mathgraph compare``: one pair as text or JSON, a question and its solution, JSONL files in and out, clear
errors before anything slow, one model call for a whole file, and the shipped model's QRC relation."""

import json
import subprocess
import sys

import pytest

from mathgraph.cli import main
from mathgraph.parsers.compare import align_problems
from mathgraph.parsers.problem import parse_problem
from mathgraph.parsers.solution import align_solution

A = "Tom has 3 apples. He buys 5 more apples. How many apples does he have now?"
B = (
    "Tom has three apples. He buys 12 more apples at the shop. His sister has 4 pears. "
    "How many apples does he have now?"
)
SOLUTION = "He has 3 + 5 = 8 apples.\n#### 8"


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def as_json(data):
    """``data`` as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(data))


class RecordingQrc:
    """A QRC 'predictor' that records its calls: a relation for every pair, from the lengths of its texts."""

    def __init__(self):
        self.calls = []

    def predict(self, inputs, batch_size=32, graphs=None, rows=None):
        self.calls.append(list(inputs))
        return [
            {
                "label": "longer" if len(b) > len(a) else "not longer",
                "probabilities": {"longer": 0.75, "not longer": 0.25}
                if len(b) > len(a)
                else {"longer": 0.25, "not longer": 0.75},
                "extra": 1,
            }
            for a, b in inputs
        ]


@pytest.fixture
def recording_qrc(monkeypatch):
    """``mathgraph compare``'s model replaced by a ``RecordingQrc``."""
    import mathgraph.cli.compare

    predictor = RecordingQrc()
    monkeypatch.setattr(mathgraph.cli.compare, "_load_predictor", lambda args: predictor)
    return predictor


def test_one_pair_prints_the_differences_in_words(capsys):
    assert main(["-q", "compare", "--no-model", A, B]) == 0
    printed = capsys.readouterr().out
    assert printed == align_problems(parse_problem(A), parse_problem(B)).explain() + "\n"
    assert printed.startswith("sentences: ") and "'12' (12)" in printed and "His sister has 4 pears." in printed


def test_one_pair_as_json(capsys):
    assert main(["-q", "compare", A, B, "--no-model", "--format", "json"]) == 0  # TEXTs before the options too
    printed = json.loads(capsys.readouterr().out)
    expected = align_problems(parse_problem(A), parse_problem(B)).to_dict()
    assert printed == {"alignment": as_json(expected), "relation": None}
    assert len(printed["alignment"]["sentence_spans_b"]) == 4 and printed["alignment"]["quantities"]


def test_a_solution_is_aligned_with_its_question(capsys):
    assert main(["-q", "compare", "--solution", A, SOLUTION]) == 0
    printed = capsys.readouterr().out
    expected = align_solution(parse_problem(A), SOLUTION)
    assert printed == expected.explain() + "\n" and "uses given quantities: '3', '5'" in printed
    assert main(["-q", "compare", "--solution", "--format", "json", A, SOLUTION]) == 0
    assert json.loads(capsys.readouterr().out) == {"alignment": as_json(expected.to_dict()), "relation": None}


def test_the_relation_follows_the_differences(recording_qrc, capsys):
    assert main(["-q", "compare", A, B]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1] == "QRC model: longer, probability 0.7500 (next: not longer, 0.2500)"
    assert "\n".join(printed[:-1]) == align_problems(parse_problem(A), parse_problem(B)).explain()
    assert main(["-q", "compare", "--format", "json", A, B]) == 0
    assert json.loads(capsys.readouterr().out)["relation"] == {
        "label": "longer",
        "probabilities": {"longer": 0.75, "not longer": 0.25},
    }
    assert recording_qrc.calls == [[(A, B)], [(A, B)]]
    assert main(["-q", "compare", "--solution", A, SOLUTION]) == 0  # no relation for a solution
    assert "QRC relation" not in capsys.readouterr().out and len(recording_qrc.calls) == 2


def test_a_file_of_pairs_to_jsonl_with_one_model_call(recording_qrc, tmp_path, capsys):
    rows = [{"id": "p1", "text_a": A, "text_b": B}, {"text_a": B, "text_b": A}, {"id": 3, "text_a": A, "text_b": A}]
    source = write_lines(tmp_path / "pairs.jsonl", [json.dumps(row) for row in rows])
    output = tmp_path / "out.jsonl"
    assert main(["compare", "--input", str(source), "--output", str(output), "--batch-size", "2"]) == 0
    assert "wrote 3 comparisons to " + str(output) in capsys.readouterr().err
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert [(r.get("id"), r["line"]) for r in records] == [("p1", 1), (None, 2), (3, 3)]
    assert list(records[0]) == ["id", "line", "alignment", "relation"] and "id" not in records[1]
    for row, record in zip(rows, records):
        expected = align_problems(parse_problem(row["text_a"]), parse_problem(row["text_b"])).to_dict()
        assert record["alignment"] == as_json(expected)
    assert [r["relation"]["label"] for r in records] == ["longer", "not longer", "same problem"]
    assert records[2]["relation"] == {"label": "same problem", "probabilities": {"same problem": 1.0}}
    assert recording_qrc.calls == [[(A, B), (B, A)]]  # every pair in one call, but the same problem: not asked

    # to stdout, without a model, as solutions
    solutions = write_lines(tmp_path / "solutions.jsonl", [json.dumps({"text_a": A, "text_b": SOLUTION})])
    assert main(["-q", "compare", "--solution", "--input", str(solutions)]) == 0
    [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert record == {
        "line": 1,
        "alignment": as_json(align_solution(parse_problem(A), SOLUTION).to_dict()),
        "relation": None,
    }
    assert len(recording_qrc.calls) == 1


def test_bad_lines_stop_or_are_skipped_as_predict_does(tmp_path, capsys):
    source = write_lines(
        tmp_path / "pairs.jsonl",
        [
            json.dumps({"id": "a", "text_a": A, "text_b": B}),
            "{oops",
            json.dumps({"id": "c", "text_a": A, "text_b": "  "}),
            json.dumps({"id": "d", "text_a": A}),
            json.dumps({"id": "e", "text_a": B, "text_b": A}),
        ],
    )
    output = tmp_path / "out.jsonl"
    assert main(["-q", "compare", "--no-model", "--input", str(source), "--output", str(output)]) == 2
    assert f"mathgraph: error: {source}:2: not valid JSON" in capsys.readouterr().err and not output.exists()
    assert main(["-q", "compare", "--no-model", "--input", str(source), "--output", str(output), "--skip-bad"]) == 0
    err = capsys.readouterr().err
    assert "wrote 2 comparisons" not in err and err.startswith("skipped 3 bad lines")  # -q: the warning alone
    assert f"{source}:3: field 'text_b' is empty" in err and f"{source}:4: no field 'text_b'" in err
    assert [json.loads(line)["id"] for line in output.read_text().splitlines()] == ["a", "e"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--no-model", "   ", B], "problem A is empty (or only whitespace)"),
        (["--no-model", A, ""], "problem B is empty (or only whitespace)"),
        (["--solution", A, " \n"], "the solution B is empty (or only whitespace)"),
        ([A], "give two TEXTs (problem A, then problem B), or --input FILE; got 1"),
        ([A, B, A], "got 3"),
        (["--input", "pairs.jsonl", A, B], "give two TEXTs or --input FILE, not both"),
        ([A, B, "--output", "out.jsonl"], "--output and --skip-bad apply to --input files only"),
        (["--model", "somewhere", "--no-model", A, B], "leave it out with --no-model"),
        (["--model", "somewhere", "--solution", A, B], "leave it out with --solution"),
        (["--input", "{tmp}/missing.jsonl"], "missing.jsonl"),
        ([A, "Tom \ud800 has 3 apples."], "problem B holds a lone surrogate U+D800 at character 5 (after 'Tom ')"),
        # a TEXT whose bytes are not UTF-8, as Python decodes it from the command line (surrogateescape)
        (
            [b"Tom \xff has".decode("utf-8", "surrogateescape"), B],
            "problem A is not valid UTF-8: byte 0xff at character 5",
        ),
    ],
)
def test_usage_and_input_errors_come_before_any_model(monkeypatch, tmp_path, capsys, argv, message):
    import mathgraph.cli.compare

    def no_model(args):
        raise AssertionError("the model loaded before the input was checked")

    monkeypatch.setattr(mathgraph.cli.compare, "_load_predictor", no_model)
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    assert main(["-q", "compare", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mathgraph: error:") and message in err


def test_a_directory_without_a_model_is_named(tmp_path, capsys):
    assert main(["-q", "compare", "--model", str(tmp_path), A, B]) == 2
    assert "holds nothing mathgraph can load" in capsys.readouterr().err


def test_comparing_without_a_model_imports_no_model_code():
    # spaCy imports torch itself (thinc looks for it); --no-model adds neither transformers nor the models
    code = (
        f"import sys; from mathgraph.cli import main; main(['-q', 'compare', '--no-model', {A!r}, {B!r}]); "
        "print(sorted(m for m in ('transformers', 'torch_geometric', 'mathgraph.models.encoder', 'mathgraph.models.package', "
        "'mathgraph.models.task_model', 'mathgraph.models.late_fusion') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"
    assert done.stdout.startswith("sentences: ")


@pytest.mark.slow
def test_the_shipped_model_predicts_the_relation(capsys):
    from mathgraph.api import task_predictor

    [expected] = task_predictor("qrc").predict([(A, B)])
    assert main(["-q", "compare", "--format", "json", A, B]) == 0
    relation = json.loads(capsys.readouterr().out)["relation"]
    assert relation["label"] == expected["label"]
    assert relation["probabilities"] == pytest.approx(expected["probabilities"], abs=1e-5)
    assert sum(relation["probabilities"].values()) == pytest.approx(1)
    assert main(["-q", "compare", A, B]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(
        f"QRC model: {expected['label']}, probability {expected['probabilities'][expected['label']]:.4f} (next: "
    )


def test_the_same_problem_is_said_to_be_the_same_and_the_model_is_not_asked(recording_qrc, capsys):
    assert main(["-q", "compare", A, "  " + A.replace(" ", "\n  ") + "\n"]) == 0  # whitespace only
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "the same problem: the texts differ at most in whitespace"
    assert (
        printed[-1] == "relation: the same problem (the texts differ at most in whitespace); no QRC relation to predict"
    )
    assert recording_qrc.calls == []
    assert main(["-q", "compare", "--format", "json", A, A]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["alignment"]["same_problem"] is True and record["relation"]["label"] == "same problem"


def test_a_change_of_words_only_names_the_words_beside_the_probability(recording_qrc, capsys):
    a = "Tom gives away 3 apples. How many apples does he have?"
    b = "Tom receives 3 apples. How many apples does he have?"
    assert main(["-q", "compare", a, b]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert (
        "  ~ changed: 'Tom gives away 3 apples.' -> 'Tom receives 3 apples.' (words: 'gives away' -> 'receives')"
        in printed
    )
    assert printed[-2:] == [
        "only words changed: 'gives away' -> 'receives' (no relation names that for certain)",
        "QRC model: not longer, probability 0.7500 (next: longer, 0.2500)",
    ]


def test_a_pair_line_that_is_not_text_is_a_bad_line(tmp_path, capsys):
    source = write_lines(
        tmp_path / "pairs.jsonl",
        [
            json.dumps({"id": "a", "text_a": A, "text_b": B}),
            json.dumps({"id": "b", "text_a": "Tom \ud800", "text_b": B}),
        ],
    )
    assert main(["-q", "compare", "--no-model", "--input", str(source)]) == 2
    assert f"{source}:2: field 'text_a' holds a lone surrogate U+D800" in capsys.readouterr().err
    assert main(["-q", "compare", "--no-model", "--input", str(source), "--skip-bad"]) == 0
    captured = capsys.readouterr()
    assert [json.loads(line)["id"] for line in captured.out.splitlines()] == ["a"]
    assert "skipped 1 bad line" in captured.err
