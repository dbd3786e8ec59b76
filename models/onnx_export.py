"""Export the package's networks to ONNX graphs whose weights stay outside (``models.onnx_forward`` runs them).

``export_package_graphs(package, directory)`` writes, for a package whose multi-task model has no adapter
(the shipped one):

    comus.onnx       the COMUS encoder (text layers, GAT, memory): a ``ProblemBatch``'s arrays ->
                     ``token_states [B, L, d_text]`` and ``mean_node [B, d_gat]``; the pre-trained encoder
                     and the multi-task model's backbone are this one graph with two sets of weights
    text.onnx        the text encoder alone (search's first stage, all-MiniLM-L6-v2): ``input_ids``,
                     ``attention_mask``, ``token_type_ids`` -> ``token_states``
    head_TASK.onnx   each task's head: ``vectors [B, d]`` (and ``alignment [B, F]``) -> ``logits``; SQR:
                     ``queries [B, d]``, ``candidates [B, N, d]`` (and ``alignment [B, N, F]``) -> ``scores``

and beside each graph ``NAME.names.json``: which of the network's weights (by their PyTorch names) each
external initializer of the graph is.

The graphs are written at opset 23, whose ``Attention`` and ``Gelu`` operators ONNX Runtime (1.23 and later) runs
as one kernel each; in ``comus.onnx`` the text layers compute the batch's real tokens only (``packed_text_layer``),
so its ``token_states`` are PyTorch's at real tokens and zero at padding (what reads them pools over real tokens
or takes ``[CLS]``). The graphs hold no weights (a few hundred KB each): the weights are
already in the package, once, and are put in when a session starts. Exporting needs ``onnx`` and
``onnxscript`` (the ``train`` extra); running the graphs needs only ``onnxruntime``.
"""

from __future__ import annotations

import json
import logging
import tempfile
import warnings
from os import PathLike
from pathlib import Path

import torch
from torch import nn

from mathgraph.models.batching import MODEL_INPUTS, ProblemBatch

PREFIX = "network."  # the attribute under which the exported wrappers hold their module
COMUS_INPUTS = MODEL_INPUTS  # the COMUS graph's inputs, in ComusModel.forward's order
TEXT_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 23  # ScatterElements with max/min reductions (the GAT's segment softmax, 18); Attention and Gelu (23, 20)


class _ComusGraph(nn.Module):
    def __init__(self, network: nn.Module):
        super().__init__()
        self.network = network

    def forward(self, *inputs: torch.Tensor):
        output = self.network(**dict(zip(COMUS_INPUTS, inputs)))
        return output.token_states, output.mean_node


