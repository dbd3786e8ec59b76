"""Requests per second and latency of `mathgraph serve` with the shipped model (issue 16), and one search
against the CLI's.

    python benchmarks/serve_load.py --work /tmp/cli_bench2 [--requests 100] [--concurrency 1 4] [--repeats 3]
                                    [--smoke]

Starts ``mathgraph -q serve --index WORK/index1000 --port 0`` (the shipped multi-task model; the index of the
first 1,000 MATH train problems that ``cli_startup.py`` builds) on 127.0.0.1 only, then for each endpoint
(parse, predict kpc, search k=5) and each client concurrency sends ``--requests`` requests of one problem
each, every one a different MATH train problem (rows after the indexed ones) so that no answer comes from the
graph cache, which starts empty. A request's latency is from sending it to reading the whole answer, over
a keep-alive connection per client thread; req/s is requests / wall time of the run. The client threads run
on the same 2 cores as the server.

Then one query's search latency against the CLI's: ``mathgraph -q search --index INDEX QUERY`` as whole
processes (median of ``--repeats``) beside the median of 5 server requests of that query, the query's graph
in the cache for both.

``--smoke``: an index of 20 problems of the smoke data (``benchmarks/smoke.py``), 3 requests per
endpoint at 1 and 2 client threads, one CLI run, in ``WORK/smoke``: seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_startup import MATH_TRAIN, prepare, wall_times  # noqa: E402
from smoke import SMOKE_MATH, smoke_work  # noqa: E402

ENDPOINTS = {  # name -> (path, body of one problem)
    "parse": ("/api/parse", lambda text: {"texts": [text]}),
    "predict kpc": ("/api/predict/kpc", lambda text: {"inputs": [text]}),
    "search k=5": ("/api/search", lambda text: {"queries": [text], "k": 5}),
}


def start_server(index: Path) -> tuple[subprocess.Popen, str]:
    """``mathgraph serve`` on a free port of 127.0.0.1, and its URL once it answers."""
    process = subprocess.Popen(
        ["mathgraph", "-q", "serve", "--index", str(index), "--port", "0"], stderr=subprocess.PIPE, text=True
    )
    for line in process.stderr:
        found = re.search(r"at (http://127\.0\.0\.1:\d+)/", line)
        if found:
            httpx.get(found[1] + "/api/health", timeout=60).raise_for_status()
            return process, found[1]
    raise RuntimeError(f"mathgraph serve exited with {process.wait()} before it served")


def load_run(url: str, path: str, bodies: list[dict], concurrency: int) -> dict:
    """Send ``bodies`` with ``concurrency`` client threads; latencies and throughput."""
    clients = [httpx.Client(base_url=url, timeout=300) for _ in range(concurrency)]

    def send(i: int) -> float:
        start = time.perf_counter()
        clients[i % concurrency].post(path, json=bodies[i]).raise_for_status()
        return time.perf_counter() - start

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        latencies = np.array(list(pool.map(send, range(len(bodies)))))
    wall = time.perf_counter() - start
    for client in clients:
        client.close()
    return {
        "requests": len(bodies),
        "concurrency": concurrency,
        "wall_s": round(wall, 2),
        "requests_per_s": round(len(bodies) / wall, 2),
        "p50_ms": round(1000 * float(np.percentile(latencies, 50)), 1),
        "p95_ms": round(1000 * float(np.percentile(latencies, 95)), 1),
        "max_ms": round(1000 * float(latencies.max()), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="where cli_startup.py keeps its index")
    parser.add_argument("--rows", type=int, default=1000, help="MATH train problems in the index")
    parser.add_argument("--requests", type=int, default=100, help="requests per endpoint and concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--repeats", type=int, default=3, help="CLI search runs")
    parser.add_argument("--output", type=Path, help="the results as JSON")
    parser.add_argument("--smoke", action="store_true", help="20 problems, 3 requests a run: seconds (WORK/smoke)")
    args = parser.parse_args()
    data, queries = MATH_TRAIN, 100  # cli_startup's query file: the rows after the index's
    if args.smoke:
        args.work, args.rows, args.requests, args.concurrency, args.repeats = smoke_work(args.work), 20, 3, [1, 2], 1
        data, queries = SMOKE_MATH, 3

    index, _, query = prepare(args.work, args.rows, queries, data)
    needed = (args.requests * len(args.concurrency) + 5) * len(ENDPOINTS)  # with the warm-up's
    lines = data.read_text(encoding="utf-8").splitlines()[args.rows + queries : args.rows + queries + needed]
    problems = iter(json.loads(line)["problem"] for line in lines)
    results = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python "
        f"{sys.version.split()[0]}",
        "index_rows": args.rows,
        "runs": [],
    }
    with tempfile.TemporaryDirectory() as cache_dir:
        os.environ["MATHGRAPH_CACHE_DIR"] = cache_dir  # the server's and the CLI's, empty at first
        started = time.perf_counter()
        process, url = start_server(index)
        results["server_start_s"] = round(time.perf_counter() - started, 2)
        try:
            for _ in range(5):  # warm-up: first calls pay lazy imports and allocator growth
                for path, body in ENDPOINTS.values():
                    httpx.post(url + path, json=body(next(problems)), timeout=300).raise_for_status()
            for name, (path, body) in ENDPOINTS.items():
                for concurrency in args.concurrency:
                    bodies = [body(next(problems)) for _ in range(args.requests)]
                    run = {"endpoint": name, **load_run(url, path, bodies, concurrency)}
                    results["runs"].append(run)
                    print(json.dumps(run), file=sys.stderr, flush=True)
            single = [load_run(url, "/api/search", [{"queries": [query], "k": 5}], 1)["p50_ms"] for _ in range(5)]
        finally:
            process.terminate()
            process.wait(timeout=60)
        # the query's graph is in the cache now, for the CLI runs as for 4 of the 5 server requests
        search = {"cli": ["mathgraph", "-q", "search", "--index", str(index), "-k", "5", query]}
        cli = wall_times(search, args.repeats, {"this tree": dict(os.environ)})["this tree"]["cli"]
    results["one_query"] = {
        "server_ms_median_of_5": statistics.median(single),
        "cli_s_median": round(statistics.median(cli), 2),
        "cli_s_runs": [round(s, 2) for s in cli],
    }
    if args.output:
        args.output.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(
        f"server start-up (models and index loaded, first health answer): {results['server_start_s']} s; "
        f"{results['machine']}; index of {args.rows} MATH train problems\n"
    )
    print("| endpoint | client threads | requests | req/s | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|---|---|")
    for run in results["runs"]:
        print(
            f"| {run['endpoint']} | {run['concurrency']} | {run['requests']} | {run['requests_per_s']} | "
            f"{run['p50_ms']} | {run['p95_ms']} | {run['max_ms']} |"
        )
    one = results["one_query"]
    print(
        f"\none search query: server {one['server_ms_median_of_5']} ms (median of 5 requests) against "
        f"`mathgraph search` {one['cli_s_median']} s (whole process, median of {args.repeats}: "
        f"{', '.join(map(str, one['cli_s_runs']))})"
    )


if __name__ == "__main__":
    main()
