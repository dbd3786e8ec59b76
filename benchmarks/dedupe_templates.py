"""Dedupe on template-made variants of grade-school problems: are variants that differ in their numbers ever grouped?

    python benchmarks/dedupe_templates.py --work WORK --split dev [--failures]
    python benchmarks/dedupe_templates.py --work WORK --split test      # or test2, the second test part
    python benchmarks/dedupe_templates.py --work WORK --split dev --smoke   # two seeds a split, a tiny bank

Seeds: GSM8K train questions that are neither rows of ``dedupe_quality.py``'s bank nor seeds of ``dedupe_fresh.py``'s
families, drawn with a fixed seed: the first ``PER_SPLIT`` of the draw are ``dev``, the next ``test``, the next
``test2`` (a second test part, for a figure after a change made once ``test`` had been read).
Each seed gets, made by ``bank_search_templates.py``'s rewriters (seeded by the seed's position, so every run
makes the same rows):

- ``renamed``: every first name replaced, nothing else: **the same problem** as its seed (only where the seed has
  a name);
- ``numbers changed``: every number replaced by another of about its size, the wording kept: another problem;
- ``renamed, numbers changed``: both: another problem;
- ``template variant``: names, numbers and one or two added irrelevant clauses (the bank search's ``template``
  queries): another problem;
- ``clauses added``: the seed with one or two irrelevant clauses and nothing else changed: another problem, as a
  distraction insertion is in the other dedupe benchmarks.

The rows go into ``dedupe_quality.py``'s bank (200 GSM-Plus families, 200 MATH problems with copies, 500 GSM8K
questions) as one bank, and ``mathgraph dedupe``'s default and ``--strict`` group it; only the pairs touching the
split's seeds are scored: pair precision and recall (bootstrap intervals over seeds), recall of the ``renamed``
pairs, and for each kind the rows grouped with another problem, beside MiniLM and TF-IDF cosine-threshold baselines
(``dedupe_fresh.threshold_baselines``: the threshold chosen on the dev seeds). The target of the number variants is
none grouped:
"numbers changed", "renamed, numbers changed" and "template variant" rows grouped with their seed or with each other.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
from bank_search_templates import _NUMBER, _add_clauses, _rename, _renumber, _seed, template_variant  # noqa: E402
from dedupe_fresh import (  # noqa: E402
    FAMILIES,
    print_failures,
    print_kinds,
    read_families,
    row_line,
    score_fresh,
    threshold_baselines,
)
from dedupe_quality import DATA, NEIGHBOURS, CachedMiniLM, Evidence, build_bank  # noqa: E402

from smoke import SMOKE_DATA  # noqa: E402 (benchmarks/ is on the path of its scripts)

SPLITS = ("dev", "test", "test2")
PER_SPLIT = 60
NUMBER_KINDS = ("numbers changed", "renamed, numbers changed", "template variant")


def template_seeds(data: Path, taken: set[str], count: int) -> list[str]:
    """``count`` GSM8K train questions not in ``taken`` (the rows of the bank and the fresh families' seeds), in a
    fixed random order."""
    with open(data / "gsm8k" / "train.jsonl", encoding="utf-8") as f:
        questions = list(dict.fromkeys(json.loads(line)["question"] for line in f if line.strip()))
    questions = [q for q in questions if q not in taken]
    random.Random(2026).shuffle(questions)
    return questions[:count]


def template_rows(seeds: list[str], per_split: int = PER_SPLIT) -> list[dict]:
    """The bank rows of ``seeds``: each seed and its variants (see the module's notes); ``split`` is ``dev`` for
    the first ``per_split`` seeds, then ``test``, then ``test2``. A variant equal to its seed or to an earlier row
    (a seed with no name) is left out, and so are the variants that change numbers where the seed writes none in
    digits (the rewriter changes digits only: "three stripes" would stay three)."""
    makers = {
        "renamed": _rename,
        "numbers changed": _renumber,
        "renamed, numbers changed": lambda text, rng: _renumber(_rename(text, rng), rng),
        "template variant": template_variant,
        "clauses added": _add_clauses,
    }
    rows = []
    for n, seed in enumerate(seeds):
        family = f"template {n}"
        split = SPLITS[n // per_split]
        rows.append({"text": seed, "origin": family, "kind": "seed", "family": family, "split": split})
        made = {seed}
        for kind, make in makers.items():
            if kind in NUMBER_KINDS and not _NUMBER.search(seed):
                continue  # numbers only in words, which the rewriter leaves: the variant would keep every value
            text = make(seed, random.Random(_seed(f"{family}/{kind}")))
            if text in made:
                continue
            made.add(text)
            origin = family if kind == "renamed" else f"{family}: {kind}"
            rows.append({"text": text, "origin": origin, "kind": kind, "family": family, "split": split})
    return rows


def main() -> None:
    from mathgraph.tasks.release.build import machine
    from mathgraph.tasks.search.dedupe import STRICT, DedupeSettings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--split", choices=SPLITS, required=True)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/mathgraph-bench"))
    parser.add_argument("--failures", action="store_true", help="print the failing pairs of the split scored")
    parser.add_argument("--smoke", action="store_true", help="two seeds a split in the smoke data's small bank")
    args = parser.parse_args()
    args.data, args.bank_seeds, args.math, args.gsm8k, per_split = DATA, 200, 200, 500, PER_SPLIT
    if args.smoke:  # the smoke data (benchmarks/smoke.py): runs in a clean clone without ../shared
        args.data, args.bank_seeds, args.math, args.gsm8k, args.cache = SMOKE_DATA, 4, 2, 4, args.work / "cache"
        per_split = 2
    args.work.mkdir(parents=True, exist_ok=True)
    bank = build_bank(argparse.Namespace(data=args.data, seeds=args.bank_seeds, math=args.math, gsm8k=args.gsm8k))
    taken = {row["text"] for row in bank} | {family["seed"] for family in read_families(FAMILIES)}
    seeds = template_seeds(args.data, taken, per_split * len(SPLITS))
    items = bank + template_rows(seeds, per_split)
    texts = [item["text"] for item in items]
    embedder = CachedMiniLM(args.cache)
    start = time.perf_counter()
    evidence = Evidence(texts, embedder, 0.7)
    prepare_s = time.perf_counter() - start
    by_split = {split: {i for i, item in enumerate(items) if item.get("split") == split} for split in SPLITS}
    scored = by_split[args.split]
    families = sorted({items[i]["family"] for i in scored})
    methods = {"default": DedupeSettings(), "--strict": STRICT}
    results = {name: score_fresh(evidence.groups(settings), items, scored) for name, settings in methods.items()}
    chosen = threshold_baselines(texts, embedder, items, by_split, args.split, results)
    rng = np.random.default_rng(2)
    print(f"## Dedupe on template variants: {args.split} ({len(families)} seeds), inside a bank of {len(items)} rows")
    print(
        f"\n{machine()}; candidates: MiniLM, {NEIGHBOURS} neighbours, cosine >= 0.7: {len(evidence.candidates)} "
        f"pairs aligned ({prepare_s:.0f} s with encoding and parsing). Scored: the {len(scored)} rows of the "
        f"{args.split} seeds (seed and its renamed copy: one problem; every other variant its own), every grouped "
        "pair that touches them. Intervals: bootstrap over seeds (pairs), Wilson (per kind)."
    )
    print("\n| method | pair precision [95%] | pair recall [95%] | F1 |\n|---|---:|---:|---:|")
    for name, counts in results.items():
        print(row_line(name, counts, families, rng))
    print_kinds(results)
    number_rows = {
        name: [sum(c["merged_by_kind"].get(k, [0, 0])[i] for k in NUMBER_KINDS) for i in (0, 1)]
        for name, c in results.items()
    }
    print(
        "\nVariants that differ from their seed in their numbers, grouped with another problem: "
        + "; ".join(f"{name} {grouped}/{total}" for name, (grouped, total) in number_rows.items())
    )
    if args.failures:
        for name, settings in methods.items():
            print_failures(name, results[name], items, evidence, settings)
    out = {
        "split": args.split,
        "seeds": len(families),
        "thresholds_chosen_on_dev": chosen,
        "number_variants_grouped": number_rows,
        "results": {
            name: {k: v for k, v in c.items() if k not in ("per_family", "wrong", "missed")}
            for name, c in results.items()
        },
    }
    (args.work / f"dedupe_templates_{args.split}.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
