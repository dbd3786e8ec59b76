"""A model package's encoder and task heads run by ONNX Runtime (``--runtime onnx``).

``OnnxPackageRuntime(package)`` gives what ``ModelPackage`` gives with PyTorch, from the graphs the package
carries (``models.onnx_export``) and the weights it already holds (``models.onnx_forward``):

- ``encode(problems, mode=...)``: ``MathEncoder.encode``'s vectors (``joint``, ``text``, ``graph``);
- ``predictor(task)``: an object whose ``predict(inputs)`` gives ``TaskView.predict``'s results;
- ``text_network``: all-MiniLM-L6-v2, search's first stage (``tasks.search.embedders.OnnxTextEmbedder``).

Problems are parsed and their tokens and graph arrays built as for PyTorch (the same collator), so the two
runtimes see the same inputs; the networks run in float32 and agree within 1e-4. Sessions and weights load
when first needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property

import numpy as np

from mathgraph.models.onnx_forward import (
    OnnxNetwork,
    apply_delta_arrays,
    minilm_arrays,
    pool,
    quantized_graph,
    text_encoder_arrays,
    with_prefix,
)
from mathgraph.registry import CheckpointError

ONNX_ENTRY = "onnx"  # the key of a package's config.json that lists its graphs
MODES = ("joint", "text", "graph")


def package_has_onnx(package) -> bool:
    """Whether ``package`` (a ``ModelPackage``) carries ONNX graphs and ONNX Runtime is installed."""
    if ONNX_ENTRY not in package.config:
        return False
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


class OnnxPackageRuntime:
    """The ONNX Runtime side of a ``ModelPackage`` (see the module docstring)."""

    def __init__(self, package, threads: int | None = None, int8: bool = False):
        if ONNX_ENTRY not in package.config:
            raise CheckpointError(
                f"the package {package.name_or_path} carries no ONNX graphs: use --runtime torch, "
                "or write them with mathgraph export"
            )
        self.package, self.threads, self.int8 = package, threads, int8
        self.entry = package.config[ONNX_ENTRY]

    # ------------------------------------------------------------ weights and sessions
    @cached_property
    def encoder_weights(self) -> dict[str, np.ndarray]:
        """The pre-trained encoder's weights: its text encoder's (all-MiniLM-L6-v2 for the shipped one) with the
        encoder's delta put in (or, in an exported package, its full weights)."""
        from mathgraph.models.comus import WEIGHTS_NAME

        def base():
            return text_encoder_arrays(self.encoder_config.get("text_encoder", "minilm"))

        return _stored_weights(self.package.path(self.package.config["encoder"]), WEIGHTS_NAME, base)

    @cached_property
    def multitask_weights(self) -> dict[str, np.ndarray]:
        """The multi-task model's weights (``backbone.`` and ``heads.``): the encoder's with its delta put in."""
        from mathgraph.models.multitask import MULTITASK_WEIGHTS_NAME

        def base():
            return {f"backbone.{name}": value for name, value in self.encoder_weights.items()}

        return _stored_weights(self.package.path(self.package.config["multitask"]), MULTITASK_WEIGHTS_NAME, base)

    def _network(self, graph: str, weights: dict[str, np.ndarray]) -> OnnxNetwork:
        if self.int8:  # a quantized copy with its weights in it, made once into the cache directory
            from mathgraph.files import cache_directory

            quantized = quantized_graph(self.package.path(graph), weights, cache_directory() / "onnx-int8")
            return OnnxNetwork(quantized, None, threads=self.threads)
        return OnnxNetwork(self.package.path(graph), weights, threads=self.threads)

    @cached_property
    def encoder_network(self) -> OnnxNetwork:
        return self._network(self.entry["comus"], self.encoder_weights)

    @cached_property
    def backbone_network(self) -> OnnxNetwork:
        return self._network(self.entry["comus"], with_prefix(self.multitask_weights, "backbone."))

    @cached_property
    def text_network(self) -> OnnxNetwork:
        return self._network(self.entry["text"], with_prefix(minilm_arrays(), "text."))

    def head_network(self, task: str) -> OnnxNetwork:
        """The ONNX session of ``task``'s head."""
        heads = self.__dict__.setdefault("_heads", {})
        if task not in heads:
            task_id = self.task_ids[task]
            heads[task] = self._network(
                self.entry["heads"][task], with_prefix(self.multitask_weights, f"heads.{task_id}.")
            )
        return heads[task]

    # ------------------------------------------------------------ what the networks read
    @cached_property
    def collator(self):
        """The encoder's ``ProblemCollator`` (its tokenizer and graph vocabularies)."""
        from transformers import AutoTokenizer

        from mathgraph.graph import GraphVocabulary
        from mathgraph.models.batching import ProblemCollator
        from mathgraph.models.comus import TOKENIZER_DIR
        from mathgraph.models.text_encoder import set_split_digits

        directory = self.package.path(self.package.config["encoder"])
        tokenizer = AutoTokenizer.from_pretrained(directory / TOKENIZER_DIR)
        set_split_digits(tokenizer, bool(self.encoder_config.get("split_digits", False)))
        return ProblemCollator(tokenizer, GraphVocabulary.from_pretrained(directory))

    @cached_property
    def encoder_config(self) -> dict:
        from mathgraph.registry import read_config

        return read_config(self.package.path(self.package.config["encoder"]))

    @property
    def parser(self) -> str:
        """The dependency back end the encoder's graphs come from."""
        return self.encoder_config["parser"]

    @cached_property
    def task_configs(self) -> dict:
        """``{task: TaskConfig}`` of the multi-task model, in head order."""
        from mathgraph.models.multitask import MULTITASK_CONFIG_NAME
        from mathgraph.models.task_model import TaskConfig
        from mathgraph.registry import read_config

        data = read_config(self.package.path(self.package.config["multitask"]), MULTITASK_CONFIG_NAME)
        return {entry["task"]: TaskConfig.from_dict(entry) for entry in data["tasks"]}

    @property
    def task_ids(self) -> dict[str, int]:
        return {task: i for i, task in enumerate(self.task_configs)}

    def dimension(self, mode: str = "joint") -> int:
        """Length of ``encode``'s vectors in ``mode``."""
        text = int(self.encoder_config["text_config"]["hidden_size"])
        graph = int(self.encoder_config["gat_heads"]) * int(self.encoder_config["gat_head_dim"])
        return {"joint": text + graph, "text": text, "graph": graph}[_mode(mode)]

    # ------------------------------------------------------------ encoding
    def encode(
        self,
        problems: Sequence,
        batch_size: int = 32,
        mode: str = "joint",
        device: str | None = None,
        show_progress: bool | None = None,
    ) -> np.ndarray:
        """``MathEncoder.encode`` under ONNX Runtime: vectors ``[len(problems), dimension(mode)]`` (float32) of
        problem texts or parsed graphs, in input order. ``device``: ``None`` or ``"cpu"``, where ONNX Runtime
        runs (taken for ``MathEncoder.encode``'s signature)."""
        if device not in (None, "cpu"):
            raise ValueError(f"ONNX Runtime encodes on the CPU, not {device}: use the torch runtime")
        from mathgraph.models.batching import encode_in_length_order

        mode = _mode(mode)

        def vectors_of(batch) -> np.ndarray:
            out = self.encoder_network.run(batch_arrays(batch))
            cls, mean_node = out["token_states"][:, 0], out["mean_node"]
            return {"joint": np.concatenate([cls, mean_node], -1), "text": cls, "graph": mean_node}[mode]

        return encode_in_length_order(
            problems, self.parser, self.collator, batch_size, self.dimension(mode), vectors_of, show_progress
        )

    # ------------------------------------------------------------ prediction
    def predictor(self, task: str) -> OnnxTaskPredictor:
        """``task``'s head as a predictor (``predict(inputs, batch_size)``), like ``MultiTaskModel.for_task``."""
        if task not in self.task_configs:
            raise ValueError(f"this multi-task model has no {task} head (tasks: {list(self.task_configs)})")
        if task not in self.entry["heads"]:
            raise CheckpointError(f"the package's ONNX graphs have no {task} head: use --runtime torch")
        return OnnxTaskPredictor(self, task)

    def problem_vectors(self, arrays: dict[str, np.ndarray]) -> np.ndarray:
        """The multi-task model's problem vectors ``[N, dim]``: pooled token states ``;`` mean node."""
        out = self.backbone_network.run(arrays)
        pooled = pool(out["token_states"], arrays["attention_mask"], self.entry.get("pooling", "cls"))
        return np.concatenate([pooled, out["mean_node"]], axis=-1)


