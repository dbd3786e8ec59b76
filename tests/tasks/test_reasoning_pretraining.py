"""A ReasonFormer multi-task model: layout, skill pre-training with the routing loss, skill routes, save/load."""

import json

import pytest
import torch

from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
from mathgraph.models.reasoning import skill_routing_loss
from mathgraph.tasks.training.multitask import train_multitask
from mathgraph.tasks.training.reasoning_pretraining import SKILL_PRETRAINING_DIR, skill_sources
from mathgraph.tasks.training.trainer import TRAINING_LOG, TrainingArguments

TEXTS = ["Find $x$ if $2x+1=5$.", "Tom has 3 apples and buys 4 more. How many apples does he have?"]


def reasonformer(encoder, **options):
    config = MultiTaskConfig(
        [{"task": "kpc", "labels": ["a", "b"]}, {"task": "qrc", "labels": ["0", "1"]}],
        adapter="reasonformer",
        **options,
    )
    return MultiTaskModel(encoder, config).eval()


def test_reasonformer_takes_the_top_text_layer_and_keeps_the_fusion_layers(tiny_encoder):
    top = tiny_encoder.model.text.encoder.layer[2].attention.self.query.weight.detach().clone()
    model = reasonformer(tiny_encoder, reasoning_depth=2)
    assert len(model.backbone.text.encoder.layer) == 2  # 3 layers: 2 for the representation (both fused)
    first = model.reasoning.module(0, 0).layers[0]
    assert torch.equal(first.attention.self.query.weight, top)
    assert model.reasoning.config.skills == ("general", "language", "alignment", "knowledge", "relation")
    batch = tiny_encoder.collator(tiny_encoder.parse(TEXTS))
    vectors = model.vectors(0, batch)
    assert vectors.shape == (2, model.backbone.output_dim)
    assert len(model.reasoning.last_trace.stop_gates) == 2
    with pytest.raises(ValueError, match="fewer than the 2"):
        reasonformer(tiny_encoder, reasoning_layers=2)  # would cut into COMUS's two fusion layers


def test_skills_are_taught_by_the_objectives_and_tasks_the_run_has(tiny_encoder):
    model = reasonformer(tiny_encoder)
    assert skill_sources(model) == [
        ("language", "mlm"),
        ("alignment", "tgcl"),
        ("knowledge", "kpc"),
        ("relation", "qrc"),
    ]
    with pytest.raises(ValueError, match="unknown adapter"):
        MultiTaskConfig([{"task": "kpc", "labels": ["a", "b"]}], adapter="reasoner")
    with pytest.raises(ValueError, match="top_k must be in 0..5"):
        reasonformer(tiny_encoder, reasoning_top_k=6)


def test_skill_routes_weights_and_stop_gates(tiny_encoder):
    model = reasonformer(tiny_encoder, reasoning_depth=3)
    routes = model.skill_routes(TEXTS, task="qrc")
    assert routes.task == "qrc" and routes.depth == 3 and len(routes.weights) == 2
    for problem in routes.weights:
        for step in problem:
            assert sum(w > 0 for w in step) == 2 and sum(step) == pytest.approx(1.0)
    assert all(0 < g < 1 for problem in routes.stop_gates for g in problem)
    assert sum(routes.activation_rates()[0]) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="no reasoning modules"):
        MultiTaskModel(tiny_encoder, MultiTaskConfig([{"task": "kpc", "labels": ["a", "b"]}])).skill_routes(TEXTS)
    with pytest.raises(ValueError, match="non-empty"):
        model.skill_routes(["  "])


