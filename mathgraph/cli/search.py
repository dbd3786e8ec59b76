"""``mathgraph index build`` and ``mathgraph search``."""

from __future__ import annotations

import argparse
import json
import sys

from mathgraph.bank_files import INPUT_FORMATS
from mathgraph.cli.common import (
    NAMED_MODELS,
    add_runtime_argument,
    at_least_one,
    check_index_argument,
    check_input_file,
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


def register(commands) -> None:
    """Add ``index build`` and ``search`` to the ``mathgraph`` commands."""
    _register_index(commands)
    _register_search(commands)


def _register_index(commands) -> None:
    index = commands.add_parser("index", help="build a similar-problem search index")
    actions = index.add_subparsers(dest="index_command", required=True, metavar="ACTION")
    build = actions.add_parser(
        "build",
        help="embed a corpus (JSONL, CSV, Parquet, a datasets directory) and save the index",
        description="Embed every row's text with a model and save vectors, rows and the "
        "model's identity; `mathgraph search` then needs no --model.",
    )
    build.add_argument(
        "--input", required=True, type=input_path, metavar="CORPUS", help="JSONL, CSV, Parquet or a datasets directory"
    )
    build.add_argument("--text-field", default="problem")
    build.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available, else cpu)")
    add_runtime_argument(build)
    build.add_argument(
        "--vectors",
        metavar="DIR",
        help="the vector shards `mathgraph encode --input CORPUS --output DIR` wrote: indexed with the rows of "
        "--input (JSONL, CSV, Parquet or a datasets directory; see --input-format) without encoding again; the "
        "model is the one that encoded them",
    )
    build.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        help="the format of --input (default: from its name: .jsonl, .csv/.tsv, .parquet, a datasets directory)",
    )
    build.add_argument(
        "--model",
        help="a model package ('shipped', the default; an export, a Hub id: its search encoder), an encoder or task "
        "model directory, 'untrained', or text:PATH for a text-only encoder (text:minilm: the packaged MiniLM)",
    )
    build.add_argument(
        "--mode",
        choices=("joint", "text", "graph", "fused"),
        help="COMUS vectors: joint ([CLS] ; mean node; fused: its old name), text ([CLS]) or graph (mean node); "
        "default: a package's search encoder, else joint",
    )
    build.add_argument("--batch-size", type=at_least_one, default=32)
    build.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="index the first N good rows only: try a large corpus on a few hundred first (on 2 CPU "
        "cores the shipped encoder indexes some 40 problems a second, a few when the cores are busy)",
    )
    build.add_argument("--skip-bad", action="store_true", help="skip invalid rows (counted in a warning)")
    build.add_argument(
        "--index-type",
        choices=("auto", "flat", "ivf-flat", "ivf-pq", "hnsw"),
        default="auto",
        help="how the index finds candidates: flat (exact), ivf-flat or ivf-pq (cells trained by k-means on a "
        "sample; pq: compressed codes) or hnsw (a graph); every type re-scores its candidates exactly. "
        "Default auto: flat below 100,000 rows, ivf-flat from there (docs/search.md)",
    )
    build.add_argument("--output", required=True, metavar="INDEX")
    build.set_defaults(run=run_index_build)


