"""``mathgraph.registry``: every kind of model directory names its ``model_type`` in ``config.json`` and loads
through one call; directories written before that still load; anything else is one clear error."""

import json

import numpy as np
import pytest

from mathgraph.errors import UserError
from mathgraph.registry import MODEL_TYPES, CheckpointError, ModelNotFoundError, load, model_type, resolve


class TinyEmbedder:
    """Bag-of-characters vectors with a fixed identity: enough for an index on disk."""

    def encode(self, texts, batch_size=32):
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, text in enumerate(texts):
            for ch in text:
                out[i, ord(ch) % 8] += 1
        return out

    def identity(self):
        return {"kind": "test.TinyEmbedder", "weights_sha256": "none", "mode": "chars", "dimension": 8}


@pytest.fixture
def gsmplus():
    from pathlib import Path

    import mathgraph

    path = Path(mathgraph.__file__).parent / "data" / "gsmplus_sample.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def directories(tmp_path, tiny_encoder, gsmplus):
    """One directory of every kind, saved by its own writer."""
    from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
    from mathgraph.models.task_model import TaskConfig, TaskModel
    from mathgraph.tasks.data import build_qrc_pairs, build_sqr_lists, group_seeds
    from mathgraph.tasks.search.index import SearchIndex
    from mathgraph.tasks.training.tfidf import train_tfidf

    paths = {
        kind: tmp_path / kind for kind in ("encoder", "task", "multitask", "tfidf-classifier", "tfidf-ranker", "index")
    }
    tiny_encoder.save_pretrained(paths["encoder"])
    TaskModel(tiny_encoder, TaskConfig("kpc", labels=["a", "b"])).save_pretrained(paths["task"])
    MultiTaskModel(
        tiny_encoder, MultiTaskConfig([{"task": "kpc", "labels": ["a", "b"]}, {"task": "sqr", "labels": []}])
    ).save_pretrained(paths["multitask"])
    seeds = group_seeds(gsmplus)
    train_tfidf("qrc", build_qrc_pairs(seeds, random_state=0)).save_pretrained(paths["tfidf-classifier"])
    train_tfidf("sqr", build_sqr_lists(seeds, random_state=0)).save_pretrained(paths["tfidf-ranker"])
    SearchIndex.build(["one two", "three four", "five"], TinyEmbedder(), text_field="text").save_pretrained(
        paths["index"]
    )
    return paths


EXPECTED = {
    "encoder": ("comus", "MathEncoder"),
    "task": ("task-model", "TaskModel"),
    "multitask": ("multi-task-model", "MultiTaskModel"),
    "tfidf-classifier": ("tfidf", "TfidfClassifier"),
    "tfidf-ranker": ("tfidf", "TfidfRanker"),
    "index": ("search-index", "SearchIndex"),
}


def test_every_kind_declares_its_model_type_in_config_json_and_loads(directories):
    for name, path in directories.items():
        kind, class_name = EXPECTED[name]
        assert json.loads((path / "config.json").read_text())["model_type"] == kind
        assert model_type(path) == kind
        assert type(load(path, device="cpu")).__name__ == class_name, name
    task_model = load(directories["task"])
    assert task_model.config.labels == ["a", "b"] and not task_model.training
    assert load(directories["multitask"]).config.task_names == ["kpc", "sqr"]
    assert len(load(directories["index"])) == 3


# how each kind's directory looked before config.json named what it holds
LEGACY = {
    "task": lambda config: {**config, "model_type": "comus"},  # config.json was its encoder's
    "multitask": lambda config: {**config, "model_type": "comus"},
    "tfidf-classifier": lambda config: {k: v for k, v in config.items() if k != "model_type"},
    "tfidf-ranker": lambda config: {k: v for k, v in config.items() if k != "model_type"},
    "index": None,  # no config.json: manifest.json said it
}


def test_directories_written_before_config_json_named_their_kind_still_load(directories):
    for name, rewrite in LEGACY.items():
        path = directories[name]
        kind, class_name = EXPECTED[name]
        config = json.loads((path / "config.json").read_text())
        if rewrite is None:
            (path / "config.json").unlink()
        else:
            (path / "config.json").write_text(json.dumps(rewrite(config)))
        assert model_type(path) == kind, name
        assert type(load(path)).__name__ == class_name, name


def test_a_directory_of_no_known_kind_is_a_clear_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("hello")
    with pytest.raises(CheckpointError, match="holds nothing mathgraph can load") as caught:
        load(empty)
    message = str(caught.value)
    assert str(empty) in message and all(t.words in message for t in MODEL_TYPES.values())
    assert model_type(empty) is None

    missing = tmp_path / "nowhere"
    for call in (load, resolve):
        with pytest.raises(ModelNotFoundError, match=f"no such model: {missing}; .* holds empty/ \\(a model is"):
            call(missing)
    with pytest.raises(NotADirectoryError, match="is a file"):
        resolve(empty / "notes.txt")
    # a typo under an existing folder lists what is there
    (tmp_path / "runs" / "kpc-small").mkdir(parents=True)
    with pytest.raises(ModelNotFoundError, match="runs/kpc-smal; .*runs/ holds kpc-small/"):
        resolve(tmp_path / "runs" / "kpc-smal")
    # the caller's to put right, and still a missing file for code that caught that before
    assert issubclass(ModelNotFoundError, UserError) and issubclass(ModelNotFoundError, FileNotFoundError)

    other = tmp_path / "hf-bert"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(CheckpointError, match="type 'bert'.*a task model"):
        load(other)

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="config.json"):
        load(broken)
    assert issubclass(CheckpointError, ValueError) and issubclass(ModelNotFoundError, FileNotFoundError)


def test_the_registry_imports_no_torch():
    import subprocess
    import sys

    code = "import sys, mathgraph.registry, mathgraph.task_specs; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
