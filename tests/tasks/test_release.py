"""The shipped-model package: written from a (tiny) encoder and multi-task model, loaded back, checksummed."""

import json
from dataclasses import asdict

import pytest
import torch
from safetensors import safe_open

from mathgraph.models.comus import CheckpointError
from mathgraph.models.delta import DELTA_NAME
from mathgraph.models.encoder import MathEncoder
from mathgraph.models.late_fusion import HybridPredictor
from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
from mathgraph.models.package import ModelPackage, package_config
from mathgraph.models.task_model import TaskConfig
from mathgraph.registry import model_type, read_config
from mathgraph.tasks.release.package import export_package, finish_package, write_package
from mathgraph.tasks.training.tfidf import train_tfidf

PROBLEMS = [
    ("Find $x$ if $2x+3=7$.", "Algebra"),
    ("Solve $\\frac{x}{2}=5$ for $x$.", "Algebra"),
    ("What is the area of a circle of radius $3$?", "Geometry"),
    ("A triangle has angles $30^\\circ$ and $60^\\circ$. Find the third.", "Geometry"),
]


def _figure(value):
    return {"metric": "accuracy", "value": value, "ci95": [0.0, 1.0]}


@pytest.fixture
def package(tiny_encoder, tmp_path):
    """A package of the tiny encoder and a KPC multi-task model, with a TF-IDF baseline; returns its root
    and the models it was written from."""
    labels = sorted({label for _, label in PROBLEMS})
    config = MultiTaskConfig([asdict(TaskConfig("kpc", labels=labels))], freeze_embeddings=True)
    torch.manual_seed(0)
    model = MultiTaskModel(tiny_encoder, config).eval()
    tfidf_dir = tmp_path / "tfidf-kpc"
    train_tfidf("kpc", [{"problem": p, "subject": s} for p, s in PROBLEMS]).save_pretrained(tfidf_dir)
    root = tmp_path / "shipped"
    stored = write_package(root, tiny_encoder, model, {"kpc": tfidf_dir})
    record = {
        "dev": {"n": 4, "neural": _figure(0.5), "tfidf": _figure(0.75), "hybrid": _figure(1.0)},
        "hybrid": {"weight": 0.3, "default": True, "dev_by_weight": {}},
    }
    search = {part: {"n": 2, "shipped encoder": _figure(0.6), "TF-IDF": _figure(0.4)} for part in ("dev", "test")}
    finish_package(
        root,
        {
            "machine": "test",
            "tasks": {"kpc": record},
            "training": {"machine": "test"},
            "search": {**search, "hybrid": {"weight": 0.2, "default": False}},
            "sample": {"kpc": {"n": 4, "neural": 0.5, "shipped": 0.75}},
        },
    )
    return root, tiny_encoder, model, stored


def test_the_package_loads_back_to_the_models_it_was_written_from(package):
    root, encoder, model, _ = package
    loaded = ModelPackage(root, device="cpu")
    texts = [p for p, _ in PROBLEMS]
    assert loaded.encode(texts) == pytest.approx(encoder.encode(texts), abs=2e-2)  # fp16 storage
    multitask = loaded.multitask
    probabilities = [r["probabilities"]["Algebra"] for r in multitask.for_task("kpc").predict(texts)]
    expected = [r["probabilities"]["Algebra"] for r in model.for_task("kpc").predict(texts)]
    assert probabilities == pytest.approx(expected, abs=1e-2)
    assert loaded.release_info()["tasks"]["kpc"]["hybrid"]["weight"] == 0.3
    card = (root / "MODEL_CARD.md").read_text()
    assert "| KPC (MATH subject, 7 classes) | dev | 4 | 0.5000 [0.0000-1.0000] | 0.7500" in card
    assert "| test (n=2) | 0.6000 [0.0000-1.0000] | 0.4000 [0.0000-1.0000] |" in card
    assert "| kpc | 4 | 0.5000 | 0.7500 |" in card


