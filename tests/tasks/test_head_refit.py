"""Named alignment features in a task's config, and refitting one pair head on the frozen model's vectors
(``tasks.training.head_refit``): a tiny multi-task model whose QAM head reads the legacy solution features."""

import copy
import json
from dataclasses import asdict

import pytest
import torch

from mathgraph.models.alignment_features import available_features, feature_names
from mathgraph.models.heads import ALIGNMENT_HIDDEN
from mathgraph.models.multitask import MULTITASK_CONFIG_NAME, MultiTaskConfig, MultiTaskModel
from mathgraph.models.prediction import feature_store
from mathgraph.models.task_batches import TaskCollator
from mathgraph.models.task_model import TaskConfig, TaskModel, current_keys
from mathgraph.parsers.solution import SOLUTION_GRAPH_FEATURES
from mathgraph.registry import SHIPPED_DIR, read_config
from mathgraph.tasks.data import build_qam_number_swap
from mathgraph.tasks.evaluation import labelled_inputs
from mathgraph.tasks.task_types import load_examples
from mathgraph.tasks.training.head_refit import refit_head, warm_start

QAM = {"task": "qam", "labels": ["0", "1"], "alignment": True}  # as saved before alignment_features existed


@pytest.fixture
def qam_file(tmp_path, gsmplus, write):
    """QAM number-swap pairs of the bundled GSM-Plus sample (48 pairs)."""
    return write(tmp_path / "qam.jsonl", build_qam_number_swap(gsmplus))


def build_legacy_model(encoder, pair_mode="cross"):
    """A tiny multi-task model (KPC, QAM) whose config names no alignment features: its QAM head reads the
    legacy set; built on a copy of ``encoder``, which stays the base its delta is taken against."""
    config = MultiTaskConfig([{"task": "kpc", "labels": ["a", "b"]}, {**QAM, "pair_mode": pair_mode}])
    torch.manual_seed(0)
    return MultiTaskModel(copy.deepcopy(encoder), config).eval()


@pytest.fixture
def legacy_model(tiny_encoder):
    return build_legacy_model(tiny_encoder)


def accuracy(view, inputs, gold):
    """The accuracy of a task view's own predictions (``predict``: collation, forward, decoding)."""
    return sum(p["label"] == g for p, g in zip(view.predict(inputs), gold)) / len(gold)


def test_new_configs_read_every_feature_and_saved_ones_the_set_they_were_trained_on(tmp_path):
    assert TaskConfig("qam", alignment=True).alignment_features == list(available_features("solution"))
    assert TaskConfig("qrc", alignment=True).alignment_features == list(available_features("problem"))
    assert TaskConfig("qam").alignment_features is None
    legacy = list(feature_names("solution"))
    assert set(available_features("solution")) > set(legacy)  # the solution graph's features too
    assert TaskConfig.from_dict(QAM).alignment_features == legacy
    assert MultiTaskConfig([dict(QAM)]).task_configs[0].task_type.alignment_dim == len(legacy)
    # a single-task model's task_config.json of before, and the shipped model's multi-task config
    directory = tmp_path / "qam-model"
    directory.mkdir()
    (directory / "task_config.json").write_text(json.dumps({**QAM, "pair_mode": "cross"}))
    assert TaskConfig.from_pretrained(directory).alignment_features == legacy
    shipped = read_config(SHIPPED_DIR / "multitask", MULTITASK_CONFIG_NAME)
    shipped.pop("model_type")
    tasks = {t.task: t for t in MultiTaskConfig(**current_keys(shipped)).task_configs}
    # its head was refitted on the solution graph's features (before the step findings were features)
    assert tasks["qam"].alignment_features == list(feature_names("solution") + SOLUTION_GRAPH_FEATURES)
    assert tasks["qrc"].alignment_features == list(feature_names("problem")) and tasks["kpc"].alignment_features is None
    for task in shipped["tasks"]:  # as the shipped config was saved before the field
        task.pop("alignment_features", None)
    tasks = {t.task: t for t in MultiTaskConfig(**current_keys(shipped)).task_configs}
    assert tasks["qam"].alignment_features == legacy and tasks["qrc"].alignment_features == list(
        feature_names("problem")
    )
    # a config written now keeps its names
    named = TaskConfig("qam", alignment=True, alignment_features=["answer_follows", legacy[0]])
    assert TaskConfig.from_dict(json.loads(json.dumps(asdict(named)))) == named
    assert named.task_type.alignment_dim == 2


def test_a_feature_that_is_not_computed_is_refused():
    with pytest.raises(ValueError, match="unknown solution alignment features \\['no_such_feature'\\]"):
        TaskConfig("qam", alignment=True, alignment_features=["answer_follows", "no_such_feature"])
    with pytest.raises(ValueError, match="unknown problem alignment features"):
        MultiTaskConfig([{"task": "qrc", "labels": ["a", "b"], "alignment": True, "alignment_features": ["x"]}])
    with pytest.raises(ValueError, match="each once"):
        TaskConfig("qam", alignment=True, alignment_features=["answer_follows", "answer_follows"])
    with pytest.raises(ValueError, match="with alignment on"):
        TaskConfig("qam", alignment_features=["answer_follows"])


def test_the_warm_started_head_gives_the_old_logits(legacy_model):
    config = legacy_model.config.task_configs[1]
    old_names, names = config.alignment_features, list(available_features("solution"))
    new_type = config.task_type.with_alignment(True, names)
    head = new_type.make_head(legacy_model.heads[1].classifier.in_features - ALIGNMENT_HIDDEN, 2)
    warm_start(head, legacy_model.heads[1], old_names, names)
    torch.manual_seed(1)
    vectors = torch.randn(5, head.classifier.in_features - ALIGNMENT_HIDDEN)
    features = torch.rand(5, len(names)) * 20  # counts and shares, on the scale the projection reads
    old_features = features[:, [names.index(n) for n in old_names]]
    head.eval()
    # the same sums but for the zero terms, which may change only the order a matrix product adds in
    torch.testing.assert_close(head(vectors, features), legacy_model.heads[1](vectors, old_features), rtol=0, atol=1e-6)
    weight = head.alignment.linear.weight
    assert weight.shape[1] == len(names) and not weight[:, len(old_names) :].any()  # new features read nothing


