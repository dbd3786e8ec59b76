"""Requests per second and latency of `mathgraph serve` with the shipped model, one search against
the CLI's, and small requests while maximal ones run (a fair server).

    python benchmarks/serve_load.py --work /tmp/cli_bench2 [--requests 100] [--concurrency 1 4] [--repeats 3]
                                    [--small 40] [--maximal 4] [--fairness-only] [--smoke]

Starts ``mathgraph -q serve --index WORK/index1000 --port 0`` (the shipped multi-task model; the index of the
first 1,000 MATH train problems that ``cli_startup.py`` builds) on 127.0.0.1 only, then for each endpoint
(parse, predict kpc, search k=5, compare) and each client concurrency sends ``--requests`` requests of one
problem each, every one a different MATH train problem (rows after the indexed ones) so that no answer comes
from the graph cache, which starts empty (compare: the problem against itself with its first number
changed). A request's latency is from sending it to reading the whole answer, over a keep-alive connection
per client thread; req/s is requests / wall time of the run. The client threads run on the same 2 cores as
the server.

Then one query's search latency against the CLI's: ``mathgraph -q search --index INDEX QUERY`` as whole
processes (median of ``--repeats``) beside the median of 5 server requests of that query, the query's graph
in the cache for both.

Then fairness: ``--small`` small compares (a MATH problem against itself with a number changed) and, at the
same time from a second client thread, ``--small`` small KPC predictions, one after the other, first on an
idle server, then while ``--maximal`` client threads each send maximal compares, one after another: as many
pairs of ``max_text_chars`` characters as the server's per-request budget (``max_request_chars``, from
``/api/health``) allows, each text MATH problems run together and cut at the limit. Every text, small or
maximal, has its numbers drawn at random, so none is in the graph cache or the alignment features' cache.
The maximal clients stop after the small requests are done, once their request in flight is answered.
``--fairness-only`` skips the throughput runs and the CLI comparison; ``--url URL`` measures only the
fairness of a server already running there (another build, say).

``--smoke``: an index of 20 problems of the smoke data (``benchmarks/smoke.py``), 3 requests per
endpoint at 1 and 2 client threads, one CLI run, 3 small requests of each kind beside 4 maximal ones under
limits of 1,000 characters a text and 4,000 a request, in ``WORK/smoke``: seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_startup import MATH_TRAIN, prepare, wall_times  # noqa: E402
from smoke import SMOKE_MATH, smoke_work  # noqa: E402

NUMBER = re.compile(r"\d+")
SMOKE_LIMITS = ["--max-text-chars", "1000", "--max-request-chars", "4000"]


def number_changed(text: str) -> str:
    """``text`` with its first number one higher (or a sentence more, where it has no number)."""
    changed = NUMBER.sub(lambda number: str(int(number[0]) + 1), text, count=1)
    return changed if changed != text else text + " Give the answer."


ENDPOINTS = {  # name -> (path, body of one problem)
    "parse": ("/api/parse", lambda text: {"texts": [text]}),
    "predict kpc": ("/api/predict/kpc", lambda text: {"inputs": [text]}),
    "search k=5": ("/api/search", lambda text: {"queries": [text], "k": 5}),
    "compare": ("/api/compare", lambda text: {"pairs": [{"text_a": text, "text_b": number_changed(text)}]}),
}


def start_server(index: Path, options: list[str] = ()) -> tuple[subprocess.Popen, str]:
    """``mathgraph serve`` (with ``options``) on a free port of 127.0.0.1, and its URL once it answers."""
    process = subprocess.Popen(
        ["mathgraph", "-q", "serve", "--index", str(index), "--port", "0", *options],
        stderr=subprocess.PIPE,
        text=True,
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


def percentiles(latencies: list[float]) -> dict:
    """Count, p50, p95 and max of latencies in seconds, as milliseconds."""
    values = np.array(latencies)
    return {
        "n": len(values),
        "p50_ms": round(1000 * float(np.percentile(values, 50)), 1),
        "p95_ms": round(1000 * float(np.percentile(values, 95)), 1),
        "max_ms": round(1000 * float(values.max()), 1),
    }


class FreshTexts:
    """Texts no server has seen: problems of ``problems`` with their numbers drawn at random."""

    def __init__(self, problems: list[str], seed: int):
        self.problems, self.random, self.next = problems, random.Random(seed), 0
        self.guard = threading.Lock()

    def renumbered(self, text: str) -> str:
        with self.guard:
            return NUMBER.sub(lambda _: str(self.random.randint(2, 999)), text)

    def problem(self) -> str:
        """The next problem, renumbered."""
        with self.guard:
            text, self.next = self.problems[self.next % len(self.problems)], self.next + 1
        return self.renumbered(text)

    def long_text(self, characters: int) -> str:
        """Problems run together up to ``characters``, cut at a space."""
        text = ""
        while len(text) <= characters:
            text += self.problem() + " "
        return cut(text, characters)


def maximal_compare(fresh: FreshTexts, limits: dict, pairs: int | None = None) -> dict:
    """A compare body at the server's budget: ``pairs`` pairs of ``max_text_chars``-character texts (None: as
    many as ``max_request_chars`` and ``max_batch`` allow)."""
    if pairs is None:
        pairs = max(1, min(limits["max_batch"], limits["max_request_chars"] // (2 * limits["max_text_chars"])))
    texts = [fresh.long_text(limits["max_text_chars"]) for _ in range(pairs)]
    return {
        "pairs": [{"text_a": text, "text_b": cut(fresh.renumbered(text), limits["max_text_chars"])} for text in texts]
    }


def cut(text: str, characters: int) -> str:
    """``text`` cut to at most ``characters``, at a space."""
    return text if len(text) <= characters else text[:characters].rsplit(" ", 1)[0]


def small_requests(url: str, fresh: FreshTexts, count: int) -> dict:
    """``count`` small compares and, from a second thread at the same time, ``count`` small KPC predictions,
    each sent after the last was answered: their latencies (seconds)."""

    def run(path: str, body) -> list[float]:
        latencies = []
        with httpx.Client(base_url=url, timeout=600) as client:
            for _ in range(count):
                request = body(fresh.problem())
                start = time.perf_counter()
                client.post(path, json=request).raise_for_status()
                latencies.append(time.perf_counter() - start)
        return latencies

    with ThreadPoolExecutor(max_workers=2) as pool:
        compares = pool.submit(run, "/api/compare", ENDPOINTS["compare"][1])
        predictions = pool.submit(run, "/api/predict/kpc", ENDPOINTS["predict kpc"][1])
        return {"small compare": compares.result(), "small predict kpc": predictions.result()}


def fairness_run(url: str, fresh: FreshTexts, small: int, maximal: int, pairs: int | None = None) -> dict:
    """Small requests on the idle server, then beside ``maximal`` clients sending maximal compares (of
    ``pairs`` pairs; None: as many as the server's budget allows)."""
    limits = httpx.get(url + "/api/health", timeout=60).json()["limits"]
    example = maximal_compare(fresh, limits, pairs)
    result = {
        "limits": limits,
        "maximal_request": {"pairs": len(example["pairs"]), "characters": sum(map(len, _texts(example)))},
        "runs": [],
    }
    for name, latencies in small_requests(url, fresh, small).items():
        result["runs"].append({"requests": name, "while": "idle", **percentiles(latencies)})
    stop, durations, running = threading.Event(), [], threading.Semaphore(0)

    def maximal_client() -> None:
        with httpx.Client(base_url=url, timeout=1800) as client:
            while not stop.is_set():
                body = maximal_compare(fresh, limits, pairs)
                running.release()
                start = time.perf_counter()
                client.post("/api/compare", json=body).raise_for_status()
                durations.append(time.perf_counter() - start)

    with ThreadPoolExecutor(max_workers=maximal) as pool:
        clients = [pool.submit(maximal_client) for _ in range(maximal)]
        for _ in range(maximal):
            running.acquire()  # every maximal client has sent its request
        time.sleep(2.0)  # their work is under way (parsing, the first turns of the model)
        started = time.perf_counter()
        loaded = small_requests(url, fresh, small)
        result["small_s"] = round(time.perf_counter() - started, 1)
        stop.set()
        for client in clients:
            client.result()
    for name, latencies in loaded.items():
        result["runs"].append({"requests": name, "while": f"{maximal} maximal compares", **percentiles(latencies)})
    for run in result["runs"]:
        print(json.dumps(run), file=sys.stderr, flush=True)
    result["maximal_s"] = [round(d, 1) for d in sorted(durations)]
    return result


def _texts(body: dict) -> list[str]:
    return [text for pair in body["pairs"] for text in (pair["text_a"], pair["text_b"])]


def print_fairness(fairness: dict) -> None:
    """The fairness table (milliseconds) and the maximal requests' times."""
    maximal, limits = fairness["maximal_request"], fairness["limits"]
    print(
        f"\nsmall requests beside maximal compares ({maximal['pairs']} pairs, {maximal['characters']} characters: "
        f"max_text_chars {limits['max_text_chars']}, max_request_chars {limits.get('max_request_chars')}); the small "
        f"requests took {fairness['small_s']} s under load\n"
    )
    print("| requests | while | n | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|---|")
    for run in fairness["runs"]:
        print(
            f"| {run['requests']} | {run['while']} | {run['n']} | {run['p50_ms']} | {run['p95_ms']} | {run['max_ms']} |"
        )
    times = fairness["maximal_s"]
    print(f"\nmaximal compares answered: {len(times)}, in {', '.join(map(str, times))} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="where cli_startup.py keeps its index")
    parser.add_argument("--rows", type=int, default=1000, help="MATH train problems in the index")
    parser.add_argument("--requests", type=int, default=100, help="requests per endpoint and concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--repeats", type=int, default=3, help="CLI search runs")
    parser.add_argument("--small", type=int, default=40, help="small requests of each kind, idle and under load")
    parser.add_argument("--maximal", type=int, default=4, help="client threads sending maximal compares")
    parser.add_argument("--maximal-pairs", type=int, help="pairs in a maximal compare (default: the budget's)")
    parser.add_argument("--fairness-only", action="store_true", help="no throughput runs, no CLI comparison")
    parser.add_argument("--url", help="measure the fairness of this running server instead (implies --fairness-only)")
    parser.add_argument("--output", type=Path, help="the results as JSON")
    parser.add_argument("--smoke", action="store_true", help="20 problems, 3 requests a run: seconds (WORK/smoke)")
    args = parser.parse_args()
    if args.url:
        fresh = FreshTexts([json.loads(line)["problem"] for line in MATH_TRAIN.read_text().splitlines()], seed=39)
        fairness = fairness_run(args.url.rstrip("/"), fresh, args.small, args.maximal, args.maximal_pairs)
        if args.output:
            args.output.write_text(json.dumps({"fairness": fairness}, indent=1) + "\n", encoding="utf-8")
        print_fairness(fairness)
        return
    data, queries, options = MATH_TRAIN, 100, []  # cli_startup's query file: the rows after the index's
    if args.smoke:
        args.work, args.rows, args.requests, args.concurrency, args.repeats = smoke_work(args.work), 20, 3, [1, 2], 1
        data, queries, args.small, options = SMOKE_MATH, 3, 3, SMOKE_LIMITS

    index, _, query = prepare(args.work, args.rows, queries, data)
    all_problems = [json.loads(line)["problem"] for line in data.read_text(encoding="utf-8").splitlines()]
    needed = (args.requests * len(args.concurrency) + 5) * len(ENDPOINTS)  # with the warm-up's
    problems = iter(all_problems[args.rows + queries : args.rows + queries + needed])
    results = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python "
        f"{sys.version.split()[0]}",
        "index_rows": args.rows,
        "runs": [],
    }
    with tempfile.TemporaryDirectory() as cache_dir:
        os.environ["MATHGRAPH_CACHE_DIR"] = cache_dir  # the server's and the CLI's, empty at first
        started = time.perf_counter()
        process, url = start_server(index, options)
        results["server_start_s"] = round(time.perf_counter() - started, 2)
        try:
            for _ in range(5):  # warm-up: first calls pay lazy imports and allocator growth
                for path, body in ENDPOINTS.values():
                    httpx.post(url + path, json=body(next(problems)), timeout=300).raise_for_status()
            if not args.fairness_only:
                for name, (path, body) in ENDPOINTS.items():
                    for concurrency in args.concurrency:
                        bodies = [body(next(problems)) for _ in range(args.requests)]
                        run = {"endpoint": name, **load_run(url, path, bodies, concurrency)}
                        results["runs"].append(run)
                        print(json.dumps(run), file=sys.stderr, flush=True)
                single = [load_run(url, "/api/search", [{"queries": [query], "k": 5}], 1)["p50_ms"] for _ in range(5)]
            fresh = FreshTexts(all_problems, seed=39)
            results["fairness"] = fairness_run(url, fresh, args.small, args.maximal, args.maximal_pairs)
        finally:
            process.terminate()
            process.wait(timeout=60)
        if not args.fairness_only:
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
        f"{results['machine']}; index of {args.rows} MATH train problems"
    )
    if not args.fairness_only:
        print_throughput(results, args.repeats)
    print_fairness(results["fairness"])


def print_throughput(results: dict, repeats: int) -> None:
    """The table of each endpoint at each client concurrency, and one search query against the CLI's."""
    print(
        "\n| endpoint | client threads | requests | req/s | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|---|---|"
    )
    for run in results["runs"]:
        print(
            f"| {run['endpoint']} | {run['concurrency']} | {run['requests']} | {run['requests_per_s']} | "
            f"{run['p50_ms']} | {run['p95_ms']} | {run['max_ms']} |"
        )
    one = results["one_query"]
    print(
        f"\none search query: server {one['server_ms_median_of_5']} ms (median of 5 requests) against "
        f"`mathgraph search` {one['cli_s_median']} s (whole process, median of {repeats}: "
        f"{', '.join(map(str, one['cli_s_runs']))})"
    )


if __name__ == "__main__":
    main()
