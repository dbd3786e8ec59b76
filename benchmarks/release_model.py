"""Build the model that ships in the package: pre-train, fine-tune on four tasks, fuse with TF-IDF, package.

    python benchmarks/release_model.py --work results/ --stage pretrain   [--steps 2000]
    python benchmarks/release_model.py --work results/ --stage multitask  [--epochs 2] [--start shipped] [--no-alignment]
    python benchmarks/release_model.py --work results/ --stage package    [--output mathgraph/data/shipped_model]
    python benchmarks/release_model.py --work results/ --stage structure  [--output mathgraph/data/shipped_model]
    python benchmarks/release_model.py --work results/ --stage search     [--output mathgraph/data/shipped_model]
    python benchmarks/release_model.py --work results/ --smoke            [--stage ...]

Splits and task files are those of ``benchmarks/results.py`` (seed 0), so the
released model's figures sit next to the results table's rows.

1. ``pretrain``: COMUS (MLM + DTC + TGCL) from the untrained architecture (the
   packaged all-MiniLM-L6-v2) on the pre-training corpus: the MATH problems of the
   KPC train part and the GSM8K questions and solutions of the QAM train part, none
   of any dev or test text. The pre-trained word embeddings stay fixed
   (``--freeze-vocabulary``): only the added LaTeX rows, the layers and the graph
   side train, which is what keeps the shipped files small. Resumable (``--resume``
   is passed when a checkpoint exists); the loss curve is ``pretrain/training_log.jsonl``.
2. ``multitask``: one dense multi-task model (KPC, QRC, QAM, SQR; per-task heads) from
   the pre-trained encoder, embeddings frozen, the best epoch by mean dev metric. The
   QRC, QAM and SQR heads also read each pair's alignment features (``parsers.compare``;
   ``--no-alignment`` leaves them out). ``--start shipped`` fine-tunes the encoder of the
   package already written instead of stage 1's (stage 1 not re-run: the package's
   pre-training facts are kept for the model card).
3. ``package``: TF-IDF baselines on the same train parts; the hybrid weight of each
   task chosen on dev (``tasks.hybrid``); the package written as ``models.shipped``
   reads it (fp16 deltas, checksums); then every figure measured *from the written
   package* on dev and test (neural, TF-IDF, hybrid; 95% intervals) into
   ``release.json``.
4. ``structure``: on the written package, a structure model (``tasks.structure``) per
   pair task trained on its train part, fused with what the package gave so far
   (neural, or the hybrid where on) with a weight chosen on dev (0 keeps the package's
   answer, 1 is the structure model alone), on by default where it beats dev; the
   figures (structure alone, fused, shipped) and the sample's figures measured again;
   then stage 5.
5. ``search``: ``mathgraph search``'s structure step measured again on the written
   package (nothing is fitted): the SQR structure model scores only rows whose cosine
   to the query is at least ``min_cosine``, the cosine above which 95% of the relevant
   candidates of the SQR train lists lie (it judges variants of the query, and far
   from them it is wrong: on MATH problems it rates unrelated problems as variants);
   its weight is chosen on dev.

``--smoke`` runs the five stages in turn (or the ``--stage`` named) on the smoke task files
(``benchmarks/results.py --smoke``'s): pre-training of a tiny new model (a 6-layer, 32-wide BERT)
and multi-task training for 2 steps each, structure models of 20 iterations; everything, the
package included (``--output`` defaults to ``WORK/smoke/package``), goes to ``WORK/smoke``, and
nothing to ``benchmarks/results``. Seconds, to keep the script working; it refuses to write the
shipped package.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mathgraph.tasks.evaluation import labelled_inputs as task_inputs  # noqa: E402
from mathgraph.tasks.evaluation import task_metric  # noqa: E402
from mathgraph.tasks.training.trainer import TrainingArguments  # noqa: E402

from results import REPO, build_task_files, machine, metrics_with_interval  # noqa: E402
from smoke import smoke_work, tiny_encoder  # noqa: E402

TASKS = ("kpc", "qrc", "qam", "sqr")
SHIPPED = REPO / "mathgraph" / "data" / "shipped_model"


def main() -> None:
    args = _arguments()
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    if args.output is None:
        args.output = str(work / "package" if args.smoke else SHIPPED)
    if args.smoke and Path(args.output).resolve() == SHIPPED.resolve():
        raise SystemExit("--smoke does not write the shipped package: give another --output")
    files = build_task_files(work / "data", args.seed, smoke=args.smoke)
    stages = {
        "pretrain": pretrain,
        "multitask": multitask,
        "package": package,
        "structure": structure,
        "search": search,
    }
    for stage in [args.stage] if args.stage else stages:  # --smoke without --stage: all five
        stages[stage](files, work, args)


def pretrain(files: dict, work: Path, args) -> None:
    """Stage 1: continual pre-training from the untrained architecture, vocabulary frozen."""
    from mathgraph.tasks.training.pretrain import run_pretraining

    output = work / "pretrain"
    texts = [json.loads(line)["text"] for line in open(files["pretrain"]["train"], encoding="utf-8")]
    training = TrainingArguments(
        output_dir=str(output),
        max_steps=2 if args.smoke else args.steps,
        batch_size=4 if args.smoke else 32,
        learning_rate=5e-5,
        seed=args.seed,
        parse_workers=args.workers,
        resume=(output / "checkpoint-last").exists(),
    )
    run_pretraining(texts, training, model=tiny_encoder(work) if args.smoke else "untrained", freeze_vocabulary=True)


def multitask(files: dict, work: Path, args) -> None:
    """Stage 2: the dense multi-task model from the pre-trained encoder, embeddings frozen."""
    from mathgraph.models.task_model import TaskConfig
    from mathgraph.tasks.training.multitask import train_multitask

    output = work / "multitask"
    if args.start == "shipped":
        _encoder_from_package(Path(args.output), work / "pretrain")
    training = TrainingArguments(
        output_dir=str(output),
        epochs=args.epochs,
        max_steps=2 if args.smoke else None,
        batch_size=2 if args.smoke else 16,
        learning_rate=3e-5,
        seed=args.seed,
        parse_workers=args.workers,
        resume=(output / "checkpoint-last").exists(),
    )
    task_files = [
        (
            TaskConfig(task, text_field="problem", label_field="subject", alignment=args.alignment and task != "kpc"),
            files[task]["train"],
            files[task]["dev"],
        )
        for task in TASKS
    ]
    result = train_multitask(task_files, training, model=str(work / "pretrain"), freeze_embeddings=True)
    (work / "multitask.json").write_text(json.dumps(result, indent=1, default=str))


def _encoder_from_package(package: Path, directory: Path) -> None:
    """Save the package's pre-trained encoder to ``directory`` (stage 1's place), with the package's
    pre-training facts, so that stages 2 and 3 run as after stage 1."""
    from mathgraph.models.encoder import load_shipped_encoder
    from mathgraph.models.shipped import RELEASE_NAME

    if (directory / "config.json").exists():
        return
    release = json.loads((package / RELEASE_NAME).read_text(encoding="utf-8"))
    load_shipped_encoder(package).save_pretrained(directory)
    facts = {k: v for k, v in release["training"].items() if k.startswith("pretrain_")}
    (directory / PACKAGE_FACTS).write_text(json.dumps(facts, indent=1), encoding="utf-8")


PACKAGE_FACTS = "pretrain_facts_from_package.json"


def package(files: dict, work: Path, args) -> None:
    """Stage 3: TF-IDF, hybrid weights on dev, the package, and its figures measured from the package."""
    from mathgraph.models.encoder import MathEncoder
    from mathgraph.models.multitask import MultiTaskModel
    from mathgraph.tasks.release.package import finish_package, write_package
    from mathgraph.tasks.training.tfidf import train_tfidf

    output = Path(args.output)
    tfidf_dirs = {}
    for task in TASKS:
        tfidf_dirs[task] = work / "tfidf" / task
        if not (tfidf_dirs[task] / "config.json").exists():
            rows = [json.loads(line) for line in open(files[task]["train"], encoding="utf-8")]
            train_tfidf(task, rows, text_field="problem", label_field="subject").save_pretrained(tfidf_dirs[task])
    encoder = MathEncoder.from_pretrained(work / "pretrain", device="cpu")
    model = MultiTaskModel.from_pretrained(work / "multitask")
    stored = write_package(output, encoder, model, tfidf_dirs)
    release = measure_package(files, output)
    release["search"] = measure_search(files, output)
    release["training"] = {**_card_facts(work), "values_stored": stored}
    finish_package(output, release)  # the sample's shipped figures need release.json's hybrid settings
    release["sample"] = write_sample(files, output)
    finish_package(output, release)
    # the loss curve goes with the results (not from --smoke runs); absent when stage 2 started from the package
    if (work / "pretrain" / "training_log.jsonl").exists() and not args.smoke:
        shutil.copy(
            work / "pretrain" / "training_log.jsonl", REPO / "benchmarks" / "results" / "issue13_pretrain_log.jsonl"
        )
    print(json.dumps(release, indent=1))


def structure(files: dict, work: Path, args) -> None:
    """Stage 4: structure models in the package, fused with its results where dev says so."""
    from mathgraph.models.late_fusion import fuse
    from mathgraph.models.shipped import RELEASE_NAME, STRUCTURE_DIR
    from mathgraph.models.structure import STRUCTURE_TASKS, StructureModel
    from mathgraph.tasks.release.package import finish_package
    from mathgraph.tasks.release.shipped import shipped_parts, shipped_predictor
    from mathgraph.tasks.training.late_fusion import choose_weight

    output = Path(args.output)
    release = json.loads((output / RELEASE_NAME).read_text(encoding="utf-8"))
    for task in STRUCTURE_TASKS:  # a rerun measures against the package without its earlier structure models
        record = release["tasks"][task]
        record.pop("structure", None)
        for part in (p for p in record if p != "hybrid"):
            for name in ("structure", "with_structure", "shipped"):
                record[part].pop(name, None)
    shutil.rmtree(output / STRUCTURE_DIR, ignore_errors=True)
    finish_package(output, release)
    parts = shipped_parts(output)
    for task in STRUCTURE_TASKS:
        train_inputs, train_gold = task_inputs(task, files[task]["train"])
        started = time.perf_counter()
        model = StructureModel(task, {"max_iter": 20} if args.smoke else None).fit(
            train_inputs, train_gold, show_progress=True
        )
        seconds = time.perf_counter() - started
        model.save_pretrained(output / STRUCTURE_DIR / task)
        before = shipped_predictor(task, root=output, parts=parts)
        outputs = {}
        for part, path in files[task].items():
            if part != "train":
                inputs, gold = task_inputs(task, path)
                outputs[part] = (before.predict(inputs), model.predict(inputs), gold)
        weight, tried = choose_weight(outputs["dev"][0], outputs["dev"][1], task_metric(task, outputs["dev"][2]))
        record = release["tasks"][task]
        for part, (shipped, structured, gold) in outputs.items():
            fused = [fuse(b, s, weight) for b, s in zip(shipped, structured)]
            record[part]["structure"] = _with_interval(task, structured, gold)
            record[part]["with_structure"] = _with_interval(task, fused, gold)
        default = weight > 0 and record["dev"]["with_structure"]["value"] > tried[0.0]
        for part in outputs:
            record[part]["shipped"] = record[part]["with_structure" if default else _shipped_before(record)]
        record["structure"] = {
            "weight": weight,
            "default": default,
            "train_seconds": round(seconds, 1),
            "n_train": len(train_inputs),
            "dev_by_weight": {str(w): round(v, 4) for w, v in tried.items()},
        }
        print(
            task,
            json.dumps(
                {p: {k: record[p][k]["value"] for k in ("structure", "with_structure", "shipped")} for p in outputs}
            ),
            record["structure"],
            flush=True,
        )
    release["search"] = measure_search_structure(files, output, release["search"])
    finish_package(output, release)  # the sample's shipped figures need the new release.json
    release["sample"] = write_sample(files, output)
    finish_package(output, release)


def search(files: dict, work: Path, args) -> None:
    """Stage 5: ``mathgraph search``'s structure step measured again on the package in ``--output``."""
    from mathgraph.models.shipped import RELEASE_NAME
    from mathgraph.tasks.release.package import finish_package

    output = Path(args.output)
    release = json.loads((output / RELEASE_NAME).read_text(encoding="utf-8"))
    release["search"] = measure_search_structure(files, output, release["search"])
    finish_package(output, release)


