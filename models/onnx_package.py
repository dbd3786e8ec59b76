"""A model package's encoder and task heads run by ONNX Runtime (``--runtime onnx``).

``OnnxPackageRuntime(package)`` gives what ``ModelPackage`` gives with PyTorch, from the graphs the package
carries (``models.onnx_export``) and the weights it already holds (``models.onnx_forward``):

- ``encode(problems, mode=...)``: ``MathEncoder.encode``'s vectors (``joint``, ``text``, ``graph``);
- ``predictor(task)``: an object whose ``predict(inputs)`` gives ``TaskView.predict``'s results;
- ``text_network``: all-MiniLM-L6-v2, search's first stage (``tasks.search.embedders.OnnxTextEmbedder``).

Problems are parsed and their tokens and graph arrays built as for PyTorch (the same collator,
``models.batching.ArrayCollator``, its tokenizer read from ``tokenizer.json`` by the ``tokenizers`` library), so
the two runtimes see the same inputs; the networks run in float32 and agree within 1e-4. The task configs and
label lists are read from the multi-task model's ``multitask_config.json``. Nothing here imports PyTorch or
transformers. Sessions load when first needed; the NumPy weights they are built from are dropped once
ONNX Runtime holds its own copy, so a process holds the weights once.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from mathgraph.models.onnx_forward import (
    INT8_RECIPE,
    OPTIMISED_MODEL,
    Int8Recipe,
    OnnxNetwork,
    apply_delta_arrays,
    minilm_arrays,
    minilm_directory,
    optimised_copy,
    pool,
    quantized_graph,
    sources_key,
    text_encoder_arrays,
    with_prefix,
)
from mathgraph.registry import CheckpointError

ONNX_ENTRY = "onnx"  # the key of a package's config.json that lists its graphs
MODES = ("joint", "text", "graph")
MODE_ALIASES = {"fused": "joint"}  # the joint vector's old name (indexes built with it keep working)
logger = logging.getLogger("mathgraph.models")
# File names the PyTorch models write (models.comus, models.multitask), named here so that loading imports
# neither; tests/models/test_onnx.py checks that they agree.
ENCODER_WEIGHTS_NAME = "model.safetensors"
TOKENIZER_DIR = "tokenizer"
MULTITASK_CONFIG_NAME = "multitask_config.json"
MULTITASK_WEIGHTS_NAME = "multitask.safetensors"
DEFAULT_PAIR_MODE = "cross"  # a pair task's config without a pair mode (models.task_model.DEFAULT_PAIR_MODE)


def package_has_onnx(package) -> bool:
    """Whether ``package`` (a ``ModelPackage``) carries ONNX graphs and ONNX Runtime is installed."""
    if ONNX_ENTRY not in package.config:
        return False
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


COPIES_KEPT = 2


def prune_copies(target: Path, keep: int = COPIES_KEPT) -> None:
    """Mark the optimised copy ``target`` as just used and delete the older copies of the same network and variant
    beyond the ``keep`` used last (a folder's time is its last use). A copy's key changes with the package's weight
    files and ONNX Runtime's version, so without this every upgrade would leave another 121 MB copy of the encoder
    behind; two are kept so that two packages used in turn do not rebuild each other's. Where the cache cannot be
    written, nothing is marked or deleted."""
    import shutil

    network = target.name.rsplit("-", 1)[0] + "-"  # "comus-float32-"
    try:
        os.utime(target)
        copies = [(p.stat().st_mtime_ns, p) for p in target.parent.iterdir() if p.name.startswith(network)]
    except OSError:  # a read-only cache, or a copy another process deleted meanwhile
        return
    for _, old in sorted(copies, reverse=True)[keep:]:
        shutil.rmtree(old, ignore_errors=True)


class OnnxPackageRuntime:
    """The ONNX Runtime side of a ``ModelPackage`` (see the module docstring)."""

    def __init__(self, package, threads: int | None = None, int8: bool = False, recipe: Int8Recipe = INT8_RECIPE):
        if ONNX_ENTRY not in package.config:
            raise CheckpointError(
                f"the package {package.name_or_path} carries no ONNX graphs: use --runtime torch, "
                "or write them with mathgraph export"
            )
        self.package, self.threads, self.int8, self.recipe = package, threads, int8, recipe
        self.entry = package.config[ONNX_ENTRY]

    # ------------------------------------------------------------ weights and sessions
    def encoder_weights(self) -> dict[str, np.ndarray]:
        """The pre-trained encoder's weights: its text encoder's (all-MiniLM-L6-v2 for the shipped one) with the
        encoder's delta put in (or, in an exported package, its full weights). Read anew at each call."""

        def base():
            return text_encoder_arrays(self.encoder_config.get("text_encoder", "minilm"))

        return _stored_weights(self.package.path(self.package.config["encoder"]), ENCODER_WEIGHTS_NAME, base)

    def multitask_weights(self) -> dict[str, np.ndarray]:
        """The multi-task model's weights (``backbone.`` and ``heads.``): the encoder's with its delta put in.
        Read anew at each call."""

        def base():
            return {f"backbone.{name}": value for name, value in self.encoder_weights().items()}

        return _stored_weights(self.package.path(self.package.config["multitask"]), MULTITASK_WEIGHTS_NAME, base)

    def _network(self, graph: str, weights_of, sources: list[Path]) -> OnnxNetwork:
        """The session of the package's ``graph``, its weights ``weights_of()`` (PyTorch name -> array), read from
        the files ``sources``. It loads the graph's ``optimised_copy`` in the cache directory (``onnx-sessions``),
        made at the first use of these graph, weights and ONNX Runtime (``--runtime onnx-int8``: of the int8
        copy ``quantized_graph`` makes by the runtime's ``recipe``); later processes read neither the weights nor
        their deltas. Where the cache directory cannot be
        written, the session is built from the weights in memory, as exact."""
        from mathgraph.files import cache_directory

        path = self.package.path(graph)
        variant = "int8" if self.int8 else "float32"
        key = sources_key(path, sources, f"int8|{self.recipe.key}" if self.int8 else variant)
        target = cache_directory() / "onnx-sessions" / f"{path.stem}-{variant}-{key}"
        if not (target / OPTIMISED_MODEL).is_file():
            weights = weights_of()
            if self.int8:  # a quantized copy with its weights in it, made once into the cache directory
                path = quantized_graph(path, weights, cache_directory() / "onnx-int8", self.recipe)
                weights = None
            try:
                optimised_copy(path, weights, target)
            except OSError as err:
                logger.debug("no optimised copy of %s in %s (%s): the session is built in memory", path, target, err)
                return OnnxNetwork(path, weights, threads=self.threads)
        prune_copies(target)
        return OnnxNetwork(target / OPTIMISED_MODEL, None, threads=self.threads, optimised=True)

    def _weight_sources(self, *parts: str) -> list[Path]:
        """The files the weights of the package's ``parts`` (``encoder``, ``multitask``: its folders) are read from,
        and the text encoder's weights their deltas are stored against."""
        from mathgraph.models.delta_files import DELTA_NAME

        folders = [self.package.path(self.package.config[part]) for part in parts]
        files = [f for folder in folders for f in sorted(folder.rglob("*")) if f.is_file()]
        if any((folder / DELTA_NAME).is_file() for folder in folders):  # stored against the text encoder's weights
            name = self.encoder_config.get("text_encoder", "minilm")
            files.append((minilm_directory() if name in ("minilm", "default") else Path(name)) / "model.safetensors")
        return files

    @cached_property
    def encoder_network(self) -> OnnxNetwork:
        """The pre-trained encoder's session."""
        return self._network(self.entry["comus"], self.encoder_weights, self._weight_sources("encoder"))

    def _multitask_arrays(self) -> dict[str, np.ndarray]:
        """The multi-task model's weights, read once while its sessions are being built (``_drop_backbone``)."""
        if "_multitask_read" not in self.__dict__:
            self.__dict__["_multitask_read"] = self.multitask_weights()
        return self.__dict__["_multitask_read"]

    @cached_property
    def backbone_network(self) -> OnnxNetwork:
        """The multi-task model's backbone session. The backbone's arrays, if they had to be read, are dropped
        once ONNX Runtime holds them (the heads' small ones stay until their sessions are built)."""
        network = self._network(
            self.entry["comus"],
            lambda: with_prefix(self._multitask_arrays(), "backbone."),
            self._weight_sources("encoder", "multitask"),
        )
        read = self.__dict__.get("_multitask_read")
        if read is not None:
            self.__dict__["_multitask_read"] = {k: v for k, v in read.items() if not k.startswith("backbone.")}
        return network

    @cached_property
    def text_network(self) -> OnnxNetwork:
        """all-MiniLM-L6-v2's session (search's first stage)."""
        return self._network(
            self.entry["text"],
            lambda: with_prefix(minilm_arrays(), "text."),
            [minilm_directory() / "model.safetensors"],
        )

    def head_network(self, task: str) -> OnnxNetwork:
        """The ONNX session of ``task``'s head (built when first asked for)."""
        sessions = self.__dict__.setdefault("_heads", {})
        if task not in sessions:
            prefix = f"heads.{self.task_ids[task]}."
            sessions[task] = self._network(
                self.entry["heads"][task],
                lambda: with_prefix(self._multitask_arrays(), prefix),
                self._weight_sources("encoder", "multitask"),
            )
        return sessions[task]

    # ------------------------------------------------------------ what the networks read
    @cached_property
    def collator(self):
        """The encoder's ``ArrayCollator``: its tokenizer (``tokenizer.json``) and graph vocabularies."""
        from mathgraph.graph import GraphVocabulary
        from mathgraph.models.batching import ArrayCollator
        from mathgraph.models.onnx_tokenizer import read_tokenizer

        directory = self.package.path(self.package.config["encoder"])
        split_digits = bool(self.encoder_config.get("split_digits", False))
        tokenizer, pad_id = read_tokenizer(directory / TOKENIZER_DIR, split_digits=split_digits)
        return ArrayCollator(tokenizer, GraphVocabulary.from_pretrained(directory), pad_id=pad_id)

    @cached_property
    def encoder_config(self) -> dict:
        from mathgraph.registry import read_config

        return read_config(self.package.path(self.package.config["encoder"]))

    @property
    def parser(self) -> str:
        """The dependency back end the encoder's graphs come from."""
        return self.encoder_config["parser"]

    @cached_property
    def _task_entries(self) -> dict[str, dict]:
        """``{task: entry}`` of the multi-task model's config (its ``multitask_config.json``), in head order."""
        from mathgraph.registry import read_config

        data = read_config(self.package.path(self.package.config["multitask"]), MULTITASK_CONFIG_NAME)
        try:
            return {entry["task"]: entry for entry in data["tasks"]}
        except (KeyError, TypeError) as err:
            raise CheckpointError(
                f"the multi-task config of {self.package.name_or_path} is not readable: {err}"
            ) from err

    def task_config(self, task: str) -> OnnxTaskConfig:
        """``task``'s ``OnnxTaskConfig``, read when first asked for (a pair task's alignment feature names may
        need the alignment features' module, which predicting another task does not import)."""
        configs = self.__dict__.setdefault("_task_configs", {})
        if task not in configs:
            try:
                configs[task] = OnnxTaskConfig.from_dict(self._task_entries[task])
            except (KeyError, TypeError, ValueError) as err:
                raise CheckpointError(
                    f"the multi-task config of {self.package.name_or_path} is not readable: {err}"
                ) from err
        return configs[task]

    @property
    def task_configs(self) -> dict[str, OnnxTaskConfig]:
        """``{task: OnnxTaskConfig}`` of the multi-task model, in head order."""
        return {task: self.task_config(task) for task in self._task_entries}

    @property
    def task_ids(self) -> dict[str, int]:
        return {task: i for i, task in enumerate(self._task_entries)}

    def dimension(self, mode: str = "joint") -> int:
        """Length of ``encode``'s vectors in ``mode``."""
        text = int(self.encoder_config["text_config"]["hidden_size"])
        graph = int(self.encoder_config["gat_heads"]) * int(self.encoder_config["gat_head_dim"])
        return {"joint": text + graph, "text": text, "graph": graph}[canonical_mode(mode)]

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

        mode = canonical_mode(mode)

        def vectors_of(batch: dict[str, np.ndarray]) -> np.ndarray:
            out = self.encoder_network.run(batch)
            cls, mean_node = out["token_states"][:, 0], out["mean_node"]
            return {"joint": np.concatenate([cls, mean_node], -1), "text": cls, "graph": mean_node}[mode]

        return encode_in_length_order(
            problems, self.parser, self.collator, batch_size, self.dimension(mode), vectors_of, show_progress
        )

    # ------------------------------------------------------------ prediction
    def predictor(self, task: str) -> OnnxTaskPredictor:
        """``task``'s head as a predictor (``predict(inputs, batch_size)``), like ``MultiTaskModel.for_task``."""
        if task not in self._task_entries:
            raise ValueError(f"this multi-task model has no {task} head (tasks: {list(self._task_entries)})")
        if task not in self.entry["heads"]:
            raise CheckpointError(f"the package's ONNX graphs have no {task} head: use --runtime torch")
        return OnnxTaskPredictor(self, task)

    def problem_vectors(self, arrays: dict[str, np.ndarray]) -> np.ndarray:
        """The multi-task model's problem vectors ``[N, dim]``: pooled token states ``;`` mean node."""
        arrays = batch_arrays(arrays)
        out = self.backbone_network.run(arrays)
        pooled = pool(out["token_states"], arrays["attention_mask"], self.entry.get("pooling", "cls"))
        return np.concatenate([pooled, out["mean_node"]], axis=-1)


@dataclass(frozen=True)
class OnnxTaskConfig:
    """What the ONNX runtime needs of one task of a multi-task model's config (``multitask_config.json``'s
    entries, which ``models.task_model.TaskConfig`` reads for PyTorch): the task, its labels in logit order, the
    pair mode of a pair task, and the alignment features its head reads (none without alignment); and how
    its inputs become the problems the encoder reads, as the task heads (``models.task_heads``) lay them out."""

    task: str
    labels: tuple = ()
    pair_mode: str | None = None
    alignment_names: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, entry: dict) -> OnnxTaskConfig:
        """The config of one entry of ``multitask_config.json``'s ``tasks``. A head with alignment saved without
        its feature names reads the set it was trained on (``feature_names(aligned_with)``), as for PyTorch."""
        from mathgraph.task_specs import task_spec

        spec = task_spec(entry["task"])
        pair_mode = entry.get("pair_mode") or (DEFAULT_PAIR_MODE if spec.input_shape == "pair" else None)
        names: tuple[str, ...] = ()
        if entry.get("alignment"):
            from mathgraph.models.alignment_features import feature_names
            from mathgraph.models.task_io import aligned_with

            names = tuple(entry.get("alignment_features") or feature_names(aligned_with(spec.name)))
        return cls(spec.name, tuple(entry.get("labels") or ()), pair_mode, names)

    @property
    def shape(self) -> str:
        """The task's input shape (``mathgraph.task_specs``): ``single``, ``pair`` or ``ranker``."""
        from mathgraph.task_specs import TASK_SPECS

        return TASK_SPECS[self.task].input_shape

    def problem_texts(self, texts: tuple) -> list:
        """The problems one checked input (``models.task_io.check_input``) needs encoded: a text, a pair read as
        one (``cross``), the two texts (``bi``), or a query and its candidates."""
        if self.shape == "pair":
            return [tuple(texts)] if self.pair_mode == "cross" else list(texts)
        if self.shape == "ranker":
            return [texts[0], *texts[1]]
        return [texts[0]]

    def batch_texts(self, chunk: Sequence[tuple]) -> list:
        """The problems of a batch of checked inputs, in the layout the head reads: KPC and ``cross`` pairs one
        per input; ``bi`` pairs the ``text_a`` of every input then the ``text_b``; SQR the queries, then each
        list's candidates."""
        if self.shape == "single" or (self.shape == "pair" and self.pair_mode == "cross"):
            return [text for texts in chunk for text in self.problem_texts(texts)]
        if self.shape == "pair":
            return [texts[0] for texts in chunk] + [texts[1] for texts in chunk]
        return [texts[0] for texts in chunk] + [c for texts in chunk for c in texts[1]]

    def alignment(self, chunk: Sequence[tuple], rows=None, parse=None) -> np.ndarray | None:
        """The alignment features a batch's head reads: ``[B, F]`` for pairs, ``[B, N, F]`` for SQR lists (zeros
        after a list's candidates), float32; ``None`` for a head without them. ``rows`` and ``parse`` are
        ``models.alignment_features.alignment_features``' (the rows already computed, how to parse the others)."""
        if not self.alignment_names:
            return None
        from mathgraph.models.alignment_features import alignment_features
        from mathgraph.models.task_io import aligned_with

        if self.shape == "ranker":
            pairs = [(texts[0], c) for texts in chunk for c in texts[1]]
        else:
            pairs = [(texts[0], texts[1]) for texts in chunk]
        features = alignment_features(
            aligned_with(self.task), pairs, parse=parse, names=self.alignment_names, rows=rows
        ).astype(np.float32)
        if self.shape != "ranker":
            return features
        width = max(len(texts[1]) for texts in chunk)
        padded = np.zeros((len(chunk), width, features.shape[-1]), dtype=np.float32)
        start = 0
        for i, texts in enumerate(chunk):
            padded[i, : len(texts[1])] = features[start : start + len(texts[1])]
            start += len(texts[1])
        return padded


