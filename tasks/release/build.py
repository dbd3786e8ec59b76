"""Building the shipped model: pre-train, fine-tune on four tasks, add late fusion and alignment models, package.

    mathgraph release pretrain  --data DATA --work WORK [--steps 2000]
    mathgraph release multitask --data DATA --work WORK [--epochs 2] [--start package] [--no-alignment]
    mathgraph release package   --data DATA --work WORK --output OUT
    mathgraph release heads     --data DATA --work WORK --output OUT
    mathgraph release measure   --data DATA --work WORK --output OUT
    mathgraph release structure --data DATA --work WORK --output OUT
    mathgraph release search    --data DATA --work WORK --output OUT

``DATA`` holds the task files as ``TASK.PART.jsonl`` (``kpc``, ``qrc``, ``qam``, ``sqr``; parts ``train``,
``dev``, ``test`` and any other evaluation part, such as ``qam.dev-gsm8k``) and the pre-training corpus
``pretrain.train.jsonl`` (rows ``{"text": ...}``): what ``benchmarks/results.py`` builds from the shared data
(``benchmarks/release_model.py`` runs these stages on it). ``WORK`` keeps each stage's runs; ``OUT`` is the
package (``models.package``).

1. ``pretrain``: COMUS (MLM + DTC + TGCL) from ``ReleaseSettings.start_model`` (the untrained architecture,
   the packaged all-MiniLM-L6-v2 with LaTeX rows) on the pre-training corpus. The pre-trained word embeddings
   stay fixed: only the added LaTeX rows, the layers and the graph side train, which keeps the package small.
   Resumable; the loss curve is ``WORK/pretrain/training_log.jsonl``.
2. ``multitask``: one dense multi-task model (KPC, QRC, QAM, SQR; one head each) from the pre-trained encoder,
   embeddings frozen, the best epoch by mean dev metric. The QRC, QAM and SQR heads also read each pair's
   alignment features (``parsers.compare``) unless ``alignment=False``. ``start="package"`` fine-tunes the
   encoder of the package already in ``OUT`` instead of stage 1's (its pre-training facts are kept for the
   model card).
3. ``package``: TF-IDF models on the same train parts; the late-fusion weight of each task chosen on dev; the
   package written (fp16 deltas, ``config.json``, checksums); then every figure measured *from the written
   package* on dev and test (neural, TF-IDF, late fusion; 95% intervals) into ``release.json`` and the card;
   last, the ONNX graphs of its networks (``tasks.release.package.add_onnx_graphs``).
   ``measure`` does the measuring of stage 3 again on the package in ``OUT`` (nothing trained or written but the
   release notes, card, config and checksums), for when what its models read has changed.
   ``heads`` refits the QAM head of the package's multi-task model on the frozen model's vectors with every
   alignment feature this mathgraph computes (the solution graph's too; ``tasks.training.head_refit``:
   the head alone, warm-started from the old one, trained on QAM train, its epoch chosen on dev) and writes the
   multi-task model back into the package; ``measure`` (and ``structure``) after it measure the package anew. A
   multi-task model trained now reads every feature already, so ``all`` runs neither.
4. ``structure``: an alignment model (``models.alignment_model``: gradient-boosted trees on graph alignment features)
   per pair task, trained on its train part and fused with what the package gave so far, with a weight chosen
   on dev (0 keeps the package's answer, 1 is the alignment model alone), on where it beats dev; the figures
   measured again; then stage 5.
5. ``search``: ``mathgraph search``'s alignment step measured on the written package (nothing else is
   fitted): the SQR alignment model scores only rows whose cosine to the query is at least ``min_cosine``,
   the cosine above which ``VARIANT_COVERAGE`` of the relevant candidates of the SQR train lists lie; its
   weight is chosen on dev.
"""

from __future__ import annotations

import json
import os
import platform
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mathgraph.registry import read_config
from mathgraph.task_specs import TASK_NAMES, task_spec

