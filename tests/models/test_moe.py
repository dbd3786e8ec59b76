"""JiuZhang 2.0 MoE feed-forward: exactly the dense FFN at init, straight-through gate, dispatch, router,
auxiliary losses."""

import copy
import math

import pytest
import torch
from torch import nn
from transformers import BertConfig, BertModel

from mathgraph.models.moe import (
    MoEFeedForward,
    add_moe_layers,
    moe_aux_loss,
    moe_inputs,
    moe_load_stats,
    moe_modules,
    resolve_moe_layers,
    straight_through_gate,
)


def tiny_bert(layers=2):
    config = BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(0)
    return BertModel(config, add_pooling_layer=False).eval()


def identity_router_moe(scale, **kwargs):
    """d = K = 4 and router W = scale * I: a one-hot token e_i has logits scale * e_i."""
    torch.manual_seed(0)
    moe = MoEFeedForward(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 4), num_experts=4, **kwargs).eval()
    with torch.no_grad():
        moe.router.weight.copy_(scale * torch.eye(4))
    return moe


@pytest.mark.parametrize("top_k", [1, 2])
@pytest.mark.parametrize("training", [False, True])
def test_fresh_moe_layer_is_exactly_the_dense_ffn(top_k, training):
    model = tiny_bert()
    layer = model.encoder.layer[1]
    dense_ffn = copy.deepcopy(nn.Sequential(layer.intermediate, layer.output.dense))
    layer_norm = copy.deepcopy(layer.output.LayerNorm)
    # A wide router, so tokens really spread over the experts (and top-2 weights are far from equal).
    (moe,) = add_moe_layers(model, [1], top_k=top_k, router_init_std=1.0)
    moe.train(training)  # training adds the router jitter: the output must not depend on it
    h = torch.randn(2, 5, 32)

    expert_out = moe(h)
    assert len(moe.last_routing.tokens_per_expert.nonzero()) > 1
    assert torch.allclose(expert_out, dense_ffn(h), rtol=0, atol=1e-6)
    assert torch.allclose(layer.output(expert_out, h), layer_norm(dense_ffn(h) + h), rtol=0, atol=1e-6)


@pytest.mark.parametrize("top_k", [1, 2])
def test_fresh_moe_bert_gives_the_dense_models_hidden_states(top_k):
    original = tiny_bert(layers=3)
    model = copy.deepcopy(original)
    modules = add_moe_layers(model, "all", num_experts=4, top_k=top_k, router_init_std=1.0)
    ids = torch.randint(0, 50, (3, 7))
    mask = torch.ones_like(ids)
    mask[2, 4:] = 0
    expected = original(input_ids=ids, attention_mask=mask).last_hidden_state
    with moe_inputs(modules, token_mask=mask.bool()):
        out = model(input_ids=ids, attention_mask=mask).last_hidden_state
    assert all(len(m.last_routing.tokens_per_expert.nonzero()) > 1 for m in modules)
    assert torch.allclose(out, expected, rtol=0, atol=1e-6)  # float rounding only (raw-probability gate: ~1e-2 off)


def test_straight_through_gate_forward_is_renormalised_backward_is_the_raw_probability():
    top1 = torch.tensor([[0.3], [0.9]], requires_grad=True)
    gate = straight_through_gate(top1)
    assert torch.equal(gate, torch.ones(2, 1))  # exactly 1, not 0.3 / 0.3
    gate.mul(torch.tensor([[2.0], [-1.0]])).sum().backward()
    assert torch.equal(top1.grad, torch.tensor([[2.0], [-1.0]]))  # d gate / d p = 1

    top2 = torch.tensor([[0.5, 0.3], [0.2, 0.2]], requires_grad=True)
    gate = straight_through_gate(top2)
    assert torch.allclose(gate, torch.tensor([[0.625, 0.375], [0.5, 0.5]]))
    gate.mul(torch.tensor([[1.0, 3.0], [-2.0, 0.5]])).sum().backward()
    assert torch.equal(top2.grad, torch.tensor([[1.0, 3.0], [-2.0, 0.5]]))


