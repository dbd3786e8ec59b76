"""A package's search, fitted on a question bank: its first stage and its alignment step.

First stage: the sentence encoder the shipped encoder started from, all-MiniLM-L6-v2 mean pooled
(``text:minilm``). Continual pre-training (MLM, DTC, TGCL) and fine-tuning wore down its contrastively
trained space (the shipped encoder's text vectors found 0.810 of paraphrases' seeds at rank 1 in a
bank, MiniLM 1.000), so search retrieves with the base encoder's vectors and keeps the COMUS encoder for
what it is good at: classifying and ranking close variants.

Alignment step: an SQR alignment model fitted on bank lists (``tasks.training.search_rescoring``): each GSM-Plus
train variant is a query, the bank's first-stage top rows its candidates, its seed (in the bank) the one
relevant row. Its late-fusion weight and ``min_cosine`` are chosen on the dev variants by MRR@10, weight 0
(the first stage alone) among the choices.

The bank: the GSM8K train questions and every GSM-Plus seed question (GSM8K *test* questions, so none of them
is among the train questions; the seeds are the answers of their variants).
"""

from __future__ import annotations

import json
from pathlib import Path

FIRST_STAGE = "text:minilm"
BANK_FIELD = "question"
SEARCH_DIR = "structure/search"


def bank_rows(gsm8k_rows: list[dict], variant_rows: list[dict]) -> list[dict]:
    """The bank: GSM8K questions and the GSM-Plus seed questions, each once, in that order."""
    questions = [row["question"] for row in gsm8k_rows] + [row["seed_question"] for row in variant_rows]
    return [{BANK_FIELD: question} for question in dict.fromkeys(questions)]


