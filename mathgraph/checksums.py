"""sha256 checksums of files: model weights and search-index files are checked against them on load."""

from __future__ import annotations

import hashlib
from os import PathLike


def file_sha256(path: str | PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks so large weights never sit in memory twice."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
