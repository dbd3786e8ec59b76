"""A package's search, fitted on a question bank (issue 37): its first stage and its alignment step.

First stage: the sentence encoder the shipped encoder started from, all-MiniLM-L6-v2 mean pooled
(``text:minilm``). Continual pre-training (MLM, DTC, TGCL) and fine-tuning wore down its contrastively
trained space (issue 37: the shipped encoder's text vectors found 0.810 of paraphrases' seeds at rank 1 in a
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


__all__ = ["release_bank_search", "bank_rows", "variant_queries", "bank_index", "FIRST_STAGE", "SEARCH_DIR"]
