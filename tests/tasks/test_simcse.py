"""SimCSE training of a mathgraph encoder: dropout views, in-batch negatives, the loss goes down."""

import pytest
import torch

from mathgraph.models.encoder import MathEncoder
from mathgraph.models.heads import info_nce
from mathgraph.samples import sample_problems
from mathgraph.tasks.training.simcse import SimCSEModel, train_simcse
from mathgraph.tasks.training.trainer import TrainingArguments

TEXTS = [r["problem"] for r in sample_problems()]


def test_two_views_differ_only_through_dropout(tiny_encoder):
    batch = tiny_encoder.collator(tiny_encoder.parse(TEXTS[:4]))
    model = SimCSEModel(tiny_encoder.model, mode="text")
    model.train()
    torch.manual_seed(0)
    first, second = model.vectors(batch), model.vectors(batch)
    assert not torch.allclose(first, second)
    torch.manual_seed(0)
    loss = model(batch)["loss"]
    torch.manual_seed(0)
    assert loss.item() == pytest.approx(info_nce(model.vectors(batch), model.vectors(batch), 0.05).item())
    model.eval()
    assert torch.allclose(model.vectors(batch), model.vectors(batch))


def test_simcse_lowers_the_loss_and_saves_an_encoder(tiny_encoder, tmp_path):
    start = tmp_path / "start"
    tiny_encoder.save_pretrained(start)
    args = TrainingArguments(
        output_dir=str(tmp_path / "simcse"), max_steps=12, batch_size=len(TEXTS), learning_rate=1e-3
    )
    result = train_simcse(TEXTS, args, model=str(start))
    losses = [record["loss"] for record in result["history"]]
    assert result["steps"] == 12 and len(losses) == 12
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3
    trained = MathEncoder.from_pretrained(tmp_path / "simcse")
    assert trained.encode(TEXTS[:2], mode="text").shape == (2, 32)


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="at least 2 distinct non-empty texts"):
        train_simcse(["only one", "  ", "only one"], TrainingArguments(output_dir=str(tmp_path / "x")))
    with pytest.raises(ValueError, match="batch_size must be >= 2"):
        train_simcse(TEXTS, TrainingArguments(output_dir=str(tmp_path / "x"), batch_size=1))
    with pytest.raises(ValueError, match="mode must be one of"):
        SimCSEModel(torch.nn.Linear(2, 2), mode="pooled")