# The share of the SQR train lists' relevant candidates that search's structure step scores: its min_cosine is
# the cosine to the query above which this share of them lies.
VARIANT_COVERAGE = 0.95


def measure_search_structure(files: dict, root: Path, search: dict) -> dict:
    """``mathgraph search`` with the structure signal on the graded SQR lists: its first stage (the shipped
    encoder's cosine, fused with TF-IDF where the search hybrid is on) fused with the SQR structure model's
    scores of the rows at least ``min_cosine`` close to the query (``VARIANT_COVERAGE`` of the train lists'
    relevant candidates), the weight chosen on dev; returns ``search`` with the rows "structure" (the model
    alone, every candidate scored) and "with structure"."""
    import numpy as np

    from mathgraph.models.encoder import load_shipped_encoder
    from mathgraph.models.late_fusion import fuse
    from mathgraph.models.shipped import STRUCTURE_DIR
    from mathgraph.models.structure import StructureModel, close_variant_scores
    from mathgraph.models.task_io import ranking_result
    from mathgraph.tasks.release.shipped import shipped_tfidf
    from mathgraph.tasks.search.index import l2_normalize
    from mathgraph.tasks.training.late_fusion import choose_weight

    for part in ("dev", "test"):
        for name in ("structure", "with structure"):
            search[part].pop(name, None)
    search.pop("structure", None)
    encoder, tfidf = load_shipped_encoder(root), shipped_tfidf("sqr", root)
    model = StructureModel.from_pretrained(root / STRUCTURE_DIR / "sqr")

    def lists(part: str) -> tuple[list, list, list[np.ndarray]]:
        """The part's lists, their relevance grades and each candidate's cosine to its query."""
        inputs, gold = task_inputs("sqr", files["sqr"][part])
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
        search[part]["structure"] = _with_interval("sqr", alone, gold)
        search[part]["with structure"] = _with_interval("sqr", [fuse(f, s, weight) for f, s in zip(first, gated)], gold)
    search["structure"] = {
        "weight": weight,
        "default": weight > 0 and search["dev"]["with structure"]["value"] > tried[0.0],
        "min_cosine": min_cosine,
        "variant_coverage": VARIANT_COVERAGE,
        "dev_by_weight": {str(w): round(v, 4) for w, v in tried.items()},
    }
    print(
        "search",
        json.dumps({p: {k: search[p][k]["value"] for k in ("structure", "with structure")} for p in outputs}),
        search["structure"],
        flush=True,
    )
    return search


