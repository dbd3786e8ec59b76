"""``mathgraph predict``: predictions of a task model, a multi-task model's head or a TF-IDF baseline."""

from __future__ import annotations

import argparse
import json
import sys

from mathgraph.cli.common import (
    IntermixedArgumentParser,
    add_runtime_argument,
    at_least_one,
    check_model_argument,
    counted,
)
from mathgraph.cli.job_options import add_job_arguments, check_job_arguments, report_job, run_job_with
from mathgraph.errors import UserError
from mathgraph.samples import input_path
from mathgraph.task_specs import TASK_NAMES, task_spec


def register(commands) -> None:
    """Add ``predict`` to the ``mathgraph`` commands."""
    predict = commands.add_parser(
        "predict",
        help="predict from text with a trained model (a task or multi-task model, or TF-IDF)",
        description="Predict one input given as TEXT arguments (KPC: the problem; QRC/QAM: text_a text_b; SQR: "
        "the query, then its candidates) and print it, or every row of a bank (--input: JSONL, CSV, Parquet or a "
        "saved datasets directory; KPC: --text-field; QRC/QAM: text_a, text_b; SQR: query, candidates) as JSONL "
        "or Parquet: the row's id and line, then the label and its probabilities, or the scores and ranking of "
        "the candidates. A directory --output gets numbered shards and a manifest, which --resume continues "
        "after an interruption, here or on Ray (--engine ray).",
    )
    predict.__class__ = IntermixedArgumentParser  # TEXTs may follow the options
    predict.add_argument("task", choices=TASK_NAMES)
    predict.add_argument("texts", nargs="*", metavar="TEXT")
    predict.add_argument(
        "--model",
        metavar="NAME",
        default="shipped",
        help="a model package ('shipped', an export, a Hub id), a task model, a multi-task model (TASK picks "
        "the head), a TF-IDF or an alignment model (default: shipped)",
    )
    predict.add_argument(
        "--hybrid",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="fuse a package's multi-task model with its TF-IDF model and, for qrc, qam and sqr, its "
        "alignment model (late fusion, weights chosen on dev); default: each on for the tasks where dev "
        "said it helps; packages only",
    )
    predict.add_argument(
        "--input",
        type=input_path,
        metavar="BANK",
        help="inputs: a JSONL, CSV or Parquet file, or a datasets directory",
    )
    predict.add_argument(
        "--output",
        metavar="OUT",
        help="predictions, one per good input row: a .jsonl or .parquet file, or a directory of shards (default: "
        "JSONL on stdout)",
    )
    predict.add_argument("--text-field", default="problem", help="KPC text field of --input rows (default: problem)")
    predict.add_argument(
        "--skip-bad", action="store_true", help="skip bad input lines, count and report them, instead of stopping"
    )
    predict.add_argument("--format", choices=("text", "json"), default="text", help="how to print one prediction")
    predict.add_argument(
        "--top", type=at_least_one, default=5, help="probabilities printed for one TEXT input (default: 5)"
    )
    predict.add_argument("--batch-size", type=at_least_one, default=32)
    predict.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available, else cpu)")
    add_runtime_argument(predict)
    predict.add_argument(
        "--threads",
        type=at_least_one,
        help="torch CPU threads (default: one for a TEXT input, the cores this process may use for --input)",
    )
    add_job_arguments(predict, "--engine ray: model actors (default: the cluster's GPUs, else its CPUs but one)")
    predict.set_defaults(run=run_predict)


def run_predict(args: argparse.Namespace) -> int:
    """``mathgraph predict``: print one prediction (``mathgraph.api.Predictor``, with no graph cache: one TEXT
    writes no file), or predict a bank as a batch job (``mathgraph.api.prediction_job``)."""
    item = _check_arguments(args)  # every usage, model and input error before the seconds of importing torch
    if args.input:
        return _predict_bank(args)
    from mathgraph.api import Predictor, set_threads
    from mathgraph.cli.prediction_files import format_prediction

    set_threads(args.threads, single_input=True)
    predictor = Predictor.from_pretrained(
        args.model, args.task, hybrid=args.hybrid, device=args.device, runtime=args.runtime
    )
    [result] = predictor.predict([item], batch_size=args.batch_size)
    print(format_prediction(item, result, args.top, args.task) if args.format == "text" else json.dumps(result))
    return 0


def _predict_bank(args: argparse.Namespace) -> int:
    from mathgraph.api import prediction_job
    from mathgraph.job_outputs import output_target

    if not args.output and args.output_format == "parquet":
        raise UserError("--output-format parquet needs an --output (stdout gets JSONL)")
    output_format = output_target(args.output, args.output_format)[1] if args.output else "jsonl"
    if output_format == "npy":
        raise UserError(f"--output {args.output}: predictions go to a .jsonl or .parquet file, or a directory")
    job = prediction_job(
        args.task,
        args.input,
        args.output,
        model=args.model,
        hybrid=args.hybrid,
        text_field=args.text_field,
        id_field=args.id_field,
        input_format=args.input_format,
        output_format=output_format,
        batch_size=args.batch_size,
        device=args.device,
        runtime=args.runtime,
        threads=args.threads,
        skip_bad=args.skip_bad,
        shard_size=args.shard_size,
    )
    result = run_job_with(args, job, out=sys.stdout)
    report_job(result, counted(result.rows, "prediction"))
    return 0


def _check_arguments(args: argparse.Namespace) -> object:
    """The input of the TEXT arguments (None with ``--input``); a ``UserError`` (``FileNotFoundError``...) for options that do not go
    together, TEXTs the task does not take, a ``--model`` directory that does not exist, and an ``--input``
    bank that is missing or empty (its bad rows are found by the job's first pass, before any model loads)."""
    if args.input:
        if args.texts:
            raise UserError("give TEXT arguments or --input FILE, not both")
        check_job_arguments(args)
    elif args.output or args.skip_bad or args.resume or args.engine != "local":
        raise UserError("--output, --skip-bad, --resume and --engine apply to --input files only")
    elif not args.texts:
        raise UserError("give the input as TEXT arguments, or --input FILE")
    item = None
    if args.texts:
        fewest, most, wanted = task_spec(args.task).text_arguments
        if len(args.texts) < fewest or (most is not None and len(args.texts) > most):
            raise UserError(f"{args.task} takes {wanted}, got {len(args.texts)} (or give --input FILE)")
        for position, text in enumerate(args.texts, 1):
            if not text.strip():
                raise UserError(f"TEXT {position}: the text is empty")
        from mathgraph.api import input_from_texts

        item = input_from_texts(args.task, args.texts)  # the Predictor checks it, once
    check_model_argument(args.model)
    if args.input:
        from mathgraph.bank_files import check_bank_input

        check_bank_input(args.input, args.input_format)
    return item
