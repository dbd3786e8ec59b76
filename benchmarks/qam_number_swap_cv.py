"""QAM number-swap by grouped 5-fold cross-validation over every GSM-Plus seed: TF-IDF, the alignment model on
its older features and with the step findings (``models.alignment_features.STEP_FINDING_FEATURES``), and each
fused with TF-IDF; the same with the features no shipped model reads yet (``CANDIDATE_FEATURES``: the newest finding
kinds and ``parsers.solution_fit``), and the hybrid whose features are chosen per fold on dev (``dev-chosen+tfidf``).

    python benchmarks/qam_number_swap_cv.py --work results/ [--folds 5] [--seeds N] [--smoke]

The pairs are ``tasks.data.build_qam_number_swap`` of all of ``gsmplus/variants.jsonl`` (each seed's own
pair, and per number-changing variant its own pair and the two crossed ones). The seeds are shuffled (seed 0)
into ``--folds`` folds. In each fold the models are trained on the other folds' pairs plus the pairs of 500
GSM8K train questions with hard negatives (as ``benchmarks/structure_results.py`` trains QAM). A dev part, a
fifth of the training seeds, is held out of training to choose the hybrid's weight on TF-IDF
(``tasks.training.late_fusion.choose_weight``) and its threshold on the fused probability of a match; the
models are then trained again on all the training seeds and tested on the held-out fold. Nothing is chosen on
a test fold. Accuracy is pooled over the folds, with a 95% Wilson interval, overall and per perturbation type
(``seed`` is a seed's own pair).

Each test pair's probability of a match and whether each row got it right go to
``WORK/qam_number_swap_cv/predictions.jsonl`` (for reading the errors). The alignment rows of every pair are
computed once and cached in ``WORK/qam_number_swap_cv/rows.npz`` (keyed as ``models.alignment_features`` keys
rows), the candidate features in ``candidates.npz`` beside it, each with the parser version that read them, so a
rerun parses nothing (a new parser version computes them again). The results go to
``benchmarks/results/qam_number_swap_cv.json`` (``--smoke``: to ``WORK/smoke``), with markdown tables
printed. ``--smoke`` runs on the smoke data, 5 seeds and 4 GSM8K questions, models of 20 iterations.

``--failures N`` runs nothing: it reads the predictions of an earlier run in WORK and prints, per perturbation type
and pair role (``pos``; ``neg-seed-solution``: the variant's question with the seed's solution;
``neg-seed-question``: the seed's question with the variant's solution), how many test pairs the row ``--row``
(default ``structure+steps+fit+tfidf``) got wrong, then the first N of them per type with their texts.

The neural QAM model (the pair head that reads the alignment, as the shipped package's) cannot be trained five
times on this CPU; a GPU trains it per fold in a kit's ``qam-cv`` phase (docs/gpu.md):

    python benchmarks/qam_number_swap_cv.py --export-folds results/data    # qam.cvK-train/-dev/-test.jsonl
    mathgraph kit build --data results/data --output kit --shares comus=0.4,qam-cv=0.6   # then kit run on a GPU
    python benchmarks/qam_number_swap_cv.py --work results/ --neural out/report.json

``--neural`` adds the rows ``neural`` (each fold's model, threshold 0.5; trained on the fold's inner pairs, its
epoch chosen on the fold's dev pairs) and ``structure+steps+fit+tfidf+neural`` (that hybrid fused with it, the
weight and threshold chosen on the fold's dev pairs as the hybrid's own are; the neural dev probabilities come
from the epoch those pairs chose, so they flatter the neural model a little there, never on a test fold), written
to ``benchmarks/results/qam_number_swap_cv_neural.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from threadpoolctl import threadpool_limits  # noqa: E402

from mathgraph.models.alignment_features import (  # noqa: E402
    CANDIDATE_FEATURES,
    STEP_FINDING_FEATURES,
    AlignmentRows,
    alignment_features,
    available_features,
    candidate_features,
    pair_key,
)
from mathgraph.models.alignment_model import AlignmentModel, _tree_arrays  # noqa: E402
from mathgraph.models.late_fusion import fuse  # noqa: E402
from mathgraph.models.tfidf import TfidfPredictor  # noqa: E402
from mathgraph.parsers import PARSER_VERSION  # noqa: E402
from mathgraph.tasks.data import build_qam_number_swap, build_qam_pairs, group_seeds, split_by_group  # noqa: E402
from mathgraph.tasks.training.late_fusion import choose_weight  # noqa: E402
from mathgraph.tasks.training.tfidf import train_tfidf  # noqa: E402

from smoke import SMOKE_DATA, smoke_work  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # as benchmarks/results.py reads it
RESULTS = Path(__file__).resolve().parent / "results" / "qam_number_swap_cv.json"
RESULTS_NEURAL = RESULTS.with_name("qam_number_swap_cv_neural.json")  # with --neural
SEED = 0
GSM8K_QUESTIONS = 500
ALL_FEATURES = available_features("solution")
OLD_FEATURES = tuple(name for name in ALL_FEATURES if name not in STEP_FINDING_FEATURES)
COLUMNS = ALL_FEATURES + CANDIDATE_FEATURES  # a pair's row here: what the package computes, then the candidates
NEURAL_WITH = "structure+steps+fit"  # the hybrid (with TF-IDF) that --neural fuses the GPU's QAM models with
STRUCTURES = {
    "structure": OLD_FEATURES,
    "structure+steps": ALL_FEATURES,
    "structure+steps+fit": COLUMNS,
}
THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 20))
CHUNK = 100  # pairs aligned between two writes of the cache


def main() -> None:
    args = _arguments()
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    data = SMOKE_DATA if args.smoke else DATA
    started = time.perf_counter()
    swap, types, gsm8k = qam_pairs(
        data, args.seeds or (5 if args.smoke else None), 4 if args.smoke else GSM8K_QUESTIONS
    )
    if args.failures is not None:
        print_failures(work / "qam_number_swap_cv" / "predictions.jsonl", swap, args.row, args.failures)
        return
    if args.export_folds:
        written = export_folds(swap, gsm8k, args.folds, Path(args.export_folds))
        print(f"{len(written)} fold files written to {args.export_folds} (a kit's qam-cv phase reads them)")
        return
    neural = read_neural(Path(args.neural), args.folds) if args.neural else None
    pairs = [(p["text_a"], p["text_b"]) for p in gsm8k + swap]  # the training pairs first, then seed by seed
    rows = cached_rows(pairs, work / "qam_number_swap_cv" / "rows.npz")
    candidates = cached_candidates(pairs, work / "qam_number_swap_cv" / "candidates.npz")
    print(f"alignment rows of {len(set(pairs))} pairs: {time.perf_counter() - started:.1f} s", flush=True)
    params = {"max_iter": 20} if args.smoke else {}
    with threadpool_limits(1):  # the trees' OpenMP threads fight over a shared CPU: one is faster there
        results = cross_validate(swap, types, gsm8k, rows, candidates, args.folds, params, neural)
    predictions = work / "qam_number_swap_cv" / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(p) + "\n" for p in results.pop("pairs")))
    results.update(
        {
            "split": f"GSM-Plus seeds in {args.folds} folds by seed (shuffled, seed {SEED}); dev: a fifth of the "
            f"training seeds; train adds {len({p['group'] for p in gsm8k})} GSM8K train questions' pairs",
            "seeds": len({p["group"] for p in swap}),
            "features": {name: list(names) for name, names in STRUCTURES.items()},
            "smoke": args.smoke,
            "seconds": round(time.perf_counter() - started, 1),
        }
    )
    if neural is not None:
        results["neural"] = (
            f"{args.neural}: the qam-cv phase of a kit run (QAM models trained on each fold's inner pairs)"
        )
    out = work / "qam_number_swap_cv.json" if args.smoke else RESULTS_NEURAL if neural is not None else RESULTS
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print_tables(results)
    print(f"\nwritten: {out}")


def qam_pairs(data: Path, seeds: int | None, questions: int) -> tuple[list[dict], list[str], list[dict]]:
    """The number-swap pairs of every seed (or the first ``seeds`` seeds), each pair's perturbation type, and
    the hard-negative pairs of ``questions`` GSM8K train questions (the split of ``benchmarks/results.py``)."""
    read = lambda path: [json.loads(line) for line in open(path, encoding="utf-8")]  # noqa: E731
    variants = read(data / "gsmplus" / "variants.jsonl")
    if seeds:
        kept = list(dict.fromkeys(r["seed_question"] for r in variants))[:seeds]
        variants = [r for r in variants if r["seed_question"] in set(kept)]
    swap = build_qam_number_swap(variants)
    group_of = {s.question: s.group for s in group_seeds(variants)}
    kinds: dict[str, list[str]] = {}
    for row in variants:
        kinds.setdefault(group_of[row["seed_question"]], []).append(row["perturbation_type"])
    types = []
    for pair in swap:
        member = re.search(r"-v(\d+)-", pair["id"])
        types.append(kinds[pair["group"]][int(member.group(1))] if member else "seed")
    gsm8k = split_by_group(read(data / "gsm8k" / "train.jsonl"), "question", seed=SEED)["train"]
    hard = build_qam_pairs(gsm8k, random_state=SEED, negatives="hard")
    chosen = set(random.Random(SEED).sample(sorted({p["group"] for p in hard}), min(questions, len(hard))))
    return swap, types, [p for p in hard if p["group"] in chosen]


def cached_rows(pairs: list[tuple[str, str]], path: Path) -> AlignmentRows:
    """Every feature row of ``pairs``, read from ``path`` where it was computed before and written back as
    more are computed (in chunks, so a run that is stopped keeps what it made)."""
    rows = AlignmentRows()
    if path.exists():
        stored = np.load(path)
        if _current(stored, ALL_FEATURES):
            rows.put_many({bytes.fromhex(k): r for k, r in zip(stored["keys"].tolist(), stored["rows"])})
    missing = [p for p in dict.fromkeys(pairs) if pair_key("solution", *p) not in rows]
    for start in range(0, len(missing), CHUNK):
        alignment_features("solution", missing[start : start + CHUNK], names=ALL_FEATURES, rows=rows)
        _write(rows, pairs, path)
        print(f"  aligned {min(start + CHUNK, len(missing))}/{len(missing)}", flush=True)
    return rows


def cached_candidates(pairs: list[tuple[str, str]], path: Path) -> dict[bytes, np.ndarray]:
    """``{pair_key: row}`` of ``CANDIDATE_FEATURES`` of every pair of ``pairs``, read from ``path`` where they
    were computed before (with the same names and parser version), else computed and written there."""
    keys = [pair_key("solution", *p) for p in dict.fromkeys(pairs)]
    if path.exists():
        stored = np.load(path)
        if _current(stored, CANDIDATE_FEATURES):
            known = {bytes.fromhex(k): r for k, r in zip(stored["keys"].tolist(), stored["rows"])}
            if all(k in known for k in keys):
                return known
    started = time.perf_counter()
    unique = list(dict.fromkeys(pairs))
    rows = candidate_features(unique)
    print(f"  candidate features of {len(unique)} pairs: {time.perf_counter() - started:.1f} s", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        path.with_suffix(".tmp.npz"),
        keys=np.array([k.hex() for k in keys]),
        rows=rows,
        names=np.array(CANDIDATE_FEATURES),
        parser=np.array(PARSER_VERSION),
    )
    path.with_suffix(".tmp.npz").replace(path)
    return dict(zip(keys, rows))


def _current(stored, names: tuple[str, ...]) -> bool:
    """Whether rows stored by this benchmark have ``names`` and were read with this parser version."""
    return tuple(stored["names"].tolist()) == names and "parser" in stored and int(stored["parser"]) == PARSER_VERSION


def _write(rows: AlignmentRows, pairs: list[tuple[str, str]], path: Path) -> None:
    keys = [pair_key("solution", *p) for p in dict.fromkeys(pairs)]
    known = rows.get_many(keys)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        path.with_suffix(".tmp.npz"),
        keys=np.array([k.hex() for k in known]),
        rows=np.stack(list(known.values())) if known else np.zeros((0, len(ALL_FEATURES))),
        names=np.array(ALL_FEATURES),
        parser=np.array(PARSER_VERSION),
    )
    path.with_suffix(".tmp.npz").replace(path)


def fit_structure(x: np.ndarray, labels: list[int], names: tuple[str, ...], params: dict) -> AlignmentModel:
    """A QAM ``AlignmentModel`` fitted on the ``names`` columns of feature rows already computed (what
    ``AlignmentModel.fit`` does after aligning, with its default parameters)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = AlignmentModel("qam", params)
    estimator = HistGradientBoostingClassifier(**model.params).fit(x[:, _columns(names)], [str(y) for y in labels])
    model.labels, model.trees, model.features = [int(c) for c in estimator.classes_], _tree_arrays(estimator), names
    return model