def test_skill_pretraining_lowers_the_routing_loss_then_adaptation_trains_the_tasks(start_model, task_files, tmp_path):
    output = tmp_path / "reasonformer"
    args = TrainingArguments(output_dir=str(output), epochs=1, batch_size=4, learning_rate=3e-3, log_every=1)
    result = train_multitask(
        task_files, args, model=start_model, adapter="reasonformer", skill_pretraining_steps=24, reasoning_depth=2
    )
    assert result["skill_pretraining"]["skills"] == {
        "language": "mlm",
        "alignment": "tgcl",
        "knowledge": "kpc",
        "relation": "qrc",
    }
    log = [json.loads(line) for line in (output / SKILL_PRETRAINING_DIR / TRAINING_LOG).read_text().splitlines()]
    assert len(log) == 24 and {"routing_loss", "objective_loss"} <= set(log[0])
    first, last = sum(r["routing_loss"] for r in log[:4]), sum(r["routing_loss"] for r in log[-4:])
    assert last < first
    # Adaptation: the task loss alone (no routing loss in its log).
    adaptation = [json.loads(line) for line in (output / TRAINING_LOG).read_text().splitlines()]
    assert "routing_loss" not in adaptation[0]
    with pytest.raises(ValueError, match="for --adapter reasonformer"):
        train_multitask(task_files, args, model=start_model, adapter="none", skill_pretraining_steps=2)


def test_after_skill_pretraining_the_router_picks_each_batch_s_skill_and_general(tiny_encoder):
    """The routing loss alone, on the model's real forward: the router learns {knowledge, general} for KPC."""
    model = reasonformer(tiny_encoder, reasoning_depth=1).train()
    batch = tiny_encoder.collator(tiny_encoder.parse(TEXTS))
    targets = model.reasoning.skill_targets(["knowledge"] * 2)
    optimizer = torch.optim.Adam(model.reasoning.parameters(), lr=1e-2)
    for _ in range(20):
        model.vectors(0, batch)
        loss = skill_routing_loss(model.reasoning.last_trace.probabilities, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    routes = model.skill_routes(TEXTS, task="kpc")
    skills = routes.skills
    assert {
        frozenset(skills[j] for j, w in enumerate(step) if w > 0) for problem in routes.weights for step in problem
    } == {frozenset({"general", "knowledge"})}


def test_a_saved_reasonformer_gives_the_same_vectors_and_routes(tiny_encoder, tmp_path):
    model = reasonformer(tiny_encoder, reasoning_modules="private", reasoning_top_k=0, skills=["general", "knowledge"])
    torch.manual_seed(3)
    with torch.no_grad():  # routers and gates away from their init, so the round trip is a real check
        for parameter in model.reasoning.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(tmp_path / "saved")
    loaded = MultiTaskModel.from_pretrained(tmp_path / "saved")
    assert loaded.config.reasoning_modules == "private" and loaded.config.skills == ["general", "knowledge"]
    batch = tiny_encoder.collator(tiny_encoder.parse(TEXTS))
    assert torch.allclose(loaded.vectors(1, batch), model.vectors(1, batch), atol=1e-6)
    assert torch.allclose(
        torch.tensor(loaded.skill_routes(TEXTS).weights), torch.tensor(model.skill_routes(TEXTS).weights)
    )


def test_a_reasonformer_stored_as_a_delta_from_its_start_encoder_loads_the_same(tiny_encoder, start_model, tmp_path):
    from mathgraph.models.encoder import MathEncoder

    model = reasonformer(tiny_encoder)
    with torch.no_grad():
        for parameter in model.reasoning.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_delta(tmp_path / "delta", base=MathEncoder.from_pretrained(start_model))
    loaded = MultiTaskModel.from_pretrained(tmp_path / "delta", base=MathEncoder.from_pretrained(start_model))
    batch = tiny_encoder.collator(tiny_encoder.parse(TEXTS))
    assert torch.allclose(loaded.vectors(0, batch), model.vectors(0, batch), atol=1e-3)  # fp16 delta


def test_skill_routes_summaries_against_hand_computation():
    from mathgraph.models.multitask import SkillRoutes

    routes = SkillRoutes(
        "kpc",
        ["a", "b"],
        ["general", "knowledge", "relation"],
        weights=[[[0.75, 0.25, 0.0], [0.5, 0.0, 0.5]], [[0.25, 0.75, 0.0], [1.0, 0.0, 0.0]]],
        stop_gates=[[0.2, 0.6], [0.4, 0.0]],
    )
    assert routes.depth == 2
    assert torch.allclose(torch.tensor(routes.mean_weights()), torch.tensor([[0.5, 0.5, 0.0], [0.75, 0.0, 0.25]]))
    assert routes.activation_rates() == [[1.0, 1.0, 0.0], [1.0, 0.0, 0.5]]
    assert routes.mean_stop_gates() == pytest.approx([0.3, 0.3])
