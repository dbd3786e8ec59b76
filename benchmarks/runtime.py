"""PyTorch against ONNX Runtime (float32 and int8) on the shipped package, in one run on this machine.

    python benchmarks/runtime.py --data DATA --work DIR [--problems 1000] [--repeats 3] [--output FILE.json]
        [--light-venv VENV] [--parts exactness,throughput,memory,accuracy,startup] [--candidate PACKAGE]
        [--split dev|test]
    python benchmarks/runtime.py --smoke --work DIR

``DATA`` holds the task files (``benchmarks/results.py`` builds them: ``kpc.test.jsonl`` ...). Measured:

1. exactness: the largest difference between each ONNX runtime's and PyTorch's encoder vectors (``joint``);
2. throughput on ``--problems`` MATH problems (the KPC test and dev files): ``encode``, ``predict kpc`` (the
   neural head alone) and the backbone's forward alone, the graphs parsed once beforehand (timed: spaCy and
   the graph builder, the same for every runtime), and ``predict kpc`` with that parse counted; the runtimes
   take turns batch by batch so that drift on a noisy machine hits them alike;
3. peak memory (RSS) of a process that loads the package and encodes 64 problems, per runtime;
4. accuracy of the neural heads on every task's test file (``--split dev``: dev file), per runtime
   (``mathgraph.api.evaluate``, ``hybrid=False``: the late fusion adds the same TF-IDF and alignment models to
   each);
5. start-up: ``mathgraph predict kpc TEXT`` as a process against ``python -c "import torch"``
   (median of ``--repeats``, interleaved; the text's graph cached). ``--light-venv`` names a virtual
   environment with mathgraph installed without extras (no PyTorch: ``.ci/run`` makes one); its
   ``mathgraph predict kpc TEXT`` is the start-up that counts, because spaCy's thinc imports PyTorch whenever
   it is installed, so in this environment every process that parses pays for ``import torch``.

6. ceiling: how fast any runtime could run the text layers on this CPU: their floating-point operations per problem
   (the problems' real token counts; projections, feed-forward and attention products) against the machine's
   sustained float32 matrix-product rate (NumPy, the feed-forward's shape), beside the PyTorch backbone's forward and
   the share of its time spent in the text layers (forward hooks), in one run.

``--parts`` runs some of them (default: all). ``--candidate PACKAGE``: a second package (a copy of the shipped one
with its graphs exported again, say) whose ONNX Runtime forward, fp32 and int8, is measured beside the shipped
package's in the same run (runtimes ``onnx candidate``, ``onnx-int8 candidate``), in exactness and throughput.

``--smoke``: 12 problems, the smoke data's task files (``benchmarks/smoke.py``), one repeat; peak memory,
accuracy and start-up of the default runtime only, start-up without the first run that caches the text's
graph (fresh processes and loading the package once per task and runtime are most of a smoke run's time).
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from mathgraph.models.batching import MODEL_INPUTS, length_order

from smoke import smoke_work

RUNTIMES = ("torch", "onnx", "onnx-int8")
PARTS = ("exactness", "throughput", "memory", "accuracy", "startup", "ceiling")
TASKS = ("kpc", "qrc", "qam", "sqr")
TEXT = "Find $x$ if $2x+3=7$."


def packages(candidate: str | None = None) -> dict:
    """``{runtime: ModelPackage}`` of the shipped package on every runtime, and of ``candidate`` on the ONNX ones."""
    from mathgraph.models.package import ModelPackage
    from mathgraph.registry import SHIPPED_DIR

    loaded = {runtime: ModelPackage(SHIPPED_DIR, device="cpu", runtime=runtime) for runtime in RUNTIMES}
    if candidate:
        for runtime in RUNTIMES[1:]:
            loaded[f"{runtime} candidate"] = ModelPackage(candidate, device="cpu", runtime=runtime)
    return loaded


def problems_of(data: Path, count: int) -> list[str]:
    rows = []
    for part in ("test", "dev"):
        path = data / f"kpc.{part}.jsonl"
        rows += [json.loads(line)["problem"] for line in path.read_text(encoding="utf-8").splitlines()]
    return rows[:count]


def exactness(loaded: dict, texts: list[str]) -> dict:
    reference = loaded["torch"].encode(texts)
    return {
        runtime: float(np.abs(package.encode(texts) - reference).max())
        for runtime, package in loaded.items()
        if runtime != "torch"
    }


def throughput(loaded: dict, texts: list[str], batch: int = 32, chunk: int = 32) -> dict:
    """Problems per second per runtime of ``encode``, of ``predict kpc`` (the neural head) and of the backbone's
    forward alone, the problems' graphs parsed beforehand (once, timed: ``parse``), and of ``predict kpc`` with
    that parse counted (what a bank of new problems costs). The runtimes take turns, ``chunk`` problems at a
    time (each cut into batches of ``batch`` of similar token counts), so that drift on a noisy machine hits them
    alike; sessions are loaded and warmed up outside the clock."""
    from mathgraph.parsers.graph_cache import ParsedGraphs, parse_cached

    parser = loaded["onnx"].onnx.parser
    began = time.perf_counter()
    graphs = parse_cached(texts, parser=parser, cache=None)  # spaCy and the graph builder, shared by every runtime
    parse_seconds = time.perf_counter() - began
    parsed = ParsedGraphs(None, limit=len(texts))
    parsed.add(texts, graphs, parser=parser)
    predictors = {runtime: package.predictor("kpc", hybrid=False) for runtime, package in loaded.items()}
    forwards = {runtime: _forward(package) for runtime, package in loaded.items()}
    collate = loaded["onnx"].onnx.collator
    for runtime in loaded:  # load the sessions and warm up, outside the clock
        loaded[runtime].encode(graphs[:2])
        predictors[runtime].predict(texts[:2], graphs=parsed)
        forwards[runtime](collate(graphs[:2]))
    jobs = ("encode", "predict kpc", "forward (backbone)")
    seconds = {(job, runtime): 0.0 for job in jobs for runtime in loaded}
    for start in range(0, len(texts), chunk):
        part, part_graphs = texts[start : start + chunk], graphs[start : start + chunk]
        features = collate.features(part_graphs)
        order = length_order(features)  # as encode orders them: by token count
        batches = [collate.collate([features[i] for i in order[b : b + batch]]) for b in range(0, len(order), batch)]
        for runtime in loaded:
            began = time.perf_counter()
            loaded[runtime].encode(part_graphs, batch_size=batch, show_progress=False)
            seconds["encode", runtime] += time.perf_counter() - began
            began = time.perf_counter()
            predictors[runtime].predict(part, batch_size=batch, graphs=parsed)
            seconds["predict kpc", runtime] += time.perf_counter() - began
            began = time.perf_counter()
            for arrays in batches:
                forwards[runtime](arrays)
            seconds["forward (backbone)", runtime] += time.perf_counter() - began
    out = {f"{job} | {runtime}": round(len(texts) / s, 2) for (job, runtime), s in seconds.items()}
    out["parse (spaCy and graphs, shared)"] = round(len(texts) / parse_seconds, 2)
    for runtime in loaded:
        out[f"predict kpc, parse included | {runtime}"] = round(
            len(texts) / (parse_seconds + seconds["predict kpc", runtime]), 2
        )
    return out


def _forward(package):
    """The multi-task model's backbone on one collated batch (``ArrayCollator``'s arrays), on ``package``'s
    runtime: what the networks alone cost, without reading, collating or the heads."""
    if package.runtime != "torch":
        network = package.onnx.backbone_network
        return lambda arrays: network.run(arrays)
    import torch

    backbone = package.multitask.backbone
    names = [name for name in MODEL_INPUTS if name in inspect.signature(backbone.forward).parameters]

    def forward(arrays):
        with torch.inference_mode():
            return backbone(**{name: torch.from_numpy(arrays[name]) for name in names})

    return forward


def peak_memory(texts: list[str], runtimes=RUNTIMES) -> dict:
    """Peak RSS (MiB) of a fresh process that loads the package on ``runtime`` and encodes ``texts``."""
    # VmHWM, not getrusage's ru_maxrss: on Linux a child's ru_maxrss starts at its parent's size when forked
    script = (
        "import json, re, sys\n"
        "from mathgraph.models.package import ModelPackage\n"
        "from mathgraph.registry import SHIPPED_DIR\n"
        "texts = json.loads(sys.stdin.read())\n"
        "ModelPackage(SHIPPED_DIR, device='cpu', runtime=sys.argv[1]).encode(texts)\n"
        "status = open('/proc/self/status').read()\n"
        "print(int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1)) / 1024)\n"
    )
    out = {}
    for runtime in runtimes:
        done = subprocess.run(
            [sys.executable, "-c", script, runtime], input=json.dumps(texts), capture_output=True, text=True
        )
        if done.returncode:
            raise RuntimeError(done.stderr[-2000:])
        out[runtime] = round(float(done.stdout.split()[-1]), 1)
    return out


def accuracy(data: Path, tasks=TASKS, runtimes=RUNTIMES, split: str = "test") -> dict:
    """The neural heads' accuracy (NDCG@3 for SQR) on each task's ``split`` file, per runtime."""
    from mathgraph.api import evaluate

    out = {}
    for task in tasks:
        path = data / f"{task}.{split}.jsonl"
        for runtime in runtimes:
            metrics = evaluate("shipped", task, path, hybrid=False, device="cpu", runtime=runtime)
            key = "accuracy" if "accuracy" in metrics else "ndcg@3"
            out[f"{task} | {runtime}"] = {"metric": key, "value": metrics[key], "n": metrics.get("n")}
    return out


def ceiling(loaded: dict, texts: list[str], batch: int = 32, repeats: int = 5) -> dict:
    """The text layers' ceiling (see the module docstring, part 6): GFLOP a problem, the machine's GEMM rate, the
    problems a second those allow, and PyTorch's forward with the share of it spent in the text layers."""
    import torch

    from mathgraph.parsers.graph_cache import parse_cached

    collate = loaded["onnx"].onnx.collator
    features = collate.features(parse_cached(texts, parser=loaded["onnx"].onnx.parser, cache=None))
    tokens = np.array([len(f.input_ids) for f in features], dtype=np.float64)
    config = loaded["onnx"].onnx.encoder_config["text_config"]
    hidden, layers, inner = (int(config[k]) for k in ("hidden_size", "num_hidden_layers", "intermediate_size"))
    # per layer and token: query, key, value and output projections, the two feed-forward products, and the
    # attention's two products over the problem's own tokens (multiply-adds, two operations each)
    flops = 2 * layers * (tokens * (4 * hidden * hidden + 2 * hidden * inner) + 2 * tokens**2 * hidden)
    rows = int(batch * tokens.mean())
    a = np.random.default_rng(0).random((rows, hidden), dtype=np.float32)
    w = np.random.default_rng(1).random((hidden, inner), dtype=np.float32)
    a @ w
    rate = 0.0
    for _ in range(repeats):
        began = time.perf_counter()
        for _ in range(10):
            a @ w
        rate = max(rate, 10 * 2 * rows * hidden * inner / (time.perf_counter() - began))
    backbone = loaded["torch"].multitask.backbone
    order = length_order(features)
    batches = [collate.collate([features[i] for i in order[b : b + batch]]) for b in range(0, len(order), batch)]
    forward = _forward(loaded["torch"])
    in_layers = [0.0]

    def started(module, args):
        module._began = time.perf_counter()

    def ended(module, args, output):
        in_layers[0] += time.perf_counter() - module._began

    hooks = [layer.register_forward_pre_hook(started) for layer in backbone.text.encoder.layer]
    hooks += [layer.register_forward_hook(ended) for layer in backbone.text.encoder.layer]
    forward(batches[0])
    in_layers[0] = 0.0
    began = time.perf_counter()
    for arrays in batches:
        forward(arrays)
    total = time.perf_counter() - began
    for hook in hooks:
        hook.remove()
    per_problem = float(flops.mean())
    return {
        "tokens a problem (mean)": round(float(tokens.mean()), 1),
        "text layers, GFLOP a problem": round(per_problem / 1e9, 3),
        "float32 GEMM GFLOP/s (best of repeats)": round(rate / 1e9, 1),
        "text layers at that rate, problems/s": round(rate / per_problem, 1),
        "PyTorch forward (backbone), problems/s": round(len(texts) / total, 1),
        "PyTorch forward, share in the text layers": round(in_layers[0] / total, 3),
        "threads": torch.get_num_threads(),
    }


