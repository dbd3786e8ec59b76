"""Which pooling for the default encoder's text vector: ``[CLS]`` or the mean of the token states?

    python benchmarks/pooling_probe.py --data results/data [--train-limit 2000] [--smoke]

A linear probe on frozen features, so the answer is about the features, not a
training run: the default encoder's text layers (all-MiniLM-L6-v2 with the
LaTeX tokens) encode each problem once; a logistic regression (scikit-learn,
converged) is fitted on the train part and scored on the dev part, for KPC
(one vector per problem) and QRC (``[u; v; |u - v|; u * v]`` of the two
problems). Reads the task files ``benchmarks/results.py`` writes. Prints JSON. ``--smoke``: builds
the smoke task files (``benchmarks/results.py --smoke``'s) in ``DATA/smoke`` and probes on them: seconds.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from mathgraph.models.encoder import MathEncoder
from mathgraph.models.pooling import POOLINGS, problem_vectors
from mathgraph.models.prediction import feature_store
from mathgraph.models.task_model import TaskConfig, TaskModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import build_task_files  # noqa: E402
from smoke import smoke_work  # noqa: E402


@torch.no_grad()
def text_vectors(model: TaskModel, texts: list[str], batch_size: int = 32) -> dict[str, np.ndarray]:
    """Each pooling's vectors of ``texts`` (text encoder only, nothing parsed)."""
    store = feature_store(model, texts)
    vectors: dict[str, list] = {p: [] for p in POOLINGS}
    for start in range(0, len(texts), batch_size):
        inputs = store.batch(texts[start : start + batch_size]).as_model_inputs()
        for pooling in POOLINGS:
            vectors[pooling].append(problem_vectors(model.backbone, "bert", inputs, pooling))
    return {p: torch.cat(v).numpy() for p, v in vectors.items()}


def probe(train_x: np.ndarray, train_y: list, dev_x: np.ndarray, dev_y: list) -> float:
    """Dev accuracy of a converged, standardised logistic regression."""
    scaler = StandardScaler().fit(train_x)
    classifier = LogisticRegression(max_iter=3000, C=1.0).fit(scaler.transform(train_x), train_y)
    return float((classifier.predict(scaler.transform(dev_x)) == np.array(dev_y)).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="results/data", help="the task files of benchmarks/results.py")
    parser.add_argument("--train-limit", type=int, default=2000, help="KPC training problems (a seeded sample)")
    parser.add_argument("--smoke", action="store_true", help="the smoke task files, built in DATA/smoke: seconds")
    args = parser.parse_args()
    data = Path(args.data)
    if args.smoke:
        data = smoke_work(data)
        files = build_task_files(data, seed=0, smoke=True)
        args.train_limit = sum(1 for _ in open(files["kpc"]["train"], encoding="utf-8"))
    read = lambda name: [json.loads(line) for line in open(data / name, encoding="utf-8")]  # noqa: E731
    model = TaskModel(
        MathEncoder.from_pretrained("shipped", device="cpu"), TaskConfig("kpc", architecture="bert", labels=["-", "+"])
    ).eval()
    results = {}

    kpc_train = random.Random(0).sample(read("kpc.train.jsonl"), args.train_limit)
    kpc_dev = read("kpc.dev.jsonl")
    train, dev = (text_vectors(model, [r["problem"] for r in rows]) for rows in (kpc_train, kpc_dev))
    results["kpc"] = {
        p: probe(train[p], [r["subject"] for r in kpc_train], dev[p], [r["subject"] for r in kpc_dev]) for p in POOLINGS
    }
    results["kpc"].update(n_train=len(kpc_train), n_dev=len(kpc_dev))

    def pair_features(rows: list[dict]) -> dict[str, np.ndarray]:
        a, b = text_vectors(model, [r["text_a"] for r in rows]), text_vectors(model, [r["text_b"] for r in rows])
        return {p: np.concatenate([a[p], b[p], np.abs(a[p] - b[p]), a[p] * b[p]], axis=1) for p in POOLINGS}

    qrc_train, qrc_dev = read("qrc.train.jsonl"), read("qrc.dev.jsonl")
    train, dev = pair_features(qrc_train), pair_features(qrc_dev)
    results["qrc"] = {
        p: probe(train[p], [r["label"] for r in qrc_train], dev[p], [r["label"] for r in qrc_dev]) for p in POOLINGS
    }
    results["qrc"].update(n_train=len(qrc_train), n_dev=len(qrc_dev))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
