"""What ``mathgraph serve`` keeps loaded, and the fair locks its model work runs under.

A ``Service`` loads the task models, the encoder and the search index once, at
start, and answers the endpoints' questions with the library's own functions
(the same ones the CLI commands call, so a served answer equals the CLI's).

Requests are served concurrently (each in a worker thread), but model work runs
one call at a time per lock: ``parse_lock`` for the dependency parser (spaCy
does not promise thread safety) and ``model_lock`` for the torch models (Hugging
Face fast tokenizers raise "Already borrowed" when two threads use one
tokenizer, and a forward pass already uses every core). Both are
``model_lock.FairLock`` locks: a request's texts go through them in chunks, the
turns go to the request that has had the least, and waiting chunks of the same
kind run as one batch. A prediction is ``mathgraph.api.Predictor``'s three steps: its texts are parsed under
``parse_lock`` (through the service's ``graph_cache``), then ``preprocess`` (the inputs checked, the
alignments of their pairs: plain Python) runs in the request's own thread under no lock, ``forward`` runs
under ``model_lock`` (chunks of several requests as one batch: each brings its own graphs, so a model never
parses under the lock) and ``postprocess`` back in the request's thread. Each request's model work is bounded
by ``Limits`` (texts, characters in a text, characters in all).
"""

from __future__ import annotations

import io
import threading
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from os import PathLike
from typing import TYPE_CHECKING

from mathgraph.api import Predictor, texts_of
from mathgraph.serve.model_lock import Account, FairLock

if TYPE_CHECKING:
    import numpy as np

SHIPPED_MODEL = "shipped"  # what ``describe`` calls the model when --model is left out
# (items, characters) a turn of each lock takes at most; a text over that alone. On the 2-core development
# CPU a turn is then well under a second, but for one long text (a 10,000-character problem: about 0.6 s
# to parse, 0.5 s for KPC, 1.5 s for a QRC pair of two).
PARSE_CHUNK = (16, 8_000)
MODEL_CHUNK = (8, 4_000)


@dataclass(frozen=True)
class Limits:
    """Request limits (``mathgraph serve --max-...``): a request over one gets a 413 that names it. Together
    they bound one request's model work: at most ``max_batch`` texts, ``max_text_chars`` characters in one,
    ``max_request_chars`` in all (about a quarter as many word-piece tokens)."""

    max_text_chars: int = 10_000  # characters in one text (a problem, a candidate, a query)
    max_batch: int = 64  # texts, inputs or queries in one request
    max_request_bytes: int = 1_000_000  # the request body
    max_k: int = 100  # search results per query
    max_request_chars: int = 100_000  # characters of all the texts of one request

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")


