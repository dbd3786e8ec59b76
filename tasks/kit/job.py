"""``mathgraph kit run``: the kit's job, on one GPU (or the CPU), stopping on time by itself.

Phases, in this order (each stops on its own time budget: its share of the time left when it starts, over
the shares of the phases left; ``TrainingArguments.time_limit_s`` re-plans its schedule to end then):

1. ``comus``: continual pre-training of COMUS (MLM + DTC + TGCL) from the kit's start encoder, pre-trained
   word embeddings fixed (as the shipped encoder was made);
2. ``multitask``: the dense multi-task model (KPC, QRC, QAM, SQR; pair heads read the alignment features)
   from that encoder, embeddings frozen, the best epoch by mean dev metric; the weights are written now;
3. ``dapt``: DAPT-BERT (MLM only, text only) on the same corpus for the same number of steps;
4. ``kpc-dapt`` and ``kpc-comus``: the knowledge-point study: KPC fine-tuned from each pre-trained encoder
   (``kpc_seeds`` times, from different seeds, for each of the ``kpc_settings`` compared: their ensemble
   averages the class probabilities), the best
   epoch on dev, then measured on KPC test;
5. ``qam-cv``: QAM cross-validation: per fold of the kit's ``qam.cvK-*`` parts, a QAM model (the pair head
   that reads the alignment) fine-tuned from the COMUS encoder on the fold's training pairs, its best epoch
   on the fold's dev pairs, then each dev and held-out pair's probability of a match, by pair id (the CPU
   fuses them with the models it cross-validates: ``benchmarks/qam_number_swap_cv.py --neural``).

Output (at most 8 files, each at most 16 MiB): ``encoder-NN.safetensors`` (the pre-trained encoder as fp16
deltas against the packaged MiniLM, as a model package stores it), ``multitask-NN.safetensors`` (the
multi-task model as fp16 deltas against that encoder) and ``report.json``, rewritten after every phase:
throughput (examples/s, tokens/s, peak GPU memory), steps, losses, dev figures, and what failed, if anything.
"""

from __future__ import annotations

import gzip
import json
import math
import platform
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from .build import BASE_DIR, DATA_DIR, GRAPH_WEIGHTS, PACKED_DIR, TEXT_WEIGHTS, JobSettings, qam_folds, read_kit

MAX_FILE_BYTES = 15 * 2**20  # under the 16 MiB a file may be on the way back
REPORT_NAME = "report.json"
PHASES = ("comus", "multitask", "dapt", "kpc-dapt", "kpc-comus", "qam-cv")
NEEDS = {"multitask": "comus", "kpc-comus": "comus", "kpc-dapt": "dapt", "qam-cv": "comus"}  # another's model


def start_encoder(kit: Path, directory: Path, seed: int = 0) -> Path:
    """Save the kit's start encoder to ``directory``: its text weights (``tasks.kit.weights``, full size, zero
    in the rows left out) and a graph side that starts fresh from ``seed``."""
    from transformers import AutoTokenizer

    from mathgraph.graph import GraphVocabulary
    from mathgraph.models.comus import ComusConfig, ComusModel
    from mathgraph.models.encoder import MathEncoder
    from mathgraph.registry import read_config

    from .weights import expand_text_state

    base = kit / BASE_DIR
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = ComusModel(ComusConfig.from_dict(read_config(base)))
    model.text.load_state_dict(expand_text_state(base / TEXT_WEIGHTS))
    if (base / GRAPH_WEIGHTS).is_file():  # a trained start: its graph side too
        from safetensors.torch import load_file

        graph = {k: v.float() for k, v in load_file(str(base / GRAPH_WEIGHTS)).items()}
        _, unexpected = model.load_state_dict(graph, strict=False)
        if unexpected:
            raise ValueError(f"{base / GRAPH_WEIGHTS} does not fit the start encoder: {unexpected[:5]}")
    encoder = MathEncoder(
        model, AutoTokenizer.from_pretrained(base / "tokenizer"), GraphVocabulary.from_pretrained(base)
    )
    encoder.save_pretrained(directory)
    return directory


