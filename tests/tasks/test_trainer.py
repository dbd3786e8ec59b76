"""fit() on a toy regression: loss falls, checkpoints, resume, NaN stop, two processes, threads."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch import nn

from mathgraph.tasks.training.bucketing import LengthBucketSampler
from mathgraph.tasks.training.trainer import (
    BEST_CHECKPOINT,
    LAST_CHECKPOINT,
    NonFiniteLossError,
    TrainingArguments,
    TrainingData,
    build_optimizer,
    configure_threads,
    fit,
    fresh_parameters,
    is_pretrained_parameter,
)


class Regression(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, batch):
        x, y = batch
        return {"loss": nn.functional.mse_loss(self.linear(x).squeeze(-1), y)}


def regression_data(n=64, batch_size=8, seed=0):
    """``n`` noise-free examples of y = x . (1, -2, 0.5) + 0.3 in length-bucketed batches (all of length 1)."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=generator)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    examples = list(zip(x, y))
    return TrainingData(
        examples,
        LengthBucketSampler([1] * n, batch_size, seed=seed),
        lambda items: (torch.stack([a for a, _ in items]), torch.stack([b for _, b in items])),
    )


def arguments(tmp_path, epochs=3, lr=0.3, seed=0, **extra):
    return TrainingArguments(
        output_dir=str(tmp_path),
        epochs=epochs,
        batch_size=8,
        learning_rate=lr,
        head_learning_rate=None,
        warmup_ratio=0.0,
        weight_decay=0.0,
        seed=seed,
        cpu=True,
        **extra,
    )


def train(tmp_path, epochs=3, evaluate=None, data=None, **extra):
    torch.manual_seed(0)
    model = Regression()
    state = fit(
        model,
        data or regression_data(),
        arguments(tmp_path, epochs, **extra),
        evaluate=evaluate,
        metric_name="score",
        save=lambda m, directory: (directory / "saved.txt").write_text(json.dumps(m.linear.weight.tolist())),
    )
    return model, state


def full_loss(model):
    x, y = regression_data().collate(regression_data().examples)
    with torch.no_grad():
        return model((x, y))["loss"].item()


def test_loss_falls_and_checkpoints_are_written(tmp_path, capsys):
    scores, weights = iter([0.1, 0.5, 0.3]), []

    def evaluate(model):
        weights.append(model.linear.weight.detach().clone())  # the weights each epoch ends with
        return {"score": next(scores)}

    torch.manual_seed(0)
    before = full_loss(Regression())
    model, state = train(tmp_path, evaluate=evaluate)
    assert full_loss(model) < before / 10
    assert state.step == 24 and state.epoch == 3 and state.best_metric == 0.5
    assert [r["dev_score"] for r in state.history] == [0.1, 0.5, 0.3]
    assert (tmp_path / LAST_CHECKPOINT / "training_weights.safetensors").exists()
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no partial checkpoint left behind
    assert '"epoch": 3' in capsys.readouterr().out
    # the kept model is the best epoch's (epoch 2), loaded back and written by save(); its checkpoint is then
    # removed (one copy of the kept weights), and the last one holds what resuming needs, no user files
    assert not (tmp_path / BEST_CHECKPOINT).exists()
    assert sorted(p.name for p in (tmp_path / LAST_CHECKPOINT).iterdir()) == [
        "optimizer.pt",
        "trainer_state.json",
        "training_weights.safetensors",
    ]
    assert not torch.equal(weights[1], weights[2])
    assert json.loads((tmp_path / "saved.txt").read_text()) == weights[1].tolist()
    assert torch.equal(model.linear.weight.detach(), weights[1])
    # resuming the finished run trains no step and leaves the best model in place (its checkpoint is gone)
    _, again = train(tmp_path, evaluate=evaluate, resume=True)
    assert again.step == 24 and again.best_metric == 0.5
    assert json.loads((tmp_path / "saved.txt").read_text()) == weights[1].tolist()


def test_the_progress_bar_shows_the_current_loss_at_every_step(tmp_path, monkeypatch):
    import tqdm

    shown = []

    class RecordingBar(tqdm.tqdm):
        def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
            shown.append(float(kwargs["loss"]))
            super().set_postfix(ordered_dict, refresh, **kwargs)

    monkeypatch.setattr(tqdm, "tqdm", RecordingBar)
    train(tmp_path, epochs=2, log_every=1000)
    assert len(shown) == 16  # 2 epochs of 8 batches; logging every 1000 steps does not hold the figure back
    assert shown[-1] < shown[0] / 10  # the loss falls, and the bar follows it


