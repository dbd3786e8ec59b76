"""Question banks at scale: batch-job throughput here and on Ray, peak memory against input size, and
the output of a killed and resumed job against an uninterrupted one.

    python benchmarks/scale.py --work DIR [--rows 5000] [--model-rows 200] [--rss-rows 10000,50000,100000]
                               [--sections throughput,rss,resume] [--data ../shared/data/math/train.jsonl]
    python benchmarks/scale.py --work DIR --part encode --device cuda --rows 20000 [--graphs GRAPHS] [--model shipped]
    python benchmarks/scale.py --work DIR --smoke

Prints markdown tables (nothing here asserts a speed):

1. **Throughput** of ``parse``, ``encode`` and ``index build`` as batch jobs (``mathgraph.batch_jobs``) on the
   same problems, the first ``--rows`` MATH train problems (``encode`` and ``index build`` on the first
   ``--model-rows`` of them: a CPU encodes some 10-40 problems a second), with the local engine (this process,
   one torch thread) and on a local Ray (``ray.init(num_cpus=2)``) with 1 and 2 workers; problems per second,
   and each engine's rate over the local one. ``parse``: spaCy, no graph cache. ``encode``: the shipped COMUS
   encoder from the texts, parsing included, into an empty graph cache (Ray: parse tasks beside the encoder
   actors; 2 workers are 2 actors of half a CPU, so that one CPU is left to parsing). ``index build``: the
   vectors the shipped package searches with (its first stage, the packaged MiniLM, ``text:minilm``) as vector
   shards, then a faiss inner-product index over them. Times include loading the models and, on Ray, starting
   the workers and their imports (Ray itself is started before, afresh for each Ray engine).
2. **Peak RSS** of ``mathgraph encode`` and ``mathgraph predict kpc`` (child processes; ``ru_maxrss``) on banks of
   ``--rss-rows`` rows, with a directory output (shards of 10,000), a tiny COMUS model and a tiny KPC model
   (the memory of the pipeline is the question, not the model's), one torch thread, batches of 128. The rows
   repeat the 1,000 shortest MATH train problems (their graphs are parsed once, into the graph cache, by a
   first run on them), so a run costs the model and not spaCy.
3. **Resume**: a ``parse`` job and an ``encode`` job (tiny model) killed with SIGKILL after two shards, run
   again with ``--resume``, and compared file by file (shards and manifest) with an uninterrupted run.

``--part encode --device cuda``: only the encode throughput, with the local engine (and Ray, if installed and
``--engines`` names it), on ``--rows`` problems; with ``--graphs`` (a graph file or directory from ``mathgraph
parse``, or a graph cache, ``graphs.sqlite``) it encodes those graphs, repeated up to ``--rows``, and needs no
spaCy: the figure of a GPU machine where the graphs were parsed elsewhere.

``--smoke``: the smoke data (``benchmarks/smoke.py``), tiny models throughout, a few dozen rows, the local engine
only (starting a Ray and its workers was half of a smoke run, and tests/mathgraph/test_ray_engine.py runs every
part on Ray); ``--smoke --engines local,ray1`` adds Ray with one worker on the encode part only (parse tasks
beside an actor: the part that uses Ray most); peak RSS of one bank size (40 rows) without the first run that
parses the distinct rows (its rows are parsed in the measured run). About a minute, most of it starting
processes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from itertools import cycle, islice
from pathlib import Path
from typing import ClassVar

from mathgraph.bank_files import BankReader
from mathgraph.batch_jobs import FieldInput, Job, finished_files, read_manifest, run_job
from mathgraph.job_outputs import GraphShards, VectorShards

from smoke import SMOKE_MATH, smoke_work, tiny_encoder, tiny_text_encoder

REPO = Path(__file__).resolve().parents[1]
MATH = REPO.parent / "shared" / "data" / "math" / "train.jsonl"
SUBJECTS = [
    "Algebra",
    "Counting & Probability",
    "Geometry",
    "Intermediate Algebra",
    "Number Theory",
    "Prealgebra",
    "Precalculus",
]


def main() -> None:
    args = _arguments()
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    problems = [json.loads(line)["problem"] for line in open(args.data, encoding="utf-8")]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f}; Python {platform.python_version()}")
    print(f"data: {args.data}")
    if args.part == "encode":
        _print_throughput(throughput(args, work, problems, parts=("encode",)))
        return
    if "throughput" in args.sections:
        _print_throughput(throughput(args, work, problems, parts=("parse", "encode", "index build")))
        print(f"\npure-Python loop on 2 processes at this moment: {_loop_speedup():.2f}x (1 process: 1.00x)")
    if "rss" in args.sections:
        print_peak_rss(peak_rss(args, work, problems))
    if "resume" in args.sections:
        print_resume(resume(args, work, problems))


# --------------------------------------------------------------------------- throughput
@dataclass
class EmbedStage:
    """The vectors an index searches with: a search embedder (``tasks.search.embedders.load_embedder``) on the
    texts, as ``mathgraph index build`` embeds them; no parsing."""

    kind: ClassVar[str] = "model"
    model: str
    batch_size: int = 32
    threads: int = 1
    _loaded: dict = field(default_factory=dict, repr=False)

    def load(self) -> None:
        if not self._loaded:
            import torch

            from mathgraph.tasks.search.embedders import load_embedder

            torch.set_num_threads(self.threads)
            self._loaded["embedder"] = load_embedder(self.model, device="cpu")

    def __call__(self, items: list[dict]) -> list[dict]:
        self.load()
        vectors = self._loaded["embedder"].encode([item["input"] for item in items], batch_size=self.batch_size)
        for item, vector in zip(items, vectors):
            item["vector"] = vector
        return items

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_loaded": {}}


def throughput(args, work: Path, problems: list[str], parts: tuple[str, ...]) -> list[dict]:
    """Problems per second of each part on each engine (see the module docstring). Each Ray engine gets a Ray of
    its own, started before its runs and stopped after them, so that no run finds workers another one started."""
    engines = [engine for engine in args.engines.split(",") if engine]
    if any(engine.startswith("ray") for engine in engines):
        from mathgraph.tasks.jobs.ray_engine import ray_available

        if not ray_available():
            print('(Ray is not installed: pip install "mathgraph[ray]"; its rows are left out)')
            engines = [engine for engine in engines if not engine.startswith("ray")]
    banks = {}
    for part in parts:
        count = args.rows if part == "parse" or args.part else min(args.rows, args.model_rows)
        banks[part] = _bank(work, part, problems, count, args.graphs)
    rows = []
    for engine in engines:
        if engine.startswith("ray"):
            import ray

            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            for part in parts:
                if engine.startswith("ray") and args.smoke and part != "encode":
                    continue  # a smoke run tries Ray on the part that uses it most (parse tasks and actors)
                output = work / f"throughput-{part.replace(' ', '-')}-{engine}"
                _remove(output)
                job = _job(args, part, *banks[part], output, engine, work)
                start = time.perf_counter()
                result = _run(job, engine, args)
                if part == "index build":
                    _faiss_index(output)
                seconds = time.perf_counter() - start
                rows.append({"part": part, "engine": engine, "problems": result.rows, "seconds": seconds})
        finally:
            if engine.startswith("ray"):
                ray.shutdown()
    order = {part: i for i, part in enumerate(parts)}
    return sorted(rows, key=lambda row: order[row["part"]])


def _bank(work: Path, part: str, problems: list[str], count: int, graphs: str | None) -> tuple[Path, Path | None]:
    """The bank of a part: the first ``count`` problems as JSONL (and, for encode with ``--graphs``, their
    graphs repeated up to ``count`` as a graph file)."""
    bank = work / f"bank-{count}.jsonl"
    with open(bank, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": i, "problem": p}) + "\n" for i, p in enumerate(problems[:count]))
    if part != "encode" or graphs is None:
        return bank, None
    lines = _graph_lines(Path(graphs))
    graph_file = work / f"graphs-{count}.jsonl"
    with open(graph_file, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in islice(cycle(lines), count))
    return bank, graph_file


def _graph_lines(path: Path) -> list[str]:
    """Graphs as JSON lines from a graph file, a parse output directory, or a graph cache (SQLite)."""
    if path.suffix == ".sqlite":
        with sqlite3.connect(path) as db:
            return [row[0] for row in db.execute("SELECT graph FROM graphs ORDER BY rowid")]
    from mathgraph.cli.encode import graph_reader

    reader = graph_reader(str(path))
    return [json.dumps(record.row, ensure_ascii=False) for record in reader.records()]


def _job(args, part: str, bank: Path, graphs: Path | None, output: Path, engine: str, work: Path) -> Job:
    from mathgraph.tasks.jobs.stages import EncodeStage, GraphInput, ParseStage

    common = {"output": output, "shard_size": args.shard_size, "chunk_rows": args.chunk_rows}
    reader = BankReader.open(bank, fields=("problem",))
    if part == "parse":
        stage = ParseStage(parser="spacy", batch_size=64)
        return Job("parse", reader, FieldInput("problem"), GraphShards(), stages=[stage], **common)
    if part == "index build":
        stage = EmbedStage(model=args.index_model, batch_size=args.batch_size)
        return Job("index build", reader, FieldInput("problem"), VectorShards(), stages=[stage], **common)
    encode = EncodeStage(model=args.model, batch_size=args.batch_size, device=args.device, threads=1)
    if graphs is not None:
        reader = BankReader.open(graphs, keep=None)
        return Job("encode", reader, GraphInput(), VectorShards(), stages=[encode], line_field="line", **common)
    cache = work / f"graph-cache-{engine}.sqlite"  # empty for each run: encode's time includes parsing
    _remove(cache)
    parse = ParseStage(parser="spacy", cache=str(cache))
    return Job("encode", reader, FieldInput("problem"), VectorShards(), stages=[parse, encode], **common)


def _run(job: Job, engine: str, args):
    if engine == "local":
        return run_job(job)
    from mathgraph.tasks.jobs.ray_engine import run_job_on_ray

    workers = int(engine.removeprefix("ray"))
    parsing = any(stage.kind == "cpu" for stage in job.stages) and any(s.kind == "model" for s in job.stages)
    # on 2 CPUs: a job that parses keeps one for the parse tasks, so its actors share the other
    cpus = (1.0 / workers) if parsing else 1.0
    return run_job_on_ray(job, workers=workers, cpus_per_worker=cpus, gpus_per_worker=0 if args.device != "cuda" else 1)


def _faiss_index(directory: Path):
    """A faiss inner-product index over a job's vector shards (L2-normalised, as the search index keeps them)."""
    import faiss
    import numpy as np

    index = None
    for files in finished_files(directory, "vectors"):
        vectors = np.ascontiguousarray(np.load(files[0]), dtype=np.float32)
        if not len(vectors):
            continue
        faiss.normalize_L2(vectors)
        index = index or faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
    return index


