"""Quiet, honest output: a new user's commands print what was asked for on stdout and nothing but real
warnings on stderr, once, in the user's terms; the helpers of ``mathgraph.quiet`` that do
it are scoped; QAM's 0/1 labels say what they mean."""

import logging
import os
import subprocess
import sys
import warnings

import pytest

from mathgraph.cli import main
from mathgraph.labels import label_text, with_label_names
from mathgraph.quiet import plain_warnings, progress_bar, quiet_transformers, report, warn

APPLES = "Tom has 12 apples. He eats 3. How many are left?"
DECIMAL_APPLES = "Tom has 12.5 apples. He eats 3. How many are left?"


def run_mathgraph(tmp_path, *args):
    """``mathgraph ARGS`` as a new user runs it: in an empty folder, with an empty graph cache and an empty
    matplotlib cache (a first run builds matplotlib's font list)."""
    env = dict(os.environ)
    env["MATHGRAPH_CACHE_DIR"] = str(tmp_path / "cache")
    env["MPLCONFIGDIR"] = str(tmp_path / "matplotlib")
    for name in ("TRANSFORMERS_VERBOSITY", "TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS", "PYTHONWARNINGS"):
        env.pop(name, None)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    command = [sys.executable, "-c", "import sys; from mathgraph.cli import main; sys.exit(main())", *args]
    return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)


def test_help_is_all_stdout_and_names_the_compare_endpoint(tmp_path):
    top = run_mathgraph(tmp_path, "--help")
    assert top.returncode == 0 and top.stderr == ""
    serve_line = " ".join(top.stdout.split()).split("serve serve ")[1]
    assert "compare" in serve_line.split(" over HTTP")[0]
    serve = run_mathgraph(tmp_path, "serve", "--help")
    assert serve.returncode == 0 and serve.stderr == ""
    endpoints = " ".join(serve.stdout.split()).split("endpoints under /api (")[1].split(";")[0]
    assert endpoints.split(", ") == ["health", "parse", "draw", "encode", "predict/TASK", "search", "compare", "check"]


@pytest.mark.slow
def test_parse_and_draw_says_only_where_the_picture_is(tmp_path):
    # spaCy is the parser here (no Stanza models): no word about Stanza; matplotlib builds its font list on
    # this first run: no word about that either
    done = run_mathgraph(tmp_path, "parse", "--sample", "1", "--draw", "graph.png")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("parser: spacy")
    assert done.stderr == "drew the graph to graph.png\n"


@pytest.mark.slow
def test_predict_and_compare_print_nothing_on_stderr(tmp_path):
    qam = run_mathgraph(tmp_path, "predict", "qam", APPLES, "12 - 3 = 9")
    assert qam.returncode == 0, qam.stderr
    assert qam.stderr == ""  # no `Loading weights` bar, no graph-cache line, no Stanza notice
    label_line = qam.stdout.splitlines()[0]
    assert label_line in ("label: 1 (matches)", "label: 0 (does not match)")
    compare = run_mathgraph(tmp_path, "compare", APPLES, DECIMAL_APPLES)
    assert compare.returncode == 0, compare.stderr
    assert compare.stderr == ""
    assert "QRC model: integer-decimal-fraction conversion, probability" in compare.stdout
    assert not (tmp_path / "cache" / "graphs.sqlite").exists()  # one TEXT, one pair: no graph cache written
    # the notes are there for whoever asks: the graph cache (none: one pair writes no file), the parser's choice
    verbose = run_mathgraph(tmp_path, "-v", "compare", APPLES, DECIMAL_APPLES)
    assert verbose.returncode == 0 and "graph cache none (no file)" in verbose.stderr
    assert "Loading weights" not in verbose.stderr


def test_a_warning_in_a_command_is_one_line_without_a_path(capsys):
    with warnings.catch_warnings():  # puts warnings.showwarning back on the way out
        warnings.simplefilter("always")
        plain_warnings()
        warn("a problem of 300 tokens was cut")
        warnings.warn("an old option", FutureWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "mathgraph: warning: a problem of 300 tokens was cut",
        "mathgraph: warning (FutureWarning): an old option",
    ]


