"""The shipped-model package: written from a (tiny) encoder and multi-task model, loaded back, checksummed."""

import json
from dataclasses import asdict

import pytest
import torch
from safetensors import safe_open

from mathgraph.models.comus import CheckpointError
from mathgraph.models.delta import DELTA_NAME
from mathgraph.models.encoder import load_shipped_encoder
from mathgraph.models.late_fusion import HybridPredictor
from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
from mathgraph.models.shipped import release_info, shipped_path
from mathgraph.models.task_model import TaskConfig
from mathgraph.tasks.release.package import finish_package, write_package
from mathgraph.tasks.release.shipped import load_shipped_multitask, shipped_predictor
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
    loaded = load_shipped_encoder(root)
    texts = [p for p, _ in PROBLEMS]
    assert loaded.encode(texts) == pytest.approx(encoder.encode(texts), abs=2e-2)  # fp16 storage
    multitask = load_shipped_multitask(root)
    probabilities = [r["probabilities"]["Algebra"] for r in multitask.for_task("kpc").predict(texts)]
    expected = [r["probabilities"]["Algebra"] for r in model.for_task("kpc").predict(texts)]
    assert probabilities == pytest.approx(expected, abs=1e-2)
    assert release_info(root)["tasks"]["kpc"]["hybrid"]["weight"] == 0.3
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
        shipped_path("tfidf", root=root)
    extra.unlink()
    weights = root / "encoder" / DELTA_NAME
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="encoder/weights.delta.safetensors does not match its checksum"):
        load_shipped_encoder(root)
    with pytest.raises(CheckpointError, match="does not match its checksum"):
        shipped_predictor("kpc", root=root)  # the multi-task model stands on the encoder
    weights.unlink()
    with pytest.raises(CheckpointError, match="is missing"):
        load_shipped_encoder(root)


def test_an_install_without_the_package_says_so(tmp_path):
    with pytest.raises(CheckpointError, match="no shipped model"):
        load_shipped_encoder(tmp_path)


def test_the_shipped_predictor_is_hybrid_where_the_release_says_so(package):
    root = package[0]
    assert isinstance(shipped_predictor("kpc", root=root), HybridPredictor)  # release.json: default on
    plain = shipped_predictor("kpc", hybrid=False, root=root)
    assert not isinstance(plain, HybridPredictor)
    [result] = shipped_predictor("kpc", root=root).predict(["Find $y$ if $y+1=2$."])
    assert set(result["probabilities"]) == {"Algebra", "Geometry"}
    assert sum(result["probabilities"].values()) == pytest.approx(1.0)


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
