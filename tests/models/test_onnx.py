"""The ONNX Runtime forward: graphs exported without weights compute what the PyTorch models compute."""

import json

import numpy as np
import pytest
import torch

from mathgraph.registry import CheckpointError

TOLERANCE = 1e-4


def _batches(encoder, graphs, sizes):
    """Collated batches of ``graphs`` cut into ``sizes`` (each a different shape)."""
    start, out = 0, []
    for size in sizes:
        out.append(encoder.collator(graphs[start : start + size]))
        start += size
    return out


@pytest.fixture(scope="module")
def exported(build_tiny_encoder, sample_vocab, sample_graphs, tmp_path_factory):
    """A tiny COMUS encoder and its graph exported (once: an export takes tens of seconds)."""
    from mathgraph.models.onnx_export import export_comus

    directory = tmp_path_factory.mktemp("onnx")
    sample_vocab.save_pretrained(directory)
    (directory / "latex_tokens.json").write_text(json.dumps(["\\frac", "\\in", "\\angle"]))
    encoder = build_tiny_encoder(directory)
    export_comus(encoder.model, encoder.collator(sample_graphs[:3]), directory / "comus.onnx")
    return encoder, directory / "comus.onnx"


def test_comus_graph_matches_pytorch_on_batches_of_every_shape(exported, sample_graphs):
    from mathgraph.models.onnx_forward import OnnxNetwork
    from mathgraph.models.onnx_package import batch_arrays

    encoder, graph = exported
    model = encoder.model
    names = json.loads(graph.with_suffix(".names.json").read_text())
    assert names and all(weight in model.state_dict() for weight in names.values())
    # the graph holds no weights: every parameter is left outside, named as in the PyTorch model
    assert graph.stat().st_size < 200_000
    weights = {name: tensor.numpy() for name, tensor in model.state_dict().items()}
    network = OnnxNetwork(graph, weights)
    # one problem, then sizes unlike the traced batch (other lengths, node, edge and slot counts)
    padded = 0
    for batch in _batches(encoder, sample_graphs, [1, 5, 2]):
        with torch.inference_mode():
            expected = model(**batch.as_model_inputs())
        out = network.run(batch_arrays(batch))
        assert out["token_states"].shape == tuple(expected.token_states.shape)
        real = batch.attention_mask.numpy().astype(bool)
        padded += int((~real).sum())
        # the real tokens' states are PyTorch's; the text layers compute no padding, which stays zero
        np.testing.assert_allclose(out["token_states"][real], expected.token_states.numpy()[real], atol=TOLERANCE)
        assert not out["token_states"][~real].any()
        np.testing.assert_allclose(out["mean_node"], expected.mean_node.numpy(), atol=TOLERANCE)
    assert padded > 0  # the batches of several problems have padding


def test_the_exported_text_layers_are_fused_and_read_real_tokens_only(exported):
    """One ``Attention`` node per text layer, its mask given the queries' dimension (ONNX Runtime's CPU kernel
    reads no other), GELU as one ``Gelu`` node, and the token products run on the real tokens (``NonZero``)."""
    import onnx

    encoder, graph = exported
    layers = len(encoder.model.text.encoder.layer)
    model = onnx.load(str(graph), load_external_data=False)
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("Attention") == ops.count("Gelu") == ops.count("NonZero") == layers
    assert "Erf" not in ops and "Softmax" in ops  # the memory layers' own attention stays as it is
    producers = {output: node for node in model.graph.node for output in node.output}
    masks = {node.input[3] for node in model.graph.node if node.op_type == "Attention"}
    assert len(masks) == 1 and producers[masks.pop()].op_type == "Expand"
    perms = [list(a.ints) for node in model.graph.node if node.op_type == "Transpose" for a in node.attribute]
    assert perms and all(perm != sorted(perm) for perm in perms)  # no transpose that leaves the axes in place


