"""COMUS model: fusion wiring, masks, gradients and safetensors checkpoints (tiny configs)."""

import json

import pytest
import torch
from transformers import AutoModel

from mathgraph.graph import MathSyntaxGraph, Node
from mathgraph.models.comus import CheckpointError, ComusModel


def randomise_read_out(model):
    """W^O starts at zero; give it weights so that reading from memory visibly moves the tokens."""
    torch.manual_seed(3)
    for memory in model.memories:
        torch.nn.init.normal_(memory.read_out.weight, std=0.5)


def forward(encoder, graphs):
    return encoder.model(**encoder.collator(graphs).as_model_inputs())


def plain_bert_cls(encoder, graphs):
    batch = encoder.collator(graphs)
    return encoder.model.text(
        input_ids=batch.input_ids, attention_mask=batch.attention_mask, token_type_ids=batch.token_type_ids
    ).last_hidden_state[:, 0]


def root_only(text):
    return MathSyntaxGraph(text, (Node(0, "root", "[ROOT]"),), ())


def test_outputs_have_the_documented_shapes(tiny_encoder, sample_graphs):
    out = forward(tiny_encoder, sample_graphs[:3])
    nodes = sum(g.num_nodes for g in sample_graphs[:3])
    assert out.token_states.shape[:1] == (3,) and out.token_states.shape[2] == 32
    assert out.node_states.shape == (nodes, 16)
    assert out.cls.shape == (3, 32) and out.mean_node.shape == (3, 16) and out.joint.shape == (3, 48)
    assert torch.equal(out.joint, torch.cat([out.cls, out.mean_node], dim=-1))
    assert len(out.read_attentions) == 2 and out.read_attentions[0].shape[:2] == (3, 2)


def test_without_triplets_the_text_path_is_plain_bert(tiny_encoder, sample_graphs):
    randomise_read_out(tiny_encoder.model)
    with torch.no_grad():
        empty = [root_only(g.text) for g in sample_graphs[:2]]
        assert torch.allclose(forward(tiny_encoder, empty).cls, plain_bert_cls(tiny_encoder, empty), atol=1e-6)
        # With triplets the memory does change the text path (so the check above can fail).
        real = sample_graphs[:2]
        assert not torch.allclose(forward(tiny_encoder, real).cls, plain_bert_cls(tiny_encoder, real), atol=1e-3)


def test_k0_keeps_text_and_graph_apart(tiny_text_dir, tiny_vocab_dir, sample_graphs):
    from mathgraph.models.encoder import MathEncoder

    encoder = MathEncoder.build(
        tiny_vocab_dir,
        text_encoder=str(tiny_text_dir),
        gat_layers=2,
        gat_heads=2,
        gat_head_dim=8,
        relation_dim=4,
        fusion_layers=0,
        dropout=0.0,
    )
    encoder.model.eval()
    with torch.no_grad():
        out = forward(encoder, sample_graphs[:2])
        assert out.read_attentions == [] and len(encoder.model.memories) == 0
        assert torch.allclose(out.cls, plain_bert_cls(encoder, sample_graphs[:2]), atol=1e-6)


def test_padding_in_a_batch_changes_nothing(tiny_encoder, sample_graphs):
    randomise_read_out(tiny_encoder.model)
    with torch.no_grad():
        together = forward(tiny_encoder, sample_graphs[:4]).joint
        alone = torch.cat([forward(tiny_encoder, [g]).joint for g in sample_graphs[:4]])
    assert torch.allclose(together, alone, atol=1e-5)


