"""Prediction without PyTorch: the commands a user of the shipped package runs, in a process where PyTorch and the
other training libraries cannot be imported, nor what the base install leaves to its other extras (pyarrow,
matplotlib, SciPy, faiss, SymPy): an install with no extras, as the second venv of ``.ci/run`` checks for real.

One subprocess runs every command through ``mathgraph.cli.main``; a meta-path finder on its ``PYTHONPATH``
(``sitecustomize``) refuses the blocked modules as if they were not installed and records every attempt to import
them with the file that tried. A command passes when it exits 0, prints what it should, and no file of mathgraph
tried to import a blocked module (spaCy's thinc looks for PyTorch and goes on without it: that attempt is not
mathgraph's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

TRAINING_LIBRARIES = ("torch", "torch_geometric", "transformers", "accelerate", "stanza", "sklearn", "datasets")
# what the extras parquet, draw, faiss and refine add, and SciPy (parsers.matching solves its matchings in NumPy)
EXTRA_LIBRARIES = ("pyarrow", "matplotlib", "scipy", "faiss", "sympy")
BLOCKED = TRAINING_LIBRARIES + EXTRA_LIBRARIES
REPO = Path(__file__).resolve().parents[1]

SITECUSTOMIZE = textwrap.dedent(
    """
    import sys

    BLOCKED = set(BLOCKED_NAMES)
    ATTEMPTS = []  # [command, module, the file that imported it]


    def _importer():
        frame = sys._getframe(2)
        while frame is not None and (
            "importlib" in frame.f_code.co_filename or frame.f_code.co_filename.startswith("<frozen")
        ):
            if frame.f_code.co_name == "find_spec" and "util" in frame.f_code.co_filename:
                return None  # importlib.util.find_spec: asking whether it is installed, not importing it
            frame = frame.f_back
        return "?" if frame is None else frame.f_code.co_filename


    class Blocker:
        command = ""

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] not in BLOCKED:
                return None
            importer = _importer()
            if importer is not None:
                ATTEMPTS.append([Blocker.command, name, importer])
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


    sys.meta_path.insert(0, Blocker())
    """
)

DRIVER = textwrap.dedent(
    """
    import contextlib, io, json, sys

    import sitecustomize
    from mathgraph.cli.main import main

    commands = json.loads(sys.argv[1])
    results = {}
    for name, argv in commands.items():
        sitecustomize.Blocker.command = name
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit:
                code = exit.code
            except BaseException as error:  # a traceback is a failure of the command, reported below
                import traceback

                traceback.print_exc(file=err)
                code = "raised"
        results[name] = {"code": code, "out": out.getvalue(), "err": err.getvalue()[-3000:]}
    blocked = set(sitecustomize.BLOCKED)
    imported = sorted(m for m in sys.modules if m.partition(".")[0] in blocked)
    print(json.dumps({"results": results, "attempts": sitecustomize.ATTEMPTS, "imported": imported}))
    """
)

PROBLEMS = [
    "Find $x$ if $2x+3=7$.",
    "Tom has 3 apples and buys 5 more. How many apples does he have?",
    "Tom has 3 apples and buys 6 more. How many apples does he have?",
    "What is the area of a circle of radius $2$?",
    "How many ways can 4 books be arranged on a shelf?",
    "Find the remainder when $2^{10}$ is divided by $7$.",
]


def run_without_training_libraries(
    tmp_path: Path, commands: dict[str, list[str]], blocked: tuple[str, ...] = BLOCKED
) -> dict:
    """Run ``commands`` (name -> argv of ``mathgraph``) in one process, from ``tmp_path``, where ``blocked`` (top
    level names) cannot be imported."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE.replace("BLOCKED_NAMES", repr(blocked)), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hooks), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "MATHGRAPH_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(commands)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_prediction_command_runs_without_torch_and_imports_none_of_it(tmp_path):
    bank = tmp_path / "bank.jsonl"
    bank.write_text("".join(json.dumps({"id": f"p{i}", "problem": p}) + "\n" for i, p in enumerate(PROBLEMS)))
    index, vectors, rows = tmp_path / "index", tmp_path / "vectors.jsonl", tmp_path / "rows.jsonl"
    tagged = tmp_path / "tagged.jsonl"
    commands = {
        "predict kpc": ["-q", "predict", "kpc", PROBLEMS[0], "--format", "json"],
        "predict qrc": ["-q", "predict", "qrc", PROBLEMS[1], PROBLEMS[2], "--format", "json"],
        "predict qam": ["-q", "predict", "qam", "What is 2+3?", "2+3=5. The answer is 5.", "--format", "json"],
        "predict sqr": ["-q", "predict", "sqr", PROBLEMS[1], PROBLEMS[2], PROBLEMS[3], "--format", "json"],
        "parse": ["-q", "parse", PROBLEMS[0], "--format", "json"],
        "encode": ["-q", "encode", "--input", str(bank), "--output", str(vectors)],
        "index build": ["-q", "index", "build", "--input", str(bank), "--output", str(index)],
        "search": ["-q", "search", "--index", str(index), PROBLEMS[1], "-k", "2", "--format", "json"],
        "compare": ["-q", "compare", PROBLEMS[1], PROBLEMS[2]],
        "check": ["-q", "check", "Tom has 3 apples and buys 5 more. How many?", "3 + 5 = 8. The answer is 8."],
        "dedupe": ["-q", "dedupe", "--input", str(bank), "--output", str(rows)],
        "predict kpc --input": ["-q", "predict", "kpc", "--input", str(bank), "--output", str(tagged)],
    }
    report = run_without_training_libraries(tmp_path, commands)
    failed = {name: result for name, result in report["results"].items() if result["code"] != 0}
    assert not failed, "\n".join(f"{name} (exit {r['code']}): ...{r['err'][-700:]}" for name, r in failed.items())
    # the project's own files (a virtual environment inside the clone, as CI makes it, holds other libraries': spaCy's
    # thinc looks for torch itself)
    ours = [
        attempt
        for attempt in report["attempts"]
        if Path(attempt[2]).is_relative_to(REPO) and not Path(attempt[2]).is_relative_to(sys.prefix)
    ]
    assert not ours, f"mathgraph tried to import training libraries: {ours}"
    assert report["imported"] == []

    out = {name: result["out"] for name, result in report["results"].items()}
    assert json.loads(out["predict kpc"].splitlines()[0])["label"] == "Algebra"
    assert "label" in json.loads(out["predict qrc"].splitlines()[0])
    assert json.loads(out["predict qam"].splitlines()[0])["label"] in (0, 1)
    assert sorted(json.loads(out["predict sqr"].splitlines()[0])["ranking"]) == [0, 1]
    assert json.loads(out["parse"])["text"] == PROBLEMS[0]
    assert len(vectors.read_text().splitlines()) == len(PROBLEMS)
    assert '"p1"' in out["search"].splitlines()[0]  # the query itself is the best match
    assert len(rows.read_text().splitlines()) == len(PROBLEMS)
    tags = [json.loads(line) for line in tagged.read_text().splitlines()]
    assert [t["id"] for t in tags] == [f"p{i}" for i in range(len(PROBLEMS))]
    assert tags[0]["label"] == "Algebra"  # the bank's first problem is the TEXT predicted above
    # the two apple problems differ in a number: compare names the changed quantity
    assert "5" in out["compare"] and "6" in out["compare"]
    assert out["check"].startswith("ok")  # 3 + 5 = 8 holds
