"""The command line's shape: each subcommand's --help shows its own options, start-up imports no model code,
and the parsing progress bar ends at N/N once."""

import argparse
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import mathgraph
from mathgraph.cli import build_argument_parser, main
from mathgraph.samples import sample_problems

PROBLEMS = [row["problem"] for row in sample_problems()]
HEAVY = ("torch", "transformers", "spacy", "stanza", "torch_geometric", "fastapi", "uvicorn")


def help_of(capsys, *command):
    assert main([*command, "--help"]) == 0
    return capsys.readouterr().out


def test_each_train_kind_shows_only_its_options(capsys):
    kpc = help_of(capsys, "train", "kpc")
    assert "--train" in kpc and "--label-field" in kpc and "--freeze-text-layers" in kpc
    for other in ("--adapter", "--corpus", "--task ", "--moe-experts", "--pair-mode"):
        assert other not in kpc
    assert "--pair-mode" in help_of(capsys, "train", "qrc")
    multitask = help_of(capsys, "train", "multitask")
    assert "--adapter" in multitask and "--task TASK:TRAIN[:DEV]" in multitask
    assert "--corpus" not in multitask and "--train " not in multitask and "tfidf" not in multitask
    simcse = help_of(capsys, "train", "simcse")
    assert "--corpus" in simcse and "--steps" in simcse
    assert "--adapter" not in simcse and "--pooling" not in simcse and "--train " not in simcse
    # a command lists no option it would refuse: new-model options and the frozen prefix where they apply
    assert "--gat-heads" in kpc and "--split-digits" in kpc
    pretrain = help_of(capsys, "pretrain")
    assert "--split-digits" in pretrain and "--gat-heads" not in pretrain and "--freeze-text-layers" not in pretrain
    for refused in ("--gat-heads", "--split-digits", "--freeze-text-layers"):
        assert refused not in multitask and refused not in simcse


def test_data_actions_show_only_their_options(capsys):
    qam = help_of(capsys, "data", "qam-pairs")
    assert "--negatives" in qam and "--group-field" not in qam
    split = help_of(capsys, "data", "split")
    assert "--group-field" in split and "--negatives" not in split and "--output " not in split


def test_options_of_another_kind_are_usage_errors(capsys):
    assert main(["train", "kpc", "--train", "t.jsonl", "--output", "o", "--adapter", "moe"]) == 2
    assert "unrecognized arguments: --adapter moe" in capsys.readouterr().err
    assert main(["train", "kpc", "--output", "o"]) == 2
    assert "required: --train" in capsys.readouterr().err


def test_building_the_parser_imports_no_model_code():
    code = (
        "import sys; from mathgraph.cli import build_argument_parser, main; build_argument_parser(); "
        f"main(['samples']); print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


def test_parsing_one_problem_imports_no_model_code():
    # spaCy itself imports torch (thinc looks for it); the CLI adds neither transformers nor the models
    code = (
        "import sys; from mathgraph.cli import main; main(['-q', 'parse', 'Find $x$ if $2x+3=7$.']); "
        "print(sorted(m for m in ('transformers', 'torch_geometric', 'mathgraph.models.encoder', 'mathgraph.tasks.search.index') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


def test_every_command_is_registered():
    parser = build_argument_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert sorted(commands) == sorted(
        [
            "parse",
            "vocab",
            "samples",
            "encode",
            "data",
            "pretrain",
            "train",
            "evaluate",
            "predict",
            "index",
            "search",
            "refine",
            "routes",
            "serve",
            "compare",
            "release",
            "export",
            "check",
            "dedupe",
            "kit",
        ]
    )
    train = next(a for a in commands["train"]._actions if a.dest == "task").choices
    assert list(train) == ["kpc", "qrc", "qam", "sqr", "multitask", "simcse"]


def bars(err: str) -> list[str]:
    """Every drawing of the parsing bar on a captured stderr (tqdm redraws with \\r)."""
    return [part for part in re.split(r"[\r\n]", err) if part.startswith("parsing:")]


@pytest.mark.parametrize("batch_size", ["64", "4"])
def test_the_progress_bar_ends_at_n_of_n_once(tmp_path, terminal_stderr, batch_size):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"problem": p}) + "\n" for p in PROBLEMS[:6]), encoding="utf-8")
    output = tmp_path / "out.jsonl"
    assert main(["parse", "--input", str(source), "--output", str(output), "--batch-size", batch_size]) == 0
    err = terminal_stderr.readouterr().err
    drawn = bars(err)
    assert drawn and " 6/6 " in drawn[-1] and "100%" in drawn[-1]
    assert sum("100%" in bar for bar in drawn) == 1
    assert all(" 6/6 " not in bar for bar in drawn[:-1])
    assert err.index(drawn[-1]) < err.index("wrote 6 graphs")  # finished before the summary, not after
    assert len(output.read_text().splitlines()) == 6


def _choices(argv_prefix: list[str], option: str) -> tuple:
    """The choices of ``option`` on the subcommand ``argv_prefix`` names."""
    parser = build_argument_parser()
    for name in argv_prefix:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return tuple(next(a for a in parser._actions if option in a.option_strings).choices)


