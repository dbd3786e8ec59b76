"""Build ``mathgraph/data/kpc_sample.jsonl``: the small KPC sample of notebook 03.

    python benchmarks/make_kpc_sample.py [--input ../shared/data/math/train.jsonl]
                                         [--train-per-subject 12] [--dev-per-subject 4] [--seed 0]
    python benchmarks/make_kpc_sample.py --smoke --output FILE

Picks, for each of MATH's seven subjects, ``train + dev`` problems at random
(``random.Random(seed)``, subjects in sorted order) among the short ones: at
most ``--max-chars`` characters, without an Asymptote figure (``[asy]``) and
with a known level. Short problems keep the notebook fast on a CPU: the
fine-tuning cost grows with the number of tokens and graph nodes. Each output
row has ``id`` (``math-train-N``: line ``N``, counted from 0, of the input
file), ``source``, ``split`` (``train`` or ``dev``), ``subject``, ``level`` and
``problem``; rows are ordered by split, then subject.

The sample is tiny and biased towards short problems: it shows the pipeline,
it does not measure anything (``benchmarks/results.py`` does). ``--smoke``: 2 train and 1 dev
problem per subject from the smoke data (``benchmarks/smoke.py``) into ``--output``, which must
not be the packaged sample.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from smoke import SMOKE_MATH

REPO = Path(__file__).resolve().parents[1]
DEFAULT_INPUT = REPO.parent / "shared" / "data" / "math" / "train.jsonl"
DEFAULT_OUTPUT = REPO / "mathgraph" / "data" / "kpc_sample.jsonl"
SOURCE = "MATH train (Hendrycks et al., 2021; MIT)"


def eligible(row: dict, max_chars: int) -> bool:
    return len(row["problem"]) <= max_chars and "[asy]" not in row["problem"] and row["level"] != "Level ?"


def make_sample(
    rows: list[dict], train_per_subject: int, dev_per_subject: int, seed: int, max_chars: int
) -> list[dict]:
    """The sample rows (see the module docstring)."""
    rng = random.Random(seed)
    by_subject: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        if eligible(row, max_chars):
            by_subject.setdefault(row["subject"], []).append(index)
    picked: dict[str, list[dict]] = {"train": [], "dev": []}
    for subject in sorted(by_subject):
        wanted = train_per_subject + dev_per_subject
        if len(by_subject[subject]) < wanted:
            raise ValueError(f"{subject}: only {len(by_subject[subject])} eligible problems, {wanted} wanted")
        chosen = rng.sample(by_subject[subject], wanted)
        for position, index in enumerate(chosen):
            split = "train" if position < train_per_subject else "dev"
            row = rows[index]
            picked[split].append(
                {
                    "id": f"math-train-{index}",
                    "source": SOURCE,
                    "split": split,
                    "subject": row["subject"],
                    "level": row["level"],
                    "problem": row["problem"],
                }
            )
    return picked["train"] + picked["dev"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", default=str(DEFAULT_INPUT))
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT))
    parser.add_argument("--train-per-subject", type=int, default=12)
    parser.add_argument("--dev-per-subject", type=int, default=4)
    parser.add_argument("--max-chars", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="3 problems per subject of the smoke data into --output")
    args = parser.parse_args()
    if args.smoke:
        if Path(args.output).resolve() == DEFAULT_OUTPUT:
            parser.error("--smoke needs --output FILE: it must not overwrite the packaged sample")
        args.input, args.train_per_subject, args.dev_per_subject = str(SMOKE_MATH), 2, 1

    with open(args.input, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    sample = make_sample(rows, args.train_per_subject, args.dev_per_subject, args.seed, args.max_chars)
    with open(args.output, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in sample)
    counts = {split: sum(row["split"] == split for row in sample) for split in ("train", "dev")}
    print(f"wrote {len(sample)} rows to {args.output}: {counts}")


if __name__ == "__main__":
    main()