def delta_base(kit: Path) -> dict[str, torch.Tensor]:
    """What the encoder's deltas are taken against: the kit's text weights under ``ComusModel``'s names, with
    the pre-trained rows of the word embeddings only (the LaTeX rows are stored as appended rows), as a package
    stores its encoder against the packaged MiniLM."""
    from transformers import AutoTokenizer

    from mathgraph.models.text_encoder import first_added_latex_row

    from .weights import WORD_EMBEDDINGS, expand_text_state

    state = expand_text_state(kit / BASE_DIR / TEXT_WEIGHTS)
    first = first_added_latex_row(AutoTokenizer.from_pretrained(kit / BASE_DIR / "tokenizer"))
    if first is not None:
        state[WORD_EMBEDDINGS] = state[WORD_EMBEDDINGS][:first]
    return {f"text.{name}": tensor for name, tensor in state.items()}


def unpack_data(kit: Path, directory: Path) -> dict[str, dict[str, str]]:
    """The kit's gzipped task files and corpus, written out to ``directory``; ``{task: {part: path}}``."""
    directory.mkdir(parents=True, exist_ok=True)
    files: dict[str, dict[str, str]] = {}
    for path in sorted((kit / DATA_DIR).glob("*.jsonl.gz")):
        task, part = path.name[: -len(".jsonl.gz")].split(".", 1)
        target = directory / path.name[: -len(".gz")]
        with gzip.open(path, "rb") as source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)
        files.setdefault(task, {})[part] = str(target)
    return files


