"""Near-duplicate grouping (``mathgraph dedupe``): precision and recall of "the same problem" pairs,
thresholds chosen on a dev part, figures with 95% Wilson intervals on the test part.

    python benchmarks/dedupe_quality.py --work WORK [--seeds 200] [--math 200] [--gsm8k 1000]

Two banks, dev and test, built from the shared data with disjoint problems (GSM-Plus seeds split in half,
seeded; MATH and GSM8K problems likewise). Each holds, for each of its GSM-Plus seeds, the seed question, an
exact copy, a whitespace copy we make (spaces doubled, sentences on new lines) and the "problem understanding"
variant (a paraphrase with the same numbers and question), all one problem; and the seed's seven other
variants, each a problem of its own (three change numbers: numerical substitution, digit expansion,
integer-decimal-fraction conversion; four change the problem otherwise). Then MATH train problems, each with a
LaTeX-formatting copy we make (``\\(..\\)`` for ``$..$``, ``\\dfrac`` for ``\\frac``, braces and spaces
added), and GSM8K train questions, each a problem of its own. A pair of rows is positive when both come from
one problem; precision is over the pairs grouped, recall over the positive pairs.

The candidates (MiniLM, ``text:minilm``, vectors cached in ``--cache``) and their alignments are computed once
per bank at the loosest setting; each setting of the grid is then applied to them (``same_problem``, groups by
``group_ids``), as ``find_duplicates`` does. The setting with the best dev F1 is reported on test, and
``find_duplicates`` is run end to end on the test bank with it to check that it gives the same groups.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from itertools import combinations
from pathlib import Path

import numpy as np
from index_scale import DATA, cached_vectors, read_texts  # noqa: E402 (benchmarks/ is on the path of its scripts)

from smoke import SMOKE_DATA  # noqa: E402

NUMBER_CHANGES = ("numerical substitution", "digit expansion", "integer-decimal-fraction conversion")
OTHER_CHANGES = ("adding operation", "reversing operation", "distraction insertion", "critical thinking")
GRID = {
    "min_cosine": (0.7, 0.75, 0.8, 0.85, 0.9, 0.95),
    "min_question_similarity": (0.0, 0.2, 0.4, 0.6, 0.8),
    "check_sentences": (True, False),
}
SMOKE_GRID = {"min_cosine": (0.7, 0.9), "min_question_similarity": (0.0, 0.5), "check_sentences": (True,)}
NEIGHBOURS = 10


# --------------------------------------------------------------------------- the banks
def whitespace_copy(text: str, rng: np.random.Generator) -> str:
    """``text`` with its spacing changed: every sentence on a new line or after two spaces, spaces doubled."""
    text = re.sub(r"([.?!]) ", lambda m: m.group(1) + ("\n" if rng.random() < 0.5 else "  "), text)
    return "  " + re.sub(r" (?=\w)", lambda m: "  " if rng.random() < 0.2 else " ", text) + " \n"


def latex_copy(text: str) -> str:
    """``text`` with its LaTeX written another way: ``\\(..\\)`` for ``$..$``, ``\\dfrac`` for ``\\frac``, one
    character exponents and subscripts in braces, spaces around ``=``, ``+`` and ``-`` in formulas."""

    def formula(match: re.Match) -> str:
        body = re.sub(r"\\frac(?![a-zA-Z])", r"\\dfrac", match.group(1))
        body = re.sub(r"([\^_])(\w)", r"\1{\2}", body)
        body = re.sub(r"\s*([=+-])\s*", r" \1 ", body)
        return f"\\({body}\\)"

    return re.sub(r"(?<![\\$])\$([^$]+)\$(?!\$)", formula, text)


def build_banks(args) -> dict[str, list[dict]]:
    """``{"dev": items, "test": items}``: each item ``{"text", "origin", "kind"}``."""
    rng = np.random.default_rng(0)
    variants = [json.loads(line) for line in open(args.data / "gsmplus" / "variants.jsonl", encoding="utf-8")]
    seeds = list(dict.fromkeys(v["seed_question"] for v in variants))
    seeds = [seeds[i] for i in rng.permutation(len(seeds))[: args.seeds]]
    math = [t for t in read_texts(args.data / "math" / "train.jsonl", "problem") if t.count("$") >= 2]
    math = [math[i] for i in rng.permutation(len(math))[: args.math]]
    gsm8k = read_texts(args.data / "gsm8k" / "train.jsonl", "question")
    gsm8k = [gsm8k[i] for i in rng.permutation(len(gsm8k))[: args.gsm8k]]
    banks = {"dev": [], "test": []}
    for n, seed in enumerate(seeds):
        bank = banks["dev" if n % 2 == 0 else "test"]
        origin = f"seed {n}"
        bank += [
            {"text": seed, "origin": origin, "kind": "seed"},
            {"text": seed, "origin": origin, "kind": "exact copy"},
            {"text": whitespace_copy(seed, rng), "origin": origin, "kind": "whitespace copy"},
        ]
        for v in variants:
            if v["seed_question"] == seed:
                same = v["perturbation_type"] == "problem understanding"
                kind = "paraphrase" if same else v["perturbation_type"]
                bank.append({"text": v["question"], "origin": origin if same else f"{origin}: {kind}", "kind": kind})
    for n, problem in enumerate(math):
        bank = banks["dev" if n % 2 == 0 else "test"]
        bank += [
            {"text": problem, "origin": f"math {n}", "kind": "math"},
            {"text": latex_copy(problem), "origin": f"math {n}", "kind": "latex copy"},
        ]
    for n, question in enumerate(gsm8k):
        banks["dev" if n % 2 == 0 else "test"].append({"text": question, "origin": f"gsm8k {n}", "kind": "gsm8k"})
    return banks


# --------------------------------------------------------------------------- candidates, once per bank
class CachedMiniLM:
    """MiniLM vectors read from the benchmark's cache (encoded there first where missing)."""

    def __init__(self, cache: Path):
        self.cache = cache

    def encode(self, texts, batch_size=32):
        return cached_vectors(list(texts), self.cache)

    def identity(self):
        return {"kind": "benchmark.minilm", "weights_sha256": "text:minilm", "mode": "mean", "dimension": 384}


