"""The base install (``pip install mathgraph``, no extras): what it depends on, the same predictions as the full
install on the bundled samples, and one clear line for a feature whose extra is missing.

The commands run in a process where the training libraries and the extras' libraries cannot be imported
(``tests/test_without_torch.py``'s import blocker) and in one where everything can; their outputs must be equal,
byte for byte: SciPy's matchings and the NumPy ones align the same quantities, flat search is NumPy either way.
The shipped package's predictions on its bundled samples are the same with SciPy's matchings and NumPy's.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path

import pytest
import tomllib

from mathgraph.cli.main import main
from mathgraph.extras import EXTRAS
from mathgraph.registry import SHIPPED_DIR
from tests.test_without_torch import BLOCKED, run_without_training_libraries

ROOT = Path(__file__).resolve().parents[1]
# distributions that must not come with the base install (each is in an extra)
HEAVY = {
    "torch",
    "torch-geometric",
    "transformers",
    "accelerate",
    "stanza",
    "datasets",
    "scikit-learn",
    "pyarrow",
    "matplotlib",
    "scipy",
    "faiss-cpu",
    "sympy",
}
SAMPLE = SHIPPED_DIR / "sample"
APPLES = "Tom has 3 apples and buys 5 more. How many apples does he have?"


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def name_of(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def requirements_of(extra: str, extras: dict) -> set[str]:
    """The distributions ``mathgraph[extra]`` adds, through the extras it names."""
    names = set()
    for requirement in extras[extra]:
        nested = re.fullmatch(r"mathgraph\[([\w,-]+)\]", requirement)
        if nested:
            for other in nested.group(1).split(","):
                names |= requirements_of(other, extras)
        else:
            names.add(name_of(requirement))
    return names


def test_the_base_install_brings_none_of_the_heavy_libraries_and_dev_brings_them_all():
    config = project()
    base = {name_of(r) for r in config["dependencies"]}
    assert not base & HEAVY, base & HEAVY
    extras = config["optional-dependencies"]
    assert HEAVY <= requirements_of("dev", extras)  # the development install is the full one, as before
    for extra, (module, _) in EXTRAS.items():  # every extra an error message names exists and adds its library
        assert extra in extras, extra
        assert {"faiss": "faiss-cpu"}.get(module, module) in requirements_of(extra, extras)


def commands(bank: Path) -> dict[str, list[str]]:
    """The base install's commands, with relative outputs (each run writes its own in its own folder)."""
    qrc = json.loads((SAMPLE / "qrc.jsonl").read_text(encoding="utf-8").splitlines()[0])
    return {
        "predict qrc": ["-q", "predict", "qrc", qrc["text_a"], qrc["text_b"], "--format", "json"],
        "compare sample": ["-q", "compare", qrc["text_a"], qrc["text_b"]],
        "compare": ["-q", "compare", APPLES, APPLES.replace("5", "6").replace("3", "7")],
        "check": ["-q", "check", APPLES, "3 + 5 = 8. The answer is 8."],
        "index build": ["-q", "index", "build", "--input", str(bank), "--output", "index"],
        "search": ["-q", "search", "--index", "index", APPLES, "-k", "3", "--format", "json"],
        "dedupe": ["-q", "dedupe", "--input", str(bank), "--output", "groups.jsonl"],
    }


@pytest.mark.slow
def test_the_base_commands_give_the_full_installs_results(tmp_path):
    bank = tmp_path / "bank.jsonl"
    rows = [json.loads(line) for line in (SAMPLE / "kpc.jsonl").read_text(encoding="utf-8").splitlines()[:12]]
    rows.append(rows[0])  # a duplicate for dedupe to group
    bank.write_text("".join(json.dumps({"id": f"p{i}", "problem": r["problem"]}) + "\n" for i, r in enumerate(rows)))
    runs = {}
    for name, blocked in (("base", BLOCKED), ("full", ())):
        folder = tmp_path / name
        folder.mkdir()
        report = run_without_training_libraries(folder, commands(bank), blocked)
        failed = {c: r for c, r in report["results"].items() if r["code"] != 0}
        assert not failed, f"{name}: " + "\n".join(f"{c}: {r['err'][-700:]}" for c, r in failed.items())
        runs[name] = report, (folder / "groups.jsonl").read_text(encoding="utf-8")
    (base, base_groups), (full, full_groups) = runs["base"], runs["full"]
    assert base["imported"] == []
    for command in commands(bank):
        assert base["results"][command]["out"] == full["results"][command]["out"], command
    assert base_groups == full_groups
    groups = [json.loads(line)["group"] for line in full_groups.splitlines()]
    assert len(groups) == 13 and groups[-1] == 0  # the repeated first problem joins its group


@pytest.mark.slow
@pytest.mark.parametrize("task", ["qrc", "sqr"])  # QAM aligns a solution with its question: no matching
def test_the_shipped_predictions_on_the_bundled_samples_are_the_same_without_scipy(task, monkeypatch):
    import mathgraph.models.alignment_features as alignment_features
    import mathgraph.parsers.matching as matching
    from mathgraph.models.package import ModelPackage
    from mathgraph.tasks.evaluation import labelled_inputs

    inputs, _ = labelled_inputs(task, SAMPLE / f"{task}.jsonl")
    predictor = ModelPackage(SHIPPED_DIR).predictor(task)
    # no alignment rows kept from before: every alignment of the samples is made in each prediction
    monkeypatch.setattr(alignment_features, "TRAINING_ROWS", alignment_features.AlignmentRows())
    with_scipy = predictor.predict(inputs)
    solved = []
    numpy_solver = matching.shortest_augmenting_path
    monkeypatch.setattr(matching, "shortest_augmenting_path", lambda *a: solved.append(a[:2]) or numpy_solver(*a))
    monkeypatch.setattr(alignment_features, "TRAINING_ROWS", alignment_features.AlignmentRows())
    block(monkeypatch, "scipy")
    assert predictor.predict(inputs) == with_scipy
    assert solved  # the alignments were made again, their matchings solved by NumPy


