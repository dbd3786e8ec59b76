"""The ASGI application of ``mathgraph serve``: JSON endpoints under ``/api`` and the page at ``/``.

=================================  ==========================================================
``GET  /api/health``               what is loaded (model, tasks, index) and the limits
``POST /api/parse``                graphs as ``mathgraph parse --format json`` (and layouts)
``POST /api/draw``                 one graph drawn as ``mathgraph parse --draw x.svg``
``POST /api/encode``               vectors as ``mathgraph encode``
``POST /api/predict/{task}``       results as ``mathgraph predict TASK --format json``
``POST /api/search``               hits as ``mathgraph search --format json``
``POST /api/compare``              alignments and QRC relations as ``mathgraph compare --format json``
``POST /api/check``                a solution checked against its problem (``parsers.solution.check_solution``)
``GET  /api/openapi.json``         the OpenAPI schema
=================================  ==========================================================

Errors are JSON ``{"detail": ...}``: 422 for a body that does not fit its schema
(an empty text, a text that is not valid Unicode, a wrong field) or an input the
task cannot read, 404 for a task the model does not predict or a search without
an index, 413 for a request over a limit (body bytes, texts in a request,
characters in a text or in all of a request's texts, k). No input gets a 500.

Endpoints are plain functions, so FastAPI runs each request in a worker thread,
off the event loop; the service shares the models between them fairly
(``service``, ``model_lock``).
"""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from mathgraph import __version__
from mathgraph.serve.schemas import (
    CheckRequest,
    CompareRequest,
    DrawRequest,
    EncodeRequest,
    PairInput,
    ParseRequest,
    PredictRequest,
    SearchRequest,
)
from mathgraph.serve.service import Limits, Service, texts_of

STATIC_DIR = Path(__file__).parent / "static"
_SURROGATE = re.compile("[\ud800-\udfff]")


def create_app(service: Service, limits: Limits | None = None) -> FastAPI:
    """The application serving ``service``'s loaded models under ``limits`` (default ``Limits()``)."""
    limits = limits or Limits()
    app = FastAPI(
        title="mathgraph",
        version=__version__,
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,  # both load their scripts from a CDN; the schema is enough
        description="Math syntax graphs, encodings, task predictions and similar-problem search.",
    )
    app.add_middleware(RequestSizeLimit, max_bytes=limits.max_request_bytes)

    @app.exception_handler(ValueError)
    def unreadable_input(request: Request, error: ValueError) -> JSONResponse:
        # the library's errors for an input it cannot read (models.task_io.InputError and the like)
        return JSONResponse({"detail": str(error)}, status_code=422)

    @app.exception_handler(RequestValidationError)
    def unfitting_body(request: Request, error: RequestValidationError) -> JSONResponse:
        # FastAPI's answer, but the offending input shown as JSON can write it (a lone surrogate cannot be
        # encoded: its 422 would have become a 500)
        return JSONResponse({"detail": _encodable(jsonable_encoder(error.errors()))}, status_code=422)

    @app.get("/api/health")
    def health() -> dict:
        """The server is up: what it has loaded, and its limits."""
        return {"status": "ok", "version": __version__, **service.describe(), "limits": asdict(limits)}

    @app.post("/api/parse")
    def parse(request: ParseRequest) -> JSONResponse:
        """Math syntax graphs of ``texts``, in order (each as ``MathSyntaxGraph.to_dict``); with ``layout``,
        also ``layouts``: each graph's node positions and colours, as ``draw`` lays them out."""
        _check_texts(limits, request.texts)
        graphs = service.parse(request.texts, bare_arithmetic=request.bare_arithmetic)
        result = {"graphs": [graph.to_dict() for graph in graphs]}
        if request.layout:
            from mathgraph.draw import graph_layout

            result["layouts"] = [graph_layout(graph) for graph in graphs]
        return _json(result)

    @app.post("/api/draw", response_class=Response, responses={200: {"content": {"image/svg+xml": {}}}})
    def draw(request: DrawRequest) -> Response:
        """One problem's graph as an SVG picture (nodes coloured by kind, relation names on the edges)."""
        _check_texts(limits, [request.text])
        return Response(service.draw_svg(request.text, relations=request.relations), media_type="image/svg+xml")

    @app.post("/api/encode")
    def encode(request: EncodeRequest) -> JSONResponse:
        """One vector per text (``mode``: fused, text or graph)."""
        _check_texts(limits, request.texts)
        vectors = service.encode(request.texts, mode=request.mode)
        return _json({"mode": request.mode, "dimension": int(vectors.shape[1]), "vectors": vectors.tolist()})

    @app.post("/api/predict/{task}")
    def predict(task: str, request: PredictRequest) -> JSONResponse:
        """The model's results for each input: ``{label, probabilities}`` for KPC, QRC and QAM (QAM's also
        ``label_name``: ``"matches"`` for 1, ``"does not match"`` for 0), ``{scores, ranking}`` of the
        candidates for SQR."""
        if task not in service.predictors:
            raise HTTPException(404, f"no task {task!r}: this model predicts {', '.join(service.predictors)}")
        inputs = [_task_input(item) for item in request.inputs]
        _check_texts(limits, [text for item in inputs for text in texts_of(item)], batch=len(inputs))
        for item in inputs:
            if isinstance(item, tuple) and isinstance(item[1], list) and len(item[1]) > limits.max_batch:
                raise HTTPException(
                    413,
                    f"{len(item[1])} candidates in one input; this server takes at most "
                    f"{limits.max_batch} (--max-batch)",
                )
        return _json({"task": task, "results": service.predict(task, inputs)})

    @app.post("/api/search")
    def search(request: SearchRequest) -> JSONResponse:
        """The ``k`` index rows most similar to each query, best first: ``{rank, index, score, cosine, row}`` (the
        score is the cosine, or the fused score of a hybrid search: ``tasks.search.index.Hit``)."""
        if service.index is None:
            raise HTTPException(404, "no search index: start the server with --index DIR")
        _check_texts(limits, request.queries)
        if request.k > limits.max_k:
            raise HTTPException(413, f"k={request.k}; this server returns at most {limits.max_k} results a query")
        hits = service.search(request.queries, k=request.k, hybrid=request.hybrid)
        return _json(
            {
                "results": [
                    {"query": query, "hits": [{"rank": rank, **hit.to_dict()} for rank, hit in enumerate(hits_, 1)]}
                    for query, hits_ in zip(request.queries, hits)
                ]
            }
        )

    @app.post("/api/compare")
    def compare(request: CompareRequest) -> JSONResponse:
        """Each pair's alignment (problem b against problem a, or with ``solution`` the solution b against
        question a) and the QRC relation the model predicts for it: ``{alignment, relation}``; ``relation`` is
        ``{label, probabilities}`` (``"same problem"`` where the alignment finds the same problem), or null with
        ``solution`` or a model that does not predict QRC."""
        pairs = [(pair.text_a, pair.text_b) for pair in request.pairs]
        _check_texts(limits, [text for pair in pairs for text in pair], batch=len(pairs))
        return _json({"results": service.compare(pairs, solution=request.solution)})

    @app.post("/api/check")
    def check(request: CheckRequest) -> JSONResponse:
        """The solution checked against the problem, step by step (``parsers.solution.check_solution``):
        ``{ok, findings: [{kind, severity, step, message}], first_error_step, graph}``; ``step`` counts the
        solution's lines from 0."""
        _check_texts(limits, [request.problem, request.solution], batch=1)
        return _json(service.check(request.problem, request.solution))

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def _task_input(item):
    """A request input in the shape the predictors take (``models.task_io``): a text, a pair or
    ``(query, candidates)``; whether it fits the task is checked by ``Service.predict`` (a 422 if not)."""
    if isinstance(item, str):
        return item
    if isinstance(item, PairInput):
        return item.text_a, item.text_b
    return item.query, list(item.candidates)


