"""The optional extras of the install and the one-line error a feature gives when its extra is missing.

The base install (``pip install mathgraph``) parses, predicts, encodes, searches, compares, checks, deduplicates
and serves with the shipped package, reading and writing JSONL and CSV. Each extra adds one library for one
feature; the feature imports it where it is used (never at import time) through ``require``::

    pq = require("pyarrow.parquet", "parquet", "bank.parquet: reading Parquet")
    # UserError where pyarrow is missing: 'bank.parquet: reading Parquet needs pyarrow, which the base install
    # leaves out: pip install "mathgraph[parquet]"'

Standard library only (the bottom layer of the packages).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from mathgraph.errors import UserError

# extra -> (the library it installs, what it adds); pyproject.toml's [project.optional-dependencies] lists them
EXTRAS = {
    "parquet": ("pyarrow", "banks and outputs in Parquet"),
    "draw": ("matplotlib", "drawing graphs: parse --draw, the server's pictures"),
    "faiss": ("faiss", "search indexes of any size and type (the base install builds and reads flat ones)"),
    "refine": ("sympy", "grading final answers as math in mathgraph refine"),
}


def install_hint(extra: str) -> str:
    """``pip install "mathgraph[EXTRA]"``: the command that adds ``extra``."""
    return f'pip install "mathgraph[{extra}]"'


def require(module: str, extra: str, what: str) -> ModuleType:
    """The module ``module`` (``"pyarrow.parquet"``), or a ``UserError`` saying that ``what`` (what was asked
    for) needs the library of ``extra`` and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        library = EXTRAS[extra][0]
        raise UserError(f"{what} needs {library}, which the base install leaves out: {install_hint(extra)}") from None


__all__ = ["EXTRAS", "install_hint", "require"]