def test_a_packed_text_layer_computes_the_bert_layer_on_real_tokens(tiny_encoder):
    from mathgraph.models.comus import additive_attention_mask
    from mathgraph.models.onnx_export import packed_text_layer

    torch.manual_seed(3)
    layer = tiny_encoder.model.text.encoder.layer[0]
    hidden = torch.randn(3, 7, layer.attention.self.all_head_size)
    mask = torch.tensor([[1] * 7, [1] * 4 + [0] * 3, [1] * 2 + [0] * 5])
    additive = additive_attention_mask(mask, hidden)
    with torch.inference_mode():
        expected = layer(hidden, attention_mask=additive)
        expected = expected[0] if isinstance(expected, tuple) else expected
        got = packed_text_layer(layer, hidden, additive)
    real = mask.bool()
    torch.testing.assert_close(got[real], expected[real], atol=TOLERANCE, rtol=0)
    assert not got[~real].any() and expected[~real].abs().sum() > 0  # PyTorch computes the padding too


def test_the_sorted_gat_sum_is_the_gat_layer_on_unsorted_edges_and_nodes_without_any():
    from mathgraph.models.gat import GraphAttentionLayer
    from mathgraph.models.onnx_export import gat_forward_sorted

    torch.manual_seed(5)
    conv = GraphAttentionLayer(16, 2, 4).eval().attention
    x = torch.randn(7, 16)
    # edges in no order; node 5 receives three, nodes 3, 4 and 6 none (no self-loops: the layer gets them given)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 0, 6], [1, 1, 0, 5, 5, 5, 2]])
    edge_attr = torch.randn(7, 4)
    with torch.inference_mode():
        expected = conv(x, edge_index, edge_attr)
        got = gat_forward_sorted(conv, x, edge_index, edge_attr)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)
    assert torch.equal(got[[3, 4, 6]], conv.bias.expand(3, -1))  # nothing received: the bias alone


def test_the_exported_gat_sums_its_messages_in_order_and_the_same_every_time(exported, sample_graphs):
    """Each GAT layer sorts its edges by target (``TopK``) and sums the messages as differences of a running sum
    (``CumSum``; one more for the segments' ends); no ``ScatterND`` (which adds on several threads) is added, so
    the outputs are the same bit for bit from run to run."""
    import onnx

    from mathgraph.models.onnx_forward import OnnxNetwork
    from mathgraph.models.onnx_package import batch_arrays

    encoder, graph = exported
    model = onnx.load(str(graph), load_external_data=False)
    ops = [node.op_type for node in model.graph.node]
    gat_layers, text_layers = len(encoder.model.graph.layers), len(encoder.model.text.encoder.layer)
    assert ops.count("TopK") == gat_layers and ops.count("CumSum") == 2 * gat_layers
    assert ops.count("ScatterND") == 2 * text_layers  # the packed text layers' index_copy only
    weights = {name: tensor.numpy() for name, tensor in encoder.model.state_dict().items()}
    network = OnnxNetwork(graph, weights, threads=2)
    batch = batch_arrays(encoder.collator(sample_graphs[:6]))
    first = network.run(batch)
    for _ in range(3):
        again = network.run(batch)
        assert all(np.array_equal(first[name], again[name]) for name in first)


