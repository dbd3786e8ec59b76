"""Parsing throughput: problems per second with 1 and with 2 worker processes.

    python benchmarks/parse_throughput.py [--data ../shared/data/math/train.jsonl] [--limit 1000] [--smoke]

Times ``mathgraph.parse_problems`` end to end (segmentation, spaCy, operator
trees, graph building; worker start-up included) on the first ``--limit``
problems, after one warm-up batch so the model load is not counted for the
single process run. Prints a markdown table, and the speed-up that a pure
Python loop gets from the same number of processes on this machine at the
same moment: on a shared machine the second core is not always free, and that
calibration tells the parser's scaling apart from the machine's. ``--smoke``: the first 32
problems of the smoke data (``benchmarks/smoke.py``) in batches of 8: seconds.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
from pathlib import Path

from mathgraph.parsers.problem import ProblemParser, parse_problems

from smoke import SMOKE_MATH

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    args = _arguments()
    with open(args.data, encoding="utf-8") as f:
        texts = [json.loads(line)[args.text_field] for line in f][: args.limit]
    ProblemParser(args.parser).parse_batch(texts[:16])  # load and warm the model once

    rows = []
    for workers in args.workers:
        start = time.perf_counter()
        graphs = list(parse_problems(texts, parser=args.parser, batch_size=args.batch_size, n_process=workers))
        seconds = time.perf_counter() - start
        rows.append((workers, len(graphs), seconds, len(graphs) / seconds, sum(g.num_nodes for g in graphs)))

    base = rows[0][3]
    print(f"data: {args.data} (first {len(texts)} problems), parser: {args.parser}, cpus: {os.cpu_count()}")
    print("| workers | problems | seconds | problems/s | speed-up | pure-Python loop speed-up | nodes |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for workers, count, seconds, rate, nodes in rows:
        calibration = _loop_speedup(workers)
        print(
            f"| {workers} | {count} | {seconds:.2f} | {rate:.1f} | {rate / base:.2f}x | {calibration:.2f}x | {nodes} |"
        )


def _busy_loop(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def _loop_speedup(workers: int, tasks: int = 8, n: int = 2_000_000) -> float:
    """How much faster ``tasks`` busy loops finish on ``workers`` processes than in this one."""
    start = time.perf_counter()
    for _ in range(tasks):
        _busy_loop(n)
    serial = time.perf_counter() - start
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        start = time.perf_counter()
        pool.map(_busy_loop, [n] * tasks)
        parallel = time.perf_counter() - start
    return serial / parallel


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "math" / "train.jsonl"))
    parser.add_argument("--text-field", default="problem")
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--parser", default="spacy")
    parser.add_argument("--smoke", action="store_true", help="32 problems of the smoke data: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.data, args.limit, args.batch_size = str(SMOKE_MATH), 32, 8
    return args


if __name__ == "__main__":
    main()
