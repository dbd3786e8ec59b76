"""Build the shipped model on the results table's splits: ``mathgraph release`` (``tasks.release.build``) run on them.

    python benchmarks/release_model.py --work results/ --stage pretrain   [--steps 2000]
    python benchmarks/release_model.py --work results/ --stage multitask  [--epochs 2] [--start shipped] [--no-alignment]
    python benchmarks/release_model.py --work results/ --stage package    [--output mathgraph/data/shipped_model]
    python benchmarks/release_model.py --work results/ --stage heads      [--output mathgraph/data/shipped_model]
    python benchmarks/release_model.py --work results/ --stage measure    [--output mathgraph/data/shipped_model]
    python benchmarks/release_model.py --work results/ --stage structure  [--output mathgraph/data/shipped_model]
    python benchmarks/release_model.py --work results/ --stage search     [--output mathgraph/data/shipped_model]
    python benchmarks/release_model.py --work results/ --smoke            [--stage ...]

The building is the library's (``tasks.release.build``; its docstring says what each stage does, and
``mathgraph release`` runs it on any task files). This script gives it the splits and task files of
``benchmarks/results.py`` (seed 0, in ``WORK/data``), so the released model's figures sit next to the results
table's rows, writes the package into ``mathgraph/data/shipped_model`` unless told otherwise, and keeps the
pre-training loss curve with the results (``benchmarks/results/issue13_pretrain_log.jsonl``).

``--smoke`` runs every stage in turn (or the ``--stage`` named) on the smoke task files
(``benchmarks/results.py --smoke``'s): pre-training of a tiny new model (a 6-layer, 32-wide BERT)
and multi-task training for 2 steps each, a QAM head refit of 2 epochs, alignment models of 20
iterations, a search bank of the first 20 GSM8K problems and the variants of the first 6 GSM-Plus seeds
of the smoke data (``WORK/smoke/bank-data``: 4 seeds' variants to fit on, 1 to choose on); everything,
the package included (``--output`` is ``WORK/smoke/package`` unless given), goes to ``WORK/smoke``, and
nothing to ``benchmarks/results``. Seconds, to keep the script working; it refuses to write the shipped
package.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mathgraph.tasks.release.build import STAGES, ReleaseSettings, build_release  # noqa: E402

from results import DATA, REPO, build_task_files  # noqa: E402
from smoke import SMOKE_DATA, smoke_work, tiny_encoder  # noqa: E402

SHIPPED = REPO / "mathgraph" / "data" / "shipped_model"


def main() -> None:
    args = _arguments()
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    if args.output is None:
        args.output = str(work / "package" if args.smoke else SHIPPED)
    if args.smoke and Path(args.output).resolve() == SHIPPED.resolve():
        raise SystemExit("--smoke does not write the shipped package: give another --output")
    files = build_task_files(work / "data", args.seed, smoke=args.smoke)
    settings = ReleaseSettings(
        steps=2 if args.smoke else args.steps,
        epochs=args.epochs,
        start="package" if args.start == "shipped" else args.start,
        alignment=args.alignment,
        seed=args.seed,
        workers=args.workers,
        start_model=tiny_encoder(work) if args.smoke else "untrained",
        pretrain_batch_size=4 if args.smoke else 32,
        multitask_batch_size=2 if args.smoke else 16,
        multitask_max_steps=2 if args.smoke else None,
        head_epochs=2 if args.smoke else 10,
        structure_options={"max_iter": 20} if args.smoke else None,
        bank_data=str(smoke_bank(work) if args.smoke else DATA),
    )
    stages = [args.stage] if args.stage else STAGES  # --smoke without --stage: every stage, heads and measure too
    build_release(files, work, args.output, stages, settings, say=lambda line: print(line, flush=True))
    # the loss curve goes with the results (not from --smoke runs); absent when stage 2 started from the package
    log = work / "pretrain" / "training_log.jsonl"
    if "package" in stages and log.exists() and not args.smoke:
        shutil.copy(log, REPO / "benchmarks" / "results" / "issue13_pretrain_log.jsonl")


def smoke_bank(work: Path, gsm8k_rows: int = 20, seeds: int = 6) -> Path:
    """A small search bank in the layout ``--bank-data`` reads, written to ``work/bank-data``: the first
    ``gsm8k_rows`` GSM8K problems and the variants of the first ``seeds`` GSM-Plus seeds of the smoke data
    (6 seeds: the fewest that leave a dev seed when split 80/10/10)."""
    bank = work / "bank-data"
    gsm8k = (SMOKE_DATA / "gsm8k" / "train.jsonl").read_text(encoding="utf-8").splitlines()[:gsm8k_rows]
    variants = (SMOKE_DATA / "gsmplus" / "variants.jsonl").read_text(encoding="utf-8").splitlines()
    kept = set(list(dict.fromkeys(json.loads(line)["seed_question"] for line in variants))[:seeds])
    variants = [line for line in variants if json.loads(line)["seed_question"] in kept]
    for name, lines in (("gsm8k/train.jsonl", gsm8k), ("gsmplus/variants.jsonl", variants)):
        (bank / name).parent.mkdir(parents=True, exist_ok=True)
        (bank / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return bank


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results")
    parser.add_argument(
        "--stage",
        choices=STAGES,
        help="the stage to run (required unless --smoke, which runs every stage unless told)",
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
