"""``mathgraph compare``: what changed between two problems (``parsers.compare``) and the QRC relation the
model sees between them, or how a solution uses its question's quantities. Two problems whose texts differ
at most in whitespace are the same problem: their relation says so, and the model is not asked."""

from __future__ import annotations

import argparse
import json
import sys

from mathgraph.bank_files import INPUT_FORMATS
from mathgraph.cli.common import (
    IntermixedArgumentParser,
    add_runtime_argument,
    at_least_one,
    check_model_argument,
    configure_inference_threads,
    counted,
    read_input_rows,
    report_skipped,
)
from mathgraph.errors import UserError
from mathgraph.quiet import report
from mathgraph.samples import input_path
from mathgraph.text_checks import check_text

PAIR_FIELDS = ("text_a", "text_b")


def register(commands) -> None:
    """Add ``compare`` to the ``mathgraph`` commands."""
    compare = commands.add_parser(
        "compare",
        help="what changed between two problems, and the QRC relation the model predicts",
        description="Align problem B with problem A (sentences kept, changed, moved, inserted or deleted, with "
        "the words that changed; quantities the same, changed, swapped, new or removed; the question; formulas) "
        "and print the differences in words, "
        "then the QRC relation the model finds likeliest for the pair, with its probability (two problems that "
        "differ at most in whitespace are the same problem: no relation is predicted). With --solution, B is a "
        "solution of question A: print which of A's quantities its steps use. --input FILE reads the pairs "
        "of a JSONL file (fields text_a, text_b) and writes one JSON line per pair: the row's id and line, "
        "the alignment and the relation.",
    )
    compare.__class__ = IntermixedArgumentParser  # the TEXTs may follow the options
    compare.add_argument("texts", nargs="*", metavar="TEXT", help="problem A, then problem B (or its solution)")
    compare.add_argument(
        "--solution",
        action="store_true",
        help="read B as a solution of question A: the quantities its steps use (no relation)",
    )
    compare.add_argument(
        "--model",
        metavar="DIR",
        help="the QRC model: a task model, a multi-task model with a QRC head or a TF-IDF "
        "baseline (default: the shipped multi-task model, as `mathgraph predict qrc`)",
    )
    compare.add_argument(
        "--no-model", action="store_true", help="the alignment only: no QRC prediction, and no model loaded"
    )
    compare.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="how to print one pair: the differences in words, or one JSON object "
        "{alignment, relation} (--input always writes JSONL)",
    )
    compare.add_argument(
        "--input",
        type=input_path,
        metavar="FILE",
        help="pairs (fields text_a, text_b): JSONL, CSV, Parquet or a saved datasets directory",
    )
    compare.add_argument("--input-format", choices=INPUT_FORMATS, help="format of --input (default: from its name)")
    compare.add_argument("--output", metavar="FILE", help="JSONL results, one per good input line (default: stdout)")
    compare.add_argument(
        "--skip-bad", action="store_true", help="skip bad input lines, count and report them, instead of stopping"
    )
    compare.add_argument("--batch-size", type=at_least_one, default=32, help="pairs per model batch (default: 32)")
    compare.add_argument("--device", help="cpu, cuda, cuda:1 ... for --model (default: cuda when available)")
    add_runtime_argument(compare)
    compare.add_argument(
        "--threads",
        type=at_least_one,
        help="torch CPU threads (default: one for a TEXT pair, the cores this process may use for --input)",
    )
    compare.set_defaults(run=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    """``compare``: one pair's alignment (and relation) printed, or a JSONL file's written as JSONL."""
    _check_arguments(args)
    # every input error (a bad line, an empty text) comes out before the parser and the model load
    rows, bad = _read_pairs(args)  # texts that are not text (lone surrogates, bytes not UTF-8) included
    with_model = not (args.solution or args.no_model)
    predictor = _load_predictor(args) if with_model else None
    pairs = [(row["text_a"], row["text_b"]) for _, row in rows]
    records = compare_pairs(
        pairs,
        solution=args.solution,
        predictor=predictor,
        batch_size=args.batch_size,
        show_progress=bool(args.input) and not args.quiet,
        graph_cache=True if args.input else None,  # a file's problems through the graph cache; one pair: no file
    )
    if not args.input:
        [record] = records
        print(_format_text(record) if args.format == "text" else json.dumps(record, ensure_ascii=False))
        return 0
    from mathgraph.jsonl import atomic_writer, write_jsonl

    # the row's id and line first, as `mathgraph predict --input` writes them
    lines = [
        {**({"id": row["id"]} if "id" in row else {}), "line": line, **record}
        for (line, row), record in zip(rows, records)
    ]
    if args.output:
        with atomic_writer(args.output) as f:
            written = write_jsonl(f, lines)
    else:
        written = write_jsonl(sys.stdout, lines)
    report(f"wrote {counted(written, 'comparison')} to {args.output or 'stdout'}")
    report_skipped(bad)
    return 0


def compare_pairs(
    pairs: list[tuple[str, str]],
    solution: bool = False,
    predictor=None,
    batch_size: int = 32,
    show_progress: bool = False,
    graph_cache=None,
) -> list[dict]:
    """``{"alignment", "relation"}`` of each ``(text_a, text_b)`` pair (``mathgraph.api.compare``: each problem
    parsed once, through ``graph_cache``, and read by the QRC ``predictor`` as parsed)."""
    from mathgraph.api import compare

    return compare(
        pairs,
        solution=solution,
        predictor=predictor,
        batch_size=batch_size,
        graph_cache=graph_cache,
        show_progress=show_progress,
    )


def _check_arguments(args: argparse.Namespace) -> None:
    """A ``UserError`` for options that do not go together, before anything is read or loaded."""
    if args.input:
        if args.texts:
            raise UserError("give two TEXTs or --input FILE, not both")
    elif args.output or args.skip_bad:
        raise UserError("--output and --skip-bad apply to --input files only")
    elif len(args.texts) != 2:
        what = "the question A, then its solution B" if args.solution else "problem A, then problem B"
        raise UserError(f"give two TEXTs ({what}), or --input FILE; got {len(args.texts)}")
    if args.model is not None and (args.no_model or args.solution):
        raise UserError(
            "--model is the QRC model of problem pairs: leave it out with "
            f"{'--no-model' if args.no_model else '--solution'}"
        )
    check_model_argument(args.model)


def _read_pairs(args: argparse.Namespace) -> tuple[list[tuple[int, dict]], list]:
    """``(line, row)`` of each pair and the bad lines: an input file's good rows (``read_input_rows`` names a
    bad one by file and line), or the two TEXTs as one row. A text that is not text (a lone surrogate; a TEXT
    whose bytes are not UTF-8) is a bad line, or a ``UserError`` naming the TEXT."""
    if args.input:
        return read_input_rows(args.input, PAIR_FIELDS, skip_bad=args.skip_bad, format=args.input_format)
    names = ("the question A", "the solution B") if args.solution else ("problem A", "problem B")
    for name, text in zip(names, args.texts):
        if not text.strip():
            raise UserError(f"{name} is empty (or only whitespace)")
        check_text(text, name)
    return [(0, dict(zip(PAIR_FIELDS, args.texts)))], []


def _load_predictor(args: argparse.Namespace):
    """The QRC predictor of ``mathgraph predict qrc --model NAME`` (``mathgraph.api.Predictor``)."""
    from mathgraph.api import Predictor

    configure_inference_threads(args.threads, single_input=not args.input)
    return Predictor.from_pretrained(args.model or "shipped", "qrc", device=args.device, runtime=args.runtime)


def _format_text(record: dict) -> str:
    """One comparison in words: the alignment's explanation, then the relation, if any
    (``parsers.compare.describe_relation``)."""
    from mathgraph.api import describe_relation

    return "\n".join([record["alignment"]["explanation"], *describe_relation(record["alignment"], record["relation"])])
