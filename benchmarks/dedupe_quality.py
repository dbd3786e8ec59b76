"""Near-duplicate grouping (``mathgraph dedupe``): pair precision and recall of "the same problem", per kind of
pair, held out by grouped cross-validation, for the default settings and for ``--strict``.

    python benchmarks/dedupe_quality.py --work WORK [--seeds 200] [--math 200] [--gsm8k 500] [--folds 5]

One bank built from the shared data. **GSM-Plus families** (all 200 seeds by default): the seed, a formatting
copy we make (spaces doubled, sentences on new lines) and its "problem understanding" variant (a paraphrase with
the same numbers and question) are one problem; each of the seed's seven other variants is a problem of its own
(three change numbers: numerical substitution, digit expansion, integer-decimal-fraction conversion; four change
the problem otherwise: adding operation, reversing operation, distraction insertion, critical thinking).
**MATH-style copies** we make from MATH train problems: a LaTeX-formatting copy (``\\(..\\)``, ``\\dfrac``,
braces, spaces), a reworded copy (its prose rewritten by fixed phrase rules: "Find" -> "Determine", "What is"
-> "Compute" ...), a copy with renamed variables (a letter of its formulas renamed everywhere), all the same
problem, and a **near-miss**: the problem with one number changed, another problem that must not be grouped.
**GSM8K** train questions, each a problem of its own, as distractors.

Families (a GSM-Plus seed with its variants, a MATH problem with its copies) are split into ``--folds`` folds;
for each fold, the settings of ``GRID`` (small numbers, units, values said another way, and how edited copies
are read) are chosen on the other folds (``default``: the best F1; ``strict``: with complete linkage, the best
recall at a precision of at least ``STRICT_PRECISION``) and scored on it. Held-out figures
are pooled over the folds: pair precision and recall with 95% intervals from a bootstrap over families, recall
per kind of positive pair, and per kind of variant the share of its rows grouped with another problem (Wilson
intervals). The candidates (MiniLM, ``text:minilm``, vectors cached in ``--cache``) and each candidate pair's
evidence are computed once at the loosest setting; each setting is applied to them as ``find_duplicates`` does,
which is then run end to end with the shipped defaults and with ``STRICT`` to check it gives the same groups.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from itertools import combinations, product
from pathlib import Path

import numpy as np
from index_scale import DATA, cached_vectors, read_texts  # noqa: E402 (benchmarks/ is on the path of its scripts)

from smoke import SMOKE_DATA  # noqa: E402

NUMBER_CHANGES = ("numerical substitution", "digit expansion", "integer-decimal-fraction conversion")
OTHER_CHANGES = ("adding operation", "reversing operation", "distraction insertion", "critical thinking")
NEAR_MISS = "math: one number changed"
GRID = {
    "min_cosine": (0.7,),
    "small_numbers": (1, 2),
    "check_units": (True, False),
    "max_edit_words": (None, 3),
    "implied_values": (True, False),
    "min_kept_share": (0.5, 0.1),
    "max_question_words": (None, 1),
    "max_changed_words": (None, 2, 3),
    "linkage": ("complete",),
}
SMOKE_GRID = {"min_cosine": (0.7,), "small_numbers": (0, 1), "linkage": ("single", "complete")}
STRICT_PRECISION = 0.99
# The families whose pairs were read while the rules of tasks/search/dedupe.py and the quantity reader's fixes for
# it were written (every GSM-Plus family of this bank, and MATH problems 0-59); the figures are also given without
# them. The GSM-Plus figures are held out for the settings only, not for the rules.
DESIGN_FAMILIES = {f"gsm-plus {n}" for n in range(200)} | {f"math {n}" for n in range(60)}
NEIGHBOURS = 10
BOOTSTRAP = 1000
# Phrase rules of the reworded MATH copies: the first of each pair rewritten as the second.
REWORDINGS = (
    (r"\bWhat is\b", "Compute"),
    (r"\bFind\b", "Determine"),
    (r"\bCompute\b", "Calculate"),
    (r"\bEvaluate\b", "Work out"),
    (r"\bSimplify\b", "Write in simplest form"),
    (r"\bHow many\b", "What is the number of"),
    (r"\bLet\b", "Suppose"),
    (r"\bIf\b", "Given that"),
    (r"\bSuppose\b", "Assume"),
    (r"\bthe value of\b", "the numerical value of"),
    (r"\bpositive integers\b", "positive whole numbers"),
    (r"\bsmallest\b", "least"),
    (r"\blargest\b", "greatest"),
)


# --------------------------------------------------------------------------- the bank
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


# A formula of a MATH problem: $$..$$, $..$, \[..\], \(..\) or an environment (\begin{align*}..\end{align*}).
MATH_SEGMENT = re.compile(
    r"(\$\$.*?\$\$|\$[^$]*\$|\\\[.*?\\\]|\\\(.*?\\\)|\\begin\{[a-z]+\*?\}.*?\\end\{[a-z]+\*?\})", re.DOTALL
)
# An Asymptote drawing: its numbers place the figure, they are not the problem's.
DRAWING = re.compile(r"\[asy\].*?(\[/asy\]|$)", re.DOTALL)
FORMULA_TOKEN = re.compile(
    r"\\(?:begin|end|text|textbf|mathrm|operatorname)\{[^}]*\}|\\[a-zA-Z]+|[a-zA-Z]"
)  # a LaTeX command, or a letter: a variable


def _outside_math(text: str, rewrite) -> str:
    """``text`` with ``rewrite`` applied to its prose only (not inside formulas)."""
    parts = MATH_SEGMENT.split(text)
    return "".join(part if k % 2 else rewrite(part) for k, part in enumerate(parts))


def reworded(text: str) -> str | None:
    """``text`` with its prose reworded by ``REWORDINGS`` (each rule once, outside formulas), or None when no
    rule applies."""

    def rewrite(prose: str) -> str:
        for pattern, replacement in REWORDINGS:
            prose = re.sub(pattern, replacement, prose, count=1)
        return prose

    out = _outside_math(text, rewrite)
    return out if out != text else None


def renamed(text: str) -> str | None:
    """``text`` with the first variable (a letter that is no LaTeX command's) of its formulas renamed
    everywhere inside formulas, to a letter no formula uses, or None when its formulas have no letter."""

    def tokens(formula: str) -> list[str]:
        return [t for t in FORMULA_TOKEN.findall(formula) if not t.startswith("\\")]

    letters = [t for f in MATH_SEGMENT.findall(text) for t in tokens(f)]
    new = next((c for c in "tuwzqkpmn" if c not in letters), None)
    if not letters or new is None:
        return None

    def rename(formula: re.Match) -> str:
        return FORMULA_TOKEN.sub(lambda t: new if t.group(0) == letters[0] else t.group(0), formula.group(0))

    return MATH_SEGMENT.sub(rename, text)


def one_number_changed(text: str) -> str | None:
    """``text`` with its first whole number of at least 2 (in prose or a formula, not in a drawing) one
    larger, or None."""
    drawings = [m.span() for m in DRAWING.finditer(text)]
    numbers = re.finditer(r"(?<![\w.])(\d+)(?![\w.])", text)
    match = next(
        (m for m in numbers if int(m.group(1)) >= 2 and not any(a <= m.start() < b for a, b in drawings)), None
    )
    if match is None:
        return None
    return text[: match.start()] + str(int(match.group(1)) + 1) + text[match.end() :]


def build_bank(args) -> list[dict]:
    """The rows of the bank: ``{"text", "origin", "kind", "family"}``; two rows are one problem when their
    ``origin`` is the same, ``family`` is the unit of the folds."""
    rng = np.random.default_rng(0)
    variants = [json.loads(line) for line in open(args.data / "gsmplus" / "variants.jsonl", encoding="utf-8")]
    seeds = list(dict.fromkeys(v["seed_question"] for v in variants))
    seeds = [seeds[i] for i in rng.permutation(len(seeds))[: args.seeds]]
    bank = []
    for n, seed in enumerate(seeds):
        family, origin = f"gsm-plus {n}", f"seed {n}"
        bank += [
            {"text": seed, "origin": origin, "kind": "seed", "family": family},
            {"text": whitespace_copy(seed, rng), "origin": origin, "kind": "formatting copy", "family": family},
        ]
        for v in variants:
            if v["seed_question"] == seed:
                same = v["perturbation_type"] == "problem understanding"
                kind = "paraphrase" if same else v["perturbation_type"]
                bank.append(
                    {
                        "text": v["question"],
                        "origin": origin if same else f"{origin}: {kind}",
                        "kind": kind,
                        "family": family,
                    }
                )
    math = [t for t in read_texts(args.data / "math" / "train.jsonl", "problem") if t.count("$") >= 2]
    made = 0
    for i in rng.permutation(len(math)):
        if made == args.math:
            break
        problem = math[i]
        copies = {"reworded": reworded(problem), "renamed variables": renamed(problem)}
        near = one_number_changed(problem)
        if None in copies.values() or near is None:
            continue
        family, origin = f"math {made}", f"math {made}"
        bank.append({"text": problem, "origin": origin, "kind": "math", "family": family})
        bank.append({"text": latex_copy(problem), "origin": origin, "kind": "latex copy", "family": family})
        bank += [{"text": t, "origin": origin, "kind": k, "family": family} for k, t in copies.items()]
        bank.append({"text": near, "origin": f"{origin}: near miss", "kind": NEAR_MISS, "family": family})
        made += 1
    gsm8k = read_texts(args.data / "gsm8k" / "train.jsonl", "question")
    for n in rng.permutation(len(gsm8k))[: args.gsm8k]:
        bank.append({"text": gsm8k[n], "origin": f"gsm8k {n}", "kind": "gsm8k", "family": f"gsm8k {n}"})
    return bank


# --------------------------------------------------------------------------- candidates and evidence, once
class CachedMiniLM:
    """MiniLM vectors read from the benchmark's cache (encoded there first where missing)."""

    def __init__(self, cache: Path):
        self.cache = cache

    def encode(self, texts, batch_size=32):
        return cached_vectors(list(texts), self.cache)

    def identity(self):
        return {"kind": "benchmark.minilm", "weights_sha256": "text:minilm", "mode": "mean", "dimension": 384}


class Evidence:
    """Copies, representatives and the evidence of candidate pairs (at the loosest cosine), with the evidence
    of other pairs computed when complete linkage asks, as ``find_duplicates`` does."""

    def __init__(self, texts: list[str], embedder, min_cosine: float):
        import tempfile

        from mathgraph.parsers.graph_cache import parse_cached
        from mathgraph.tasks.search.dedupe import DedupeSettings, candidate_pairs, copy_groups
        from mathgraph.tasks.search.index import write_index

        self.representatives, self.copy_of = copy_groups(texts)
        unique = [texts[i] for i in self.representatives]
        self.vectors = np.asarray(embedder.encode(unique), dtype=np.float32)
        self.vectors /= np.linalg.norm(self.vectors, axis=1, keepdims=True)
        with tempfile.TemporaryDirectory() as directory:
            index = write_index(directory, [self.vectors], ({"text": t} for t in unique), "text", embedder.identity())
            self.candidates = candidate_pairs(index, DedupeSettings(NEIGHBOURS, min_cosine))
            del index
        self.graphs = parse_cached(unique)
        self.evidence = {}
        for a, b, cosine in self.candidates:
            self.of(a, b, cosine)

    def of(self, a: int, b: int, cosine: float | None = None):
        """The evidence of distinct texts ``a`` < ``b``."""
        from mathgraph.parsers.compare import align_problems
        from mathgraph.tasks.search.dedupe import pair_evidence

        if (a, b) not in self.evidence:
            cosine = float(self.vectors[a] @ self.vectors[b]) if cosine is None else cosine
            ga, gb = self.graphs[a], self.graphs[b]
            self.evidence[a, b] = pair_evidence(align_problems(ga, gb), ga, gb, cosine)
        return self.evidence[a, b]

    def groups(self, settings, rule=None) -> np.ndarray:
        """The groups ``find_duplicates`` gives with ``settings`` (``rule(evidence)``: another confirmation)."""
        from mathgraph.tasks.search.dedupe import complete_linkage, decide, group_ids

        confirmed = [
            (a, b, c)
            for a, b, c in self.candidates
            if c >= settings.min_cosine
            and (rule(self.evidence[a, b]) if rule else decide(self.evidence[a, b], settings)[0])
        ]
        if settings.linkage == "complete":
            kept = set(
                complete_linkage(len(self.representatives), confirmed, lambda a, b: decide(self.of(a, b), settings)[0])
            )
            confirmed = [p for p in confirmed if (p[0], p[1]) in kept]
        pairs = [(int(self.copy_of[i]), i) for i in range(len(self.copy_of)) if self.copy_of[i] != i]
        pairs += [(self.representatives[a], self.representatives[b]) for a, b, _ in confirmed]
        return group_ids(len(self.copy_of), pairs)


def previous_rule(evidence) -> bool:
    """The confirmation ``find_duplicates`` used before quantities' forms, units, sentences on one side, renamed
    variables and linkage were read: the same values as a multiset, the same formulas, a question on both
    sides (at a cosine of at least 0.75, single linkage)."""
    return not evidence.only_one_side and evidence.formulas == "same" and evidence.question not in ("missing", "added")


# --------------------------------------------------------------------------- scoring
def pairs_in(labels, rows) -> set[tuple[int, int]]:
    """Every pair of ``rows`` with the same label."""
    members: dict = {}
    for i in rows:
        members.setdefault(labels[i], []).append(i)
    return {pair for group in members.values() for pair in combinations(sorted(group), 2)}


def positive_kind(a: dict, b: dict) -> str:
    """The kind of a positive pair: the copy in it (the less faithful one where both are copies)."""
    order = ("paraphrase", "reworded", "renamed variables", "formatting copy", "latex copy")
    for kind in order:
        if kind in (a["kind"], b["kind"]):
            return kind
    return "exact copy"


def score(groups: np.ndarray, items: list[dict], rows: list[int]) -> dict:
    """Counts over ``rows`` (pairs with both rows among them): grouped, positive and correct pairs, per family
    (for the bootstrap), per kind of positive pair, per kind of row grouped wrongly."""
    labels = groups.tolist()
    predicted = pairs_in(labels, rows)
    positive = pairs_in([item["origin"] for item in items], rows)
    correct = predicted & positive
    per_family: dict[str, list[int]] = {}
    for name, pairs in (("predicted", predicted), ("positive", positive), ("correct", correct)):
        for a, _ in pairs:
            per_family.setdefault(items[a]["family"], [0, 0, 0])[("predicted", "positive", "correct").index(name)] += 1
    by_kind: dict[str, list[int]] = {}
    for a, b in positive:
        kind = positive_kind(items[a], items[b])
        by_kind.setdefault(kind, [0, 0])[0] += (a, b) in correct
        by_kind[kind][1] += 1
    wrong_rows = {i for pair in predicted - positive for i in pair}
    merged: dict[str, list[int]] = {}
    for i in rows:
        kind = items[i]["kind"]
        if kind in NUMBER_CHANGES + OTHER_CHANGES + (NEAR_MISS,):
            merged.setdefault(kind, [0, 0])[0] += i in wrong_rows
            merged[kind][1] += 1
    false_pairs = Counter(_negative_kind(items[a], items[b]) for a, b in predicted - positive)
    return {
        "predicted": len(predicted),
        "positive": len(positive),
        "correct": len(correct),
        "per_family": per_family,
        "recall_by_kind": by_kind,
        "merged_by_kind": merged,
        "false_pairs": dict(false_pairs),
    }


def _negative_kind(a: dict, b: dict) -> str:
    if a["family"] != b["family"]:
        return "different families"
    kinds = [k for k in (a["kind"], b["kind"]) if k in NUMBER_CHANGES + OTHER_CHANGES + (NEAR_MISS,)]
    return " ~ ".join(sorted(kinds)) if kinds else "other"


def f_measures(counts: dict) -> tuple[float, float, float]:
    """Precision, recall and F1 of ``score`` counts."""
    precision = counts["correct"] / counts["predicted"] if counts["predicted"] else 1.0
    recall = counts["correct"] / counts["positive"] if counts["positive"] else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def merge(scores: list[dict]) -> dict:
    """The counts of several ``score`` results pooled."""
    out = {"predicted": 0, "positive": 0, "correct": 0, "per_family": {}, "recall_by_kind": {}, "merged_by_kind": {}}
    out["false_pairs"] = Counter()
    for s in scores:
        for name in ("predicted", "positive", "correct"):
            out[name] += s[name]
        out["per_family"].update(s["per_family"])
        for name in ("recall_by_kind", "merged_by_kind"):
            for kind, (x, n) in s[name].items():
                total = out[name].setdefault(kind, [0, 0])
                total[0] += x
                total[1] += n
        out["false_pairs"].update(s["false_pairs"])
    out["false_pairs"] = dict(out["false_pairs"])
    return out


def bootstrap(counts: dict, families: list[str], rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """95% intervals of precision and recall, resampling ``families`` (with their pairs) with replacement."""
    table = np.array([counts["per_family"].get(f, [0, 0, 0]) for f in families], dtype=float)
    draws = table[rng.integers(0, len(families), size=(BOOTSTRAP, len(families)))].sum(axis=1)
    precision = draws[:, 2] / np.maximum(draws[:, 0], 1)
    recall = draws[:, 2] / np.maximum(draws[:, 1], 1)
    return [float(np.percentile(x, q)) for x in (precision,) for q in (2.5, 97.5)], [
        float(np.percentile(recall, q)) for q in (2.5, 97.5)
    ]


def interval(share: float, n: int) -> str:
    """The 95% Wilson interval of a share of ``n`` (the project's ``wilson``), or a dash for none."""
    from mathgraph.tasks.release.build import wilson

    return str(wilson(share, n)) if n else "-"


def choose(results: list, mode: str):
    """The setting ``mode`` picks from ``(settings, counts)`` on the training folds: ``default`` the best F1
    (then precision), ``strict`` among complete linkage the best recall at precision >= ``STRICT_PRECISION``
    (the best precision where none reaches it)."""
    if mode == "default":
        return max(results, key=lambda sr: (f_measures(sr[1])[2], f_measures(sr[1])[0]))[0]
    complete = [sr for sr in results if sr[0].linkage == "complete"]
    good = [sr for sr in complete if f_measures(sr[1])[0] >= STRICT_PRECISION]
    if good:
        return max(good, key=lambda sr: (f_measures(sr[1])[1], f_measures(sr[1])[0]))[0]
    return max(complete, key=lambda sr: (f_measures(sr[1])[0], f_measures(sr[1])[1]))[0]


# --------------------------------------------------------------------------- the run
def settings_grid(grid: dict) -> list:
    """Every ``DedupeSettings`` of ``grid`` (the other fields at their defaults)."""
    from mathgraph.tasks.search.dedupe import DedupeSettings

    names = list(grid)
    out = []
    for values in product(*(grid[n] for n in names)):
        fields = dict(zip(names, values))
        if fields.get("small_numbers", 1) == 0 and fields.get("small_value", 1) != 1:
            continue  # the same setting as small_value 1
        out.append(DedupeSettings(neighbours=NEIGHBOURS, **fields))
    return out


def describe(settings) -> str:
    """The fields of ``settings`` that differ from the shipped defaults, and its linkage, in a line."""
    from mathgraph.tasks.search.dedupe import DedupeSettings

    base = DedupeSettings()
    changed = [f"{k} {v}" for k, v in settings.__dict__.items() if v != getattr(base, k) or k == "linkage"]
    return ", ".join(changed) or "the defaults"


def print_table(title: str, counts: dict, families: list[str], rng) -> None:
    """The held-out figures of one mode."""
    precision, recall, f1 = f_measures(counts)
    p_ci, r_ci = bootstrap(counts, families, rng)
    print(f"\n### {title}\n\n| measure | value | 95% interval (bootstrap over families) | n |\n|---|---:|---|---:|")
    print(f"| precision | {precision:.3f} | [{p_ci[0]:.3f}, {p_ci[1]:.3f}] | {counts['predicted']} pairs grouped |")
    print(f"| recall | {recall:.3f} | [{r_ci[0]:.3f}, {r_ci[1]:.3f}] | {counts['positive']} positive pairs |")
    print(f"| F1 | {f1:.3f} | | |")
    parts = {
        "GSM-Plus families": [f for f in families if f.startswith("gsm-plus")],
        "MATH families": [f for f in families if f.startswith("math")],
        "families never read while writing the rules": [f for f in families if f not in DESIGN_FAMILIES],
    }
    for name, part in parts.items():
        table = np.array([counts["per_family"].get(f, [0, 0, 0]) for f in part]).sum(axis=0)
        p_ci, r_ci = bootstrap(counts, part, rng)
        print(
            f"| precision, {name} | {table[2] / max(table[0], 1):.3f} | [{p_ci[0]:.3f}, {p_ci[1]:.3f}] | "
            f"{table[0]} pairs grouped |"
        )
        print(
            f"| recall, {name} | {table[2] / max(table[1], 1):.3f} | [{r_ci[0]:.3f}, {r_ci[1]:.3f}] | "
            f"{table[1]} positive pairs |"
        )
    print("\n| positive pairs | found | of | recall | 95% interval |\n|---|---:|---:|---:|---|")
    for kind, (found, total) in sorted(counts["recall_by_kind"].items()):
        print(f"| {kind} | {found} | {total} | {found / total:.3f} | {interval(found / total, total)} |")
    print("\n| rows of another problem | grouped wrongly | of | share | 95% interval |\n|---|---:|---:|---:|---|")
    for kind, (bad, total) in sorted(counts["merged_by_kind"].items()):
        print(f"| {kind} | {bad} | {total} | {bad / total:.3f} | {interval(bad / total, total)} |")
    print("\n| pairs grouped wrongly | count |\n|---|---:|")
    for kind, count in sorted(counts["false_pairs"].items()) or [("none", 0)]:
        print(f"| {kind} | {count} |")


def main() -> None:
    from mathgraph.tasks.release.build import machine
    from mathgraph.tasks.search.dedupe import STRICT, DedupeSettings, find_duplicates

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--math", type=int, default=200)
    parser.add_argument("--gsm8k", type=int, default=500)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/mathgraph-bench"))
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--keep-evidence", action="store_true", help="also pickle the bank and its evidence")
    args = parser.parse_args()
    args.data = DATA
    grid = GRID
    if args.smoke:  # the smoke data (benchmarks/smoke.py): runs in a clean clone without ../shared
        args.seeds, args.math, args.gsm8k, args.folds, args.cache = 4, 2, 4, 2, args.work / "cache"
        args.data, grid = SMOKE_DATA, SMOKE_GRID
    args.work.mkdir(parents=True, exist_ok=True)
    settings = settings_grid(grid)
    items = build_bank(args)
    texts = [item["text"] for item in items]
    embedder = CachedMiniLM(args.cache)
    start = time.perf_counter()
    evidence = Evidence(texts, embedder, min(grid["min_cosine"]))
    prepare_s = time.perf_counter() - start
    if args.keep_evidence:
        import pickle

        with open(args.work / "dedupe_evidence.pkl", "wb") as f:
            pickle.dump((items, evidence), f)
    # folds of families (a GSM8K distractor is a family of one row); pairs across folds are not scored
    families = list(dict.fromkeys(item["family"] for item in items))
    fold_of = {f: k % args.folds for k, f in enumerate(np.random.default_rng(1).permutation(families).tolist())}
    rows = [[i for i, item in enumerate(items) if fold_of[item["family"]] == fold] for fold in range(args.folds)]
    start = time.perf_counter()
    groups = {s: evidence.groups(s) for s in settings}
    grid_s = time.perf_counter() - start
    per_fold = {s: [score(groups[s], items, rows[k]) for k in range(args.folds)] for s in settings}
    held_out, chosen = {"default": [], "strict": []}, {"default": [], "strict": []}
    for k in range(args.folds):
        train = [(s, merge([per_fold[s][j] for j in range(args.folds) if j != k])) for s in settings]
        for mode in ("default", "strict"):
            best = choose(train, mode)
            chosen[mode].append(best)
            held_out[mode].append(per_fold[best][k])
    shipped = {"default": DedupeSettings(), "strict": STRICT}
    counts = {mode: merge(held_out[mode]) for mode in held_out}
    rng = np.random.default_rng(2)
    kinds = Counter(item["kind"] for item in items)
    print(
        f"## Near-duplicates: {len(items)} rows ({args.seeds} GSM-Plus families, {args.math} MATH problems with "
        f"copies, {args.gsm8k} GSM8K), {args.folds} folds by family"
    )
    print(
        f"\n{machine()}; candidates: MiniLM, {NEIGHBOURS} neighbours, cosine >= {min(grid['min_cosine'])}: "
        f"{len(evidence.candidates)} pairs aligned ({prepare_s:.0f} s with encoding and parsing); "
        f"{len(settings)} settings grouped in {grid_s:.0f} s. Rows by kind: "
        + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    )
    for mode in ("default", "strict"):
        print(f"\nChosen for {mode} on the training folds: " + "; ".join(describe(s) for s in chosen[mode]))
    print(
        "\n### Dev: the grid on the training folds of fold 1 (best F1 first, 10 rows)\n\n"
        "| setting | precision | recall | F1 |\n|---|---:|---:|---:|"
    )
    first = [(s, merge([per_fold[s][j] for j in range(1, args.folds)])) for s in settings]
    for s, c in sorted(first, key=lambda sc: (-f_measures(sc[1])[2], -f_measures(sc[1])[0]))[:10]:
        p, r, f1 = f_measures(c)
        print(f"| {describe(s)} | {p:.3f} | {r:.3f} | {f1:.3f} |")
    before = evidence.groups(DedupeSettings(min_cosine=0.75), previous_rule)
    print_table(
        "Before: the previous confirmation (no thresholds tuned here), every fold",
        merge([score(before, items, rows[k]) for k in range(args.folds)]),
        families,
        rng,
    )
    print_table("Default (held-out folds pooled)", counts["default"], families, rng)
    print_table("Strict (held-out folds pooled)", counts["strict"], families, rng)
    for mode, s in shipped.items():
        whole = (
            merge([per_fold[s][k] for k in range(args.folds)])
            if s in per_fold
            else score(evidence.groups(s), items, list(range(len(items))))
        )
        p, r, f1 = f_measures(whole)
        print(f"\nShipped {mode} ({describe(s)}) on the whole bank: precision {p:.3f}, recall {r:.3f}, F1 {f1:.3f}")
    start = time.perf_counter()
    same = {}
    for mode, s in shipped.items():
        end_to_end = find_duplicates(texts, embedder, s)
        same[mode] = end_to_end.groups.tolist() == evidence.groups(s).tolist()
    print(
        f"\nfind_duplicates end to end, default and strict: {time.perf_counter() - start:.0f} s; "
        f"same groups as the grid's: {same['default'] and same['strict']}"
    )
    (args.work / "dedupe_quality.json").write_text(
        json.dumps(
            {
                mode: {
                    "chosen": [s.__dict__ for s in chosen[mode]],
                    "held_out": {k: v for k, v in counts[mode].items() if k != "per_family"},
                }
                for mode in counts
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
