"""Files mathgraph writes: their permissions, and where its cache lives.

File permissions: files mathgraph writes get the mode the user's umask gives a new file.

safetensors writes through a temporary file created with mode 0600, and so does
``tempfile.mkstemp`` (``mathgraph.jsonl.atomic_writer``); left that way, other
users cannot read a shared model or index. ``apply_umask`` restores the usual mode.
"""

from __future__ import annotations

import os
from os import PathLike
from pathlib import Path


def umask_file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: ``0o666`` less the process umask."""
    mask = os.umask(0)  # the only portable way to read the umask is to set it, then put it back
    os.umask(mask)
    return 0o666 & ~mask


def apply_umask(path: str | PathLike) -> None:
    """Give the file at ``path`` the mode a new file of this user would have (see ``umask_file_mode``)."""
    os.chmod(path, umask_file_mode())


def cache_directory() -> Path:
    """``$MATHGRAPH_CACHE_DIR``, else ``$XDG_CACHE_HOME/mathgraph``, else ``~/.cache/mathgraph`` (not created)."""
    if directory := os.environ.get("MATHGRAPH_CACHE_DIR"):
        return Path(directory).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "mathgraph"


__all__ = ["apply_umask", "umask_file_mode", "cache_directory"]