def run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue().strip()


def block(monkeypatch, library: str) -> None:
    """Make ``import library`` (and its submodules) fail, as where it is not installed."""
    for name in [name for name in sys.modules if name == library or name.startswith(library + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, library, None)


def test_parquet_without_pyarrow_names_the_parquet_extra(tmp_path, monkeypatch):
    block(monkeypatch, "pyarrow")
    bank = tmp_path / "bank.jsonl"
    bank.write_text(json.dumps({"id": "a", "problem": APPLES}) + "\n")
    (tmp_path / "bank.parquet").write_bytes(b"PAR1")
    hint = 'needs pyarrow, which the base install leaves out: pip install "mathgraph[parquet]"'
    out = tmp_path / "out.parquet"
    assert run(["dedupe", "--input", str(tmp_path / "bank.parquet"), "--output", str(tmp_path / "g.jsonl")]) == (
        2,
        f"mathgraph: error: --input {tmp_path / 'bank.parquet'}: reading Parquet {hint}",
    )
    assert run(["dedupe", "--input", str(bank), "--output", str(out)]) == (
        2,
        f"mathgraph: error: --output {out}: writing Parquet {hint}",
    )
    assert run(["predict", "kpc", "--input", str(bank), "--output", str(tmp_path / "p"), "--output-format", "parquet"])[
        1
    ] == (f"mathgraph: error: --output-format parquet: writing Parquet {hint}")
    assert not out.exists() and not (tmp_path / "p").exists()  # refused before any work


def test_drawing_without_matplotlib_names_the_draw_extra(tmp_path, monkeypatch):
    block(monkeypatch, "matplotlib")
    picture = tmp_path / "graph.png"
    code, err = run(["parse", "What is $2+3$?", "--draw", str(picture)])
    assert (code, err) == (
        2,
        'mathgraph: error: drawing a graph needs matplotlib, which the base install leaves out: pip install "mathgraph[draw]"',
    )
    assert not picture.exists()


def test_an_approximate_index_without_faiss_names_the_faiss_extra_and_a_flat_one_needs_none(tmp_path, monkeypatch):
    block(monkeypatch, "faiss")
    bank = tmp_path / "bank.jsonl"
    bank.write_text("".join(json.dumps({"id": str(i), "problem": f"What is {i} + {i}?"}) + "\n" for i in range(4)))
    code, err = run(["index", "build", "--input", str(bank), "--output", str(tmp_path / "ivf"), "--index-type", "hnsw"])
    assert code == 2 and err.splitlines()[-1].startswith(
        "mathgraph: error: an approximate index (ivf-flat, ivf-pq, hnsw"
    )
    assert "indexing" not in err  # refused before the encoding
    assert err.endswith(
        'needs faiss, which the base install leaves out: pip install "mathgraph[faiss]" (or build --index-type flat, exact)'
    )
    assert run(["-q", "index", "build", "--input", str(bank), "--output", str(tmp_path / "flat")]) == (0, "")


def test_dedupe_of_a_bank_searched_approximately_asks_for_faiss_before_encoding(monkeypatch):
    from mathgraph.tasks.search.dedupe import find_duplicates
    from mathgraph.tasks.search.index_types import APPROXIMATE_FROM, FaissMissing

    class NeverCalled:
        def __getattr__(self, name):
            raise AssertionError(f"the embedder was used ({name}) before faiss was asked for")

    block(monkeypatch, "faiss")
    texts = [f"What is {i} + 1?" for i in range(APPROXIMATE_FROM)]
    with pytest.raises(FaissMissing, match=r'pip install "mathgraph\[faiss\]"'):
        find_duplicates(texts, NeverCalled())


@pytest.mark.parametrize(
    ("library", "extra"), [("torch", "train"), ("sklearn", "train"), ("sympy", "refine"), ("pyarrow", "parquet")]
)
def test_a_command_that_needs_a_library_of_an_extra_names_the_extra(monkeypatch, library, extra):
    """A command that reaches an import the install lacks prints one line naming the extra that adds it; an
    import error of any other library is a bug, and its traceback shows."""
    import mathgraph.cli.main  # noqa: F401

    cli = sys.modules["mathgraph.cli.main"]  # the package's ``main`` attribute is the function

    def needs_it(args):
        import importlib

        importlib.import_module(library)

    parser = cli.build_argument_parser
    monkeypatch.setattr(cli, "build_argument_parser", lambda: _with_run(parser(), needs_it))
    block(monkeypatch, library)
    assert run(["samples"]) == (
        2,
        f'mathgraph: error: samples needs {library}, which comes with the {extra} extra: pip install "mathgraph[{extra}]"',
    )
    monkeypatch.setattr(cli, "build_argument_parser", lambda: _with_run(parser(), lambda args: __import__("nowhere")))
    with pytest.raises(ModuleNotFoundError):
        run(["samples"])


def _with_run(parser, run_instead):
    """``parser`` whose parsed arguments run ``run_instead``."""
    parse_args = parser.parse_args
    parser.parse_args = lambda argv: setattr(namespace := parse_args(argv), "run", run_instead) or namespace
    return parser
