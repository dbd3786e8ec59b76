"""The options of the commands that run as batch jobs (``parse``, ``encode``, ``predict`` over an ``--input``
bank): the input's format, the output's, shards and ``--resume``, and the engine (this process or Ray).
``run_job_with`` runs a job on the engine the options name and says on stderr what it wrote."""

from __future__ import annotations

import argparse
import logging
from typing import IO

from mathgraph.bank_files import INPUT_FORMATS
from mathgraph.batch_jobs import DEFAULT_SHARD_SIZE, Job, JobResult
from mathgraph.cli.common import at_least_one, counted
from mathgraph.errors import UserError
from mathgraph.job_outputs import OUTPUT_FORMATS
from mathgraph.quiet import report

ENGINES = ("local", "ray")


def add_job_arguments(parser: argparse.ArgumentParser, workers_help: str) -> None:
    """Add the batch-job options to a command's parser (``workers_help``: what ``--workers`` means there)."""
    group = parser.add_argument_group("banks and batch jobs (--input)")
    group.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        help="format of --input (default: from its name: .jsonl, .csv/.tsv, .parquet, a saved datasets directory)",
    )
    group.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        help="format of the shards when --output is a directory (default: jsonl); a file's comes from its name",
    )
    group.add_argument(
        "--id-field", default="id", help="field of an input row's id, copied to its output (default: id)"
    )
    group.add_argument(
        "--shard-size",
        type=int,
        default=DEFAULT_SHARD_SIZE,
        help=f"input rows per output shard (default: {DEFAULT_SHARD_SIZE:,})",
    )
    group.add_argument(
        "--resume", action="store_true", help="continue an interrupted job in --output, skipping its finished shards"
    )
    group.add_argument("--engine", choices=ENGINES, default="local", help="local (this process, default) or ray")
    group.add_argument(
        "--address", help="--engine ray: the Ray cluster to join (default: RAY_ADDRESS, else a local Ray)"
    )
    group.add_argument("--workers", type=at_least_one, help=workers_help)
    group.add_argument(
        "--cpus-per-worker", type=float, default=1.0, help="--engine ray: CPUs of each model actor (default: 1)"
    )
    group.add_argument(
        "--gpus-per-worker",
        type=float,
        help="--engine ray: GPUs of each model actor (default: 1 where the cluster has GPUs, else 0)",
    )


def check_job_arguments(args: argparse.Namespace) -> None:
    """Usage errors of the batch-job options, before anything loads."""
    if args.shard_size < 1:
        raise UserError(f"--shard-size must be >= 1, got {args.shard_size}")
    if args.engine != "ray" and (args.address or args.gpus_per_worker is not None or args.cpus_per_worker != 1.0):
        raise UserError("--address, --cpus-per-worker and --gpus-per-worker apply to --engine ray only")
    from mathgraph.api import check_engine

    check_engine(args.engine)


def run_job_with(args: argparse.Namespace, job: Job, out: IO[str] | None = None) -> JobResult:
    """Run ``job`` on the engine ``args`` names, with their ``--resume`` and Ray options."""
    from mathgraph.api import run_batch_job

    ray_options = {}
    if args.engine == "ray":
        ray_options = {
            "address": args.address,
            "workers": args.workers,
            "cpus_per_worker": args.cpus_per_worker,
            "gpus_per_worker": args.gpus_per_worker,
            "verbose": args.verbose,
        }
    return run_batch_job(job, args.engine, resume=args.resume, show_progress=not args.quiet, out=out, **ray_options)


def report_job(result: JobResult, written: str) -> None:
    """Tell stderr what a job wrote (``written``: "5 graphs"...), how much of it an earlier run did, and the
    bad lines it skipped (the first of them named)."""
    resumed = f" ({result.shards_resumed} of {result.shards} shards done before)" if result.shards_resumed else ""
    report(f"wrote {written} to {result.output}{resumed}")
    if result.bad_count:
        lines = [f"skipped {counted(result.bad_count, 'bad line')}:", *(f"  {error}" for error in result.bad)]
        if result.bad_count > len(result.bad):
            lines.append(f"  ... and {result.bad_count - len(result.bad)} more")
        report("\n".join(lines), logging.WARNING)


__all__ = ["ENGINES", "add_job_arguments", "check_job_arguments", "run_job_with", "report_job"]