def variant_queries(variant_rows: list[dict], kinds: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """``(variant question, seed question)`` of each variant (of ``kinds`` only, when given)."""
    return [
        (row["question"], row["seed_question"])
        for row in variant_rows
        if kinds is None or row["perturbation_type"] in kinds
    ]


def bank_index(bank: list[dict], work: Path, device: str | None = None):
    """The bank's first-stage index (``FIRST_STAGE``), built once and kept in ``work/bank-index``."""
    from mathgraph.tasks.search.embedders import load_embedder
    from mathgraph.tasks.search.index import SearchIndex

    directory = work / "bank-index"
    if (directory / "manifest.json").is_file():
        index = SearchIndex.from_pretrained(directory, device=device)
        if len(index) == len(bank):
            return index
    index = SearchIndex.build(bank, load_embedder(FIRST_STAGE, device=device), text_field=BANK_FIELD)
    index.save_pretrained(directory)
    return index


def release_bank_search(
    root: Path,
    gsm8k_rows: list[dict],
    variants: dict[str, list[dict]],
    work: Path,
    say=print,
    params: dict | None = None,
) -> dict:
    """Fit the alignment step of the package at ``root`` on bank lists of the ``train`` variants, choose its
    weight on the ``dev`` ones, save it in ``root/structure/search`` and record the search setting in the
    package's release notes (``release.json`` ``search``: ``encoder``, ``structure``) and ``config.json``
    (``tasks.release.package.finish_package``). ``params``: the alignment model's options. Returns the setting
    chosen."""
    import time

    from mathgraph.registry import read_config
    from mathgraph.tasks.release.package import finish_package
    from mathgraph.tasks.training.search_rescoring import choose_bank_rescoring, fit_bank_rescoring

    work.mkdir(parents=True, exist_ok=True)
    all_variants = [row for part in variants.values() for row in part]
    started = time.perf_counter()
    index = bank_index(bank_rows(gsm8k_rows, all_variants), work)
    say(f"bank index: {len(index)} rows, {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    model = fit_bank_rescoring(index, variant_queries(variants["train"]), params=params)
    say(f"alignment step fitted on {len(variants['train'])} train variants, {time.perf_counter() - started:.0f} s")
    setting = choose_bank_rescoring(index, model, variant_queries(variants["dev"]))
    say(f"search setting chosen on dev: {json.dumps({k: v for k, v in setting.items() if k != 'tried'})}")
    model.save_pretrained(root / SEARCH_DIR)
    release = read_config(root, "release.json")
    search = release.setdefault("search", {})
    search["encoder"] = FIRST_STAGE
    search["structure"] = {
        **search.get("structure", {}),
        "path": SEARCH_DIR,
        "weight": setting["weight"],
        "default": setting["weight"] > 0,
        "min_cosine": setting["min_cosine"],
        "fitted_on": "bank lists: GSM-Plus train variants against GSM8K train + seed questions (first stage top 20)",
        "dev_mrr_at_10": setting["dev_mrr"],
        "dev_mrr_at_10_first_stage": setting["dev_mrr_first_stage"],
    }
    search["structure"].pop("variant_coverage", None)  # the graded-list gate this setting replaces
    finish_package(root, release)
    return setting


def choose_search_fusion(report: dict, base: str = "minilm", prefix: str = "sparse") -> dict | None:
    """The TF-IDF fusion weight of search chosen on a dev run of ``benchmarks/bank_search.py`` whose rows named
    ``PREFIX<weight>`` search with the base encoder fused with TF-IDF at that weight: the best MRR over all the
    banks' queries among the weights whose R@1 is never below the ``base`` row's for any kind of any bank
    (the floor: search never worse than the base sentence encoder). ``None`` when the run has no such rows.
    Returns ``{"weight", "default", "chosen_on", "dev_mrr_by_weight"}``; weight 0 (no fusion) is a choice."""
    banks = report["banks"].values()
    candidates = {name for bank in banks for name in bank["rows"] if name.startswith(prefix)}
    if not candidates:
        return None

    def queries_mrr(name: str) -> float:
        total = sum(
            bank["rows"][name]["metrics"]["all"]["mrr"] * bank["rows"][name]["metrics"]["all"]["n"] for bank in banks
        )
        return total / sum(bank["rows"][name]["metrics"]["all"]["n"] for bank in banks)

    def never_below_base(name: str) -> bool:
        return all(
            bank["rows"][name]["metrics"][kind]["r1"] >= bank["rows"][base]["metrics"][kind]["r1"]
            for bank in banks
            for kind in bank["kinds"]
        )

    by_weight = {float(name[len(prefix) :]): name for name in candidates}
    mrr = {weight: queries_mrr(name) for weight, name in by_weight.items()}
    mrr[0.0] = queries_mrr(base)
    allowed = [w for w, name in by_weight.items() if never_below_base(name)] + [0.0]
    best = max(mrr[w] for w in allowed)
    weight = min(w for w in allowed if mrr[w] == best)  # the smallest weight among equals
    return {
        "weight": weight,
        "default": weight > 0,
        "chosen_on": f"bank dev queries ({', '.join(bank['title'] for bank in banks)}): MRR over all queries, "
        f"R@1 never below {base} for any kind",
        "dev_mrr_by_weight": {str(w): round(v, 4) for w, v in sorted(mrr.items())},
    }


def bank_summary(report: dict) -> dict:
    """What the model card shows of a ``benchmarks/bank_search.py`` run: per bank, its title and facts, and per
    row its label and each kind's R@1 (with its Wilson interval), R@10 and MRR."""
    summary = {"machine": report["machine"], "banks": {}}
    for name, bank in report["banks"].items():
        summary["banks"][name] = {
            "title": bank["title"],
            "bank": bank["facts"]["bank"],
            "kinds": bank["kinds"],
            "rows": {
                row: {
                    "label": result["row"]["label"],
                    **{
                        kind: {
                            key: _rounded(result["metrics"][kind][key]) for key in ("n", "r1", "r1_ci", "r10", "mrr")
                        }
                        for kind in (*bank["kinds"], "all")
                    },
                }
                for row, result in bank["rows"].items()
                if not row.startswith("sparse")  # the fusion weights tried are kept in search.hybrid
            },
        }
    return summary


def record_bank_results(root: Path, report: dict) -> dict:
    """Keep a bank benchmark run in the package at ``root``: its tables in ``release.json``
    (``search.banks.<split>``, shown by the model card) and, for a dev run that tried TF-IDF fusion weights
    (``choose_search_fusion``), search's fusion setting (``search.hybrid``, hence ``config.json``); then the
    card, config and checksums are written again. Returns the release notes' ``search`` part."""
    from mathgraph.registry import read_config
    from mathgraph.tasks.release.package import finish_package

    release = read_config(root, "release.json")
    search = release.setdefault("search", {})
    fusion = choose_search_fusion(report) if report["split"] == "dev" else None
    if fusion is not None:
        search["hybrid"] = fusion  # replaces the weight chosen on the graded lists (0.2.0 and before)
    search.setdefault("banks", {})[report["split"]] = bank_summary(report)
    finish_package(root, release)
    return search


def _rounded(value):
    return [round(v, 4) for v in value] if isinstance(value, (list, tuple)) else round(value, 4)


__all__ = [
    "release_bank_search",
    "bank_rows",
    "variant_queries",
    "bank_index",
    "choose_search_fusion",
    "bank_summary",
    "record_bank_results",
    "FIRST_STAGE",
    "SEARCH_DIR",
]
