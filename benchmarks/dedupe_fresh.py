"""Near-duplicate grouping on fresh families nobody read while the rules were written: the shipped default and
``--strict`` of ``mathgraph dedupe``, beside MiniLM and TF-IDF cosine-threshold baselines.

    python benchmarks/dedupe_fresh.py --work WORK --split dev [--failures]
    python benchmarks/dedupe_fresh.py --work WORK --split test      # or test2, the second test part
    python benchmarks/dedupe_fresh.py --work WORK --split test --smoke   # two families a split, a tiny bank

The families are ``benchmarks/data/dedupe_families_gsm8k.jsonl`` (120 GSM8K train questions: 40 dev, 40 test, 40
test2, each with a paraphrase, a numerical substitution, a distraction insertion and a reversing or adding
operation written by hand; ``dedupe_families_gsm8k.md`` says how). To each seed a formatting copy is added
(``whitespace_copy``), as ``dedupe_quality.py`` does for GSM-Plus: the seed, its copy and its paraphrase are one
problem, every other variant a problem of its own. Every part of the families goes into ``dedupe_quality.py``'s bank
(200 GSM-Plus families, 200 MATH problems with copies, 500 GSM8K questions) as one bank; only the pairs that touch
a family of ``--split`` are scored: pair precision (every grouped pair with a row of those families, distractors
included) and recall (pairs of one problem), with 95% intervals from a bootstrap over the families, recall per kind
of positive pair and the share of each kind of variant grouped with another problem (Wilson intervals).

Baselines: every pair of rows whose MiniLM (or TF-IDF) cosine is at least a threshold is a pair of one problem
(pair by pair, no groups, so no chains), the threshold chosen on the dev families (the best F1 on a grid of 0.01
from 0.5), so the test figures of the baselines are held out too. ``--failures`` prints, for the families scored,
each positive pair missed (with the rule that rejected it) and each wrong pair grouped (with the rule that
confirmed it): read them on dev only.
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import combinations
from pathlib import Path

import numpy as np
from dedupe_quality import (  # noqa: E402
    DATA,
    NEIGHBOURS,
    CachedMiniLM,
    Evidence,
    build_bank,
    f_measures,
    interval,
    whitespace_copy,
)

from smoke import SMOKE_DATA  # noqa: E402 (benchmarks/ is on the path of its scripts)

FAMILIES = Path(__file__).resolve().parent / "data" / "dedupe_families_gsm8k.jsonl"
VARIANT_KINDS = ("numerical substitution", "distraction insertion", "reversing operation", "adding operation")
THRESHOLDS = np.round(np.arange(0.50, 1.0, 0.01), 2)
BOOTSTRAP = 1000


def read_families(path: Path) -> list[dict]:
    """The fresh families of ``path`` (JSONL, one family a line)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def fresh_rows(families: list[dict], rng: np.random.Generator) -> list[dict]:
    """The bank rows of ``families``: ``{"text", "origin", "kind", "family", "split"}``; the seed, a formatting
    copy of it and every variant marked ``same_problem`` share the seed's origin, every other variant has its
    own."""
    rows = []
    for fam in families:
        name, origin, split = f"fresh {fam['family']}", f"fresh {fam['family']}", fam["split"]
        rows.append({"text": fam["seed"], "origin": origin, "kind": "seed", "family": name, "split": split})
        copy = whitespace_copy(fam["seed"], rng)
        rows.append({"text": copy, "origin": origin, "kind": "formatting copy", "family": name, "split": split})
        for v in fam["variants"]:
            own = origin if v["same_problem"] else f"{origin}: {v['kind']}"
            rows.append({"text": v["text"], "origin": own, "kind": v["kind"], "family": name, "split": split})
    return rows


def touching_pairs(labels, scored: set[int]) -> set[tuple[int, int]]:
    """Every pair of rows with the same label where at least one row is in ``scored``."""
    members: dict = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    return {
        pair
        for group in members.values()
        if len(group) > 1 and any(i in scored for i in group)
        for pair in combinations(sorted(group), 2)
        if pair[0] in scored or pair[1] in scored
    }