def aligned_candidates(texts: list[str], embedder, loosest) -> tuple[np.ndarray, list[int], list[tuple]]:
    """What every setting needs: the copies, the representatives, and each candidate pair (at the loosest
    setting) with its cosine, alignment and graphs, as ``find_duplicates`` computes them."""
    import tempfile

    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.graph_cache import parse_cached
    from mathgraph.tasks.search.dedupe import candidate_pairs, copy_groups
    from mathgraph.tasks.search.index import write_index

    representatives, copy_of = copy_groups(texts)
    unique = [texts[i] for i in representatives]
    with tempfile.TemporaryDirectory() as directory:
        index = write_index(
            directory, [embedder.encode(unique)], ({"text": t} for t in unique), "text", embedder.identity()
        )
        candidates = candidate_pairs(index, loosest)
        del index
    involved = sorted({i for a, b, _ in candidates for i in (a, b)})
    graphs = dict(zip(involved, parse_cached([unique[i] for i in involved])))
    aligned = [
        (a, b, cosine, align_problems(graphs[a], graphs[b]), graphs[a], graphs[b]) for a, b, cosine in candidates
    ]
    return copy_of, representatives, aligned


def groups_for(settings, copy_of, representatives, aligned) -> np.ndarray:
    """The groups ``find_duplicates`` gives with ``settings``, from the candidates of the loosest setting."""
    from mathgraph.tasks.search.dedupe import group_ids, same_problem

    pairs = [(int(copy_of[i]), i) for i in range(len(copy_of)) if copy_of[i] != i]
    for a, b, cosine, alignment, graph_a, graph_b in aligned:
        if cosine >= settings.min_cosine and same_problem(alignment, graph_a, graph_b, settings) is None:
            pairs.append((representatives[a], representatives[b]))
    return group_ids(len(copy_of), pairs)


