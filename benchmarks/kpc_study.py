"""What the graph adds on knowledge points: the controlled KPC study.

    python benchmarks/kpc_study.py --work results/ [--jobs headline,seeds,...] [--steps 2000] [--long-steps 4000]
    python benchmarks/kpc_study.py --work results/ --report      # tables, the curve PNG, no training
    python benchmarks/kpc_study.py --work /tmp/s --smoke         # two rows of every job, smoke data, tiny models

One pre-training budget for every pre-trained row: the corpus of ``results.py``
(the MATH problems of the KPC train part, the GSM8K questions and solutions of
the QAM train part), ``--steps`` steps of 32 texts, learning rate 5e-5, seed 0,
the pre-trained word embeddings fixed (``--freeze-vocabulary``, as the release),
from the untrained architecture (the packaged MiniLM). Then one KPC fine-tune
for every row: the seed-0 split of ``results.py`` (MATH, 6,000 / 750 / 750), 3
epochs, the best epoch on dev, the recipe of ``results.py``.

Pre-training runs (``WORK/pretrain/NAME``):
    dapt               text only, MLM (DAPT-BERT)
    comus              MLM + DTC + TGCL, the release recipe. ``--comus-from-package`` (default on) takes
                       the shipped encoder instead of running it again: it *is* that run (same corpus,
                       steps, batch, rate, seed), stored as fp16 deltas
    comus-no-memory    MLM + DTC + TGCL, text and graph side by side (``bert+gat``, no memory layers)
    comus-no-dtc       MLM + TGCL
    comus-no-tgcl      MLM + DTC
    comus-long, dapt-long   the curve's runs: a ``--long-steps`` schedule (warm-up and linear decay; default
                       ``--steps``), the model saved every ``--save-every`` steps, stopped after ``--curve-until``.
                       On the budget's schedule (the default) a long run is the budget run's recipe (corpus,
                       batch order, learning-rate schedule, seed) stopped at the point before its end: the
                       budget's row (dapt-bert, comus-pt) is the curve's last point. A longer
                       schedule (``--long-steps 4000``) runs to its end and every point is fine-tuned

Rows (``WORK/study.json``, one entry per fine-tune, saved as each finishes):
    tfidf, bert, comus (no pre-training), dapt-bert, comus-pt, comus-pt-no-memory, comus-pt-no-dtc,
    comus-pt-no-tgcl; ``ROW@seed1`` another fine-tuning seed; ``ROW@10%`` a stratified part of train
    (few-shot); ``comus@step1000`` / ``dapt-bert@step1000`` fine-tuned from a point of the long runs.

Jobs, in the order they run (``--jobs`` picks some; each skips what is done):
    headline   dapt pre-training, dapt-bert, comus-pt, tfidf, bert, comus
    seeds      dapt-bert and comus-pt at fine-tuning seeds 1 and 2
    fewshot    5, 10, 20, 40 % of train for tfidf, dapt-bert, comus-pt (cheap: before the ablations)
    ablations  the three ablation pre-trainings and their rows
    curve      the long runs and a row per saved point; 0 steps: the bert and comus rows (no pre-training)

Every row is reported on dev and test with its 95 % Wilson interval and wall
time; each row keeps its per-problem correctness, so the headline difference
(comus-pt minus dapt-bert, averaged over the seeds run) gets a paired bootstrap
interval on the same test problems. ``--report`` writes the tables
(``benchmarks/results/issue26_kpc_study.md``), the JSON and the curve
(``issue26_pretraining_curve.png``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import REPO, build_task_files, machine, wilson  # noqa: E402
from smoke import smoke_work, tiny_encoder  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
FIELDS = {"text_field": "problem", "label_field": "subject"}
# name -> (architecture, objectives); the long runs save the model every LONG_SAVE steps
PRETRAININGS = {
    "dapt": ("bert", ("mlm",)),
    "comus": ("comus", ("mlm", "dtc", "tgcl")),
    "comus-no-memory": ("bert+gat", ("mlm", "dtc", "tgcl")),
    "comus-no-dtc": ("comus", ("mlm", "tgcl")),
    "comus-no-tgcl": ("comus", ("mlm", "dtc")),
    "comus-long": ("comus", ("mlm", "dtc", "tgcl")),
    "dapt-long": ("bert", ("mlm",)),
}
LONG_SAVE = 1000
# fine-tuned row -> (architecture, its start: "untrained" or a pre-training run)
ROWS = {
    "bert": ("bert", "untrained"),
    "comus": ("comus", "untrained"),
    "dapt-bert": ("bert", "dapt"),
    "comus-pt": ("comus", "comus"),
    "comus-pt-no-memory": ("bert+gat", "comus-no-memory"),
    "comus-pt-no-dtc": ("comus", "comus-no-dtc"),
    "comus-pt-no-tgcl": ("comus", "comus-no-tgcl"),
}
# the curve's lines: the row fine-tuned from a point (comus@step1000) -> (its row at 0 steps, its row at the
# budget's --steps, its long run)
CURVE = {"comus": ("comus", "comus-pt", "comus-long"), "dapt-bert": ("bert", "dapt-bert", "dapt-long")}
FRACTIONS = (5, 10, 20, 40)
HEADLINE = ("comus-pt", "dapt-bert")
REPORT = "issue26_kpc_study"  # benchmarks/results/REPORT.md and .json


def jobs(args) -> dict[str, list[str]]:
    """Each job's rows in the order they run (a row names what it needs: its pre-training runs first);
    ``--smoke``: the first two of each."""
    seeds = [f"{row}@seed{s}" for row in HEADLINE for s in (1, 2)]
    fewshot = [f"{row}@{f}%" for f in sorted(FRACTIONS, reverse=True) for row in ("tfidf", "dapt-bert", "comus-pt")]
    # on the budget's schedule, the point at the budget's steps is the budget row itself
    points = range(args.save_every, args.curve_until + 1, args.save_every)
    curve = [f"{row}@step{n}" for n in points if not n == args.steps == args.long_steps for row in CURVE]
    plan = {
        "headline": ["dapt-bert", "comus-pt", "tfidf", "bert", "comus"],
        "seeds": seeds,
        "ablations": ["comus-pt-no-memory", "comus-pt-no-dtc", "comus-pt-no-tgcl"],
        "fewshot": fewshot,
        "curve": curve,
    }
    return {job: rows[:2] for job, rows in plan.items()} if args.smoke else plan


def main() -> None:
    args = _arguments()
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    files = build_task_files(work / "data", 0, smoke=args.smoke)
    args.start = tiny_encoder(work) if args.smoke else "untrained"  # what "untrained" rows and runs start from
    study_path = work / "study.json"
    published = (work if args.smoke else RESULTS) / f"{REPORT}.json"
    # A fresh clone continues from the published rows (they hold everything a row records)
    start_from = study_path if study_path.exists() else published
    study = json.loads(start_from.read_text()) if start_from.exists() else {"rows": {}, "pretraining": {}}
    study["machine"] = machine()
    if not args.report:
        for row in planned_rows(args):
            if row in study["rows"]:
                continue
            study["rows"][row] = run_row(row, files, work, study, args)
            study_path.write_text(json.dumps(study, indent=1))
            summary = {part: study["rows"][row][part]["accuracy"] for part in ("dev", "test")}
            print(f"{row}: {json.dumps(summary)}", flush=True)
    report(study, published.parent, args)
    if args.update_card:
        update_card(study, args)


def planned_rows(args) -> list[str]:
    """``--rows`` in its order, else the rows of ``--jobs`` in theirs."""
    plan = jobs(args)
    if args.rows:
        known = {row for rows in plan.values() for row in rows}
        # any fine-tuned row may take another fine-tuning seed (name@seedN)
        seeded = {f"{name}@seed{seed}" for name in ROWS for seed in range(1, 10)}
        unknown = [row for row in args.rows.split(",") if row not in known | seeded]
        if unknown:
            raise SystemExit(f"unknown rows {unknown}; the jobs plan {sorted(known)}")
        return args.rows.split(",")
    rows = []
    for job in args.jobs.split(","):
        if job not in plan:
            raise SystemExit(f"unknown job {job!r}; choose from {list(plan)}")
        rows += plan[job]
    return rows


# ---------------------------------------------------------------- rows
def parse_row(row: str) -> tuple[str, dict]:
    """``comus-pt@seed1`` -> ("comus-pt", {"seed": 1}); ``@10%`` -> fraction 10; ``@step1000`` -> step."""
    name, _, variant = row.partition("@")
    if not variant:
        return name, {}
    for prefix, key in (("seed", "seed"), ("step", "step")):
        if variant.startswith(prefix):
            return name, {key: int(variant[len(prefix) :])}
    return name, {"fraction": int(variant.rstrip("%"))}


def run_row(row: str, files: dict, work: Path, study: dict, args) -> dict:
    """Fine-tune one row on KPC (or fit TF-IDF) and evaluate it on dev and test."""
    name, variant = parse_row(row)
    train = files["kpc"]["train"]
    if "fraction" in variant:
        train = _fraction(train, variant["fraction"], work / "data")
    output = work / "models" / row.replace("@", "-").replace("%", "pct")
    record: dict = {"n_train": sum(1 for _ in open(train, encoding="utf-8")), "machine": machine(), **variant}
    if name == "tfidf":
        from mathgraph.tasks.training.tfidf import train_tfidf

        started = time.perf_counter()
        rows = [json.loads(line) for line in open(train, encoding="utf-8")]
        train_tfidf("kpc", rows, **FIELDS).save_pretrained(output)
    else:
        from mathgraph.models.task_model import TaskConfig
        from mathgraph.tasks.training.finetune import train_task
        from mathgraph.tasks.training.trainer import TrainingArguments

        architecture, start = ROWS[name]
        if "step" in variant:  # a point of a long pre-training run
            start = str(pretrain(CURVE[name][2], work, study, args, until=variant["step"]) / f"step-{variant['step']}")
        elif start == "untrained":
            start = args.start
        else:
            start = str(pretrain(start, work, study, args))
        started = time.perf_counter()  # the fine-tune's time; pre-training has its own record
        training = TrainingArguments(
            output_dir=str(output),
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=3e-5,
            head_learning_rate=1e-3,
            seed=variant.get("seed", 0),
            parse_workers=args.workers,
            resume=(output / "checkpoint-last").exists(),
        )
        trained = train_task(
            TaskConfig("kpc", architecture=architecture, **FIELDS),
            train,
            training,
            dev_path=files["kpc"]["dev"],
            model=start,
        )
        record.update(epochs=args.epochs, history=trained["history"], start=start)
    record["train_seconds"] = round(time.perf_counter() - started, 1)
    for part in ("dev", "test"):
        record[part] = evaluate(output, files["kpc"][part])
    return record


def evaluate(directory: Path, path: str) -> dict:
    """Accuracy with its Wilson interval, macro-F1, and each problem's correctness (for paired intervals)."""
    from sklearn.metrics import f1_score

    from mathgraph.api import task_predictor
    from mathgraph.tasks.evaluation import labelled_inputs

    inputs, gold = labelled_inputs("kpc", path)
    predicted = [r["label"] for r in task_predictor("kpc", directory).predict(inputs)]
    correct = [int(p == g) for p, g in zip(predicted, gold)]
    accuracy = float(np.mean(correct))
    # each problem's correctness as a string of 0s and 1s (file order): compact in the published JSON
    return {
        "accuracy": accuracy,
        "accuracy_ci95": wilson(accuracy, len(gold)),
        "n": len(gold),
        "macro_f1": float(f1_score(gold, predicted, average="macro")),
        "correct": "".join(map(str, correct)),
    }


