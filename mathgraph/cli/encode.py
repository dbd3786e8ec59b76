"""``mathgraph encode``: problems (texts or parsed graphs) into a matrix of vectors."""

from __future__ import annotations

import argparse
import sys

from mathgraph.cli.common import NAMED_MODELS, check_input_file, check_model_argument


def register(commands) -> None:
    """Add ``encode`` to the ``mathgraph`` commands."""
    encode = commands.add_parser(
        "encode",
        help="encode problems into vectors (.npy)",
        description="Encode the problems of a JSONL file (parsing them, or taking graphs from `mathgraph parse`) "
        "into a float32 matrix saved with numpy, one row per problem in input order.",
    )
    encode.add_argument("--input", metavar="FILE", help="JSONL file of problems")
    encode.add_argument("--text-field", default="problem")
    encode.add_argument("--graphs", metavar="FILE", help="graphs of the same problems from `mathgraph parse --output`")
    encode.add_argument("--output", required=True, metavar="EMB.npy")
    encode.add_argument(
        "--model",
        default="shipped",
        help="model directory, 'shipped' (the shipped pre-trained COMUS; alias 'default') or 'untrained'",
    )
    encode.add_argument(
        "--mode",
        choices=("joint", "text", "graph", "fused"),
        default="joint",
        help="joint: [CLS] ; mean node (fused: its old name); text: [CLS]; graph: mean node",
    )
    encode.add_argument("--batch-size", type=int, default=32)
    encode.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    encode.set_defaults(run=run_encode)


def run_encode(args: argparse.Namespace) -> int:
    """``encode``: the problems of a file as a float32 ``.npy`` matrix, one row per problem in input order."""
    from mathgraph.graph import read_problems

    if not args.input and not args.graphs:
        raise ValueError("give --input FILE, --graphs FILE, or both")
    check_model_argument(args.model, names=NAMED_MODELS)
    check_input_file(args.input)
    check_input_file(args.graphs, "--graphs")
    # the problems are read before the seconds of importing torch and loading the model
    problems = read_problems(args.input, args.text_field, args.graphs)
    import numpy as np

    from mathgraph.models.encoder import MathEncoder

    encoder = MathEncoder.from_pretrained(args.model, device=args.device)
    vectors = encoder.encode(
        problems, batch_size=args.batch_size, mode=args.mode, device=args.device, show_progress=not args.quiet
    )
    with open(args.output, "wb") as f:
        np.save(f, vectors)
    print(f"wrote {vectors.shape[0]} x {vectors.shape[1]} float32 vectors to {args.output}", file=sys.stderr)
    return 0