class _TextGraph(nn.Module):
    def __init__(self, network: nn.Module):
        super().__init__()
        self.network = network

    def forward(self, input_ids, attention_mask, token_type_ids):
        output = self.network(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return output.last_hidden_state


class _HeadGraph(nn.Module):
    def __init__(self, network: nn.Module):
        super().__init__()
        self.network = network

    def forward(self, *inputs: torch.Tensor):
        return self.network(*inputs)


def export_comus(
    model: nn.Module, batch: ProblemBatch, path: str | PathLike, packed: bool = True, sorted_sums: bool = True
) -> Path:
    """``comus.onnx`` of ``model`` (a ``ComusModel``), traced on ``batch`` (two or more problems, with
    graphs); every size is dynamic. ``packed``: the text layers compute the batch's real tokens only
    (``packed_text_layer``), and ``token_states`` is zero at padding. ``sorted_sums``: the GAT sums its
    messages as segments of the edges sorted by target (``gat_forward_sorted``), not with ``ScatterElements``."""
    batch_dim, length, nodes, edges, slots = (
        torch.export.Dim("batch", min=1),
        torch.export.Dim("length", min=2, max=512),
        torch.export.Dim("nodes", min=2),
        torch.export.Dim("edges", min=1),
        torch.export.Dim("slots", min=1),
    )
    per_problem, per_slot = {0: batch_dim, 1: length}, {0: batch_dim, 1: slots}
    dynamic = (
        per_problem,
        per_problem,
        per_problem,
        {0: nodes},
        {0: nodes},
        {0: nodes},
        {1: edges},
        {0: edges},
        per_slot,
        per_slot,
        per_slot,
        per_slot,
    )
    inputs = batch.as_model_inputs()
    with _text_layers_packed(packed), _gat_sums_sorted(sorted_sums):
        return _export(
            _ComusGraph(model),
            tuple(inputs[name] for name in COMUS_INPUTS),
            COMUS_INPUTS,
            ("token_states", "mean_node"),
            (dynamic,),  # the wrapper takes *inputs: one entry, the tuple of their shapes
            path,
        )


def packed_text_layer(layer: nn.Module, hidden: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
    """A BERT layer (``BertLayer``: self-attention, its output, the feed-forward part) on ``hidden`` ``[B, L, d]``
    computed as the layer computes it, with every per-token product (the query, key and value projections as one,
    the attention's output and the feed-forward layers) run on the real tokens of ``additive_mask``
    (``[B, 1, 1, L]``, 0 at real tokens) only; the states at padding are zero. The real tokens' states are
    the layer's own (the attention reads only them), so padding costs nothing but the attention's scores: on
    MATH batches of 32, sorted by length, 40% of the positions are padding."""
    attention = layer.attention.self
    batch, length, width = hidden.shape
    heads, size = attention.num_attention_heads, attention.attention_head_size
    real = torch.nonzero(additive_mask.reshape(-1) == 0).squeeze(1)  # positions of real tokens in [B * L]
    tokens = hidden.reshape(batch * length, width).index_select(0, real)
    # one product for the query, key and value (ONNX Runtime folds the weights' Concat once, at the session's start)
    products = (attention.query, attention.key, attention.value)
    projected = nn.functional.linear(
        tokens, torch.cat([p.weight for p in products]), torch.cat([p.bias for p in products])
    )
    padded = tokens.new_zeros(batch * length, 3 * width).index_copy(0, real, projected)
    query, key, value = padded.view(batch, length, 3, heads, size).permute(2, 0, 3, 1, 4).unbind(0)
    context = nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=additive_mask, scale=attention.scaling
    )
    context = context.transpose(1, 2).reshape(batch * length, width).index_select(0, real)
    states = layer.attention.output.LayerNorm(layer.attention.output.dense(context) + tokens)
    states = layer.output.LayerNorm(layer.output.dense(layer.intermediate(states)) + states)
    return tokens.new_zeros(batch * length, width).index_copy(0, real, states).view(batch, length, width)


def gat_forward_sorted(conv: nn.Module, x: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor):
    """``FoldedEdgeGATConv.forward`` (``GATConv``'s, one set of node features, no self-loops added, no residual)
    with the messages summed at their targets without a scatter: the edges are sorted by target, the messages'
    running sum is taken in float64 (``CumSum``) and each node's sum is the difference of the running sum at
    the ends of its segment. ONNX Runtime runs ``ScatterElements`` one element at a time on one thread (the
    16% of the encoder's time the GAT's sums took); the sort, the running sum and the gathers are two to three
    times faster, deterministic, and in float64 the difference loses nothing a float32 sum keeps (the sums
    differ from PyTorch's by float32 rounding, about 1e-6). The attention's softmax (sums over ``[E, heads]``,
    1/64 of the messages' size) is PyG's."""
    heads, channels = conv.heads, conv.out_channels
    nodes = x.shape[0]
    projected = conv.lin(x).view(-1, heads, channels)
    alpha_src = (projected * conv.att_src).sum(-1)
    alpha_dst = (projected * conv.att_dst).sum(-1)
    source, target = edge_index[0], edge_index[1]
    alpha = conv.edge_update(
        alpha_src.index_select(0, source), alpha_dst.index_select(0, target), edge_attr, target, None, nodes
    )
    messages = (alpha.unsqueeze(-1) * projected.index_select(0, source)).reshape(-1, heads * channels)
    order = torch.argsort(target)
    running = messages.index_select(0, order).to(torch.float64).cumsum(0)
    running = torch.cat([running.new_zeros(1, heads * channels), running])  # row e: the sum of the first e edges
    # scatter_add (ONNX ScatterElements, run in order), not index_add: ONNX Runtime's ScatterND adds on several
    # threads at once and loses counts
    counts = torch.zeros(nodes, dtype=torch.int64, device=x.device).scatter_add(0, target, torch.ones_like(target))
    ends = counts.cumsum(0)
    out = (running.index_select(0, ends) - running.index_select(0, ends - counts)).to(x.dtype)
    if conv.res is not None:
        out = out + conv.res(x)
    if conv.bias is not None:
        out = out + conv.bias
    return out


class _gat_sums_sorted:
    """While in the block (and ``on``), ``FoldedEdgeGATConv`` runs as ``gat_forward_sorted``."""

    def __init__(self, on: bool):
        self.on = on

    def __enter__(self):
        from mathgraph.models.gat import FoldedEdgeGATConv

        self.original = FoldedEdgeGATConv.forward
        if self.on:
            FoldedEdgeGATConv.forward = lambda conv, x, edge_index, edge_attr: gat_forward_sorted(
                conv, x, edge_index, edge_attr
            )

    def __exit__(self, *exc):
        from mathgraph.models.gat import FoldedEdgeGATConv

        FoldedEdgeGATConv.forward = self.original


def _bert_like(layer: nn.Module) -> bool:
    """Whether ``layer`` is laid out as ``BertLayer`` (RoBERTa's and MiniLM's are): what ``packed_text_layer`` reads."""
    parts = (
        "attention.self.query",
        "attention.self.key",
        "attention.self.value",
        "attention.self.scaling",
        "attention.self.num_attention_heads",
        "attention.self.attention_head_size",
        "attention.output.dense",
        "attention.output.LayerNorm",
        "intermediate",
        "output.dense",
        "output.LayerNorm",
    )

    def has(path: str) -> bool:
        item = layer
        for name in path.split("."):
            if not hasattr(item, name):
                return False
            item = getattr(item, name)
        return True

    return all(has(path) for path in parts) and not hasattr(layer, "crossattention")


class _text_layers_packed:
    """While in the block (and ``on``), ``ComusModel`` runs its BERT-like text layers as ``packed_text_layer``
    (others as they are)."""

    def __init__(self, on: bool):
        self.on = on

    def __enter__(self):
        from mathgraph.models import comus

        original = self.original = comus._run_text_layer

        def run(layer, hidden, additive_mask):
            if _bert_like(layer):
                return packed_text_layer(layer, hidden, additive_mask)
            return original(layer, hidden, additive_mask)

        if self.on:
            comus._run_text_layer = run

    def __exit__(self, *exc):
        from mathgraph.models import comus

        comus._run_text_layer = self.original


def export_text(model: nn.Module, path: str | PathLike) -> Path:
    """``text.onnx`` of a BERT-like text encoder (``AutoModel``): token ids -> ``token_states``."""
    batch_dim, length = torch.export.Dim("batch", min=1), torch.export.Dim("length", min=2, max=512)
    ids = torch.randint(1000, 2000, (2, 9))
    sample = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    per_problem = {0: batch_dim, 1: length}
    return _export(_TextGraph(model), sample, TEXT_INPUTS, ("token_states",), (per_problem,) * 3, path)


def export_head(head: nn.Module, task, dim: int, path: str | PathLike) -> Path:
    """``head_TASK.onnx`` of a task head (``models.heads``) on vectors of length ``dim``; ``task`` is its
    ``TaskHead`` (the shape of its inputs)."""
    batch_dim = torch.export.Dim("batch", min=1)
    features = task.alignment_dim
    if not task.classifies:  # a ranking head scores a query's candidates
        candidates = torch.export.Dim("candidates", min=1)
        sample = [torch.randn(2, dim), torch.randn(2, 3, dim)]
        names, dynamic = ["queries", "candidates"], [{0: batch_dim}, {0: batch_dim, 1: candidates}]
        if features:
            sample.append(torch.rand(2, 3, features))
            names.append("alignment")
            dynamic.append({0: batch_dim, 1: candidates})
        outputs = ("scores",)
    else:
        if task.input_shape == "pair" and not task.cross:
            raise ValueError(f"ONNX export reads {task.name} pairs in cross mode only (this head is bi-encoder)")
        sample, names, dynamic = [torch.randn(2, dim)], ["vectors"], [{0: batch_dim}]
        if features:
            sample.append(torch.rand(2, features))
            names.append("alignment")
            dynamic.append({0: batch_dim})
        outputs = ("logits",)
    return _export(_HeadGraph(head), tuple(sample), tuple(names), outputs, (tuple(dynamic),), path)


def _export(wrapper: nn.Module, sample: tuple, input_names, output_names, dynamic, path: str | PathLike) -> Path:
    """Export ``wrapper`` to ``path`` with its parameters and buffers as external initializers left without
    data (``NAME.names.json`` maps each to the module's weight name); other constants stay in the graph."""
    import onnx

    path = Path(path)
    wrapper.eval()
    weight_names = set(wrapper.network.state_dict())
    with tempfile.TemporaryDirectory() as work:
        traced = Path(work) / "graph.onnx"
        # the exporter's notes (progress lines, axis renaming, missing torchvision) say nothing to a user
        with torch.no_grad(), warnings.catch_warnings(), _quiet_loggers("torch.onnx", "torch.export", "torch._dynamo"):
            warnings.simplefilter("ignore")
            torch.onnx.export(
                wrapper,
                sample,
                str(traced),
                input_names=list(input_names),
                output_names=list(output_names),
                dynamic_shapes=dynamic,
                dynamo=True,
                external_data=True,
                optimize=False,  # the optimizer folds transposes into new weights: the names would be lost
                opset_version=OPSET,
                verbose=False,
            )
        graph = onnx.load(str(traced), load_external_data=True)
    names = {}
    for initializer in graph.graph.initializer:
        weight = initializer.name[len(PREFIX) :] if initializer.name.startswith(PREFIX) else None
        if weight in weight_names:
            _leave_data_outside(initializer)
            names[initializer.name] = weight
    for node in graph.graph.node:  # stack traces and source lines of every node: a megabyte of nothing
        del node.metadata_props[:]
        node.doc_string = ""
    _full_attention_masks(graph.graph)
    _drop_identity_transposes(graph.graph)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(graph, str(path))
    path.with_suffix(".names.json").write_text(json.dumps(names, indent=0), encoding="utf-8")
    return path


class _quiet_loggers:
    """Raise the named loggers to ERROR while in the block."""

    def __init__(self, *names: str):
        self.loggers = [logging.getLogger(name) for name in names]

    def __enter__(self):
        self.levels = [logger.level for logger in self.loggers]
        for logger in self.loggers:
            logger.setLevel(logging.ERROR)

    def __exit__(self, *exc):
        for logger, level in zip(self.loggers, self.levels):
            logger.setLevel(level)


def _full_attention_masks(graph) -> None:
    """Give every ``Attention`` node of ``graph`` its mask as ``[B, 1, L_query, L_key]``: the exporter passes
    the additive mask ``[B, 1, 1, L]`` as the operator allows (broadcast), and ONNX Runtime's CPU kernel takes
    only a mask with the queries' dimension. One ``Expand`` per mask, shared by the nodes that read it."""
    from onnx import TensorProto, helper

    nodes, expanded = [], {}
    for node in graph.node:
        if node.op_type == "Attention" and node.domain in ("", "ai.onnx") and len(node.input) > 3 and node.input[3]:
            mask = node.input[3]
            if mask not in expanded:
                name = f"{mask}_per_query"
                ones = helper.make_tensor(f"{name}_ones", TensorProto.INT64, [2], [1, 1])
                one = helper.make_tensor(f"{name}_one", TensorProto.INT64, [1], [1])
                nodes += [  # [1, 1, L_query, 1]: the query's length is the second last size of Q (3-D or 4-D)
                    helper.make_node("Shape", [node.input[0]], [f"{name}_length"], start=-2, end=-1),
                    helper.make_node("Constant", [], [f"{name}_ones"], value=ones),
                    helper.make_node("Constant", [], [f"{name}_one"], value=one),
                    helper.make_node(
                        "Concat", [f"{name}_ones", f"{name}_length", f"{name}_one"], [f"{name}_shape"], axis=0
                    ),
                    helper.make_node("Expand", [mask, f"{name}_shape"], [name]),
                ]
                expanded[mask] = name
            node.input[3] = expanded[mask]
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)