def test_warn_points_at_the_users_line_not_inside_the_package(tmp_path):
    # a user's script calls into mathgraph, which warns two frames down: Python shows the script's line
    script = tmp_path / "user_script.py"
    script.write_text(
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "from mathgraph.quiet import warn\n"
        "import types, sys\n"
        "inner = types.ModuleType('mathgraph.fake_inner')\n"
        "exec('from mathgraph.quiet import warn\\ndef deep():\\n    warn(\"cut\")\\n', inner.__dict__)\n"
        "outer = types.ModuleType('mathgraph.fake_outer')\n"
        "outer.__dict__['deep'] = inner.deep\n"
        "exec('def call():\\n    deep()\\n', outer.__dict__)\n"
        "outer.call()  # the user's line\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{script}:10: UserWarning: cut" in done.stderr


def test_quiet_transformers_is_scoped():
    from transformers.utils import logging as transformers_logging

    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_info()
    transformers_logging.enable_progress_bar()
    try:
        with quiet_transformers():
            assert transformers_logging.get_verbosity() == logging.ERROR
            assert not transformers_logging.is_progress_bar_enabled()
        assert transformers_logging.get_verbosity() == logging.INFO
        assert transformers_logging.is_progress_bar_enabled()  # a user's own bars are back on
        transformers_logging.disable_progress_bar()
        with quiet_transformers():
            pass
        assert not transformers_logging.is_progress_bar_enabled()  # and a user's choice to hide them stays
    finally:
        transformers_logging.set_verbosity(verbosity)
        transformers_logging.enable_progress_bar()


def test_quiet_transformers_leaves_the_hubs_download_bars_alone():
    from huggingface_hub.utils import are_progress_bars_disabled

    before = are_progress_bars_disabled()
    with quiet_transformers():
        assert are_progress_bars_disabled() == before


def test_qam_labels_say_what_they_mean():
    results = [{"label": 1, "probabilities": {0: 0.1, 1: 0.9}}, {"label": "0", "probabilities": {"0": 1.0}}]
    named = with_label_names("qam", results)
    assert [r["label"] for r in named] == [1, "0"]  # the numeric label stays
    assert [r["label_name"] for r in named] == ["matches", "does not match"]
    assert list(named[0]) == ["label", "label_name", "probabilities"]
    assert "label_name" not in results[0]  # the results given are not changed
    kpc = [{"label": "Geometry", "probabilities": {"Geometry": 1.0}}]
    assert with_label_names("kpc", kpc) == kpc
    assert label_text("qam", 0) == "0 (does not match)" and label_text("kpc", "Algebra") == "Algebra"


def test_format_prediction_names_qam_labels():
    from mathgraph.cli.prediction_files import format_prediction

    text = format_prediction(("q", "s"), {"label": 1, "probabilities": {0: 0.25, 1: 0.75}}, task="qam")
    assert text.splitlines() == [
        "label: 1 (matches)",
        "probabilities (top 2):",
        "  1 (matches)         0.7500",
        "  0 (does not match)  0.2500",
    ]


def test_the_cli_shows_library_notes_only_from_warning_up(capsys):
    # matplotlib's "generated new fontManager" on a first run is an INFO record of another library: the root
    # logger stays at WARNING, mathgraph's own logger is at INFO (-v: DEBUG, -q: WARNING)
    ours = logging.getLogger("mathgraph")
    try:
        with warnings.catch_warnings():  # main() sets how warnings print, for its process
            assert main(["samples"]) == 0
            assert ours.level == logging.INFO
            assert not logging.getLogger("matplotlib.font_manager").isEnabledFor(logging.INFO)
            assert main(["-v", "samples"]) == 0
            assert ours.level == logging.DEBUG
            assert main(["-q", "samples"]) == 0
            assert ours.level == logging.WARNING
    finally:
        ours.setLevel(logging.NOTSET)
    capsys.readouterr()


def test_report_is_held_back_by_quiet_but_a_warning_is_not(capsys):
    ours = logging.getLogger("mathgraph")
    try:
        ours.setLevel(logging.INFO)
        report("wrote 3 graphs to out.jsonl")
        ours.setLevel(logging.WARNING)  # mathgraph -q
        report("wrote 3 graphs to other.jsonl")
        report("skipped 1 bad line:\n  in.jsonl:4: field 'problem' is empty", logging.WARNING)
    finally:
        ours.setLevel(logging.NOTSET)
    assert capsys.readouterr().err == (
        "wrote 3 graphs to out.jsonl\nskipped 1 bad line:\n  in.jsonl:4: field 'problem' is empty\n"
    )


class _Stream:
    def __init__(self, terminal: bool):
        self.terminal, self.text = terminal, ""

    def isatty(self) -> bool:
        return self.terminal

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(
    "terminal, show, tqdm_disable, drawn",
    [(True, True, None, True), (False, True, None, False), (True, False, None, False), (True, True, "1", False)],
)
def test_progress_bars_are_drawn_only_on_a_terminal(monkeypatch, terminal, show, tqdm_disable, drawn):
    # TQDM_DISABLE set after tqdm was imported counts too (tqdm reads it once, at import)
    import tqdm  # noqa: F401

    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    if tqdm_disable:
        monkeypatch.setenv("TQDM_DISABLE", tqdm_disable)
    stream = _Stream(terminal)
    with progress_bar(range(3), desc="parsing", show=show, file=stream) as bar:
        list(bar)
    assert ("parsing: 100%" in stream.text) == drawn
