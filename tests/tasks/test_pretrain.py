"""Pre-training: BERT masking proportions, the three objectives, and a loss that falls."""

import pytest
import torch

from mathgraph.tasks.training.bucketing import LengthBucketSampler
from mathgraph.tasks.training.pretrain import ComusPretrainer, PretrainingCollator, PretrainingWeights, mask_tokens
from mathgraph.tasks.training.trainer import TrainingArguments, TrainingData, fit


def test_masking_follows_80_10_10():
    ids = torch.randint(5, 1000, (200, 100))
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = True
    masked, labels = mask_tokens(ids, special, mask_id=3, vocab_size=1000, generator=torch.Generator().manual_seed(0))
    chosen = labels != -100
    assert 0.14 < chosen.float().mean() < 0.16
    assert not chosen[:, 0].any()  # special tokens are never picked
    assert torch.equal(labels[chosen], ids[chosen])
    as_mask = (masked == 3) & chosen
    unchanged = (masked == ids) & chosen
    assert 0.77 < as_mask.sum() / chosen.sum() < 0.83
    assert 0.08 < unchanged.sum() / chosen.sum() < 0.12  # 10 % kept (plus the rare random draw of the same id)
    assert torch.equal(masked[~chosen], ids[~chosen])


def test_every_objective_contributes_and_the_loss_falls(tiny_encoder, sample_graphs, tmp_path):
    pretrainer = ComusPretrainer(tiny_encoder.model, PretrainingWeights(mlm=1.0, dtc=0.5, tgcl=0.2))
    collate = PretrainingCollator(tiny_encoder.collator, seed=0)
    item = collate(sample_graphs[:4])
    assert (item.batch.input_ids == tiny_encoder.tokenizer.mask_token_id).any()
    losses = pretrainer(item)
    assert set(losses) == {"mlm", "dtc", "tgcl", "loss"}
    assert losses["loss"].item() == pytest.approx(
        (losses["mlm"] + 0.5 * losses["dtc"] + 0.2 * losses["tgcl"]).item(), rel=1e-6
    )

    data = TrainingData(
        sample_graphs[:8], LengthBucketSampler([1] * 8, batch_size=4), PretrainingCollator(tiny_encoder.collator)
    )
    fixed = PretrainingCollator(tiny_encoder.collator, seed=1)(sample_graphs[:8])
    pretrainer.eval()
    with torch.no_grad():
        before = pretrainer(fixed)
    fit(
        pretrainer,
        data,
        TrainingArguments(
            output_dir=str(tmp_path), epochs=15, batch_size=4, learning_rate=3e-3, warmup_ratio=0.0, cpu=True
        ),
    )
    pretrainer.eval()
    with torch.no_grad():
        after = pretrainer(fixed)
    for name in ("mlm", "dtc", "tgcl", "loss"):
        assert after[name] < before[name], name


def test_dapt_bert_is_mlm_on_the_text_encoder_alone(tiny_encoder, sample_graphs):
    pretrainer = ComusPretrainer(tiny_encoder.model, PretrainingWeights(enabled=("mlm",)), architecture="bert")
    losses = pretrainer(PretrainingCollator(tiny_encoder.collator)(sample_graphs[:2]))
    assert set(losses) == {"mlm", "loss"}
    losses["loss"].backward()
    assert tiny_encoder.model.graph.layers[0].attention.lin.weight.grad is None  # the graph never ran
    with pytest.raises(ValueError, match="only the mlm task applies"):
        ComusPretrainer(tiny_encoder.model, PretrainingWeights(enabled=("mlm", "dtc")), architecture="bert")
    with pytest.raises(ValueError, match="non-empty subset"):
        ComusPretrainer(tiny_encoder.model, PretrainingWeights(enabled=("mlm", "sop")))


