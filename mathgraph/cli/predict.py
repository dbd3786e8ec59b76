"""``mathgraph predict``: predictions of a task model, a multi-task model's head or a TF-IDF baseline."""

from __future__ import annotations

import argparse
import json
import sys

from mathgraph.cli.common import (
    IntermixedArgumentParser,
    check_model_argument,
    configure_inference_threads,
    read_input_rows,
    report_skipped,
)


def register(commands) -> None:
    """Add ``predict`` to the ``mathgraph`` commands."""
    predict = commands.add_parser(
        "predict",
        help="predict from text with a trained model (a task or multi-task model, or TF-IDF)",
        description="Predict one input given as TEXT arguments (KPC: the problem; QRC/QAM: text_a text_b; SQR: "
        "the query, then its candidates) and print it, or every row of a JSONL file (KPC: --text-field; "
        "QRC/QAM: text_a, text_b; SQR: query, candidates) as JSONL: the row's id and line, then the label "
        "and its probabilities, or the scores and ranking of the candidates.",
    )
    predict.__class__ = IntermixedArgumentParser  # TEXTs may follow the options
    predict.add_argument("task", choices=("kpc", "qrc", "qam", "sqr"))
    predict.add_argument("texts", nargs="*", metavar="TEXT")
    predict.add_argument(
        "--model",
        metavar="DIR",
        help="a task model, a multi-task model (TASK picks the head) or a TF-IDF baseline "
        "(default: the shipped multi-task model)",
    )
    predict.add_argument(
        "--hybrid",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="fuse the shipped model with its TF-IDF baseline and, for qrc, qam and sqr, its "
        "structure model (graph alignment); weights chosen on dev; default: each on for the "
        "tasks where dev said it helps; shipped model only",
    )
    predict.add_argument("--input", metavar="FILE", help="JSONL file of inputs")
    predict.add_argument(
        "--output", metavar="FILE", help="JSONL predictions, one per good input line (default: stdout)"
    )
    predict.add_argument("--text-field", default="problem", help="KPC text field of --input rows (default: problem)")
    predict.add_argument(
        "--skip-bad", action="store_true", help="skip bad input lines, count and report them, instead of stopping"
    )
    predict.add_argument("--format", choices=("text", "json"), default="text", help="how to print one prediction")
    predict.add_argument("--top", type=int, default=5, help="probabilities printed for one TEXT input (default: 5)")
    predict.add_argument("--batch-size", type=int, default=32)
    predict.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    predict.add_argument(
        "--threads",
        type=int,
        help="torch CPU threads (default: one for a TEXT input, the cores this process may use for --input)",
    )
    predict.set_defaults(run=run_predict)


# What the TEXT arguments of each task are: (fewest, most or None, in words), and the fields of an --input row;
# tasks.task_io.input_from_texts and tasks.inference.read_inputs check the same once the models are imported.
# Repeated here so that a usage error comes before torch is imported; tests/tasks/test_task_types.py checks
# them against each task's input_shape.
TEXT_ARGUMENTS = {
    "kpc": (1, 1, "one TEXT"),
    "qrc": (2, 2, "two TEXTs (text_a text_b)"),
    "qam": (2, 2, "two TEXTs (text_a text_b)"),
    "sqr": (2, None, "a QUERY and its CANDIDATEs"),
}
PAIR_FIELDS = ("text_a", "text_b")


def run_predict(args: argparse.Namespace) -> int:
    """``mathgraph predict``: print one prediction, or write a JSONL file's (``tasks.inference.predict_file``)."""
    _check_arguments(args)  # every usage, model and input error before the seconds of importing torch
    from mathgraph.models.encoder import resolve_device
    from mathgraph.tasks.inference import format_prediction, input_from_texts, load_predictor, predict_file

    item = None if args.input else input_from_texts(args.task, args.texts)
    configure_inference_threads(args.threads, single_input=item is not None)
    if args.model is None:
        from mathgraph.tasks.release.shipped import shipped_predictor

        predictor = shipped_predictor(args.task, hybrid=args.hybrid)
    else:
        predictor = load_predictor(args.task, args.model, device=resolve_device(args.device))
    if item is not None:
        [result] = predictor.predict([item], batch_size=args.batch_size)
        print(format_prediction(item, result, args.top) if args.format == "text" else json.dumps(result))
        return 0
    written, bad = predict_file(
        predictor,
        args.task,
        args.input,
        args.output,
        text_field=args.text_field,
        batch_size=args.batch_size,
        skip_bad=args.skip_bad,
    )
    print(f"wrote {written} predictions to {args.output or 'stdout'}", file=sys.stderr)
    report_skipped(bad)
    return 0


def _check_arguments(args: argparse.Namespace) -> None:
    """A ``ValueError`` (``FileNotFoundError``...) for options that do not go together, TEXTs the task does not
    take, a ``--model`` directory that does not exist, and an ``--input`` file that is missing, empty or has a
    bad line (read here once, with no model code imported; ``predict_file`` reads it again)."""
    if args.input:
        if args.texts:
            raise ValueError("give TEXT arguments or --input FILE, not both")
    elif args.output or args.skip_bad:
        raise ValueError("--output and --skip-bad apply to --input files only")
    elif not args.texts:
        raise ValueError("give the input as TEXT arguments, or --input FILE")
    if args.model is not None and args.hybrid:
        raise ValueError("--hybrid fuses the shipped model with its TF-IDF baseline: leave out --model")
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads must be >= 1, got {args.threads}")
    if args.texts:
        fewest, most, wanted = TEXT_ARGUMENTS[args.task]
        if len(args.texts) < fewest or (most is not None and len(args.texts) > most):
            raise ValueError(f"{args.task} takes {wanted}, got {len(args.texts)} (or give --input FILE)")
        for position, text in enumerate(args.texts, 1):
            if not text.strip():
                raise ValueError(f"TEXT {position}: the text is empty")
    check_model_argument(args.model)
    if args.input:
        fields = {"kpc": (args.text_field,), "qrc": PAIR_FIELDS, "qam": PAIR_FIELDS, "sqr": ("query",)}[args.task]
        read_input_rows(args.input, fields, args.skip_bad)