def pretrain(name: str, work: Path, study: dict, args, until: int = 0) -> Path:
    """The directory of pre-training run ``name``, run first if it is not there (resumable); a long run must
    have reached step ``until``."""
    from mathgraph.tasks.training.pretrain import run_pretraining
    from mathgraph.tasks.training.trainer import TrainingArguments

    output = work / "pretrain" / name
    if name in study["pretraining"] and (output / "config.json").exists():
        if until and study["pretraining"][name]["step"] < until:
            # its checkpoint is from mid-epoch: a resume would start the next epoch, not the same run's steps
            raise SystemExit(
                f"{output} stopped at step {study['pretraining'][name]['step']}, before {until}: remove it to run "
                "it again further (--curve-until)"
            )
        return output
    if name == "comus" and args.comus_from_package and not args.smoke:
        from mathgraph.models.package import ModelPackage
        from mathgraph.registry import SHIPPED_DIR

        package = ModelPackage(SHIPPED_DIR, device="cpu")
        package.encoder.save_pretrained(output)
        facts = {k: v for k, v in package.release_info()["training"].items() if k.startswith("pretrain_")}
        study["pretraining"][name] = {"from": "the shipped encoder (release_model.py --stage pretrain)", **facts}
        return output
    architecture, objectives = PRETRAININGS[name]
    long = name.endswith("-long")
    steps = args.long_steps if long else args.steps  # the schedule's length
    texts = [json.loads(line)["text"] for line in open(work / "data" / "pretrain.train.jsonl", encoding="utf-8")]
    # a resumed run's seconds are those of this call: the record says from which step they count
    resumed_from = _checkpoint_step(output)
    started = time.perf_counter()
    training = TrainingArguments(
        output_dir=str(output),
        max_steps=args.curve_until if long else steps,
        schedule_steps=steps,
        batch_size=args.pretrain_batch,
        learning_rate=5e-5,
        seed=0,
        parse_workers=args.workers,
        save_steps=(args.save_every if long else None),
        resume=resumed_from is not None,
    )
    state = run_pretraining(
        texts, training, model=args.start, tasks=objectives, architecture=architecture, freeze_vocabulary=True
    )
    log = [json.loads(line) for line in open(output / "training_log.jsonl", encoding="utf-8")]
    study["pretraining"][name] = {
        "architecture": architecture,
        "objectives": list(objectives),
        "steps": steps,
        "batch": args.pretrain_batch,
        "texts": len(texts),
        "step": state["step"],
        "seconds": round(time.perf_counter() - started, 1),
        **({"resumed_from_step": resumed_from} if resumed_from is not None else {}),
        "loss_first": log[0],
        "loss_last": log[-1],
    }
    (work / "study.json").write_text(json.dumps(study, indent=1))
    return output


