"""Real sample problems shipped with the package (MATH, GSM8K, GSM-Plus; see data/README.md), and their files by
name: a command's input option that names a bundled file (``--input kpc_sample.jsonl``) reads it from any folder."""

from __future__ import annotations

import json
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
SAMPLE_PATH = DATA_DIR / "sample_problems.jsonl"
# The files a command's input option finds by name, wherever it runs (data/README.md describes them).
BUNDLED_FILES = ("sample_problems.jsonl", "kpc_sample.jsonl", "gsmplus_sample.jsonl")


def sample_problems() -> list[dict]:
    """The bundled sample problems as dicts with ``id``, ``source``, ``problem`` and more."""
    with open(SAMPLE_PATH, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def input_path(value: str) -> str:
    """A command's input file: ``value`` as given when it exists, else the bundled file of that name
    (``kpc_sample.jsonl`` -> ``mathgraph/data/kpc_sample.jsonl``), else ``value`` as given, for the command's own
    check to report (with ``missing_file_hint``). A file of the user's own by that name comes first."""
    if value in BUNDLED_FILES and not Path(value).exists():
        return str(DATA_DIR / value)
    return value


def missing_file_hint(value: str | Path) -> str:
    """What to add to "no such file" for a missing input: the bundled files' names, when ``value`` is a bare name
    or ends in one of them (``mathgraph/data/kpc_sample.jsonl`` from another folder); else nothing."""
    path = Path(value)
    if len(path.parts) > 1 and path.name not in BUNDLED_FILES:
        return ""
    return f" (files bundled with mathgraph, found by name from any folder: {', '.join(BUNDLED_FILES)})"


def is_bundled(path: str | Path) -> bool:
    """Whether ``path`` is inside mathgraph's bundled data folder."""
    return Path(path).resolve().parent == DATA_DIR.resolve()