# numpy, torch and the models are imported where used: ``mathgraph --help`` imports this module for STAGES
RELEASE_TASKS = TASK_NAMES
STAGES = ("pretrain", "multitask", "package", "heads", "measure", "structure", "search", "bank-search")
# what "all" runs: stage 3 has measured already, and stage 2's heads read every alignment feature
ALL_STAGES = tuple(s for s in STAGES if s not in ("heads", "measure"))
PRETRAIN_CORPUS = "pretrain"  # DATA/pretrain.train.jsonl
# what a run whose multi-task stage started from a package keeps of that package's pre-training facts
PACKAGE_FACTS = "pretrain_facts_from_package.json"
# The share of the SQR train lists' relevant candidates that search's alignment step scores: its min_cosine is
# the cosine to the query above which this share of them lies.
VARIANT_COVERAGE = 0.95
# dev rows bundled with the package, with the figures the package gives on them (the tests check them)
SAMPLE_SIZES = {"kpc": 40, "qrc": 18, "qam": 16, "sqr": 4}


@dataclass
class ReleaseSettings:
    """How the stages train. The values are the shipped model's; a smoke run makes them tiny."""

    steps: int = 2000  # pre-training steps
    epochs: int = 2  # multi-task epochs
    start: str = "pretrain"  # multitask: fine-tune stage 1's encoder ("pretrain") or the package's ("package")
    alignment: bool = True  # multitask: pair heads read the alignment features
    seed: int = 0
    workers: int = 2  # parser processes
    start_model: str = "untrained"  # pretrain: the encoder pre-training starts from (a name or directory)
    pretrain_batch_size: int = 32
    multitask_batch_size: int = 16
    multitask_max_steps: int | None = None  # a cap on multi-task steps (smoke runs)
    head_epochs: int = 10  # heads: epochs of the QAM head's refit on the frozen model's vectors
    structure_options: dict | None = None  # AlignmentModel options (smoke runs: few iterations)
    device: str | None = None  # where the package's models predict while measured (None: CUDA if available)
    bank_data: str | None = None  # bank-search: the folder holding gsm8k/train.jsonl and gsmplus/variants.jsonl


