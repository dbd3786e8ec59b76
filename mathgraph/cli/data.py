"""``mathgraph data qrc-pairs | sqr-lists | qam-pairs | split``: task files (formats in ``tasks.data``)."""

from __future__ import annotations

import argparse
import logging

from mathgraph.cli.common import check_input_file, counted, report_skipped
from mathgraph.errors import UserError
from mathgraph.quiet import report
from mathgraph.samples import input_path, is_bundled


def register(commands) -> None:
    """Add ``data qrc-pairs | sqr-lists | qam-pairs | split`` to the ``mathgraph`` commands."""
    data = commands.add_parser(
        "data",
        help="build and split task data (QRC pairs, SQR lists, QAM pairs)",
        description="Build task files from GSM-Plus / GSM8K JSONL and split them without leaks.",
    )
    actions = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    specs = {
        "qrc-pairs": ("question relation pairs from GSM-Plus variants (9 labels)", run_data_qrc),
        "sqr-lists": ("graded similar-question candidate lists from GSM-Plus variants (relevance 0..2)", run_data_sqr),
        "qam-pairs": (
            (
                "question/solution matching pairs from GSM8K rows (hard or random negatives) or "
                "GSM-Plus variants (number-swap pairs)"
            ),
            run_data_qam,
        ),
        "split": ("split a JSONL file into train/dev/test by group, or by row (stratified)", run_data_split),
    }
    parsers = {}
    for name, (help_text, run) in specs.items():
        parsers[name] = sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--input", required=True, type=input_path, metavar="FILE")
        sub.add_argument("--seed", type=int, default=0, help="random seed; same seed, same output (default: 0)")
        sub.add_argument("--skip-bad", action="store_true", help="skip bad input lines, count and report them")
        if name != "split":
            sub.add_argument("--output", required=True, metavar="FILE")
        sub.set_defaults(run=run)
    parsers["qrc-pairs"].add_argument(
        "--irrelevant-per-seed",
        type=int,
        default=1,
        metavar="N",
        help="pairs of a seed with another seed's question (default: 1)",
    )
    sqr = parsers["sqr-lists"]
    sqr.add_argument(
        "--other-seeds",
        type=int,
        default=4,
        metavar="N",
        help="variants of other seeds per list, the N most TF-IDF-similar to the query, relevance 0 "
        "(default: 4; with a seed's 8 variants a list has 12 candidates)",
    )
    qam = parsers["qam-pairs"]
    qam.add_argument(
        "--source",
        choices=("gsm8k", "gsmplus"),
        default="gsm8k",
        help="gsm8k: question/solution rows, one negative per question; gsmplus: GSM-Plus variants, "
        "number-swap pairs grouped by seed (default: gsm8k)",
    )
    qam.add_argument(
        "--negatives",
        choices=("hard", "random"),
        help="gsm8k only: the solution of the most TF-IDF-similar other question (hard, the default) "
        "or of a random other question",
    )
    qam.add_argument("--limit", type=int, metavar="N", help="use the first N input rows only")
    qam.add_argument("--question-field", help="gsm8k only: the question field (default: question)")
    qam.add_argument("--solution-field", help="gsm8k only: the solution field (default: answer)")
    split = parsers["split"]
    split.add_argument("--group-field", help="keep rows with the same value together (e.g. group)")
    split.add_argument("--stratify-field", help="without --group-field: stratify rows by this label")
    split.add_argument("--dev", type=float, default=0.1, help="fraction for dev (default: 0.1)")
    split.add_argument("--test", type=float, default=0.1, help="fraction for test (default: 0.1)")
    split.add_argument(
        "--output-dir",
        metavar="DIR",
        help="where to write STEM.{train,dev,test}.jsonl (default: next to input; the current folder for a bundled "
        "file)",
    )


def _write_data(rows: list, output: str, summary: str, bad: list) -> None:
    from mathgraph.tasks.data import write_rows

    write_rows(output, rows)
    report(f"wrote {len(rows)} rows to {output} ({summary})")
    report_skipped(bad)