def _drop_identity_transposes(graph) -> None:
    """Make each ``Transpose`` that keeps the axes in place (the exporter writes three around every ``index_copy``)
    an ``Identity``, which ONNX Runtime removes; it keeps such a ``Transpose`` and copies the tensor."""
    from onnx import helper

    for i, node in enumerate(graph.node):
        perm = next((list(a.ints) for a in node.attribute if a.name == "perm"), None)
        if node.op_type == "Transpose" and perm == list(range(len(perm or []))) and perm:
            graph.node[i].CopyFrom(helper.make_node("Identity", list(node.input), list(node.output), name=node.name))


def _leave_data_outside(initializer) -> None:
    """Mark ``initializer`` as external data that is not in any file: ONNX Runtime takes it from memory
    (``SessionOptions.add_external_initializers``)."""
    import onnx

    length = len(initializer.raw_data) or None
    for field in ("raw_data", "float_data", "int64_data", "int32_data", "double_data"):
        initializer.ClearField(field)
    initializer.data_location = onnx.TensorProto.EXTERNAL
    del initializer.external_data[:]
    for key, value in (("location", "weights-in-memory"), ("offset", "0"), ("length", str(length or 0))):
        entry = initializer.external_data.add()
        entry.key, entry.value = key, value


__all__ = ["export_comus", "export_text", "export_head", "COMUS_INPUTS", "TEXT_INPUTS"]


