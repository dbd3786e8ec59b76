"""``mathgraph kit release``: a kit run's weights, measured on the CPU as the shipped package is, released
only where dev says they are better.

1. The run's encoder and multi-task model are rebuilt from its fp16 deltas (``kit run``'s output) and the
   kit's start files, into ``WORK/pretrain`` and ``WORK/multitask``: where ``mathgraph release`` keeps
   stages 1 and 2, with the run's pre-training facts beside them.
2. ``mathgraph release``'s ``package`` and ``structure`` stages (``tasks.release.build``) run on them: TF-IDF
   and alignment models, late-fusion weights chosen on dev, every figure measured from the written candidate
   package, exactly as the shipped package was measured.
3. The candidate's dev figure of every task (what the package gives by default) is compared with the
   reference package's (``--against``, the shipped one by default), measured again by the same code on the
   same files (its ``measure`` and ``structure`` stages on a copy): it is released into ``--output`` only if
   its mean dev figure is higher and no task's dev figure falls below the reference's 95% interval. The
   decision and its reasons are written to ``WORK/decision.json`` either way.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from .build import BASE_DIR, QAM_FOLD_PART
from .job import REPORT_NAME, delta_base

DECISION_NAME = "decision.json"


def read_run(run: str | Path) -> dict:
    """A kit run's report, checked: finished, with weights."""
    path = Path(run) / REPORT_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{run}: no {REPORT_NAME} (the output of `mathgraph kit run`)")
    report = json.loads(path.read_text(encoding="utf-8"))
    if not report.get("files") or "configs" not in report:
        failed = {
            p: r.get("error") or r.get("skipped")
            for p, r in report.get("phases", {}).items()
            if "error" in r or "skipped" in r
        }
        raise ValueError(f"{run}: the run wrote no weights (status {report.get('status')!r}; {failed})")
    return report


