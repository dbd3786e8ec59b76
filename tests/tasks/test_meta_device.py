"""Every trainer's batch moves to the device as a whole, and every model's training forward runs there.

No GPU is needed: the ``meta`` device stands in for one. A batch type that leaves a tensor on
the CPU, or a forward that makes a tensor on the CPU (or reads a value back to the host without
saying so), fails here as it would fail on the first CUDA step. Also: a bf16 forward under CPU
autocast gives a finite loss for every architecture.
"""

import copy
import dataclasses

import pytest
import torch
from accelerate.utils import send_to_device

from mathgraph.models.batching import DeviceBatch
from mathgraph.models.examples import KpcExample, QamPair, QrcPair, SqrList
from mathgraph.models.multitask import MultiTaskBatch, MultiTaskConfig, MultiTaskModel
from mathgraph.models.prediction import feature_store
from mathgraph.models.task_batches import TaskCollator
from mathgraph.models.task_model import TaskConfig, TaskModel
from mathgraph.tasks.training.host_syncs import count_host_syncs
from mathgraph.tasks.training.pretrain import ComusPretrainer, PretrainingCollator, PretrainingWeights
from mathgraph.tasks.training.reasoning_pretraining import SkillCollator, SkillPretrainer, skill_sources
from mathgraph.tasks.training.simcse import SimCSEModel

A, B = "Tom has 3 apples and buys 5 more. How many apples does he have?", "Find $x$ if $2x+3=7$."
C, D = "Tom has 4 apples and buys 5 more. How many apples does he have?", "A shop sells 3 pens for $2."
EXAMPLES = {
    "kpc": [KpcExample(A, "arithmetic"), KpcExample(B, "algebra")],
    "qrc": [QrcPair("1", "g", A, C, "changed"), QrcPair("2", "g", A, B, "irrelevant")],
    "qam": [QamPair("1", "g", A, "3 + 5 = 8. #### 8", 1), QamPair("2", "g", C, "4 * 5 = 20. #### 20", 0)],
    "sqr": [SqrList("1", "g", A, (C, B, D), (2, 0, 1)), SqrList("2", "g", B, (A, D), (0, 1))],
}
LABELS = {"kpc": ["algebra", "arithmetic"], "qrc": ["changed", "irrelevant"], "qam": ["0", "1"], "sqr": []}


def tensors(value, skip_host=True) -> list[torch.Tensor]:
    """Every tensor inside a (nested) dataclass batch, but its host-side fields."""
    if isinstance(value, torch.Tensor):
        return [value]
    if dataclasses.is_dataclass(value):
        host = value.HOST_FIELDS if skip_host and isinstance(value, DeviceBatch) else ()
        return [
            t
            for f in dataclasses.fields(value)
            if f.name not in host
            for t in tensors(getattr(value, f.name), skip_host)
        ]
    return []


def on_meta(model: torch.nn.Module, batch):
    """``batch`` sent to ``meta`` as Accelerate sends it (every tensor checked), and ``model`` moved there."""
    moved = send_to_device(batch, "meta", non_blocking=True)
    assert tensors(moved) and all(t.device.type == "meta" for t in tensors(moved))
    assert len(tensors(moved, skip_host=False)) == len(tensors(batch, skip_host=False))  # nothing dropped
    return model.to("meta").train(), moved


def task_batch(model, task, alignment=False):
    config = TaskConfig(task, labels=LABELS[task], alignment=alignment)
    texts = [t for e in EXAMPLES[task] for t in config.task_type.example_texts(e)]
    collate = TaskCollator(config.task_type, feature_store(model, texts), LABELS[task])
    return collate(EXAMPLES[task])


def assert_meta_loss(outputs):
    assert outputs["loss"].device.type == "meta" and outputs["loss"].dim() == 0


@pytest.mark.parametrize("task", ["kpc", "qrc", "qam", "sqr"])
@pytest.mark.parametrize("architecture", ["comus", "bert"])
def test_task_batches_and_forward_on_meta(tiny_encoder, task, architecture):
    alignment = task != "kpc" and architecture == "comus"
    model = TaskModel(
        tiny_encoder, TaskConfig(task, architecture=architecture, labels=LABELS[task], alignment=alignment)
    )
    batch = task_batch(model, task, alignment)
    assert (batch.alignment is not None) == alignment
    model, moved = on_meta(model, batch)
    assert_meta_loss(model(moved))


