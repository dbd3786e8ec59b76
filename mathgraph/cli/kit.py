"""``mathgraph kit build|run|release``: parse and pack on a CPU, train on a GPU (or anywhere), release on a CPU."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mathgraph.cli.common import at_least_one
from mathgraph.errors import UserError
from mathgraph.quiet import report, warn


def register(commands) -> None:
    """Add ``kit`` and its three commands to the ``mathgraph`` commands."""
    kit = commands.add_parser(
        "kit",
        help="training kits: pack data and start weights on a CPU, run the training job on a GPU, release",
        description="A training kit holds everything a GPU job needs, parsed and packed (no parser is needed "
        "where it runs): `kit build` writes it, `kit run` trains from it and stops on time, `kit release` "
        "measures the result on the CPU and releases it only where dev says it is better. docs/gpu.md.",
    )
    commands_of_kit = kit.add_subparsers(dest="kit_command", required=True, metavar="COMMAND")

    build = commands_of_kit.add_parser("build", help="parse and pack the task files and corpus, write the kit")
    build.add_argument("--data", required=True, metavar="DATA", help="TASK.PART.jsonl files and pretrain.train.jsonl")
    build.add_argument("--output", required=True, metavar="KIT")
    build.add_argument("--model", default="untrained", help="the start encoder (default: untrained)")
    build.add_argument("--workers", type=at_least_one, default=2, help="parser processes (default: 2)")
    build.add_argument("--graph-cache", default="default", metavar="default|none|FILE")
    build.add_argument(
        "--shares",
        metavar="PHASE=SHARE,...",
        help="the job's phases and their shares of its time (default: comus=0.30,multitask=0.25,dapt=0.25,"
        "kpc-dapt=0.09,kpc-comus=0.11); without comus the start model (--model DIR) is the pre-trained encoder",
    )
    build.add_argument("--multitask-epochs", type=int, help="the multi-task phase's epochs (default: 2)")
    build.add_argument("--multitask-lr", type=float, help="the multi-task phase's learning rate (default: 3e-5)")
    build.add_argument("--multitask-batch", type=int, help="the multi-task phase's batch size (default: 16)")
    build.add_argument(
        "--kpc-seeds", type=int, help="KPC fine-tunings per study phase, their ensemble reported (default: 1)"
    )
    build.add_argument(
        "--kpc-setting",
        action="append",
        metavar="lr=L,epochs=E,batch=B,seeds=S",
        help="a KPC setting for the study to compare (repeat for several; any key left out takes the job's value: "
        "lr 1e-4, epochs 6, batch 32, seeds --kpc-seeds)",
    )
    build.add_argument("--smoke", action="store_true", help="a job of 2 steps per phase and tiny batches (tests)")
    build.set_defaults(run=run_build)

    run = commands_of_kit.add_parser("run", help="run the kit's job (pre-training, multi-task, the KPC study)")
    run.add_argument("kit", metavar="KIT")
    run.add_argument("--output", required=True, metavar="OUT", help="weights (fp16 deltas) and report.json")
    run.add_argument("--minutes", type=float, required=True, help="the whole job's time, setup included")
    run.add_argument("--device", choices=("cuda", "cpu"), help="default: cuda when available, else cpu")
    run.add_argument("--work", metavar="DIR", help="keep the runs here (default: a temporary folder)")
    run.set_defaults(run=run_job)

    release = commands_of_kit.add_parser("release", help="measure a kit run's models and release them if better")
    release.add_argument("run_output", metavar="OUT", help="what `kit run` wrote")
    release.add_argument("--kit", required=True, metavar="KIT")
    release.add_argument("--data", required=True, metavar="DATA", help="the task files, with their test parts")
    release.add_argument("--work", required=True, metavar="WORK")
    release.add_argument("--output", required=True, metavar="PACKAGE", help="where a released package is written")
    release.add_argument("--against", default="shipped", help="the package to beat (default: shipped)")
    release.add_argument(
        "--recorded-reference",
        action="store_true",
        help="judge against the figures the package to beat recorded at its release, not measured again now",
    )
    release.add_argument("--smoke", action="store_true", help="alignment models of 20 iterations (tests)")
    release.set_defaults(run=run_release)


def run_build(args: argparse.Namespace) -> int:
    """``kit build``: ``tasks.kit.build.build_kit``, then its size beside the code's."""
    from mathgraph.tasks.kit.build import JobSettings, build_kit, check_kit_size, code_bytes

    settings = JobSettings()
    if args.smoke:
        settings = JobSettings(
            pretrain_batch_size=4,
            kpc_batch_size=4,
            multitask_batch_size=4,
            kpc_epochs=1,
            multitask_epochs=1,
            max_steps=2,
            reserve_s=0.0,
        )
    if args.shares:
        settings.shares = _shares(args.shares)
    _set_positive(settings, "multitask_epochs", args.multitask_epochs, "--multitask-epochs")
    _set_positive(settings, "finetune_lr", args.multitask_lr, "--multitask-lr")
    _set_positive(settings, "multitask_batch_size", args.multitask_batch, "--multitask-batch")
    if args.kpc_seeds is not None:
        if args.kpc_seeds < 1:
            raise UserError(f"--kpc-seeds must be at least 1, got {args.kpc_seeds}")
        settings.kpc_seeds = args.kpc_seeds
    settings.kpc_settings = [_kpc_setting(value) for value in args.kpc_setting or ()]
    description = build_kit(args.data, args.output, args.model, settings, args.workers, args.graph_cache, say=report)
    repository = Path(__file__).resolve().parents[2]
    if (repository / ".git").exists():
        code = code_bytes(repository)
        kit_bytes = description["sizes"]["total"]
        report(f"kit {kit_bytes / 2**20:.1f} MiB + code {code / 2**20:.1f} MiB = {(kit_bytes + code) / 2**20:.1f} MiB")
        try:
            check_kit_size(kit_bytes, code)
        except ValueError as err:  # a cluster may take more; a 64 MiB GPU window will not
            warn(f"{err}: too large for a GPU window that takes 64 MiB (untracked files count too)")
    print(json.dumps(description["sizes"]))
    return 0


