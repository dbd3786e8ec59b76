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
    repository of that id. Anything else raises ``FileNotFoundError`` (``NotADirectoryError`` for a file),
    whose message starts ``no such directory: NAME``."""
    path = Path(name_or_dir).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise NotADirectoryError(f"{name_or_dir} is a file; mathgraph models are directories")
    name = str(name_or_dir)
    if not is_hub_id(name):
        raise FileNotFoundError(f"no such directory: {name} (nor a Hugging Face Hub id, org/name)")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id=name))
    except LocalEntryNotFoundError as err:
        raise FileNotFoundError(
            f"no such directory: {name}; as a Hugging Face Hub id it is not in the Hugging Face cache, "
            f"and the Hub cannot be reached (offline?): {_first_line(err)}"
        ) from err
    except HfHubHTTPError as err:
        raise FileNotFoundError(
            f"no such directory: {name}; as a Hugging Face Hub id it cannot be downloaded: {_first_line(err)}"
        ) from err


def _first_line(err: Exception) -> str:
    """The first line of an error's message: huggingface_hub's go on with advice on connections."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


__all__ = ["local_directory", "is_hub_id"]
