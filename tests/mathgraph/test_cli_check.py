"""``mathgraph check``: one solution in words or as JSON, a JSONL file in and out, clear errors for bad input, and
a linter's exit status (1 when a solution has an error)."""

import json

import pytest

from mathgraph.cli import main
from mathgraph.parsers.problem import parse_problem
from mathgraph.parsers.solution import check_solution

PROBLEM = "Ann has 3 boxes of 8 pens. She gives away 5 pens. How many pens are left?"
RIGHT = "3 * 8 = 24 pens.\n24 - 5 = 19 left.\n#### 19"
SLIP = "3 * 8 = 25 pens.\n25 - 5 = 20 left.\n#### 20"
MISCOPIED = "3 * 8 = 24 pens.\n24 - 7 = 17 left.\n#### 17"
NO_WORK = "The answer is 19."


def test_a_right_solution_is_ok(capsys):
    assert main(["-q", "check", PROBLEM, RIGHT]) == 0
    assert capsys.readouterr().out == "ok: no errors found\n"


def test_findings_are_printed_in_words_with_their_lines(capsys):
    assert main(["-q", "check", PROBLEM, MISCOPIED]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "not ok: the first error is on line 1 (0-based)",
        "error unexplained_operand (line 1): Where does 7 in “24 - 7 = 17” come from? It is not a number of the "
        "problem, the result of an earlier step or a known constant (such as 60 minutes in an hour): check that it "
        "was copied right.",
        "warning unused_quantity (problem): The problem gives “5 pens”, but no step uses it: it may be a "
        "distractor, or a step may be missing.",
    ]


def test_one_check_as_json_holds_the_graph(capsys):
    assert main(["-q", "check", "--format", "json", PROBLEM, SLIP]) == 1
    [line] = capsys.readouterr().out.splitlines()
    printed = json.loads(line)
    assert set(printed) == {"ok", "first_error_step", "findings", "graph"}
    expected = json.loads(json.dumps(check_solution(parse_problem(PROBLEM), SLIP).to_dict()))
    assert printed == expected
    assert printed["ok"] is False and printed["first_error_step"] == 0
    assert printed["findings"][0]["kind"] == "arithmetic"
    assert printed["graph"]["steps"][0]["calculations"][0]["computed"] == "24"


def test_a_jsonl_file_gives_one_row_per_line(tmp_path, capsys):
    source = tmp_path / "solutions.jsonl"
    rows = [
        {"id": "right", "problem": PROBLEM, "solution": RIGHT},
        {"problem": PROBLEM, "solution": SLIP},
    ]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    output = tmp_path / "checks.jsonl"
    assert main(["check", "--input", str(source), "--output", str(output)]) == 1
    written = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["line"], r["ok"], r["first_error_step"]) for r in written] == [
        ("right", 1, True, None),
        (2, 2, False, 0),
    ]
    assert set(written[1]) == {"id", "line", "ok", "findings", "first_error_step"}
    assert written[1]["findings"][0] == {
        "kind": "arithmetic",
        "severity": "error",
        "step": 0,
        "message": "“3 * 8 = 25” does not check out: 3 * 8 makes 24, not 25.",
    }
    assert "wrote 2 checks to" in capsys.readouterr().err


def test_the_exit_status_is_1_when_a_solution_has_an_error_like_a_linter(tmp_path, capsys):
    problem = "Tom has 3 apples. He buys 4 more. How many apples does he have?"
    assert main(["-q", "check", problem, "3 + 4 = 8\n#### 8"]) == 1
    assert capsys.readouterr().out.startswith("not ok: the first error is on line 0 (0-based)\nerror arithmetic")
    assert main(["-q", "check", problem, "3 + 4 = 7\n#### 7"]) == 0
    assert capsys.readouterr().out == "ok: no errors found\n"
    # a file: 1 when any row has an error, 0 when all are ok (warnings only count as ok)
    source = tmp_path / "solutions.jsonl"
    rows = [{"problem": PROBLEM, "solution": RIGHT}, {"problem": PROBLEM, "solution": NO_WORK}]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["-q", "check", "--input", str(source)]) == 0
    source.write_text("".join(json.dumps(r) + "\n" for r in [*rows, {"problem": PROBLEM, "solution": SLIP}]))
    assert main(["-q", "check", "--input", str(source)]) == 1
    assert [json.loads(line)["ok"] for line in capsys.readouterr().out.splitlines()[-3:]] == [True, True, False]