def _busy_loop(n: int) -> int:
    return sum(i * i for i in range(n))


def _loop_speedup(processes: int = 2, tasks: int = 8, n: int = 2_000_000) -> float:
    """How much faster ``tasks`` busy loops finish on ``processes`` processes than in one: whether the machine
    had a second core free for the 2-worker rows (on a shared machine it often has not)."""
    import multiprocessing

    start = time.perf_counter()
    for _ in range(tasks):
        _busy_loop(n)
    serial = time.perf_counter() - start
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        start = time.perf_counter()
        pool.map(_busy_loop, [n] * tasks)
        return serial / (time.perf_counter() - start)


def _print_throughput(rows: list[dict]) -> None:
    print("\n## Throughput\n")
    print("| part | engine | problems | seconds | problems/s | vs local |")
    print("|---|---|---:|---:|---:|---:|")
    names = {"local": "local, 1 process", "ray1": "ray, 1 worker", "ray2": "ray, 2 workers"}
    local = {row["part"]: row["problems"] / row["seconds"] for row in rows if row["engine"] == "local"}
    for row in rows:
        rate = row["problems"] / row["seconds"]
        ratio = f"{rate / local[row['part']]:.2f}x" if row["part"] in local else "-"
        engine = names.get(row["engine"], row["engine"])
        print(f"| {row['part']} | {engine} | {row['problems']} | {row['seconds']:.1f} | {rate:.1f} | {ratio} |")


