"""One import name: the distribution installs ``mathgraph`` alone, and a user's own ``models.py``,
``tasks/`` or ``parsers.py`` does not shadow ``mathgraph.models``, ``mathgraph.tasks`` or ``mathgraph.parsers``."""

import subprocess
import sys
import textwrap

import pytest
import tomllib
from installed_layout import ROOT, package_dirs


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_the_only_top_level_name_is_mathgraph():
    assert {name.split(".")[0] for name in _setuptools()["packages"]} == {"mathgraph"}
    assert set(package_dirs()) == {"mathgraph", "mathgraph.parsers", "mathgraph.models", "mathgraph.tasks"}


def test_every_folder_with_an_init_is_a_listed_package():
    listed = set(_setuptools()["packages"])
    found = set()
    for name, folder in package_dirs().items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *parts)) if parts else name)
    # mathgraph/ holds no folder of a mapped package (parsers/ etc. live beside it), so nothing is found twice
    assert found == listed


@pytest.mark.slow
def test_a_project_with_its_own_models_tasks_and_parsers_uses_mathgraph(tmp_path):
    # what every Django app and most ML projects have: modules named like ours, first on sys.path
    (tmp_path / "models.py").write_text("SHADOW = 'the user project models'\n")
    (tmp_path / "parsers.py").write_text("SHADOW = 'the user project parsers'\n")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "__init__.py").write_text("SHADOW = 'the user project tasks'\n")
    script = textwrap.dedent(
        """
        import models, parsers, tasks
        import mathgraph

        graph = mathgraph.parse_problem("Tom has 12 apples and gives 5 away. How many are left?")
        kpc = mathgraph.Predictor.from_pretrained("shipped", task="kpc")
        [result] = kpc.predict(["Find $x$ if $2x + 3 = 7$."])
        vectors = mathgraph.load("shipped").encode(["Find $x$ if $2x + 3 = 7$."])
        print(len(graph.nodes) > 10, result["label"], vectors.shape)
        print(models.SHADOW, parsers.SHADOW, tasks.SHADOW, sep="|")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.strip().splitlines()
    assert first.startswith("True Algebra") and first.endswith("(1, 768)")
    assert second == "the user project models|the user project parsers|the user project tasks"