def test_heads_match_pytorch(tmp_path):
    from mathgraph.models.heads import BiEncoderScorer, ClassificationHead
    from mathgraph.models.onnx_export import export_head
    from mathgraph.models.onnx_forward import OnnxNetwork
    from mathgraph.models.task_heads import get_task_head

    torch.manual_seed(0)
    qam = get_task_head("qam").with_pair_mode("cross").with_alignment(True, ["steps", "operands"])
    sqr = get_task_head("sqr").with_alignment(True, ["sentences_a"])
    cases = [
        (get_task_head("kpc"), ClassificationHead(12, 5), {"vectors": torch.randn(4, 12)}),
        (
            qam,
            ClassificationHead(12, 2, alignment_dim=2),
            {"vectors": torch.randn(3, 12), "alignment": torch.rand(3, 2) * 9},
        ),
        (
            sqr,
            BiEncoderScorer(12, projection_dim=6, alignment_dim=1),
            {"queries": torch.randn(2, 12), "candidates": torch.randn(2, 5, 12), "alignment": torch.rand(2, 5, 1)},
        ),
    ]
    for task, head, feeds in cases:
        head.eval()
        path = export_head(head, task, 12, tmp_path / f"head_{task.name}.onnx")
        network = OnnxNetwork(path, {k: v.detach().numpy() for k, v in head.state_dict().items()})
        with torch.inference_mode():
            expected = head(*feeds.values())
        (out,) = network.run({k: v.numpy() for k, v in feeds.items()}).values()
        np.testing.assert_allclose(out, expected.numpy(), atol=TOLERANCE)


def test_deltas_are_rebuilt_in_numpy_as_pytorch_rebuilds_them(tmp_path):
    from mathgraph.models.delta import apply_delta, save_delta
    from mathgraph.models.onnx_forward import apply_delta_arrays

    torch.manual_seed(1)
    base = {"a": torch.randn(3, 4), "rows": torch.randn(2, 4), "same": torch.randn(5)}
    weights = {
        "a": base["a"] + 0.1,
        "rows": torch.cat([base["rows"], torch.randn(3, 4)]),  # rows appended (new tokens)
        "same": base["same"].clone(),
        "new": torch.randn(2, 2),  # not in the base: stays fp16 in the file
    }
    save_delta(tmp_path / "d.safetensors", weights, base)
    expected = apply_delta(base, tmp_path / "d.safetensors")
    got = apply_delta_arrays({k: v.numpy() for k, v in base.items()}, tmp_path / "d.safetensors")
    assert sorted(got) == sorted(expected)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name].numpy())
    (tmp_path / "bad.safetensors").write_bytes(b"\x00" * 20)
    with pytest.raises(CheckpointError, match="truncated or not safetensors"):
        apply_delta_arrays({}, tmp_path / "bad.safetensors")


def test_a_graph_without_its_weights_is_a_clear_error(exported, tmp_path):
    import shutil

    from mathgraph.models.onnx_forward import OnnxNetwork

    encoder, graph = exported
    weights = {name: t.numpy() for name, t in encoder.model.state_dict().items()}
    weights.pop("graph.label_embedding.weight")
    with pytest.raises(CheckpointError, match="graph.label_embedding.weight"):
        OnnxNetwork(graph, weights)
    alone = shutil.copy(graph, tmp_path / "comus.onnx")  # without its .names.json
    with pytest.raises(CheckpointError, match="weight names"):
        OnnxNetwork(alone, weights)


@pytest.mark.slow
def test_the_shipped_package_predicts_the_same_under_both_runtimes():
    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR
    from mathgraph.samples import sample_problems

    onnx = ModelPackage(SHIPPED_DIR, device="cpu")
    torch_package = ModelPackage(SHIPPED_DIR, device="cpu", runtime="torch")
    assert onnx.runtime == "onnx"  # the default where the package carries graphs
    texts = [row["problem"] for row in sample_problems()]
    for mode in ("joint", "text", "graph"):
        np.testing.assert_allclose(
            onnx.encode(texts, mode=mode), torch_package.encode(texts, mode=mode), atol=TOLERANCE
        )
    pairs = [(texts[0], texts[1]), (texts[2], texts[2])]
    inputs = {
        "kpc": texts[:4],
        "qrc": pairs,
        "qam": [(texts[0], "First 2 + 3 = 5. The answer is 5."), (texts[1], "The answer is 8.")],
        "sqr": [(texts[0], texts[1:5]), (texts[5], texts[:2])],
    }
    for task, rows in inputs.items():
        expected = torch_package.predictor(task, hybrid=False).predict(rows)
        got = onnx.predictor(task, hybrid=False).predict(rows)
        for a, b in zip(got, expected, strict=True):
            if "label" in b:
                assert a["label"] == b["label"]
                assert list(a["probabilities"]) == list(b["probabilities"])  # same labels, same order
                np.testing.assert_allclose(
                    list(a["probabilities"].values()), list(b["probabilities"].values()), atol=TOLERANCE
                )
            else:
                assert a["ranking"] == b["ranking"]
                np.testing.assert_allclose(a["scores"], b["scores"], atol=TOLERANCE)


