"""Which skills a ReasonFormer multi-task model fires at each reasoning step, per task (the paper's
modularity analysis): one heat map per task over its test problems, with the mean stop gate per step.

    python benchmarks/skill_routes_by_task.py --model results-mt/multitask/reasonformer+skills \
        --task kpc:results-mt/data-capped/kpc.test.jsonl --task qrc:... --output skills_by_task.png
    python benchmarks/skill_routes_by_task.py --smoke --work DIR

Each problem is read as its task (its task prompt, if the model has them); pair tasks (QRC, QAM) and
SQR lists contribute the first text of each example (the first problem or the query), routed alone:
``skill_routes`` takes single problems, so a cross-encoder's pair input is not what is routed here. Writes the picture and,
next to it, a JSON file with the mean weights, activation rates and stop gates per task.

``--smoke``: first trains a tiny ReasonFormer model for 2 steps on the four smoke task files
(``benchmarks/results.py --smoke``'s) and routes their test problems, all in ``WORK/smoke``: seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mathgraph.models.multitask import MultiTaskModel  # noqa: E402
from mathgraph.routing_pictures import draw_skill_routes  # noqa: E402
from mathgraph.tasks.task_types import load_examples  # noqa: E402
from mathgraph.tasks.training.multitask import parse_task_spec  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from smoke import smoke_work, tiny_encoder  # noqa: E402


def main() -> None:
    args = _arguments()
    if args.smoke:
        work = smoke_work(args.work)
        args.model, args.task = _smoke_model(work)
        args.output = str(work / "skills_by_task.png")
    model = MultiTaskModel.from_pretrained(args.model)
    specs = [parse_task_spec(spec)[:2] for spec in args.task]
    figure, panels = plt.subplots(1, len(specs), figsize=(4.2 * len(specs), 2.8), squeeze=False)
    summary = {}
    for axes, (task, path) in zip(panels[0], specs):
        view = model.for_task(task)
        examples = load_examples(view.config, path)[: args.limit]
        firsts = [view.config.task_type.example_texts(e)[0] for e in examples]
        texts = [t[0] if isinstance(t, tuple) else t for t in firsts]  # a cross-encoder pair: its first problem
        routes = model.skill_routes(texts, task)
        draw_skill_routes(routes, axes=axes)
        summary[task] = {
            "problems": len(texts),
            "skills": routes.skills,
            "mean_weights": routes.mean_weights(),
            "activation_rates": routes.activation_rates(),
            "mean_stop_gates": routes.mean_stop_gates(),
        }
        print(task, json.dumps({k: summary[task][k] for k in ("mean_weights", "mean_stop_gates")}), flush=True)
    figure.suptitle("mean router weight of each skill per reasoning step (stop gate after each step)", fontsize=10)
    figure.tight_layout()
    output = Path(args.output)
    figure.savefig(output, dpi=120, bbox_inches="tight")
    output.with_suffix(".json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(f"wrote {output} and {output.with_suffix('.json')}")


def _smoke_model(work: Path) -> tuple[str, list[str]]:
    """A tiny ReasonFormer model trained for 2 steps on the smoke task files, and the ``--task`` specs of
    their test parts."""
    from mathgraph.models.task_model import TaskConfig
    from mathgraph.tasks.training.multitask import train_multitask
    from mathgraph.tasks.training.trainer import TrainingArguments

    from results import build_task_files

    files = build_task_files(work / "data", seed=0, smoke=True)
    tasks = ("kpc", "qrc", "qam", "sqr")
    train_multitask(
        [
            (TaskConfig(task, text_field="problem", label_field="subject"), files[task]["train"], files[task]["dev"])
            for task in tasks
        ],
        TrainingArguments(str(work / "reasonformer"), max_steps=2, batch_size=2),
        model=tiny_encoder(work),
        adapter="reasonformer",
    )
    return str(work / "reasonformer"), [f"{task}:{files[task]['test']}" for task in tasks]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a `train multitask --adapter reasonformer` directory")
    parser.add_argument(
        "--task", action="append", metavar="TASK:FILE", help="a task and the problems to route (repeat)"
    )
    parser.add_argument("--limit", type=int, default=150, help="at most this many problems per task")
    parser.add_argument("--output", default="skills_by_task.png")
    parser.add_argument("--smoke", action="store_true", help="a tiny model trained here, seconds (WORK/smoke)")
    parser.add_argument("--work", default="results", help="--smoke: where the model and the picture go")
    args = parser.parse_args()
    if not args.smoke and not (args.model and args.task):
        parser.error("give --model and one --task or more (or --smoke)")
    return args


if __name__ == "__main__":
    main()