# --------------------------------------------------------------------------- peak RSS
# A mathgraph command that writes its peak RSS (VmHWM) on exit. The child reports it itself: the ru_maxrss that
# wait4 gives a child forked from this process starts at this process's own peak (Linux keeps it across fork and
# exec), and this one holds the models of the throughput runs.
PEAK_RSS_CHILD = """
import atexit, os, sys

def report():
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["PEAK_RSS_REPORT"], "w") as f:
        f.write(peak)

atexit.register(report)
from mathgraph.cli import main
sys.exit(main(sys.argv[1:]))
"""


def peak_rss(args, work: Path, problems: list[str]) -> list[dict]:
    """Peak RSS of ``mathgraph encode`` and ``mathgraph predict kpc`` child processes by input size."""
    encoder, classifier = _tiny_models(work)
    shortest = sorted(dict.fromkeys(problems), key=len)[: args.rss_distinct]
    env = {**os.environ, "MATHGRAPH_CACHE_DIR": str(work / "rss-graph-cache"), "TQDM_DISABLE": "1"}
    warm_up = not args.smoke  # a first run on the distinct rows, so that the runs measured find their graphs cached
    sizes = ([len(shortest)] if warm_up else []) + [int(n) for n in args.rss_rows.split(",")]
    rows = []
    for n in sizes:
        bank = work / f"rss-{n}.jsonl"
        with open(bank, "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"id": i, "problem": p}) + "\n" for i, p in enumerate(islice(cycle(shortest), n)))
        for command, model in (("encode", encoder), ("predict kpc", classifier)):
            output = work / f"rss-{command.replace(' ', '-')}-{n}"
            _remove(output)
            argv = ["-q", *command.split(), "--input", str(bank), "--output", str(output), "--model", model]
            argv += ["--threads", "1", "--batch-size", "128"]
            report = work / "peak-rss.txt"
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", PEAK_RSS_CHILD, *argv],
                env={**env, "PEAK_RSS_REPORT": str(report)},
                capture_output=True,
                text=True,
            )
            seconds = time.perf_counter() - start
            if done.returncode != 0:
                raise RuntimeError(f"mathgraph {' '.join(argv)} failed: {done.stderr[-2000:]}")
            rows.append(
                {
                    "command": command,
                    "rows": n,
                    "input_mb": bank.stat().st_size / 1e6,
                    "peak_rss_mb": int(report.read_text()) / 1024,  # VmHWM is in kB
                    "seconds": seconds,
                    "warm_up": warm_up and n == sizes[0],
                }
            )
    return rows