def export_package_graphs(package, directory: str | PathLike) -> dict:
    """Every graph a package's ONNX runtime needs, into ``directory``: ``comus.onnx``, ``text.onnx`` and one
    ``head_TASK.onnx`` per task of the multi-task model; returns the ``onnx`` entry of the package's
    ``config.json`` (paths relative to ``directory``'s parent). ``package`` is a ``ModelPackage``; its
    multi-task model must have no adapter (MoE routing and CGC-LoRA gates are not exported)."""
    from mathgraph.models.pooling import vector_dim
    from mathgraph.models.text_encoder import load_text_encoder
    from mathgraph.samples import sample_problems

    directory = Path(directory)
    multitask = package.multitask
    if multitask.config.adapter != "none" or multitask.config.task_prompts:
        raise ValueError(
            f"ONNX export covers multi-task models without adapters; this one has {multitask.config.adapter!r}"
        )
    encoder = package.encoder
    problems = [p["problem"] for p in sample_problems()[:4]]
    batch = encoder.collator(encoder.parse(problems, cache=False))
    export_comus(encoder.model, batch, directory / "comus.onnx")
    text_model, _ = load_text_encoder("minilm")
    export_text(text_model, directory / "text.onnx")
    dim = vector_dim(multitask.backbone, multitask.config.architecture)
    heads = {}
    for task_id, task_config in enumerate(multitask.config.task_configs):
        name = f"head_{task_config.task}.onnx"
        export_head(multitask.heads[task_id], task_config.task_type, dim, directory / name)
        heads[task_config.task] = f"{directory.name}/{name}"
    return {
        "comus": f"{directory.name}/comus.onnx",
        "text": f"{directory.name}/text.onnx",
        "heads": heads,
        "pooling": multitask.config.pooling,
    }


__all__ += ["export_package_graphs"]