def task_files(directory: str | os.PathLike) -> dict[str, dict[str, str]]:
    """``{task: {part: path}}`` of the ``TASK.PART.jsonl`` files in ``directory`` (see the module docstring)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"no such data directory: {directory}")
    files: dict[str, dict[str, str]] = {}
    for path in sorted(directory.glob("*.*.jsonl")):
        task, part = path.name[: -len(".jsonl")].split(".", 1)
        files.setdefault(task, {})[part] = str(path)
    missing = [f"{t}.{p}.jsonl" for t in RELEASE_TASKS for p in ("train", "dev") if p not in files.get(t, {})]
    if missing:
        raise FileNotFoundError(f"{directory} lacks the task files {', '.join(missing)}")
    return files


def build_release(
    files: dict[str, dict[str, str]],
    work: str | os.PathLike,
    output: str | os.PathLike | None,
    stages: tuple[str, ...] | list[str] = STAGES,
    settings: ReleaseSettings | None = None,
    say: Callable[[str], None] = print,
) -> dict | None:
    """Run ``stages`` in order (see the module docstring) on the task files ``files`` (``task_files``), keeping
    the runs in ``work`` and writing the package to ``output``; ``say`` gets one line per measured task.
    Returns the release notes (``release.json``) when a stage wrote them."""
    settings = settings or ReleaseSettings()
    work, output = Path(work), None if output is None else Path(output)  # pretrain and multitask need none
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ValueError(f"unknown release stage {unknown[0]!r}; the stages: {', '.join(STAGES)}")
    release = None
    for stage in stages:
        done = _STAGES[stage](files, work, output, settings, say)
        release = done if done is not None else release
    return release


def pretrain(files: dict, work: Path, output: Path, settings: ReleaseSettings, say=print) -> None:
    """Stage 1: continual pre-training from the untrained architecture, vocabulary frozen."""
    from mathgraph.tasks.training.pretrain import run_pretraining
    from mathgraph.tasks.training.trainer import TrainingArguments

    if "train" not in files.get(PRETRAIN_CORPUS, {}):
        raise FileNotFoundError(f"pre-training needs its corpus, {PRETRAIN_CORPUS}.train.jsonl, beside the task files")
    directory = work / "pretrain"
    texts = [json.loads(line)["text"] for line in open(files[PRETRAIN_CORPUS]["train"], encoding="utf-8")]
    training = TrainingArguments(
        output_dir=str(directory),
        max_steps=settings.steps,
        batch_size=settings.pretrain_batch_size,
        learning_rate=5e-5,
        seed=settings.seed,
        parse_workers=settings.workers,
        resume=(directory / "checkpoint-last").exists(),
    )
    run_pretraining(texts, training, model=settings.start_model, freeze_vocabulary=True)


def multitask(files: dict, work: Path, output: Path, settings: ReleaseSettings, say=print) -> None:
    """Stage 2: the dense multi-task model from the pre-trained encoder, embeddings frozen."""
    from mathgraph.models.task_model import TaskConfig
    from mathgraph.tasks.training.multitask import train_multitask
    from mathgraph.tasks.training.trainer import TrainingArguments

    directory = work / "multitask"
    if settings.start == "package":
        encoder_from_package(output, work / "pretrain")
    training = TrainingArguments(
        output_dir=str(directory),
        epochs=settings.epochs,
        max_steps=settings.multitask_max_steps,
        batch_size=settings.multitask_batch_size,
        learning_rate=3e-5,
        seed=settings.seed,
        parse_workers=settings.workers,
        resume=(directory / "checkpoint-last").exists(),
    )
    task_files = [
        (
            TaskConfig(
                task, text_field="problem", label_field="subject", alignment=settings.alignment and task != "kpc"
            ),
            files[task]["train"],
            files[task]["dev"],
        )
        for task in RELEASE_TASKS
    ]
    result = train_multitask(task_files, training, model=str(work / "pretrain"), freeze_embeddings=True)
    (work / "multitask.json").write_text(json.dumps(result, indent=1, default=str))


def encoder_from_package(package: Path, directory: Path) -> None:
    """Save the package's pre-trained encoder to ``directory`` (stage 1's place), with the package's
    pre-training facts, so that stages 2 and 3 run as after stage 1."""
    from mathgraph.models.package import ModelPackage

    if (directory / "config.json").exists():
        return
    loaded = ModelPackage(package, device="cpu")
    loaded.encoder.save_pretrained(directory)
    facts = {k: v for k, v in loaded.release_info()["training"].items() if k.startswith("pretrain_")}
    (directory / PACKAGE_FACTS).write_text(json.dumps(facts, indent=1), encoding="utf-8")


def package(files: dict, work: Path, output: Path, settings: ReleaseSettings, say=print) -> dict:
    """Stage 3: TF-IDF models, late-fusion weights on dev, the package, and its figures measured from it."""
    from mathgraph.models.encoder import MathEncoder
    from mathgraph.models.multitask import MultiTaskModel
    from mathgraph.tasks.release.package import add_onnx_graphs, finish_package, write_package
    from mathgraph.tasks.training.tfidf import train_tfidf

    tfidf_dirs = {}
    for task in RELEASE_TASKS:
        tfidf_dirs[task] = work / "tfidf" / task
        if not (tfidf_dirs[task] / "config.json").exists():
            rows = [json.loads(line) for line in open(files[task]["train"], encoding="utf-8")]
            train_tfidf(task, rows, text_field="problem", label_field="subject").save_pretrained(tfidf_dirs[task])
    encoder = MathEncoder.from_pretrained(work / "pretrain", device="cpu")
    model = MultiTaskModel.from_pretrained(work / "multitask")
    stored = write_package(output, encoder, model, tfidf_dirs)
    release = measure_package(files, output, settings, say)
    release["search"] = measure_search(files, output, settings, say)
    release["training"] = {**card_facts(work, files), "values_stored": stored}
    finish_package(output, release)  # the sample's shipped figures need config.json's late-fusion settings
    release["sample"] = write_sample(files, output, settings, say)
    finish_package(output, release)
    if model.config.adapter == "none":  # the graphs ONNX Runtime predicts with (MoE and LoRA are not exported)
        release["onnx"] = add_onnx_graphs(output)
    return release


def heads(files: dict, work: Path, output: Path, settings: ReleaseSettings, say=print) -> dict:
    """The QAM head of the package in ``output`` refitted on the frozen multi-task model's vectors with every
    alignment feature computed (``tasks.training.head_refit.refit_head``: trained on QAM train, the epoch chosen
    on dev), the multi-task model written back as the package stores it (the delta against its encoder), and the
    refit's record in the release notes (``training.qam_head_refit``). The figures are not measured again: run
    ``measure`` after it."""
    import copy

    from mathgraph.models.package import MULTITASK_DIR, RELEASE_NAME, ModelPackage
    from mathgraph.tasks.evaluation import labelled_inputs
    from mathgraph.tasks.release.package import finish_package
    from mathgraph.tasks.training.head_refit import refit_head

    release = read_config(output, RELEASE_NAME)
    package = ModelPackage(output, device=settings.device)
    # the multi-task model loads into its package's encoder: the delta is taken against a copy of it as stored
    encoder = copy.deepcopy(package.encoder)
    model = package.multitask
    train_inputs, train_gold = labelled_inputs("qam", files["qam"]["train"])
    dev_inputs, dev_gold = labelled_inputs("qam", files["qam"]["dev"])
    record = refit_head(
        model,
        "qam",
        train_inputs,
        train_gold,
        dev_inputs,
        dev_gold,
        epochs=settings.head_epochs,
        seed=settings.seed,
        say=say,
    )
    stored = model.save_delta(output / MULTITASK_DIR, encoder)
    training = release.setdefault("training", {})
    training["qam_head_refit"] = record
    training.setdefault("values_stored", {})["multitask"] = stored
    finish_package(output, release)  # checksums of the new weights
    say(f"wrote the multi-task model with the refitted qam head to {output / MULTITASK_DIR}: run measure next")
    return release


def measure(files: dict, work: Path, output: Path, settings: ReleaseSettings, say=print) -> dict:
    """Stage 3 without training or writing weights: the neural, TF-IDF and late-fusion figures of the package in
    ``output`` measured again (and the late-fusion weights chosen again on dev), for when what the models read
    changed (such as the alignment features the pair heads read); the rest of its release notes is kept. Run
    ``structure`` after it: the alignment models' figures are measured against these."""
    from mathgraph.models.package import RELEASE_NAME
    from mathgraph.tasks.release.package import finish_package

    release = read_config(output, RELEASE_NAME)
    measured = measure_package(files, output, settings, say)
    release["machine"] = measured["machine"]
    for task, record in measured["tasks"].items():
        release["tasks"][task] = record
    finish_package(output, release)
    return release


