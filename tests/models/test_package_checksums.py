"""A package's files are hashed once per process while they stay as they were, and again when they change."""

import shutil

import pytest

from mathgraph.checksums import file_sha256
from mathgraph.models import package as package_module
from mathgraph.models.package import checked_path, forget_checksums
from mathgraph.registry import SHIPPED_DIR, CheckpointError


def test_a_file_is_hashed_once_until_it_changes(tmp_path, monkeypatch):
    root = tmp_path / "shipped"
    shutil.copytree(SHIPPED_DIR / "encoder", root / "encoder")
    shutil.copy(SHIPPED_DIR / "checksums.json", root / "checksums.json")
    forget_checksums()
    hashed = []
    monkeypatch.setattr(package_module, "file_sha256", lambda path: hashed.append(path) or file_sha256(path))
    checked_path(root, "encoder", "config.json")
    checked_path(root, "encoder", "config.json")
    assert len(hashed) == 1
    config = root / "encoder" / "config.json"
    config.write_text(config.read_text().replace("spacy", "Spacy"))  # same size, other content
    with pytest.raises(CheckpointError, match="does not match its checksum"):
        checked_path(root, "encoder", "config.json")
    forget_checksums()