def score_fresh(groups, items: list[dict], scored: set[int], pairs: set | None = None) -> dict:
    """Counts for the rows ``scored``: pairs grouped (touching them; or ``pairs``, the pairs a baseline
    predicts, where given), positive and correct, per family (a pair counts for the family of its scored row,
    the first where both are), recall per kind of positive pair (the kind of its less faithful row), and per
    kind of row the rows grouped with another problem."""
    predicted = touching_pairs(list(groups), scored) if pairs is None else pairs
    positive = touching_pairs([item["origin"] for item in items], scored)
    correct = predicted & positive
    per_family: dict[str, list[int]] = {}
    for slot, pairs in enumerate((predicted, positive, correct)):
        for a, b in pairs:
            family = items[a if a in scored else b]["family"]
            per_family.setdefault(family, [0, 0, 0])[slot] += 1
    order = ("paraphrase", "formatting copy")
    by_kind: dict[str, list[int]] = {}
    for a, b in positive:
        kind = next((k for k in order if k in (items[a]["kind"], items[b]["kind"])), None)
        names = {"paraphrase": "paraphrase ~ seed or its copy", "formatting copy": "formatting copy ~ seed"}
        kind = names[kind] if kind else " ~ ".join(sorted((items[a]["kind"], items[b]["kind"])))
        by_kind.setdefault(kind, [0, 0])
        by_kind[kind][0] += (a, b) in correct
        by_kind[kind][1] += 1
    wrong = predicted - positive
    wrong_rows = {i for pair in wrong for i in pair}
    merged: dict[str, list[int]] = {}
    for i in sorted(scored):
        merged.setdefault(items[i]["kind"], [0, 0])
        merged[items[i]["kind"]][0] += i in wrong_rows
        merged[items[i]["kind"]][1] += 1
    return {
        "predicted": len(predicted),
        "positive": len(positive),
        "correct": len(correct),
        "per_family": per_family,
        "recall_by_kind": by_kind,
        "merged_by_kind": merged,
        "wrong": sorted(wrong),
        "missed": sorted(positive - predicted),
    }


