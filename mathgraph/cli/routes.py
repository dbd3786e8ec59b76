"""``mathgraph routes``: a multi-task model's routing for problems, drawn: the MoE expert of each token per
layer, or the ReasonFormer skills fired at each reasoning step with the stop gates."""

from __future__ import annotations

import argparse

from mathgraph.cli.common import check_model_argument
from mathgraph.errors import UserError
from mathgraph.quiet import report


def register(commands) -> None:
    """Add ``routes`` to the ``mathgraph`` commands."""
    routes = commands.add_parser(
        "routes",
        help="draw a MoE model's expert per token, or a ReasonFormer model's skills per reasoning step (HTML or PNG)",
        description="Route problems through a multi-task model and draw it: with MoE, per "
        "MoE layer, each token coloured by its expert (JiuZhang 2.0, Table 6; one problem); "
        "with ReasonFormer, the weight of each skill at each reasoning step and the stop "
        "gate after it (the mean over the problems given).",
    )
    routes.add_argument("texts", nargs="+", metavar="TEXT", help="the problem (ReasonFormer: one or more)")
    routes.add_argument(
        "--model",
        required=True,
        metavar="DIR",
        help="a `train multitask --adapter moe` or `--adapter reasonformer` directory",
    )
    routes.add_argument("--task", help="whose task prompt and routing to use (default: the model's first task)")
    routes.add_argument("--output", default="routes.html", metavar="FILE.html|FILE.png")
    routes.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available, else cpu)")
    routes.set_defaults(run=run_routes)


def run_routes(args: argparse.Namespace) -> int:
    """``routes``: a picture of the model's routing (``MultiTaskModel.token_routes`` or ``skill_routes``)."""
    check_model_argument(args.model)
    from mathgraph.registry import describe, load, model_type, resolve
    from mathgraph.routing_pictures import save_routes

    kind = model_type(resolve(args.model))
    if kind != "multi-task-model":
        raise UserError(
            f"{args.model} holds {describe(kind)}, not a multi-task model (train one with `train multitask`)"
        )
    model = load(args.model, device=args.device)
    if model.reasoning is not None:
        routes = model.skill_routes(args.texts, args.task)
        for step, (weights, gate) in enumerate(zip(routes.mean_weights(), routes.mean_stop_gates())):
            fired = sorted(((w, s) for w, s in zip(weights, routes.skills) if w > 0), reverse=True)
            print(f"step {step + 1}: " + " ".join(f"{s}/{w:.2f}" for w, s in fired) + f" | stop gate {gate:.2f}")
    else:
        if len(args.texts) > 1:
            raise UserError("MoE routes are drawn for one problem: give one TEXT")
        routes = model.token_routes(args.texts[0], args.task)
        for layer, experts in zip(routes.layers, routes.experts):
            print(f"layer {layer}: " + " ".join(f"{t}/{e}" for t, e in zip(routes.tokens, experts)))
    path = save_routes(routes, args.output)
    report(f"wrote {path}")
    return 0
