"""``mathgraph parse``, ``mathgraph vocab`` and ``mathgraph samples``: problems into graphs and vocabularies."""

from __future__ import annotations

import argparse
import json

from mathgraph.cli.common import add_corpus_argument, at_least_one, corpus_texts, counted
from mathgraph.cli.job_options import add_job_arguments, check_job_arguments, report_job, run_job_with
from mathgraph.errors import UserError
from mathgraph.parsers.dependency import PARSER_NAMES
from mathgraph.quiet import report
from mathgraph.samples import input_path


def register(commands) -> None:
    """Add ``parse``, ``vocab`` and ``samples`` to the ``mathgraph`` commands."""
    parse = commands.add_parser(
        "parse",
        help="parse problems into math syntax graphs",
        description="Parse one problem (TEXT or --sample) and show its graph, or a bank of problems (--input: JSONL, "
        "CSV, Parquet or a saved datasets directory) into graphs: one file, or numbered shards and a manifest in a "
        "directory that --resume continues after an interruption, here or on Ray (--engine ray).",
    )
    parse.add_argument("text", nargs="?", help="the problem text, with LaTeX formulas between $...$")
    parse.add_argument(
        "--sample", metavar="N", help="parse bundled sample problem N (index or id; see `mathgraph samples`)"
    )
    parse.add_argument(
        "--format", choices=("text", "json"), default="text", help="how to print one graph (default: text)"
    )
    parse.add_argument("--draw", metavar="PNG", help="also draw the graph to this picture (png, svg, pdf)")
    parse.add_argument(
        "--input",
        type=input_path,
        metavar="BANK",
        help="problems: a JSONL, CSV or Parquet file, or a datasets directory",
    )
    parse.add_argument("--text-field", default="problem", help="field holding the problem text (default: problem)")
    parse.add_argument(
        "--output",
        metavar="OUT",
        help="graphs, one per good input row in input order, with the row's id and line: a .jsonl or .parquet "
        "file, or a directory of shards",
    )
    parse.add_argument("--batch-size", type=at_least_one, default=64, help="problems per parser batch (default: 64)")
    parse.add_argument(
        "--skip-bad", action="store_true", help="skip bad input lines, count and report them, instead of stopping"
    )
    parse.add_argument(
        "--parser", choices=PARSER_NAMES, default="auto", help="dependency parser back end (default: auto)"
    )
    parse.add_argument(
        "--bare-arithmetic", action="store_true", help="treat arithmetic in plain text (48/2 = 24) as formulas"
    )
    add_job_arguments(parse, "parser processes for --input (default: 1; --engine ray: parse tasks at once)")
    parse.set_defaults(run=run_parse)

    vocab = commands.add_parser(
        "vocab",
        help="build node, relation and LaTeX-token vocabularies from corpora",
        description="Parse corpora and write node_vocab.json, relation_vocab.json and latex_tokens.json, "
        "the vocabularies a new encoder is built with (MathEncoder.build).",
    )
    add_corpus_argument(vocab, "JSONL corpus and its text field")
    vocab.add_argument("--output", required=True, metavar="DIR")
    vocab.add_argument("--min-freq", type=int, default=2, help="keep node labels seen this often (default: 2)")
    vocab.add_argument(
        "--latex-min-freq", type=int, default=5, help="add LaTeX commands seen this often as tokens (default: 5)"
    )
    vocab.add_argument("--workers", type=at_least_one, default=1)
    vocab.add_argument("--parser", choices=PARSER_NAMES, default="auto")
    vocab.set_defaults(run=run_vocab)

    samples = commands.add_parser("samples", help="list the bundled sample problems")
    samples.set_defaults(run=run_samples)


