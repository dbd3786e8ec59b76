"""The stages of mathgraph's batch jobs (``mathgraph.batch_jobs``): parsing problems into graphs (a CPU
stage) and encoding them into vectors (a model stage), and what a job's rows give them.

- ``ParseStage``: the problems of each item (``texts_of(item["input"])``: one text, a pair, a query and its
  candidates) as graphs in ``item["graphs"]``, through the graph cache or not, in this process or in a pool
  of ``workers`` processes that each load the parser once; with ``keys``, also each text's graph-cache key in
  ``item["graph_keys"]``, so that a model stage on another machine can put the graphs in its own cache.
- ``EncodeStage``: ``item["vector"]``, the ``MathEncoder`` vector of the item's graph (or of its text, parsed
  there, when no parse stage ran).
- ``PredictStage``: ``item["result"]``, the prediction of the item's input by a ``mathgraph.api.Predictor``
  (what ``mathgraph predict --input`` writes), which takes the item's graphs as they are.

A stage keeps its settings only until ``load()``: that is what pickles, to a worker process or a Ray actor.
``model_parser`` reads which parser a saved model was trained on, without loading it, so that the parse stage
builds the graphs the model expects.
"""

from __future__ import annotations

import logging
import multiprocessing
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from os import PathLike
from typing import Any, ClassVar

from mathgraph.batch_jobs import chunked
from mathgraph.graph import MathSyntaxGraph
from mathgraph.parsers.graph_cache import GraphCache, graph_key, parser_identity
from mathgraph.parsers.problem import ProblemParser
from mathgraph.registry import CheckpointError, read_config, resolve
from mathgraph.task_specs import row_input

logger = logging.getLogger("mathgraph")


def texts_of(value: Any) -> list[str]:
    """The problem texts of an input: a text, a pair ``(text_a, text_b)``, or ``(query, [candidates])``."""
    if isinstance(value, str):
        return [value]
    first, second = value
    return [first, *second] if isinstance(second, list) else [first, second]


@dataclass(frozen=True)
class GraphInput:
    """``to_input`` of a job that reads graphs (a ``mathgraph parse`` output): the row as a checked graph (a
    malformed one is a ``ValueError`` the job names by file and line). A JSONL row is the graph itself; a
    Parquet row holds it as JSON text in its ``graph`` column."""

    def __call__(self, row: dict) -> MathSyntaxGraph:
        if isinstance(row.get("graph"), str):
            return MathSyntaxGraph.from_json(row["graph"])
        return MathSyntaxGraph.from_dict(row)


@dataclass
class ParseStage:
    """Problems into graphs (see the module docstring).

    Args:
        parser: the dependency back end (``auto``, ``spacy``, ``stanza``); a model's own: ``model_parser``.
        bare_arithmetic: also treat arithmetic in plain text (``48/2 = 24``) as formulas.
        batch_size: problems per parser batch.
        workers: parser processes (1: this one).
        cache: the graph cache: ``False`` parses every problem, ``True`` uses the default cache file of the
            machine it runs on, or a path.
        keys: add ``item["graph_keys"]``.
    """

    kind: ClassVar[str] = "cpu"
    parser: str = "auto"
    bare_arithmetic: bool = False
    batch_size: int = 64
    workers: int = 1
    cache: bool | str = False
    keys: bool = False
    _loaded: dict = field(default_factory=dict, repr=False)

    def load(self) -> None:
        """The parser (spaCy itself loads at the first parse), the cache and the worker pool."""
        if self._loaded:
            return
        problem_parser = ProblemParser(self.parser, bare_arithmetic=self.bare_arithmetic)
        self._loaded["identity"] = parser_identity(problem_parser)
        self._loaded["parser"] = problem_parser
        if self.cache is not False:
            self._loaded["cache"] = GraphCache(None if self.cache is True else self.cache)
        if self.workers > 1:
            # fork starts workers with the modules imported; elsewhere (macOS, Windows) only spawn is safe
            context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
            self._loaded["pool"] = context.Pool(
                self.workers, initializer=_start_parser, initargs=(self.parser, self.bare_arithmetic)
            )

    def __call__(self, items: list[dict]) -> list[dict]:
        self.load()
        texts = list(dict.fromkeys(text for item in items for text in texts_of(item["input"])))
        identity = self._loaded["identity"]
        keys = {text: graph_key(text, identity) for text in texts} if (self.keys or "cache" in self._loaded) else {}
        cache: GraphCache | None = self._loaded.get("cache")
        found = cache.get_many(keys.values()) if cache is not None else {}
        missing = [text for text in texts if keys.get(text) not in found]
        parsed = dict(zip(missing, self._parse(missing)))
        if cache is not None:
            if parsed:
                cache.put_many({keys[text]: graph for text, graph in parsed.items()})
            logger.debug("graph cache %s: %d hits, %d parsed", cache.path, len(texts) - len(missing), len(missing))
        graphs = {text: parsed[text] if text in parsed else found[keys[text]] for text in texts}
        for item in items:
            problems = texts_of(item["input"])
            item["graphs"] = [graphs[text] for text in problems]
            if self.keys:
                item["graph_keys"] = [keys[text] for text in problems]
        return items

    def _parse(self, texts: list[str]) -> list[MathSyntaxGraph]:
        batches = list(chunked(texts, self.batch_size))
        pool = self._loaded.get("pool")
        if pool is not None:
            return [graph for graphs in pool.map(_parse_batch, batches) for graph in graphs]
        problem_parser: ProblemParser = self._loaded["parser"]
        return [graph for batch in batches for graph in problem_parser.parse_batch(list(batch))]

    def close(self) -> None:
        """Stop the worker pool, close the cache."""
        if pool := self._loaded.pop("pool", None):
            pool.close()
            pool.join()
        if cache := self._loaded.pop("cache", None):
            cache.close()
        self._loaded.clear()

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_loaded": {}}  # a pool, a parser and an open cache stay in their process