def _checkpoint_step(output: Path) -> int | None:
    """The step of the run's ``checkpoint-last`` (where a resumed run starts), None when there is none."""
    state = output / "checkpoint-last" / "trainer_state.json"
    return json.loads(state.read_text(encoding="utf-8"))["state"]["step"] if state.exists() else None


def _fraction(train: str, percent: int, directory: Path) -> str:
    """A stratified ``percent`` % of the train part (by subject, seed 0), written once."""
    from sklearn.model_selection import train_test_split

    path = directory / f"kpc.train-{percent}pct.jsonl"
    if not path.exists():
        rows = [json.loads(line) for line in open(train, encoding="utf-8")]
        labels = [r["subject"] for r in rows]
        counts = {label: labels.count(label) for label in labels}
        stratify = labels if min(counts.values()) >= 2 and len(rows) * percent // 100 >= len(counts) else None
        part, _ = train_test_split(rows, train_size=percent / 100, random_state=0, stratify=stratify)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part), encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------- report
def paired_difference(a: list[list[int]], b: list[list[int]], samples: int = 10_000) -> dict:
    """Mean accuracy of ``a`` minus ``b`` (each a list of per-problem correctness, one per seed, averaged over
    the seeds) with a 95 % paired bootstrap interval: problems are resampled, the same for both."""
    a_mean, b_mean = np.mean(a, axis=0), np.mean(b, axis=0)
    difference = a_mean - b_mean
    rng = np.random.default_rng(0)
    draws = difference[rng.integers(0, len(difference), (samples, len(difference)))].mean(axis=1)
    return {
        "difference": round(float(difference.mean()), 4),
        "ci95": [round(float(np.percentile(draws, 2.5)), 4), round(float(np.percentile(draws, 97.5)), 4)],
        "seeds": [len(a), len(b)],
    }