class OnnxTaskPredictor:
    """One task of the package's multi-task model under ONNX Runtime: ``predict`` as ``TaskView.predict``
    (``models.prediction.predict_inputs``: check, parse once, batches of similar length, input order)."""

    def __init__(self, runtime: OnnxPackageRuntime, task: str):
        self.runtime, self.task = runtime, task
        self.config = runtime.task_configs[task]
        self.head = runtime.head_network(task)

    def predict(self, inputs: Iterable, batch_size: int = 32) -> list[dict]:
        """Results of ``inputs`` (``models.task_io`` shapes): ``{"label", "probabilities"}`` or
        ``{"scores", "ranking"}``, in input order."""
        from mathgraph.models.features import FeatureStore
        from mathgraph.models.task_batches import TaskCollator, example_lengths, length_sorted_batches
        from mathgraph.models.task_io import build_examples, label_values, ranking_result

        head = self.config.task_type
        examples = build_examples(head, inputs)
        if not examples:
            return []
        runtime = self.runtime
        store = FeatureStore(
            runtime.collator, [t for e in examples for t in head.example_texts(e)], parser=runtime.parser
        )
        collate = TaskCollator(head, store)
        names = label_values(head, self.config.labels) if head.classifies else None
        results: list = [None] * len(examples)
        for rows in length_sorted_batches(example_lengths(head, examples, store), batch_size):
            chunk = [examples[i] for i in rows]
            batch = collate(chunk, with_labels=False)
            vectors = runtime.problem_vectors(batch_arrays(batch.problems))
            alignment = None if batch.alignment is None else batch.alignment.numpy()
            if head.classifies:
                feeds = {"vectors": vectors} if alignment is None else {"vectors": vectors, "alignment": alignment}
                for i, logits in zip(rows, self.head.run(feeds)["logits"]):
                    results[i] = classification_result(logits, names)
            else:
                candidates = batch.candidates.numpy()
                feeds = {"queries": vectors[: len(chunk)], "candidates": vectors[candidates]}
                if alignment is not None:
                    feeds["alignment"] = alignment
                scores = self.head.run(feeds)["scores"]
                for i, row, example in zip(rows, scores, chunk):
                    results[i] = ranking_result(row[: len(example.candidates)].tolist())
        return results