def run_data_qrc(args: argparse.Namespace) -> int:
    """``data qrc-pairs``: QRC pairs from GSM-Plus variants (``tasks.data.build_qrc_pairs``)."""
    check_input_file(args.input)  # missing or empty: an error naming it
    from mathgraph.tasks.data import build_qrc_pairs, count_summary, read_seeds

    seeds, bad = read_seeds(args.input, args.skip_bad)
    pairs = build_qrc_pairs(seeds, args.seed, args.irrelevant_per_seed)
    _write_data(pairs, args.output, f"{len(seeds)} seeds; {count_summary(pairs, 'label')}", bad)
    return 0


def run_data_sqr(args: argparse.Namespace) -> int:
    """``data sqr-lists``: graded SQR lists (``tasks.data.build_sqr_lists``); prints the list shapes and grades."""
    check_input_file(args.input)  # missing or empty: an error naming it
    from collections import Counter

    from mathgraph.tasks.data import build_sqr_lists, read_seeds

    seeds, bad = read_seeds(args.input, args.skip_bad)
    lists = build_sqr_lists(seeds, args.seed, args.other_seeds)
    shapes = Counter(
        f"{len(r['candidates'])} candidates, relevance 2/1/0: "
        + "/".join(str(r["relevance"].count(grade)) for grade in (2, 1, 0))
        for r in lists
    )
    grades = Counter(grade for r in lists for grade in r["relevance"])
    summary = (
        f"{len(seeds)} seeds; lists of "
        + ", ".join(f"{k}: {n}" for k, n in shapes.most_common())
        + "; candidates of relevance "
        + ", ".join(f"{g}: {grades[g]}" for g in (2, 1, 0))
    )
    _write_data(lists, args.output, summary, bad)
    return 0


def run_data_qam(args: argparse.Namespace) -> int:
    """``data qam-pairs``: GSM8K pairs with hard or random negatives (``tasks.data.build_qam_pairs``) or GSM-Plus
    number-swap pairs (``tasks.data.build_qam_number_swap``); prints the counts."""
    check_input_file(args.input)  # missing or empty: an error naming it
    from mathgraph.jsonl import read_rows
    from mathgraph.tasks.data import QAM_SWAP_FIELDS, build_qam_number_swap, build_qam_pairs, count_summary

    if args.source == "gsmplus":
        given = [
            flag
            for flag, value in (
                ("--negatives", args.negatives),
                ("--question-field", args.question_field),
                ("--solution-field", args.solution_field),
            )
            if value is not None
        ]
        if given:
            raise UserError(f"{', '.join(given)} apply to --source gsm8k only")
        numbered, bad = read_rows(args.input, QAM_SWAP_FIELDS, args.skip_bad)
        rows = [row for _, row in numbered][: args.limit]
        pairs = build_qam_number_swap(rows)
        summary = f"{len({p['group'] for p in pairs})} seeds, number-swap pairs; label {count_summary(pairs, 'label')}"
        _write_data(pairs, args.output, summary, bad)
        return 0
    question_field, solution_field = args.question_field or "question", args.solution_field or "answer"
    negatives = args.negatives or "hard"
    numbered, bad = read_rows(args.input, (question_field, solution_field), args.skip_bad)
    rows = [row for _, row in numbered][: args.limit]
    pairs = build_qam_pairs(rows, args.seed, negatives, question_field, solution_field)
    _write_data(
        pairs, args.output, f"{len(rows)} questions, {negatives} negatives; label {count_summary(pairs, 'label')}", bad
    )
    return 0


def run_data_split(args: argparse.Namespace) -> int:
    """``data split``: train/dev/test files by group or stratified (``tasks.data.split_file``)."""
    check_input_file(args.input)  # missing or empty: an error naming it
    from mathgraph.tasks.data import split_file

    paths, splits, bad = split_file(
        args.input,
        args.dev,
        args.test,
        args.seed,
        args.group_field,
        args.stratify_field,
        args.output_dir or ("." if is_bundled(args.input) else None),  # never into the installed package
        args.skip_bad,
    )
    for name, rows in splits.items():
        groups = f", {len({r[args.group_field] for r in rows})} groups" if args.group_field else ""
        report(f"{name}: {len(rows)} rows{groups} -> {paths[name]}")
    if bad:
        report(f"skipped {counted(len(bad), 'bad line')}, first: {bad[0]}", logging.WARNING)
    return 0
