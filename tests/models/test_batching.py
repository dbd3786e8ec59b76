"""Collating prebuilt features gives exactly what tokenizing + PyG batching per batch gave."""

import numpy as np
import torch
from torch_geometric.data import Batch


def reference_batch(collator, graphs):
    """The batch built the way the collator did before features: tokenizer with padding, PyG batching."""
    tokens = collator.tokenizer(
        [collator.encoder_text(g.text) for g in graphs],
        padding=True,
        truncation=True,
        max_length=collator.max_length,
        return_tensors="pt",
        return_token_type_ids=True,
    )
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


def test_a_pair_reads_as_one_sequence_with_both_graphs_under_one_root(tiny_encoder, sample_graphs):
    from mathgraph.models.batching import pair_features

    collator = tiny_encoder.collator
    a, b = collator.features(sample_graphs[:2])
    pair = pair_features(a, b)
    tokenizer = collator.tokenizer
    # [CLS] a [SEP] b [SEP], segment 0 then 1: what the tokenizer gives for a text pair
    reference = tokenizer(
        collator.encoder_text(sample_graphs[0].text), collator.encoder_text(sample_graphs[1].text), truncation=False
    )
    a_len = len(a.input_ids)
    assert pair.input_ids.tolist() == a.input_ids.tolist() + b.input_ids[1:].tolist()
    assert pair.token_type_ids.tolist() == [0] * a_len + [1] * (len(b.input_ids) - 1)
    if len(reference["input_ids"]) <= collator.max_length:
        assert pair.input_ids.tolist() == reference["input_ids"]
        assert pair.token_type_ids.tolist() == reference["token_type_ids"]
    # both graphs: a's nodes, then b's without its ROOT; one ROOT (node 0) for both
    na, nb = len(a.node_labels), len(b.node_labels)
    assert len(pair.node_labels) == na + nb - 1
    assert pair.node_kinds.tolist().count(0) == 1 and pair.node_kinds[0] == 0  # NODE_KINDS[0] == "root"
    assert np.array_equal(pair.node_labels[na:], b.node_labels[1:])
    # memory slots from both: a's triplets unchanged, b's with its root moved to 0 and other nodes after a's
    assert len(pair.slot_heads) == len(a.slot_heads) + len(b.slot_heads)
    assert np.array_equal(pair.slot_heads[: len(a.slot_heads)], a.slot_heads)
    moved = [0 if h == 0 else h + na - 1 for h in b.slot_heads.tolist()]
    assert pair.slot_heads[len(a.slot_heads) :].tolist() == moved
    assert (
        (pair.slot_heads[len(a.slot_heads) :] == 0).sum() == (b.slot_heads == 0).sum() > 0
    )  # b's sentences under ROOT
    assert pair.edge_index.shape[1] == a.edge_index.shape[1] + b.edge_index.shape[1]
    assert int(pair.edge_index.max()) == na + nb - 2
    # the graph is still a tree: every node but the root has exactly one parent
    parents = np.bincount(pair.slot_tails, minlength=len(pair.node_labels))
    assert parents[0] == 0 and (parents[1:] == 1).all()
    # batching keeps the segments, padded with 0
    batch = collator.collate([pair, a])
    assert batch.token_type_ids[0].tolist() == pair.token_type_ids.tolist()
    assert batch.token_type_ids[1].sum() == 0


def test_a_pair_longer_than_the_positions_keeps_its_final_sep(tiny_encoder, sample_graphs):
    from mathgraph.models.batching import pair_features

    a, b = tiny_encoder.collator.features(sample_graphs[:2])
    pair = pair_features(a, b, max_length=len(a.input_ids) + 2)
    assert pair.length == len(a.input_ids) + 2
    assert pair.input_ids[-1] == b.input_ids[-1] == tiny_encoder.collator.tokenizer.sep_token_id
    assert pair.token_type_ids.tolist()[-2:] == [1, 1]


def test_a_text_longer_than_the_text_encoder_reads_is_cut_with_a_warning(tiny_encoder):
    import pytest

    from mathgraph.models.batching import ProblemCollator

    limit = 16
    collator = ProblemCollator(tiny_encoder.collator.tokenizer, tiny_encoder.collator.vocab, max_length=limit)
    long_text = " ".join(["seven"] * (3 * limit))
    short = "Find $x$."
    with pytest.warns(UserWarning, match=rf"was cut to the text encoder's first {limit}"):
        ids = collator.token_ids([short, long_text, long_text])
    assert [len(i) for i in ids][1:] == [limit, limit] and len(ids[0]) < limit
    assert collator.truncated == 2
    exact = collator.tokenizer.convert_tokens_to_string(["seven"] * (limit - 2))  # [CLS] + tokens + [SEP]
    assert len(collator.token_ids([exact])[0]) == limit  # as long as it may be: nothing cut, nothing counted
    assert collator.truncated == 2


