"""CGC-LoRA: identity at init, task-only gate, merge/unmerge, gradient isolation, plain LoRA as a special case,
new token embeddings trainable while the pre-trained ones stay frozen."""

import copy

import pytest
import torch
from torch import nn
from transformers import BertConfig, BertModel

from mathgraph.models.cgc_lora import (
    CGCLoRALinear,
    PartlyTrainableEmbedding,
    TaskGate,
    apply_cgc_lora,
    cgc_lora_layers,
    merge_cgc_lora,
    unmerge_cgc_lora,
)


def lora_layer(num_tasks=3, num_common=2, rank=10, alpha=16.0, trained=True):
    """A 6 -> 5 linear with N = num_common + num_tasks experts; ``trained`` gives B random values."""
    torch.manual_seed(0)
    gate = TaskGate(num_tasks, num_common, task_dim=4)
    layer = CGCLoRALinear(nn.Linear(6, 5), gate, rank=rank, alpha=alpha)
    if trained:
        with torch.no_grad():
            layer.common_B.normal_()
            layer.specific_B.normal_()
    return layer, gate


def test_identical_to_the_base_layer_at_init_and_base_frozen():
    layer, gate = lora_layer(trained=False)
    x = torch.randn(4, 3, 6)
    for task in (0, torch.tensor([0, 2, 1, 1])):
        gate.current_task = task
        assert torch.equal(layer(x), layer.base(x))
    assert not any(p.requires_grad for p in layer.base.parameters())
    assert layer.expert_rank == 2 and layer.scaling == 16.0 / 10


def test_gate_rows_sum_to_one_and_ignore_the_input():
    layer, gate = lora_layer()
    weights = gate(torch.arange(3))
    assert weights.shape == (3, 3)  # N_C common experts + the task's own one
    assert torch.allclose(weights.sum(-1), torch.ones(3))
    seen = []
    gate.register_forward_hook(lambda module, args, out: seen.append(out.detach()))
    gate.current_task = 1
    layer(torch.randn(2, 6))
    layer(torch.randn(2, 6) * 100)
    assert torch.equal(seen[0], seen[1]) and torch.equal(seen[0][0], weights[1])


def test_mixed_task_batch_equals_one_task_at_a_time():
    layer, gate = lora_layer()
    x = torch.randn(4, 3, 6)
    tasks = [2, 0, 1, 2]
    gate.current_task = torch.tensor(tasks)
    mixed = layer(x)
    for b, task in enumerate(tasks):
        gate.current_task = task
        assert torch.allclose(mixed[b], layer(x[b : b + 1])[0], atol=1e-6)


def test_merge_matches_the_unmerged_forward_and_unmerge_restores():
    layer, gate = lora_layer()
    x = torch.randn(4, 3, 6)
    original = layer.base.weight.detach().clone()
    gate.current_task = 1
    expected = layer(x)
    layer.merge(1)
    assert not torch.equal(layer.base.weight, original)
    assert torch.allclose(layer(x), expected, atol=1e-5)
    assert torch.allclose(nn.functional.linear(x, layer.base.weight, layer.base.bias), expected, atol=1e-5)
    layer.unmerge()
    assert torch.equal(layer.base.weight, original)
    assert torch.allclose(layer(x), expected, atol=1e-6)


def test_a_task_gives_zero_gradient_to_other_tasks_specific_experts():
    layer, gate = lora_layer()
    gate.current_task = 1
    layer(torch.randn(4, 6)).pow(2).sum().backward()
    for grad in (layer.specific_A.grad, layer.specific_B.grad):
        assert grad[1].abs().sum() > 0
        assert torch.count_nonzero(grad[0]) == 0 and torch.count_nonzero(grad[2]) == 0
    assert layer.common_A.grad.abs().sum() > 0 and layer.common_B.grad.abs().sum() > 0
    assert gate.task_embedding.weight.grad[1].abs().sum() > 0
    assert torch.count_nonzero(gate.task_embedding.weight.grad[[0, 2]]) == 0


