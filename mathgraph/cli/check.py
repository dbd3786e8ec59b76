"""``mathgraph check``: check a worked solution against its problem (``parsers.solution.check_solution``).

    mathgraph check PROBLEM SOLUTION [--format text|json] [--threshold strict|f1|P]
    mathgraph check --input FILE [--input-format jsonl|csv|parquet|datasets] [--problem-field F] [--solution-field F]
                    [--output FILE] [--skip-bad] [--threshold strict|f1|P]

A solution is read as lines; each finding names its line (0-based; an unused quantity of the problem names
none), and the result is ok when no finding is an error (wrong arithmetic, a number from nowhere, a final
answer no step computed, an equality of LaTeX math that does not hold, a line the step verifier finds likely
wrong, at the operating point ``--threshold`` names); warnings (an unused quantity, a solution that shows no
work) leave it ok. Like a linter, the exit status is 1 when any checked solution is not ok, 0 when all are, 2 for
a usage error. --input reads a bank in any format ``mathgraph.bank_files`` reads.
"""

from __future__ import annotations

import argparse
import json
import sys

from mathgraph.bank_files import INPUT_FORMATS
from mathgraph.cli.common import IntermixedArgumentParser, counted, read_input_rows, report_skipped
from mathgraph.errors import UserError
from mathgraph.quiet import report
from mathgraph.samples import input_path


def register(commands) -> None:
    """Add ``check`` to the ``mathgraph`` commands."""
    check = commands.add_parser(
        "check",
        help="check a worked solution against its problem: arithmetic, copied numbers, the final answer",
        description="Read SOLUTION against PROBLEM: every calculation it states (4 * 5 = 20, <<4*5=20>>20, "
        "LaTeX, 'twice 8 is 16'), where each number comes from (a quantity of the problem, an earlier result, "
        "a known constant such as 60 minutes in an hour), and the final answer. Print the findings, each "
        "with its line of the solution (0-based; none for an unused quantity): arithmetic, unexplained_operand, "
        "answer_mismatch, false_claim (an equality of LaTeX math that does not hold), inverse_operation (a "
        "relation of the problem's words applied the other way round: half as many computed as twice), "
        "answer_unit (the answer in another unit than the question asks) and suspect_step (a line "
        "the step verifier finds likely wrong, with its probability) are errors; unused_quantity and no_work "
        "(no calculation and no number but the answer) are warnings; in a LaTeX solution an answer that no "
        "calculation gives is a warning. A solution is ok when it has no error. --input FILE reads rows (fields problem, "
        "solution, optional id; --problem-field and --solution-field name others) from JSONL, CSV, Parquet or a "
        "saved datasets directory and writes one JSON line per row: id, line, ok, findings, first_error_step. Exit status: 0 when every solution checked is ok, 1 "
        "when any has an error, 2 for a usage error (bad arguments, a bad input line without --skip-bad).",
    )
    check.__class__ = IntermixedArgumentParser  # the TEXTs may follow the options
    check.add_argument("texts", nargs="*", metavar="TEXT", help="the problem, then its solution")
    check.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="how to print one check: the findings in words, or one JSON line (ok, first_error_step, findings, "
        "graph: the solution graph); --input always writes JSONL",
    )
    check.add_argument(
        "--input",
        type=input_path,
        metavar="FILE",
        help="rows with the fields problem and solution: JSONL, CSV, Parquet or a saved datasets directory",
    )
    check.add_argument("--input-format", choices=INPUT_FORMATS, help="format of --input (default: from its name)")
    check.add_argument(
        "--problem-field", default="problem", help="the problem field of --input rows (default: problem)"
    )
    check.add_argument(
        "--solution-field", default="solution", help="the solution field of --input rows (default: solution)"
    )
    check.add_argument("--output", metavar="FILE", help="JSONL results, one per good input line (default: stdout)")
    check.add_argument(
        "--skip-bad", action="store_true", help="skip bad input lines, count and report them, instead of stopping"
    )
    check.add_argument(
        "--threshold",
        type=_operating_point,
        default="strict",
        metavar="POINT",
        help="when the step verifier reports a suspect_step: strict (the default; on ProcessBench's dev halves it "
        "leaves 90%% or more of the right solutions unflagged), f1 (the threshold of best dev F1: it finds about "
        "twice as many first wrong steps and flags about half the right solutions of competition problems), or "
        "a probability between 0 and 1",
    )
    check.set_defaults(run=run_check)