def structure_results(model: AlignmentModel, x: np.ndarray) -> list[dict]:
    """``predict``'s results of rows already computed."""
    probabilities = model.predict_proba(x[:, _columns(model.features)])
    return [
        {"label": model.labels[int(p.argmax())], "probabilities": dict(zip(model.labels, p.tolist()))}
        for p in probabilities
    ]


def _columns(names: tuple[str, ...]) -> list[int]:
    return [COLUMNS.index(name) for name in names]


def _accuracy(results: list[dict], gold: list[int]) -> float:
    return sum(r["label"] == g for r, g in zip(results, gold)) / max(len(gold), 1)


def _thresholded(results: list[dict], threshold: float) -> list[dict]:
    return [{**r, "label": int(r["probabilities"].get(1, 0.0) >= threshold)} for r in results]


def choose_hybrid(structure: list[dict], tfidf: list[dict], gold: list[int]) -> dict:
    """The weight on TF-IDF (``choose_weight``), then the threshold on the fused probability of a match, that
    give the best dev accuracy (the smallest among equals; the threshold nearest 0.5)."""
    weight, tried = choose_weight(structure, tfidf, lambda results: _accuracy(results, gold))
    fused = [fuse(d, s, weight) for d, s in zip(structure, tfidf)]
    by_threshold = {t: _accuracy(_thresholded(fused, t), gold) for t in THRESHOLDS}
    best = max(by_threshold.values())
    threshold = min((t for t, a in by_threshold.items() if a == best), key=lambda t: (abs(t - 0.5), t))
    return {"weight": weight, "threshold": threshold, "dev_accuracy": best, "dev_by_weight": tried}


