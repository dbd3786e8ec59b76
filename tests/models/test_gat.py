"""Graph encoder: shapes, both edge directions, relation features, residual + norm."""

import pytest
import torch

from mathgraph.models.gat import GraphAttentionLayer, GraphEncoder


def path_graph():
    """0 -> 1 -> 2 with the reverse edges, relation 1 forward and 2 backward."""
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 2, 0, 1]])
    edge_type = torch.tensor([1, 1, 2, 2])
    return edge_index, edge_type


def encoder(layers=2):
    torch.manual_seed(0)
    return GraphEncoder(
        num_labels=10, num_relations=4, hidden=8, heads=2, num_layers=layers, relation_dim=3, dropout=0.0
    ).eval()


def test_node_states_have_the_hidden_size_and_are_layer_normed():
    edge_index, edge_type = path_graph()
    states = encoder()(torch.tensor([2, 3, 4]), torch.tensor([0, 1, 3]), edge_index, edge_type)
    assert states.shape == (3, 8)
    assert torch.allclose(states.mean(dim=-1), torch.zeros(3), atol=1e-5)


def test_information_flows_both_ways_along_an_edge():
    edge_index, edge_type = path_graph()
    model = encoder(layers=1)
    labels, kinds = torch.tensor([2, 3, 4]), torch.tensor([0, 1, 1])
    base = model(labels, kinds, edge_index, edge_type)
    changed_leaf = model(torch.tensor([2, 3, 5]), kinds, edge_index, edge_type)
    changed_root = model(torch.tensor([6, 3, 4]), kinds, edge_index, edge_type)
    assert not torch.allclose(base[1], changed_leaf[1])  # child -> parent (reverse edge)
    assert not torch.allclose(base[1], changed_root[1])  # parent -> child
    assert torch.allclose(base[0], changed_leaf[0])  # two hops away after one layer: untouched


def test_relations_are_edge_features():
    edge_index, edge_type = path_graph()
    model = encoder(layers=1)
    labels, kinds = torch.tensor([2, 3, 4]), torch.tensor([0, 1, 1])
    other_relation = model(labels, kinds, edge_index, torch.tensor([3, 1, 2, 2]))
    assert not torch.allclose(model(labels, kinds, edge_index, edge_type)[1], other_relation[1])


def test_run_layers_composes_to_forward():
    edge_index, edge_type = path_graph()
    model = encoder(layers=3)
    labels, kinds = torch.tensor([2, 3, 4]), torch.tensor([0, 1, 1])
    x = model.embed(labels, kinds)
    stepwise = model.run_layers(
        model.run_layers(x, edge_index, edge_type, range(2)), edge_index, edge_type, range(2, 3)
    )
    assert torch.allclose(stepwise, model(labels, kinds, edge_index, edge_type))


def test_heads_must_divide_the_hidden_size():
    with pytest.raises(ValueError, match="not a multiple of 5 heads"):
        GraphAttentionLayer(hidden=8, heads=5, edge_dim=3)


def test_folded_edge_term_equals_gatconv_with_the_same_weights():
    from torch_geometric.nn import GATConv

    from mathgraph.models.gat import FoldedEdgeGATConv

    torch.manual_seed(0)
    reference = GATConv(16, 4, heads=3, edge_dim=5, add_self_loops=False, dropout=0.0)
    folded = FoldedEdgeGATConv(16, 4, heads=3, edge_dim=5, add_self_loops=False, dropout=0.0)
    folded.load_state_dict(reference.state_dict())  # the same parameters, nothing of its own
    x, edge_index, edge_attr = torch.randn(9, 16), torch.randint(0, 9, (2, 30)), torch.randn(30, 5)
    assert torch.allclose(folded(x, edge_index, edge_attr), reference(x, edge_index, edge_attr), atol=1e-5)
    _, (_, folded_alpha) = folded(x, edge_index, edge_attr, return_attention_weights=True)
    _, (_, reference_alpha) = reference(x, edge_index, edge_attr, return_attention_weights=True)
    assert torch.allclose(folded_alpha, reference_alpha, atol=1e-6)
