"""The parser where Stanza is not installed (an install without ``mathgraph[train]``): ``auto`` is spaCy, even
with Stanza's models on disk, and ``stanza`` is a one-line error naming the extra."""

import importlib.util

import pytest

from mathgraph.errors import UserError
from mathgraph.parsers import dependency


@pytest.fixture
def no_stanza(monkeypatch, tmp_path):
    # Stanza's models on disk, as a machine that once had Stanza may keep them
    for processor in ("tokenize", "pos", "lemma", "depparse"):
        (tmp_path / "en" / processor).mkdir(parents=True)
        (tmp_path / "en" / processor / "model.pt").write_bytes(b"")
    (tmp_path / "resources.json").write_text("{}")
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(tmp_path))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "stanza" else real(name, *a))


def test_models_on_disk_count_only_with_stanza_installed(monkeypatch, tmp_path, no_stanza):
    assert not dependency.stanza_installed()
    assert not dependency.stanza_models_available("en")


def test_auto_falls_back_to_spacy_without_stanza(no_stanza):
    parser = dependency.load_dependency_parser("auto")
    assert isinstance(parser, dependency.SpacyParser)


def test_asking_for_stanza_without_it_names_the_train_extra(no_stanza):
    with pytest.raises(UserError, match=r'needs Stanza.*pip install "mathgraph\[train\]"'):
        dependency.load_dependency_parser("stanza")