def structure(files: dict, work: Path, output: Path, settings: ReleaseSettings, say=print) -> dict:
    """Stage 4: alignment models in the package, fused with its results where dev says so; then stage 5."""
    from mathgraph.models.alignment_model import STRUCTURE_TASKS, AlignmentModel
    from mathgraph.models.late_fusion import fuse
    from mathgraph.models.package import RELEASE_NAME, STRUCTURE_DIR
    from mathgraph.tasks.evaluation import labelled_inputs, task_metric
    from mathgraph.tasks.release.package import finish_package
    from mathgraph.tasks.training.late_fusion import choose_weight

    release = read_config(output, RELEASE_NAME)
    for task in STRUCTURE_TASKS:  # a rerun measures against the package without its earlier alignment models
        record = release["tasks"][task]
        record.pop("structure", None)
        for part in (p for p in record if p != "hybrid"):
            for name in ("structure", "with_structure", "shipped"):
                record[part].pop(name, None)
    shutil.rmtree(output / STRUCTURE_DIR, ignore_errors=True)
    finish_package(output, release)
    before_package = _package(output, settings)
    for task in STRUCTURE_TASKS:
        train_inputs, train_gold = labelled_inputs(task, files[task]["train"])
        started = time.perf_counter()
        model = AlignmentModel(task, settings.structure_options).fit(train_inputs, train_gold, show_progress=True)
        seconds = time.perf_counter() - started
        model.save_pretrained(output / STRUCTURE_DIR / task)
        before = before_package.predictor(task)
        outputs = {}
        for part, path in files[task].items():
            if part != "train":
                inputs, gold = labelled_inputs(task, path)
                outputs[part] = (before.predict(inputs), model.predict(inputs), gold)
        weight, tried = choose_weight(outputs["dev"][0], outputs["dev"][1], task_metric(task, outputs["dev"][2]))
        record = release["tasks"][task]
        for part, (shipped, aligned, gold) in outputs.items():
            fused = [fuse(b, s, weight) for b, s in zip(shipped, aligned)]
            record[part]["structure"] = with_interval(task, aligned, gold)
            record[part]["with_structure"] = with_interval(task, fused, gold)
        on = weight > 0 and record["dev"]["with_structure"]["value"] > tried[0.0]
        for part in outputs:
            record[part]["shipped"] = record[part]["with_structure" if on else _shipped_before(record)]
        record["structure"] = {  # "default": whether the shipped model fuses it unless told (config.json)
            "weight": weight,
            "default": on,
            "train_seconds": round(seconds, 1),
            "n_train": len(train_inputs),
            "dev_by_weight": {str(w): round(v, 4) for w, v in tried.items()},
        }
        figures = {p: {k: record[p][k]["value"] for k in ("structure", "with_structure", "shipped")} for p in outputs}
        say(f"{task} {json.dumps(figures)} {record['structure']}")
    release["search"] = measure_search_structure(files, output, release["search"], settings, say)
    finish_package(output, release)  # the sample's shipped figures need the new config.json
    release["sample"] = write_sample(files, output, settings, say)
    finish_package(output, release)
    return release