# --------------------------------------------------------------------------- scoring
def pairs_in(labels) -> set[tuple[int, int]]:
    """Every pair of rows with the same label."""
    members: dict = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    return {pair for rows in members.values() for pair in combinations(rows, 2)}


def quantity_values(copy_of, representatives, aligned) -> list:
    """For each row, the multiset of its quantities' values (``None`` for a row in no candidate pair)."""
    from collections import Counter

    by_representative = {}
    for a, b, _, _, graph_a, graph_b in aligned:
        for row, graph in ((representatives[a], graph_a), (representatives[b], graph_b)):
            by_representative[row] = Counter(q.value for q in graph.quantities())
    return [by_representative.get(int(copy_of[i])) for i in range(len(copy_of))]


def score(groups: np.ndarray, items: list[dict], values: list) -> dict:
    """Precision and recall of the grouped pairs, with counts by kind (a wrong pair of rows whose quantities
    have the same values, ``values``, is marked so: GSM-Plus calls "2/5" -> "0.4 times" another problem)."""
    predicted, positive = pairs_in(groups.tolist()), pairs_in([item["origin"] for item in items])
    correct = predicted & positive
    precision = len(correct) / len(predicted) if predicted else 1.0
    recall = len(correct) / len(positive) if positive else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    by_kind: dict[str, list[int]] = {}
    for a, b in positive:
        kind = _positive_kind(items[a]["kind"], items[b]["kind"])
        by_kind.setdefault(kind, [0, 0])[0] += (a, b) in correct
        by_kind[kind][1] += 1
    wrong: dict[str, int] = {}
    for a, b in predicted - positive:
        kind = _negative_kind(items[a], items[b])
        if values[a] is not None and values[a] == values[b]:
            kind += " (the same values)"
        wrong[kind] = wrong.get(kind, 0) + 1
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "predicted": len(predicted),
        "positive": len(positive),
        "correct": len(correct),
        "recall_by_kind": by_kind,
        "false_pairs": wrong,
    }


def _positive_kind(a: str, b: str) -> str:
    for kind in ("paraphrase", "latex copy", "whitespace copy"):
        if kind in (a, b):
            return kind
    return "exact copy"


def _negative_kind(a: dict, b: dict) -> str:
    family_a, family_b = a["origin"].split(":")[0], b["origin"].split(":")[0]
    if family_a != family_b or not family_a.startswith("seed"):
        return "unrelated problems"
    changed = a["kind"] if a["kind"] in NUMBER_CHANGES + OTHER_CHANGES else b["kind"]
    return "other numbers" if changed in NUMBER_CHANGES else "variant: " + changed


def interval(share: float, n: int) -> str:
    """The 95% Wilson interval of a share of ``n`` (the project's ``wilson``), or a dash for none."""
    from mathgraph.tasks.release.build import wilson

    return str(wilson(share, n)) if n else "-"