_worker_parser: ProblemParser | None = None


def _start_parser(parser: str, bare_arithmetic: bool) -> None:
    global _worker_parser
    _worker_parser = ProblemParser(parser, bare_arithmetic=bare_arithmetic)


def _parse_batch(texts: list[str]) -> list[MathSyntaxGraph]:
    assert _worker_parser is not None, "worker used before its initializer ran"
    return _worker_parser.parse_batch(list(texts))


@dataclass
class EncodeStage:
    """``item["vector"]``: the ``MathEncoder`` vector (``mode``: joint, text, graph) of each item's graph,
    or of its text when it has none; the model loads once, on ``device`` (None: CUDA when available), and
    runs on ``threads`` CPU threads (None: torch's default). A model package runs on ``runtime``
    (``models.package.ModelPackage``: ONNX Runtime by default on the CPU where it carries graphs)."""

    kind: ClassVar[str] = "model"
    model: str = "shipped"
    mode: str = "joint"
    batch_size: int = 32
    device: str | None = None
    threads: int | None = None
    runtime: str | None = None
    _loaded: dict = field(default_factory=dict, repr=False)

    def load(self) -> None:
        """Load the encoder."""
        if not self._loaded:
            if self.threads is not None:
                from mathgraph.models.threads import configure_threads

                configure_threads(self.threads)

            from mathgraph.models.package import onnx_encoder

            encoder = onnx_encoder(self.model, self.device, self.runtime)
            if encoder is None:  # no ONNX graphs for this model (or --runtime torch): PyTorch's encoder
                from mathgraph.models.encoder import MathEncoder

                encoder = MathEncoder.from_pretrained(self.model, device=self.device)
            self._loaded["encoder"] = encoder

    def __call__(self, items: list[dict]) -> list[dict]:
        self.load()
        problems = [item["graphs"][0] if "graphs" in item else item["input"] for item in items]
        vectors = self._loaded["encoder"].encode(
            problems, batch_size=self.batch_size, mode=self.mode, device=self.device, show_progress=False
        )
        for item, vector in zip(items, vectors):
            item["vector"] = vector
        return items

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_loaded": {}}


@dataclass(frozen=True)
class TaskRowInput:
    """``to_input`` of a prediction job: a validated row's input for a task of ``input_shape`` ``kind``
    (``mathgraph.task_specs.row_input``)."""

    kind: str
    text_field: str = "problem"

    def __call__(self, row: dict) -> object:
        return row_input(self.kind, row, self.text_field)


@dataclass
class PredictStage:
    """``item["result"]``: the prediction of each item's input, with the label names (QAM: ``label_name``), as
    ``mathgraph predict`` prints them. The graphs a parse stage made (``item["graphs"]``, one per text of the
    input, here or in another process) go to the predictor with the inputs: nothing is parsed twice.

    Args:
        load_predictor: makes the predictor (a ``mathgraph.api.Predictor``) given ``device=``; it must pickle,
            to a Ray actor (``functools.partial(Predictor.from_pretrained, model, task, ...)``).
        batch_size: inputs per model batch.
        device: passed to ``load_predictor`` (None: CUDA when available; Ray's engine sets it per actor).
        threads: torch CPU threads (None: every core this process may use).
    """

    kind: ClassVar[str] = "model"
    load_predictor: Callable[..., Any]
    batch_size: int = 32
    device: str | None = None
    threads: int | None = None
    _loaded: dict = field(default_factory=dict, repr=False)

    def load(self) -> None:
        """Set torch's threads and load the predictor, once."""
        if self._loaded:
            return
        from mathgraph.models.threads import configure_threads

        configure_threads(self.threads)
        self._loaded["predictor"] = self.load_predictor(device=self.device)

    def __call__(self, items: list[dict]) -> list[dict]:
        self.load()
        graphs = {
            text: graph
            for item in items
            if "graphs" in item
            for text, graph in zip(texts_of(item["input"]), item["graphs"], strict=True)
        }
        results = self._loaded["predictor"].predict(
            [item["input"] for item in items], batch_size=self.batch_size, graphs=graphs
        )
        for item, result in zip(items, results, strict=True):
            item["result"] = result
        return items

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_loaded": {}}


def model_parser(name_or_dir: str | PathLike) -> str | None:
    """The dependency parser a saved model's graphs come from (its ``config.json``; a package's: its encoder's
    or multi-task model's), read without loading the model; ``None`` where the config does not say (the
    untrained encoder, a TF-IDF model): then the model stage parses what it needs itself."""
    try:
        directory = resolve(name_or_dir)
        config = read_config(directory)
    except (OSError, CheckpointError):  # no such model (the untrained one is a name, not a directory)
        return None
    if isinstance(config.get("parser"), str):
        return config["parser"]
    for part in ("encoder", "multitask"):
        if isinstance(config.get(part), str) and (directory / config[part]).is_dir():
            found = model_parser(directory / config[part])
            if found:
                return found
    return None


__all__ = ["texts_of", "GraphInput", "ParseStage", "EncodeStage", "TaskRowInput", "PredictStage", "model_parser"]