def package_files(files: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The task files a candidate package is built and measured on: all but QAM's cross-validation folds
    (``qam.cvK-*``, for the kit's ``qam-cv`` phase only: their pairs are drawn from QAM's train part too, and
    measuring a package on fifteen more parts would take longer than the rest of the release)."""
    return {task: {p: f for p, f in parts.items() if not QAM_FOLD_PART.fullmatch(p)} for task, parts in files.items()}


def rebuild_models(kit: Path, run: Path, work: Path, report: dict) -> None:
    """The run's encoder into ``work/pretrain`` and multi-task model into ``work/multitask`` (full weights)."""
    from transformers import AutoTokenizer

    from mathgraph.graph import GraphVocabulary
    from mathgraph.models.comus import ComusModel
    from mathgraph.models.delta import apply_delta
    from mathgraph.models.encoder import MathEncoder
    from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel
    from mathgraph.models.package import text_encoder_base
    from mathgraph.tasks.release.build import PACKAGE_FACTS

    from .weights import join_split

    names = [f["name"] for f in report["files"]]
    deltas = work / "kit-run"
    deltas.mkdir(parents=True, exist_ok=True)
    for model in ("encoder", "multitask"):
        join_split([run / n for n in names if n.startswith(model + "-")], deltas / f"{model}.delta.safetensors")
    config = report["configs"]["encoder"]
    # what the run's deltas were taken against (the kit's start weights, bf16), with the packaged MiniLM's own
    # fp32 rows for the word embeddings the run kept fixed (bf16 there, zero where no kit text used them)
    base = delta_base(kit)
    words = "text.embeddings.word_embeddings.weight"
    base[words] = text_encoder_base(config.get("text_encoder", "minilm"))[words]
    state = apply_delta(base, deltas / "encoder.delta.safetensors")
    model = ComusModel.from_state(config, state, where=deltas / "encoder.delta.safetensors")
    tokenizer = AutoTokenizer.from_pretrained(kit / BASE_DIR / "tokenizer")
    encoder = MathEncoder(model, tokenizer, GraphVocabulary.from_pretrained(kit / BASE_DIR))
    encoder.save_pretrained(work / "pretrain")
    comus = report["phases"].get("comus")
    if comus is None:  # the run continued from a pre-trained start: its facts came with the kit
        facts = report["kit"].get("start_facts") or {}
    else:
        facts = {
            "pretrain_steps": comus.get("steps"),
            "pretrain_batch_size": comus.get("batch_size"),
            "pretrain_lr": report["job"]["pretrain_lr"],
            "pretrain_texts": report["kit"]["pretrain_texts"],
            "pretrain_loss_first": comus.get("loss_first"),
            "pretrain_loss_last": comus.get("loss_last"),
        }
    (work / "pretrain" / PACKAGE_FACTS).write_text(json.dumps(facts, indent=1), encoding="utf-8")

    settings = dict(report["configs"]["multitask"])
    settings.pop("model_type", None)
    multitask = MultiTaskModel(
        MathEncoder.from_pretrained(work / "pretrain", device="cpu"), MultiTaskConfig(**settings)
    )
    multitask.load_delta(deltas / "multitask.delta.safetensors")
    multitask.save_pretrained(work / "multitask")


def dev_figure(record: dict) -> dict:
    """A task's dev figure as its package gives it by default (with its 95% interval)."""
    dev = record["dev"]
    if "shipped" in dev:
        return dev["shipped"]
    return dev["hybrid" if record["hybrid"]["default"] else "neural"]


def decide(candidate: dict, reference: dict) -> dict:
    """Release or not: the candidate's mean dev figure must be higher than the reference's, and no task's dev
    figure may fall below the reference's 95% interval (worse beyond noise). Both are ``release.json``'s."""
    tasks, worse = {}, []
    for task, record in reference["tasks"].items():
        if task not in candidate["tasks"]:
            worse.append(f"{task}: the candidate lacks it")
            continue
        new, old = dev_figure(candidate["tasks"][task]), dev_figure(record)
        tasks[task] = {"candidate": new["value"], "reference": old["value"], "reference_ci95": old["ci95"]}
        if new["value"] < old["ci95"][0]:
            worse.append(f"{task}: {new['value']} below the reference's interval {old['ci95']}")
    mean = {side: sum(t[side] for t in tasks.values()) / max(1, len(tasks)) for side in ("candidate", "reference")}
    better = mean["candidate"] > mean["reference"]
    reasons = [] if better else [f"mean dev figure {mean['candidate']:.4f}, not above {mean['reference']:.4f}"]
    return {"release": better and not worse, "tasks": tasks, "mean": mean, "reasons": reasons + worse}


def release_run(
    kit: str | Path,
    run: str | Path,
    data: str | Path,
    work: str | Path,
    output: str | Path,
    against: str = "shipped",
    settings=None,
    say: Callable[[str], None] = print,
    recorded_reference: bool = False,
) -> dict:
    """Rebuild, package, measure and decide (module docstring); returns the decision. ``data``: the task files
    with their test parts (``tasks.release.build.task_files``); ``output``: where a released package goes
    (replaced only on a release); ``settings``: ``tasks.release.build.ReleaseSettings``.

    The package to beat is measured again first, by this code on these files (a copy, in ``work/reference``):
    the figures it recorded at its own release came from the readers and alignment features of then, and a
    candidate measured by today's would be judged on their changes too. ``recorded_reference``: use the
    recorded figures instead (faster; for a reference released by this same code)."""
    from mathgraph.models.package import RELEASE_NAME
    from mathgraph.registry import read_config, resolve
    from mathgraph.tasks.release.build import ReleaseSettings, build_release, task_files
    from mathgraph.tasks.release.package import finish_package

    kit, run, work, output = Path(kit), Path(run), Path(work), Path(output)
    report = read_run(run)
    files = package_files(task_files(data))
    settings = settings or ReleaseSettings()
    if recorded_reference:
        reference = read_config(resolve(against), RELEASE_NAME)
    else:
        copy = work / "reference"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(resolve(against), copy)
        say(f"measuring the package to beat again ({against}) in {copy}")
        reference = build_release(files, work / "reference-runs", copy, ("measure", "structure"), settings, say)
    rebuild_models(kit, run, work, report)
    candidate_dir = work / "candidate"
    release = build_release(files, work, candidate_dir, ("package", "structure"), settings, say)
    release["training"]["multitask_history"] = report["phases"]["multitask"].get("history")
    release["training"]["trained_where"] = {
        "machine": report["machine"],
        "minutes": report["minutes"],
        "phases": {p: r.get("seconds") for p, r in report["phases"].items()},
        "mixed_precision": "bf16" if report["machine"]["device"].startswith("cuda") else "no",
    }
    finish_package(candidate_dir, release)
    decision = {**decide(release, reference), "against": str(against), "candidate": str(candidate_dir)}
    decision["reference_figures"] = "recorded at its release" if recorded_reference else "measured again"
    if decision["release"]:
        if output.exists():
            shutil.rmtree(output)
        shutil.copytree(candidate_dir, output)
        decision["released_to"] = str(output)
    (work / DECISION_NAME).write_text(json.dumps(decision, indent=1), encoding="utf-8")
    say(json.dumps({k: decision[k] for k in ("release", "mean", "reasons")}))
    return decision


__all__ = ["release_run", "rebuild_models", "decide", "dev_figure", "read_run"]