def _tiny_models(work: Path) -> tuple[str, str]:
    """A tiny COMUS encoder (``smoke.tiny_encoder``) and a tiny untrained KPC model on it, saved in ``work``."""
    encoder = tiny_encoder(work)
    classifier = work / "tiny-kpc"
    if not (classifier / "config.json").exists():
        from mathgraph.models.encoder import MathEncoder
        from mathgraph.models.task_model import TaskConfig, TaskModel

        TaskModel(
            MathEncoder.from_pretrained(encoder, device="cpu"), TaskConfig("kpc", labels=SUBJECTS)
        ).save_pretrained(classifier)
    return encoder, str(classifier)


def print_peak_rss(rows: list[dict]) -> None:
    print("\n## Peak RSS against input size\n")
    print("| command | rows | input MB | peak RSS MB | seconds | rows/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        note = " (first run: parses the distinct rows)" if row["warm_up"] else ""
        print(
            f"| {row['command']} | {row['rows']}{note} | {row['input_mb']:.1f} | {row['peak_rss_mb']:.0f} | "
            f"{row['seconds']:.1f} | {row['rows'] / row['seconds']:.0f} |"
        )


# --------------------------------------------------------------------------- resume
KILLED_RUN = """
import os, signal, sys
from mathgraph.job_outputs import {writer}
from mathgraph.cli import main

write, written = {writer}.write, []

def write_then_die(self, directory, index, items):
    files = write(self, directory, index, items)
    written.append(index)
    if len(written) == {after}:
        os.kill(os.getpid(), signal.SIGKILL)
    return files

{writer}.write = write_then_die
sys.exit(main({argv!r}))
"""


def resume(args, work: Path, problems: list[str]) -> list[dict]:
    """Kill a job after two shards, resume it, and compare its files with an uninterrupted run's."""
    encoder, _ = _tiny_models(work)
    bank = work / f"resume-{args.resume_rows}.jsonl"
    with open(bank, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": i, "problem": p}) + "\n" for i, p in enumerate(problems[: args.resume_rows]))
    os.environ["MATHGRAPH_CACHE_DIR"] = str(work / "resume-graph-cache")  # these runs' graphs, apart
    shard = str(max(1, args.resume_rows // 6))
    commands = {
        "parse": (["parse", "--parser", "spacy"], "GraphShards"),
        "encode": (["encode", "--model", encoder, "--threads", "1"], "VectorShards"),
    }
    rows = []
    for name, (command, writer) in commands.items():
        whole, resumed = work / f"resume-{name}-whole", work / f"resume-{name}-resumed"
        _remove(whole)
        _remove(resumed)
        argv = ["-q", *command, "--input", str(bank), "--shard-size", shard]
        _mathgraph([*argv, "--output", str(whole)])
        script = KILLED_RUN.format(writer=writer, after=2, argv=[*argv, "--output", str(resumed)])
        killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        if killed.returncode != -signal.SIGKILL:
            raise RuntimeError(f"the killed run ended otherwise ({killed.returncode}): {killed.stderr[-2000:]}")
        done_before = sum(entry["done"] for entry in read_manifest(resumed)["shards"])
        start = time.perf_counter()
        _mathgraph([*argv, "--output", str(resumed), "--resume"])
        seconds = time.perf_counter() - start
        names = sorted(p.name for p in whole.iterdir())
        same = names == sorted(p.name for p in resumed.iterdir()) and all(
            (whole / n).read_bytes() == (resumed / n).read_bytes() for n in names
        )
        rows.append(
            {
                "job": name,
                "shards": len(read_manifest(whole)["shards"]),
                "done_before": done_before,
                "seconds": seconds,
                "files": len(names),
                "same": same,
            }
        )
    return rows


def _mathgraph(argv: list[str]) -> None:
    """A mathgraph command in this process (the killed run is the one that needs a process of its own)."""
    from mathgraph.cli import main as mathgraph

    if mathgraph(argv) != 0:
        raise RuntimeError(f"mathgraph {' '.join(argv)} failed")


def print_resume(rows: list[dict]) -> None:
    print("\n## Resume after a kill\n")
    print(
        "| job | shards | done when killed | resumed in s | files compared | byte-identical to an uninterrupted run |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for row in rows:
        print(
            f"| {row['job']} | {row['shards']} | {row['done_before']} | {row['seconds']:.1f} | {row['files']} | "
            f"{'yes' if row['same'] else 'NO'} |"
        )


# --------------------------------------------------------------------------- arguments
def _remove(path: Path) -> None:
    import shutil

    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", required=True, help="where the banks, models and outputs go (--smoke: WORK/smoke)")
    parser.add_argument("--data", default=str(MATH), help="JSONL of problems (field 'problem')")
    parser.add_argument("--rows", type=int, default=5000, help="problems parsed (and with --part, encoded)")
    parser.add_argument("--model-rows", type=int, default=200, help="of them, problems encoded and indexed")
    parser.add_argument(
        "--engines", help="local, ray1 (1 worker), ray2 (2 workers); default local,ray1,ray2 (--smoke: local)"
    )
    parser.add_argument("--sections", default="throughput,rss,resume")
    parser.add_argument("--part", choices=("encode",), help="only this part's throughput (a GPU figure)")
    parser.add_argument("--model", default="shipped", help="the encoder of the encode part (default: shipped)")
    parser.add_argument("--index-model", default="shipped", help="the search embedder of index build")
    parser.add_argument("--device", default="cpu", help="cpu or cuda, for the encode part")
    parser.add_argument("--graphs", help="--part encode: graphs to encode (a parse output, or graphs.sqlite)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--shard-size", type=int, default=1000)
    parser.add_argument("--chunk-rows", type=int, default=256)
    parser.add_argument("--rss-rows", default="10000,50000,100000")
    parser.add_argument("--rss-distinct", type=int, default=1000)
    parser.add_argument("--resume-rows", type=int, default=120)
    parser.add_argument("--smoke", action="store_true", help="the smoke data, tiny models, a few dozen rows")
    args = parser.parse_args()
    if args.smoke:
        work = smoke_work(args.work)
        work.mkdir(parents=True, exist_ok=True)
        args.data, args.rows, args.model_rows, args.shard_size, args.chunk_rows = str(SMOKE_MATH), 24, 8, 6, 4
        args.model, args.index_model = tiny_encoder(work), f"text:{tiny_text_encoder(work)}"
        args.rss_rows, args.rss_distinct, args.resume_rows = "40", 20, 24
    if args.engines is None:
        args.engines = "local" if args.smoke else "local,ray1,ray2"
    return args


if __name__ == "__main__":
    main()
