"""KPC from the GPU-pre-trained COMUS encoder, fine-tuned from several seeds on a GPU: each run, their ensemble,
and the ensemble fused with TF-IDF, on the MATH seed-0 split (6,000 / 750 / 750).

    python benchmarks/gpu_kpc_ensemble.py --report GPU_OUT/report.json [--output FILE.json]
    python benchmarks/gpu_kpc_ensemble.py --smoke --work /tmp/k   # the committed figures, recomputed
    python benchmarks/gpu_kpc_ensemble.py --figures benchmarks/results/issue51_kpc_settings.json  # the settings run
    python benchmarks/gpu_kpc_ensemble.py --figures A.json --figures B.json  # two jobs' runs, averaged together
    python benchmarks/gpu_kpc_ensemble.py --figures A.json --versus B.json --names COMUS,DAPT-BERT  # A minus B

``report.json`` is what ``mathgraph kit run`` writes for a kit built with ``--shares kpc-comus=1 --kpc-seeds N``
(or several ``--kpc-setting``): each run's class probabilities on KPC dev and test, in file order. The ensemble
averages them (the first k runs, for every k). TF-IDF + logistic regression is trained here on the same train part (``split_rows`` of
``../shared/data/math/train.jsonl``, seed 0, as ``benchmarks/results.py`` builds it) and fused with the ensemble as
the package fuses (``models.late_fusion.fuse_probabilities``: a weighted product, the weight chosen on dev among
0.0, 0.1, ..., 1.0). Intervals: Wilson for accuracy, a paired bootstrap (2,000 draws, seed 0) for differences.
``--smoke`` recomputes every table from ``benchmarks/results/issue51_kpc_ensemble.json`` (the probabilities of
the full run, TF-IDF's included), without the shared data.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from mathgraph.models.late_fusion import WEIGHTS, fuse_probabilities
from mathgraph.tasks.release.build import wilson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_kit import paired_difference, shipped_kpc_cells  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
COMMITTED = RESULTS / "issue51_kpc_ensemble.json"
SHARED_MATH = REPO.parent / "shared" / "data" / "math" / "train.jsonl"


def kpc_split(path: Path) -> dict[str, list[dict]]:
    """The KPC train, dev and test parts, as ``benchmarks/results.py`` builds them (seed 0)."""
    from mathgraph.tasks.data import split_rows

    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    return split_rows(rows, seed=0, stratify_field="subject")


def tfidf_probabilities(parts: dict[str, list[dict]], labels: list[str]) -> dict[str, list[list[float]]]:
    """TF-IDF + logistic regression (the package's defaults) fitted on train: dev and test probabilities,
    columns in ``labels`` order."""
    from mathgraph.tasks.training.tfidf import train_tfidf

    model = train_tfidf("kpc", parts["train"])
    columns = [model.classes_.index(label) for label in labels]
    return {
        part: np.round(model.predict_proba([r["problem"] for r in parts[part]])[:, columns], 6).tolist()
        for part in ("dev", "test")
    }


def gather(report: dict, parts: dict[str, list[dict]]) -> dict:
    """What the tables need: gold labels, each run's probabilities and TF-IDF's, per part (the KPC study of the
    COMUS encoder, or of DAPT-BERT where the job ran that one only)."""
    phases = report["phases"]
    study = next((phases[p] for p in ("kpc-comus", "kpc-dapt") if "dev" in phases.get(p, {})), None)
    if study is None:
        raise ValueError("the report has no finished KPC study (kpc-comus or kpc-dapt) to read")
    runs = study.get("runs", [study])
    labels = study["labels"]
    tfidf = tfidf_probabilities(parts, labels)
    figures = {"labels": labels, "machine": report["machine"], "job": report["job"], "seconds": study["seconds"]}
    for part in ("dev", "test"):
        gold = [r["subject"] for r in parts[part]]
        ensemble = np.mean([run[part]["probabilities"] for run in runs], axis=0)
        mine = "".join("1" if labels[i] == g else "0" for i, g in zip(ensemble.argmax(axis=1), gold))
        if mine != study[part]["correct"]:  # the report's rows are these rows, in this order
            raise ValueError(f"{part}: the report's problems are not the split's (another data file or seed?)")
        figures["run_names"] = [run_name(i, run) for i, run in enumerate(runs)]
        figures[part] = {
            "gold": gold,
            "runs": [run[part]["probabilities"] for run in runs],
            "tfidf": tfidf[part],
        }
    return figures


def same_split(a: dict, b: dict) -> bool:
    """Two sets of figures were measured on the same problems, in the same order, with the same labels."""
    return a["labels"] == b["labels"] and all(a[p]["gold"] == b[p]["gold"] for p in ("dev", "test"))


def pool(figures: list[dict]) -> dict:
    """The runs of several jobs as one set of figures (the first job's machine; every job's record), so that their
    ensembles average all the runs. The jobs must have read the same problems in the same order."""
    first = figures[0]
    if len(figures) == 1:
        return first
    for number, other in enumerate(figures[1:], 2):
        if not same_split(first, other):
            raise ValueError(f"figures {number}: another KPC split than the first's (other labels or problems)")
    pooled = {
        "labels": first["labels"],
        "machine": first["machine"],
        "job": [f["job"] for f in figures],
        "seconds": round(sum(f["seconds"] for f in figures), 1),
        "run_names": [
            f"job {number}, {name}"
            for number, f in enumerate(figures, 1)
            for name in f.get("run_names") or [f"run {i + 1}" for i in range(len(f["dev"]["runs"]))]
        ],
    }
    for part in ("dev", "test"):
        runs = [run for f in figures for run in f[part]["runs"]]
        pooled[part] = {"gold": first[part]["gold"], "runs": runs, "tfidf": first[part]["tfidf"]}
    return pooled


def run_name(index: int, run: dict) -> str:
    """A run's row name: its number and seed, and its KPC setting where the job compared several."""
    seed = run.get("seed", index)
    if "learning_rate" not in run:
        return f"run {index + 1} (seed {seed})"
    return (
        f"run {index + 1} (lr {run['learning_rate']:g}, {run['epochs']} epochs, batch {run['batch_size']}, seed {seed})"
    )


def correctness(probabilities, labels: list[str], gold: list[str]) -> np.ndarray:
    """1.0 where a row's most probable label is its gold label, else 0.0."""
    return np.array([labels[i] == g for i, g in zip(np.asarray(probabilities).argmax(axis=1), gold)], dtype=float)


def fused(neural, sparse, labels: list[str], weight: float) -> np.ndarray:
    """``fuse_probabilities`` row by row, as the package fuses KPC."""
    rows = []
    for n, s in zip(neural, sparse):
        result = fuse_probabilities(dict(zip(labels, n)), dict(zip(labels, s)), weight)["probabilities"]
        rows.append([result[label] for label in labels])
    return np.array(rows)


def cell(correct: np.ndarray) -> str:
    """Accuracy with its Wilson 95% interval, as a table cell."""
    low, high = wilson(correct.mean(), len(correct))
    return f"{correct.mean():.4f} [{low:.4f}-{high:.4f}]"


def difference_cell(a: np.ndarray, b: np.ndarray) -> str:
    """``a`` minus ``b`` (per-problem correctness of the same problems) with its paired bootstrap interval."""
    value, low, high = paired_difference(*("".join("1" if c else "0" for c in x) for x in (a, b)))
    return f"{value:+.4f} [{low:+.4f} to {high:+.4f}]"


def fusion_weight(figures: dict) -> tuple[float, dict[float, float]]:
    """The late-fusion weight of the ensemble of all runs with TF-IDF chosen on dev (the smallest among equals),
    and dev accuracy at every weight."""
    labels, dev = figures["labels"], figures["dev"]
    ensemble = np.mean(dev["runs"], axis=0)
    dev_by_weight = {
        w: correctness(fused(ensemble, dev["tfidf"], labels, w), labels, dev["gold"]).mean() for w in WEIGHTS
    }
    best = max(dev_by_weight.values())
    return min(w for w, value in dev_by_weight.items() if value == best), dev_by_weight


def versus(a: dict, b: dict, names: tuple[str, str]) -> str:
    """Two studies of the same split compared, ``a`` minus ``b``, paired over the same problems: the mean of
    their single runs, run k against run k, the ensembles of the first k runs (k the smaller run count), and each
    ensemble of all its runs fused with TF-IDF (each weight chosen on its own dev)."""
    if not same_split(a, b):
        raise ValueError("the two studies were not measured on the same KPC split")
    labels, k = a["labels"], min(len(a["dev"]["runs"]), len(b["dev"]["runs"]))

    def rows(figures: dict) -> dict[str, list[np.ndarray]]:
        weight, _ = fusion_weight(figures)
        out = {
            f"run {i + 1}": [correctness(figures[p]["runs"][i], labels, figures[p]["gold"]) for p in ("dev", "test")]
            for i in range(k)
        }
        out[f"ensemble of {k}"] = [
            correctness(np.mean(figures[p]["runs"][:k], axis=0), labels, figures[p]["gold"]) for p in ("dev", "test")
        ]
        out["all runs + TF-IDF, late fusion"] = [
            correctness(
                fused(np.mean(figures[p]["runs"], axis=0), figures[p]["tfidf"], labels, weight),
                labels,
                figures[p]["gold"],
            )
            for p in ("dev", "test")
        ]
        return out

    first, second = rows(a), rows(b)
    lines = [
        f"| row | {names[0]} dev | {names[1]} dev | {names[0]} minus {names[1]}, dev | "
        f"{names[0]} test | {names[1]} test | {names[0]} minus {names[1]}, test |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    means = [
        [np.mean([rows_[f"run {i + 1}"][j].mean() for i in range(k)]) for j in (0, 1)] for rows_ in (first, second)
    ]
    lines.append(
        f"| mean of runs 1-{k} | {means[0][0]:.4f} | {means[1][0]:.4f} | {means[0][0] - means[1][0]:+.4f} | "
        f"{means[0][1]:.4f} | {means[1][1]:.4f} | {means[0][1] - means[1][1]:+.4f} |"
    )
    for row in first:
        (da, ta), (db, tb) = first[row], second[row]
        lines.append(
            f"| {row} | {cell(da)} | {cell(db)} | {difference_cell(da, db)} | {cell(ta)} | {cell(tb)} | "
            f"{difference_cell(ta, tb)} |"
        )
    return "\n".join(lines) + "\n"


def tables(figures: dict) -> str:
    """The markdown report: each run, the ensembles, TF-IDF, the fusion (weight chosen on dev), the differences."""
    labels = figures["labels"]
    dev, test = figures["dev"], figures["test"]
    count = len(dev["runs"])

    def ensemble(part: dict, k: int) -> np.ndarray:
        return np.mean(part["runs"][:k], axis=0)

    weight, dev_by_weight = fusion_weight(figures)
    names = figures.get("run_names") or [f"run {i + 1} (seed {i})" for i in range(count)]
    rows = {name: [correctness(p["runs"][i], labels, p["gold"]) for p in (dev, test)] for i, name in enumerate(names)}
    rows.update(
        {
            f"ensemble of {k}": [correctness(ensemble(p, k), labels, p["gold"]) for p in (dev, test)]
            for k in range(2, count + 1)
        }
    )
    rows["TF-IDF + logistic regression"] = [correctness(p["tfidf"], labels, p["gold"]) for p in (dev, test)]
    fusion_row = f"ensemble of {count} + TF-IDF, late fusion (w = {weight} on dev)"
    rows[fusion_row] = [
        correctness(fused(ensemble(p, count), p["tfidf"], labels, weight), labels, p["gold"]) for p in (dev, test)
    ]
    lines = [
        f"Machine: {json.dumps(figures['machine'])}; KPC phase {figures['seconds']} s; job {json.dumps(figures['job'])}",
        "",
        "| row | dev acc [95% CI] | test acc [95% CI] |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {cell(d)} | {cell(t)} |" for name, (d, t) in rows.items()]
    single = [np.mean([rows[name][j].mean() for name in names]) for j in (0, 1)]
    lines.append(f"| mean of the single runs | {single[0]:.4f} | {single[1]:.4f} |")
    lines += [f"| shipped package, {name} | {dev} | {test} |" for name, (dev, test) in shipped_kpc_cells().items()]
    lines += ["", "Paired differences (bootstrap 95% intervals):", ""]
    for a, b in (
        (f"ensemble of {count}", names[0]),
        (f"ensemble of {count}", "TF-IDF + logistic regression"),
        (fusion_row, "TF-IDF + logistic regression"),
    ):
        lines.append(
            f"- {a} minus {b}: dev {difference_cell(rows[a][0], rows[b][0])}, "
            f"test {difference_cell(rows[a][1], rows[b][1])}"
        )
    lines += ["", "Fusion weight on dev: " + ", ".join(f"{w}: {v:.4f}" for w, v in dev_by_weight.items())]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", help="a `kit run` report.json with the KPC runs' probabilities")
    parser.add_argument("--math", default=str(SHARED_MATH), help="MATH train.jsonl, split as the kit's data was")
    parser.add_argument("--output", help="write the gathered probabilities here (JSON) and the tables beside (.md)")
    parser.add_argument(
        "--figures",
        action="append",
        help="recompute the tables from probabilities an earlier --output wrote (repeat it to pool several jobs' runs)",
    )
    parser.add_argument(
        "--versus",
        help="another study's probabilities (an earlier --output): compare the two, this one minus that one",
    )
    parser.add_argument(
        "--names", default="this,other", help="with --versus: the two studies' names, this one's first (A,B)"
    )
    parser.add_argument("--smoke", action="store_true", help=f"recompute the tables from {COMMITTED.name}")
    parser.add_argument("--work", help="with --smoke: write the tables into this folder")
    args = parser.parse_args()
    if args.smoke or args.figures:
        figures = pool([json.loads(Path(path).read_text()) for path in args.figures or [COMMITTED]])
    elif args.report:
        figures = gather(json.loads(Path(args.report).read_text()), kpc_split(Path(args.math)))
    else:
        parser.error("give --report (a kit run's report.json) or --smoke")
    text = tables(figures)
    if args.versus:
        names = tuple(args.names.split(",", 1))
        if len(names) != 2:
            parser.error("--names takes two names: A,B")
        other = json.loads(Path(args.versus).read_text())
        text += f"\n{names[0]} minus {names[1]} (paired bootstrap 95% intervals):\n\n" + versus(figures, other, names)
    sys.stdout.write(text)
    if args.output:
        Path(args.output).write_text(json.dumps(figures), encoding="utf-8")
        Path(args.output).with_suffix(".md").write_text(text, encoding="utf-8")
    if args.smoke and args.work:
        Path(args.work).mkdir(parents=True, exist_ok=True)
        (Path(args.work) / "gpu_kpc_ensemble.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
