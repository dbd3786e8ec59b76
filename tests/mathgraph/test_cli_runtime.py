"""``--runtime``: every model command runs the shipped package on ONNX Runtime by default on the CPU, and on
PyTorch when told, with the same results."""

import json

import numpy as np
import pytest

from mathgraph.cli import main
from mathgraph.samples import sample_problems

PROBLEMS = [row["problem"] for row in sample_problems()]

pytestmark = pytest.mark.slow  # the shipped package, on both runtimes


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_predict_is_the_same_on_both_runtimes(capsys):
    outputs = {}
    for runtime in ("onnx", "torch"):
        assert main(["predict", "kpc", PROBLEMS[0], "--format", "json", "--runtime", runtime]) == 0
        outputs[runtime] = json.loads(capsys.readouterr().out)
    assert outputs["onnx"]["label"] == outputs["torch"]["label"]
    for label, p in outputs["torch"]["probabilities"].items():
        assert outputs["onnx"]["probabilities"][label] == pytest.approx(p, abs=1e-4)


def test_a_runtime_the_model_cannot_run_on_is_a_clear_error(capsys):
    assert main(["predict", "kpc", PROBLEMS[0], "--runtime", "onnx", "--device", "cuda"]) == 2
    assert "runs on the CPU" in capsys.readouterr().err
    assert main(["predict", "kpc", PROBLEMS[0], "--runtime", "tensorrt"]) == 2  # argparse's choices
    assert "invalid choice" in capsys.readouterr().err


def test_encode_and_index_on_both_runtimes(tmp_path, capsys):
    bank = tmp_path / "bank.jsonl"
    bank.write_text("".join(json.dumps({"id": f"p{i}", "problem": p}) + "\n" for i, p in enumerate(PROBLEMS[:6])))
    vectors = {}
    for runtime in ("onnx", "torch"):
        out = tmp_path / f"{runtime}.npy"
        assert main(["-q", "encode", "--input", str(bank), "--output", str(out), "--runtime", runtime]) == 0
        vectors[runtime] = np.load(out)
    np.testing.assert_allclose(vectors["onnx"], vectors["torch"], atol=1e-4)
    # an index built with MiniLM on PyTorch is searched with MiniLM on ONNX Runtime: one identity
    index = tmp_path / "index"
    assert main(["-q", "index", "build", "--input", str(bank), "--output", str(index), "--runtime", "torch"]) == 0
    assert main(["search", "--index", str(index), PROBLEMS[2], "-k", "1", "--format", "json"]) == 0
    [hits] = _json_lines(capsys.readouterr().out)
    assert hits[0]["row"]["id"] == "p2" and hits[0]["cosine"] == pytest.approx(1.0, abs=1e-4)
