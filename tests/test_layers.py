"""The import layers of docs/architecture.md ("Layers"), as the contracts in pyproject.toml say them.

Bottom to top: the data model (``mathgraph.graph``, ``vocab``, ``jsonl``...), ``parsers``,
``models``, ``tasks``, then the CLI and the drawing of routes. A module may import only
its own layer or those below, and no package has import cycles (type-checking imports
do not count).
"""

from pathlib import Path

import grimp
import tomllib
from importlinter.cli import lint_imports

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


def _config() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]


def test_the_import_contracts_are_kept():
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True) == 0


def test_every_module_belongs_to_a_layer():
    config = _config()
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    members = {name.strip() for layer in layers for name in layer.split(":")}
    graph = grimp.build_graph(*config["root_packages"])
    # the mathgraph package itself only re-exports names lazily (no imports grimp can see)
    homeless = sorted(
        module
        for module in graph.modules
        if module != "mathgraph" and not any(module == m or module.startswith(m + ".") for m in members)
    )
    assert homeless == [], f"give these modules a layer in pyproject.toml: {homeless}"