class Service:
    """The loaded models behind the endpoints: ``predictors`` ``{task: mathgraph.api.Predictor}`` (a model
    with ``predict(inputs, batch_size)`` is made one), the ``encoder`` of ``encode`` (a ``MathEncoder``) and an
    optional search ``index`` (a ``SearchIndex`` with its encoder). Parsing runs under ``self.parse_lock``
    and model work under ``self.model_lock`` (see the module docstring), through ``graph_cache`` (``None``:
    no file; ``True``: the default one). Every method takes an ``account``: pass one
    ``model_lock.Account`` to all the calls of one request (None: a new one, a request of its own)."""

    def __init__(
        self,
        predictors: dict,
        encoder,
        index=None,
        model_name: str = SHIPPED_MODEL,
        index_path: str | None = None,
        graph_cache=None,
    ):
        self.predictors = {
            task: p if isinstance(p, Predictor) else Predictor(task, p, graph_cache=graph_cache)
            for task, p in predictors.items()
        }
        self.encoder, self.index = encoder, index
        self.model_name, self.index_path, self.graph_cache = model_name, index_path, graph_cache
        self.parse_lock = FairLock(*PARSE_CHUNK)
        self.model_lock = FairLock(*MODEL_CHUNK)
        self._draw_lock = threading.Lock()  # matplotlib is not thread-safe either; drawing needs no model

    # ------------------------------------------------------------- loading
    @classmethod
    def load(
        cls,
        model: str | PathLike | None = None,
        encoder: str | PathLike = "shipped",
        index: str | PathLike | None = None,
        hybrid: bool | None = None,
        device: str | None = None,
        runtime: str | None = None,
        graph_cache=True,
    ) -> Service:
        """Load everything once: the predictors of ``model`` (``mathgraph.api.predictors``: a task or
        multi-task model directory; None: the shipped package, fused with TF-IDF as ``mathgraph predict`` does,
        per ``hybrid``), the ``encoder`` of ``encode`` (as ``mathgraph encode --model``) and the ``index`` (as
        ``mathgraph search``), a package's networks on ``runtime``; graphs kept in ``graph_cache`` (default:
        the default file, so that a text asked again is not parsed again)."""
        from mathgraph.api import load_encoder, predictors
        from mathgraph.tasks.search.embedders import MathEncoderEmbedder, OnnxEncoderEmbedder

        loaded_index = None
        if index is not None:  # damaged index files are reported before any model is loaded
            from mathgraph.tasks.search.index import SearchIndex

            loaded_index = SearchIndex.from_pretrained(index, device=device, runtime=runtime)
        # a --model that holds nothing is reported before torch is imported (and before its warnings)
        loaded = predictors(
            "shipped" if model is None else model,
            hybrid=hybrid,
            device=device,
            runtime=runtime,
            graph_cache=graph_cache,
        )
        embedder = loaded_index.embedder if loaded_index is not None else None
        if isinstance(embedder, (MathEncoderEmbedder, OnnxEncoderEmbedder)) and embedder.source == str(encoder):
            math_encoder = embedder.encoder  # the index was built with this encoder: one copy in memory
        else:
            math_encoder = load_encoder(encoder, device, runtime)
        return cls(
            loaded,
            math_encoder,
            loaded_index,
            model_name=SHIPPED_MODEL if model is None else str(model),
            index_path=None if index is None else str(index),
            graph_cache=graph_cache,
        )

    # ------------------------------------------------------------- the endpoints' work
    def graphs(self, texts: Sequence[str], account: Account | None = None, parser: str = "auto") -> list:
        """The graphs of ``texts`` by ``parser`` through the service's graph cache
        (``parsers.graph_cache.parse_cached``), parsed in chunks under the parser lock."""
        from mathgraph.parsers.graph_cache import parse_cached

        cache = self.graph_cache
        return self.parse_lock.run_batched(
            ("graphs", parser), texts, lambda batch: parse_cached(batch, parser=parser, cache=cache), account
        )

    def parse(self, texts: Sequence[str], bare_arithmetic: bool = False, account: Account | None = None) -> list:
        """The math syntax graphs of ``texts`` (as ``mathgraph parse``)."""
        from mathgraph.parsers.problem import parse_problems

        return self.parse_lock.run_batched(
            ("parse", bare_arithmetic),
            texts,
            lambda batch: parse_problems(batch, bare_arithmetic=bare_arithmetic),
            account,
        )

    def draw_svg(self, text: str, relations: bool = True, account: Account | None = None) -> str:
        """``text``'s graph drawn by ``mathgraph.draw.draw_graph``, as an SVG document; a ``UserError`` naming the
        ``draw`` extra where matplotlib is not installed (the server's other answers need no matplotlib)."""
        from mathgraph.draw import draw_graph, picture_size, require_matplotlib

        require_matplotlib("drawing a graph")  # before the parse: a picture that cannot be drawn costs nothing
        from matplotlib.figure import Figure

        [graph] = self.graphs([text], account)
        with self._draw_lock:
            # a Figure of its own, not pyplot's: no GUI backend in a worker thread, nothing left open to close
            figure = Figure(figsize=picture_size(graph))
            draw_graph(graph, ax=figure.add_subplot(), show_relations=relations)
            buffer = io.StringIO()
            with warnings.catch_warnings():  # a character no font has is drawn as a box: not worth a log line
                warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
                figure.savefig(buffer, format="svg", bbox_inches="tight")
        return buffer.getvalue()

    def encode(self, texts: Sequence[str], mode: str = "joint", account: Account | None = None) -> np.ndarray:
        """Vectors of ``texts`` from the encoder (as ``mathgraph encode``), one row per text."""
        import numpy as np

        account = account or Account()
        problems = list(texts) if mode == "text" else self.graphs(texts, account)  # text vectors need no graph
        rows = self.model_lock.run_batched(
            ("encode", mode), problems, lambda batch: self.encoder.encode(batch, mode=mode), account, _size
        )
        return np.stack(rows)

    def predict(self, task: str, inputs: Sequence, account: Account | None = None) -> list[dict]:
        """Results of ``task``'s predictor for ``inputs`` (as ``mathgraph predict``); ``KeyError`` for a task
        the model does not predict, ``models.task_io.InputError`` (a ``UserError``) for an input it cannot
        read, naming its place in this request."""
        from mathgraph.api import check_inputs

        if task not in self.predictors:
            raise KeyError(task)
        check_inputs(task, inputs)  # before any parsing: an error names this request's input
        return self._predict(task, inputs, account or Account())

    def _predict(self, task: str, inputs: Sequence, account: Account, alignments=None) -> list[dict]:
        """``predict`` of checked ``inputs`` (see the module docstring for where each step runs);
        ``alignments``: ``{(text_a, text_b): alignment}`` of pairs this request aligned already."""
        predictor = self.predictors[task]
        graphs = None
        if predictor.parser is not None:
            texts = list(dict.fromkeys(text for item in inputs for text in texts_of(item)))
            graphs = dict(zip(texts, self.graphs(texts, account, parser=predictor.parser)))
        prepared = predictor.preprocess(inputs, graphs=graphs, alignments=alignments)
        raw = self.model_lock.run_batched(("predict", task), prepared, predictor.forward, account, _size)
        return predictor.postprocess(raw)

    def search(
        self, queries: Sequence[str], k: int = 5, hybrid: bool | None = None, account: Account | None = None
    ) -> list[list]:
        """The ``k`` index rows nearest each query, best first (as ``mathgraph search``)."""
        from mathgraph.tasks.search.commands import search_weights
        from mathgraph.tasks.search.embedders import MathEncoderEmbedder, OnnxEncoderEmbedder

        if self.index is None:
            raise LookupError("no search index: start the server with --index DIR")
        account = account or Account()
        weight, structure_weight, skeleton_weight = search_weights(hybrid)  # as `mathgraph search`
        if isinstance(self.index.embedder, (MathEncoderEmbedder, OnnxEncoderEmbedder)) or structure_weight > 0:
            self.graphs(queries, account)  # the queries' graphs, for the encoder to find in the cache

        def search_batch(batch: list) -> list:
            weights = {"sparse_weight": weight, "skeleton_weight": skeleton_weight}
            if structure_weight == 0:
                return self.index.search(batch, k=k, structure_weight=0, **weights)
            with self.parse_lock.hold(account):  # the structure step parses the rows it ranks
                return self.index.search(batch, k=k, structure_weight=structure_weight, **weights)

        key = ("search", k, weight, structure_weight, skeleton_weight)
        return self.model_lock.run_batched(key, queries, search_batch, account)

    def compare(
        self, pairs: Sequence[tuple[str, str]], solution: bool = False, account: Account | None = None
    ) -> list[dict]:
        """``{alignment, relation}`` of each ``(text_a, text_b)`` pair, as ``mathgraph compare --format json``:
        ``parsers.compare.align_problems`` (or, with ``solution``, ``align_solution``) and the relation
        (``parsers.compare.compared_relations``: ``"same problem"`` for the same problem, else the QRC model's
        ``{label, probabilities}``; None with ``solution`` or without a QRC model)."""
        from mathgraph.parsers.compare import align_problems, compared_relations
        from mathgraph.parsers.solution import align_solution

        account = account or Account()
        pairs = [tuple(pair) for pair in pairs]
        texts = [a for a, _ in pairs] if solution else [text for pair in pairs for text in pair]
        graphs = dict(zip(texts, self.graphs(texts, account)))  # a solution is read as text, not parsed
        # plain Python on the graphs: in this request's thread, under no lock
        if solution:
            alignments = [align_solution(graphs[a], b) for a, b in pairs]
        else:
            alignments = [align_problems(graphs[a], graphs[b]) for a, b in pairs]
        relations = [None] * len(pairs)
        if not solution and "qrc" in self.predictors:  # batched with waiting QRC predictions
            aligned = dict(zip(pairs, alignments))  # the alignment model of QRC reads them: not aligned twice
            relations = compared_relations(
                alignments, pairs, lambda asked: self._predict("qrc", asked, account, alignments=aligned)
            )
        return [{"alignment": a.to_dict(), "relation": relation} for a, relation in zip(alignments, relations)]

    def check(self, problem: str, solution: str, account: Account | None = None) -> dict:
        """``parsers.solution.check_solution`` of ``solution`` against ``problem`` (``SolutionCheck.to_dict``):
        the problem is parsed under the parser lock, the check itself needs no model and takes no lock."""
        from mathgraph.parsers.solution import check_solution

        [graph] = self.graphs([problem], account)
        return check_solution(graph, solution).to_dict()

    def describe(self) -> dict:
        """What is loaded, for the health endpoint and the page."""
        from mathgraph.task_specs import task_spec

        index = (
            None
            if self.index is None
            else {"path": self.index_path, "rows": len(self.index), "text_field": self.index.text_field}
        )
        tasks = [
            {"name": task, "input": task_spec(task).input_shape, "hybrid": predictor.late_fusion}
            for task, predictor in self.predictors.items()
        ]
        return {
            "model": self.model_name,
            "tasks": tasks,
            "encoder_dimension": self.encoder.dimension("joint"),
            "index": index,
        }


def _size(item) -> int:
    """An item's characters, for chunking: a text's, a graph's text's, or all the texts of a task input (or of
    a prepared one)."""
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return len(text)
    return sum(map(len, texts_of(getattr(item, "input", item))))
