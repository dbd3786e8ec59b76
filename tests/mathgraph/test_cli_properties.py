"""No input makes a ``mathgraph`` command crash, as a property: hypothesis writes the TEXT arguments
and the --input files (JSONL rows with any text, rows without the fields, any bytes). Every command that reads
problems either
answers (exit status 0; ``check`` 1 too, where a solution has an error) or says why not in one line (exit status 2,
``mathgraph: error: ...``, no traceback).
Models are tiny and untrained (fast); parsing, aligning and checking are the library's own.
(``compare`` has its own property in ``tests/parsers/test_compare_properties.py``.)"""

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathgraph.cli import main

PIECES = ["Tom has ", "3", "12.5", "−4", "½", "two dozen", " apples", ". ", "? ", "$", "\\frac{", "}", "^", "=", "\n"]
# argv as Python gives it: any Unicode, and lone surrogates \udc80-\udcff where the bytes were not UTF-8
TEXTS = st.one_of(
    st.text(max_size=30),
    st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=10).map("".join),
    st.text(st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF), min_size=1, max_size=2).map(
        lambda s: "Tom has 3 " + s
    ),
    st.integers(1, 6000).map(lambda n: "Tom has " + "9" * n + " apples."),
)
PROPERTY = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def models(tmp_path_factory, tiny_text_dir, sample_vocab, build_tiny_encoder):
    """Tiny untrained KPC and QAM task models, the tiny text encoder, and a search index of 5 problems made
    with it: ``{name: path}``."""
    from mathgraph.models.task_model import TaskConfig, TaskModel

    root = tmp_path_factory.mktemp("cli-properties")
    sample_vocab.save_pretrained(root / "vocab")
    (root / "vocab" / "latex_tokens.json").write_text(json.dumps(["\\frac"]))
    encoder = build_tiny_encoder(root / "vocab")
    paths = {"text": f"text:{tiny_text_dir}"}
    for task, labels in (("kpc", ["Algebra", "Geometry"]), ("qam", [0, 1])):
        TaskModel(encoder, TaskConfig(task, labels=labels)).save_pretrained(root / task)
        paths[task] = str(root / task)
    bank = root / "bank.jsonl"
    bank.write_text("".join(json.dumps({"problem": f"Tom has {n} apples."}) + "\n" for n in range(5)))
    assert (
        main(["-q", "index", "build", "--input", str(bank), "--model", paths["text"], "--output", str(root / "ix")])
        == 0
    )
    paths["index"] = str(root / "ix")
    return paths


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["-q", *argv])
    return code, out.getvalue(), err.getvalue()


def assert_answered_or_refused(argv: list[str]) -> int:
    """Run ``argv``: exit 0 (``check``: 0 or 1, whether the solutions are ok), or 2 with a line that says why in
    the user's terms; the exit status."""
    code, _, err = run(argv)
    answered = (0, 1) if argv[0] == "check" else (0,)
    assert code in (*answered, 2), (argv, code, err[-2000:])
    assert "Traceback" not in err, (argv, err[-2000:])
    if code == 2:  # the error is the last line (a count of the rows read may come before it)
        last = err.strip().splitlines()[-1]
        assert last.startswith("mathgraph: error: ") and "codec can't" not in last, (argv, err[-2000:])
    return code


@PROPERTY
@given(TEXTS, TEXTS)
def test_every_command_of_texts_answers_or_says_why_not(models, a, b):
    assert_answered_or_refused(["parse", "--", a])
    assert_answered_or_refused(["check", "--format", "json", "--", a, b])
    assert_answered_or_refused(["predict", "kpc", "--model", models["kpc"], "--format", "json", "--", a])
    assert_answered_or_refused(["predict", "qam", "--model", models["qam"], "--format", "json", "--", a, b])
    assert_answered_or_refused(["search", "--index", models["index"], "--format", "json", "--", a])


@st.composite
def input_files(draw) -> bytes:
    """The bytes of an --input file: JSONL rows of any text (some without the fields), or any bytes."""
    kind = draw(st.sampled_from(["rows", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        text, solution = draw(TEXTS), draw(TEXTS)
        row = draw(st.sampled_from([{"problem": text, "solution": solution}, {"problem": text}, {"other": text}]))
        rows.append(json.dumps(row))  # escapes surrogates as \udcXX, which JSON readers turn back into them
    return ("\n".join(rows) + "\n").encode()


@settings(PROPERTY, max_examples=8)
@given(input_files())
def test_every_command_of_files_answers_or_says_why_not(models, tmp_path_factory, content):
    directory = tmp_path_factory.mktemp("inputs")
    source = directory / "bank.jsonl"
    source.write_bytes(content)
    for argv, skip_bad in (
        (["parse", "--input", str(source), "--output", str(directory / "graphs.jsonl")], True),
        (["check", "--input", str(source), "--output", str(directory / "checks.jsonl")], True),
        (["predict", "kpc", "--model", models["kpc"], "--input", str(source), "--output", str(directory / "p")], True),
        (["encode", "--model", models["text"], "--input", str(source), "--output", str(directory / "vectors")], False),
        (["dedupe", "--model", models["text"], "--input", str(source), "--output", str(directory / "g.jsonl")], True),
        (
            ["index", "build", "--model", models["text"], "--input", str(source), "--output", str(directory / "ix")],
            True,
        ),
        (["search", "--index", models["index"], "--queries", str(source), "--output", str(directory / "s")], True),
    ):
        assert_answered_or_refused(argv)
        if skip_bad:
            assert_answered_or_refused([*argv, "--skip-bad"])


def test_what_follows_a_double_dash_is_text_even_when_it_looks_like_an_option(capsys):
    """Python 3.11's intermixed parsing read ``-:`` after ``--`` as an option (found by the compare property)."""
    code, out, _ = run(["compare", "--no-model", "--format", "json", "--", "-x has 3 apples.", "-:"])
    assert code == 0 and json.loads(out)["alignment"]["quantities"][0]["kind"] == "removed"
    code, out, _ = run(["check", "--format", "json", "--", "-4 is 2 more than what?", "-4 - 2 = -6\n#### -6"])
    checked = json.loads(out)
    assert code == 0 and checked["graph"]["solution"] == "-4 - 2 = -6\n#### -6"
    # the operand "-4" is the problem's -4 (it was read as the digits "4" of it, and -4 left "unused")
    assert checked["ok"] and checked["findings"] == []


def test_search_names_a_query_that_is_not_text(models, tmp_path):
    """Found by the properties: a QUERY whose bytes are not UTF-8 reached the tokenizer (a TypeError traceback),
    and a plain-text --queries file with such a line stopped with the codec's message."""
    code, _, err = run(["search", "--index", models["index"], "--", "Tom has 3 \udc80"])
    assert code == 2 and "the QUERY is not valid UTF-8: byte 0x80 at character 11 (after 'Tom has 3 ')" in err
    queries = tmp_path / "queries.txt"
    queries.write_bytes(b"Tom has 3 apples.\nAnn has \xff pears.\n")
    code, _, err = run(["search", "--index", models["index"], "--queries", str(queries)])
    assert code == 2 and f"{queries}:2: the line is not valid UTF-8: byte 0xff at character 9 (after 'Ann has ')" in err
    code, out, err = run(["search", "--index", models["index"], "--queries", str(queries), "--skip-bad"])
    assert code == 0 and len(out.splitlines()) == 1 and "skipped 1 bad" in err
