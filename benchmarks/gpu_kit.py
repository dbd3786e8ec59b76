"""A training kit's job on a GPU beside the same job on the CPU: throughput, steps, and the KPC study at GPU scale.

    python benchmarks/gpu_kit.py --gpu GPU_OUT/report.json --cpu CPU_OUT/report.json [--output FILE.md]
    python benchmarks/gpu_kit.py --smoke --work /tmp/k     # the committed reports of the first GPU run

``report.json`` is what ``mathgraph kit run`` writes. The KPC study compares KPC fine-tuned from the two encoders
the job pre-trained (COMUS and DAPT-BERT, the same corpus and steps): accuracy with Wilson intervals, and the
difference COMUS minus DAPT-BERT with a paired bootstrap interval over the same problems (2,000 draws, seed 0).
Beside them: the CPU study's rows (``benchmarks/results/issue26_kpc_study.json``: 2,000 steps of 32 texts)
and the shipped package's KPC figures (its ``release.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from mathgraph.tasks.release.build import wilson

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
GPU_REPORT, CPU_REPORT = RESULTS / "issue51_gpu_report.json", RESULTS / "issue51_cpu_report.json"
CPU_STUDY = RESULTS / "issue26_kpc_study.json"
SHIPPED_RELEASE = REPO / "mathgraph" / "data" / "shipped_model" / "release.json"
CPU_STUDY_STEPS, CPU_STUDY_BATCH = 2000, 32


def paired_difference(a: str, b: str, draws: int = 2000) -> tuple[float, float, float]:
    """Accuracy of ``a`` minus ``b`` (per-problem correctness strings of the same problems) and its paired
    bootstrap 95% interval."""
    x = np.array([c == "1" for c in a], dtype=float) - np.array([c == "1" for c in b], dtype=float)
    means = x[np.random.default_rng(0).integers(0, len(x), (draws, len(x)))].mean(axis=1)
    return (
        round(float(x.mean()), 4),
        round(float(np.percentile(means, 2.5)), 4),
        round(float(np.percentile(means, 97.5)), 4),
    )


def accuracy_cell(record: dict) -> str:
    n, correct = record["n"], record["correct"].count("1")
    low, high = wilson(correct / n, n)
    return f"{correct / n:.4f} [{low:.4f}-{high:.4f}]"


def throughput_table(gpu: dict, cpu: dict) -> list[str]:
    lines = [
        "| phase | GPU steps | GPU examples/s | CPU examples/s | GPU / CPU | GPU tokens/s | peak GPU memory (MiB) | GPU seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for phase, record in gpu["phases"].items():
        other = cpu["phases"].get(phase, {})
        rate, base = record.get("examples_per_s"), other.get("examples_per_s")
        ratio = f"{rate / base:.1f}x" if rate and base else "-"
        lines.append(
            f"| {phase} | {record.get('steps', '-')} | {rate or '-'} | {base or '-'} | {ratio} | "
            f"{record.get('tokens_per_s', '-')} | {record.get('peak_gpu_memory_mib', '-')} | {record.get('seconds')} |"
        )
    return lines


def study_table(gpu: dict) -> list[str]:
    phases = gpu["phases"]
    lines = ["| row | pre-training | dev acc [95% CI] | test acc [95% CI] |", "|---|---|---:|---:|"]
    comus, dapt = phases.get("kpc-comus", {}), phases.get("kpc-dapt", {})
    steps = phases["comus"].get("steps")
    batch = phases["comus"].get("batch_size")
    for name, record in (("comus-pt (GPU)", comus), ("dapt-bert (GPU)", dapt)):
        if "test" in record:
            lines.append(
                f"| {name} | {steps} steps of {batch} | {accuracy_cell(record['dev'])} | {accuracy_cell(record['test'])} |"
            )
    if "test" in comus and "test" in dapt:
        cells = []
        for part in ("dev", "test"):
            value, low, high = paired_difference(comus[part]["correct"], dapt[part]["correct"])
            cells.append(f"{value:+.4f} [{low:+.4f} to {high:+.4f}]")
        lines.append(f"| COMUS minus DAPT-BERT (GPU), paired | | {cells[0]} | {cells[1]} |")
    study = json.loads(CPU_STUDY.read_text())["rows"]
    for row in ("comus-pt", "dapt-bert", "tfidf"):
        record = study[row]
        budget = "-" if row == "tfidf" else f"{CPU_STUDY_STEPS} steps of {CPU_STUDY_BATCH} (CPU)"
        cells = [
            f"{record[p]['accuracy']:.4f} [{record[p]['accuracy_ci95'][0]:.4f}-{record[p]['accuracy_ci95'][1]:.4f}]"
            for p in ("dev", "test")
        ]
        lines.append(f"| {row} (CPU study) | {budget} | {cells[0]} | {cells[1]} |")
    for name, (dev, test) in shipped_kpc_cells().items():
        lines.append(f"| shipped package, {name} | 2000 steps of 32 (CPU) | {dev} | {test} |")
    return lines


def shipped_kpc_cells() -> dict[str, tuple[str, str]]:
    """The shipped package's KPC accuracy, neural and hybrid, as dev and test table cells with their intervals
    (its ``release.json``); empty where the package is not there."""
    if not SHIPPED_RELEASE.exists():
        return {}
    kpc = json.loads(SHIPPED_RELEASE.read_text())["tasks"]["kpc"]
    return {
        name: tuple(
            f"{kpc[p][name]['value']:.4f} [{kpc[p][name]['ci95'][0]:.4f}-{kpc[p][name]['ci95'][1]:.4f}]"
            for p in ("dev", "test")
        )
        for name in ("neural", "hybrid")
    }


def report(gpu: dict, cpu: dict) -> str:
    comus = gpu["phases"]["comus"]
    seen = (comus.get("steps") or 0) * (comus.get("batch_size") or 0)
    lines = [
        f"GPU: {json.dumps(gpu['machine'])}; the job's minutes: {gpu['minutes']}; status {gpu['status']}, {gpu.get('seconds')} s",
        f"CPU: {json.dumps(cpu['machine'])}; the job's minutes: {cpu['minutes']}; status {cpu['status']}",
        "",
        "## Throughput, the same job",
        "",
        *throughput_table(gpu, cpu),
        "",
        f"COMUS pre-training reached {comus.get('steps')} steps of {comus.get('batch_size')} texts ({seen:,} texts seen) "
        f"against the CPU study's {CPU_STUDY_STEPS} steps of {CPU_STUDY_BATCH} ({CPU_STUDY_STEPS * CPU_STUDY_BATCH:,}); "
        f"loss first {json.dumps(comus.get('loss_first'))}, last {json.dumps(comus.get('loss_last'))}",
        "",
        "## The KPC study at GPU scale (MATH seed-0 split: 6,000 / 750 / 750)",
        "",
        *study_table(gpu),
    ]
    multitask = gpu["phases"].get("multitask", {})
    if multitask.get("history"):
        lines += ["", "## Multi-task dev (the job's own evaluation, neural only)", ""]
        for record in multitask["history"]:
            lines.append(
                "- "
                + json.dumps(
                    {
                        k: v
                        for k, v in record.items()
                        if k in ("epoch", "step", "train_examples_per_s") or k.endswith(("accuracy", "ndcg@3", "mean"))
                    }
                )
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", default=str(GPU_REPORT))
    parser.add_argument("--cpu", default=str(CPU_REPORT))
    parser.add_argument("--output", help="also write the tables here")
    parser.add_argument("--smoke", action="store_true", help="the committed reports; output into --work")
    parser.add_argument("--work")
    args = parser.parse_args()
    if args.smoke and args.work:
        args.output = str(Path(args.work) / "gpu_kit.md")
    text = report(json.loads(Path(args.gpu).read_text()), json.loads(Path(args.cpu).read_text()))
    sys.stdout.write(text)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