def _shipped_before(record: dict) -> str:
    return "hybrid" if record["hybrid"]["default"] else "neural"


def measure_package(files: dict, root: Path) -> dict:
    """Neural, TF-IDF and hybrid figures of the package at ``root`` on every dev and test part; the hybrid
    weight of each task chosen on its dev part."""
    from mathgraph.models.late_fusion import WEIGHTS, fuse
    from mathgraph.tasks.release.shipped import shipped_parts
    from mathgraph.tasks.training.late_fusion import choose_weight

    multitask, tfidf = shipped_parts(root)
    release: dict = {"machine": machine(), "tasks": {}}
    for task in TASKS:
        neural_model, sparse_model = multitask.for_task(task), tfidf[task]
        record: dict = {}
        outputs = {}
        for part, path in files[task].items():
            if part == "train":
                continue
            inputs, gold = task_inputs(task, path)
            started = time.perf_counter()
            neural = neural_model.predict(inputs)
            seconds = time.perf_counter() - started
            outputs[part] = (neural, sparse_model.predict(inputs), gold)
            record[part] = {"n": len(inputs), "neural_seconds": round(seconds, 1)}
        metric = task_metric(task, outputs["dev"][2])
        # the best weight above 0 (so --hybrid always has one chosen on dev); on by default if it beats w = 0
        weight, tried = choose_weight(outputs["dev"][0], outputs["dev"][1], metric, WEIGHTS[1:])
        for part, (neural, sparse, gold) in outputs.items():
            record[part].update(
                {
                    name: _with_interval(task, results, gold)
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
        print(
            task,
            json.dumps(
                {
                    p: {k: v.get("value") if isinstance(v, dict) else v for k, v in r.items()}
                    for p, r in record.items()
                    if p != "hybrid"
                }
            ),
            record["hybrid"],
            flush=True,
        )
    return release


def measure_search(files: dict, root: Path) -> dict:
    """Similar-problem search on the graded SQR lists: cosine of the shipped encoder's vectors against the
    untrained architecture, all-MiniLM-L6-v2 alone (mean-pooled text vectors) and TF-IDF, and the hybrid of
    the shipped encoder with TF-IDF (weight chosen on dev): what ``mathgraph search --hybrid`` uses."""
    from mathgraph.models.encoder import MathEncoder, load_shipped_encoder
    from mathgraph.models.late_fusion import WEIGHTS, fuse
    from mathgraph.models.task_io import ranking_result
    from mathgraph.tasks.release.shipped import shipped_tfidf
    from mathgraph.tasks.search.embedders import TextEmbedder
    from mathgraph.tasks.search.index import l2_normalize
    from mathgraph.tasks.training.late_fusion import choose_weight

    tfidf = shipped_tfidf("sqr", root)
    embedders = {
        "shipped encoder": load_shipped_encoder(root),
        "untrained COMUS": MathEncoder.from_pretrained("untrained"),
        "all-MiniLM-L6-v2": TextEmbedder("default"),
    }
    record: dict = {}
    results: dict = {}
    for part in ("dev", "test"):
        inputs, gold = task_inputs("sqr", files["sqr"][part])
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
        record[part] = {name: _with_interval("sqr", ranked, gold) for name, ranked in by_model.items()}
        record[part]["n"] = len(gold)
    record["hybrid"] = {
        "weight": weight,
        "dev_by_weight": {str(w): round(v, 4) for w, v in tried.items()},
        "default": record["dev"]["hybrid"]["value"] > record["dev"]["shipped encoder"]["value"],
    }
    print(
        "search",
        json.dumps({p: {k: v["value"] for k, v in r.items() if k != "n"} for p, r in record.items() if p != "hybrid"}),
        record["hybrid"],
        flush=True,
    )
    return record


# dev rows bundled with the package, with the figures the package gives on them (the tests check them)
SAMPLE_SIZES = {"kpc": 40, "qrc": 18, "qam": 16, "sqr": 4}


def write_sample(files: dict, root: Path) -> dict:
    """Dev rows of each task (seeded) into ``root/sample/TASK.jsonl`` and the package's figures on them
    (neural and as shipped, hybrid where on by default)."""
    from mathgraph.tasks.release.shipped import shipped_parts, shipped_predictor

    parts = shipped_parts(root)
    figures = {}
    (root / "sample").mkdir(exist_ok=True)
    for task, size in SAMPLE_SIZES.items():
        dev = Path(files[task]["dev"]).read_text(encoding="utf-8").splitlines()
        size = min(size, len(dev))  # smaller only in --smoke runs
        lines = [dev[i] for i in sorted(random.Random(0).sample(range(len(dev)), size))]  # files can be sorted by label
        path = root / "sample" / f"{task}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        inputs, gold = task_inputs(task, str(path))
        figures[task] = {
            "n": len(inputs),
            **{
                name: round(
                    task_metric(task, gold)(
                        shipped_predictor(task, hybrid=hybrid, root=root, parts=parts).predict(inputs)
                    ),
                    4,
                )
                for name, hybrid in (("neural", False), ("shipped", None))
            },
        }
    print("sample", json.dumps(figures), flush=True)
    return figures


def _with_interval(task: str, results: list[dict], gold: list) -> dict:
    """The task's main metric with its 95% interval: Wilson for accuracy, bootstrap over lists for NDCG@3."""
    metrics = metrics_with_interval(task, results, gold)
    name = "ndcg@3" if task == "sqr" else "accuracy"
    return {"metric": name, "value": round(metrics[name], 4), "ci95": metrics[f"{name}_ci95"]}


def _card_facts(work: Path) -> dict:
    """Training facts for the model card, from the runs' saved states."""

    def state(directory: Path) -> dict:
        path = directory / "checkpoint-last" / "trainer_state.json"
        return json.loads(path.read_text())["state"] if path.exists() else {}

    log = work / "pretrain" / "training_log.jsonl"
    curve = [json.loads(line) for line in open(log, encoding="utf-8")] if log.exists() else []
    from_package = work / "pretrain" / PACKAGE_FACTS
    pretraining = (
        json.loads(from_package.read_text(encoding="utf-8"))
        if from_package.exists()
        else {
            "pretrain_steps": state(work / "pretrain").get("step"),
            "pretrain_texts": sum(1 for _ in open(work / "data" / "pretrain.train.jsonl", encoding="utf-8")),
            "pretrain_loss_first": curve[0] if curve else None,
            "pretrain_loss_last": curve[-1] if curve else None,
        }
    )
    return {**pretraining, "multitask_history": state(work / "multitask").get("history"), "machine": machine()}


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results")
    parser.add_argument(
        "--stage",
        choices=("pretrain", "multitask", "package", "structure", "search"),
        help="the stage to run (required unless --smoke, which runs all five by default)",
    )
    parser.add_argument("--steps", type=int, default=2000, help="pre-training steps of 32 texts (default 2000)")
    parser.add_argument("--epochs", type=int, default=2, help="multi-task epochs (default 2)")
    parser.add_argument(
        "--output", help="where the package is written (default: the shipped package; --smoke: WORK/smoke/package)"
    )
    parser.add_argument(
        "--start",
        choices=("pretrain", "shipped"),
        default="pretrain",
        help="multitask: fine-tune stage 1's encoder (default) or the package's (in --output)",
    )
    parser.add_argument(
        "--no-alignment",
        dest="alignment",
        action="store_false",
        help="multitask: pair heads without the alignment features",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="parser processes")
    parser.add_argument(
        "--smoke", action="store_true", help="the smoke data, a tiny model, 2 steps: seconds (WORK/smoke)"
    )
    args = parser.parse_args()
    if not (args.stage or args.smoke):
        parser.error("give --stage (or --smoke)")
    return args


if __name__ == "__main__":
    main()