def run_job(args: argparse.Namespace) -> int:
    """``kit run``: ``tasks.kit.job.run_kit``; exit status 1 when a phase failed (the report says which)."""
    from mathgraph.tasks.kit.job import run_kit

    outcome = run_kit(args.kit, args.output, args.minutes, args.device, args.work, say=report)
    print(json.dumps({"status": outcome["status"], "seconds": outcome["seconds"], "files": outcome["files"]}))
    return 1 if outcome["status"] == "partly failed" else 0


def run_release(args: argparse.Namespace) -> int:
    """``kit release``: ``tasks.kit.release.release_run``; exit status 0 whether released or not."""
    from mathgraph.tasks.kit.release import release_run
    from mathgraph.tasks.release.build import ReleaseSettings

    settings = ReleaseSettings(structure_options={"max_iter": 20}) if args.smoke else ReleaseSettings()
    decision = release_run(
        args.kit,
        args.run_output,
        args.data,
        args.work,
        args.output,
        args.against,
        settings,
        say=report,
        recorded_reference=args.recorded_reference,
    )
    print(json.dumps({k: decision[k] for k in ("release", "mean", "reasons")}))
    return 0


def _set_positive(settings, name: str, value, option: str) -> None:
    """``settings.name = value`` where the option was given; a value of 0 or less is a one-line error."""
    if value is None:
        return
    if value <= 0:
        raise UserError(f"{option} must be above 0, got {value}")
    setattr(settings, name, value)


KPC_SETTING_KEYS = {
    "lr": ("learning_rate", float),
    "epochs": ("epochs", int),
    "batch": ("batch_size", int),
    "seeds": ("seeds", int),
}


def _kpc_setting(value: str) -> dict:
    """``lr=1e-4,epochs=6`` -> ``{"learning_rate": 1e-4, "epochs": 6}``; every value checked to be above 0."""
    setting = {}
    for item in value.split(","):
        key, _, number = item.partition("=")
        if key not in KPC_SETTING_KEYS:
            raise UserError(f"--kpc-setting {value!r}: expected KEY=VALUE,... with KEY one of lr, epochs, batch, seeds")
        name, kind = KPC_SETTING_KEYS[key]
        try:
            setting[name] = kind(number)
        except ValueError:
            raise UserError(f"--kpc-setting {value!r}: {key} must be a number, got {number!r}") from None
        if setting[name] <= 0:
            raise UserError(f"--kpc-setting {value!r}: {key} must be above 0")
    return setting


def _shares(value: str) -> dict[str, float]:
    """``comus=0.3,multitask=0.7`` -> ``{"comus": 0.3, "multitask": 0.7}``, phases checked."""
    from mathgraph.tasks.kit.job import PHASES

    shares = {}
    for item in value.split(","):
        phase, _, share = item.partition("=")
        if phase not in PHASES or not share:
            raise UserError(f"--shares {value!r}: expected PHASE=SHARE,... with PHASE one of {', '.join(PHASES)}")
        shares[phase] = float(share)
    if any(share <= 0 for share in shares.values()):
        raise UserError(f"--shares {value!r}: every share must be above 0")
    return shares
