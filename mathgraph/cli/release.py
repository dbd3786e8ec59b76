"""``mathgraph release`` (build a model package like the shipped one) and ``mathgraph export`` (a package as a
self-contained directory)."""

from __future__ import annotations

import argparse

from mathgraph.cli.common import at_least_one, check_model_argument
from mathgraph.errors import UserError
from mathgraph.quiet import report
from mathgraph.tasks.release.build import ALL_STAGES, STAGES  # tuples of names: the module imports no torch at the top


def register(commands) -> None:
    """Add ``release`` and ``export`` to the ``mathgraph`` commands."""
    _register_release(commands)
    _register_export(commands)


def _register_release(commands) -> None:
    release = commands.add_parser(
        "release",
        help="build a model package as the shipped one was built (pre-train, multi-task, TF-IDF, alignment models)",
        description="Build a model package in stages (tasks.release.build): pretrain, multitask, package, "
        "heads (the QAM head refitted with every alignment feature), measure, structure (alignment models; runs "
        "search too), search, bank-search. DATA holds the task files TASK.PART.jsonl "
        "(kpc, qrc, qam, sqr; train, dev, test) and the pre-training corpus pretrain.train.jsonl, as "
        "benchmarks/results.py writes them; each stage keeps its runs in WORK.",
    )
    release.add_argument(
        "stages", nargs="+", choices=(*STAGES, "all"), metavar="STAGE", help=f"{', '.join(STAGES)} or all"
    )
    release.add_argument("--data", required=True, metavar="DATA", help="the directory of the task files")
    release.add_argument("--work", required=True, metavar="WORK", help="where each stage's runs are kept")
    release.add_argument(
        "--output",
        metavar="OUT",
        help="the package (needed by package, heads, measure, structure, search, bank-search and --start package)",
    )
    release.add_argument("--steps", type=int, default=2000, help="pre-training steps of 32 texts (default: 2000)")
    release.add_argument("--epochs", type=int, default=2, help="multi-task epochs (default: 2)")
    release.add_argument(
        "--start",
        choices=("pretrain", "package"),
        default="pretrain",
        help="multitask: fine-tune the pretrain stage's encoder (default) or that of the package in --output",
    )
    release.add_argument(
        "--start-model",
        default="untrained",
        metavar="NAME",
        help="pretrain: the encoder pre-training starts from (default: untrained, the architecture before training)",
    )
    release.add_argument(
        "--no-alignment",
        dest="alignment",
        action="store_false",
        help="multitask: pair heads without alignment features",
    )
    release.add_argument("--seed", type=int, default=0)
    release.add_argument("--workers", type=at_least_one, default=2, help="parser processes (default: 2)")
    release.add_argument("--device", help="where the package's models run while measured (default: CUDA if present)")
    release.add_argument(
        "--bank-data",
        metavar="DIR",
        help="bank-search: the folder holding gsm8k/train.jsonl and gsmplus/variants.jsonl (the shared data)",
    )
    release.set_defaults(run=run_release)


def _register_export(commands) -> None:
    export = commands.add_parser(
        "export",
        help="write a model package (the shipped model unless --model) as a self-contained directory",
        description="Write a model package as a self-contained directory: the encoder and the multi-task "
        "model with full weights (no deltas against the packaged MiniLM), the TF-IDF and alignment models, "
        "release.json, the model card, config.json and checksums: the form to publish on the Hugging Face Hub. "
        "Every mathgraph command and mathgraph.load read it as they read the shipped model.",
    )
    export.add_argument("output", metavar="OUTPUT", help="a new (or empty) directory")
    export.add_argument(
        "--model",
        default="shipped",
        metavar="NAME",
        help="the package: 'shipped' (the default), a directory or org/name",
    )
    export.set_defaults(run=run_export)


def run_release(args: argparse.Namespace) -> int:
    """``release``: the stages asked for, in their order (``tasks.release.build.build_release``)."""
    stages = ALL_STAGES if "all" in args.stages else tuple(s for s in STAGES if s in args.stages)
    needs_output = {"package", "heads", "measure", "structure", "search", "bank-search"} & set(stages) or (
        args.start == "package" and "multitask" in stages
    )
    if needs_output and args.output is None:
        raise UserError(f"mathgraph release {' '.join(stages)} needs --output (the package's directory)")
    check_model_argument(args.start_model, "--start-model", names=("untrained",))
    from mathgraph.tasks.release.build import ReleaseSettings, build_release, task_files

    files = task_files(args.data)
    settings = ReleaseSettings(
        steps=args.steps,
        epochs=args.epochs,
        start=args.start,
        alignment=args.alignment,
        seed=args.seed,
        workers=args.workers,
        start_model=args.start_model,
        device=args.device,
        bank_data=args.bank_data,
    )
    build_release(files, args.work, args.output, stages, settings)
    if args.output is not None and set(stages) & {"package", "heads", "structure", "search", "bank-search"}:
        report(f"wrote {args.output}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """``export``: a package as a self-contained directory (``tasks.release.package.export_package``)."""
    check_model_argument(args.model)
    from mathgraph.tasks.release.package import export_package

    report(f"wrote {export_package(args.output, args.model)}")
    return 0