def search(files: dict, work: Path, output: Path, settings: ReleaseSettings, say=print) -> dict:
    """Stage 5: ``mathgraph search``'s alignment step measured again on the package in ``output``."""
    from mathgraph.models.package import RELEASE_NAME
    from mathgraph.tasks.release.package import finish_package

    release = read_config(output, RELEASE_NAME)
    release["search"] = measure_search_structure(files, output, release["search"], settings, say)
    finish_package(output, release)
    return release


def bank_search(files: dict, work: Path, output: Path, settings: ReleaseSettings, say=print) -> dict:
    """Stage 6: search's first stage and its alignment step fitted on a question bank (the GSM8K
    train questions and the GSM-Plus seeds), the GSM-Plus variants split by seed as the task files are
    (``split_by_group``, ``settings.seed``): ``tasks.release.bank_search``."""
    from mathgraph.tasks.data import split_by_group
    from mathgraph.tasks.release.bank_search import release_bank_search

    if settings.bank_data is None:
        raise ValueError(
            "bank-search needs --bank-data DIR: the folder of gsm8k/train.jsonl and gsmplus/variants.jsonl"
        )
    data = Path(settings.bank_data)
    read = lambda path: [json.loads(line) for line in open(path, encoding="utf-8")]  # noqa: E731
    variants = split_by_group(read(data / "gsmplus" / "variants.jsonl"), "seed_question", seed=settings.seed)
    release_bank_search(
        output, read(data / "gsm8k" / "train.jsonl"), variants, work / "bank-search", say, settings.structure_options
    )
    from mathgraph.registry import read_config

    return read_config(output, "release.json")


_STAGES = {
    "measure": measure,
    "pretrain": pretrain,
    "multitask": multitask,
    "package": package,
    "heads": heads,
    "structure": structure,
    "search": search,
    "bank-search": bank_search,
}


def _package(root: Path, settings: ReleaseSettings):
    from mathgraph.models.package import ModelPackage

    return ModelPackage(root, device=settings.device)


def _sqr_tfidf(package):
    """The package's SQR TF-IDF model as a predictor, whatever its ``config.json`` says of search."""
    from mathgraph.models.package import TFIDF_DIR

    return package.tfidf("sqr", {"path": f"{TFIDF_DIR}/sqr"})


