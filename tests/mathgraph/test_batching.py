"""Collating prebuilt features gives exactly what tokenizing + PyG batching per batch gave."""

import torch
from torch_geometric.data import Batch


def reference_batch(collator, graphs):
    """The batch built the way the collator did before features: tokenizer with padding, PyG batching."""
    tokens = collator.tokenizer([collator.encoder_text(g.text) for g in graphs], padding=True, truncation=True,
                                max_length=collator.max_length, return_tensors="pt", return_token_type_ids=True)
    pyg = Batch.from_data_list([g.to_pyg(collator.vocab) for g in graphs])
    return tokens, pyg


def test_features_collate_to_the_tokenizer_and_pyg_batch(tiny_encoder, sample_graphs):
    collator = tiny_encoder.collator
    graphs = sample_graphs[:3]
    batch = collator(graphs)
    tokens, pyg = reference_batch(collator, graphs)
    assert torch.equal(batch.input_ids, tokens["input_ids"])
    assert torch.equal(batch.attention_mask, tokens["attention_mask"])
    assert torch.equal(batch.token_type_ids, tokens["token_type_ids"])
    assert torch.equal(batch.node_labels, pyg.x) and torch.equal(batch.node_kinds, pyg.node_kind)
    assert torch.equal(batch.node_batch, pyg.batch)
    assert torch.equal(batch.edge_index, pyg.edge_index) and torch.equal(batch.edge_type, pyg.edge_type)
    # slots: each graph's triplets with node ids offset by the nodes of the graphs before it, then padding
    offset = 0
    for i, graph in enumerate(graphs):
        count = len(graph.edges)
        heads = [h + offset for h, _, _ in graph.triplets()]
        tails = [t + offset for _, _, t in graph.triplets()]
        relations = collator.vocab.relations.lookup(r for _, r, _ in graph.triplets())
        assert batch.slot_heads[i, :count].tolist() == heads and batch.slot_tails[i, :count].tolist() == tails
        assert batch.slot_relations[i, :count].tolist() == relations
        assert batch.slot_mask[i].tolist() == [True] * count + [False] * (batch.slot_mask.shape[1] - count)
        assert not batch.slot_heads[i, count:].any()
        offset += graph.num_nodes
    assert batch.slot_mask.shape[1] == max(len(g.edges) for g in graphs)
    assert batch.problem_ids is None


def test_text_only_features_have_no_graph(tiny_encoder, sample_graphs):
    collator = tiny_encoder.collator
    features = collator.text_features([g.text for g in sample_graphs[:2]])
    batch = collator.collate(features, problem_ids=[7, 3])
    tokens, _ = reference_batch(collator, sample_graphs[:2])
    assert torch.equal(batch.input_ids, tokens["input_ids"])
    assert batch.node_labels.numel() == 0 and batch.edge_index.shape == (2, 0)
    assert batch.slot_mask.shape == (2, 1) and not batch.slot_mask.any()
    assert batch.problem_ids.tolist() == [7, 3]
