"""The training loop on a toy regression: loss falls, checkpoints, resume, NaN stop, two processes."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch import nn

from tasks.trainer import BEST_CHECKPOINT, LAST_CHECKPOINT, NonFiniteLossError, Trainer, TrainingConfig


class Regression(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, batch):
        x, y = batch
        return {"loss": nn.functional.mse_loss(self.linear(x).squeeze(-1), y)}


def loader(seed=0, n=64, batch_size=8):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=generator)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size)


def make_trainer(tmp_path, epochs=3, lr=0.3, seed=0, evaluate=None):
    torch.manual_seed(seed)
    config = TrainingConfig(epochs=epochs, learning_rate=lr, warmup_ratio=0.0, weight_decay=0.0, seed=seed, cpu=True)
    return Trainer(Regression(), loader(), tmp_path, config, evaluate=evaluate, metric_name="score")


def full_loss(model):
    x, y = loader(n=64, batch_size=64).dataset.tensors
    with torch.no_grad():
        return model((x, y))["loss"].item()


def test_loss_falls_and_checkpoints_are_written(tmp_path, capsys):
    scores = iter([0.1, 0.5, 0.3])
    trainer = make_trainer(tmp_path, evaluate=lambda model: {"score": next(scores)})
    before = full_loss(trainer.accelerator.unwrap_model(trainer.model))
    state = trainer.train()
    after = full_loss(trainer.accelerator.unwrap_model(trainer.model))
    assert after < before / 10
    assert state.step == 24 and state.epoch == 3 and state.best_metric == 0.5
    assert [r["dev_score"] for r in state.history] == [0.1, 0.5, 0.3]
    best = json.loads((tmp_path / BEST_CHECKPOINT / "trainer_state.json").read_text())
    assert best["state"]["epoch"] == 2  # the best epoch, not the last
    assert (tmp_path / LAST_CHECKPOINT / "training_weights.safetensors").exists()
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no partial checkpoint left behind
    assert '"epoch": 3' in capsys.readouterr().out


def test_seeded_runs_are_reproducible(tmp_path):
    first = make_trainer(tmp_path / "a")
    first.train()
    second = make_trainer(tmp_path / "b")
    second.train()
    assert torch.equal(first.accelerator.unwrap_model(first.model).linear.weight,
                       second.accelerator.unwrap_model(second.model).linear.weight)


def crash_in_epoch(epoch):
    def evaluate(model, seen=[]):
        seen.append(1)
        if len(seen) == epoch:
            raise KeyboardInterrupt("the machine went away")
        return {"score": 0.0}
    return evaluate


def test_resume_continues_from_the_last_checkpoint(tmp_path):
    straight = make_trainer(tmp_path / "straight", epochs=2)
    straight.train()
    interrupted = make_trainer(tmp_path / "resumed", epochs=2, evaluate=crash_in_epoch(2))
    with pytest.raises(KeyboardInterrupt):
        interrupted.train()
    resumed = make_trainer(tmp_path / "resumed", epochs=2)
    state = resumed.train(resume=True)
    assert state.epoch == 2 and state.step == 16
    assert torch.allclose(resumed.accelerator.unwrap_model(resumed.model).linear.weight,
                          straight.accelerator.unwrap_model(straight.model).linear.weight, atol=1e-6)
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        make_trainer(tmp_path / "empty").train(resume=True)


def test_a_non_finite_loss_stops_with_a_clear_message(tmp_path):
    data = loader()
    data.dataset.tensors[1][20] = float("nan")  # a bad label in the third batch
    trainer = Trainer(Regression(), data, tmp_path, TrainingConfig(epochs=1, cpu=True))
    with pytest.raises(NonFiniteLossError, match="the loss became nan at step 2 .epoch 0."):
        trainer.train()


SCRIPT = textwrap.dedent('''
    import json, sys, torch
    sys.path.insert(0, {tests!r})
    from test_trainer import Regression, loader
    from tasks.trainer import Trainer, TrainingConfig
    torch.manual_seed(0)
    trainer = Trainer(Regression(), loader(n=64, batch_size=4), {out!r},
                      TrainingConfig(epochs=1, learning_rate=0.05, warmup_ratio=0.0, seed=0, cpu=True))
    trainer.train()
    weight = trainer.accelerator.unwrap_model(trainer.model).linear.weight.tolist()
    print("RESULT", trainer.accelerator.process_index, trainer.accelerator.num_processes, json.dumps(weight))
''')


@pytest.mark.slow
def test_two_cpu_processes_stay_in_sync(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(tests=os.path.dirname(__file__), out=str(tmp_path / "out")))
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_port=29517", str(script)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.split(" ", 3) for line in result.stdout.splitlines() if line.startswith("RESULT")]
    assert sorted(int(rank) for _, rank, _, _ in lines) == [0, 1]
    assert {world for _, _, world, _ in lines} == {"2"}
    assert lines[0][3] == lines[1][3]  # identical weights after data-parallel steps
