"""ReasonFormer reasoning modules: router weights, top-k, stop gate, shared parameters, skill routing loss."""

import math

import pytest
import torch
from transformers import BertConfig, BertModel

from mathgraph.models.reasoning import (
    AdaptedOutput,
    ReasoningConfig,
    ReasoningModules,
    StepAdapter,
    skill_routing_loss,
)


def tiny_bert(layers=3):
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


def reasoning(**options):
    text = tiny_bert()
    config = ReasoningConfig(skills=("general", "language", "alignment", "knowledge"), **options)
    modules = ReasoningModules.take_top_layers(text, config).eval()
    return text, modules


def states(batch=4, length=6):
    torch.manual_seed(1)
    mask = torch.ones(batch, length, dtype=torch.long)
    mask[1, 4:] = 0
    return torch.randn(batch, length, 32), mask


def spread_routers(modules, scale=3.0):
    """Router scores far from uniform, so problems really choose different skills."""
    torch.manual_seed(2)
    with torch.no_grad():
        for router in modules.routers:
            router.scores[-1].weight.normal_(std=scale)


def test_take_top_layers_moves_the_top_layers_out_of_the_text_encoder():
    text = tiny_bert(layers=3)
    top = text.encoder.layer[2]
    modules = ReasoningModules.take_top_layers(text, ReasoningConfig(layers=1))
    assert len(text.encoder.layer) == 2
    copied = modules.module(0, 0).layers[0]
    assert copied is not top
    assert torch.equal(copied.attention.self.query.weight, top.attention.self.query.weight)
    with pytest.raises(ValueError, match="fewer than the 2"):
        ReasoningModules.take_top_layers(tiny_bert(layers=3), ReasoningConfig(layers=2), keep=2)


@pytest.mark.parametrize("top_k", [1, 2, 0])
def test_router_weights_sum_to_one_over_exactly_k_distinct_modules(top_k):
    _, modules = reasoning(top_k=top_k, depth=3)
    spread_routers(modules)
    hidden, mask = states()
    modules(hidden, mask)
    trace = modules.last_trace
    k = top_k or 4
    assert len(trace.probabilities) == 3
    for probabilities, chosen, weights in zip(trace.probabilities, trace.chosen, trace.weights):
        assert torch.allclose(probabilities.sum(-1), torch.ones(4))
        assert chosen.shape == weights.shape == (4, k)
        assert all(len(set(row.tolist())) == k for row in chosen)  # exactly k different modules
        assert torch.allclose(weights.sum(-1), torch.ones(4))
        # the weights are the router's probabilities of the chosen skills, renormalised
        picked = probabilities.gather(-1, chosen)
        assert torch.allclose(weights, picked / picked.sum(-1, keepdim=True))
    assert len({tuple(row.tolist()) for row in trace.chosen[0]}) > 1  # problems route differently


def test_top_k_runs_exactly_the_chosen_modules_on_their_problems():
    _, modules = reasoning(top_k=2, depth=1)
    spread_routers(modules)
    calls = {}
    for skill in range(4):
        modules.module(0, skill).register_forward_hook(
            lambda module, args, output, skill=skill: calls.__setitem__(skill, args[0].shape[0])
        )
    hidden, mask = states()
    modules(hidden, mask)
    chosen = modules.last_trace.chosen[0]
    expected = {skill: int((chosen == skill).any(-1).sum()) for skill in range(4) if (chosen == skill).any()}
    assert calls == expected
    assert sum(calls.values()) == 4 * 2  # every problem through exactly 2 modules


def test_output_is_the_weighted_mix_of_module_outputs_through_the_stop_gate():
    """Eq. 2 and the gated residual (Eq. 4) by hand for a depth-1 model."""
    _, modules = reasoning(top_k=2, depth=1)
    spread_routers(modules)
    hidden, mask = states()
    out = modules(hidden, mask)
    trace = modules.last_trace
    additive = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
    for b in range(4):
        mix = sum(
            w * modules.module(0, int(j))(hidden[b : b + 1], additive[b : b + 1], 0)[0]
            for j, w in zip(trace.chosen[0][b], trace.weights[0][b])
        )
        g = trace.stop_gates[0][b]
        assert torch.allclose(out[b], hidden[b] + g * (mix - hidden[b]), atol=1e-5)


def test_stop_gate_forced_to_zero_after_step_one_gives_the_depth_one_output():
    _, deep = reasoning(depth=3, top_k=2)
    spread_routers(deep)
    hidden, mask = states()
    for step in (1, 2):
        deep.force_stop_gate(step, 0.0)
    out_deep = deep(hidden, mask)
    # The same weights, cut to one step.
    _, shallow = reasoning(depth=1, top_k=2)
    shallow_state = {
        k: v
        for k, v in deep.state_dict().items()
        if not any(f"{name}.{i}." in k for name in ("routers", "stop_gates") for i in (1, 2))
        and ".adapters.1." not in k
        and ".adapters.2." not in k
    }
    shallow.load_state_dict(shallow_state)
    assert torch.allclose(out_deep, shallow(hidden, mask), atol=1e-6)
    deep.force_stop_gate(1, None)
    assert not torch.allclose(deep(hidden, mask), out_deep, atol=1e-4)  # step 2 does change the output


