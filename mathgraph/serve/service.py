"""What ``mathgraph serve`` keeps loaded, and the one lock its model work runs under.

A ``Service`` loads the task models, the encoder and the search index once, at
start, and answers the endpoints' questions with the library's own functions
(the same ones the CLI commands call, so a served answer equals the CLI's).

Requests are served concurrently, but model work (parsing, encoding,
predicting, searching, drawing) runs one call at a time under one
``batching.ModelLock``: Hugging Face fast tokenizers raise "Already borrowed"
when two threads use one tokenizer, spaCy does not promise thread safety, and
a torch forward pass already uses every core, so running two at once would not
be faster here. Predict, encode and search requests that wait on the lock
together run as one batch.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from os import PathLike
from typing import TYPE_CHECKING

from mathgraph.serve.model_lock import ModelLock

if TYPE_CHECKING:
    import numpy as np

SHIPPED_MODEL = "shipped"  # what ``describe`` calls the model when --model is left out


@dataclass(frozen=True)
class Limits:
    """Request limits (``mathgraph serve --max-...``); a request over one gets a 413 that names it."""

    max_text_chars: int = 10_000  # characters in one text (a problem, a candidate, a query)
    max_batch: int = 64  # texts, inputs or queries in one request
    max_request_bytes: int = 1_000_000  # the request body
    max_k: int = 100  # search results per query

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")


class Service:
    """The loaded models behind the endpoints: ``predictors`` ``{task: predictor}`` (each with
    ``predict(inputs)``), the ``encoder`` of ``encode`` (a ``MathEncoder``) and an optional search ``index``
    (a ``SearchIndex`` with its encoder). Every method's model work runs under ``self.model_lock`` (see the
    module docstring)."""

    def __init__(
        self,
        predictors: dict,
        encoder,
        index=None,
        model_name: str = SHIPPED_MODEL,
        index_path: str | None = None,
        hybrid: dict[str, bool] | None = None,
    ):
        self.predictors, self.encoder, self.index = dict(predictors), encoder, index
        self.model_name, self.index_path = model_name, index_path
        self.hybrid = dict(hybrid or {})
        self.model_lock = ModelLock()

    # ------------------------------------------------------------- loading
    @classmethod
    def load(
        cls,
        model: str | PathLike | None = None,
        encoder: str | PathLike = "shipped",
        index: str | PathLike | None = None,
        hybrid: bool | None = None,
        device: str | None = None,
    ) -> Service:
        """Load everything once: the task models of ``model`` (a task or multi-task model directory; None:
        the shipped multi-task model, fused with TF-IDF as ``mathgraph predict`` does, per ``hybrid``), the
        ``encoder`` of ``encode`` (as ``mathgraph encode --model``) and the ``index`` (as ``mathgraph search``)."""
        from mathgraph.models.encoder import MathEncoder
        from mathgraph.tasks.search.embedders import MathEncoderEmbedder
        from mathgraph.tasks.search.index import SearchIndex

        # damaged index files are reported before any model is loaded
        loaded_index = SearchIndex.from_pretrained(index, device=device) if index is not None else None
        from mathgraph.api import task_predictors
        from mathgraph.models.late_fusion import HybridPredictor

        predictors = task_predictors("shipped" if model is None else model, hybrid=hybrid, device=device)
        late_fusion = {task: isinstance(p, HybridPredictor) for task, p in predictors.items()}
        embedder = loaded_index.embedder if loaded_index is not None else None
        if isinstance(embedder, MathEncoderEmbedder) and embedder.source == str(encoder):
            math_encoder = embedder.encoder  # the index was built with this encoder: one copy in memory
        else:
            math_encoder = MathEncoder.from_pretrained(encoder, device=device)
        return cls(
            predictors,
            math_encoder,
            loaded_index,
            model_name=SHIPPED_MODEL if model is None else str(model),
            index_path=None if index is None else str(index),
            hybrid=late_fusion,
        )

    # ------------------------------------------------------------- the endpoints' work
    def parse(self, texts: Sequence[str], bare_arithmetic: bool = False) -> list:
        """The math syntax graphs of ``texts`` (as ``mathgraph parse``)."""
        from mathgraph.parsers.problem import parse_problems

        with self.model_lock.lock:
            return list(parse_problems(list(texts), bare_arithmetic=bare_arithmetic))

    def draw_svg(self, text: str, relations: bool = True) -> str:
        """``text``'s graph drawn by ``mathgraph.draw.draw_graph``, as an SVG document."""
        from matplotlib.figure import Figure

        from mathgraph.draw import draw_graph, picture_size
        from mathgraph.parsers.problem import parse_problem

        with self.model_lock.lock:
            graph = parse_problem(text)
            # a Figure of its own, not pyplot's: no GUI backend in a worker thread, nothing left open to close
            figure = Figure(figsize=picture_size(graph))
            draw_graph(graph, ax=figure.add_subplot(), show_relations=relations)
            buffer = io.StringIO()
            figure.savefig(buffer, format="svg", bbox_inches="tight")
        return buffer.getvalue()

    def encode(self, texts: Sequence[str], mode: str = "joint") -> np.ndarray:
        """Vectors of ``texts`` from the encoder (as ``mathgraph encode``), one row per text."""
        import numpy as np

        rows = self.model_lock.run_batched(("encode", mode), texts, lambda batch: self.encoder.encode(batch, mode=mode))
        return np.stack(rows)

    def predict(self, task: str, inputs: Sequence) -> list[dict]:
        """Results of ``task``'s model for ``inputs`` (as ``mathgraph predict``); ``KeyError`` for a task
        the model does not predict, ``models.task_io.InputError`` for an input it cannot read."""
        from mathgraph.models.task_heads import get_task_head
        from mathgraph.models.task_io import check_input

        predictor = self.predictors[task]
        for position, item in enumerate(inputs):  # before batching: an error names this request's input
            check_input(get_task_head(task), item, position)
        from mathgraph.labels import with_label_names  # QAM's 1/0 also as "matches"/"does not match"

        return with_label_names(task, self.model_lock.run_batched(("predict", task), inputs, predictor.predict))

    def search(self, queries: Sequence[str], k: int = 5, hybrid: bool | None = None) -> list[list]:
        """The ``k`` index rows nearest each query, best first (as ``mathgraph search``)."""
        from mathgraph.tasks.search.commands import hybrid_search_weight, structure_search_weight

        if self.index is None:
            raise LookupError("no search index: start the server with --index DIR")
        weight, structure_weight = hybrid_search_weight(hybrid), structure_search_weight(hybrid)
        return self.model_lock.run_batched(
            ("search", k, weight, structure_weight),
            queries,
            lambda batch: self.index.search(batch, k=k, sparse_weight=weight, structure_weight=structure_weight),
        )

    def compare(self, pairs: Sequence[tuple[str, str]], solution: bool = False) -> list[dict]:
        """``{alignment, relation}`` of each ``(text_a, text_b)`` pair, as ``mathgraph compare --format json``:
        ``parsers.compare.align_problems`` (or, with ``solution``, ``align_solution``) and the QRC model's
        ``{label, probabilities}`` for the pair (None with ``solution`` or without a QRC model)."""
        from mathgraph.parsers.compare import align_texts

        pairs = [tuple(pair) for pair in pairs]
        with self.model_lock.lock:  # spaCy parses under the lock; the QRC model then finds the graphs cached
            alignments = [a.to_dict() for a in align_texts(pairs, solution=solution)]
        relations = [None] * len(pairs)
        if not solution and "qrc" in self.predictors:
            relations = [
                {"label": result["label"], "probabilities": result["probabilities"]}
                for result in self.predict("qrc", pairs)
            ]  # batched with waiting QRC predictions
        return [{"alignment": alignment, "relation": relation} for alignment, relation in zip(alignments, relations)]

    def describe(self) -> dict:
        """What is loaded, for the health endpoint and the page."""
        from mathgraph.models.task_heads import get_task_head

        index = (
            None
            if self.index is None
            else {"path": self.index_path, "rows": len(self.index), "text_field": self.index.text_field}
        )
        tasks = [
            {"name": task, "input": get_task_head(task).input_shape, "hybrid": self.hybrid.get(task, False)}
            for task in self.predictors
        ]
        return {
            "model": self.model_name,
            "tasks": tasks,
            "encoder_dimension": self.encoder.dimension("joint"),
            "index": index,
        }