def measure_search_structure(
    files: dict, root: Path, search: dict, settings: ReleaseSettings | None = None, say=print
) -> dict:
    """``mathgraph search`` with the alignment step on the graded SQR lists: its first stage (the package
    encoder's cosine, fused with TF-IDF where search's late fusion is on) fused with the SQR alignment model's
    scores of the rows at least ``min_cosine`` close to the query (``VARIANT_COVERAGE`` of the train lists'
    relevant candidates), the weight chosen on dev; returns ``search`` with the rows "structure" (the model
    alone, every candidate scored) and "with structure"."""
    import numpy as np

    from mathgraph.models.alignment_model import AlignmentModel, close_variant_scores
    from mathgraph.models.late_fusion import fuse
    from mathgraph.models.package import STRUCTURE_DIR
    from mathgraph.models.task_io import ranking_result
    from mathgraph.tasks.evaluation import labelled_inputs, task_metric
    from mathgraph.tasks.search.index import l2_normalize
    from mathgraph.tasks.training.late_fusion import choose_weight

    settings = settings or ReleaseSettings()
    for part in ("dev", "test"):
        for name in ("structure", "with structure"):
            search[part].pop(name, None)
    search.pop("structure", None)
    loaded = _package(root, settings)
    encoder, tfidf = loaded.encoder, _sqr_tfidf(loaded)
    model = AlignmentModel.from_pretrained(root / STRUCTURE_DIR / "sqr")

    def lists(part: str) -> tuple[list, list, list[np.ndarray]]:
        """The part's lists, their relevance grades and each candidate's cosine to its query."""
        inputs, gold = labelled_inputs("sqr", files["sqr"][part])
        texts = sorted({t for query, candidates in inputs for t in (query, *candidates)})
        vectors = dict(zip(texts, l2_normalize(encoder.encode(texts, batch_size=32))))
        return inputs, gold, [np.array([vectors[query] @ vectors[c] for c in cs]) for query, cs in inputs]

    _, train_gold, train_cosines = lists("train")
    relevant = np.concatenate([cos[np.asarray(grades) > 0] for cos, grades in zip(train_cosines, train_gold)])
    min_cosine = round(float(np.quantile(relevant, 1 - VARIANT_COVERAGE)), 4)
    outputs = {}
    for part in ("dev", "test"):
        inputs, gold, cosines = lists(part)
        dense = [ranking_result(c.tolist()) for c in cosines]
        first = (
            [fuse(d, s, search["hybrid"]["weight"]) for d, s in zip(dense, tfidf.predict(inputs))]
            if search["hybrid"]["default"]
            else dense
        )
        # a list without a close candidate keeps its first stage: all-zero scores fuse to its order
        gated = [
            ranking_result((np.zeros(len(c)) if s is None else s).tolist())
            for c, s in zip(cosines, close_variant_scores(model, inputs, cosines, min_cosine))
        ]
        outputs[part] = (first, gated, model.predict(inputs), gold)
    weight, tried = choose_weight(outputs["dev"][0], outputs["dev"][1], task_metric("sqr", outputs["dev"][3]))
    for part, (first, gated, alone, gold) in outputs.items():
        search[part]["structure"] = with_interval("sqr", alone, gold)
        search[part]["with structure"] = with_interval("sqr", [fuse(f, s, weight) for f, s in zip(first, gated)], gold)
    search["structure"] = {
        "weight": weight,
        "default": weight > 0 and search["dev"]["with structure"]["value"] > tried[0.0],
        "min_cosine": min_cosine,
        "variant_coverage": VARIANT_COVERAGE,
        "dev_by_weight": {str(w): round(v, 4) for w, v in tried.items()},
    }
    figures = {p: {k: search[p][k]["value"] for k in ("structure", "with structure")} for p in outputs}
    say(f"search {json.dumps(figures)} {search['structure']}")
    return search


def _shipped_before(record: dict) -> str:
    return "hybrid" if record["hybrid"]["default"] else "neural"


def measure_package(files: dict, root: Path, settings: ReleaseSettings | None = None, say=print) -> dict:
    """Neural, TF-IDF and late-fusion figures of the package at ``root`` on every dev and test part; the
    late-fusion weight of each task chosen on its dev part."""
    from mathgraph.models.late_fusion import WEIGHTS, fuse
    from mathgraph.models.package import TFIDF_DIR
    from mathgraph.tasks.evaluation import labelled_inputs, task_metric
    from mathgraph.tasks.training.late_fusion import choose_weight

    loaded = _package(root, settings or ReleaseSettings())
    release: dict = {"machine": machine(), "tasks": {}}
    for task in RELEASE_TASKS:
        neural_model = loaded.multitask.for_task(task)
        sparse_model = loaded.tfidf(task, {"path": f"{TFIDF_DIR}/{task}"})
        record: dict = {}
        outputs = {}
        for part, path in files[task].items():
            if part == "train":
                continue
            inputs, gold = labelled_inputs(task, path)
            started = time.perf_counter()
            neural = neural_model.predict(inputs)
            seconds = time.perf_counter() - started
            outputs[part] = (neural, sparse_model.predict(inputs), gold)
            record[part] = {"n": len(inputs), "neural_seconds": round(seconds, 1)}
        metric = task_metric(task, outputs["dev"][2])
        # the best weight above 0 (so --hybrid always has one chosen on dev); on unless told if it beats w = 0
        weight, tried = choose_weight(outputs["dev"][0], outputs["dev"][1], metric, WEIGHTS[1:])
        for part, (neural, sparse, gold) in outputs.items():
            record[part].update(
                {
                    name: with_interval(task, results, gold)
                    for name, results in (
                        ("neural", neural),
                        ("tfidf", sparse),
                        ("hybrid", [fuse(n, s, weight) for n, s in zip(neural, sparse)]),
                    )
                }
            )
        dev = record["dev"]
        record["hybrid"] = {
            "weight": weight,
            "dev_by_weight": {str(w): round(v, 4) for w, v in tried.items()},
            "default": weight > 0 and dev["hybrid"]["value"] > dev["neural"]["value"],
        }
        release["tasks"][task] = record
        figures = {
            p: {k: v.get("value") if isinstance(v, dict) else v for k, v in r.items()}
            for p, r in record.items()
            if p != "hybrid"
        }
        say(f"{task} {json.dumps(figures)} {record['hybrid']}")
    return release


