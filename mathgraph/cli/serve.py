"""``mathgraph serve``: the models loaded once behind a local web service and page (``mathgraph.serve``)."""

from __future__ import annotations

import argparse
import errno
import logging
import socket
import sys

from mathgraph.cli.common import (
    NAMED_MODELS,
    add_runtime_argument,
    at_least_one,
    check_index_argument,
    check_model_argument,
)
from mathgraph.errors import UserError
from mathgraph.quiet import warn
from mathgraph.serve.service import Limits, Service

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(commands) -> None:
    """Add ``serve`` to the ``mathgraph`` commands."""
    defaults = Limits()
    serve = commands.add_parser(
        "serve",
        help="serve parse, draw, encode, predict, search, compare and check over HTTP, with a page to explore problems",
        description="Load the models once and serve JSON endpoints under /api (health, parse, draw, encode, "
        "predict/TASK, search, compare, check; the OpenAPI schema at /api/openapi.json) and, at /, a page that "
        "draws a problem's graph, its predictions and its most similar problems, compares two problems and checks "
        "a solution. Pictures of graphs need the draw extra: pip install 'mathgraph[draw]'.",
    )
    serve.add_argument(
        "--model",
        metavar="NAME",
        help="the model whose tasks /api/predict serves: a package ('shipped', an export, a Hub id), a task or "
        "multi-task model, or an alignment model (default: shipped)",
    )
    serve.add_argument(
        "--hybrid",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a package's late fusion with its TF-IDF and alignment models (default: for the tasks where dev "
        "said it helps; packages only)",
    )
    serve.add_argument(
        "--encoder",
        default="shipped",
        metavar="NAME",
        help="the encoder of /api/encode, as `mathgraph encode --model` (default: the shipped one)",
    )
    serve.add_argument(
        "--index",
        metavar="DIR",
        help="a search index (`mathgraph index build`) for /api/search "
        "(default: none, and no similar problems on the page)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only; the service has no authentication)",
    )
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)")
    limits = serve.add_argument_group("limits (a request over one gets a 413)")
    limits.add_argument(
        "--max-text-chars",
        type=int,
        default=defaults.max_text_chars,
        help=f"characters in one text (default: {defaults.max_text_chars})",
    )
    limits.add_argument(
        "--max-batch",
        type=int,
        default=defaults.max_batch,
        help=f"texts, inputs or queries in one request (default: {defaults.max_batch})",
    )
    limits.add_argument(
        "--max-request-bytes",
        type=int,
        default=defaults.max_request_bytes,
        help=f"bytes in a request body (default: {defaults.max_request_bytes})",
    )
    limits.add_argument(
        "--max-k", type=int, default=defaults.max_k, help=f"search results per query (default: {defaults.max_k})"
    )
    limits.add_argument(
        "--max-request-chars",
        type=int,
        default=defaults.max_request_chars,
        help=f"characters of all the texts of one request: its budget of model work "
        f"(default: {defaults.max_request_chars})",
    )
    serve.add_argument(
        "--device",
        help="cpu, cuda, cuda:1 ... for --model, --encoder and the index's encoder "
        "(default: cuda when available, else cpu)",
    )
    add_runtime_argument(serve)
    serve.add_argument(
        "--threads",
        type=at_least_one,
        help="torch CPU threads (default: one less than the cores this process may use, at least 1: parsing and "
        "aligning run beside the models)",
    )
    serve.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """``serve``: check the address, load the models, then serve until interrupted (Ctrl+C)."""
    check_model_argument(args.model)
    check_model_argument(args.encoder, "--encoder", names=NAMED_MODELS)
    check_index_argument(args.index)
    try:
        import uvicorn

        from mathgraph.serve.app import create_app
    except ImportError as err:
        raise UserError(
            f"mathgraph serve needs FastAPI and uvicorn ({err.name} is missing): reinstall mathgraph"
        ) from None
    from mathgraph.api import available_cores, set_threads

    try:  # the limits are the --max-* options as given: one out of range is the user's to put right
        limits = Limits(args.max_text_chars, args.max_batch, args.max_request_bytes, args.max_k, args.max_request_chars)
    except ValueError as err:
        raise UserError(str(err)) from None
    listener = bind(args.host, args.port)  # a taken port is reported before the models' seconds of loading
    if args.host not in LOOPBACK:
        warn(f"listening on {args.host}: anyone who can reach it can use this server (it has no authentication)")
    # the parser and the alignments run in threads beside a forward pass: torch on every core then waits for
    # descheduled threads of its own (measured on 2 cores: a small request's turn took 4.3 s with 2 threads, 1.1 s
    # with 1, while 4 maximal compares ran)
    set_threads(args.threads or max(1, available_cores() - 1))
    service = Service.load(
        model=args.model,
        encoder=args.encoder,
        index=args.index,
        hybrid=args.hybrid,
        device=args.device,
        runtime=args.runtime,
    )
    host, port = listener.getsockname()[:2]
    # the address is what a server started with --port 0 is for: said even under -q (scripts read it)
    print(
        f"mathgraph serving {service.model_name} model ({', '.join(service.predictors)}) at "
        f"http://{'[' + host + ']' if ':' in host else host}:{port}/",
        file=sys.stderr,
        flush=True,
    )
    logging.getLogger("mathgraph").setLevel(logging.WARNING)  # not a graph-cache note per request in the log
    config = uvicorn.Config(create_app(service, limits), log_level="warning" if args.quiet else "info")
    uvicorn.Server(config).run(sockets=[listener])
    return 0


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one), or a ``UserError`` saying why not."""
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        # protocol IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on connections of such a listener, and
        # without it every answer on a kept-alive connection waited 40 ms for a delayed ACK (Nagle)
        listener = socket.socket(family, kind, protocol)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
    except OSError as err:
        reason = "the port is in use" if err.errno == errno.EADDRINUSE else err.strerror or str(err)
        raise UserError(f"cannot listen on {host}:{port}: {reason}") from None
    return listener