@pytest.mark.parametrize("adapter", ["none", "moe", "cgc-lora", "reasonformer"])
def test_multitask_batches_and_forward_on_meta(tiny_encoder, adapter):
    options = {"moe_layers": "all", "moe_experts": 2} if adapter == "moe" else {}
    config = MultiTaskConfig(
        [{"task": t, "labels": LABELS[t]} for t in ("kpc", "qrc", "sqr")], adapter=adapter, **options
    )
    model = MultiTaskModel(tiny_encoder, config)
    batches = [MultiTaskBatch(i, task_batch(model.for_task(t), t)) for i, t in enumerate(("kpc", "qrc", "sqr"))]
    model = model.to("meta").train()
    for batch in batches:
        _, moved = on_meta(model, batch)
        assert moved.task_id == batch.task_id
        assert_meta_loss(model(moved))


def test_skill_batches_and_forward_on_meta(tiny_encoder):
    config = MultiTaskConfig([{"task": "kpc", "labels": LABELS["kpc"]}], adapter="reasonformer")
    model = MultiTaskModel(tiny_encoder, config)
    texts = [A, B, C, D]
    sources = skill_sources(model)
    collate = SkillCollator(sources, model, feature_store(model.for_task("kpc"), texts), seed=0)
    batches = [collate([(i, text) for text in texts]) for i, (_, source) in enumerate(sources) if source != "kpc"] + [
        collate([(sources.index(s), e) for e in EXAMPLES["kpc"]]) for s in sources if s[1] == "kpc"
    ]
    pretrainer = SkillPretrainer(model, objectives=["mlm", "dtc", "tgcl"])
    pretrainer = pretrainer.to("meta").train()
    for batch in batches:
        _, moved = on_meta(pretrainer, batch)
        assert (moved.skill, moved.source) == (batch.skill, batch.source)
        assert_meta_loss(pretrainer(moved))


def test_pretraining_and_simcse_batches_and_forward_on_meta(tiny_encoder):
    problems = tiny_encoder.parse([A, B, C, D])
    pretraining = PretrainingCollator(tiny_encoder.collator)(problems)
    model, moved = on_meta(ComusPretrainer(tiny_encoder.model, PretrainingWeights()), pretraining)
    assert_meta_loss(model(moved))
    simcse = tiny_encoder.collator(problems)
    model, moved = on_meta(SimCSEModel(tiny_encoder.model), simcse)
    assert_meta_loss(model(moved))


def test_frozen_prefix_batches_keep_their_ids_on_the_host_and_run_on_meta(tiny_encoder):
    model = TaskModel(tiny_encoder, TaskConfig("kpc", labels=LABELS["kpc"]))
    model.freeze_text_layers(1)
    batch = task_batch(model, "kpc")
    model.eval()(batch)  # the first pass fills the cache (on the host)
    model, moved = on_meta(model, batch)
    assert moved.problems.problem_ids.device.type == "cpu"
    assert_meta_loss(model(moved))  # the cached states go to the device in one copy


def test_training_steps_make_no_host_sync_but_routing_sizes(tiny_encoder):
    for adapter, most in (("none", 0), ("moe", 3), ("reasonformer", 3)):  # one per MoE layer, per reasoning step
        options = {"moe_layers": "all", "moe_experts": 2} if adapter == "moe" else {}
        model = MultiTaskModel(
            copy.deepcopy(tiny_encoder),
            MultiTaskConfig(  # adapters change the encoder
                [{"task": "qrc", "labels": LABELS["qrc"]}], adapter=adapter, **options
            ),
        ).train()
        batch = MultiTaskBatch(0, task_batch(model.for_task("qrc"), "qrc"))
        with count_host_syncs() as syncs:
            model(batch)["loss"].backward()
        assert syncs.total <= most and set(syncs.calls) <= {"tolist"}, (adapter, syncs.calls)


@pytest.mark.parametrize(
    "architecture,adapter",
    [("comus", "none"), ("bert", "none"), ("bert+gat", "none"), ("comus", "moe"), ("comus", "reasonformer")],
)
def test_bf16_autocast_on_the_cpu_gives_finite_losses(tiny_encoder, architecture, adapter):
    options = {"moe_layers": "all", "moe_experts": 2} if adapter == "moe" else {}
    model = MultiTaskModel(
        tiny_encoder,
        MultiTaskConfig(
            [{"task": t, "labels": LABELS[t], "architecture": architecture} for t in ("kpc", "sqr")],
            adapter=adapter,
            architecture=architecture,
            **options,
        ),
    ).train()
    for task_id, task in enumerate(("kpc", "sqr")):
        batch = MultiTaskBatch(task_id, task_batch(model.for_task(task), task))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(batch)["loss"]
        loss.backward()
        assert torch.isfinite(loss) and loss.item() > 0
