"""Wall time of whole `mathgraph` processes: start-up, and one query against many.

    python benchmarks/cli_startup.py --work /tmp/cli_bench [--repeats 3] [--rows 1000] [--queries 100]
                                     [--baseline DIR] [--smoke] [--startup]

Times fresh processes (median of ``--repeats``, the runs of each command interleaved so
that drift on a noisy machine hits them alike): ``mathgraph --help``, ``mathgraph parse
TEXT``, ``mathgraph predict kpc TEXT`` (the shipped model), a bad input (``predict`` with a
model directory that does not exist: how fast the error comes), and ``mathgraph search``
against an index of the first ``--rows`` MATH train problems built with the shipped encoder,
for one query and for ``--queries`` queries from a JSONL file (the next rows). The target is
the many-query run in under twice the one-query time. The index and the query file are built
in ``--work`` once and reused; parsing goes through the graph cache (``MATHGRAPH_CACHE_DIR`` as
set, else ``WORK/cache``). ``--baseline DIR``: also time every command with the code of DIR
(another commit's files, e.g. ``git archive HEAD~3 | tar -x -C DIR``, put first on
``PYTHONPATH``), run by run alternately with this tree's, for a before/after table under the
same load. ``--smoke``: an index of 20 problems of the smoke data (``benchmarks/smoke.py``),
3 queries, one run of each command, in ``WORK/smoke``: seconds. ``--startup``: only the start-up
yardstick of start-up time, no index: ``python -c "import torch"`` against ``mathgraph predict kpc
TEXT`` with the text's graph cached (every run after the first) and with an empty graph cache
(spaCy loaded and the text parsed), interleaved, and the ratio of the medians (target: at most 3x).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mathgraph.tasks.search.index import MANIFEST_FILE

from smoke import SMOKE_MATH, smoke_work

MATH_TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "math" / "train.jsonl"
PARSE_TEXT = "Find $x$ if $2x+3=7$."


def prepare(work: Path, rows: int, queries: int, data: Path = MATH_TRAIN) -> tuple[Path, Path, str]:
    """The index directory, the query file and the single query (built when missing) from MATH train
    problems in ``data``."""
    work.mkdir(parents=True, exist_ok=True)
    lines = data.read_text(encoding="utf-8").splitlines()[: rows + queries]
    corpus, query_file, index = work / f"math{rows}.jsonl", work / f"queries{queries}.jsonl", work / f"index{rows}"
    corpus.write_text("\n".join(lines[:rows]) + "\n", encoding="utf-8")
    query_file.write_text("\n".join(lines[rows:]) + "\n", encoding="utf-8")
    if not (index / MANIFEST_FILE).is_file():
        subprocess.run(
            [
                "mathgraph",
                "-q",
                "index",
                "build",
                "--input",
                str(corpus),
                "--text-field",
                "problem",
                "--output",
                str(index),
            ],
            check=True,
        )
    return index, query_file, json.loads(lines[rows])["problem"]


def wall_times(
    commands: dict[str, list[str]],
    repeats: int,
    codes: dict[str, dict[str, str]],
    failing: frozenset[str] = frozenset(),
) -> dict[str, dict[str, list[float]]]:
    """Seconds per run of each command under each code (``{code: environment}``), the commands and codes
    interleaved run by run: ``{code: {command: [seconds, ...]}}``. The ``failing`` commands must exit non-zero."""
    times: dict[str, dict[str, list[float]]] = {code: {name: [] for name in commands} for code in codes}
    for _ in range(repeats):
        for name, command in commands.items():
            for code, env in codes.items():
                start = time.perf_counter()
                run = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
                times[code][name].append(time.perf_counter() - start)
                if bool(run.returncode) != (name in failing):
                    raise SystemExit(f"{name} ({code}) exited with {run.returncode}:\n{run.stderr}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="where the index and query file are kept")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1000, help="MATH train problems in the index")
    parser.add_argument("--queries", type=int, default=100, help="queries in the many-query run")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="also time each command with the code in DIR (another commit's files), alternating with this tree's",
    )
    parser.add_argument("--smoke", action="store_true", help="20 problems, 3 queries, one run: seconds (WORK/smoke)")
    parser.add_argument(
        "--startup", action="store_true", help="only `import torch` against `predict kpc TEXT`, no index"
    )
    args = parser.parse_args()
    if args.startup:
        return startup(args)
    data = MATH_TRAIN
    if args.smoke:
        args.work, args.rows, args.queries, args.repeats, data = smoke_work(args.work), 20, 3, 1, SMOKE_MATH
    os.environ.setdefault("MATHGRAPH_CACHE_DIR", str(args.work / "cache"))
    index, query_file, query = prepare(args.work, args.rows, args.queries, data)
    search = ["mathgraph", "-q", "search", "--index", str(index), "-k", "5"]
    missing_model = ["mathgraph", "-q", "predict", "kpc", "--model", str(args.work / "no-such-model"), PARSE_TEXT]
    commands = {
        "mathgraph --help": ["mathgraph", "--help"],
        "mathgraph parse TEXT": ["mathgraph", "-q", "parse", PARSE_TEXT],
        "mathgraph predict kpc TEXT": ["mathgraph", "-q", "predict", "kpc", PARSE_TEXT],
        "mathgraph predict kpc --model MISSING (error)": missing_model,
        "mathgraph search, 1 query": [*search, query],
        f"mathgraph search, {args.queries} queries (--queries)": [
            *search,
            "--queries",
            str(query_file),
            "--output",
            str(args.work / "hits.jsonl"),
        ],
    }
    codes = {"this tree": dict(os.environ)}
    if args.baseline is not None:
        path = os.pathsep.join(filter(None, [str(args.baseline.resolve()), os.environ.get("PYTHONPATH")]))
        codes["baseline"] = {**os.environ, "PYTHONPATH": path}
    times = wall_times(
        commands, args.repeats, codes, failing=frozenset({"mathgraph predict kpc --model MISSING (error)"})
    )
    print(
        "| command | "
        + " | ".join(f"{code}: median s ({args.repeats} runs) | {code}: runs" for code in codes)
        + " |\n|---|"
        + "---|---|" * len(codes)
    )
    for name in commands:
        cells = [
            f"{statistics.median(times[code][name]):.2f} | {', '.join(f'{s:.2f}' for s in times[code][name])}"
            for code in codes
        ]
        print(f"| {name} | {' | '.join(cells)} |")
    one, many = (statistics.median(times["this tree"][name]) for name in list(commands)[-2:])
    print(
        f"\n{args.queries} queries / 1 query: {many / one:.2f}x (target < 2x); index of {args.rows} problems; "
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    )


def startup(args: argparse.Namespace) -> None:
    """``--startup``: the whole-process time of ``predict kpc TEXT`` against ``python -c "import torch"``."""
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MATHGRAPH_CACHE_DIR", str(args.work / "cache"))
    predict = ["mathgraph", "-q", "predict", "kpc", PARSE_TEXT]
    subprocess.run(predict, check=True, stdout=subprocess.DEVNULL)  # the text's graph in the cache
    empty_cache = 'MATHGRAPH_CACHE_DIR="$(mktemp -d)" exec "$@"'
    commands = {
        'python -c "import torch"': [sys.executable, "-c", "import torch"],
        "mathgraph predict kpc TEXT (graph cached)": predict,
        "mathgraph predict kpc TEXT (graph cache empty)": ["sh", "-c", empty_cache, "sh", *predict],
    }
    codes = {"this tree": dict(os.environ)}
    if args.baseline is not None:
        path = os.pathsep.join(filter(None, [str(args.baseline.resolve()), os.environ.get("PYTHONPATH")]))
        codes["baseline"] = {**os.environ, "PYTHONPATH": path}
    times = wall_times(commands, args.repeats, codes)
    print(
        "| command | "
        + " | ".join(f"{code}: median s ({args.repeats} runs) | {code}: runs" for code in codes)
        + " |\n|---|"
        + "---|---|" * len(codes)
    )
    for name in commands:
        cells = [
            f"{statistics.median(times[code][name]):.2f} | {', '.join(f'{s:.2f}' for s in times[code][name])}"
            for code in codes
        ]
        print(f"| {name} | {' | '.join(cells)} |")
    torch_s = statistics.median(times["this tree"]['python -c "import torch"'])
    for code in codes:
        ratios = ", ".join(
            f"{name.split('(')[1].rstrip(')')} {statistics.median(times[code][name]) / torch_s:.2f}x"
            for name in list(commands)[1:]
        )
        print(f"\n{code}: predict kpc TEXT / import torch: {ratios} (target <= 3x)", end="")
    print(f"\npython {sys.version.split()[0]}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
