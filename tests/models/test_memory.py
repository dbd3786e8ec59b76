"""The syntax-aware memory against a hand computation, and its masks."""

import math

import pytest
import torch

from mathgraph.models.memory import SyntaxAwareMemory, scatter_slot_values


def softmax(values):
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    return [e / sum(exps) for e in exps]


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def matvec(matrix, vector):
    """``vector @ matrix`` for a matrix given as rows (in x out)."""
    return [sum(vector[i] * matrix[i][j] for i in range(len(vector))) for j in range(len(matrix[0]))]


def tiny_memory():
    """d_text = 2, d_node = 2, d_rel = 1, m = 1, with every weight set by hand."""
    memory = SyntaxAwareMemory(text_dim=2, node_dim=2, relation_dim=1, num_views=1)
    with torch.no_grad():
        memory.similarity.copy_(torch.tensor([[[1.0, 0.0, 0.5], [0.0, 1.0, -0.5]]]))  # W^S: 2 x 3
        memory.read_out.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))  # W^O (out x in)
        memory.write_out.weight.copy_(torch.tensor([[0.5, 0.0], [0.0, 0.5]]))  # W^V
        memory.gate_new.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))  # W_1
        memory.gate_old.weight.copy_(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))  # W_2
        memory.gate_old.bias.copy_(torch.tensor([0.1, -0.1]))
    return memory


def test_read_and_write_match_a_hand_computation():
    memory = tiny_memory()
    H = [[1.0, 0.0], [0.0, 2.0]]  # two tokens
    N = [[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]]  # three nodes
    R = [[0.0], [1.0], [-1.0]]  # relation embeddings
    slots = [(0, 1, 1), (0, 2, 2)]  # (head, relation, tail): node 0 -r1-> node 1, node 0 -r2-> node 2
    out = memory(
        torch.tensor([H]),
        torch.tensor([[True, True]]),
        torch.tensor(N),
        torch.tensor(R),
        torch.tensor([[h for h, _, _ in slots]]),
        torch.tensor([[r for _, r, _ in slots]]),
        torch.tensor([[t for _, _, t in slots]]),
        torch.tensor([[True, True]]),
    )

    WS = [[1.0, 0.0, 0.5], [0.0, 1.0, -0.5]]
    K = [N[h] + R[r] for h, r, _ in slots]  # [n_h ; r]
    V = [N[t] for _, _, t in slots]
    S = [[sum(matvec(WS, H[i])[k] * K[t][k] for k in range(3)) for t in range(2)] for i in range(2)]
    alpha = [softmax(S[i]) for i in range(2)]  # over slots
    beta_columns = [softmax([S[i][t] for i in range(2)]) for t in range(2)]  # over tokens
    WO = [[1.0, 0.0], [0.0, 2.0]]  # in x out (the transpose of the Linear weight, symmetric here)
    expected_tokens = [
        [H[i][j] + matvec(WO, [sum(alpha[i][t] * V[t][d] for t in range(2)) for d in range(2)])[j] for j in range(2)]
        for i in range(2)
    ]
    written = [[sum(beta_columns[t][i] * H[i][d] for i in range(2)) for d in range(2)] for t in range(2)]
    candidate = [[0.5 * w for w in row] for row in written]  # W^V = 0.5 I
    gate = [[sigmoid(candidate[t][0] + V[t][1] + 0.1), sigmoid(candidate[t][1] + V[t][0] - 0.1)] for t in range(2)]
    new_values = [[gate[t][d] * candidate[t][d] + (1 - gate[t][d]) * V[t][d] for d in range(2)] for t in range(2)]

    assert out.read_attention[0, 0].tolist() == [pytest.approx(row) for row in alpha]
    assert out.write_attention[0, 0].sum(dim=0).tolist() == pytest.approx([1.0, 1.0])  # columns over tokens
    assert out.read_attention[0, 0].sum(dim=1).tolist() == pytest.approx([1.0, 1.0])  # rows over slots
    assert [out.write_attention[0, 0, :, t].tolist() for t in range(2)] == [pytest.approx(c) for c in beta_columns]
    assert out.tokens[0].tolist() == [pytest.approx(row) for row in expected_tokens]
    assert out.gate[0].tolist() == [pytest.approx(row) for row in gate]
    # Node 0 is no slot's tail and keeps its state; nodes 1 and 2 take their slot's new value.
    assert out.nodes.tolist() == [pytest.approx(N[0]), pytest.approx(new_values[0]), pytest.approx(new_values[1])]


def test_views_are_concatenated_before_the_output_maps():
    torch.manual_seed(0)
    memory = SyntaxAwareMemory(text_dim=3, node_dim=2, relation_dim=2, num_views=2)
    torch.nn.init.normal_(memory.read_out.weight)
    tokens, nodes, relations = torch.randn(1, 4, 3), torch.randn(3, 2), torch.randn(2, 2)
    args = (
        torch.ones(1, 4, dtype=torch.bool),
        nodes,
        relations,
        torch.tensor([[0, 0]]),
        torch.tensor([[0, 1]]),
        torch.tensor([[1, 2]]),
        torch.ones(1, 2, dtype=torch.bool),
    )
    out = memory(tokens, *args)
    values = nodes[[1, 2]]
    per_view = [out.read_attention[0, i] @ values for i in range(2)]  # [L, d_node] each
    expected = tokens[0] + torch.cat(per_view, dim=-1) @ memory.read_out.weight.T
    assert torch.allclose(out.tokens[0], expected, atol=1e-6)