def measure_search(files: dict, root: Path, settings: ReleaseSettings | None = None, say=print) -> dict:
    """Similar-problem search on the graded SQR lists: cosine of the package encoder's vectors against the
    untrained architecture, all-MiniLM-L6-v2 alone (mean-pooled text vectors) and TF-IDF, and the late fusion
    of the package encoder with TF-IDF (weight chosen on dev): what ``mathgraph search --hybrid`` uses."""
    from mathgraph.models.encoder import MathEncoder
    from mathgraph.models.late_fusion import WEIGHTS, fuse
    from mathgraph.models.task_io import ranking_result
    from mathgraph.tasks.evaluation import labelled_inputs, task_metric
    from mathgraph.tasks.search.embedders import TextEmbedder
    from mathgraph.tasks.search.index import l2_normalize
    from mathgraph.tasks.training.late_fusion import choose_weight

    settings = settings or ReleaseSettings()
    loaded = _package(root, settings)
    tfidf = _sqr_tfidf(loaded)
    embedders = {
        "shipped encoder": loaded.encoder,
        "untrained COMUS": MathEncoder.from_pretrained("untrained", device=settings.device),
        "all-MiniLM-L6-v2": TextEmbedder("minilm", device=settings.device),
    }
    record: dict = {}
    results: dict = {}
    for part in ("dev", "test"):
        inputs, gold = labelled_inputs("sqr", files["sqr"][part])
        texts = sorted({t for query, candidates in inputs for t in (query, *candidates)})
        results[part] = {"TF-IDF": tfidf.predict(inputs)}
        for name, embedder in embedders.items():
            vectors = dict(zip(texts, l2_normalize(embedder.encode(texts, batch_size=32))))
            results[part][name] = [
                ranking_result([float(vectors[query] @ vectors[c]) for c in candidates]) for query, candidates in inputs
            ]
        results[part]["gold"] = gold
    dev = results["dev"]
    weight, tried = choose_weight(dev["shipped encoder"], dev["TF-IDF"], task_metric("sqr", dev["gold"]), WEIGHTS[1:])
    for part, by_model in results.items():
        gold = by_model.pop("gold")
        by_model["hybrid"] = [fuse(d, s, weight) for d, s in zip(by_model["shipped encoder"], by_model["TF-IDF"])]
        record[part] = {name: with_interval("sqr", ranked, gold) for name, ranked in by_model.items()}
        record[part]["n"] = len(gold)
    record["hybrid"] = {
        "weight": weight,
        "dev_by_weight": {str(w): round(v, 4) for w, v in tried.items()},
        "default": record["dev"]["hybrid"]["value"] > record["dev"]["shipped encoder"]["value"],
    }
    figures = {p: {k: v["value"] for k, v in r.items() if k != "n"} for p, r in record.items() if p != "hybrid"}
    say(f"search {json.dumps(figures)} {record['hybrid']}")
    return record


def write_sample(files: dict, root: Path, settings: ReleaseSettings | None = None, say=print) -> dict:
    """Dev rows of each task (seeded) into ``root/sample/TASK.jsonl`` and the package's figures on them
    (neural alone, and as shipped: fused where ``config.json`` says so)."""
    from mathgraph.tasks.evaluation import labelled_inputs, task_metric

    loaded = _package(root, settings or ReleaseSettings())
    figures = {}
    (root / "sample").mkdir(exist_ok=True)
    for task, size in SAMPLE_SIZES.items():
        dev = Path(files[task]["dev"]).read_text(encoding="utf-8").splitlines()
        size = min(size, len(dev))  # smaller only in smoke runs
        lines = [dev[i] for i in sorted(random.Random(0).sample(range(len(dev)), size))]  # files can be sorted by label
        path = root / "sample" / f"{task}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        inputs, gold = labelled_inputs(task, str(path))
        figures[task] = {
            "n": len(inputs),
            **{
                name: round(task_metric(task, gold)(loaded.predictor(task, hybrid=hybrid).predict(inputs)), 4)
                for name, hybrid in (("neural", False), ("shipped", None))
            },
        }
    say(f"sample {json.dumps(figures)}")
    return figures