def test_top2_output_is_the_renormalised_mix_of_the_chosen_experts():
    torch.manual_seed(2)
    moe = MoEFeedForward(
        nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8), num_experts=4, top_k=2, router_init_std=1.0
    ).eval()
    with torch.no_grad():  # make the experts differ, as after training
        for expert in moe.experts:
            expert.dense_out.weight.add_(torch.randn_like(expert.dense_out.weight))
    h = torch.randn(10, 8)
    out = moe(h)
    routing = moe.last_routing
    chosen = routing.probs.gather(-1, routing.expert_index)
    weights = chosen / chosen.sum(-1, keepdim=True)
    expected = torch.stack(
        [sum(weights[n, j] * moe.experts[int(routing.expert_index[n, j])](h[n]) for j in range(2)) for n in range(10)]
    )
    assert torch.allclose(out, expected, atol=1e-5)


@pytest.mark.parametrize("top_k", [1, 2])
def test_router_gets_a_gradient_from_the_task_loss_alone(top_k):
    model = tiny_bert()
    modules = add_moe_layers(model, "last-2", top_k=top_k, balance_coef=0.0, z_coef=0.0)
    head = nn.Linear(32, 3)
    model.train()
    out = model(input_ids=torch.randint(0, 50, (2, 6))).last_hidden_state
    assert moe_aux_loss(modules).item() == 0.0
    head(out).sum().backward()  # a task-like loss only: the auxiliary losses are switched off
    for moe in modules:
        grad = moe.router.weight.grad
        assert grad is not None and torch.isfinite(grad).all() and grad.abs().sum() > 0


@pytest.mark.parametrize("top_k", [1, 2])
def test_each_expert_runs_only_on_its_own_tokens(top_k):
    torch.manual_seed(1)
    moe = MoEFeedForward(
        nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8), num_experts=4, top_k=top_k, router_init_std=1.0
    ).eval()
    seen = {}
    for e, expert in enumerate(moe.experts):
        expert.register_forward_hook(lambda module, args, out, e=e: seen.__setitem__(e, args[0].detach()))
    h = torch.randn(3, 7, 8)
    moe(h)
    index = moe.last_routing.expert_index.reshape(-1, top_k)
    flat = h.reshape(-1, 8)
    for e in range(4):
        routed = (index == e).any(-1)
        rows = seen.get(e, torch.empty(0, 8))
        assert rows.shape[0] == int(routed.sum())
        assert torch.equal(rows, flat[routed])  # exactly its tokens, in token order
    assert sum(r.shape[0] for r in seen.values()) == 21 * top_k
    assert moe_load_stats([moe]).tolist() == [torch.bincount(index.reshape(-1), minlength=4).tolist()]


def test_routing_probabilities_sum_to_one():
    model = tiny_bert()
    modules = add_moe_layers(model, "all")
    model(input_ids=torch.randint(0, 50, (2, 6)))
    for moe in modules:
        assert torch.allclose(moe.last_routing.probs.sum(-1), torch.ones(2, 6))


def test_balance_loss_is_alpha_under_uniform_routing_and_grows_when_routing_collapses():
    # Token i prefers expert i and the probabilities are permutations of each other: f_i = s_i = 1/4.
    uniform = identity_router_moe(scale=1.0, z_coef=0.0)
    uniform(torch.eye(4))
    assert uniform.last_routing.tokens_per_expert.tolist() == [1, 1, 1, 1]
    assert uniform.last_routing.balance_loss.item() == pytest.approx(1e-3, rel=1e-6)

    losses = []
    for scale in (0.5, 2.0, 20.0):  # every token prefers expert 0, more and more sharply
        moe = identity_router_moe(scale=scale)
        moe(torch.tensor([[1.0, 0.0, 0.0, 0.0]]).repeat(4, 1))
        assert moe.last_routing.tokens_per_expert.tolist() == [4, 0, 0, 0]
        losses.append(moe.last_routing.balance_loss.item())
    assert 1e-3 < losses[0] < losses[1] < losses[2]
    assert losses[2] == pytest.approx(1e-3 * 4, rel=1e-6)  # alpha * K when fully collapsed


