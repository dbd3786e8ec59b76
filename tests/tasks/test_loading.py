"""``tasks.loading.load_model``: every kind of model directory loads through one call, with or without
``model_type`` in its config; anything else is a clear ``CheckpointError``."""

import json

import numpy as np
import pytest

from mathgraph.models.comus import CheckpointError
from mathgraph.tasks.loading import MODEL_TYPES, load_model, model_type

# The file of each kind that names its model_type.
CONFIG_FILES = {
    "comus": "config.json",
    "task-model": "task_config.json",
    "multi-task-model": "multitask_config.json",
    "tfidf": "config.json",
    "search-index": "manifest.json",
}


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


def test_every_kind_declares_its_model_type_and_loads(directories):
    for name, path in directories.items():
        kind, class_name = EXPECTED[name]
        assert json.loads((path / CONFIG_FILES[kind]).read_text())["model_type"] == kind
        assert model_type(path) == kind
        assert type(load_model(path)).__name__ == class_name, name
    task_model = load_model(directories["task"])
    assert task_model.config.labels == ["a", "b"] and not task_model.training
    assert load_model(directories["multitask"]).config.task_names == ["kpc", "sqr"]
    assert len(load_model(directories["index"])) == 3


def test_directories_written_before_model_type_still_load(directories):
    for name, path in directories.items():
        kind, class_name = EXPECTED[name]
        if kind == "comus":
            continue  # an encoder's config.json has always held model_type "comus"
        config_path = path / CONFIG_FILES[kind]
        config = json.loads(config_path.read_text())
        del config["model_type"]
        config_path.write_text(json.dumps(config))  # no checksum covers the config files themselves
        assert model_type(path) == kind, name
        assert type(load_model(path)).__name__ == class_name, name


def test_a_directory_of_no_known_kind_is_a_clear_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("hello")
    with pytest.raises(CheckpointError, match="not a model directory mathgraph can load") as caught:
        load_model(empty)
    message = str(caught.value)
    assert str(empty) in message and all(name in message for name, _ in MODEL_TYPES.values())
    assert model_type(empty) is None

    with pytest.raises(CheckpointError, match=f"no such directory: {tmp_path / 'nowhere'}"):
        load_model(tmp_path / "nowhere")
    # a directory that does not exist is no directory "of no known kind": model_type says which it is
    with pytest.raises(FileNotFoundError, match=f"no such directory: {tmp_path / 'nowhere'}"):
        model_type(tmp_path / "nowhere")
    with pytest.raises(NotADirectoryError, match="is a file"):
        model_type(empty / "notes.txt")

    other = tmp_path / "hf-bert"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(CheckpointError, match="type 'bert'.*a task model"):
        load_model(other)

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "task_config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="task_config.json"):
        load_model(broken)
    assert issubclass(CheckpointError, ValueError)


def test_load_task_model_says_what_a_directory_holds_instead(directories):
    from mathgraph.tasks.inference import load_task_model

    with pytest.raises(CheckpointError, match="not a trained task model: it holds an encoder"):
        load_task_model("kpc", str(directories["encoder"]))
    with pytest.raises(ValueError, match="trained for kpc, not qrc"):
        load_task_model("qrc", str(directories["task"]))
    assert load_task_model("sqr", str(directories["multitask"])).config.task == "sqr"
