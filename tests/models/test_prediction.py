"""One prediction path: a saved task model predicts from text without the trainer or Accelerate.

``TaskModel.predict`` and the ``for_task`` view of a ``MultiTaskModel`` run ``models.prediction``: inputs
checked once, parsed through the graph cache, collated without labels, the model under
``torch.inference_mode()``, results decoded. A fresh process that loads a model directory and predicts must
not have imported ``mathgraph.tasks.training`` (the trainer, its collators) nor anything of ``accelerate``
beyond what transformers itself imports: with Accelerate installed, ``transformers.modeling_utils`` (which
every ``BertModel`` needs) imports ``accelerate.hooks`` when it is imported, so the test compares with a
process that imports only ``transformers.BertModel``.
"""

import json
import os
import subprocess
import sys

import pytest
import torch

LABELS = ["Algebra", "Geometry"]
TEXTS = ["Find $x$ if $2x+3=7$.", "What is the area of a circle of radius $2$?"]

PREDICT = """
import json, sys
from mathgraph.models.multitask import MultiTaskModel
from mathgraph.models.task_model import TaskModel

task_model = TaskModel.from_pretrained(sys.argv[1])
results = {
    "kpc": task_model.predict(json.loads(sys.argv[3])),
    "multitask_qrc": MultiTaskModel.from_pretrained(sys.argv[2]).for_task("qrc").predict([json.loads(sys.argv[3])]),
}
loaded = sorted(name for name in sys.modules if name.startswith(("accelerate", "mathgraph.tasks.training")))
print(json.dumps({"results": results, "loaded": loaded}))
"""
TRANSFORMERS_ALONE = """
import json, sys
from transformers import BertModel
print(json.dumps(sorted(name for name in sys.modules if name.startswith("accelerate"))))
"""


def _run(*args: str) -> str:
    """The last line a fresh Python process prints (the test session's graph cache: MATHGRAPH_CACHE_DIR)."""
    result = subprocess.run(
        [sys.executable, "-c", *args], capture_output=True, text=True, timeout=600, env={**os.environ}
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture
def model_dirs(tiny_encoder, tmp_path):
    """A tiny KPC task model and a tiny KPC + QRC multi-task model, saved."""
    from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
    from mathgraph.models.task_model import TaskConfig, TaskModel

    torch.manual_seed(0)
    TaskModel(tiny_encoder, TaskConfig("kpc", labels=LABELS)).save_pretrained(tmp_path / "kpc")
    config = MultiTaskConfig([{"task": "kpc", "labels": LABELS}, {"task": "qrc", "labels": ["irrelevant", "same"]}])
    MultiTaskModel(tiny_encoder, config).save_pretrained(tmp_path / "multitask")
    return tmp_path / "kpc", tmp_path / "multitask"


def test_predicting_imports_neither_the_trainer_nor_accelerate(model_dirs):
    kpc_dir, multitask_dir = model_dirs
    out = json.loads(_run(PREDICT, str(kpc_dir), str(multitask_dir), json.dumps(TEXTS)))
    assert not [name for name in out["loaded"] if name.startswith("mathgraph.tasks.training")]
    assert set(out["loaded"]) <= set(json.loads(_run(TRANSFORMERS_ALONE)))
    kpc = out["results"]["kpc"]
    assert [r["label"] in LABELS for r in kpc] == [True, True]
    assert all(sum(r["probabilities"].values()) == pytest.approx(1.0) for r in kpc)
    [qrc] = out["results"]["multitask_qrc"]
    assert qrc["label"] in ("irrelevant", "same")


def test_prediction_runs_under_inference_mode_and_collates_without_labels(tiny_encoder, monkeypatch):
    from mathgraph.models.task_batches import TaskCollator
    from mathgraph.models.task_model import TaskConfig, TaskModel

    model = TaskModel(tiny_encoder, TaskConfig("kpc", labels=LABELS)).eval()
    seen = []
    forward = TaskModel.forward

    def spy(self, batch):
        seen.append((torch.is_inference_mode_enabled(), batch.labels.tolist()))
        return forward(self, batch)

    collate = TaskCollator.__call__
    label_ids = []

    def collate_spy(self, examples, with_labels=True):
        label_ids.append(with_labels)
        return collate(self, examples, with_labels)

    monkeypatch.setattr(TaskModel, "forward", spy)
    monkeypatch.setattr(TaskCollator, "__call__", collate_spy)
    results = model.predict(TEXTS, batch_size=1)
    assert [r["label"] in LABELS for r in results] == [True, True]
    assert seen == [(True, [0]), (True, [0])]  # inference mode; zeros stand where gold labels go
    assert label_ids == [False, False]