def bootstrap(counts: dict, families: list[str], rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """95% intervals of pair precision and recall, resampling ``families`` with replacement."""
    table = np.array([counts["per_family"].get(f, [0, 0, 0]) for f in families], dtype=float)
    draws = table[rng.integers(0, len(families), size=(BOOTSTRAP, len(families)))].sum(axis=1)
    precision = draws[:, 2] / np.maximum(draws[:, 0], 1)
    precision[draws[:, 0] == 0] = 1.0
    recall = draws[:, 2] / np.maximum(draws[:, 1], 1)
    return [float(np.percentile(precision, q)) for q in (2.5, 97.5)], [
        float(np.percentile(recall, q)) for q in (2.5, 97.5)
    ]


def near_pairs(similarity: np.ndarray, scored: set[int], floor: float) -> list[tuple[int, int, float]]:
    """``(a, b, similarity)`` with ``a < b``, at least one of them in ``scored``, for every pair of rows whose
    ``similarity`` is at least ``floor``."""
    out = {}
    for i in sorted(scored):
        for j in np.nonzero(similarity[i] >= floor)[0].tolist():
            if j != i:
                out[min(i, j), max(i, j)] = float(similarity[i, j])
    return [(a, b, v) for (a, b), v in sorted(out.items())]


def tfidf_similarity(texts: list[str]) -> np.ndarray:
    """The TF-IDF cosine of every pair of ``texts`` (scikit-learn's ``TfidfVectorizer``, fitted on them)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    matrix = TfidfVectorizer(sublinear_tf=True).fit_transform(texts)
    return (matrix @ matrix.T).toarray().astype(np.float32)


def threshold_baselines(texts, embedder, items: list[dict], scored: dict, split: str, results: dict) -> dict:
    """The MiniLM and TF-IDF cosine-threshold baselines: every pair of rows at or above a threshold is one problem,
    the threshold the best F1 (then precision) on ``scored["dev"]`` over ``THRESHOLDS``; each baseline's counts on
    ``split`` go into ``results`` under its label. Returns the thresholds chosen."""
    vectors = np.asarray(embedder.encode(texts), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chosen = {}
    for name, similarity in (("MiniLM cosine", vectors @ vectors.T), ("TF-IDF cosine", tfidf_similarity(texts))):
        near = {part: near_pairs(similarity, rows, THRESHOLDS[0]) for part, rows in scored.items()}
        del similarity

        def baseline(part: str, t: float, near: dict = near) -> dict:
            return score_fresh(None, items, scored[part], {(a, b) for a, b, v in near[part] if v >= t})

        on_dev = {t: baseline("dev", t) for t in THRESHOLDS}
        best = max(THRESHOLDS, key=lambda t: (f_measures(on_dev[t])[2], f_measures(on_dev[t])[0]))
        chosen[name] = float(best)
        results[f"{name} >= {best:.2f} (chosen on dev)"] = on_dev[best] if split == "dev" else baseline(split, best)
    return chosen


def row_line(name: str, counts: dict, families: list[str], rng) -> str:
    """One table row: precision and recall with their bootstrap intervals, F1, and the wrongly grouped shares
    of the variants that change the problem."""
    p, r, f1 = f_measures(counts)
    p_ci, r_ci = bootstrap(counts, families, rng)
    cells = [
        f"{p:.3f} [{p_ci[0]:.3f}, {p_ci[1]:.3f}] (n {counts['predicted']})",
        f"{r:.3f} [{r_ci[0]:.3f}, {r_ci[1]:.3f}] (n {counts['positive']})",
        f"{f1:.3f}",
    ]
    return f"| {name} | " + " | ".join(cells) + " |"


def print_kinds(results: dict) -> None:
    """Recall per kind of positive pair and wrongly grouped rows per kind of row, one column a method."""
    for title, field in (("positive pairs", "recall_by_kind"), ("rows grouped with another problem", "merged_by_kind")):
        print(f"\n| {title} | " + " | ".join(results) + " |\n|---|" + "---:|" * len(results))
        kinds = sorted({k for c in results.values() for k in c[field]}, key=lambda k: (k in VARIANT_KINDS, k))
        for kind in kinds:
            cells = []
            for c in results.values():
                count, total = c[field].get(kind, [0, 0])
                cells.append(f"{count}/{total} = {count / max(total, 1):.3f} {interval(count / max(total, 1), total)}")
            print(f"| {kind} | " + " | ".join(cells) + " |")


def print_failures(name: str, counts: dict, items: list[dict], evidence: Evidence, settings) -> None:
    """The positive pairs ``name`` missed and the wrong pairs it grouped, each with the rule that decided."""
    from mathgraph.tasks.search.dedupe import decide

    index = {rep: k for k, rep in enumerate(evidence.representatives)}

    def verdict(a: int, b: int) -> str:
        ra, rb = index.get(int(evidence.copy_of[a])), index.get(int(evidence.copy_of[b]))
        if ra is None or rb is None or ra == rb:
            return "copy"
        pair = (min(ra, rb), max(ra, rb))
        candidate = pair in {(x, y) for x, y, _ in evidence.candidates}
        e = evidence.of(*pair)
        same, rule = decide(e, settings)
        note = "" if candidate else " (not a candidate)"
        return f"{'same' if same else 'not same'}: {rule}; cosine {e.cosine:.3f}{note}; {e.to_dict()}"

    for title, pairs in (("missed", counts["missed"]), ("grouped wrongly", counts["wrong"])):
        print(f"\n#### {name}: pairs {title} ({len(pairs)})")
        for a, b in pairs:
            print(
                f"\n- {items[a]['kind']} ~ {items[b]['kind']} ({items[a]['family']} / {items[b]['family']}): "
                f"{verdict(a, b)}"
            )
            print(f"  - A: {' '.join(items[a]['text'].split())}\n  - B: {' '.join(items[b]['text'].split())}")


def main() -> None:
    from mathgraph.tasks.release.build import machine
    from mathgraph.tasks.search.dedupe import STRICT, DedupeSettings, find_duplicates

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--split", choices=("dev", "test", "test2"), required=True)
    parser.add_argument("--families", type=Path, default=FAMILIES)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/mathgraph-bench"))
    parser.add_argument("--failures", action="store_true", help="print the failing pairs of the split scored")
    parser.add_argument("--end-to-end", action="store_true", help="also check find_duplicates gives the same groups")
    parser.add_argument("--smoke", action="store_true", help="two families a split in the smoke data's small bank")
    args = parser.parse_args()
    args.data, args.seeds, args.math, args.gsm8k = DATA, 200, 200, 500
    families = read_families(args.families)
    if args.smoke:  # the smoke data (benchmarks/smoke.py): runs in a clean clone without ../shared
        args.data, args.seeds, args.math, args.gsm8k, args.cache = SMOKE_DATA, 4, 2, 4, args.work / "cache"
        families = [f for split in ("dev", "test", "test2") for f in [f for f in families if f["split"] == split][:2]]
    args.work.mkdir(parents=True, exist_ok=True)
    items = build_bank(args) + fresh_rows(families, np.random.default_rng(3))
    texts = [item["text"] for item in items]
    embedder = CachedMiniLM(args.cache)
    start = time.perf_counter()
    evidence = Evidence(texts, embedder, 0.7)
    prepare_s = time.perf_counter() - start
    scored = {
        split: {i for i, it in enumerate(items) if it.get("split") == split} for split in ("dev", "test", "test2")
    }
    names = {split: sorted({items[i]["family"] for i in scored[split]}) for split in scored}
    methods = {"default": DedupeSettings(), "--strict": STRICT}
    results, groups = {}, {}
    for name, settings in methods.items():
        groups[name] = evidence.groups(settings)
        results[name] = score_fresh(groups[name], items, scored[args.split])
    chosen = threshold_baselines(texts, embedder, items, scored, args.split, results)
    rng = np.random.default_rng(2)
    n_fam = len(names[args.split])
    print(f"## Dedupe on fresh GSM8K families: {args.split} ({n_fam} families), inside a bank of {len(items)} rows")
    print(
        f"\n{machine()}; candidates: MiniLM, {NEIGHBOURS} neighbours, cosine >= 0.7: {len(evidence.candidates)} "
        f"pairs aligned ({prepare_s:.0f} s with encoding and parsing). Scored: the {len(scored[args.split])} rows "
        f"of the {args.split} families (seed, formatting copy, paraphrase: one problem; numerical substitution, "
        "distraction insertion, reversing or adding operation: each its own), every grouped pair that touches "
        "them. Intervals: bootstrap over families (pairs), Wilson (per kind)."
    )
    print("\n| method | pair precision [95%] | pair recall [95%] | F1 |\n|---|---:|---:|---:|")
    for name, counts in results.items():
        print(row_line(name, counts, names[args.split], rng))
    print_kinds(results)
    if args.end_to_end:
        same = all(
            find_duplicates(texts, embedder, s).groups.tolist() == groups[name].tolist() for name, s in methods.items()
        )
        print(f"\nfind_duplicates end to end gives the same groups: {same}")
    if args.failures:
        for name, settings in methods.items():
            print_failures(name, results[name], items, evidence, settings)
    out = {
        "split": args.split,
        "families": n_fam,
        "thresholds_chosen_on_dev": chosen,
        "results": {
            name: {
                **{k: v for k, v in c.items() if k not in ("per_family", "wrong", "missed")},
                "precision_recall_f1": f_measures(c),
            }
            for name, c in results.items()
        },
    }
    (args.work / f"dedupe_fresh_{args.split}.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