def test_shared_modules_share_parameters_but_not_adapters():
    _, shared = reasoning(sharing="shared", depth=3)
    first, last = shared.module(0, 1), shared.module(2, 1)
    assert first is last
    layer = first.layers[0]
    assert isinstance(layer.output, AdaptedOutput)
    adapters = layer.output.adapters
    assert len(adapters) == 3 and all(isinstance(a, StepAdapter) for a in adapters)
    assert adapters[0].down.weight.data_ptr() != adapters[2].down.weight.data_ptr()
    # Another skill's module is its own copy.
    assert shared.module(0, 2).layers[0].attention.self.query.weight is not layer.attention.self.query.weight
    # A step-2 adapter changes the output only where step 2 runs: not at depth 1 (gates after step 1 at zero).
    hidden, mask = states()
    for step in (1, 2):
        shared.force_stop_gate(step, 0.0)
    before = shared(hidden, mask)
    with torch.no_grad():
        for skill in range(4):
            shared.module(2, skill).layers[0].output.adapters[2].up.bias.fill_(1.0)
    assert torch.allclose(shared(hidden, mask), before)
    shared.force_stop_gate(2, None)
    shared.force_stop_gate(1, 1.0)
    after = shared(hidden, mask)
    with torch.no_grad():
        for skill in range(4):
            shared.module(2, skill).layers[0].output.adapters[2].up.bias.zero_()
    assert not torch.allclose(shared(hidden, mask), after)


def test_private_modules_are_one_per_skill_and_step_without_adapters():
    _, private = reasoning(sharing="private", depth=3)
    assert private.module(0, 1) is not private.module(2, 1)
    assert len(private.skill_modules) == 3 * 4
    assert not any("adapters" in name for name, _ in private.named_parameters())
    _, shared = reasoning(sharing="shared", depth=3)
    # A fresh adapter is the identity: at init a shared module computes what its private twin computes.
    hidden, mask = states()
    additive = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
    assert torch.allclose(
        shared.module(1, 0)(hidden, additive, 1), private.module(1, 0)(hidden, additive, 1), atol=1e-6
    )


def test_skill_routing_loss_against_hand_computation():
    p1 = torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]])
    p2 = torch.tensor([[0.4, 0.4, 0.2], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    targets = torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])  # the third has no skill
    step1 = (-(math.log(0.5) + math.log(0.25)) / 2 - math.log(0.3)) / 2
    step2 = (-(math.log(0.4) + math.log(0.4)) / 2 - math.log(0.4)) / 2
    assert skill_routing_loss([p1, p2], targets).item() == pytest.approx((step1 + step2) / 2, rel=1e-6)
    assert skill_routing_loss([p1], torch.zeros(3, 3)).item() == 0.0


def test_skill_targets_add_general_and_reject_unknown_skills():
    _, modules = reasoning()
    targets = modules.skill_targets(["language", None, "knowledge"])
    assert targets.tolist() == [[1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 0, 1]]
    with pytest.raises(ValueError, match="unknown skill 'relation'"):
        modules.skill_targets(["relation"])


def test_routing_loss_trains_the_router_to_the_target_skills():
    _, modules = reasoning(top_k=2, depth=2)
    modules.train()
    hidden, mask = states()
    targets = modules.skill_targets(["knowledge"] * 4)
    optimizer = torch.optim.Adam(modules.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        modules(hidden, mask)
        loss = skill_routing_loss(modules.last_trace.probabilities, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.5
    modules.eval()
    modules(hidden, mask)
    for chosen in modules.last_trace.chosen:
        assert {frozenset(row.tolist()) for row in chosen} == {frozenset({0, 3})}  # general and knowledge


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"top_k": 5}, "top_k must be in 0..4"),
        ({"depth": 0}, "must be >= 1"),
        ({"sharing": "both"}, "unknown module"),
        ({"skills": ("a", "a")}, "distinct skills"),
    ],
)
def test_bad_configs_are_refused(bad, message):
    options = {"skills": ("general", "language", "alignment", "knowledge"), **bad}
    with pytest.raises(ValueError, match=message):
        ReasoningConfig(**options)


def test_the_router_s_cls_only_layer_equals_the_full_layer_at_cls():
    from mathgraph.models.reasoning import cls_through_layer

    text = tiny_bert()
    layer = text.encoder.layer[2]
    hidden, mask = states()
    additive = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
    full = layer(hidden, attention_mask=additive)
    full = full[0] if isinstance(full, tuple) else full
    assert torch.allclose(cls_through_layer(layer, hidden, additive), full[:, 0], atol=1e-5)


def test_checkpointing_gives_the_same_output_and_gradients():
    hidden, mask = states()
    results = []
    for checkpointing in (False, True):
        _, modules = reasoning(depth=2, checkpointing=checkpointing)
        spread_routers(modules)
        modules.train()
        torch.manual_seed(5)
        out = modules(hidden, mask)
        out.square().mean().backward()
        results.append((out.detach(), {n: p.grad.clone() for n, p in modules.named_parameters() if p.grad is not None}))
    (plain, plain_grads), (recomputed, recomputed_grads) = results
    assert torch.allclose(plain, recomputed)
    assert plain_grads.keys() == recomputed_grads.keys() and len(plain_grads) > 0
    assert all(torch.allclose(plain_grads[n], recomputed_grads[n], atol=1e-6) for n in plain_grads)