def test_no_common_expert_and_one_task_is_plain_lora():
    layer, gate = lora_layer(num_tasks=1, num_common=0, rank=4, alpha=8.0)
    gate.current_task = 0
    x = torch.randn(3, 2, 6)
    A, B = layer.specific_A[0], layer.specific_B[0]
    plain = layer.base(x) + (8.0 / 4) * (x @ A.T @ B.T)
    assert torch.allclose(layer(x), plain, atol=1e-6)


def test_apply_cgc_lora_wraps_a_bert_and_merges_per_task():
    config = BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(0)
    original = BertModel(config, add_pooling_layer=False).eval()
    model = copy.deepcopy(original)
    gate = apply_cgc_lora(model, num_tasks=4, num_common=2, rank=12)
    layers = cgc_lora_layers(model)
    assert len(layers) == 2 * 6  # query, key, value, attention output dense, intermediate dense, output dense
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(
        name.rsplit(".", 1)[-1] in ("common_A", "common_B", "specific_A", "specific_B") for name in trainable
    )
    assert not any(name.startswith("_gate") or ".gate." in name for name in model.state_dict())

    ids = torch.randint(0, 50, (2, 5))
    gate.current_task = 3
    assert torch.allclose(model(input_ids=ids).last_hidden_state, original(input_ids=ids).last_hidden_state)
    with torch.no_grad():
        for layer in layers:
            layer.specific_B.normal_(std=0.05)
            layer.common_B.normal_(std=0.05)
    expected = model(input_ids=ids).last_hidden_state
    merge_cgc_lora(model, 3)
    assert torch.allclose(model(input_ids=ids).last_hidden_state, expected, atol=1e-5)
    unmerge_cgc_lora(model)
    assert all(layer.merged_task is None for layer in layers)


def tiny_bert():
    config = BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(0)
    return BertModel(config, add_pooling_layer=False).eval()


def test_new_token_rows_train_and_pretrained_rows_stay_fixed_under_adamw_weight_decay():
    original = tiny_bert()
    model = copy.deepcopy(original)
    gate = apply_cgc_lora(model, num_tasks=2, num_common=1, rank=6, new_token_start=40)  # rows 40..49 are new
    words = model.embeddings.word_embeddings
    assert isinstance(words, PartlyTrainableEmbedding) and words.num_frozen == 40
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert "embeddings.word_embeddings.new" in trainable
    assert not any(name.startswith("embeddings.") and name != "embeddings.word_embeddings.new" for name in trainable)
    assert torch.equal(words.weight, original.embeddings.word_embeddings.weight)

    ids = torch.tensor([[1, 5, 42, 7, 45], [2, 41, 9, 3, 0]])
    gate.current_task = 1
    assert torch.allclose(model(input_ids=ids).last_hidden_state, original(input_ids=ids).last_hidden_state)

    before = words.weight.detach().clone()
    params = [p for p in [*model.parameters(), *gate.parameters()] if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1)
    head = nn.Linear(32, 3)
    head(model(input_ids=ids).last_hidden_state).sum().backward()
    optimizer.step()
    after = words.weight.detach()
    for row in (42, 45, 41):  # new tokens in the batch
        assert not torch.equal(after[row], before[row])
    assert torch.equal(after[:40], before[:40])  # pre-trained rows, used (1, 5, 7...) or not, weight decay included


def test_partly_trainable_embedding_keeps_the_plain_state_dict_layout():
    torch.manual_seed(0)
    plain = nn.Embedding(12, 4, padding_idx=0)
    split = PartlyTrainableEmbedding(plain, num_frozen=9)
    ids = torch.tensor([[0, 8, 9, 11], [3, 10, 10, 1]])
    assert torch.equal(split(ids), plain(ids))
    state = split.state_dict()
    assert list(state) == ["weight"] and torch.equal(state["weight"], plain.weight)

    other = PartlyTrainableEmbedding(nn.Embedding(12, 4), num_frozen=9)
    other.load_state_dict(state)
    assert torch.equal(other.frozen, plain.weight[:9]) and torch.equal(other.new, plain.weight[9:])
    plain_again = nn.Embedding(12, 4)
    plain_again.load_state_dict(split.state_dict())  # a plain embedding reads it too
    assert torch.equal(plain_again.weight, plain.weight)
    with pytest.raises(RuntimeError, match="size mismatch"):
        other.load_state_dict({"weight": torch.zeros(11, 4)})
