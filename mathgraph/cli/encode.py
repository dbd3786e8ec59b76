"""``mathgraph encode``: problems (texts or parsed graphs) into vectors: a ``.npy`` matrix, rows with their
vectors, or vector shards that an index is built from."""

from __future__ import annotations

import argparse
from pathlib import Path

from mathgraph.cli.common import NAMED_MODELS, add_runtime_argument, at_least_one, check_model_argument
from mathgraph.cli.job_options import add_job_arguments, check_job_arguments, report_job, run_job_with
from mathgraph.errors import UserError
from mathgraph.samples import input_path


def register(commands) -> None:
    """Add ``encode`` to the ``mathgraph`` commands."""
    encode = commands.add_parser(
        "encode",
        help="encode problems into vectors (.npy, rows with vectors, or vector shards)",
        description="Encode the problems of a bank (--input: JSONL, CSV, Parquet or a saved datasets directory; "
        "parsing them) or their graphs from `mathgraph parse` (--graphs) into float32 vectors, in input order: "
        "a .npy matrix, a .jsonl or .parquet file of rows {id, line, vector}, or a directory of vector shards "
        "(shard-K.npy with shard-K.rows.jsonl: the id and line of each vector) and a manifest, which --resume "
        "continues after an interruption, here or on Ray (--engine ray).",
    )
    encode.add_argument(
        "--input",
        type=input_path,
        metavar="BANK",
        help="problems: a JSONL, CSV or Parquet file, or a datasets directory",
    )
    encode.add_argument("--text-field", default="problem")
    encode.add_argument(
        "--graphs",
        metavar="GRAPHS",
        help="graphs of the problems from `mathgraph parse --output` (a file, or its directory of shards); with "
        "--input, checked line by line to be that bank's",
    )
    encode.add_argument(
        "--output", required=True, metavar="OUT", help="EMB.npy, a .jsonl or .parquet file, or a directory"
    )
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
    encode.add_argument("--batch-size", type=at_least_one, default=32)
    encode.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    add_runtime_argument(encode)
    encode.add_argument(
        "--threads", type=at_least_one, help="torch CPU threads (default: torch's, the cores of the machine)"
    )
    add_job_arguments(encode, "--engine ray: model actors (default: the cluster's GPUs, else its CPUs but one)")
    encode.set_defaults(run=run_encode)


def run_encode(args: argparse.Namespace) -> int:
    """``encode``: the problems of a bank as float32 vectors, one per problem in input order (see ``register``)."""
    from mathgraph.bank_files import BankReader, check_bank_input
    from mathgraph.job_outputs import output_target

    if not args.input and not args.graphs:
        raise UserError("give --input FILE, --graphs FILE, or both")
    check_job_arguments(args)
    check_model_argument(args.model, names=NAMED_MODELS)
    check_bank_input(args.input, args.input_format)
    one_file, output_format = output_target(args.output, args.output_format)
    from mathgraph.api import encoding_job

    graphs = None
    if args.graphs:
        # the problems are read (and checked) before the seconds of importing torch and loading the model
        graphs = graph_reader(args.graphs, args.id_field)
        if args.input:
            texts = BankReader.open(args.input, args.input_format, fields=(args.text_field,), id_field=None)
            check_graphs_match(texts, graphs, args.input, args.graphs, args.text_field)
    job = encoding_job(
        args.input,
        args.output,
        graphs=graphs,
        graphs_path=args.graphs,
        model=args.model,
        mode=args.mode,
        text_field=args.text_field,
        id_field=args.id_field,
        input_format=args.input_format,
        output_format="jsonl" if one_file else output_format,
        merged_format=output_format if one_file else None,
        batch_size=args.batch_size,
        device=args.device,
        threads=args.threads,
        runtime=args.runtime,
        shard_size=args.shard_size,
    )
    result = run_job_with(args, job)
    report_job(result, f"{result.rows} x {result.dimension} float32 vectors")
    return 0


def graph_reader(path: str, id_field: str = "id"):
    """A ``BankReader`` over the graphs of ``mathgraph parse --output``: a JSONL or Parquet graph file, or the
    shards of its output directory (a finished job's)."""
    from mathgraph.bank_files import BankReader, check_bank_input
    from mathgraph.batch_jobs import finished_files, is_job_directory, read_manifest

    if Path(path).is_dir() and is_job_directory(path):
        files = [shard[0] for shard in finished_files(path, kind="graphs")]
        return BankReader(files, read_manifest(path)["output"]["format"], id_field=id_field, keep=None)
    check_bank_input(path, option="--graphs")
    reader = BankReader.open(path, id_field=id_field, keep=None)
    if reader.format not in ("jsonl", "parquet"):
        raise UserError(f"--graphs {path}: graphs come in a .jsonl or .parquet file from `mathgraph parse`")
    return reader


def check_graphs_match(texts, graphs, input_path: str, graphs_path: str, text_field: str) -> None:
    """Every graph of ``graphs`` is the parse of the text on the same position of ``texts``: equal counts, equal
    texts, read side by side (one row of each in memory). A mismatch is a ``UserError`` naming the first bad line."""
    import json
    from itertools import zip_longest

    counts = [0, 0]
    for text, graph in zip_longest(_good(texts), _good(graphs)):
        counts[0] += text is not None
        counts[1] += graph is not None
        if text is None or graph is None:
            continue
        row = graph.row
        graph_text = json.loads(row["graph"]).get("text") if isinstance(row.get("graph"), str) else row.get("text")
        if graph_text != text.row[text_field]:
            raise UserError(f"{input_path}:{text.number}: its graph in {graphs_path} is of another text")
    if counts[0] != counts[1]:
        raise UserError(f"{graphs_path} has {counts[1]} graphs but {input_path} has {counts[0]} problems")


def _good(reader):
    for record in reader.records():
        if record.error is not None:
            raise reader.error(record)
        yield record