def headline(study: dict) -> dict | None:
    """comus-pt minus dapt-bert on test over the fine-tuning seeds both have, with the seeds' mean and spread."""
    rows = study["rows"]
    seeds = [s for s in (0, 1, 2) if all(_seed_row(r, s) in rows for r in HEADLINE)]
    if not seeds:
        return None
    result = {}
    for row in HEADLINE:
        accuracies = [rows[_seed_row(row, s)]["test"]["accuracy"] for s in seeds]
        result[row] = {
            "test_mean": round(float(np.mean(accuracies)), 4),
            "test_sd": round(float(np.std(accuracies, ddof=1)), 4) if len(seeds) > 1 else None,
            "seeds": seeds,
        }
    correct = {row: [[int(c) for c in rows[_seed_row(row, s)]["test"]["correct"]] for s in seeds] for row in HEADLINE}
    result["comus-pt minus dapt-bert (test)"] = paired_difference(correct["comus-pt"], correct["dapt-bert"])
    return result


# (a, b): what "a minus b" on the same test problems measures
COMPARISONS = (
    ("comus-pt", "tfidf"),
    ("dapt-bert", "bert"),  # what continual pre-training adds to the text-only encoder
    ("comus-pt", "comus"),  # ... and to COMUS
    ("comus", "bert"),  # what the graph adds without pre-training
    *((f"comus-pt@{f}%", f"dapt-bert@{f}%") for f in sorted(FRACTIONS)),
    *((f"comus-pt@{f}%", f"tfidf@{f}%") for f in sorted(FRACTIONS)),
    *(("comus-pt", row) for row in ("comus-pt-no-memory", "comus-pt-no-dtc", "comus-pt-no-tgcl")),
    ("comus-pt-no-memory", "dapt-bert"),  # the graph as a vector beside the text's, against the text alone
)