@pytest.mark.parametrize("tqdm_disable, drawn", [("1", False), (None, True)])
def test_the_training_bar_is_drawn_on_a_terminal_unless_tqdm_disable(
    tmp_path, monkeypatch, terminal_stderr, tqdm_disable, drawn
):
    """``mathgraph -q`` sets TQDM_DISABLE, which tqdm reads as the default of ``disable``: the trainer's bar
    (on the main process) must leave it in force, and otherwise be drawn on a terminal."""
    import tqdm

    bars = []

    class RecordingBar(tqdm.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            bars.append((kwargs.get("desc"), bool(self.disable)))

    if tqdm_disable is not None:
        monkeypatch.setenv("TQDM_DISABLE", tqdm_disable)
    monkeypatch.setattr(tqdm, "tqdm", RecordingBar)
    train(tmp_path, epochs=1)
    assert bars == [("training", not drawn)]
    assert ("training:" in terminal_stderr.readouterr().err) == drawn


def test_seeded_runs_are_reproducible(tmp_path):
    first, _ = train(tmp_path / "a")
    second, _ = train(tmp_path / "b")
    assert torch.equal(first.linear.weight, second.linear.weight)
    other, _ = train(tmp_path / "c", seed=1, data=regression_data(seed=1))
    assert not torch.equal(first.linear.weight, other.linear.weight)


def crash_in_epoch(epoch):
    seen = []

    def evaluate(model):
        seen.append(1)
        if len(seen) == epoch:
            raise KeyboardInterrupt("the machine went away")
        return {"score": 0.0}

    return evaluate


def test_resume_continues_from_the_last_checkpoint(tmp_path):
    # Shuffled, bucketed batches: the resumed epoch must draw the same batches as the straight run.
    straight, _ = train(tmp_path / "straight", epochs=3)
    with pytest.raises(KeyboardInterrupt):
        train(tmp_path / "resumed", epochs=3, evaluate=crash_in_epoch(2))
    resumed, state = train(tmp_path / "resumed", epochs=3, resume=True)
    assert state.epoch == 3 and state.step == 24
    assert torch.allclose(resumed.linear.weight, straight.linear.weight, atol=1e-6)
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        train(tmp_path / "empty", resume=True)


def test_a_non_finite_loss_stops_with_a_clear_message(tmp_path):
    data = regression_data()
    x, y = data.examples[20]
    data.examples[20] = (x, torch.tensor(float("nan")))  # a bad label
    with pytest.raises(NonFiniteLossError, match=r"the loss became nan at step \d+ .epoch 0."):
        train(tmp_path, epochs=1, data=data)


def test_bad_arguments_are_refused_and_threads_are_set():
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        TrainingArguments(batch_size=0)
    with pytest.raises(ValueError, match="mixed_precision"):
        TrainingArguments(mixed_precision="fp8")
    before = torch.get_num_threads()
    try:
        assert configure_threads(1) == 1 and torch.get_num_threads() == 1
        assert configure_threads(None) == len(os.sched_getaffinity(0))
    finally:
        torch.set_num_threads(before)


SCRIPT = textwrap.dedent("""
    import json, sys, torch
    sys.path.insert(0, {tests!r})
    from accelerate import PartialState
    from test_trainer import Regression, regression_data
    from mathgraph.tasks.training.trainer import TrainingArguments, fit
    torch.manual_seed(0)
    model = Regression()
    fit(model, regression_data(n=64, batch_size=4),
        TrainingArguments(output_dir={out!r}, epochs=1, batch_size=4, learning_rate=0.05, head_learning_rate=None,
                          warmup_ratio=0.0, seed=0,
                          cpu=True, threads=1))
    state = PartialState()
    # one file per process: two processes printing to one pipe can interleave their lines
    with open({out!r} + f"-rank{{state.process_index}}.json", "w") as f:
        json.dump({{"world": state.num_processes, "weight": model.linear.weight.tolist()}}, f)
""")


@pytest.mark.slow
def test_two_cpu_processes_stay_in_sync(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(tests=os.path.dirname(__file__), out=str(tmp_path / "out")))
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_port=29517", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"out-rank{rank}.json").read_text()) for rank in (0, 1)]
    assert [r["world"] for r in ranks] == [2, 2]
    assert ranks[0]["weight"] == ranks[1]["weight"]  # identical weights after data-parallel steps


def test_the_optimizer_holds_only_trained_parameters_with_their_settings():
    model = Regression()
    model.linear.bias.requires_grad_(False)
    optimizer = build_optimizer(model, TrainingArguments(learning_rate=0.25, head_learning_rate=None, weight_decay=0.5))
    (group,) = optimizer.param_groups
    assert [p is model.linear.weight for p in group["params"]] == [True]
    assert group["lr"] == 0.25 and group["weight_decay"] == 0.5 and group["fused"]  # the fused kernel on a CPU


class Router(nn.Linear):
    """An adapter part inside the pre-trained text encoder, declared fresh as models' adapters declare theirs."""

    FRESH_PARAMETERS = ("weight",)


class TextAndHead(nn.Module):
    """The layout of a task model: a pre-trained ``text`` encoder (with a fresh MoE router inside), a head."""

    def __init__(self):
        super().__init__()
        self.text = nn.ModuleDict({"layer": nn.Linear(2, 2), "router": Router(2, 2, bias=False)})
        self.graph, self.head = nn.Linear(2, 2), nn.Linear(2, 1)


def test_pretrained_text_encoder_and_fresh_parts_get_their_own_learning_rates():
    model = TextAndHead()
    optimizer = build_optimizer(model, TrainingArguments(learning_rate=3e-5, head_learning_rate=1e-3))
    groups = {g["name"]: g for g in optimizer.param_groups}
    by_group = {name: {id(p) for p in g["params"]} for name, g in groups.items()}
    assert by_group["pretrained"] == {id(p) for p in model.text["layer"].parameters()}
    fresh = [*model.text["router"].parameters(), *model.graph.parameters(), *model.head.parameters()]
    assert by_group["fresh"] == {id(p) for p in fresh}
    assert groups["pretrained"]["lr"] == 3e-5 and groups["fresh"]["lr"] == 1e-3
    assert is_pretrained_parameter("backbone.text.encoder.layer.0.attention.self.query.weight")
    assert not is_pretrained_parameter("backbone.graph.layers.0.lin.weight")
    # ReasonFormer: copies of the top text layers train as pre-trained weights
    assert is_pretrained_parameter("reasoning.skill_modules.2.pretrained_layers.0.attention.self.query.weight")
    assert not is_pretrained_parameter("reasoning.stop_gates.0.ffn.0.weight")


def test_the_adapters_of_the_models_declare_their_fresh_parameters():
    from mathgraph.models.cgc_lora import CGCLoRALinear, PartlyTrainableEmbedding
    from mathgraph.models.moe import MoEFeedForward
    from mathgraph.models.reasoning import AdaptedOutput

    declared = {cls: set(cls.FRESH_PARAMETERS) for cls in (CGCLoRALinear, PartlyTrainableEmbedding, MoEFeedForward)}
    assert declared == {
        CGCLoRALinear: {"common_A", "common_B", "specific_A", "specific_B"},
        PartlyTrainableEmbedding: {"new"},
        MoEFeedForward: {"router"},
    }
    # a ReasonFormer output block inside a copied layer: its adapters are fresh, the copied dense is not
    output = nn.Module()
    output.dense, output.dropout, output.LayerNorm = nn.Linear(4, 4), nn.Dropout(0.0), nn.LayerNorm(4)
    model = nn.Module()
    model.pretrained_layers = nn.ModuleList([AdaptedOutput(output, depth=2, bottleneck=2)])
    fresh = fresh_parameters(model)
    assert fresh and all(".adapters." in name for name in fresh)
    assert "pretrained_layers.0.dense.weight" not in fresh
    assert not is_pretrained_parameter("pretrained_layers.0.adapters.1.up.weight", fresh)
    assert is_pretrained_parameter("pretrained_layers.0.dense.weight", fresh)


def test_linear_warm_up_then_linear_decay_for_every_group(tmp_path):
    # 4 examples / batch 1 = 4 steps per epoch, 5 epochs = 20 steps, 10% warm-up = 2 steps.
    model = TextAndHead()
    data = TrainingData(
        [torch.zeros(2)] * 4, torch.utils.data.BatchSampler(range(4), 1, False), lambda xs: torch.stack(xs)
    )
    seen = []

    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, x):
            return {"loss": (self.inner.head(self.inner.graph(self.inner.text["layer"](x))) ** 2).sum()}

    probe = Probe()
    args = TrainingArguments(
        output_dir=str(tmp_path),
        epochs=5,
        batch_size=1,
        learning_rate=1e-4,
        head_learning_rate=1e-2,
        warmup_ratio=0.1,
        cpu=True,
    )
    from mathgraph.tasks.training.trainer import Trainer

    loader = torch.utils.data.DataLoader(data.examples, batch_sampler=data.batch_sampler, collate_fn=data.collate)
    trainer = Trainer(probe, loader, args)
    for _ in range(20):
        seen.append([g["lr"] for g in trainer.optimizer.param_groups])
        trainer.optimizer.step()
        trainer.scheduler.step()
    # step s has factor min((s + 1) / 2, (20 - s) / 18): 0.5, 1, then down by 1/18 to 1/18
    factors = [min((s + 1) / 2, (20 - s) / 18) for s in range(20)]
    assert factors[:3] == [0.5, 1.0, 1.0] and abs(factors[-1] - 1 / 18) < 1e-12
    for (encoder_lr, head_lr), factor in zip(seen, factors):
        assert abs(encoder_lr - 1e-4 * factor) < 1e-12 and abs(head_lr - 1e-2 * factor) < 1e-12