# --------------------------------------------------------------------------- the run
def main() -> None:
    from mathgraph.tasks.release.build import machine
    from mathgraph.tasks.search.dedupe import DedupeSettings, find_duplicates

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--math", type=int, default=200)
    parser.add_argument("--gsm8k", type=int, default=1000)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/mathgraph-bench"))
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    args.data = DATA
    if args.smoke:  # the smoke data (benchmarks/smoke.py): runs in a clean clone without ../shared
        args.seeds, args.math, args.gsm8k, args.cache = 4, 4, 6, args.work / "cache"
        args.data = SMOKE_DATA
    args.work.mkdir(parents=True, exist_ok=True)
    grid = SMOKE_GRID if args.smoke else GRID
    settings_grid = [
        DedupeSettings(NEIGHBOURS, c, q, s)
        for c in grid["min_cosine"]
        for q in grid["min_question_similarity"]
        for s in grid["check_sentences"]
    ]
    loosest = DedupeSettings(NEIGHBOURS, min(grid["min_cosine"]), 0.0, False)
    banks = build_banks(args)
    embedder = CachedMiniLM(args.cache)
    results, timing, prepared = {}, {}, {}
    for part, items in banks.items():
        start = time.perf_counter()
        prepared[part] = aligned_candidates([item["text"] for item in items], embedder, loosest)
        timing[part] = (time.perf_counter() - start, len(prepared[part][2]))
        values = quantity_values(*prepared[part])
        results[part] = [(s, score(groups_for(s, *prepared[part]), items, values)) for s in settings_grid]
    # the best dev F1; on a tie the higher precision, then the higher cosine (fewer candidates to align)
    best, _ = max(
        zip(settings_grid, results["dev"]),
        key=lambda sr: (sr[1][1]["f1"], sr[1][1]["precision"], sr[0].min_cosine),
    )
    test = dict(results["test"])[best]
    start = time.perf_counter()
    end_to_end = find_duplicates([item["text"] for item in banks["test"]], embedder, best)
    end_to_end_s = time.perf_counter() - start
    same = end_to_end.groups.tolist() == groups_for(best, *prepared["test"]).tolist()
    (args.work / "dedupe_quality.json").write_text(
        json.dumps(
            {"best": best.__dict__, "test": test, "grid": [(s.__dict__, r) for s, r in results["dev"]]}, indent=2
        )
    )
    print(
        f"## Near-duplicates: dev {len(banks['dev'])} rows, test {len(banks['test'])} rows ({args.seeds} GSM-Plus seeds, {args.math} MATH, {args.gsm8k} GSM8K)"
    )
    print(
        f"\n{machine()}; candidates: MiniLM, {NEIGHBOURS} neighbours; candidate pairs aligned: dev {timing['dev'][1]} ({timing['dev'][0]:.0f} s), test {timing['test'][1]} ({timing['test'][0]:.0f} s)\n"
    )
    print(
        "### Dev: the grid (best F1 first, 10 rows)\n\n| min cosine | min question similarity | check sentences | precision | recall | F1 |\n|---:|---:|---|---:|---:|---:|"
    )
    for s, r in sorted(results["dev"], key=lambda sr: (-sr[1]["f1"], -sr[1]["precision"]))[:10]:
        print(
            f"| {s.min_cosine} | {s.min_question_similarity} | {s.check_sentences} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} |"
        )
    print(
        f"\nChosen on dev: min_cosine {best.min_cosine}, min_question_similarity {best.min_question_similarity}, check_sentences {best.check_sentences}\n"
    )
    print("### Test\n\n| measure | value | 95% interval | n |\n|---|---:|---|---:|")
    print(
        f"| precision | {test['precision']:.3f} | {interval(test['precision'], test['predicted'])} | {test['predicted']} pairs grouped |"
    )
    print(
        f"| recall | {test['recall']:.3f} | {interval(test['recall'], test['positive'])} | {test['positive']} positive pairs |"
    )
    print("\n| positive pairs (test) | found | of | recall | 95% interval |\n|---|---:|---:|---:|---|")
    for kind, (found, total) in sorted(test["recall_by_kind"].items()):
        print(f"| {kind} | {found} | {total} | {found / total:.3f} | {interval(found / total, total)} |")
    print("\n| pairs grouped wrongly (test) | count |\n|---|---:|")
    for kind, count in sorted(test["false_pairs"].items()) or [("none", 0)]:
        print(f"| {kind} | {count} |")
    print(
        f"\nfind_duplicates end to end on the test bank: {end_to_end.group_count} groups in {end_to_end_s:.0f} s; same groups as the grid's: {same}"
    )


if __name__ == "__main__":
    main()
