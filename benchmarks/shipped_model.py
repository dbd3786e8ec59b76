"""The shipped model's size on disk and its load times, each load in a fresh process.

    python benchmarks/shipped_model.py [--repeats 3] [--smoke]

Prints a markdown table. Load time is measured inside a new Python process after
its imports (so it is the model's cost, not the interpreter's): the encoder
(``MathEncoder.from_pretrained("shipped")``: checksums, the packaged MiniLM, the
fp16 delta) and the multi-task model with its TF-IDF and alignment models (``ModelPackage.predictor``).
Encode throughput against MiniLM alone is ``benchmarks/encode_benchmark.py``'s. ``--smoke``: one
load of each (seconds).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

from mathgraph.registry import SHIPPED_DIR

LOADS = {
    "encoder (MathEncoder.from_pretrained('shipped'))": "from mathgraph.models.encoder import MathEncoder; load = lambda: MathEncoder.from_pretrained('shipped', device='cpu')",
    "multi-task model + TF-IDF (ModelPackage)": "from mathgraph.models.package import ModelPackage; from mathgraph.registry import SHIPPED_DIR; load = lambda: [ModelPackage(SHIPPED_DIR, device='cpu').predictor(t, hybrid=True) for t in ('kpc', 'qrc', 'qam', 'sqr')]",
}
TIMER = "; import time; start = time.perf_counter(); load(); print(time.perf_counter() - start)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one load of each: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.repeats = 1
    sizes: dict[str, int] = {}
    for path in (p for p in SHIPPED_DIR.rglob("*") if p.is_file()):
        parts = path.relative_to(SHIPPED_DIR).parts
        part = parts[0] if len(parts) > 1 else "top-level files"  # encoder/, multitask/, tfidf/, sample/
        sizes[part] = sizes.get(part, 0) + path.stat().st_size
    print("| part | MiB on disk |\n|---|---:|")
    for part, size in sorted(sizes.items()):
        print(f"| {part} | {size / 2**20:.2f} |")
    print(f"| **total** | **{sum(sizes.values()) / 2**20:.2f}** |\n")
    print("| load (fresh process, after imports) | median s | runs |\n|---|---:|---|")
    for name, setup in LOADS.items():
        runs = [
            float(
                subprocess.run(
                    [sys.executable, "-c", setup + TIMER], capture_output=True, text=True, check=True
                ).stdout.split()[-1]
            )
            for _ in range(args.repeats)
        ]
        print(f"| {name} | {statistics.median(runs):.2f} | {', '.join(f'{r:.2f}' for r in runs)} |")


if __name__ == "__main__":
    main()
