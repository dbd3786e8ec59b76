"""What a change of the quantity reader changes on ordinary problems: the readings of the working tree against
those of an earlier commit, on problems drawn at random from GSM8K, MATH and GSM-Plus.

A rule written for one outside sentence can misread many corpus problems; the held-out parts cannot show that,
this can. Each problem is parsed by both versions (the earlier one from ``git archive REV``, imported in its
own process so that nothing of the working tree leaks into it) and every problem whose quantities differ is
printed with what it lost and what it gained, to be read one by one.

Usage::

    python benchmarks/quantity_drift.py --against HEAD [--problems 2500] [--seed 7]
    python benchmarks/quantity_drift.py --smoke      # 12 problems of benchmarks/data/smoke, against HEAD
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

from smoke import SMOKE_DATA

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
# the folders that install as mathgraph and its subpackages (pyproject.toml's package-dir)
SUBPACKAGES = ("parsers", "models", "tasks")

# Run in a fresh interpreter: read problems from a JSON file, write their quantities (text, value) as JSON.
READER = """
import json, sys
from mathgraph.parsers import PARSER_VERSION
from mathgraph.parsers.problem import parse_problem

texts = json.load(open(sys.argv[1], encoding="utf-8"))
readings = []
for text in texts:
    try:
        readings.append([[q.text, str(q.value)] for q in parse_problem(text).quantities()])
    except Exception as error:  # a version that fails on a problem: shown as a change, not a crash of the run
        readings.append([["error", repr(error)]])
json.dump({"parser_version": PARSER_VERSION, "readings": readings}, open(sys.argv[2], "w", encoding="utf-8"))
"""


def main() -> None:
    """Draw the problems, read them with both versions and print every problem read differently."""
    args = _arguments()
    data = SMOKE_DATA if args.smoke else Path(args.data)
    problems = args.problems if not args.smoke else 12
    texts = draw_problems(data, problems, args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="quantity-drift-") as tmp:
        earlier = read_quantities(texts, export_revision(args.against, Path(tmp) / "earlier"), Path(tmp))
        now = read_quantities(texts, None, Path(tmp))
    changed = [(text, old, new) for text, old, new in zip(texts, earlier["readings"], now["readings"]) if old != new]
    print(
        f"## Quantity readings, working tree (parser version {now['parser_version']}) against {args.against} "
        f"(parser version {earlier['parser_version']}): {len(texts)} problems drawn with seed {args.seed}"
    )
    print()
    print("| problems | read the same | read differently | seconds |")
    print("|---:|---:|---:|---:|")
    print(f"| {len(texts)} | {len(texts) - len(changed)} | {len(changed)} | {time.perf_counter() - started:.1f} |")
    for text, old, new in changed:
        lost = [pair for pair in old if pair not in new]
        gained = [pair for pair in new if pair not in old]
        print(f"\n- lost {lost}, gained {gained}: {text[:300]!r}")


def draw_problems(data: Path, count: int, seed: int) -> list[str]:
    """``count`` problems drawn with ``random.Random(seed)`` from GSM8K train questions, MATH train problems and
    GSM-Plus variants together (all of them when there are fewer)."""
    texts = [row["question"] for row in _rows(data / "gsm8k" / "train.jsonl")]
    texts += [row["problem"] for row in _rows(data / "math" / "train.jsonl")]
    texts += [row["question"] for row in _rows(data / "gsmplus" / "variants.jsonl")]
    return [texts[k] for k in random.Random(seed).sample(range(len(texts)), min(count, len(texts)))]


def export_revision(revision: str, target: Path) -> Path:
    """The packages of ``revision`` laid out as installed (``mathgraph/parsers`` and so on) under ``target``,
    without the packaged data; returns the folder to put on ``PYTHONPATH``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "mathgraph", *SUBPACKAGES, ":(exclude)mathgraph/data"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        sys.exit(f"error: git archive {revision}: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(target, filter="data")
    for name in SUBPACKAGES:
        (target / name).rename(target / "mathgraph" / name)
    return target


def read_quantities(texts: list[str], path: Path | None, tmp: Path) -> dict:
    """The quantities of each text read by the version at ``path`` (None: the installed working tree)."""
    name = "earlier" if path is not None else "now"
    problems, readings = tmp / f"{name}-problems.json", tmp / f"{name}-readings.json"
    problems.write_text(json.dumps(texts), encoding="utf-8")
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    run = subprocess.run(
        [sys.executable, "-c", READER, str(problems), str(readings)], cwd=tmp, env=env, capture_output=True, text=True
    )
    if run.returncode != 0:
        sys.exit(f"error: the {name} reader failed:\n{run.stderr[-2000:]}")
    return json.loads(readings.read_text(encoding="utf-8"))


def _rows(path: Path) -> list[dict]:
    if not path.exists():
        sys.exit(f"error: no such data file: {path} (--data names the folder of gsm8k/, math/, gsmplus/)")
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="HEAD", help="the earlier commit (default: HEAD)")
    parser.add_argument("--problems", type=int, default=2500, help="problems drawn (default 2500)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", default=str(DATA), help="the shared data (gsm8k/, math/, gsmplus/)")
    parser.add_argument("--smoke", action="store_true", help="12 problems of benchmarks/data/smoke")
    return parser.parse_args()


if __name__ == "__main__":
    main()