def _check_texts(limits: Limits, texts: list[str], batch: int | None = None) -> None:
    """413 for a batch of more than ``max_batch`` items, a text over ``max_text_chars`` or texts over
    ``max_request_chars`` in all: the budget of one request's model work."""
    batch = len(texts) if batch is None else batch
    if batch > limits.max_batch:
        raise HTTPException(
            413, f"{batch} items in one request; this server takes at most {limits.max_batch} (--max-batch)"
        )
    for i, text in enumerate(texts):
        if len(text) > limits.max_text_chars:
            raise HTTPException(
                413,
                f"text {i} has {len(text)} characters; this server takes at most "
                f"{limits.max_text_chars} (--max-text-chars)",
            )
    total = sum(map(len, texts))
    if total > limits.max_request_chars:
        raise HTTPException(
            413,
            f"the texts of this request have {total} characters in all; this server takes at most "
            f"{limits.max_request_chars} a request (--max-request-chars): send them in several requests",
        )


def _json(data) -> JSONResponse:
    """``data`` as a JSON answer, written here, in the request's worker thread: left to FastAPI, a large answer
    (the alignments of long problems) would be encoded on the event loop, holding up every other request."""
    return JSONResponse(data)


def _encodable(value):
    """``value`` (JSON data) with each lone surrogate in its strings replaced by U+FFFD, so it encodes."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_encodable(item) for item in value]
    if isinstance(value, dict):
        return {key: _encodable(item) for key, item in value.items()}
    return value


class RequestSizeLimit:
    """ASGI middleware: a request body over ``max_bytes`` gets a 413 before any endpoint reads it.

    A declared ``Content-Length`` over the limit is refused at once; otherwise the body is read (at most
    ``max_bytes`` of it are kept) and handed on, so a chunked body without a length is limited too."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:  # after the body, the app waits here for a disconnect
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope, receive, send) -> None:
        response = JSONResponse(
            {"detail": f"the request body is over this server's limit of {self.max_bytes} bytes (--max-request-bytes)"},
            status_code=413,
        )
        await response(scope, receive, send)