def _register_search(commands) -> None:
    search = commands.add_parser(
        "search",
        help="the problems of an index most similar to a query, or to each query of a file",
        description="Print the k rows of an index most similar to QUERY, one line each: the rank, the row's cosine "
        "to the query, the ranking score when other signals were fused into it (--hybrid: a weighted sum of "
        "standardised scores, about 0 for an average candidate and a few units for the best, not a cosine), "
        "the row's id (or its position, for a bank without ids) and its text. With --queries FILE, write one "
        "JSONL line per query of the file, in input order: {query, id (when the row has one), line, hits: "
        "[{rank, index, score, cosine, row}]}. The model and index load once and the queries are embedded in "
        "batches.",
    )
    search.add_argument("query", metavar="QUERY", nargs="?", help="the query (or --queries FILE)")
    search.add_argument("--index", required=True, metavar="INDEX")
    search.add_argument("-k", type=at_least_one, default=5)
    search.add_argument("--model", help="the model that built the index (default: the one it records)")
    search.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available, else cpu)")
    add_runtime_argument(search)
    how = search.add_mutually_exclusive_group()
    how.add_argument(
        "--approximate",
        action="store_true",
        help="search a flat index through a faiss HNSW graph built in memory (an approximate index type "
        "searches approximately already)",
    )
    how.add_argument("--exact", action="store_true", help="compare the query with every row, on any index type")
    search.add_argument("--nprobe", type=int, help="cells an ivf index scans (default: the index's, in its manifest)")
    search.add_argument("--ef-search", type=int, help="the search beam of an hnsw index (default: the index's)")
    search.add_argument(
        "--hybrid",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="rank by a fused score: the cosine fused with TF-IDF scores and the structure-aware skeleton channel "
        "(formula paths, quantities and question with numbers and names abstracted) over the index's texts, then "
        "the best 50 re-scored with the shipped alignment model (graph alignment), each with its search weight "
        "(chosen on dev; default: each on only if dev said it helps); --no-hybrid ranks by cosine",
    )
    search.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="how the hits of one QUERY are printed (--queries always writes JSONL)",
    )
    queries = search.add_argument_group("many queries")
    queries.add_argument(
        "--queries",
        type=input_path,
        metavar="FILE",
        help="queries: the --text-field of each row of a .jsonl (.ndjson), .csv, .parquet file or a saved "
        "datasets directory, otherwise the lines of a plain text file; blank lines are skipped",
    )
    queries.add_argument("--text-field", default="problem", help="the query field of --queries rows (default: problem)")
    queries.add_argument("--output", metavar="FILE", help="the JSONL results (default: stdout)")
    queries.add_argument(
        "--skip-bad", action="store_true", help="skip bad --queries lines, count and report them, instead of stopping"
    )
    queries.add_argument("--batch-size", type=at_least_one, default=32, help="queries embedded at a time (default: 32)")
    search.add_argument(
        "--threads",
        type=at_least_one,
        help="torch CPU threads (default: one for a QUERY, the cores this process may use for --queries)",
    )
    search.set_defaults(run=run_search)


# An input past this many problems gets the hint to try --limit SUBSET first: on 2 idle CPU cores the shipped
# encoder indexes about 43 problems a second (MATH's 7,500 train problems in 3 min), but beside a training run
# that keeps the cores busy about 6.6 (19 min: tasks.search.commands.RATES_PER_CPU_CORE).
LARGE_INPUT = 1000
SUBSET = 500


def run_index_build(args: argparse.Namespace) -> int:
    """``index build``: embed a corpus (any bank format) and save it as a search index, or index the vectors of
    ``mathgraph encode`` (``--vectors``) with the corpus' rows."""
    if args.vectors is not None:
        return _index_vectors(args)
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be >= 1, got {args.limit}")
    args.model = args.model or "shipped"
    check_model_argument(args.model, names=NAMED_MODELS)
    rows, _ = read_input_rows(args.input, (args.text_field,), args.skip_bad, format=args.input_format)  # before torch
    count = len(rows) if args.limit is None else min(args.limit, len(rows))
    of = f" (the first {count:,} of {len(rows):,}: --limit)" if count < len(rows) else ""
    report(f"{args.input}: {count:,} problems to index{of}")
    if args.limit is None and len(rows) > LARGE_INPUT:
        report(
            f"  a large input, which may take a while (an estimate follows once the model has loaded): "
            f"to try it first, --limit {SUBSET} indexes the first {SUBSET}",
        )
    from mathgraph.tasks.search.commands import build_index_from_file

    index = build_index_from_file(
        args.input,
        model=args.model,
        text_field=args.text_field,
        output=args.output,
        mode=args.mode,
        batch_size=args.batch_size,
        skip_bad=args.skip_bad,
        limit=args.limit,
        show_progress=not args.quiet,
        index_type=args.index_type,
        input_format=args.input_format,
        device=args.device,
        runtime=args.runtime,
    )
    report(
        f"indexed {len(index)} rows ({index.dimension}-dimensional, {index.index_type}) in {args.output}",
    )
    return 0


def _index_vectors(args: argparse.Namespace) -> int:
    from mathgraph.bank_files import check_bank_input

    given = [name for name, value in (("--model", args.model), ("--mode", args.mode), ("--limit", args.limit)) if value]
    if given or args.skip_bad:
        raise UserError(
            f"--vectors indexes what `mathgraph encode` wrote, with its model: leave out {', '.join(given) or '--skip-bad'}"
        )
    check_bank_input(args.input, args.input_format)
    from mathgraph.tasks.search.commands import build_index_from_vectors

    index = build_index_from_vectors(
        args.vectors,
        args.input,
        args.output,
        args.text_field,
        args.input_format,
        args.index_type,
        args.device,
        runtime=args.runtime,
    )
    report(
        f"indexed {len(index)} rows ({index.dimension}-dimensional, {index.index_type}) from {args.vectors} "
        f"in {args.output}",
    )
    return 0


