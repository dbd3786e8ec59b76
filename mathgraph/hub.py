"""Model directories by name: a local directory, or a repository on the Hugging Face Hub.

``local_directory("org/name")`` downloads the repository once to the Hub's cache (``huggingface_hub``) and
returns its local snapshot; with ``HF_HUB_OFFLINE=1`` it reads the cache only. Every ``from_pretrained`` of
mathgraph goes through it, so a directory the project writes can be published with
``huggingface_hub.upload_folder`` and loaded by its Hub id.
"""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def is_hub_id(name: str) -> bool:
    """Whether ``name`` has the form of a Hub repository id (``org/name``)."""
    return bool(_HUB_ID.fullmatch(name))


def local_directory(name_or_dir: str | PathLike) -> Path:
    """The local directory ``name_or_dir`` names: itself when it exists, else the snapshot of the Hub
    repository of that id. Anything else raises ``FileNotFoundError`` (``NotADirectoryError`` for a file)."""
    path = Path(name_or_dir).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise NotADirectoryError(f"{name_or_dir} is a file; mathgraph models are directories")
    name = str(name_or_dir)
    if not is_hub_id(name):
        raise FileNotFoundError(f"{name} does not exist: no such directory (nor a Hugging Face Hub id, org/name)")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id=name))
    except LocalEntryNotFoundError as err:
        raise FileNotFoundError(
            f"{name}: not in the Hugging Face cache, and the Hub cannot be reached (offline?): {err}"
        ) from err
    except HfHubHTTPError as err:
        raise FileNotFoundError(f"{name}: cannot download it from the Hugging Face Hub: {err}") from err


__all__ = ["local_directory", "is_hub_id"]
