"""The package as it installs: the folders of pyproject.toml's ``package-dir`` copied under their installed names.

The clone keeps ``parsers/``, ``models/`` and ``tasks/`` beside ``mathgraph/`` and installs them as
``mathgraph.parsers``, ``mathgraph.models`` and ``mathgraph.tasks``. Tools that read the source tree
(import-linter's grimp) need that tree in its installed shape: ``installed_layout(target)`` writes it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import tomllib

ROOT = Path(__file__).parents[1]


def package_dirs() -> dict[str, str]:
    """pyproject.toml's ``[tool.setuptools.package-dir]``: installed package name -> folder in the clone."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["setuptools"]["package-dir"]


def installed_layout(target: Path) -> Path:
    """Copy every package's ``.py`` files to ``target`` under its installed name; returns ``target``."""
    for name, folder in sorted(package_dirs().items()):
        destination = target.joinpath(*name.split("."))
        for source in (ROOT / folder).rglob("*.py"):
            relative = source.relative_to(ROOT / folder)
            # a nested package of its own mapping (mathgraph.parsers inside mathgraph) is copied by that mapping
            if relative.parts[0] in {n.split(".")[-1] for n in package_dirs() if n.startswith(name + ".")}:
                continue
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination / relative)
    shutil.copyfile(ROOT / "pyproject.toml", target / "pyproject.toml")
    return target