def _operating_point(value: str) -> str | float:
    """A ``--threshold``: a named operating point of the step verifier or a probability (a usage error else)."""
    from mathgraph.parsers.step_verifier import OPERATING_POINTS

    if value in OPERATING_POINTS:
        return value
    try:
        probability = float(value)
    except ValueError:
        probability = -1.0
    if not 0.0 <= probability <= 1.0:
        raise argparse.ArgumentTypeError(f"choose {' or '.join(OPERATING_POINTS)}, or a probability between 0 and 1")
    return probability


def run_check(args: argparse.Namespace) -> int:
    """``check``: one solution's findings printed, or a JSONL file's written as JSONL; the exit status is 1 when
    any solution has an error (is not ok), else 0."""
    rows, bad = _read_rows(args)
    from mathgraph.parsers.graph_cache import parse_cached
    from mathgraph.parsers.solution import check_solution
    from mathgraph.parsers.step_verifier import WEIGHTS, StepVerifier

    problems = [row[args.problem_field] for _, row in rows]
    graphs = parse_cached(problems, show_progress=bool(args.input) and not args.quiet)
    verifier = StepVerifier.load(WEIGHTS, point=args.threshold) if WEIGHTS.exists() else None
    checks = [check_solution(graph, row[args.solution_field], verifier) for graph, (_, row) in zip(graphs, rows)]
    if not args.input:
        [check] = checks
        print(format_check(check) if args.format == "text" else json.dumps(check.to_dict(), ensure_ascii=False))
        return 0 if check.ok else 1
    from mathgraph.jsonl import atomic_writer, write_jsonl

    lines = [
        {"id": row.get("id", line), "line": line, **check.to_dict(graph=False)}
        for (line, row), check in zip(rows, checks)
    ]
    if args.output:
        with atomic_writer(args.output) as f:
            written = write_jsonl(f, lines)
    else:
        written = write_jsonl(sys.stdout, lines)
    failed = sum(not check.ok for check in checks)
    report(f"wrote {counted(written, 'check')} to {args.output or 'stdout'} ({failed} not ok)")
    report_skipped(bad)
    return 1 if failed else 0


def format_check(check) -> str:
    """A check in words: ok or not (and the first error's line), then one line per finding."""
    if check.ok:
        head = "ok: no errors found"
    else:
        head = f"not ok: the first error is on line {check.first_error_step} (0-based)"
    lines = [head]
    for finding in check.findings:
        where = "problem" if finding.step is None else f"line {finding.step}"
        lines.append(f"{finding.severity} {finding.kind} ({where}): {finding.message}")
    lines.extend(f"note: {note}" for note in check.graph.notes)
    return "\n".join(lines)


def _read_rows(args: argparse.Namespace) -> tuple[list[tuple[int, dict]], list]:
    """``(line, row)`` of each row to check and the bad lines: an input file's good rows, or the two TEXTs."""
    if args.input:
        if args.texts:
            raise UserError("give PROBLEM and SOLUTION, or --input FILE, not both")
        fields = (args.problem_field, args.solution_field)
        return read_input_rows(args.input, fields, skip_bad=args.skip_bad, format=args.input_format)
    if args.output or args.skip_bad:
        raise UserError("--output and --skip-bad apply to --input files only")
    if len(args.texts) != 2:
        raise UserError(f"give two TEXTs (the problem, then its solution), or --input FILE; got {len(args.texts)}")
    for name, text in zip(("the problem", "the solution"), args.texts):
        if not text.strip():
            raise UserError(f"{name} is empty (or only whitespace)")
    return [(0, dict(zip((args.problem_field, args.solution_field), args.texts)))], []