def test_runtime_choice_is_checked(tmp_path):
    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR

    with pytest.raises(ValueError, match="unknown runtime"):
        ModelPackage(SHIPPED_DIR, runtime="tensorrt")
    with pytest.raises(ValueError, match="runs on the CPU"):
        ModelPackage(SHIPPED_DIR, device="cuda", runtime="onnx")
    assert ModelPackage(SHIPPED_DIR, device="cuda").runtime == "torch"  # a GPU asked for: PyTorch


def test_search_first_stage_runs_minilm_on_onnx_with_the_same_vectors_and_identity():
    from mathgraph.tasks.search.embedders import OnnxTextEmbedder, TextEmbedder, load_embedder

    texts = ["Find $x$ if $2x+3=7$.", "x", "How many apples? " * 200]  # one text cut at 256 tokens
    onnx, pytorch = load_embedder("text:minilm"), load_embedder("text:minilm", runtime="torch")
    assert isinstance(onnx, OnnxTextEmbedder) and isinstance(pytorch, TextEmbedder)
    np.testing.assert_allclose(onnx.encode(texts, batch_size=2), pytorch.encode(texts), atol=TOLERANCE)
    assert onnx.identity() == pytorch.identity()  # an index built by one is searched by the other


def test_search_with_the_package_encoder_runs_on_onnx_with_the_same_vectors_and_identity(tmp_path):
    from mathgraph.tasks.search.embedders import MathEncoderEmbedder, OnnxEncoderEmbedder, load_embedder
    from mathgraph.tasks.search.index import SearchIndex

    texts = ["Find $x$ if $2x+3=7$.", "Tom has 3 apples and buys 4 more. How many does he have?"]
    onnx, pytorch = load_embedder("shipped", mode="joint"), load_embedder("shipped", mode="joint", runtime="torch")
    assert isinstance(onnx, OnnxEncoderEmbedder) and isinstance(pytorch, MathEncoderEmbedder)
    np.testing.assert_allclose(onnx.encode(texts, batch_size=1), pytorch.encode(texts), atol=TOLERANCE)
    assert onnx.identity() == pytorch.identity()  # the float16-stored weights hash as the float32 ones
    assert load_embedder("shipped", mode="graph").identity()["mode"] == "graph"
    # an index built on PyTorch is searched on ONNX Runtime
    SearchIndex.build([{"problem": t} for t in texts], pytorch, text_field="problem").save_pretrained(tmp_path)
    index = SearchIndex.from_pretrained(tmp_path)  # "auto": the model that built it, on ONNX Runtime now
    assert isinstance(index.embedder, OnnxEncoderEmbedder)
    assert [hits[0].index for hits in index.search(texts, k=1)] == [0, 1]