def run_parse(args: argparse.Namespace) -> int:
    """``parse``: one problem's graph printed (and drawn), or a JSONL file of problems to a graph file."""
    if args.input:
        if args.text is not None or args.sample is not None:
            raise UserError("give either TEXT, --sample or --input, not several")
        if not args.output:
            raise UserError("--input needs --output")
        return _parse_file(args)
    if (args.text is None) == (args.sample is None):
        raise UserError("give the problem TEXT, --sample N, or --input FILE")
    if args.workers is not None or args.skip_bad or args.output or args.resume or args.engine != "local":
        raise UserError("--workers, --skip-bad, --output, --resume and --engine apply to --input files only")
    from mathgraph.parsers.problem import parse_problem

    if args.draw:  # before parsing: without the draw extra or with a name it cannot write, nothing is printed
        from mathgraph.draw import check_picture_path, require_matplotlib

        require_matplotlib("drawing a graph")
        check_picture_path(args.draw)
    text = args.text if args.text is not None else _sample_text(args.sample)
    graph = parse_problem(text, parser=args.parser, bare_arithmetic=args.bare_arithmetic)
    print(graph.to_text() if args.format == "text" else json.dumps(graph.to_dict(), ensure_ascii=False, indent=1))
    if args.draw:
        graph.draw(args.draw)
        report(f"drew the graph to {args.draw}")
    return 0


def _parse_file(args: argparse.Namespace) -> int:
    """``parse --input BANK --output OUT``: a batch job (``mathgraph.batch_jobs``) of one parse stage."""
    from pathlib import Path

    from mathgraph.bank_files import BankReader, check_bank_input
    from mathgraph.batch_jobs import FieldInput, Job
    from mathgraph.job_outputs import GraphShards, output_target

    check_job_arguments(args)
    check_bank_input(args.input, args.input_format)  # missing or empty: an error, not "wrote 0 graphs"
    _, output_format = output_target(args.output, args.output_format)
    if output_format == "npy":
        raise UserError(f"--output {args.output}: graphs go to a .jsonl or .parquet file, or a directory")
    from mathgraph.tasks.jobs.stages import ParseStage

    job = Job(
        name="parse",
        progress="parsing",
        reader=BankReader.open(args.input, args.input_format, fields=(args.text_field,), id_field=args.id_field),
        to_input=FieldInput(args.text_field),
        writer=GraphShards(output_format),
        output=Path(args.output),
        stages=[
            ParseStage(
                parser=args.parser,
                bare_arithmetic=args.bare_arithmetic,
                batch_size=args.batch_size,
                workers=(args.workers or 1) if args.engine == "local" else 1,
            )
        ],
        settings={
            "text_field": args.text_field,
            "id_field": args.id_field,
            "parser": args.parser,
            "bare_arithmetic": args.bare_arithmetic,
        },
        shard_size=args.shard_size,
        skip_bad=args.skip_bad,
    )
    result = run_job_with(args, job)
    report_job(result, counted(result.rows, "graph"))
    return 0


def _sample_text(key: str) -> str:
    from mathgraph.samples import sample_problems

    samples = sample_problems()
    for i, row in enumerate(samples):
        if key in (str(i), row["id"]):
            return row["problem"]
    raise UserError(f"no sample {key!r}; choose 0..{len(samples) - 1} or an id from `mathgraph samples`")


def run_vocab(args: argparse.Namespace) -> int:
    """``vocab``: node, relation and LaTeX-token vocabularies from corpora (``models.vocabularies``)."""
    texts = corpus_texts(args.corpus)  # missing or empty corpora: before the model code loads
    from mathgraph.models.vocabularies import build_vocabularies, save_vocabularies

    graph_vocabulary, latex_tokens = build_vocabularies(
        texts,
        parser=args.parser,
        workers=args.workers,
        min_freq=args.min_freq,
        latex_min_freq=args.latex_min_freq,
        show_progress=not args.quiet,
    )
    save_vocabularies(args.output, graph_vocabulary, latex_tokens)
    report(
        f"wrote {len(graph_vocabulary.labels)} node labels, {len(graph_vocabulary.relations)} relations and "
        f"{len(latex_tokens)} LaTeX tokens to {args.output}",
    )
    return 0


def run_samples(args: argparse.Namespace) -> int:
    """``samples``: the bundled sample problems, one line each."""
    from mathgraph.samples import BUNDLED_FILES, SAMPLE_PATH, sample_problems

    for i, row in enumerate(sample_problems()):
        print(f"{i}  {row['id']:<10} {' '.join(row['problem'].split())[:100]}")
    print(f"(file: {SAMPLE_PATH})")
    print(f"(bundled files, which an input option finds by name from any folder: {', '.join(BUNDLED_FILES)})")
    return 0