def classification_result(logits: np.ndarray, labels: Sequence) -> dict:
    """``models.task_io.classification_result`` in NumPy: softmax in float64, the first best label."""
    values = logits.astype(np.float64)
    exp = np.exp(values - values.max())
    probabilities = (exp / exp.sum()).tolist()
    return {"label": labels[int(np.argmax(values))], "probabilities": dict(zip(labels, probabilities))}


def _stored_weights(directory, full_name: str, base) -> dict[str, np.ndarray]:
    """A model's weights as a package stores them: a delta file against ``base()``, or all of them."""
    from safetensors.numpy import load_file

    from mathgraph.models.delta import DELTA_NAME

    if (directory / DELTA_NAME).is_file():
        return apply_delta_arrays(base(), directory / DELTA_NAME)
    try:
        return load_file(str(directory / full_name))
    except Exception as err:  # safetensors raises its own error type for a damaged header
        raise CheckpointError(f"cannot read {directory / full_name}: {err}") from err


def batch_arrays(batch) -> dict[str, np.ndarray]:
    """A ``ProblemBatch``'s model inputs as NumPy arrays (what the COMUS graph reads)."""
    return {name: value.numpy() for name, value in batch.as_model_inputs().items()}


def _mode(mode: str) -> str:
    mode = "joint" if mode == "fused" else mode  # the old name of the joint vector
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
    return mode


__all__ = ["OnnxPackageRuntime", "OnnxTaskPredictor", "package_has_onnx", "ONNX_ENTRY", "classification_result"]