def test_a_cut_text_gets_the_graph_of_the_part_read(tiny_encoder):
    """The graph of a text cut to ``max_length`` tokens is that of the part the encoder read: a long problem
    costs what ``max_length`` tokens cost, and text and graph speak of the same span."""
    import pytest

    from mathgraph.models.batching import ProblemCollator
    from mathgraph.parsers.problem import ProblemParser

    text = "Tom has 3 apples. Ann has 5 pears. Mia has 7 plums. How many fruit do they have in all?"
    graph = ProblemParser("spacy").parse(text)
    collator = ProblemCollator(tiny_encoder.collator.tokenizer, tiny_encoder.collator.vocab, max_length=10)
    with pytest.warns(UserWarning, match="the rest of its text and graph is not read"):
        [features] = collator.features([graph])
    read = collator.read_chars(text, features.input_ids)
    assert text[:read] == "Tom has 3 apples. Ann has 5"  # [CLS] tom has 3 apples . ann has 5 [SEP]
    kept = [i for i, node in enumerate(graph.nodes) if node.span is None or node.span[0] < read]
    assert 0 < len(kept) == len(features.node_labels) < len(graph.nodes)
    labels = tiny_encoder.collator.vocab.labels.lookup(graph.nodes[i].label for i in kept)
    assert features.node_labels.tolist() == labels
    inside = [(kept.index(e.src), kept.index(e.dst)) for e in graph.edges if e.src in kept and e.dst in kept]
    assert sorted(zip(*features.edge_index[:, : len(inside)].tolist())) == sorted(inside)
    # a text read whole keeps its whole graph
    whole = ProblemCollator(tiny_encoder.collator.tokenizer, tiny_encoder.collator.vocab, max_length=64)
    [features] = whole.features([graph])
    assert len(features.node_labels) == len(graph.nodes) and whole.read_chars(text, features.input_ids) is None


def test_the_numpy_collator_gives_the_torch_collators_arrays(tiny_encoder, sample_graphs):
    """One array-building code: ``ArrayCollator`` (ONNX Runtime's input) and ``ProblemCollator`` (PyTorch's) give
    the same arrays, dtypes included, for single problems, text-only features and pairs."""
    from mathgraph.models.batching import MODEL_INPUTS, ArrayCollator, pair_features

    torch_collator = tiny_encoder.collator
    numpy_collator = ArrayCollator(torch_collator.tokenizer, torch_collator.vocab, torch_collator.max_length)
    graphs = sample_graphs[:5]
    features = numpy_collator.features(graphs)
    pair = pair_features(features[0], features[1])
    cases = [
        (numpy_collator(graphs), torch_collator(graphs)),
        (
            numpy_collator.collate(numpy_collator.text_features([g.text for g in graphs]), problem_ids=[4, 2, 0, 1, 3]),
            torch_collator.collate(torch_collator.text_features([g.text for g in graphs]), problem_ids=[4, 2, 0, 1, 3]),
        ),
        (numpy_collator.collate([pair, features[2]]), torch_collator.collate([pair, features[2]])),
    ]
    for arrays, batch in cases:
        assert isinstance(arrays["input_ids"], np.ndarray)
        for name in MODEL_INPUTS:
            tensor = getattr(batch, name)
            assert arrays[name].dtype == tensor.numpy().dtype, name
            assert np.array_equal(arrays[name], tensor.numpy()), name
    assert cases[1][0]["problem_ids"].tolist() == cases[1][1].problem_ids.tolist() == [4, 2, 0, 1, 3]
    # the PyTorch batch shares the arrays' memory: nothing is copied to make it
    arrays = numpy_collator.collate(features)
    batch = torch_collator.collate(features)
    assert np.array_equal(arrays["edge_index"], batch.edge_index.numpy())
    assert batch.slot_mask.dtype == torch.bool and batch.input_ids.dtype == torch.long


def test_features_take_tensors_as_int64_arrays():
    from mathgraph.models.batching import ProblemFeatures

    features = ProblemFeatures(torch.tensor([101, 7, 102]), node_labels=[3, 4], edge_index=torch.tensor([[0], [1]]))
    assert isinstance(features.input_ids, np.ndarray) and features.input_ids.dtype == np.int64
    assert features.node_labels.tolist() == [3, 4] and features.edge_index.shape == (2, 1)
    assert features.segments.tolist() == [0, 0, 0] and features.length == 3


def test_length_order_sorts_by_token_count_then_node_count():
    from mathgraph.models.batching import ProblemFeatures, length_order

    def problem(tokens, nodes):
        return ProblemFeatures(np.arange(tokens), node_labels=np.ones(nodes, dtype=np.int64))

    # characters would put the long text of few tokens last; the tokens are what a batch pads
    features = [problem(9, 2), problem(3, 5), problem(9, 1), problem(3, 2), problem(12, 0)]
    assert length_order(features) == [3, 1, 2, 0, 4]


def test_encoding_in_length_order_puts_vectors_back_in_input_order(tiny_encoder, sample_graphs):
    from mathgraph.models.batching import ArrayCollator, encode_in_length_order

    torch_collator = tiny_encoder.collator
    collator = ArrayCollator(torch_collator.tokenizer, torch_collator.vocab, torch_collator.max_length)
    graphs = list(sample_graphs[:5])
    seen = []

    def vectors_of(batch):  # each problem's vector: its token count and node count, as the batch holds them
        seen.append(batch["input_ids"].shape[0])
        return np.stack(
            [batch["attention_mask"].sum(1), np.bincount(batch["node_batch"], minlength=len(batch["attention_mask"]))],
            1,
        )

    vectors = encode_in_length_order(graphs, "spacy", collator, 2, 2, vectors_of, show_progress=False)
    features = collator.features(graphs)
    assert vectors[:, 0].tolist() == [len(f.input_ids) for f in features]
    assert vectors[:, 1].tolist() == [len(f.node_labels) for f in features]
    assert seen == [2, 2, 1]
