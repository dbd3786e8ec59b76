"""``mathgraph routes``: which MoE expert each token of a problem goes to, drawn per layer."""

from __future__ import annotations

import argparse
import sys


def register(commands) -> None:
    """Add ``routes`` to the ``mathgraph`` commands."""
    routes = commands.add_parser("routes", help="draw which MoE expert each token goes to (HTML or PNG)",
                                 description="Route a problem through a multi-task MoE model and draw, per MoE "
                                 "layer, each token coloured by its expert (JiuZhang 2.0, Table 6).")
    routes.add_argument("text", metavar="TEXT")
    routes.add_argument("--model", required=True, metavar="DIR", help="a `train multitask --adapter moe` directory")
    routes.add_argument("--task", help="whose task prompt and routing to use (default: the model's first task)")
    routes.add_argument("--output", default="routes.html", metavar="FILE.html|FILE.png")
    routes.set_defaults(run=run_routes)


def run_routes(args: argparse.Namespace) -> int:
    """``routes``: a picture of which MoE expert each token of a problem goes to (``MultiTaskModel.token_routes``)."""
    from mathgraph.routes import save_routes
    from tasks.multitask import MultiTaskModel, is_multitask_directory

    if not is_multitask_directory(args.model):
        raise ValueError(f"{args.model} is not a multi-task model directory (train one with `train multitask`)")
    routes = MultiTaskModel.from_pretrained(args.model).token_routes(args.text, args.task)
    path = save_routes(routes, args.output)
    for layer, experts in zip(routes.layers, routes.experts):
        print(f"layer {layer}: " + " ".join(f"{t}/{e}" for t, e in zip(routes.tokens, experts)))
    print(f"wrote {path}", file=sys.stderr)
    return 0