def comparisons(study: dict) -> dict[str, dict]:
    """``"a minus b"`` -> test accuracy difference with its 95 % paired bootstrap interval, for each pair of
    ``COMPARISONS`` whose two rows have run; each side is averaged over the fine-tuning seeds it has."""
    rows = study["rows"]

    def seeds(row: str) -> list[list[int]]:
        runs = (rows.get(_seed_row(row, seed)) for seed in (0, 1, 2))
        return [[int(c) for c in run["test"]["correct"]] for run in runs if run is not None]

    return {f"{a} minus {b}": paired_difference(seeds(a), seeds(b)) for a, b in COMPARISONS if a in rows and b in rows}


def _seed_row(row: str, seed: int) -> str:
    return row if seed == 0 else f"{row}@seed{seed}"


def report(study: dict, directory: Path, args) -> None:
    """The tables (markdown), the study without per-problem lists (JSON) and the curve (PNG)."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [
        f"Machine: {study['machine']}. KPC, the MATH seed-0 split of results.py, {args.epochs} epochs, the "
        "best dev epoch; wall s: the fine-tune (or TF-IDF fit) alone.",
        "",
        "| row | n train | dev acc [95% CI] | test acc [95% CI] | test macro-F1 | wall s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row, record in study["rows"].items():
        dev, test = record["dev"], record["test"]
        lines.append(
            f"| {row} | {record['n_train']} | {dev['accuracy']:.4f} [{dev['accuracy_ci95'][0]:.4f}-"
            f"{dev['accuracy_ci95'][1]:.4f}] | {test['accuracy']:.4f} [{test['accuracy_ci95'][0]:.4f}-"
            f"{test['accuracy_ci95'][1]:.4f}] | {test['macro_f1']:.4f} | {record['train_seconds']} |"
        )
    lines += ["", "Pre-training runs:", ""]
    lines += [
        f"- {name}: {json.dumps({k: v for k, v in run.items() if not k.startswith('loss')})}"
        for name, run in study["pretraining"].items()
    ]
    summary, paired = headline(study), comparisons(study)
    if summary:
        lines += ["", "Headline (test): " + json.dumps(summary)]
    if paired:
        lines += ["", "Paired differences (test, 95% paired bootstrap; seeds: the fine-tuning seeds of a, b):", ""]
        lines += [
            f"- {name}: {d['difference']:+.4f} [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}], seeds {d['seeds']}"
            for name, d in paired.items()
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    (directory / f"{REPORT}.md").write_text(text, encoding="utf-8")
    published = {**study, "headline": summary, "comparisons": paired}
    (directory / f"{REPORT}.json").write_text(json.dumps(published, indent=1), encoding="utf-8")
    draw_curve(study, directory / "issue26_pretraining_curve.png", args.steps)


def update_card(study: dict, args) -> None:
    """Put the headline difference into the shipped package's ``release.json`` (``kpc_study``) and write its
    model card (which says what the graph adds on KPC, whichever way it falls) and checksums again."""
    from mathgraph.models.package import RELEASE_NAME, checked_path
    from mathgraph.registry import SHIPPED_DIR
    from mathgraph.tasks.release.package import finish_package

    summary = headline(study)
    if summary is None:
        raise SystemExit("--update-card: no headline yet (comus-pt and dapt-bert at one fine-tuning seed at least)")
    package = checked_path(SHIPPED_DIR)
    release = json.loads((package / RELEASE_NAME).read_text(encoding="utf-8"))
    difference = summary["comus-pt minus dapt-bert (test)"]
    run = study["pretraining"]["dapt"]
    release["kpc_study"] = {
        **{k: difference[k] for k in ("difference", "ci95")},
        "seeds": len(summary["comus-pt"]["seeds"]),
        "pretraining": {"steps": run["steps"], "batch": run["batch"], "texts": run["texts"]},
        "source": f"benchmarks/results/{REPORT}.json",
    }
    finish_package(package, release)
    print(f"wrote the KPC study's headline into {package / RELEASE_NAME} and its model card")


def curve_points(study: dict, budget_steps: int) -> dict[str, list[tuple[int, dict]]]:
    """Each line of the curve -> (pre-training steps, the row's dev result), in step order: its row at 0 steps, the
    rows fine-tuned from points of its long run, and the budget row where the long run had the budget's schedule."""
    rows, runs = study["rows"], study["pretraining"]
    points = {}
    for line, (zero, budget, run) in CURVE.items():
        found = {parse_row(row)[1]["step"]: record for row, record in rows.items() if row.startswith(f"{line}@step")}
        if zero in rows:
            found[0] = rows[zero]
        if budget in rows and runs.get(run, {}).get("steps") == budget_steps:
            found[budget_steps] = rows[budget]
        points[line] = [(step, found[step]["dev"]) for step in sorted(found)]
    return points


def draw_curve(study: dict, path: Path, budget_steps: int) -> None:
    """KPC dev accuracy with its 95 % Wilson interval against pre-training steps for COMUS and DAPT-BERT
    (``curve_points``), when one line has at least two points."""
    points = curve_points(study, budget_steps)
    if max((len(p) for p in points.values()), default=0) < 2:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(5, 3.2))
    for shift, (name, values) in zip((-15, 15), sorted(points.items())):  # side by side: intervals stay apart
        accuracy = np.array([dev["accuracy"] for _, dev in values])
        interval = np.array([dev["accuracy_ci95"] for _, dev in values]).T
        axis.errorbar(
            [step + shift for step, _ in values],
            accuracy,
            yerr=[accuracy - interval[0], interval[1] - accuracy],
            marker="o",
            capsize=3,
            label=name,
        )
    axis.set_xlabel("pre-training steps (32 texts each)")
    axis.set_ylabel("KPC dev accuracy")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results")
    parser.add_argument("--jobs", default="headline,seeds,fewshot,ablations,curve")
    parser.add_argument("--rows", help="comma-separated rows of the jobs' plan, run in this order (instead of --jobs)")
    parser.add_argument("--steps", type=int, default=2000, help="pre-training steps of every row (default 2000)")
    parser.add_argument(
        "--long-steps", type=int, help="the schedule of the curve's long runs (default: --steps, the budget run's)"
    )
    parser.add_argument("--save-every", type=int, default=LONG_SAVE, help="the curve's points (default 1000)")
    parser.add_argument(
        "--curve-until",
        type=int,
        help="stop the long runs after this many steps of their schedule (default: its end, or on the budget's "
        "schedule the point before it: the budget row is the last)",
    )
    parser.add_argument("--pretrain-batch", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--no-comus-from-package",
        dest="comus_from_package",
        action="store_false",
        help="pre-train the comus run again instead of taking the shipped encoder",
    )
    parser.add_argument("--workers", type=int, default=2, help="parser processes")
    parser.add_argument("--report", action="store_true", help="print and write the report only")
    parser.add_argument(
        "--update-card",
        action="store_true",
        help="also put the headline into the shipped package's release.json and rewrite its model card",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="two rows of every job on the smoke data (benchmarks/smoke.py), a tiny model, 2 "
        "pre-training steps, 1 epoch; writes under WORK/smoke",
    )
    args = parser.parse_args()
    if args.smoke and args.update_card:
        parser.error("--update-card writes the shipped package: not with --smoke")
    if args.smoke:
        args.steps, args.long_steps, args.save_every, args.pretrain_batch, args.epochs, args.batch_size = (
            2,
            2,
            1,
            4,
            1,
            8,
        )
    args.long_steps = args.long_steps or args.steps
    if args.curve_until is None:
        same_schedule = args.long_steps == args.steps
        args.curve_until = args.long_steps - args.save_every if same_schedule else args.long_steps
    elif not 1 <= args.curve_until <= args.long_steps:
        parser.error(f"--curve-until must lie in 1..--long-steps ({args.long_steps}), got {args.curve_until}")
    return args


if __name__ == "__main__":
    main()