def fold_parts(swap: list[dict], gsm8k: list[dict], folds: int) -> tuple[dict[str, int], list[dict]]:
    """Each seed's fold (the seeds shuffled with ``SEED``) and, per fold, its pairs: ``train_all`` (the other
    folds' pairs), ``inner`` (those of the training seeds outside dev, plus ``gsm8k``), ``dev`` (a fifth of the
    training seeds) and ``test`` (the indices in ``swap`` of the fold's own pairs)."""
    seeds = sorted({p["group"] for p in swap})
    random.Random(SEED).shuffle(seeds)
    fold_of = {seed: k % folds for k, seed in enumerate(seeds)}
    parts = []
    for fold in range(folds):
        train_seeds = [s for s in seeds if fold_of[s] != fold]
        dev_seeds = set(train_seeds[: max(1, len(train_seeds) // 5)])
        train_all = [p for p in swap if fold_of[p["group"]] != fold]
        parts.append(
            {
                "train_all": train_all,
                "inner": [p for p in train_all if p["group"] not in dev_seeds] + gsm8k,
                "dev": [p for p in train_all if p["group"] in dev_seeds],
                "test": [k for k, p in enumerate(swap) if fold_of[p["group"]] == fold],
            }
        )
    return fold_of, parts


def export_folds(swap: list[dict], gsm8k: list[dict], folds: int, directory: Path) -> list[Path]:
    """The folds as QAM task files for a kit's ``qam-cv`` phase (``tasks.kit``): ``qam.cvK-train.jsonl`` (the
    pairs a fold's inner models train on), ``qam.cvK-dev.jsonl`` (its dev pairs) and ``qam.cvK-test.jsonl``
    (its held-out pairs), each row ``id``, ``group``, ``text_a``, ``text_b``, ``label``."""
    directory.mkdir(parents=True, exist_ok=True)
    fields = ("id", "group", "text_a", "text_b", "label")
    written = []
    for fold, part in enumerate(fold_parts(swap, gsm8k, folds)[1]):
        for role, pairs in (("train", part["inner"]), ("dev", part["dev"]), ("test", [swap[k] for k in part["test"]])):
            path = directory / f"qam.cv{fold}-{role}.jsonl"
            path.write_text("".join(json.dumps({f: p[f] for f in fields}) + "\n" for p in pairs), encoding="utf-8")
            written.append(path)
    return written


def read_neural(report: Path, folds: int) -> dict[int, dict[str, dict[str, float]]]:
    """The ``qam-cv`` phase of a ``kit run`` report: per fold, ``{"dev": {pair id: P(match)}, "test": ...}``."""
    phase = json.loads(report.read_text(encoding="utf-8")).get("phases", {}).get("qam-cv")
    if not phase or "folds" not in phase:
        raise SystemExit(f"{report}: no qam-cv phase with folds (its record: {json.dumps(phase)[:300]})")
    neural = {int(fold): entry for fold, entry in phase["folds"].items()}
    if sorted(neural) != list(range(folds)):
        raise SystemExit(f"{report}: folds {sorted(neural)}, but this run has --folds {folds}")
    return neural


def neural_results(neural: dict, fold: int, role: str, pairs: list[dict]) -> list[dict]:
    """The neural model's results (``{"label", "probabilities"}``) of ``pairs``, the fold's ``role`` pairs."""
    matched = neural[fold][role]
    missing = [p["id"] for p in pairs if p["id"] not in matched]
    if missing or len(matched) != len(pairs):
        raise SystemExit(
            f"fold {fold} {role}: the report's pairs are not this run's ({len(matched)} against {len(pairs)}; "
            f"missing e.g. {missing[:3]}): export the folds and run the kit again"
        )
    return [
        {"label": int(matched[p["id"]] >= 0.5), "probabilities": {0: 1 - matched[p["id"]], 1: matched[p["id"]]}}
        for p in pairs
    ]


def cross_validate(
    swap: list[dict],
    types: list[str],
    gsm8k: list[dict],
    rows: AlignmentRows,
    candidates: dict[bytes, np.ndarray],
    folds: int,
    params: dict,
    neural: dict | None = None,
) -> dict:
    """Per test pair, each row's label; pooled accuracy with Wilson intervals, overall and per type; and
    (``pairs``) each test pair's id, type, gold label, fold and per row its probability of a match and whether
    the row was right. ``neural`` (``read_neural``): the rows ``neural`` (the GPU's QAM models, threshold 0.5)
    and ``structure+steps+fit+tfidf+neural`` (that hybrid fused with them, weight and threshold chosen on dev
    as the hybrid's own)."""
    fold_of, parts = fold_parts(swap, gsm8k, folds)
    keys = {id(p): pair_key("solution", p["text_a"], p["text_b"]) for p in swap + gsm8k}
    features = {
        id(p): np.concatenate([rows.get_many([keys[id(p)]])[keys[id(p)]], candidates[keys[id(p)]]])
        for p in swap + gsm8k
    }
    matrix = lambda ps: np.stack([features[id(p)] for p in ps])  # noqa: E731
    pairs = lambda ps: [(p["text_a"], p["text_b"]) for p in ps]  # noqa: E731
    correct: dict[str, list[bool]] = {}
    matched: dict[str, list[float]] = {}  # per row, each test pair's probability of a match
    chosen = []
    for fold, part in enumerate(parts):
        train_all, inner, dev, test = part["train_all"], part["inner"], part["dev"], part["test"]
        dev_gold = [p["label"] for p in dev]
        test_pairs = [swap[k] for k in test]
        test_gold = [p["label"] for p in test_pairs]
        predictions = {}
        # dev: the models of the inner training part choose the hybrids' weights and thresholds
        inner_tfidf = TfidfPredictor("qam", train_tfidf("qam", inner)).predict(pairs(dev))
        tfidf = TfidfPredictor("qam", train_tfidf("qam", train_all + gsm8k))
        predictions["tfidf"] = tfidf.predict(pairs(test_pairs))
        record = {"fold": fold, "n_test": len(test), "n_dev": len(dev), "n_train": len(train_all) + len(gsm8k)}
        for name, names in STRUCTURES.items():
            inner_model = fit_structure(matrix(inner), [p["label"] for p in inner], names, params)
            inner_dev = structure_results(inner_model, matrix(dev))
            choice = choose_hybrid(inner_dev, inner_tfidf, dev_gold)
            model = fit_structure(matrix(train_all + gsm8k), [p["label"] for p in train_all + gsm8k], names, params)
            predictions[name] = structure_results(model, matrix(test_pairs))
            fused = [fuse(d, s, choice["weight"]) for d, s in zip(predictions[name], predictions["tfidf"])]
            predictions[f"{name}+tfidf"] = _thresholded(fused, choice["threshold"])
            record[f"{name}+tfidf"] = {k: v for k, v in choice.items() if k != "dev_by_weight"}
            if neural is not None and name == NEURAL_WITH:  # the GPU's QAM models beside the best hybrid
                dev_hybrid = [fuse(d, s, choice["weight"]) for d, s in zip(inner_dev, inner_tfidf)]
                dev_neural, test_neural = (
                    neural_results(neural, fold, role, ps) for role, ps in (("dev", dev), ("test", test_pairs))
                )
                predictions["neural"] = test_neural
                with_neural = choose_hybrid(dev_hybrid, dev_neural, dev_gold)
                fused_neural = [fuse(h, n, with_neural["weight"]) for h, n in zip(fused, test_neural)]
                predictions[f"{name}+tfidf+neural"] = _thresholded(fused_neural, with_neural["threshold"])
                record[f"{name}+tfidf+neural"] = {k: v for k, v in with_neural.items() if k != "dev_by_weight"}
        # the feature set chosen on dev: the hybrid whose dev accuracy is best (the fewer features among equals)
        best = max(STRUCTURES, key=lambda name: (record[f"{name}+tfidf"]["dev_accuracy"], -len(STRUCTURES[name])))
        predictions["dev-chosen+tfidf"] = predictions[f"{best}+tfidf"]
        record["dev-chosen"] = best
        for row, results in predictions.items():
            marks = correct.setdefault(row, [False] * len(swap))
            scores = matched.setdefault(row, [0.0] * len(swap))
            for k, result, gold in zip(test, results, test_gold):
                marks[k] = result["label"] == gold
                scores[k] = result["probabilities"].get(1, 0.0)
        chosen.append(record)
        print(f"fold {fold}: " + json.dumps({r: round(_accuracy(p, test_gold), 4) for r, p in predictions.items()}))
    pairs_out = [
        {"id": p["id"], "type": t, "label": p["label"], "fold": fold_of[p["group"]]}
        | {row: [round(matched[row][k], 4), correct[row][k]] for row in correct}
        for k, (p, t) in enumerate(zip(swap, types))
    ]
    return {
        "folds": chosen,
        "rows": {row: summary(marks, types) for row, marks in correct.items()},
        "pairs": pairs_out,
    }


def wilson(successes: int, n: int, z: float = 1.959964) -> list[float]:
    """The 95% Wilson score interval of ``successes`` out of ``n``."""
    if n == 0:
        return [0.0, 1.0]
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(centre - half, 4), round(centre + half, 4)]


def summary(marks: list[bool], types: list[str]) -> dict:
    """Accuracy, Wilson interval and n, overall and per perturbation type."""

    def one(selected: list[bool]) -> dict:
        return {
            "accuracy": round(sum(selected) / max(len(selected), 1), 4),
            "ci95": wilson(sum(selected), len(selected)),
            "n": len(selected),
        }

    per_type = {t: one([m for m, k in zip(marks, types) if k == t]) for t in dict.fromkeys(types)}
    return {"all": one(marks), "by_type": per_type}


def print_tables(results: dict) -> None:
    rows = results["rows"]
    print(f"\n## QAM number-swap, {results['split']}: pooled over the test folds ({results['seeds']} seeds)\n")
    print("| model | accuracy | 95% CI | n |")
    print("|---|---:|---|---:|")
    for row, record in rows.items():
        m = record["all"]
        print(f"| {row} | {m['accuracy']:.4f} | {m['ci95'][0]:.4f}-{m['ci95'][1]:.4f} | {m['n']} |")
    types = list(next(iter(rows.values()))["by_type"])
    print("\n### Accuracy per perturbation type (95% CI)\n")
    print("| model | " + " | ".join(f"{t} (n={rows['tfidf']['by_type'][t]['n']})" for t in types) + " |")
    print("|---|" + "---:|" * len(types))
    for row, record in rows.items():
        cells = [record["by_type"][t] for t in types]
        print(
            f"| {row} | "
            + " | ".join(f"{c['accuracy']:.4f} ({c['ci95'][0]:.3f}-{c['ci95'][1]:.3f})" for c in cells)
            + " |"
        )
    print("\n### Chosen on dev, per fold (weight on TF-IDF / threshold; the features of dev-chosen+tfidf)\n")
    for record in results["folds"]:
        cells = [f"{k}: {v['weight']} / {v['threshold']}" for k, v in record.items() if isinstance(v, dict)]
        print(
            f"- fold {record['fold']} (train {record['n_train']}, dev {record['n_dev']}, test {record['n_test']}): "
            + "; ".join(cells)
            + f"; dev-chosen: {record['dev-chosen']}"
        )


_PAIR_FIELDS = ("id", "type", "label", "fold")  # a prediction record's fields other than its rows


def pair_role(pair_id: str) -> str:
    """``seed`` (a seed's own pair), ``pos``, ``neg-seed-solution`` or ``neg-seed-question``, from a pair's id."""
    member = re.search(r"-v\d+-(.+)$", pair_id)
    return member.group(1) if member else "seed"


def print_failures(predictions: Path, swap: list[dict], row: str, shown: int) -> None:
    """The test pairs of ``predictions`` (an earlier run's) that ``row`` got wrong: counts per perturbation type
    and pair role, then the first ``shown`` per type with their question and solution."""
    if not predictions.exists():
        raise SystemExit(f"no predictions at {predictions}: run the benchmark with this --work first")
    by_id = {p["id"]: p for p in swap}
    records = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines() if line.strip()]
    if records and row not in records[0]:
        raise SystemExit(
            f"no row {row!r} in {predictions}; rows: {', '.join(k for k in records[0] if k not in _PAIR_FIELDS)}"
        )
    wrong = [r for r in records if r["id"] in by_id and not r[row][1]]
    counts: dict[tuple[str, str], list[int]] = {}
    for r in records:
        counts.setdefault((r["type"], pair_role(r["id"])), [0, 0])[1] += 1
    for r in wrong:
        counts[(r["type"], pair_role(r["id"]))][0] += 1
    print(f"## {row}: wrong test pairs per type and role\n\n| type | role | wrong | n |\n|---|---|---:|---:|")
    for (kind, role), (bad, n) in sorted(counts.items()):
        print(f"| {kind} | {role} | {bad} | {n} |")
    for kind in dict.fromkeys(r["type"] for r in records):
        for r in [r for r in wrong if r["type"] == kind][:shown]:
            pair = by_id[r["id"]]
            print(f"\n### {r['id']} ({kind}, gold {r['label']}, P(match) {r[row][0]}, fold {r['fold']})")
            print(f"question: {pair['text_a']}\nsolution:\n{pair['text_b']}")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results", help="where the cache of alignment rows goes")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=None, help="only the first N seeds (a quick run)")
    parser.add_argument("--smoke", action="store_true", help="the smoke data, 5 seeds (WORK/smoke)")
    parser.add_argument(
        "--failures", type=int, metavar="N", help="print an earlier run's wrong test pairs (N per type) and stop"
    )
    parser.add_argument("--row", default="structure+steps+fit+tfidf", help="the row --failures reads")
    parser.add_argument(
        "--export-folds", metavar="DIR", help="write the folds as QAM task files for a kit's qam-cv phase and stop"
    )
    parser.add_argument(
        "--neural", metavar="REPORT", help="a kit run's report.json: add the rows of its qam-cv phase's models"
    )
    args = parser.parse_args()
    if args.folds < 2:
        parser.error("--folds must be at least 2")
    if args.failures is not None and args.failures < 0:
        parser.error("--failures must be at least 0")
    return args


if __name__ == "__main__":
    main()