def test_z_loss_matches_a_hand_computation():
    moe = identity_router_moe(scale=2.0, balance_coef=0.0)
    tokens = [[1.0, 0.0, 0.0, 0.0], [0.5, -1.0, 0.0, 3.0]]
    moe(torch.tensor(tokens))
    logsumexp = [math.log(sum(math.exp(2.0 * v) for v in token)) for token in tokens]
    expected = 1e-4 * sum(v * v for v in logsumexp) / len(tokens)
    assert moe.last_routing.z_loss.item() == pytest.approx(expected, rel=1e-6)


def test_padding_is_left_out_of_the_routing_statistics():
    moe = identity_router_moe(scale=3.0)
    h = torch.eye(4).repeat(2, 1, 1)  # [2, 4, 4]
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    with moe_inputs([moe], token_mask=mask):
        padded_out = moe(h)
    real = routing_of(copy.deepcopy(moe), h[mask.bool()])  # deep-copying after a forward works
    assert moe.token_mask is None  # cleared on exit
    assert moe.last_routing.tokens_per_expert.tolist() == [2, 2, 1, 1]
    assert torch.allclose(moe.last_routing.balance_loss, real.balance_loss)
    assert torch.allclose(moe.last_routing.z_loss, real.z_loss)
    assert torch.allclose(padded_out[1, 2:], moe(h[1, 2:]))  # padded tokens are still computed


def routing_of(moe, tokens):
    moe(tokens)
    return moe.last_routing


def test_task_prompt_is_added_to_the_router_input_only():
    moe = identity_router_moe(scale=1.0)
    h = torch.zeros(2, 3, 4)
    prompt = torch.tensor([[0.0, 0.0, 5.0, 0.0], [0.0, 0.0, 0.0, 5.0]])  # one per example
    with moe_inputs([moe], task_prompt=prompt):
        out = moe(h)
    assert moe.last_routing.expert_index[..., 0].tolist() == [[2, 2, 2], [3, 3, 3]]
    expected = torch.stack([moe.experts[2](h[0]), moe.experts[3](h[1])])  # top-1: gate weight 1
    assert torch.allclose(out, expected)


def test_jitter_only_in_training():
    moe = identity_router_moe(scale=1.0, jitter=0.2)
    h = torch.randn(50, 4)
    moe.train()
    moe(h)
    first = moe.last_routing.probs
    moe(h)
    assert not torch.equal(first, moe.last_routing.probs)
    moe.eval()
    moe(h)
    assert torch.equal(moe.last_routing.probs, (h @ torch.eye(4)).softmax(-1))


def test_layer_selection_and_module_lookup():
    assert resolve_moe_layers("last-2", 6) == [4, 5]
    assert resolve_moe_layers("all", 3) == [0, 1, 2]
    assert resolve_moe_layers("0,-1", 6) == [0, 5]
    assert resolve_moe_layers([], 6) == []
    with pytest.raises(ValueError):
        resolve_moe_layers([6], 6)
    model = tiny_bert(layers=3)
    modules = add_moe_layers(model, "last-2", num_experts=3)
    assert moe_modules(model) == modules and all(m.num_experts == 3 for m in modules)
    with pytest.raises(ValueError, match="already"):
        add_moe_layers(model, [2])


def test_autocast_bf16_forward_and_backward():
    model = tiny_bert()
    modules = add_moe_layers(model, "all")
    model.train()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(input_ids=torch.randint(0, 50, (2, 6))).last_hidden_state
        loss = out.float().pow(2).mean() + moe_aux_loss(modules)
    loss.backward()
    assert modules[0].last_routing.probs.dtype == torch.float32
    assert all(torch.isfinite(m.router.weight.grad).all() for m in modules)