def test_a_solution_with_no_work_is_ok_with_a_warning_that_says_so(capsys):
    assert main(["-q", "check", PROBLEM, NO_WORK]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "ok: no errors found",
        "warning no_work (line 0): The solution shows no work: no calculation and no number that lead to the "
        "answer 19, so there is no step to check. Write the steps that give the answer.",
        "note: no calculations found in the solution",
    ]
    assert main(["-q", "check", "--format", "json", PROBLEM, NO_WORK]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["ok"], printed["first_error_step"]) == (True, None)
    assert [(f["kind"], f["severity"], f["step"]) for f in printed["findings"]] == [("no_work", "warning", 0)]


def test_the_bundled_gsmplus_sample_is_checked_by_name_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "check", "--input", "gsmplus_sample.jsonl", "--problem-field", "question"]) == 0
    written = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(written) == 24 and all(row["ok"] for row in written)
    kinds = {finding["kind"] for row in written for finding in row["findings"]}
    assert kinds == {"unused_quantity"}  # the "critical thinking" rows (#### None) are not no_work
    assert main(["-q", "check", "--input", "gsmplus_sample.jsonl"]) == 2
    assert "no field 'problem'" in capsys.readouterr().err


def test_a_parquet_or_csv_bank_is_checked_like_jsonl(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {"id": "right", "problem": PROBLEM, "solution": RIGHT},
        {"id": "slip", "problem": PROBLEM, "solution": SLIP},
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "solutions.parquet")
    assert main(["-q", "check", "--input", str(tmp_path / "solutions.parquet")]) == 1
    written = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["id"], r["line"], r["ok"]) for r in written] == [("right", 1, True), ("slip", 2, False)]
    # a CSV file with another name: --input-format says what it is
    (tmp_path / "solutions.txt").write_text(f'problem,solution\n"{PROBLEM}","{SLIP}"\n', encoding="utf-8")
    assert main(["-q", "check", "--input", str(tmp_path / "solutions.txt"), "--input-format", "csv"]) == 1
    [row] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["id"], row["line"], row["ok"]) == (2, 2, False)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["only one text"], "give two TEXTs (the problem, then its solution), or --input FILE; got 1"),
        ([PROBLEM, "  "], "the solution is empty (or only whitespace)"),
        ([PROBLEM, RIGHT, "--output", "x.jsonl"], "--output and --skip-bad apply to --input files only"),
        (
            ["--input", "missing.jsonl"],
            "--input missing.jsonl: no such file (files bundled with mathgraph, found by name from any folder: "
            "sample_problems.jsonl, kpc_sample.jsonl, gsmplus_sample.jsonl)",
        ),
    ],
)
def test_bad_input_is_a_one_line_error(arguments, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "check", *arguments]) == 2
    assert capsys.readouterr().err == f"mathgraph: error: {message}\n"


def test_a_bad_jsonl_line_names_file_and_line(tmp_path, capsys):
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps({"problem": PROBLEM, "solution": RIGHT}) + "\n" + '{"problem": "x"}\n')
    assert main(["-q", "check", "--input", str(source)]) == 2
    assert capsys.readouterr().err == f"mathgraph: error: {source}:2: no field 'solution' (fields: problem)\n"
    assert main(["-q", "check", "--input", str(source), "--skip-bad"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1 and "skipped 1 bad line:" in captured.err


def test_a_latex_claim_that_does_not_hold_is_an_error(capsys):
    problem = "Simplify $\\sqrt{50}$."
    solution = "We have \\(\\sqrt{50} = 5\\sqrt{2}\\).\nSo \\(5\\sqrt{2} = 7.5\\)."
    assert main(["-q", "check", "--format", "json", problem, solution]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["first_error_step"] == 1
    errors = [f for f in printed["findings"] if f["severity"] == "error"]
    assert [(f["kind"], f["step"]) for f in errors] == [("false_claim", 1)]
    assert "the left side makes 7.07107, the right side 7.5" in errors[0]["message"]
    assert main(["-q", "check", problem, "We have \\(\\sqrt{50} = 5\\sqrt{2}\\)."]) == 0


def test_the_threshold_chooses_when_the_step_verifier_reports(capsys):
    # the verifier's most probable line is always at or above 0 and below 1 (no rule flags this right solution)
    assert main(["-q", "check", "--format", "json", "--threshold", "0", PROBLEM, RIGHT]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [f["kind"] for f in findings if f["severity"] == "error"] == ["suspect_step"]
    assert main(["-q", "check", "--threshold", "1", PROBLEM, RIGHT]) == 0
    capsys.readouterr()
    for point in ("strict", "f1"):
        assert main(["-q", "check", "--threshold", point, PROBLEM, RIGHT]) == 0
    capsys.readouterr()
    assert main(["-q", "check", "--threshold", "loose", PROBLEM, RIGHT]) == 2
    assert "choose strict or f1, or a probability between 0 and 1" in capsys.readouterr().err