def with_interval(task: str, results: list[dict], gold: list) -> dict:
    """The task's main metric with its 95% interval: Wilson for accuracy, bootstrap over lists for NDCG@3."""
    metrics = metrics_with_interval(task, results, gold)
    name = task_spec(task).metric
    return {"metric": name, "value": round(metrics[name], 4), "ci95": metrics[f"{name}_ci95"]}


def metrics_with_interval(task: str, results: list[dict], gold: list) -> dict:
    """Accuracy and macro-F1 with a Wilson interval, or SQR's ranking metrics with bootstrap intervals over lists."""
    import numpy as np

    from mathgraph.tasks.metrics import ranking_metrics

    if task != "sqr":
        from sklearn.metrics import f1_score

        predicted = [r["label"] for r in results]
        accuracy = float(np.mean([p == g for p, g in zip(predicted, gold)]))
        return {
            "accuracy": accuracy,
            "macro_f1": float(f1_score([str(g) for g in gold], [str(p) for p in predicted], average="macro")),
            "n": len(gold),
            "accuracy_ci95": wilson(accuracy, len(gold)),
        }
    scores = [r["scores"] for r in results]
    metrics = ranking_metrics(scores, gold)
    per_list = [ranking_metrics([s], [g]) for s, g in zip(scores, gold)]
    rng = np.random.default_rng(0)
    for name in ("ndcg@3", "map", "hr@1"):
        values = np.array([m[name] for m in per_list])
        means = values[rng.integers(0, len(values), (2000, len(values)))].mean(axis=1)
        metrics[f"{name}_ci95"] = [
            round(float(np.percentile(means, 2.5)), 4),
            round(float(np.percentile(means, 97.5)), 4),
        ]
    return metrics


def wilson(accuracy: float, n: int) -> list[float]:
    """The 95% Wilson score interval of an accuracy over ``n`` examples."""
    from scipy.stats import binomtest

    interval = binomtest(round(accuracy * n), n).proportion_ci(confidence_level=0.95, method="wilson")
    return [round(float(interval.low), 4), round(float(interval.high), 4)]


def machine() -> str:
    """The machine the figures were measured on, in one line."""
    import torch

    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"cuda {torch.cuda.is_available()}"
    )


def card_facts(work: Path, files: dict) -> dict:
    """Training facts for the model card, from the runs' saved states and the pre-training corpus."""

    def state(directory: Path) -> dict:
        path = directory / "checkpoint-last" / "trainer_state.json"
        return json.loads(path.read_text())["state"] if path.exists() else {}

    log = work / "pretrain" / "training_log.jsonl"
    curve = [json.loads(line) for line in open(log, encoding="utf-8")] if log.exists() else []
    from_package = work / "pretrain" / PACKAGE_FACTS
    corpus = Path(files.get(PRETRAIN_CORPUS, {}).get("train", work / "no-corpus"))
    pretraining = (
        json.loads(from_package.read_text(encoding="utf-8"))
        if from_package.exists()
        else {
            "pretrain_steps": state(work / "pretrain").get("step"),
            "pretrain_texts": sum(1 for _ in open(corpus, encoding="utf-8")) if corpus.exists() else None,
            "pretrain_loss_first": curve[0] if curve else None,
            "pretrain_loss_last": curve[-1] if curve else None,
        }
    )
    return {**pretraining, "multitask_history": state(work / "multitask").get("history"), "machine": machine()}


__all__ = [
    "ReleaseSettings",
    "RELEASE_TASKS",
    "STAGES",
    "ALL_STAGES",
    "build_release",
    "task_files",
    "measure_package",
    "measure_search",
    "measure_search_structure",
    "write_sample",
    "metrics_with_interval",
    "wilson",
]
