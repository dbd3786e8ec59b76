"""``UserError``: a mistake in what the user gave (an option, an input file or row, a model or index name), not in
mathgraph. The ``mathgraph`` command prints one as a line, ``mathgraph: error: MESSAGE`` (status 2), and shows the
traceback only with ``-v``; any other exception is a bug and keeps its traceback. The errors of one kind of input
subclass it (``JsonlError``, ``CheckpointError``, ``GraphFormatError``, ``InputError``...). It is a ``ValueError``,
so code that catches ``ValueError`` catches it as before.

Standard library only (the bottom layer of the packages).
"""

from __future__ import annotations


class UserError(ValueError):
    """A bad option, input or name, said in words the user can act on."""


__all__ = ["UserError"]