def test_the_cli_choices_are_the_library_names():
    # The CLI spells them out so that building the parser imports no torch; they must not drift apart.
    from mathgraph.models.multitask import ADAPTERS, LABEL_SPACES, SAMPLING
    from mathgraph.models.task_model import ARCHITECTURES
    from mathgraph.tasks.training.pretrain import PRETRAINING_ARCHITECTURES

    assert _choices(["train", "kpc"], "--architecture") == (*ARCHITECTURES, "tfidf")
    assert _choices(["train", "multitask"], "--architecture") == ARCHITECTURES
    assert _choices(["train", "multitask"], "--adapter") == ADAPTERS
    assert _choices(["train", "multitask"], "--label-space") == LABEL_SPACES
    assert _choices(["train", "multitask"], "--sampling") == SAMPLING
    assert _choices(["pretrain"], "--architecture") == PRETRAINING_ARCHITECTURES
    from mathgraph.cli.training import SKILLS as CLI_SKILLS
    from mathgraph.models.reasoning import MODULE_SHARING, SKILLS

    assert CLI_SKILLS == SKILLS
    assert _choices(["train", "multitask"], "--reasoning-modules") == MODULE_SHARING


def test_version_is_printed_and_is_the_changelogs_latest(capsys):
    with pytest.raises(SystemExit) as exit:
        build_argument_parser().parse_args(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.strip() == f"mathgraph {mathgraph.__version__}"
    changelog = (Path(__file__).resolve().parents[2] / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, flags=re.M)
    assert versions[0] == mathgraph.__version__ and versions == sorted(
        versions, key=lambda v: [-int(p) for p in v.split(".")]
    )


def test_export_into_a_folder_that_is_not_empty_is_an_error_not_a_traceback(tmp_path, capsys):
    (tmp_path / "kept.txt").write_text("mine")
    assert main(["export", str(tmp_path)]) == 2
    assert f"mathgraph: error: {tmp_path} exists and is not empty" in capsys.readouterr().err
    assert (tmp_path / "kept.txt").read_text() == "mine"


def test_index_build_search_and_dedupe_load_their_model_on_the_device_given(monkeypatch, tmp_path):
    import mathgraph.tasks.search.commands as commands
    import mathgraph.tasks.search.embedders as embedders
    from mathgraph.tasks.search.index import SearchIndex

    class Loaded(Exception):
        """Raised by the stand-in loaders: where the command asked for its model."""

    def loader(*args, device=None, **kwargs):
        raise Loaded(device)

    monkeypatch.setattr(commands, "build_index_from_file", loader)
    monkeypatch.setattr(SearchIndex, "from_pretrained", loader)
    monkeypatch.setattr(embedders, "load_embedder", loader)
    bank = str(Path(mathgraph.__file__).parent / "data" / "kpc_sample.jsonl")
    index = tmp_path / "stand-in-index"  # passes for an index until the stand-in loader reads it
    index.mkdir()
    (index / "config.json").write_text('{"model_type": "search-index"}', encoding="utf-8")
    for command in (
        ["index", "build", "--input", bank, "--output", str(tmp_path / "index")],
        ["search", "--index", str(index), "a query"],
        ["dedupe", "--input", bank, "--output", str(tmp_path / "groups.jsonl")],
    ):
        with pytest.raises(Loaded) as loaded:
            main(["-q", *command, "--device", "cpu"])
        assert loaded.value.args == ("cpu",), command


def test_quiet_leaves_only_warnings_and_errors_on_stderr(tmp_path, capsys):
    """``-q``: no "wrote ..." or "N texts from field ..." lines; the bad lines ``--skip-bad`` left out are a
    warning and stay; the results on stdout stay."""
    source = tmp_path / "bank.jsonl"
    rows = [json.dumps({"id": f"p{i}", "problem": p}) for i, p in enumerate(PROBLEMS[:3])]
    source.write_text("\n".join([*rows, '{"id": "p3", "problem": ""}']) + "\n", encoding="utf-8")
    parse = ["parse", "--input", str(source), "--skip-bad", "--parser", "spacy", "--output"]
    assert main([*parse, str(tmp_path / "loud.jsonl")]) == 0
    loud = capsys.readouterr().err
    assert loud.startswith(f"wrote 3 graphs to {tmp_path / 'loud.jsonl'}\nskipped 1 bad line:\n")
    assert main(["-q", *parse, str(tmp_path / "quiet.jsonl")]) == 0
    quiet = capsys.readouterr().err
    assert quiet == loud.split("\n", 1)[1]  # the warning alone
    assert len((tmp_path / "quiet.jsonl").read_text().splitlines()) == 3

    split = ["data", "split", "--input", str(source), "--dev", "0.5", "--test", "0"]
    assert main(["-q", *split, "--output-dir", str(tmp_path / "split")]) == 0
    assert capsys.readouterr().err == ""
    assert (tmp_path / "split" / "bank.train.jsonl").exists()
    assert main([*split, "--output-dir", str(tmp_path / "split-loud")]) == 0
    assert "train: 2 rows -> " in capsys.readouterr().err

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(rows) + "\n", encoding="utf-8")
    vocab = ["vocab", "--corpus", f"{corpus}:problem", "--parser", "spacy", "--min-freq", "1"]
    with warnings.catch_warnings():  # as outside pytest: a library's DeprecationWarning is not shown
        warnings.simplefilter("ignore", DeprecationWarning)
        assert main(["-q", *vocab, "--output", str(tmp_path / "vocab")]) == 0
    assert capsys.readouterr().err == ""
    assert (tmp_path / "vocab").is_dir()