def test_gradients_reach_every_part(tiny_encoder, sample_graphs):
    model = tiny_encoder.model.train()
    randomise_read_out(model)
    forward(tiny_encoder, sample_graphs[:3]).joint.pow(2).sum().backward()
    parts = {
        "BERT embeddings": model.text.embeddings.word_embeddings.weight,
        "first BERT layer": model.text.encoder.layer[0].attention.self.query.weight,
        "last BERT layer": model.text.encoder.layer[-1].output.dense.weight,
        "node labels": model.graph.label_embedding.weight,
        "first GAT layer": model.graph.layers[0].attention.lin.weight,
        "last GAT layer": model.graph.layers[-1].attention.lin.weight,
        "relation embeddings": model.graph.relation_embedding.weight,
        "self-loop relation": model.graph.self_loop_embedding,
    }
    for i, memory in enumerate(model.memories):
        for name in ("similarity", "read_out.weight", "write_out.weight", "gate_new.weight", "gate_old.weight"):
            parts[f"memory {i} {name}"] = memory.get_parameter(name)
    for name, parameter in parts.items():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_eval_mode_is_deterministic(tiny_encoder, sample_graphs):
    with torch.no_grad():
        assert torch.equal(forward(tiny_encoder, sample_graphs).joint, forward(tiny_encoder, sample_graphs).joint)


def test_save_and_load_give_identical_outputs(tiny_encoder, sample_graphs, tmp_path):
    randomise_read_out(tiny_encoder.model)
    tiny_encoder.save_pretrained(tmp_path)
    assert {
        "config.json",
        "model.safetensors",
        "node_vocab.json",
        "relation_vocab.json",
        "tokenizer/tokenizer.json",
    } <= {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")}
    loaded = ComusModel.from_pretrained(tmp_path).eval()
    batch = tiny_encoder.collator(sample_graphs).as_model_inputs()
    with torch.no_grad():
        assert torch.equal(tiny_encoder.model(**batch).joint, loaded(**batch).joint)
    assert loaded.config == tiny_encoder.model.config


@pytest.fixture
def saved(tiny_encoder, tmp_path):
    tiny_encoder.save_pretrained(tmp_path)
    return tmp_path


def test_truncated_weights_are_reported(saved):
    weights = saved / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="truncated or changed after saving"):
        ComusModel.from_pretrained(saved)
    # Without a checksum to compare with, the safetensors reader itself says it is unreadable.
    config = json.loads((saved / "config.json").read_text())
    del config["weights_sha256"]
    (saved / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="cannot read .*model.safetensors"):
        ComusModel.from_pretrained(saved)


def test_tampered_weights_are_reported(saved):
    weights = saved / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-10] ^= 0xFF  # one byte of one weight
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="does not match the checksum"):
        ComusModel.from_pretrained(saved)


def test_mismatched_or_missing_files_are_reported(saved, tmp_path_factory):
    config = json.loads((saved / "config.json").read_text())
    config["num_labels"] += 5
    config.pop("weights_sha256")
    (saved / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="does not fit config.json"):
        ComusModel.from_pretrained(saved)
    (saved / "config.json").write_text("{broken")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        ComusModel.from_pretrained(saved)
    with pytest.raises(CheckpointError, match="no config.json"):
        ComusModel.from_pretrained(tmp_path_factory.mktemp("empty"))


def test_fusion_layers_beyond_the_encoders_are_refused(tiny_text_dir, sample_vocab):
    text = AutoModel.from_pretrained(tiny_text_dir)
    with pytest.raises(ValueError, match="fusion_layers must be in 0..2"):
        ComusModel.from_text_encoder(
            text,
            len(sample_vocab.labels),
            len(sample_vocab.relations),
            gat_layers=2,
            gat_heads=2,
            gat_head_dim=8,
            fusion_layers=3,
        )


def test_padding_mask_stays_finite_in_half_precision():
    from mathgraph.models.comus import additive_attention_mask

    mask, states = torch.tensor([[1, 1, 0]]), torch.zeros(1, 3, 4)
    assert torch.isinf(torch.finfo(torch.float32).min * torch.ones(1).to(torch.float16)).all()  # the old way
    with torch.autocast("cpu", dtype=torch.float16):
        additive = additive_attention_mask(mask, states)
    half = additive.to(torch.float16)
    assert torch.isfinite(half).all() and half[0, 0, 0].tolist() == [0.0, 0.0, torch.finfo(torch.float16).min]
    assert additive_attention_mask(mask, states)[0, 0, 0, 2] == torch.finfo(torch.float32).min  # fp32 as before
