"""``mathgraph dedupe``: every row of a bank written back with a group id, the same for rows that are the same
problem (``tasks.search.dedupe``)."""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Iterator
from pathlib import Path

from mathgraph.bank_files import INPUT_FORMATS
from mathgraph.cli.common import add_runtime_argument, at_least_one, counted
from mathgraph.errors import UserError
from mathgraph.job_outputs import require_parquet
from mathgraph.quiet import report
from mathgraph.samples import input_path

# Rows written to a Parquet output at a time.
PARQUET_BATCH = 10_000
OUTPUT_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}


def register(commands) -> None:
    """Add ``dedupe`` to the ``mathgraph`` commands."""
    from mathgraph.tasks.search.dedupe import MIN_COSINE, MIN_QUESTION_SIMILARITY, NEIGHBOURS, SMALL_NUMBERS

    dedupe = commands.add_parser(
        "dedupe",
        help="group the rows of a bank that are the same problem",
        description="Write every row of a bank (JSONL, CSV, Parquet or a saved datasets directory) back with a "
        "group id, the same for rows that are the same problem: the same text up to wording and formatting, "
        "the same quantities and the same question. Copies that differ in formatting only are grouped outright; "
        "other pairs are found with a search index (cosine) and confirmed by aligning the two problems' graphs "
        "and comparing their quantities (values, how they are written, their units), formulas and questions, "
        "so 'Tom has 12 apples' and 'Tom has 12.5 apples' are two problems; every pair of rows inside a group "
        "is confirmed. The default is tuned for finding copies; --strict is for merging, precision first. A "
        "group's id is the position (from 0) of its first row in the output.",
    )
    dedupe.add_argument("--input", required=True, type=input_path, metavar="BANK")
    dedupe.add_argument(
        "--input-format", choices=INPUT_FORMATS, help="format of --input (default: from its name; else JSONL)"
    )
    dedupe.add_argument("--text-field", default="problem")
    dedupe.add_argument(
        "--output", required=True, metavar="ROWS", help="the rows with their group: .jsonl, .csv, .tsv or .parquet"
    )
    dedupe.add_argument("--group-field", default="group", help="the field that holds the group id (default: group)")
    dedupe.add_argument("--pairs", metavar="FILE", help="also write the pairs found to be the same problem (JSONL)")
    dedupe.add_argument(
        "--model", default="text:minilm", help="the encoder that finds candidates (default: text:minilm)"
    )
    dedupe.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available, else cpu)")
    add_runtime_argument(dedupe)
    dedupe.add_argument(
        "--strict",
        action="store_true",
        help="precision first, for merging: at most one small number in words stated on one side only, equal "
        "values in the same units, an edited copy with at most one new word (default: tuned for finding copies)",
    )
    dedupe.add_argument(
        "--explain",
        action="store_true",
        help="print each group of more than one row: for each row, the pair that joined it and what matched "
        "(cosine, quantities, question, the rule that decided)",
    )
    dedupe.add_argument("--neighbours", type=at_least_one, help=f"candidates a row (default: {NEIGHBOURS})")
    dedupe.add_argument("--min-cosine", type=float, help=f"the least cosine of a candidate (default: {MIN_COSINE})")
    dedupe.add_argument(
        "--min-question-similarity",
        type=float,
        help=f"the least word similarity of two reworded questions (default: {MIN_QUESTION_SIMILARITY})",
    )
    dedupe.add_argument(
        "--small-numbers",
        type=int,
        help="how many small numbers written in words ('one crate' -> 'a single box') may be stated on one side "
        f"only (default: {SMALL_NUMBERS}; 1 with --strict)",
    )
    dedupe.add_argument("--batch-size", type=at_least_one, default=32)
    dedupe.add_argument(
        "--skip-bad", action="store_true", help="leave out rows without the text (counted), instead of stopping"
    )
    dedupe.set_defaults(run=run_dedupe)