def test_no_progress_bar_lands_in_a_redirected_stderr(tmp_path, capsys, monkeypatch):
    """A bar is drawn only on a terminal: a log file (here the captured, redirected stderr) gets none, without -q."""
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"problem": p}) + "\n" for p in PROBLEMS[:6]), encoding="utf-8")
    assert main(["parse", "--input", str(source), "--output", str(tmp_path / "out.jsonl"), "--batch-size", "2"]) == 0
    err = capsys.readouterr().err
    assert err == f"wrote 6 graphs to {tmp_path / 'out.jsonl'}\n"


def test_the_bundled_files_are_found_by_name_from_any_folder(tmp_path, monkeypatch, capsys):
    from mathgraph.samples import BUNDLED_FILES, DATA_DIR, input_path

    assert sorted(BUNDLED_FILES) == sorted(p.name for p in DATA_DIR.glob("*.jsonl"))
    monkeypatch.chdir(tmp_path)  # not the clone's root
    assert main(["-q", "parse", "--input", "sample_problems.jsonl", "--parser", "spacy", "--output", "g.jsonl"]) == 0
    graphs = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert [g["id"] for g in graphs] == [row["id"] for row in sample_problems()]
    split = ["-q", "data", "split", "--input", "kpc_sample.jsonl", "--stratify-field", "subject", "--test", "0"]
    assert main(split) == 0  # written here, not next to the bundled file inside the package
    assert (tmp_path / "kpc_sample.train.jsonl").exists() and not (DATA_DIR / "kpc_sample.train.jsonl").exists()
    assert input_path("kpc_sample.jsonl:problem") == "kpc_sample.jsonl:problem"  # only whole names
    capsys.readouterr()

    # a missing file named like the README's old paths says which names work
    assert main(["parse", "--input", "mathgraph/data/kpc_sample.jsonl", "--output", "x.jsonl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mathgraph: error: --input mathgraph/data/kpc_sample.jsonl: no such file")
    assert "found by name from any folder: sample_problems.jsonl, kpc_sample.jsonl, gsmplus_sample.jsonl" in err

    # a file of the user's own by that name comes first
    (tmp_path / "kpc_sample.jsonl").write_text(json.dumps({"problem": PROBLEMS[0]}) + "\n", encoding="utf-8")
    assert input_path("kpc_sample.jsonl") == "kpc_sample.jsonl"
    assert main(["-q", "parse", "--input", "kpc_sample.jsonl", "--parser", "spacy", "--output", "mine.jsonl"]) == 0
    assert len((tmp_path / "mine.jsonl").read_text().splitlines()) == 1


def test_a_missing_index_is_said_to_be_a_missing_index(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    model = Path(mathgraph.__file__).parent / "data" / "shipped_model"
    for index, said in (
        (tmp_path / "gone", f"--index: no such index: {tmp_path / 'gone'}; {tmp_path}/ holds empty/"),
        (empty, f"--index: {empty} is not a search index: it holds nothing mathgraph can load"),
        (model, f"--index: {model} is not a search index: it holds a model package"),
        ("shipped", "--index: shipped is the shipped model, not a search index"),
    ):
        assert main(["search", "--index", str(index), "a query"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mathgraph: error: {said}") and "no such model" not in err
        assert "an index is a directory `mathgraph index build --output DIR` wrote" in err


def test_a_user_error_is_one_line_and_a_bug_keeps_its_traceback(tmp_path, capsys, monkeypatch):
    bank = tmp_path / "bank.jsonl"
    bank.write_text(json.dumps({"problem": PROBLEMS[0]}) + "\n", encoding="utf-8")
    argv = ["index", "build", "--input", str(bank), "--output", str(tmp_path / "index"), "--limit", "0"]
    assert main(argv) == 2
    assert capsys.readouterr().err == "mathgraph: error: --limit must be >= 1, got 0\n"
    assert main(["-v", *argv]) == 2  # -v: where it was raised, then the same line
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "UserError: --limit must be >= 1" in err
    assert err.endswith("mathgraph: error: --limit must be >= 1, got 0\n")

    import mathgraph.samples

    def broken():
        return [int("one")]  # a bug: Python's own ValueError, not a user's mistake

    monkeypatch.setattr(mathgraph.samples, "sample_problems", broken)
    for loudness in ([], ["-v"]):
        with pytest.raises(ValueError, match="invalid literal for int"):
            main([*loudness, "samples"])