def _train_loss(model, path):
    """The QAM head's mean cross-entropy on a task file, through the model's own collation and forward."""
    view = model.for_task("qam")
    examples = load_examples(view.config, path)
    task = view.config.task_type
    collate = TaskCollator(task, feature_store(view, [t for e in examples for t in task.example_texts(e)]), ["0", "1"])
    with torch.no_grad():
        return view(collate(examples))["loss"].item()


def test_refit_trains_the_head_on_the_new_features_and_the_model_saves_and_reloads(
    legacy_model, tiny_encoder, qam_file, tmp_path
):
    inputs, gold = labelled_inputs("qam", qam_file)
    before = _train_loss(legacy_model, qam_file)
    accuracy_before = accuracy(legacy_model.for_task("qam"), inputs, gold)
    backbone = {k: v.clone() for k, v in legacy_model.backbone.state_dict().items()}
    lines = []
    record = refit_head(
        legacy_model, "qam", inputs, gold, inputs, gold, epochs=8, lr=1e-2, batch_size=16, say=lines.append
    )
    assert record["features"] == list(available_features("solution"))
    assert record["previous_features"] == list(feature_names("solution"))
    assert record["n_train"] == 48 and len(record["dev_accuracy_by_epoch"]) == 8
    best = max(record["dev_accuracy_by_epoch"])
    assert record["dev_accuracy_by_epoch"][record["chosen_epoch"] - 1] == best
    assert record["dev_accuracy_by_epoch"].index(best) == record["chosen_epoch"] - 1  # the earliest of the best
    assert lines[-1].startswith("qam head refit: dev accuracy")
    # the cached vectors are those the model predicts from, and the warm start is the old head
    assert record["dev_accuracy_before"] == round(accuracy_before, 4)
    assert round(accuracy(legacy_model.for_task("qam"), inputs, gold), 4) == best
    # the head reads the new features and fits its train part better; the encoder did not move
    view = legacy_model.for_task("qam")
    assert view.config.alignment_features == record["features"]
    assert legacy_model.heads[1].alignment.linear.weight.shape[1] == len(record["features"])
    assert legacy_model.heads[1].alignment.linear.weight[:, len(record["previous_features"]) :].any()
    assert _train_loss(legacy_model, qam_file) < before
    assert all(torch.equal(v, backbone[k]) for k, v in legacy_model.backbone.state_dict().items())
    predicted = view.predict(inputs)
    # saved whole, or as the package stores it (the delta against its encoder), it reloads with the new head
    legacy_model.save_pretrained(tmp_path / "whole")
    legacy_model.save_delta(tmp_path / "delta", tiny_encoder)
    for reloaded in (
        MultiTaskModel.from_pretrained(tmp_path / "whole"),
        MultiTaskModel.from_pretrained(tmp_path / "delta", base=copy.deepcopy(tiny_encoder)),
    ):
        assert reloaded.config.task_configs[1].alignment_features == record["features"]
        again = reloaded.for_task("qam").predict(inputs)
        assert [p["label"] for p in again] == [p["label"] for p in predicted]
        for new, old in zip(again, predicted):  # the delta stores fp16
            assert new["probabilities"] == pytest.approx(old["probabilities"], abs=2e-3)


def test_a_bi_encoded_head_is_refitted_on_its_two_vectors_per_pair(tiny_encoder, qam_file):
    model = build_legacy_model(tiny_encoder, pair_mode="bi")
    inputs, gold = labelled_inputs("qam", qam_file)
    accuracy_before = accuracy(model.for_task("qam"), inputs, gold)
    features = ["answer_follows", *feature_names("solution")[::-1]]  # a new one first, the old ones reordered
    record = refit_head(model, "qam", inputs, gold, inputs, gold, features, epochs=3, lr=1e-2, say=lambda _: None)
    assert record["dev_accuracy_before"] == round(accuracy_before, 4)
    chosen = record["dev_accuracy_by_epoch"][record["chosen_epoch"] - 1]
    assert round(accuracy(model.for_task("qam"), inputs, gold), 4) == chosen
    assert model.config.task_configs[1].alignment_features == features


def test_only_pair_heads_that_read_alignment_features_are_refitted(legacy_model, qam_file):
    inputs, gold = labelled_inputs("qam", qam_file)
    with pytest.raises(ValueError, match="reads alignment features; kpc's does not"):
        refit_head(legacy_model, "kpc", ["a problem"], ["a"], ["a problem"], ["a"])
    with pytest.raises(ValueError, match="no sqr head"):
        refit_head(legacy_model, "sqr", inputs, gold, inputs, gold)
    with pytest.raises(ValueError, match="unknown solution alignment features"):
        refit_head(legacy_model, "qam", inputs, gold, inputs, gold, features=["no_such_feature"])


def test_a_single_task_model_saves_its_feature_names(tiny_encoder, tmp_path):
    config = TaskConfig("qam", labels=["0", "1"], alignment=True, alignment_features=["answer_follows"])
    TaskModel(tiny_encoder, config).save_pretrained(tmp_path / "qam")
    loaded = TaskModel.from_pretrained(tmp_path / "qam")
    assert loaded.config.alignment_features == ["answer_follows"]
    assert loaded.head.alignment.linear.weight.shape[1] == 1
