"""The front ends (``mathgraph/cli/``, ``mathgraph/serve/``) predict through ``mathgraph.api`` alone.

Read from the source, not by running it: every ``import`` and ``from ... import`` statement of every module of
the two folders, at the top or inside a function, is collected with ``ast``. A front end may import the
standard library and third-party packages, ``mathgraph.api`` (its layer: ``mathgraph.routing_pictures`` too),
the front ends themselves and the bottom layer, which ``pyproject.toml``'s layers contract names (the data
model, the task table, labels, files, batch jobs...). Anything else, ``mathgraph.models``, ``mathgraph.tasks``
or ``mathgraph.parsers``, is allowed only where ``EXEMPT`` lists it, with the command it serves: commands that
are not prediction (training, releases, kits, task data, parsing, search and deduplication, solution checks,
LLM refinement); ``encode``'s batch job comes from the API, as ``predict``'s does. The list is exact: an exemption that a module no longer needs fails too, so it stays the
description of what is left.

``api.py``, ``cli/`` and ``serve/`` also import no heavy library at module level (torch, transformers, PyG):
importing a front end costs no model code (prediction runs without PyTorch where ONNX Runtime serves it).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
FRONT_ENDS = ("mathgraph/cli", "mathgraph/serve")
HEAVY = ("torch", "transformers", "torch_geometric", "accelerate", "mathgraph.models")

TRAINING = "training commands (train, train-multitask, pretrain, simcse, tfidf): they build models, not predict"
SEARCH = "search and deduplication over an index (owned by the search commands; prediction is not among them)"
# module -> {the modules beyond the API and the bottom layer it imports: why}
EXEMPT: dict[str, dict[str, str]] = {
    "mathgraph/cli/training.py": {
        "mathgraph.models.task_model": TRAINING,
        **{f"mathgraph.tasks.training.{m}": TRAINING for m in ("finetune", "multitask", "pretrain", "simcse")},
        "mathgraph.tasks.training.tfidf": TRAINING,
        "mathgraph.tasks.training.trainer": TRAINING,
    },
    "mathgraph/cli/kit.py": {
        "mathgraph.tasks.kit.build": "`kit build`: the kit of a trained model, a release step",
        "mathgraph.tasks.kit.job": "`kit`: the kit's training job",
        "mathgraph.tasks.kit.release": "`kit release`: a release step",
        "mathgraph.tasks.release.build": "`kit`: the release stages it runs",
    },
    "mathgraph/cli/release.py": {
        "mathgraph.tasks.release.build": "`release`: building the shipped package",
        "mathgraph.tasks.release.package": "`release`: writing the shipped package",
    },
    "mathgraph/cli/data.py": {"mathgraph.tasks.data": "`data`: building the task data files, no model"},
    "mathgraph/cli/parse.py": {
        "mathgraph.parsers.dependency": "`parse`: the parser is the product here, no model",
        "mathgraph.parsers.problem": "`parse`: the parser is the product here, no model",
        "mathgraph.models.vocabularies": "`vocab`: the graph vocabularies of a parsed corpus, no model",
        "mathgraph.tasks.jobs.stages": "`parse --input`: the parse stage of its batch job",
    },
    "mathgraph/cli/refine.py": {
        "mathgraph.tasks.refine.llm": "`refine`: an LLM rewrites problems, no mathgraph model predicts",
        "mathgraph.tasks.refine.refinement": "`refine`: an LLM rewrites problems, no mathgraph model predicts",
        "mathgraph.tasks.search.index": "`refine`: the index it searches for near copies",
    },
    "mathgraph/cli/search.py": {
        "mathgraph.tasks.search.commands": SEARCH,
        "mathgraph.tasks.search.index": SEARCH,
    },
    "mathgraph/cli/dedupe.py": {
        "mathgraph.tasks.search.dedupe": SEARCH,
        "mathgraph.tasks.search.embedders": SEARCH,
    },
    "mathgraph/cli/check.py": {
        "mathgraph.parsers.graph_cache": "`check`: a solution checked against its parsed problem, no model",
        "mathgraph.parsers.solution": "`check`: a solution checked against its parsed problem, no model",
        "mathgraph.parsers.step_verifier": "`check --threshold`: the step verifier's operating point, no model",
    },
    "mathgraph/serve/service.py": {
        "mathgraph.parsers.graph_cache": "the endpoints' graphs (parse, draw, check, compare, search), no model",
        "mathgraph.parsers.problem": "/api/parse: the parser is the product here",
        "mathgraph.parsers.compare": "/api/compare: the alignment of two problems (its relation: a Predictor)",
        "mathgraph.parsers.solution": "/api/check and /api/compare --solution: a solution read against a problem",
        "mathgraph.tasks.search.commands": f"/api/search: {SEARCH}",
        "mathgraph.tasks.search.embedders": f"/api/search: {SEARCH}",
        "mathgraph.tasks.search.index": f"/api/search: {SEARCH}",
    },
}


def layers() -> list[list[str]]:
    """The layers of ``pyproject.toml``'s layers contract, top first, each a list of module names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [[name.strip() for name in layer.split(":")] for layer in contract["layers"]]