def _read_queries(args: argparse.Namespace) -> tuple[list, list]:
    """The ``--queries`` texts and bad lines: a bank file's ``--text-field`` (JSONL, CSV, Parquet, a datasets
    directory: ``mathgraph.bank_files``), else a plain text file's lines (``read_text_lines``)."""
    from pathlib import Path

    from mathgraph.bank_files import EXTENSIONS
    from mathgraph.jsonl import TextRecord, read_text_lines

    path = Path(args.queries)
    if path.is_dir() or path.suffix.lower() in EXTENSIONS:  # a bank file (JSONL too), else plain lines
        rows, bad = read_input_rows(args.queries, (args.text_field,), args.skip_bad, option="--queries")
        return [TextRecord(number, row[args.text_field], row) for number, row in rows], bad
    check_input_file(args.queries, "--queries")
    return read_text_lines(args.queries, args.text_field, args.skip_bad)


def run_search(args: argparse.Namespace) -> int:
    """``search``: the index rows nearest one query, or JSONL results for every query of ``--queries FILE``."""
    if (args.query is None) == (args.queries is None):
        raise UserError("give one QUERY or --queries FILE")
    if args.queries is None and (args.output or args.skip_bad):
        raise UserError("--output and --skip-bad apply to --queries files only")
    if args.query is not None and not args.query.strip():
        raise UserError("the QUERY is empty")
    if args.query is not None:
        check_text(args.query, "the QUERY")
    check_index_argument(args.index)
    check_model_argument(args.model, names=NAMED_MODELS)
    # the queries are read and checked before the seconds of importing torch and loading the model
    records, bad = _read_queries(args) if args.queries else ([], [])
    if args.queries and not records:
        raise UserError(f"--queries {args.queries}: no good queries ({len(bad)} bad lines skipped)")
    from mathgraph.tasks.search.commands import search_weights
    from mathgraph.tasks.search.index import SearchIndex

    configure_inference_threads(args.threads, single_input=args.queries is None)
    weight, structure_weight, skeleton_weight = search_weights(args.hybrid)
    if (weight > 0 or skeleton_weight > 0) and args.approximate:
        raise UserError("--hybrid searches exactly: leave out --approximate (or pass --no-hybrid)")
    for name, value in (("--nprobe", args.nprobe), ("--ef-search", args.ef_search)):
        if value is not None and value < 1:
            raise UserError(f"{name} must be >= 1, got {value}")
    index = SearchIndex.from_pretrained(
        args.index, encoder=args.model or "auto", device=args.device, runtime=args.runtime
    )
    if args.nprobe is not None:
        index.search_parameters["nprobe"] = args.nprobe
    if args.ef_search is not None:
        index.search_parameters["ef_search"] = args.ef_search
    approximate = True if args.approximate else False if args.exact else None
    if args.queries is not None:
        return _search_file(index, records, bad, args, approximate, (weight, structure_weight, skeleton_weight))
    (hits,) = index.search(
        [args.query],
        k=args.k,
        approximate=approximate,
        sparse_weight=weight,
        structure_weight=structure_weight,
        skeleton_weight=skeleton_weight,
    )
    if args.format == "json":
        print(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False))
    else:
        for rank, hit in enumerate(hits, 1):
            print(format_hit(rank, hit, index.text_field))
    return 0


def format_hit(rank: int, hit, text_field: str) -> str:
    """One hit in words: ``1. cosine 0.6312  math-train-85  If ...``: the rank, the cosine to the query (with the
    ranking score after it when a hybrid search or the alignment step fused other signals into it), the row's
    ``id`` (its position in the index, ``row N``, for a bank without ids) and the text."""
    text = " ".join(str(hit.row[text_field]).split())[:200]
    name = hit.row.get("id", f"row {hit.index}")
    fused = "" if hit.cosine is None or hit.score == hit.cosine else f"  score {hit.score:.2f}"
    cosine = f"cosine {hit.cosine:.4f}" if hit.cosine is not None else f"score {hit.score:.4f}"
    return f"{rank}. {cosine}{fused}  {name}  {text}"


def _search_file(
    index,
    records: list,
    bad: list,
    args: argparse.Namespace,
    approximate: bool | None,
    weights: tuple[float, float, float],
) -> int:
    from mathgraph.jsonl import atomic_writer, write_jsonl
    from mathgraph.tasks.search.commands import search_records

    results = search_records(
        index,
        records,
        k=args.k,
        batch_size=args.batch_size,
        approximate=approximate,
        sparse_weight=weights[0],
        structure_weight=weights[1],
        skeleton_weight=weights[2],
    )
    if args.output:
        with atomic_writer(args.output) as out:
            written = write_jsonl(out, results)
    else:
        written = write_jsonl(sys.stdout, results)
    report(f"searched {counted(written, 'query', 'queries')}; results in {args.output or 'stdout'}")
    report_skipped(bad)
    return 0