class OnnxTaskPredictor:
    """One task of the package's multi-task model under ONNX Runtime: ``predict`` as ``TaskView.predict``
    (``models.prediction.predict_inputs``: check, parse once, batches of similar length, input order)."""

    def __init__(self, runtime: OnnxPackageRuntime, task: str):
        self.runtime, self.task = runtime, task
        self.config = runtime.task_config(task)
        self.head = runtime.head_network(task)

    def predict(self, inputs: Iterable, batch_size: int = 32, graphs=None, rows=None) -> list[dict]:
        """Results of ``inputs`` (``models.task_io`` shapes): ``{"label", "probabilities"}`` or
        ``{"scores", "ranking"}``, in input order. ``graphs``: a ``parsers.graph_cache.ParsedGraphs`` holding
        the problems' graphs already parsed, and the cache the others are parsed through (None: the default
        graph cache); ``rows``: the alignment rows of the pairs (``models.alignment_features.AlignmentRows``)."""
        from mathgraph.models.features import FeatureStore
        from mathgraph.models.task_io import check_input, label_values, ranking_result
        from mathgraph.task_specs import task_spec

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        spec, config, runtime = task_spec(self.task), self.config, self.runtime
        checked = [check_input(spec, item, i) for i, item in enumerate(inputs)]
        if not checked:
            return []
        needed = [config.problem_texts(texts) for texts in checked]
        store = FeatureStore(
            runtime.collator, [t for texts in needed for t in texts], parser=runtime.parser, graphs=graphs
        )
        parse = graphs.parse if graphs is not None else None  # the pairs' problems, where a row is missing
        lengths = [sum(store.length(t) for t in texts) for texts in needed]
        order = sorted(range(len(checked)), key=lengths.__getitem__)  # batches of similar length
        names = label_values(self.task, config.labels) if spec.classifies else None
        results: list = [None] * len(checked)
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            chunk = [checked[i] for i in batch]
            vectors = runtime.problem_vectors(store.batch(config.batch_texts(chunk)))
            alignment = config.alignment(chunk, rows=rows, parse=parse)
            if spec.classifies:
                feeds = {"vectors": vectors} if alignment is None else {"vectors": vectors, "alignment": alignment}
                for i, logits in zip(batch, self.head.run(feeds)["logits"]):
                    results[i] = classification_result(logits, names)
            else:
                width = max(len(texts[1]) for texts in chunk)
                candidates = np.zeros((len(chunk), width), dtype=np.int64)
                first = len(chunk)  # the candidates follow the queries (batch_texts)
                for j, texts in enumerate(chunk):
                    candidates[j, : len(texts[1])] = np.arange(first, first + len(texts[1]))
                    first += len(texts[1])
                feeds = {"queries": vectors[: len(chunk)], "candidates": vectors[candidates]}
                if alignment is not None:
                    feeds["alignment"] = alignment
                scores = self.head.run(feeds)["scores"]
                for i, row, texts in zip(batch, scores, chunk):
                    results[i] = ranking_result(row[: len(texts[1])].tolist())
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

    from mathgraph.models.delta_files import DELTA_NAME

    if (directory / DELTA_NAME).is_file():
        return apply_delta_arrays(base(), directory / DELTA_NAME)
    try:
        return load_file(str(directory / full_name))
    except Exception as err:  # safetensors raises its own error type for a damaged header
        raise CheckpointError(f"cannot read {directory / full_name}: {err}") from err


def batch_arrays(batch) -> dict[str, np.ndarray]:
    """A batch's model inputs as NumPy arrays (what the COMUS graph reads): ``ArrayCollator``'s arrays as they
    are, or a ``ProblemBatch``'s tensors as arrays."""
    if isinstance(batch, dict):
        return batch
    return {name: value.numpy() for name, value in batch.as_model_inputs().items()}


def canonical_mode(mode: str) -> str:
    """``mode`` by its current name (``"fused"`` -> ``"joint"``); an unknown mode is a ``ValueError``. Both runtimes'
    encoders use it (``models.encoder`` imports it: this module needs no PyTorch)."""
    mode = MODE_ALIASES.get(mode, mode)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return mode


__all__ = [
    "OnnxPackageRuntime",
    "OnnxTaskPredictor",
    "OnnxTaskConfig",
    "package_has_onnx",
    "prune_copies",
    "ONNX_ENTRY",
    "classification_result",
    "canonical_mode",
]
