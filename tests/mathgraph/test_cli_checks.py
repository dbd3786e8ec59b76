"""What the command line checks before it imports torch or loads a model: usage errors, a model directory
that does not exist, input files that are missing, empty or not JSON Lines. Each is a clear message and exit
status 2, in a fraction of a second."""

import json
import subprocess
import sys

import pytest
import torch

from mathgraph.cli import main
from mathgraph.cli.common import (
    NAMED_MODELS,
    check_index_argument,
    check_model_argument,
    configure_inference_threads,
)
from mathgraph.tasks.training.trainer import available_cores

HEAVY = ("torch", "transformers", "torch_geometric", "sklearn", "spacy", "mathgraph.models.encoder")


@pytest.fixture
def paths(tmp_path):
    """``{name: path}`` for the placeholders of ``CASES``."""
    (tmp_path / "empty.jsonl").write_text("\n  \n", encoding="utf-8")
    (tmp_path / "bad.jsonl").write_text('{"problem": "Find $x$."}\nnot json\n', encoding="utf-8")
    (tmp_path / "good.jsonl").write_text('{"problem": "Find $x$."}\n', encoding="utf-8")
    (tmp_path / "index").mkdir()  # passes for an index until it is read: a config.json naming its type
    (tmp_path / "index" / "config.json").write_text('{"model_type": "search-index"}', encoding="utf-8")
    names = ("empty.jsonl", "bad.jsonl", "good.jsonl", "index", "missing", "out")
    return {name.split(".")[0]: str(tmp_path / name) for name in names}


# (arguments, what stderr must say); {name} is a path of the fixture
CASES = [
    (["predict", "kpc", "--model", "{missing}", "x"], "--model: no such model: {missing}"),
    (["predict", "kpc", "--model", "{good}", "x"], "--model: {good} is a file; mathgraph models are directories"),
    (["predict", "kpc", "--input", "{missing}"], "--input {missing}: no such file"),
    (["predict", "kpc", "--input", "{index}"], "--input {index} is a directory, not a file"),
    (["predict", "kpc", "--input", "{empty}"], "--input {empty} is empty: no input lines"),
    (["predict", "kpc", "--input", "{bad}"], "{bad}:2: not valid JSON"),
    (["predict", "kpc", "--input", "{good}", "--text-field", "question"], "{good}:1: no field 'question'"),
    (["predict", "qrc", "one text"], "qrc takes two TEXTs (text_a text_b), got 1"),
    (["predict", "kpc", "a", "b"], "kpc takes one TEXT, got 2"),
    (["predict", "kpc", "  "], "TEXT 1: the text is empty"),
    (["compare", "--input", "{empty}"], "--input {empty} is empty: no input lines"),
    (["compare", "--model", "{missing}", "a", "b"], "--model: no such model: {missing}"),
    (["search", "--index", "{missing}", "a query"], "--index: no such index: {missing}"),
    (["search", "--index", "{out}", "a query"], "--index: no such index: {out}"),
    (["search", "--index", "{good}", "a query"], "--index: {good} is a file"),
    (["search", "--index", "{index}", "--queries", "{empty}"], "--queries {empty} is empty: no input lines"),
    (["search", "--index", "{index}", "--queries", "{missing}"], "--queries {missing}: no such file"),
    (["search", "--index", "{index}", "--model", "{missing}", "q"], "--model: no such model: {missing}"),
    (["index", "build", "--input", "{empty}", "--output", "{out}"], "--input {empty} is empty: no input lines"),
    (["index", "build", "--input", "{bad}", "--output", "{out}"], "{bad}:2: not valid JSON"),
    (["index", "build", "--input", "{good}", "--model", "{missing}", "--output", "{out}"], "no such model: {missing}"),
    (["encode", "--input", "{good}", "--model", "{missing}", "--output", "{out}"], "--model: no such model: {missing}"),
    (["encode", "--input", "{empty}", "--output", "{out}"], "--input {empty} is empty"),
    (["evaluate", "kpc", "--model", "{missing}", "--data", "{good}"], "--model: no such model: {missing}"),
    (["evaluate", "kpc", "--model", "{index}", "--data", "{missing}"], "--data {missing}: no such file"),
    (["train", "kpc", "--train", "{missing}", "--output", "{out}"], "--train {missing}: no such file"),
    (["train", "kpc", "--train", "{good}", "--dev", "{empty}", "--output", "{out}"], "--dev {empty} is empty"),
    (["train", "kpc", "--train", "{good}", "--model", "{missing}", "--output", "{out}"], "no such model: {missing}"),
    (["routes", "--model", "{missing}", "x"], "--model: no such model: {missing}"),
    (["refine", "--problems", "{missing}", "--index", "{index}", "--llm", "smollm2", "--output", "{out}"], "no such"),
    (["refine", "--problems", "{empty}", "--index", "{index}", "--llm", "x", "--output", "{out}"], "is empty"),
    (
        ["refine", "--problems", "{good}", "--index", "{missing}", "--llm", "x", "--output", "{out}"],
        "--index: no such index: {missing}",
    ),
    # every command that reads an input file: an empty one is an error, not "wrote 0 ..." and status 0
    (["parse", "--input", "{empty}", "--output", "{out}"], "--input {empty} is empty: no input lines"),
    (["parse", "--input", "{missing}", "--output", "{out}"], "--input {missing}: no such file"),
    (["vocab", "--corpus", "{empty}", "--output", "{out}"], "--corpus {empty} is empty: no input lines"),
    (["vocab", "--corpus", "{empty}:question", "--output", "{out}"], "--corpus {empty} is empty: no input lines"),
    (["pretrain", "--corpus", "{empty}", "--output", "{out}"], "--corpus {empty} is empty: no input lines"),
    (["train", "simcse", "--corpus", "{missing}", "--output", "{out}"], "--corpus {missing}: no such file"),
    (["train", "multitask", "--task", "kpc:{empty}", "--output", "{out}"], "--task {empty} is empty: no input lines"),
    (["train", "multitask", "--task", "kpc:{good}:{empty}", "--output", "{out}"], "--task {empty} is empty"),
    (["data", "qrc-pairs", "--input", "{empty}", "--output", "{out}"], "--input {empty} is empty: no input lines"),
    (["data", "sqr-lists", "--input", "{empty}", "--output", "{out}"], "--input {empty} is empty: no input lines"),
    (["data", "qam-pairs", "--input", "{empty}", "--output", "{out}"], "--input {empty} is empty: no input lines"),
    (["data", "split", "--input", "{empty}"], "--input {empty} is empty: no input lines"),
    (["index", "build", "--input", "{good}", "--limit", "0", "--output", "{out}"], "--limit must be >= 1, got 0"),
]