def test_mixed_precision_on_the_cpu_is_refused_or_warned(tmp_path):
    from mathgraph.tasks.training.trainer import check_mixed_precision

    with pytest.raises(ValueError, match="fp16 needs a GPU"):
        train(tmp_path / "fp16", epochs=1, mixed_precision="fp16")  # refused before any step
    assert not (tmp_path / "fp16" / LAST_CHECKPOINT).exists()
    # (bf16 is checked on its own: Accelerate's state is one per process, and the other tests train in fp32)
    with pytest.warns(UserWarning, match="bf16 on the CPU"):
        check_mixed_precision("bf16", torch.device("cpu"))
    check_mixed_precision("fp16", torch.device("cuda"))  # a GPU takes both
    check_mixed_precision("no", torch.device("cpu"))


def test_the_fp16_loss_scale_survives_a_resume(tmp_path):
    from mathgraph.tasks.training.trainer import Trainer

    def trainer():
        data = regression_data()
        loader = torch.utils.data.DataLoader(data.examples, batch_sampler=data.batch_sampler, collate_fn=data.collate)
        made = Trainer(Regression(), loader, arguments(tmp_path, epochs=1))
        # fp16 on a GPU gives the Accelerator a GradScaler; on the CPU (fp16 refused) one stands in for it
        made.accelerator.scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
        return made

    first = trainer()
    first.accelerator.scaler.scale(torch.tensor(1.0))
    first.accelerator.scaler.update(new_scale=512.0)  # what overflowing steps leave behind
    first._checkpoint(LAST_CHECKPOINT)
    second = trainer()
    assert second.accelerator.scaler.get_scale() == 2.0**16
    second._resume()
    assert second.accelerator.scaler.get_scale() == 512.0