def random_case(seed, length, num_slots, num_nodes):
    generator = torch.Generator().manual_seed(seed)
    return {
        "tokens": torch.randn(length, 6, generator=generator),
        "nodes": torch.randn(num_nodes, 5, generator=generator),
        "heads": torch.randint(0, num_nodes, (num_slots,), generator=generator),
        "relations": torch.randint(0, 3, (num_slots,), generator=generator),
        "tails": torch.randint(0, num_nodes, (num_slots,), generator=generator),
    }


def run_batch(memory, cases, relation_table):
    """Pad ``cases`` into one batch the way the collator does (global node ids, masks)."""
    length = max(len(c["tokens"]) for c in cases)
    slots = max(len(c["heads"]) for c in cases)
    tokens = torch.zeros(len(cases), length, 6)
    token_mask = torch.zeros(len(cases), length, dtype=torch.bool)
    heads, relations, tails = (torch.zeros(len(cases), slots, dtype=torch.long) for _ in range(3))
    slot_mask = torch.zeros(len(cases), slots, dtype=torch.bool)
    offset, nodes = 0, []
    for i, case in enumerate(cases):
        n, t = len(case["tokens"]), len(case["heads"])
        tokens[i, :n], token_mask[i, :n] = case["tokens"], True
        heads[i, :t], relations[i, :t], tails[i, :t] = case["heads"] + offset, case["relations"], case["tails"] + offset
        slot_mask[i, :t] = True
        nodes.append(case["nodes"])
        offset += len(case["nodes"])
    # Garbage in the padding must not leak anywhere.
    tokens[~token_mask] = 1e3
    return memory(tokens, token_mask, torch.cat(nodes), relation_table, heads, relations, tails, slot_mask)


def test_padded_tokens_and_slots_change_nothing():
    torch.manual_seed(1)
    memory = SyntaxAwareMemory(text_dim=6, node_dim=5, relation_dim=4, num_views=3)
    torch.nn.init.normal_(memory.read_out.weight)
    relation_table = torch.randn(3, 4)
    cases = [random_case(2, 7, 5, 6), random_case(3, 3, 2, 4)]
    batch = run_batch(memory, cases, relation_table)
    node_offset = 0
    for i, case in enumerate(cases):
        alone = run_batch(memory, [case], relation_table)
        n = len(case["tokens"])
        assert torch.allclose(batch.tokens[i, :n], alone.tokens[0], atol=1e-5)
        nodes = slice(node_offset, node_offset + len(case["nodes"]))
        assert torch.allclose(batch.nodes[nodes], alone.nodes, atol=1e-5)
        assert batch.read_attention[i, :, n:].abs().sum() == 0  # padded tokens read nothing
        assert batch.read_attention[i, :, :, len(case["heads"]) :].abs().sum() == 0  # padded slots are never read
        node_offset += len(case["nodes"])


def test_a_graph_without_slots_leaves_tokens_and_nodes_unchanged():
    memory = SyntaxAwareMemory(text_dim=6, node_dim=5, relation_dim=4)
    torch.nn.init.normal_(memory.read_out.weight)
    tokens, nodes = torch.randn(1, 4, 6), torch.randn(2, 5)
    no_slot = torch.zeros(1, 1, dtype=torch.long)
    out = memory(
        tokens,
        torch.ones(1, 4, dtype=torch.bool),
        nodes,
        torch.randn(3, 4),
        no_slot,
        no_slot,
        no_slot,
        torch.zeros(1, 1, dtype=torch.bool),
    )
    assert torch.equal(out.tokens, tokens) and torch.equal(out.nodes, nodes)


def test_a_fresh_memory_is_the_identity_on_tokens_but_still_learns():
    memory = SyntaxAwareMemory(text_dim=6, node_dim=5, relation_dim=4)
    tokens = torch.randn(1, 3, 6)
    out = memory(
        tokens,
        torch.ones(1, 3, dtype=torch.bool),
        torch.randn(2, 5),
        torch.randn(3, 4),
        torch.tensor([[0]]),
        torch.tensor([[1]]),
        torch.tensor([[1]]),
        torch.ones(1, 1, dtype=torch.bool),
    )
    assert torch.equal(out.tokens, tokens)  # W^O starts at zero
    out.tokens.sum().backward()
    assert memory.read_out.weight.grad.abs().sum() > 0


def test_scatter_slot_values_averages_slots_sharing_a_tail():
    nodes = torch.tensor([[1.0], [2.0], [3.0]])
    values = torch.tensor([[10.0], [20.0], [7.0]])
    tails = torch.tensor([1, 1, 2])
    assert scatter_slot_values(nodes, values, tails).tolist() == [[1.0], [15.0], [7.0]]