def test_run_pretraining_saves_a_loadable_encoder_and_resumes(tiny_encoder, tmp_path):
    import json

    from mathgraph.models.encoder import MathEncoder
    from mathgraph.samples import sample_problems
    from mathgraph.tasks.training.pretrain import run_pretraining

    start = tmp_path / "start"
    tiny_encoder.save_pretrained(start)
    texts = [row["problem"] for row in sample_problems()]
    args = TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=3, batch_size=4, learning_rate=5e-5, log_every=1
    )
    state = run_pretraining(texts, args, model=str(start))
    assert state["step"] == 3
    trained = MathEncoder.from_pretrained(tmp_path / "out")
    assert not torch.equal(
        trained.model.text.encoder.layer[0].output.dense.weight,
        tiny_encoder.model.text.encoder.layer[0].output.dense.weight,
    )
    # a line written after the checkpoint (a run killed mid-epoch) is dropped on resume: those steps run again
    log = tmp_path / "out" / "training_log.jsonl"
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"step": 4, "loss": 9.0}) + "\n")
    args.max_steps, args.resume = 5, True
    resumed = run_pretraining(texts, args, model=str(start))
    assert resumed["step"] == 5
    steps = [json.loads(line)["step"] for line in log.read_text().splitlines()]
    assert steps == [1, 2, 3, 4, 5] and all(json.loads(line)["loss"] != 9.0 for line in log.read_text().splitlines())


def test_mlm_decodes_only_the_masked_positions_to_the_same_loss(tiny_encoder, sample_graphs):
    from mathgraph.models.heads import mlm_loss

    pretrainer = ComusPretrainer(tiny_encoder.model, PretrainingWeights(enabled=("mlm",)), architecture="bert").eval()
    item = PretrainingCollator(tiny_encoder.collator, seed=0)(sample_graphs[:3])
    with torch.no_grad():
        loss = pretrainer(item)["mlm"]
        states, _ = tiny_encoder.model.run_text_layers(
            item.batch.input_ids, item.batch.attention_mask, item.batch.token_type_ids
        )
        every_position = mlm_loss(pretrainer.heads["mlm"](states), item.mlm_labels)  # [B, L, vocab] logits
    assert loss.item() == pytest.approx(every_position.item(), rel=1e-5)


def test_a_frozen_vocabulary_keeps_the_pretrained_rows_and_the_loss_curve_is_logged(tiny_encoder, tmp_path):
    import json

    from mathgraph.models.encoder import MathEncoder
    from mathgraph.models.text_encoder import first_added_latex_row
    from mathgraph.samples import sample_problems
    from mathgraph.tasks.training.pretrain import run_pretraining

    start = tmp_path / "start"
    tiny_encoder.save_pretrained(start)
    texts = [row["problem"] for row in sample_problems()]
    args = TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=4, batch_size=4, learning_rate=1e-2, log_every=2, warmup_ratio=0.0
    )
    run_pretraining(texts, args, model=str(start), freeze_vocabulary=True)
    trained = MathEncoder.from_pretrained(tmp_path / "out").model.text.embeddings.word_embeddings.weight
    before = tiny_encoder.model.text.embeddings.word_embeddings.weight
    first_new = first_added_latex_row(tiny_encoder.tokenizer)
    assert torch.equal(trained[:first_new], before[:first_new])  # weight decay included
    assert not torch.equal(trained[first_new:], before[first_new:])  # the LaTeX rows learned
    log = [json.loads(line) for line in (tmp_path / "out" / "training_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [1, 2, 4]
    assert {"mlm", "dtc", "tgcl", "loss", "lr", "examples_per_s"} <= set(log[0])
    assert log[1]["loss"] == pytest.approx(log[1]["mlm"] + log[1]["dtc"] + log[1]["tgcl"], rel=1e-4)


def test_the_no_memory_ablation_pretrains_text_and_graph_side_by_side(tiny_encoder, sample_graphs):
    pretrainer = ComusPretrainer(tiny_encoder.model, PretrainingWeights(), architecture="bert+gat")
    losses = pretrainer(PretrainingCollator(tiny_encoder.collator)(sample_graphs[:2]))
    assert set(losses) == {"mlm", "dtc", "tgcl", "loss"}
    losses["loss"].backward()
    assert tiny_encoder.model.graph.layers[0].attention.lin.weight.grad is not None  # the graph ran
    assert all(p.grad is None for p in tiny_encoder.model.memories.parameters())  # the memory did not