def test_on_a_gpu_the_loop_reads_the_losses_only_when_it_logs(tmp_path):
    from mathgraph.tasks.training.host_syncs import count_host_syncs
    from mathgraph.tasks.training.trainer import Trainer

    data = regression_data()
    loader = torch.utils.data.DataLoader(data.examples, batch_sampler=data.batch_sampler, collate_fn=data.collate)
    trainer = Trainer(Regression(), loader, arguments(tmp_path, epochs=1, log_every=4))
    trainer.read_losses_every_step = False  # as on a GPU
    with count_host_syncs() as syncs:
        state = trainer.train()
    assert state.step == 8
    # one read each at steps 1, 4 and 8 (the log lines) and one for the epoch's mean loss; besides, only the
    # DataLoader's base seed drawn once per epoch (an .item() of a CPU tensor, not a read from the device)
    assert dict(syncs.calls) == {"tolist": 4, "item": 1}
    logged = [json.loads(line)["step"] for line in (tmp_path / "training_log.jsonl").read_text().splitlines()]
    assert logged == [1, 4, 8]


def test_schedule_steps_stop_a_longer_run_exactly_where_it_was(tmp_path):
    def weights(directory):
        return json.loads((directory / "saved.txt").read_text())

    train(tmp_path / "whole", epochs=2, max_steps=12, save_steps=6)  # the run of 12 steps, its model at step 6
    _, state = train(tmp_path / "first", epochs=2, max_steps=6, schedule_steps=12, log_every=3)  # its first 6
    assert state.step == 6
    assert weights(tmp_path / "first") == weights(tmp_path / "whole" / "step-6")
    # the learning rate decayed as the 12-step run's: after step 6 it is (12 - 6) / 12 of the start (no warm-up)
    last = json.loads((tmp_path / "first" / "training_log.jsonl").read_text().splitlines()[-1])
    assert last["step"] == 6 and last["lr"] == pytest.approx(0.3 * 6 / 12)
    # a run of 6 steps on its own schedule decays faster and ends elsewhere
    train(tmp_path / "short", epochs=2, max_steps=6)
    assert weights(tmp_path / "short") != weights(tmp_path / "first")
    with pytest.raises(ValueError, match="schedule_steps"):
        TrainingArguments(max_steps=6, schedule_steps=4)
    with pytest.raises(ValueError, match="schedule_steps"):
        TrainingArguments(schedule_steps=4)


def test_save_steps_write_the_model_along_the_way(tmp_path):
    model, _ = train(tmp_path, epochs=2, save_steps=6)  # 16 steps
    saved = sorted(p.name for p in tmp_path.glob("step-*"))
    assert saved == ["step-12", "step-6"]
    early = json.loads((tmp_path / "step-6" / "saved.txt").read_text())
    assert early != json.loads((tmp_path / "saved.txt").read_text())  # the model moved on after step 6
    with pytest.raises(ValueError, match="save_steps"):
        TrainingArguments(save_steps=0)