def test_only_what_differs_from_the_base_is_stored(package):
    root, encoder, model, stored = package
    with safe_open(str(root / "encoder" / DELTA_NAME), "pt") as f:
        appended = json.loads(f.metadata()["appended_rows"])
        # the base vocabulary is not stored: only the three LaTeX rows added to it
        assert appended == {"text.embeddings.word_embeddings.weight": encoder.model.text.config.vocab_size - 3}
        assert f.get_slice("text.embeddings.word_embeddings.weight").get_shape()[0] == 3
    with safe_open(str(root / "multitask" / DELTA_NAME), "pt") as f:
        # nothing was trained after the encoder: the multi-task delta is its head alone
        assert sorted(f.keys()) == sorted(k for k in model.state_dict() if k.startswith("heads."))
    assert stored["multitask"] == sum(v.numel() for k, v in model.state_dict().items() if k.startswith("heads."))


def test_a_tampered_missing_or_unlisted_file_is_refused(package):
    root = package[0]
    extra = root / "tfidf" / "kpc" / "extra.json"
    extra.write_text("{}")
    with pytest.raises(CheckpointError, match="tfidf/kpc/extra.json that its checksums.json does not list"):
        ModelPackage(root).path("tfidf")
    extra.unlink()
    weights = root / "encoder" / DELTA_NAME
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="encoder/weights.delta.safetensors does not match its checksum"):
        MathEncoder.from_pretrained(root, device="cpu")
    with pytest.raises(CheckpointError, match="does not match its checksum"):
        ModelPackage(root, device="cpu").predictor("kpc")  # the multi-task model stands on the encoder
    weights.unlink()
    with pytest.raises(CheckpointError, match="is missing"):
        MathEncoder.from_pretrained(root, device="cpu")


def test_an_install_without_the_package_says_so(tmp_path):
    with pytest.raises(CheckpointError, match="no model package"):
        ModelPackage(tmp_path, device="cpu").encode(["x"])


def test_the_package_predictor_uses_late_fusion_where_the_release_says_so(package):
    root = package[0]
    loaded = ModelPackage(root, device="cpu")
    assert isinstance(loaded.predictor("kpc"), HybridPredictor)  # release.json: on unless told
    plain = loaded.predictor("kpc", hybrid=False)
    assert not isinstance(plain, HybridPredictor)
    [result] = loaded.predictor("kpc").predict(["Find $y$ if $y+1=2$."])
    assert set(result["probabilities"]) == {"Algebra", "Geometry"}
    assert sum(result["probabilities"].values()) == pytest.approx(1.0)


def test_the_package_config_is_made_from_the_release_and_checksummed(package):
    root = package[0]
    release = json.loads((root / "release.json").read_text())
    assert model_type(root) == "package"
    assert read_config(root) == package_config(release)
    assert read_config(root)["tasks"]["kpc"]["tfidf"] == {"path": "tfidf/kpc", "weight": 0.3, "on": True}
    assert "config.json" in json.loads((root / "checksums.json").read_text())
    ModelPackage(root).path()  # every file under the root listed and matching its checksum


def test_a_package_fuses_nothing_until_finished(tiny_encoder, tmp_path):
    """write_package's config.json names the TF-IDF models with late fusion off: no weight is chosen yet."""
    labels = sorted({label for _, label in PROBLEMS})
    config = MultiTaskConfig([asdict(TaskConfig("kpc", labels=labels))], freeze_embeddings=True)
    model = MultiTaskModel(tiny_encoder, config).eval()
    tfidf_dir = tmp_path / "tfidf-kpc"
    train_tfidf("kpc", [{"problem": p, "subject": s} for p, s in PROBLEMS]).save_pretrained(tfidf_dir)
    root = tmp_path / "unfinished"
    write_package(root, tiny_encoder, model, {"kpc": tfidf_dir})
    assert read_config(root)["tasks"]["kpc"]["tfidf"] == {"path": "tfidf/kpc", "weight": 0.0, "on": False}
    loaded = ModelPackage(root, device="cpu")
    assert not isinstance(loaded.predictor("kpc"), HybridPredictor)
    assert loaded.tfidf("kpc").predict(["Find $x$."])[0]["label"] in labels