def allowed_modules() -> tuple[str, ...]:
    """What a front end may import of mathgraph: the front ends, the API's layer, the bottom layer, and the
    package itself (its version)."""
    top, api_layer, *_, bottom = layers()
    assert "mathgraph.api" in api_layer and "mathgraph.graph" in bottom, "the layers contract changed its shape"
    return (*top, *api_layer, *bottom)


def imports_of(path: Path, top_level_only: bool = False) -> set[str]:
    """The modules ``path`` imports, by full name (``from . import x`` resolved against its package); with
    ``top_level_only``, those that run when the module is imported (not inside a function or a class, nor
    under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in _top_level(tree.body) if top_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1])
            if node.module:
                found.add(f"{base}.{node.module}")
            else:
                found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _top_level(statements: list[ast.stmt]):
    """The statements a module runs when imported: into ``if``/``try``/``with`` blocks, not into functions,
    classes or ``if TYPE_CHECKING:``."""
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _top_level(node.orelse)
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            yield from _top_level(getattr(node, field, []) or [])


def front_end_modules() -> list[Path]:
    return sorted(path for folder in FRONT_ENDS for path in (ROOT / folder).rglob("*.py"))


def is_allowed(module: str, allowed: tuple[str, ...]) -> bool:
    if not module.startswith("mathgraph.") and module != "mathgraph":
        return True  # the standard library and third-party packages
    return module == "mathgraph" or any(module == a or module.startswith(a + ".") for a in allowed)


def beyond_the_api() -> dict[str, set[str]]:
    """``{module: the mathgraph modules it imports that are neither the API nor the bottom layer}``."""
    allowed = allowed_modules()
    found = {}
    for path in front_end_modules():
        extra = {m for m in imports_of(path) if not is_allowed(m, allowed)}
        if extra:
            found[str(path.relative_to(ROOT))] = extra
    return found


def test_the_front_ends_predict_through_the_api_alone():
    found = beyond_the_api()
    unexplained = {
        module: sorted(extra - set(EXEMPT.get(module, {})))
        for module, extra in found.items()
        if extra - set(EXEMPT.get(module, {}))
    }
    assert unexplained == {}, f"front ends reaching below mathgraph.api: {unexplained}"
    stale = {
        module: sorted(set(reasons) - found.get(module, set()))
        for module, reasons in EXEMPT.items()
        if set(reasons) - found.get(module, set())
    }
    assert stale == {}, f"exemptions no longer needed (remove them): {stale}"


def test_the_prediction_commands_import_no_model_tasks_or_parser_module():
    """predict, compare, evaluate, serve and the batch-job options: nothing of theirs is exempt."""
    found = beyond_the_api()
    prediction = ["predict.py", "prediction_files.py", "compare.py", "serve.py", "common.py", "job_options.py"]
    prediction.append("encode.py")  # the encoder's vectors: its batch job comes from the API too
    for name in prediction:
        assert f"mathgraph/cli/{name}" not in found, (name, found.get(f"mathgraph/cli/{name}"))
    for name in ("app.py", "schemas.py", "model_lock.py"):
        assert f"mathgraph/serve/{name}" not in found
    # the service's exemptions are its non-prediction endpoints: no model module, no task internals of prediction
    service = found["mathgraph/serve/service.py"]
    assert not any(m.startswith("mathgraph.models") for m in service)
    assert not any(m.startswith("mathgraph.tasks") and not m.startswith("mathgraph.tasks.search") for m in service)
    # `evaluate` sits in training.py beside the training commands: what it imports is the API's
    training = found["mathgraph/cli/training.py"]
    assert not any(m.startswith("mathgraph.models") and m != "mathgraph.models.task_model" for m in training)


def test_the_reading_of_imports_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    """The checker itself: an import inside a function counts, a relative one is resolved to its full name,
    and an unexplained one is caught."""
    checker = sys.modules[__name__]
    fake_root = tmp_path
    folder = fake_root / "mathgraph" / "cli"
    folder.mkdir(parents=True)
    (fake_root / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "x.py").write_text(
        "from . import common\n"
        "from mathgraph.api import Predictor\n"
        "if TYPE_CHECKING:\n"
        "    import transformers\n"
        "def f():\n"
        "    from mathgraph.models.task_heads import get_task_head\n"
        "    import torch\n",
        encoding="utf-8",
    )
    (fake_root / "mathgraph" / "serve").mkdir()
    monkeypatch.setattr(checker, "ROOT", fake_root)
    assert checker.imports_of(folder / "x.py") == {
        "mathgraph.cli.common",
        "mathgraph.api",
        "mathgraph.models.task_heads",
        "torch",
        "transformers",
    }
    assert checker.imports_of(folder / "x.py", top_level_only=True) == {"mathgraph.cli.common", "mathgraph.api"}
    assert checker.beyond_the_api() == {"mathgraph/cli/x.py": {"mathgraph.models.task_heads"}}


def test_no_front_end_imports_a_heavy_library_at_module_level():
    paths = [ROOT / "mathgraph" / "api.py", *front_end_modules()]
    heavy = {
        str(path.relative_to(ROOT)): sorted(
            m for m in imports_of(path, top_level_only=True) if any(m == h or m.startswith(h + ".") for h in HEAVY)
        )
        for path in paths
    }
    assert {module: found for module, found in heavy.items() if found} == {}