def test_an_int8_copy_is_made_once_and_stays_close_to_float32(exported, sample_graphs, tmp_path):
    import re

    import onnx

    from mathgraph.models.onnx_forward import Int8Recipe, OnnxNetwork, quantized_graph
    from mathgraph.models.onnx_package import batch_arrays

    encoder, graph = exported
    weights = {name: t.numpy() for name, t in encoder.model.state_dict().items()}
    # the tiny encoder has 3 text layers: its last two layers' feed-forward products, as the shipped recipe picks
    # the shipped encoder's last layers
    recipe = Int8Recipe(weights=r"\.layer\.[12]\.(intermediate|output)\.dense\.weight$")
    path = quantized_graph(graph, weights, tmp_path, recipe)
    assert path.parent == tmp_path and "int8" in path.name
    assert quantized_graph(graph, weights, tmp_path, recipe) == path  # the same graph and weights: the copy made before
    changed = {**weights, "graph.label_embedding.weight": weights["graph.label_embedding.weight"] + 1}
    assert quantized_graph(graph, changed, tmp_path, recipe) != path  # other weights: another copy
    assert quantized_graph(graph, weights, tmp_path, Int8Recipe(recipe.weights, reduce_range=False)) != path
    batch = batch_arrays(encoder.collator(sample_graphs[:4]))
    exact = OnnxNetwork(graph, weights).run(batch)["mean_node"]
    int8 = OnnxNetwork(path, None).run(batch)["mean_node"]
    cosine = (exact * int8).sum(1) / np.linalg.norm(exact, axis=1) / np.linalg.norm(int8, axis=1)
    assert cosine.min() > 0.9 and not np.array_equal(exact, int8)
    # only the chosen products are int8: the two feed-forward products of layers 1 and 2, each reading its weight
    model = onnx.load(str(path), load_external_data=False)
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("MatMulInteger") == ops.count("DynamicQuantizeLinear") == 4
    quantized = sorted(node.input[1] for node in model.graph.node if node.op_type == "MatMulInteger")
    assert len(quantized) == 4 and all(re.search(r"\.layer\.[12]\.", name) for name in quantized), quantized
    assert ops.count("Gemm") + ops.count("MatMul") > 0  # the rest stays float32


def test_the_int8_copy_picks_products_by_the_weights_they_are_made_of():
    from onnx import helper, numpy_helper

    from mathgraph.models.onnx_forward import INT8_RECIPE, quantized_products, weight_sources

    def product(name, op, weight):
        return helper.make_node(op, ["x", weight], [name], name=name)

    layer = "network.text.encoder.layer.{}.".format
    weights = (
        [
            f"{layer(i)}{part}.weight"
            for i in (0, 4)
            for part in ("attention.self.query", "attention.self.key", "attention.self.value", "intermediate.dense")
        ]
        + [f"{layer(i)}output.dense.weight" for i in (0, 3, 5)]
        + [f"{layer(0)}attention.output.dense.weight"]
    )
    initializers = [numpy_helper.from_array(np.zeros((2, 2), np.float32), name) for name in weights]
    initializers.append(
        numpy_helper.from_array(np.zeros((2, 2), np.float32), "network.graph.layers.0.attention.lin.weight")
    )
    nodes = [
        helper.make_node(
            "Concat",
            [f"{layer(i)}attention.self.{p}.weight" for p in ("query", "key", "value")],
            [f"qkv{i}"],
            name=f"cat{i}",
            axis=0,
        )
        for i in (0, 4)
    ] + [
        product("qkv_0", "Gemm", "qkv0"),
        product("qkv_4", "Gemm", "qkv4"),
        product("ff_in_0", "Gemm", f"{layer(0)}intermediate.dense.weight"),
        product("ff_in_4", "Gemm", f"{layer(4)}intermediate.dense.weight"),
        product("ff_out_0", "MatMul", f"{layer(0)}output.dense.weight"),
        product("ff_out_3", "Gemm", f"{layer(3)}output.dense.weight"),
        product("ff_out_5", "MatMul", f"{layer(5)}output.dense.weight"),
        product("attention_out", "Gemm", f"{layer(0)}attention.output.dense.weight"),
        product("gat", "Gemm", "network.graph.layers.0.attention.lin.weight"),
        product("scores", "MatMul", "view_3"),  # an activation, not a weight
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, None)], [], initializers)
    graph.input.append(helper.make_tensor_value_info("view_3", 1, None))
    model = helper.make_model(graph)
    # the fused query-key-value weight is followed back to its three initializers; an input has none
    assert weight_sources(model, "qkv4") == [f"{layer(4)}attention.self.{p}.weight" for p in ("query", "key", "value")]
    assert weight_sources(model, "view_3") == []
    # the shipped recipe: the feed-forward products of the last three text layers (3 to 5), nothing else
    assert quantized_products(model, INT8_RECIPE.weights) == [
        "ff_in_4",
        "ff_in_4_MatMul",
        "ff_out_3",
        "ff_out_3_MatMul",
        "ff_out_5",
    ]
    # every product of the text layers, the fused query-key-value ones included
    assert quantized_products(model, r"\.layer\.\d+\.") == [
        "qkv_0",
        "qkv_0_MatMul",
        "qkv_4",
        "qkv_4_MatMul",
        "ff_in_0",
        "ff_in_0_MatMul",
        "ff_in_4",
        "ff_in_4_MatMul",
        "ff_out_0",
        "ff_out_3",
        "ff_out_3_MatMul",
        "ff_out_5",
        "attention_out",
        "attention_out_MatMul",
    ]