def test_a_package_exports_as_a_self_contained_package(package, tmp_path):
    root = package[0]
    exported = export_package(tmp_path / "export", root)
    assert not list(exported.rglob(DELTA_NAME))  # full weights: nothing to resolve against the text encoder
    assert model_type(exported) == "package"
    assert read_config(exported) == read_config(root)
    texts = [p for p, _ in PROBLEMS]
    before = ModelPackage(root, device="cpu").predictor("kpc").predict(texts)
    after = ModelPackage(exported, device="cpu")
    after.path()  # the new checksums hold
    again = after.predictor("kpc").predict(texts)
    assert [r["label"] for r in again] == [r["label"] for r in before]
    for a, b in zip(again, before):
        assert a["probabilities"] == pytest.approx(b["probabilities"], abs=1e-5)
    with pytest.raises(FileExistsError):
        export_package(exported, root)
    with pytest.raises(CheckpointError, match="not a model package"):
        export_package(tmp_path / "other", root / "tfidf" / "kpc")


def test_mathgraph_export_writes_the_package_it_is_given(package, tmp_path, capsys):
    from mathgraph.cli.main import main

    root = package[0]
    assert main(["export", str(tmp_path / "out"), "--model", str(root)]) == 0
    assert model_type(tmp_path / "out") == "package"
    assert main(["export", str(tmp_path / "none"), "--model", str(tmp_path / "missing")]) == 2
    assert "--model: no such model" in capsys.readouterr().err


def test_the_card_says_what_the_graph_adds_on_kpc_whichever_way_it_falls():
    from mathgraph.tasks.release.model_card import _release_notes

    def note(difference, ci95):
        release = {"tasks": {}, "kpc_study": {"difference": difference, "ci95": ci95, "seeds": 2}}
        (line,) = _release_notes(release)
        return line

    assert "-0.0027 test accuracy, 95% paired bootstrap [-0.0300, +0.0250] over 2" in note(-0.0027, [-0.03, 0.025])
    assert "as good on KPC: the graph adds no measurable accuracy" in note(-0.0027, [-0.03, 0.025])
    assert "the graph helps on KPC" in note(0.04, [0.01, 0.07])
    assert "a text-only encoder pre-trained the same way is better" in note(-0.04, [-0.07, -0.01])
    assert _release_notes({"tasks": {}}) == []  # no study run: no note


def test_the_card_adds_the_gpu_scale_study_where_the_release_records_one():
    from mathgraph.tasks.release.model_card import _release_notes

    gpu = {
        "device": "NVIDIA H200",
        "comus_steps": 1331,
        "dapt_steps": 1610,
        "batch": 128,
        "kpc_lr": 1e-4,
        "seeds": 2,
        "test": {"difference": 0.0, "ci95": [-0.024, 0.0227]},
        "dev": {"difference": -0.0253, "ci95": [-0.0493, -0.0027]},
    }
    study = {"difference": 0.0089, "ci95": [-0.0071, 0.0249], "seeds": 3}
    _, line = _release_notes({"tasks": {}, "kpc_study": {**study, "gpu": gpu}})
    assert line.startswith("- KPC at GPU scale (docs/gpu.md; measured on one NVIDIA H200, models not in this package)")
    assert "COMUS (1,331 pre-training steps of 128) minus DAPT-BERT (1,610 steps of 128)" in line
    assert "lr 0.0001 from 2 seeds each and averaged: test +0.0000 [-0.0240, +0.0227], dev -0.0253" in line
    assert len(_release_notes({"tasks": {}, "kpc_study": study})) == 1  # no GPU study: the CPU note alone


def test_onnx_graphs_added_to_a_package_predict_as_pytorch_and_travel_with_an_export(package, tmp_path):
    from mathgraph.tasks.release.package import add_onnx_graphs

    root = package[0]
    entry = add_onnx_graphs(root)
    assert read_config(root)["onnx"] == entry and set(entry["heads"]) == {"kpc"}
    texts = [p for p, _ in PROBLEMS]
    expected = ModelPackage(root, device="cpu", runtime="torch").predictor("kpc", hybrid=False).predict(texts)
    for directory in (root, export_package(tmp_path / "export", root)):  # deltas, then full weights
        package_onnx = ModelPackage(directory, device="cpu")
        assert package_onnx.runtime == "onnx"
        got = package_onnx.predictor("kpc", hybrid=False).predict(texts)
        for a, b in zip(got, expected, strict=True):
            assert a["label"] == b["label"]
            assert a["probabilities"] == pytest.approx(b["probabilities"], abs=1e-4)