class Job:
    """One run of a kit: the phases, the clock, the report."""

    def __init__(self, kit: Path, output: Path, minutes: float, device: str | None, work: Path, say):
        self.kit, self.output, self.work, self.say = kit, output, work, say
        self.description = read_kit(kit)
        self.settings = JobSettings(**self.description["job"])
        self.started = time.perf_counter()
        self.deadline = self.started + minutes * 60
        if device == "cuda" and not torch.cuda.is_available():
            raise ValueError("--device cuda: no GPU is visible to torch here")
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.report: dict = {
            "status": "running",
            "minutes": minutes,
            "machine": _machine(self.device),
            "kit": {
                k: self.description.get(k)
                for k in ("created", "start_model", "start_facts", "pretrain_texts", "problems", "sizes")
            },
            "job": self.description["job"],
            "phases": {},
            "files": [],
        }
        self.models: dict[str, Path] = {}

    # ------------------------------------------------------------ the clock
    def seconds_left(self) -> float:
        return self.deadline - time.perf_counter()

    def budget(self, phase: str) -> float:
        """This phase's seconds: its share of the time left (less the reserve) over the shares left."""
        shares = self.settings.shares
        left = [p for p in PHASES[PHASES.index(phase) :] if p in shares]
        available = self.seconds_left() - self.settings.reserve_s
        return max(1.0, available * shares[phase] / sum(shares[p] for p in left))

    def arguments(self, phase: str, **values):
        """The ``TrainingArguments`` of a phase: packed problems, the device, bf16 on a GPU, the time budget."""
        from mathgraph.tasks.training.trainer import TrainingArguments

        settings = {
            "output_dir": str(self.work / phase),
            "packed_features": str(self.kit / PACKED_DIR),
            "graph_cache": "none",
            "cpu": self.device.type == "cpu",
            "mixed_precision": "bf16" if self.device.type == "cuda" else "no",
            "seed": self.settings.seed,
            "max_steps": self.settings.max_steps,
            "time_limit_s": self.budget(phase),
            "log_every": 50 if self.device.type == "cuda" else 10,
            "checkpoint_every": 10**6,  # checkpoint-last after the last epoch only: nothing resumes a job
        }
        return TrainingArguments(**{**settings, **values})

    # ------------------------------------------------------------ running
    def run(self) -> dict:
        from mathgraph.models.packed_features import packed_lengths

        self.files = unpack_data(self.kit, self.work / "data")
        self.lengths = packed_lengths(self.kit / PACKED_DIR)
        self.start = start_encoder(self.kit, self.work / "start", self.settings.seed)
        self.report["setup_seconds"] = round(time.perf_counter() - self.started, 1)
        self.say(f"set up in {self.report['setup_seconds']} s on {self.report['machine']['device']}")
        shares = self.settings.shares
        if "comus" not in shares:  # a job that continues from a pre-trained start: it is the COMUS encoder
            shutil.copytree(self.start, self.work / "comus")
            self.models["comus"] = self.work / "comus"
        for phase in (p for p in PHASES if p in shares):  # the phases of this job: those with a share
            needed = NEEDS.get(phase)
            if needed and needed not in self.models:
                self.report["phases"][phase] = {"skipped": f"no {needed} model"}
                continue
            if self.seconds_left() < self.settings.reserve_s:
                self.report["phases"][phase] = {"skipped": "out of time"}
                continue
            self._phase(phase)
            if phase == "multitask" and phase in self.models:
                try:
                    self.write_weights()
                except Exception as err:  # noqa: BLE001 - reported; the study's phases still run
                    self.report["weights_error"] = f"{type(err).__name__}: {err}"
                    self.say(f"writing the weights failed: {self.report['weights_error']}")
        phases = self.report["phases"].values()
        failed = any("error" in r for r in phases) or "weights_error" in self.report
        skipped = any("skipped" in r for r in phases)
        self.report["status"] = "partly failed" if failed else "stopped early" if skipped else "done"
        self.report["seconds"] = round(time.perf_counter() - self.started, 1)
        self._write_report()
        return self.report

    def _phase(self, phase: str) -> None:
        self.say(f"phase {phase}: {self.budget(phase):.0f} s")
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        began = time.perf_counter()
        record: dict = {}
        try:
            record = getattr(self, "_" + phase.replace("-", "_"))()
            self.models[phase] = self.work / phase
        except Exception as err:  # noqa: BLE001 - the report says what failed; the other phases go on
            record = {"error": f"{type(err).__name__}: {err}", "traceback": traceback.format_exc()[-3000:]}
            self.say(f"phase {phase} failed: {record['error']}")
        record["seconds"] = round(time.perf_counter() - began, 1)
        if self.device.type == "cuda":
            record["peak_gpu_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        self.report["phases"][phase] = record
        self.say(f"phase {phase}: {json.dumps(_summary(record))}")
        self._write_report()

    def _pretrain(self, phase: str, architecture: str, tasks: tuple[str, ...], steps: int | None) -> dict:
        from mathgraph.tasks.training.pretrain import run_pretraining

        from .weights import kept_rows_of

        corpus = [json.loads(line)["text"] for line in open(self.files["pretrain"]["train"], encoding="utf-8")]
        settings = self.settings
        args = self.arguments(phase, batch_size=settings.pretrain_batch_size, learning_rate=settings.pretrain_lr)
        if steps is not None:  # DAPT-BERT: COMUS's steps; half its budget again before it is cut short
            args.max_steps = min(steps, args.max_steps or steps)
            args.time_limit_s *= 1.5
        elif args.max_steps is None:
            args.max_steps = 10**7  # the time budget decides
        state = run_pretraining(
            corpus,
            args,
            model=str(self.start),
            tasks=tasks,
            architecture=architecture,
            freeze_vocabulary=True,
            random_tokens=kept_rows_of(self.kit / BASE_DIR / TEXT_WEIGHTS).tolist(),
        )
        curve = [json.loads(line) for line in open(self.work / phase / "training_log.jsonl", encoding="utf-8")]
        mean_tokens = sum(self.lengths[t] for t in corpus) / len(corpus)
        return {
            "steps": state["step"],
            "batch_size": settings.pretrain_batch_size,
            **_throughput(state["history"], mean_tokens),
            "loss_first": curve[0] if curve else None,
            "loss_last": curve[-1] if curve else None,
        }

    def _comus(self) -> dict:
        return self._pretrain("comus", "comus", ("mlm", "dtc", "tgcl"), None)

    def _dapt(self) -> dict:
        steps = self.report["phases"].get("comus", {}).get("steps")
        return self._pretrain("dapt", "bert", ("mlm",), steps)

    def _multitask(self) -> dict:
        from mathgraph.tasks.training.multitask import train_multitask

        from .build import task_config

        settings = self.settings
        args = self.arguments(
            "multitask",
            epochs=settings.multitask_epochs,
            batch_size=settings.multitask_batch_size,
            learning_rate=settings.finetune_lr,
        )
        files = [(task_config(t), self.files[t]["train"], self.files[t]["dev"]) for t in ("kpc", "qrc", "qam", "sqr")]
        result = train_multitask(files, args, model=str(self.work / "comus"), freeze_embeddings=True)
        history = result["history"]
        return {"best_dev_mean": result["best_dev"], **_throughput(history, None), "history": history}

    def _kpc(self, phase: str, encoder: str, architecture: str) -> dict:
        """KPC fine-tuned from ``encoder`` once per run of ``build.kpc_runs`` (a setting and a seed), each run
        a share of the phase's time in proportion to its epochs.

        The phase's ``dev`` and ``test`` records are of the runs' ensemble (their mean class probabilities;
        with one run, that run), with each problem's correctness and probabilities; ``runs`` has each run's,
        with its setting."""
        from mathgraph.models.task_model import TaskConfig
        from mathgraph.tasks.task_types import load_examples

        from .build import kpc_runs

        config = TaskConfig("kpc", architecture=architecture, text_field="problem", label_field="subject")
        kpc = self.files["kpc"]
        deadline = time.perf_counter() + self.budget(phase)
        parts = {part: load_examples(config, kpc[part]) for part in ("dev", "test") if part in kpc}
        train_texts = [e.text for e in load_examples(config, kpc["train"])]
        mean_tokens = sum(self.lengths[t] for t in train_texts) / len(train_texts)
        planned = kpc_runs(self.settings)
        runs: list[dict] = []
        for index, plan in enumerate(planned):
            share = plan["epochs"] / sum(p["epochs"] for p in planned[index:])
            seconds = (deadline - time.perf_counter()) * share
            if runs and seconds < 1:
                break  # out of time: the ensemble is of the runs done
            args = self.arguments(
                phase,
                output_dir=str(self.work / phase / f"run-{index}"),
                seed=plan["seed"],
                time_limit_s=max(1.0, seconds),
                epochs=plan["epochs"],
                batch_size=plan["batch_size"],
                learning_rate=plan["learning_rate"],
            )
            runs.append({**plan, **self._kpc_run(config, args, encoder, parts, mean_tokens)})
            self.say(f"{phase} run {index} {json.dumps(plan)}: dev {runs[-1].get('dev', {}).get('accuracy')}")
        record = {k: v for k, v in runs[0].items() if k not in parts and k not in planned[0]}  # the first run's curve
        labels = runs[0]["labels"]
        for part, examples in parts.items():
            mean = np.mean([run[part]["probabilities"] for run in runs], axis=0)
            predicted = [labels[i] for i in mean.argmax(axis=1)]
            record[part] = {
                "n": len(examples),
                "accuracy": float(np.mean([p == e.label for p, e in zip(predicted, examples)])),
                # per problem, in file order: a paired comparison of two models needs them
                "correct": "".join("1" if p == e.label else "0" for p, e in zip(predicted, examples)),
                "probabilities": np.round(mean, 4).tolist(),
            }
        record["runs_done"] = len(runs)
        if len(runs) > 1:
            record["runs"] = runs
        return record

    def _kpc_run(self, config, args, encoder: str, parts: dict, mean_tokens: float) -> dict:
        """One KPC fine-tuning (the best epoch on dev), then its class probabilities on each part."""
        from mathgraph.models.features import PackedFeatureStore
        from mathgraph.models.prediction import predict
        from mathgraph.models.task_io import label_values
        from mathgraph.models.task_model import TaskModel
        from mathgraph.tasks.task_types import task_of
        from mathgraph.tasks.training.finetune import train_task

        kpc = self.files["kpc"]
        result = train_task(config, kpc["train"], args, dev_path=kpc["dev"], model=str(self.work / encoder))
        model = TaskModel.from_pretrained(args.output_dir, device=self.device)
        labels = label_values("kpc", model.config.labels)
        record = {
            "best_dev_accuracy": result["best_dev"],
            **_throughput(result["history"], mean_tokens),
            "history": result["history"],
            "labels": labels,
        }
        for part, examples in parts.items():
            store = PackedFeatureStore(
                self.kit / PACKED_DIR,
                model.encoder.collator,
                [e.text for e in examples],
                with_graphs=model.config.uses_graph,
            )
            logits = torch.stack([out["logits"] for out in predict(model, examples, store, raw=True)])
            probabilities = torch.softmax(logits, dim=-1).double().numpy()
            predicted = [labels[i] for i in probabilities.argmax(axis=1)]
            record[part] = {
                **task_of(config).metrics(examples, predicted),
                "probabilities": np.round(probabilities, 4).tolist(),
            }
        return record

    def _kpc_comus(self) -> dict:
        return self._kpc("kpc-comus", "comus", "comus")

    def _kpc_dapt(self) -> dict:
        return self._kpc("kpc-dapt", "dapt", "bert")

    def _qam_cv(self) -> dict:
        """One QAM model per fold (an equal share of the phase's time each), fine-tuned from the COMUS encoder,
        best epoch on the fold's dev pairs; per fold, each dev and held-out pair's probability of a match."""
        from mathgraph.models.features import FeatureStore
        from mathgraph.models.prediction import predict
        from mathgraph.models.task_io import label_values
        from mathgraph.models.task_model import TaskModel
        from mathgraph.tasks.task_types import load_examples
        from mathgraph.tasks.training.finetune import train_task

        from .build import task_config

        config = task_config("qam")
        folds = qam_folds(self.files.get("qam", {}))
        if not folds:
            raise ValueError("the kit has no QAM folds (qam.cvK-train/-dev/-test)")
        deadline = time.perf_counter() + self.budget("qam-cv")
        settings = self.settings
        record: dict = {"folds": {}}
        for index, (fold, paths) in enumerate(folds.items()):
            seconds = (deadline - time.perf_counter()) / (len(folds) - index)
            args = self.arguments(
                "qam-cv",
                output_dir=str(self.work / "qam-cv" / f"fold-{fold}"),
                time_limit_s=max(1.0, seconds),
                epochs=settings.qam_cv_epochs,
                batch_size=settings.qam_cv_batch_size,
                learning_rate=settings.qam_cv_learning_rate,
            )
            result = train_task(config, paths["train"], args, dev_path=paths["dev"], model=str(self.work / "comus"))
            model = TaskModel.from_pretrained(args.output_dir, device=self.device)
            match = label_values("qam", model.config.labels).index(1)
            entry = {"best_dev_accuracy": result["best_dev"], **_throughput(result["history"], None)}
            for role in ("dev", "test"):
                examples = load_examples(config, paths[role])
                texts = [t for e in examples for t in config.task_type.example_texts(e)]
                store = FeatureStore.for_run(model.encoder, texts, args, with_graphs=model.config.uses_graph)
                logits = torch.stack([out["logits"] for out in predict(model, examples, store, raw=True)])
                matched = torch.softmax(logits.float(), dim=-1)[:, match].tolist()
                # load_examples keeps every non-blank line, in order (a bad row is an error)
                ids = [json.loads(line)["id"] for line in open(paths[role], encoding="utf-8") if line.strip()]
                entry[role] = {pair_id: round(p, 4) for pair_id, p in zip(ids, matched, strict=True)}
            record["folds"][str(fold)] = entry
            self.say(f"qam-cv fold {fold}: dev {entry['best_dev_accuracy']}")
            self.report["phases"]["qam-cv"] = record  # the folds done so far, should the job be cut short
            self._write_report()
        return record

    # ------------------------------------------------------------ output
    def write_weights(self) -> None:
        """The pre-trained encoder and the multi-task model as fp16 deltas, in files of at most 15 MiB."""
        from mathgraph.models.delta import DELTA_NAME, save_delta
        from mathgraph.models.encoder import MathEncoder
        from mathgraph.models.multitask import MultiTaskModel

        from .weights import load_split, save_split

        encoder = MathEncoder.from_pretrained(self.work / "comus", device="cpu")
        multitask = MultiTaskModel.from_pretrained(self.work / "multitask", device="cpu")
        deltas = self.work / "deltas"
        deltas.mkdir(exist_ok=True)
        state = {name: tensor.detach() for name, tensor in encoder.model.state_dict().items()}
        values = {"encoder": save_delta(deltas / "encoder.safetensors", state, delta_base(self.kit))}
        values["multitask"] = multitask.save_delta(deltas / "multitask", encoder)
        written = []
        for name, path in (
            ("encoder", deltas / "encoder.safetensors"),
            ("multitask", deltas / "multitask" / DELTA_NAME),
        ):
            written += save_split(self.output / name, *load_split([path]), MAX_FILE_BYTES)
        self.report["files"] = [{"name": p.name, "bytes": p.stat().st_size} for p in written]
        self.report["configs"] = {
            "encoder": json.loads((self.work / "comus" / "config.json").read_text(encoding="utf-8")),
            "multitask": json.loads((self.work / "multitask" / "multitask_config.json").read_text(encoding="utf-8")),
        }
        self.report["values_stored"] = values
        self._write_report()

    def _write_report(self) -> None:
        self.output.mkdir(parents=True, exist_ok=True)
        partial = self.output / f".{REPORT_NAME}.partial"
        partial.write_text(json.dumps(self.report, indent=1, default=str), encoding="utf-8")
        partial.replace(self.output / REPORT_NAME)


def _summary(record: dict) -> dict:
    """A phase's record for the log: without its curves, runs and per-problem lists (the report has them)."""
    return {
        k: {m: x for m, x in v.items() if m not in ("correct", "probabilities")} if isinstance(v, dict) else v
        for k, v in record.items()
        if k not in ("history", "traceback", "runs")
    }


def _throughput(history: list[dict], mean_tokens: float | None) -> dict:
    """Examples/s over the epochs' training time (the mean of their rates, each epoch's own), and tokens/s
    where the mean tokens of an example are known (real tokens, not padding)."""
    rates = [record["train_examples_per_s"] for record in history if record.get("train_examples_per_s")]
    if not rates:
        return {}
    rate = sum(rates) / len(rates)
    figures = {"examples_per_s": round(rate, 2), "examples_per_s_by_epoch": rates}
    if mean_tokens is not None:
        figures["tokens_per_s"] = round(rate * mean_tokens, 1)
        figures["mean_tokens"] = round(mean_tokens, 1)
    return figures


def _machine(device: torch.device) -> dict:
    facts = {"device": str(device), "torch": torch.__version__, "python": platform.python_version()}
    if device.type == "cuda":
        facts["gpu"] = torch.cuda.get_device_name(device)
        facts["gpu_memory_gib"] = round(torch.cuda.get_device_properties(device).total_memory / 2**30, 1)
    else:
        facts["cpu"] = platform.processor() or platform.machine()
        facts["threads"] = torch.get_num_threads()
    return facts


def run_kit(
    kit: str | Path,
    output: str | Path,
    minutes: float,
    device: str | None = None,
    work: str | Path | None = None,
    say: Callable[[str], None] = print,
) -> dict:
    """Run the kit's job for at most ``minutes`` (see the module docstring); returns the report."""
    if not (minutes > 0 and math.isfinite(minutes)):
        raise ValueError(f"--minutes must be a positive number, got {minutes}")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mathgraph-kit-") as scratch:
        job = Job(Path(kit), output, minutes, device, Path(work or scratch), say)
        return job.run()


__all__ = ["run_kit", "start_encoder", "delta_base", "unpack_data", "PHASES", "REPORT_NAME"]