def test_the_shipped_int8_recipe_quantizes_the_last_layers_feed_forward_products():
    """On the shipped encoder's graph as exported: the products ``--runtime onnx-int8`` makes int8 are the
    feed-forward products of text layers 3, 4 and 5 (two each), every one read from its own weight; the attention
    projections, the first three layers, the GAT and the memory stay float32."""
    import onnx

    from mathgraph.models.onnx_forward import INT8_RECIPE, quantized_products, weight_sources
    from mathgraph.registry import SHIPPED_DIR

    model = onnx.load(str(SHIPPED_DIR / "onnx" / "comus.onnx"), load_external_data=False)
    nodes = {node.name: node for node in model.graph.node}
    chosen = [name for name in quantized_products(model, INT8_RECIPE.weights) if name in nodes]
    sources = sorted(w for name in chosen for w in weight_sources(model, nodes[name].input[1]))
    assert sources == sorted(
        f"network.text.encoder.layer.{i}.{part}.dense.weight" for i in (3, 4, 5) for part in ("intermediate", "output")
    )


def test_the_shipped_int8_runtime_runs_the_recipe_and_stays_close_to_float32(tmp_path, monkeypatch):
    """``--runtime onnx-int8`` on the shipped package: its int8 copy holds six int8 products, those of the last
    three text layers' feed-forward part, and its joint vectors stay close to the float32 ones."""
    import re

    import onnx

    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path))
    texts = [
        "Find $x$ if $2x+3=7$.",
        "A circle has radius 3. What is its area?",
        "How many ways can 5 people sit in a row of 5 chairs?",
        "Tom has 3 apples and buys 4 more. How many apples does he have?",
    ]
    exact = ModelPackage(SHIPPED_DIR, device="cpu", runtime="onnx").encode(texts)
    int8 = ModelPackage(SHIPPED_DIR, device="cpu", runtime="onnx-int8").encode(texts)
    relative = np.linalg.norm(int8 - exact, axis=1) / np.linalg.norm(exact, axis=1)
    assert 0 < relative.max() < 0.15, relative  # quantized, and close (3.9% on average over 128 KPC dev problems)
    (copy,) = (tmp_path / "onnx-int8").glob("comus-int8-*.onnx")
    model = onnx.load(str(copy), load_external_data=False)
    products = [node.input[1] for node in model.graph.node if node.op_type == "MatMulInteger"]
    layers = sorted(re.search(r"layer\.(\d)\.(intermediate|output)\.dense", name).groups() for name in products)
    assert layers == [(str(i), part) for i in (3, 4, 5) for part in ("intermediate", "output")]