def filled(arguments: list[str], paths: dict) -> list[str]:
    return [argument.format(**paths) for argument in arguments]


@pytest.mark.parametrize(("arguments", "message"), CASES, ids=[" ".join(a[:2]) for a, _ in CASES])
def test_each_error_is_a_clear_message_and_status_2(arguments, message, paths, capsys):
    assert main(["-q", *filled(arguments, paths)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mathgraph: error: ") and message.format(**paths) in err


def test_no_error_case_imports_torch_or_a_model(paths):
    """Every case above fails before torch, transformers, PyG, scikit-learn or spaCy is imported."""
    calls = [filled(arguments, paths) for arguments, _ in CASES]
    code = (
        "import json, sys; from mathgraph.cli import main\n"
        f"codes = [main(['-q', *a]) for a in {calls!r}]\n"
        f"print(json.dumps([codes, sorted(m for m in {HEAVY!r} if m in sys.modules)]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    codes, imported = json.loads(done.stdout.splitlines()[-1])
    assert codes == [2] * len(CASES)
    assert imported == []


def test_a_model_option_may_name_a_model_or_a_hub_id(tmp_path, monkeypatch):
    import huggingface_hub.constants as constants

    for name in (*NAMED_MODELS, "text:minilm", None, str(tmp_path)):
        check_model_argument(name, names=NAMED_MODELS)  # passes: the loader takes it from here
    check_model_argument("shipped")  # the shipped package is a model wherever a model is taken
    with pytest.raises(FileNotFoundError, match="--model: no such model: untrained"):
        check_model_argument("untrained")  # an encoder name only where the option takes encoders
    with pytest.raises(FileNotFoundError, match=f"--index: no such index: {tmp_path}/gone"):
        check_index_argument(f"{tmp_path}/gone")
    # a Hub id is resolved here, from the cache when offline: one that is not there is said so before torch loads
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(FileNotFoundError, match="--model: no such model: some-org/some-model; as a Hugging Face Hub"):
        check_model_argument("some-org/some-model")


def test_a_missing_directory_that_looks_like_a_hub_id_is_named_with_what_its_parent_holds(
    tmp_path, monkeypatch, capsys
):
    """``runs/kpc`` has the form of a Hub id, but where ``runs/`` is a local directory it is a local path that
    does not exist (a typo, or a training run that has not finished): said so, with what ``runs/`` holds."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "kpc-small").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"--model: no such model: runs/kpc; runs/ holds kpc-small/ \(a model"):
        check_model_argument("runs/kpc")
    for arguments, name in (
        (["predict", "kpc", "--model", "runs/kpc", "x"], "--model: no such model: runs/kpc"),
        (["serve", "--index", "runs/index"], "--index: no such index: runs/index"),
        (["search", "--index", "runs/index", "q"], "--index: no such index: runs/index"),
    ):
        assert main(["-q", *arguments]) == 2
        assert f"{name}; runs/ holds kpc-small/" in capsys.readouterr().err


def test_one_input_runs_on_one_thread_many_on_every_core():
    before = torch.get_num_threads()
    try:
        assert configure_inference_threads(None, single_input=True) == 1 == torch.get_num_threads()
        assert configure_inference_threads(None, single_input=False) == available_cores() == torch.get_num_threads()
        assert configure_inference_threads(3, single_input=True) == 3 == torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def test_counts_in_messages_are_singular_for_one():
    from mathgraph.cli.common import counted

    assert counted(1, "graph") == "1 graph"
    assert counted(0, "graph") == "0 graphs"
    assert counted(1, "query", "queries") == "1 query"
    assert counted(1200, "query", "queries") == "1,200 queries"


def test_a_parse_of_one_problem_says_one_graph(tmp_path, capsys):
    from mathgraph.cli.main import main

    (tmp_path / "in.jsonl").write_text('{"problem": "What is 2 + 3?"}\n{"problem": ""}\n', encoding="utf-8")
    output = tmp_path / "graphs.jsonl"
    argv = ["parse", "--input", str(tmp_path / "in.jsonl"), "--output", str(output), "--skip-bad", "--workers", "1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"wrote 1 graph to {output}" in err and "skipped 1 bad line:" in err