def startup(
    work: Path, repeats: int, with_torch_runtime: bool = True, light_venv: str | None = None, warm_up: bool = True
) -> dict:
    """Median seconds of ``python -c "import torch"`` and of ``mathgraph predict kpc TEXT`` (default runtime,
    ``--runtime torch``, and the default runtime in ``light_venv``, an install without PyTorch), runs
    interleaved, the text's graph cached by a first run of each (``warm_up``)."""
    here = Path(sys.executable).parent
    commands = {
        "import torch": [sys.executable, "-c", "import torch"],
        "predict kpc TEXT (onnx)": [str(here / "mathgraph"), "-q", "predict", "kpc", TEXT],
        "predict kpc TEXT (torch)": [str(here / "mathgraph"), "-q", "predict", "kpc", TEXT, "--runtime", "torch"],
    }
    if not with_torch_runtime:
        del commands["predict kpc TEXT (torch)"]
    if light_venv:
        commands["predict kpc TEXT (onnx, no PyTorch installed)"] = [
            str(Path(light_venv) / "bin" / "mathgraph"),
            "-q",
            "predict",
            "kpc",
            TEXT,
        ]
    for name, command in commands.items():  # the text's graph cached; the files read once
        if warm_up and name != "import torch":
            subprocess.run(command, check=True, capture_output=True)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, command in commands.items():
            began = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times[name].append(time.perf_counter() - began)
    return {name: round(statistics.median(values), 2) for name, values in times.items()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="/work/results/data", help="the task files (TASK.test.jsonl)")
    parser.add_argument("--work", required=True)
    parser.add_argument("--problems", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", help="write the report here (JSON)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--light-venv", help="a virtual environment with mathgraph installed without extras")
    parser.add_argument("--parts", help=f"comma-separated, of {','.join(PARTS)} (default: all)")
    parser.add_argument("--candidate", help="a second package whose ONNX forward is measured beside the shipped one")
    parser.add_argument(
        "--split", default="test", choices=("dev", "test"), help="the task files accuracy reads (default: test)"
    )
    args = parser.parse_args(argv)
    work = Path(args.work)
    data = Path(args.data)
    if args.smoke:
        from results import build_task_files

        work = data = smoke_work(work) / "data"
        build_task_files(data, 0, smoke=True)
        args.problems, args.repeats = 12, 1
    parts = PARTS if args.parts is None else tuple(args.parts.split(","))
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown parts {unknown}; choose from {','.join(PARTS)}")
    texts = problems_of(data, args.problems)
    loaded = packages(args.candidate)
    report = {"problems": len(texts)}
    if "exactness" in parts:
        report["exactness (max abs diff, joint vectors)"] = exactness(loaded, texts[:64])
        print(
            f"max |onnx - torch| over {min(64, len(texts))} joint vectors: {report['exactness (max abs diff, joint vectors)']}"
        )
    if "throughput" in parts:
        figures = report["throughput (problems/s)"] = throughput(loaded, texts)
        print("\n| job | runtime | problems/s | vs torch |\n|---|---|---:|---:|")
        for key, value in figures.items():
            job, _, runtime = key.partition(" | ")
            base = figures.get(f"{job} | torch")
            print(f"| {job} | {runtime or 'all'} | {value} | {f'{value / base:.2f}x' if base else ''} |")
    if "memory" in parts:
        report["peak RSS (MiB)"] = peak_memory(texts[:64], ("onnx",) if args.smoke else RUNTIMES)
        print("\n| runtime | peak RSS MiB (load + encode 64) |\n|---|---:|")
        for runtime, value in report["peak RSS (MiB)"].items():
            print(f"| {runtime} | {value} |")
    if "accuracy" in parts:
        name = f"accuracy ({args.split}, neural head)"
        report[name] = accuracy(data, runtimes=("onnx",) if args.smoke else RUNTIMES, split=args.split)
        print("\n| task | runtime | metric | value |\n|---|---|---|---:|")
        for key, value in report[name].items():
            task, runtime = key.split(" | ")
            print(f"| {task} | {runtime} | {value['metric']} | {value['value']:.4f} |")
    if "startup" in parts:
        report["start-up (s, median)"] = startup(
            work, args.repeats, with_torch_runtime=not args.smoke, light_venv=args.light_venv, warm_up=not args.smoke
        )
        seconds = report["start-up (s, median)"]
        print("\n| process | seconds |\n|---|---:|")
        for name, value in seconds.items():
            print(f"| {name} | {value} |")
        for name in seconds:
            if name.startswith("predict kpc TEXT (onnx"):
                print(f"{name} / import torch: {seconds[name] / seconds['import torch']:.2f}x")
    if "ceiling" in parts:
        report["ceiling"] = ceiling(loaded, texts[:256])
        print("\n| text layers' ceiling | value |\n|---|---:|")
        for name, value in report["ceiling"].items():
            print(f"| {name} | {value} |")
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