def test_an_optimised_copy_computes_exactly_what_the_graph_computes(exported, sample_graphs, tmp_path):
    import os

    from mathgraph.models.onnx_forward import OnnxNetwork, optimised_copy, sources_key
    from mathgraph.models.onnx_package import batch_arrays

    encoder, graph = exported
    weights = {name: t.numpy() for name, t in encoder.model.state_dict().items()}
    path = optimised_copy(graph, weights, tmp_path / "copy")
    assert path == tmp_path / "copy" / "model.onnx" and (path.parent / "weights.bin").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]  # no work folder left behind
    copy = OnnxNetwork(path, None, optimised=True)
    reference = OnnxNetwork(graph, weights)
    for size in (1, 4):
        batch = batch_arrays(encoder.collator(sample_graphs[:size]))
        got, expected = copy.run(batch), reference.run(batch)
        for name in ("token_states", "mean_node"):
            np.testing.assert_array_equal(got[name], expected[name])  # exact, not merely close
    assert optimised_copy(graph, weights, tmp_path / "copy") == path  # written already: kept
    # the key follows the weights' files: their size and modification time, not their bytes read again
    source = tmp_path / "weights.safetensors"
    source.write_bytes(b"1234")
    key = sources_key(graph, [source])
    assert sources_key(graph, [source]) == key
    assert sources_key(graph, [source], variant="int8") != key
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 1_000_000))
    assert sources_key(graph, [source]) != key
    weights.pop("graph.label_embedding.weight")
    with pytest.raises(CheckpointError, match="graph.label_embedding.weight"):
        optimised_copy(graph, weights, tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_the_package_loads_its_sessions_from_optimised_copies_made_once(tmp_path, monkeypatch):
    from mathgraph.models.onnx_package import OnnxPackageRuntime
    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path))
    text = ["Find $x$ if $2x+3=7$."]
    first = ModelPackage(SHIPPED_DIR, device="cpu").predictor("kpc", hybrid=False).predict(text)
    copies = sorted(p.name.split("-")[0] for p in (tmp_path / "onnx-sessions").iterdir())
    assert copies == ["comus", "head_kpc"]

    def no_weights(self):
        raise AssertionError("the weights were read again")

    monkeypatch.setattr(OnnxPackageRuntime, "multitask_weights", no_weights)
    again = ModelPackage(SHIPPED_DIR, device="cpu").predictor("kpc", hybrid=False).predict(text)
    assert again == first  # the same probabilities, to the last bit


def test_where_the_cache_cannot_be_written_sessions_are_built_in_memory(tmp_path, monkeypatch):
    from mathgraph.models.package import ModelPackage
    from mathgraph.parsers.graph_cache import ParsedGraphs
    from mathgraph.registry import SHIPPED_DIR

    text = ["Find $x$ if $2x+3=7$."]

    def predict():  # parsed in memory: no graph cache file either
        predictor = ModelPackage(SHIPPED_DIR, device="cpu").predictor("kpc", hybrid=False)
        return predictor.predict(text, graphs=ParsedGraphs(None))

    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    expected = predict()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(blocked))  # its onnx-sessions folder cannot be made
    assert predict() == expected
    assert blocked.read_text() == "not a folder"


def test_older_copies_of_a_network_are_deleted_beyond_the_two_used_last(tmp_path):
    """Each upgrade of the weights or of ONNX Runtime makes a new copy: the two used last of a network and variant
    stay, older ones go, other networks' and variants' copies and half-written folders are left alone."""
    import os

    from mathgraph.models.onnx_package import prune_copies

    sessions = tmp_path / "onnx-sessions"
    names = ["comus-float32-a", "comus-float32-b", "comus-float32-c", "comus-int8-a", "head_kpc-float32-a"]
    for age, name in enumerate(names + [".comus-float32-partial"]):
        (sessions / name).mkdir(parents=True)
        (sessions / name / "model.onnx").write_bytes(b"")
        os.utime(sessions / name, (1_000_000 + age, 1_000_000 + age))  # later in the list: used later
    prune_copies(sessions / "comus-float32-a")  # the oldest is used now: it and the newest other one stay
    assert sorted(p.name for p in sessions.iterdir()) == [
        ".comus-float32-partial",
        "comus-float32-a",
        "comus-float32-c",
        "comus-int8-a",
        "head_kpc-float32-a",
    ]