def run_dedupe(args: argparse.Namespace) -> int:
    """``dedupe``: read the bank, group its rows (``tasks.search.dedupe.find_duplicates``), write them back."""
    from mathgraph.bank_files import BankReader, check_bank_input
    from mathgraph.cli.common import check_model_argument

    output_format = _output_format(args.output)
    check_bank_input(args.input, args.input_format)
    check_model_argument(args.model)
    settings = _settings(args)
    reader = BankReader.open(args.input, args.input_format, fields=(args.text_field,), id_field=None, keep=None)
    texts, skipped = [], []
    for record in _good_records(reader, args.skip_bad, skipped):  # the bank is checked before a model loads
        if args.group_field in record.row:
            raise UserError(
                f"{args.input}:{record.number}: the row already has a field {args.group_field!r}; "
                "name another with --group-field"
            )
        texts.append(record.row[args.text_field])
    if not texts:
        raise UserError(f"{args.input}: no rows with a {args.text_field!r} field")
    report(f"{args.input}: {len(texts):,} rows to group")
    from mathgraph.tasks.search.dedupe import find_duplicates
    from mathgraph.tasks.search.embedders import load_embedder

    result = find_duplicates(
        texts,
        load_embedder(args.model, device=args.device, runtime=args.runtime),
        settings,
        batch_size=args.batch_size,
        show_progress=not args.quiet,
    )
    rows = (
        {**record.row, args.group_field: int(group)}
        for record, group in zip(_good_records(reader, args.skip_bad, []), result.groups)
    )
    _write_rows(Path(args.output), output_format, rows)
    if args.pairs:
        from mathgraph.jsonl import atomic_writer, write_jsonl

        with atomic_writer(args.pairs) as out:
            write_jsonl(out, (pair.to_dict() for pair in result.pairs))
    rejected = ", ".join(f"{count} {reason}" for reason, count in sorted(result.rejected.items())) or "none"
    report(
        f"{len(texts):,} rows are {result.group_count:,} problems: "
        f"{counted(sum(p.how == 'copy' for p in result.pairs), 'copy', 'copies')}, "
        f"{sum(p.how == 'aligned' for p in result.pairs):,} of {result.candidates:,} candidate pairs joined "
        f"(rejected by {rejected}); rows in {args.output}",
    )
    if args.explain:
        print("\n".join(result.explain()) or "no group has more than one row")
    if skipped:
        from mathgraph.cli.common import report_skipped

        report_skipped(skipped)
    return 0


def _settings(args: argparse.Namespace):
    """The ``DedupeSettings`` of the command line: ``STRICT`` with ``--strict``, else the defaults, with each
    threshold given replacing its value."""
    from dataclasses import replace

    from mathgraph.tasks.search.dedupe import STRICT, DedupeSettings

    given = {
        name: getattr(args, name)
        for name in ("neighbours", "min_cosine", "min_question_similarity", "small_numbers")
        if getattr(args, name) is not None
    }
    return replace(STRICT if args.strict else DedupeSettings(), **given)


def _output_format(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise UserError(f"--output {path}: name it .jsonl, .csv, .tsv or .parquet (the format comes from the name)")
    if OUTPUT_SUFFIXES[suffix] == "parquet":
        require_parquet(f"--output {path}")
    return OUTPUT_SUFFIXES[suffix]


def _good_records(reader, skip_bad: bool, skipped: list) -> Iterator:
    """The good records of the bank, in order; a bad one stops with its file and number, or with ``skip_bad``
    is left out and its error noted in ``skipped``."""
    for record in reader.records():
        if record.error is None:
            yield record
        elif skip_bad:
            skipped.append(str(reader.error(record)))
        else:
            raise reader.error(record)


def _write_rows(path: Path, output_format: str, rows: Iterator[dict]) -> None:
    """Write ``rows`` to ``path`` as JSONL, CSV/TSV (the columns of every row, in first-seen order; other
    values than strings and numbers as JSON) or Parquet, under a temporary name renamed at the end."""
    from mathgraph.job_outputs import atomic_path

    with atomic_path(path) as temporary:
        if output_format == "jsonl":
            with open(temporary, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        elif output_format in ("csv", "tsv"):
            rows = list(rows)
            columns = list(dict.fromkeys(name for row in rows for name in row))
            with open(temporary, "w", encoding="utf-8", newline="") as f:
                writer = csv.DictWriter(f, columns, delimiter="\t" if output_format == "tsv" else ",")
                writer.writeheader()
                writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
        else:
            _write_parquet(temporary, rows)


def _cell(value):
    return value if isinstance(value, (str, int, float)) or value is None else json.dumps(value, ensure_ascii=False)


def _write_parquet(path: Path, rows: Iterator[dict]) -> None:
    pq = require_parquet(f"--output {path}")
    import pyarrow as pa

    writer = None
    try:
        batch = []
        for row in rows:
            batch.append(row)
            if len(batch) == PARQUET_BATCH:
                writer = _write_batch(pa, pq, path, writer, batch)
                batch = []
        if batch or writer is None:
            writer = _write_batch(pa, pq, path, writer, batch)
    finally:
        if writer is not None:
            writer.close()


def _write_batch(pa, pq, path: Path, writer, batch: list[dict]):
    table = pa.Table.from_pylist(batch, schema=None if writer is None else writer.schema)
    if writer is None:
        writer = pq.ParquetWriter(path, table.schema)
    writer.write_table(table)
    return writer
