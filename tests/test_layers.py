"""The import layers of docs/architecture.md ("Layers"), as the contracts in pyproject.toml say them.

Bottom to top: the data model (``mathgraph.graph``, ``vocab``, ``jsonl``...), ``mathgraph.parsers``,
``mathgraph.models``, ``mathgraph.tasks``, then the CLI and the drawing of routes. A module may import
only its own layer or those below, and no package has import cycles (type-checking imports do not count).

import-linter reads the source tree, so it runs on the package in its installed shape
(``tests/installed_layout.py``), in a subprocess that sees that copy instead of the clone.
"""

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import tomllib
from installed_layout import ROOT, installed_layout


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> Path:
    return installed_layout(tmp_path_factory.mktemp("installed"))


def _run(layout: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(layout)}
    return subprocess.run(args, cwd=layout, env=env, capture_output=True, text=True, timeout=600)


def test_the_import_contracts_are_kept(layout):
    lint_imports = Path(sysconfig.get_path("scripts")) / "lint-imports"
    result = _run(layout, str(lint_imports), "pyproject.toml", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_module_belongs_to_a_layer(layout):
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    members = {name.strip() for layer in layers for name in layer.split(":")}
    script = f"import grimp, json; print(json.dumps(sorted(grimp.build_graph(*{config['root_packages']!r}).modules)))"
    result = _run(layout, sys.executable, "-c", script)
    assert result.returncode == 0, result.stderr
    modules = json.loads(result.stdout)
    assert "mathgraph.parsers.latex.tokenizer" in modules  # the copy holds the mapped packages
    # mathgraph itself and the sub-package folders only re-export or hold modules (no imports of their own)
    containers = {"mathgraph", "mathgraph.parsers", "mathgraph.models", "mathgraph.tasks"}
    homeless = sorted(
        module
        for module in modules
        if module not in containers and not any(module == m or module.startswith(m + ".") for m in members)
    )
    assert homeless == [], f"give these modules a layer in pyproject.toml: {homeless}"
