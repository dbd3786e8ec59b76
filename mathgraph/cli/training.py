"""``mathgraph pretrain``, ``mathgraph train kpc|qrc|qam|sqr|multitask|simcse`` and ``mathgraph evaluate``.

Each ``train`` kind is its own parser, so its ``--help`` lists its own options; the four task kinds share
one builder, and every training command takes the flags of ``tasks.training.trainer.TrainingArguments``.
"""

from __future__ import annotations

import argparse
import json

from mathgraph.cli.common import (
    NAMED_MODELS,
    add_corpus_argument,
    add_runtime_argument,
    at_least_one,
    check_corpus_files,
    check_input_file,
    check_model_argument,
    corpus_texts,
)
from mathgraph.quiet import report
from mathgraph.samples import input_path
from mathgraph.task_specs import PAIR_TASKS
from mathgraph.task_specs import TASK_NAMES as TASKS

# Fields only KPC reads; the other tasks' examples have fixed fields.
KPC_FIELD_DEFAULTS = {"text_field": "problem", "label_field": "subject"}


def register(commands) -> None:
    """Add ``pretrain``, ``train ...`` and ``evaluate`` to the ``mathgraph`` commands."""
    _register_pretrain(commands)
    train = commands.add_parser(
        "train",
        help="fine-tune a task model (kpc, qrc, qam, sqr), a multi-task model or a SimCSE retrieval encoder",
        description="Fine-tune an encoder with a task head, or fit the TF-IDF baseline "
        "(--architecture tfidf); the model directory keeps its label names. `train multitask "
        "--task kpc:TRAIN[:DEV] --task qrc:...` trains one encoder with a head per task; "
        "`train simcse` trains a retrieval encoder. See `mathgraph train KIND --help`.",
    )
    kinds = train.add_subparsers(dest="task", required=True, metavar="KIND")
    for task in TASKS:
        _register_train_task(kinds, task)
    _register_train_multitask(kinds)
    _register_train_simcse(kinds)
    _register_evaluate(commands)


def _register_pretrain(commands) -> None:
    pretrain = commands.add_parser(
        "pretrain",
        help="continual pre-training (MLM, DTC, TGCL) of an encoder on math corpora",
        description="Pre-train COMUS (--tasks mlm,dtc,tgcl) or DAPT-BERT (--architecture bert --tasks mlm) and save an "
        "encoder directory that `mathgraph encode/train --model DIR` loads.",
    )
    add_corpus_argument(pretrain, "JSONL corpus and its text field")
    pretrain.add_argument(
        "--model",
        default="untrained",
        help="encoder to start from: 'untrained' (default), 'shipped' (the shipped one; alias 'default') or a directory",
    )
    pretrain.add_argument("--tasks", default="mlm,dtc,tgcl", help="comma-separated subset of mlm,dtc,tgcl")
    pretrain.add_argument(
        "--architecture",
        choices=("comus", "bert", "bert+gat"),
        default="comus",
        help="comus (default); bert: text only, mlm (DAPT-BERT); bert+gat: no memory layers",
    )
    pretrain.add_argument("--steps", type=int, default=1000, dest="max_steps", help="optimizer steps (default: 1000)")
    pretrain.add_argument(
        "--freeze-vocabulary",
        action="store_true",
        help="keep the pre-trained word embeddings fixed; only added LaTeX tokens train",
    )
    add_training_flags(pretrain, learning_rate=5e-5, batch_size=32, new_model=("split_digits",))
    pretrain.set_defaults(run=run_pretrain)


def _add_start_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        default="shipped",
        help="encoder to start from: 'shipped' (the shipped pre-trained COMUS; alias 'default'), 'untrained' or a "
        "directory",
    )


def _add_kpc_fields(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--text-field", default="problem", help="KPC text field (default: problem)")
    parser.add_argument("--label-field", default="subject", help="KPC label field (default: subject)")


def _register_train_task(kinds, task: str) -> None:
    """``train kpc|qrc|qam|sqr``: one builder for the four task kinds."""
    parser = kinds.add_parser(
        task,
        help=f"fine-tune a {task.upper()} model (or fit its TF-IDF baseline)",
        description=f"Fine-tune an encoder with a {task.upper()} head, or fit the TF-IDF "
        "baseline (--architecture tfidf); the model directory keeps its label names.",
    )
    parser.add_argument("--train", required=True, type=input_path, metavar="FILE", help="training file")
    parser.add_argument(
        "--dev", type=input_path, metavar="FILE", help="evaluated after each epoch; the best epoch is kept"
    )
    _add_start_model(parser)
    parser.add_argument("--architecture", choices=("comus", "bert", "bert+gat", "tfidf"), default="comus")
    if task == "kpc":
        _add_kpc_fields(parser)
    else:
        parser.set_defaults(**KPC_FIELD_DEFAULTS)
    parser.add_argument(
        "--pooling",
        choices=("mean", "cls"),
        default="mean",
        help="text half of the problem vector: mean of the token states or [CLS] (default: mean)",
    )
    if task in PAIR_TASKS:
        parser.add_argument(
            "--pair-mode",
            choices=("cross", "bi"),
            help="read the two texts as one sequence with both graphs under one ROOT "
            "(cross, default) or encode each alone (bi)",
        )
    else:
        parser.set_defaults(pair_mode=None)
    if task != "kpc":
        parser.add_argument(
            "--alignment",
            action="store_true",
            help="the head also reads the alignment of each pair's graphs (quantities kept or "
            "changed, sentences inserted, the question: parsers.compare) next to the pair vector",
        )
    else:
        parser.set_defaults(alignment=False)
    add_training_flags(
        parser, learning_rate=3e-5, batch_size=16, new_model=("gat_heads", "split_digits"), frozen_prefix=True
    )
    parser.set_defaults(run=run_train)


def _register_train_multitask(kinds) -> None:
    parser = kinds.add_parser(
        "multitask",
        help="one encoder with a head per task (dense, MoE, CGC-LoRA or ReasonFormer)",
        description="Train one encoder with a head per task on batches mixed across tasks; "
        "--adapter moe or cgc-lora adds JiuZhang 2.0's mixture of experts or CGC-LoRA, "
        "--adapter reasonformer ReasonFormer's skill modules, router and stop gates.",
    )
    parser.add_argument(
        "--task",
        action="append",
        required=True,
        dest="task_specs",
        metavar="TASK:TRAIN[:DEV]",
        help="a task with its training (and dev) file; repeat for each task",
    )
    _add_start_model(parser)
    parser.add_argument("--architecture", choices=("comus", "bert", "bert+gat"), default="comus")
    _add_kpc_fields(parser)
    parser.add_argument(
        "--alignment",
        action="store_true",
        help="the QRC, QAM and SQR heads also read the alignment of each pair's graphs",
    )
    options = parser.add_argument_group("multitask options")
    options.add_argument("--adapter", choices=("none", "moe", "cgc-lora", "reasonformer"), default="none")
    options.add_argument("--moe-layers", default="last-2", help="all, last-N or indices like 4,5 (default: last-2)")
    options.add_argument("--moe-experts", type=int, default=4)
    options.add_argument("--moe-top-k", type=int, default=1)
    options.add_argument("--task-prompts", action="store_true", help="a learned prompt per task after [CLS]")
    options.add_argument("--lora-rank", type=int, default=8, help="CGC-LoRA total rank r")
    options.add_argument("--lora-common", type=int, default=2, help="CGC-LoRA task-common experts N_C")
    options.add_argument("--sampling", choices=("proportional", "uniform", "temperature"), default="proportional")
    options.add_argument("--temperature", type=float, default=2.0, help="for --sampling temperature")
    options.add_argument(
        "--label-space",
        choices=("per-task", "unified"),
        default="per-task",
        help="a head per task, or one classifier over the union of the KPC/QRC/QAM labels "
        "(JiuZhang 2.0's multi-label setting)",
    )
    options.add_argument(
        "--freeze-embeddings",
        action="store_true",
        help="keep the word, position and node-label embeddings as the start encoder has them "
        "(the model then differs from it in layers, graph side and heads only)",
    )
    reasoning = parser.add_argument_group("reasonformer options")
    reasoning.add_argument(
        "--skills",
        default=",".join(SKILLS),
        type=_skill_list,
        help=f"comma-separated reasoning skills, one module each (default: {','.join(SKILLS)}; "
        "general is in every skill's routing target)",
    )
    reasoning.add_argument("--reasoning-depth", type=int, default=3, help="maximum reasoning steps")
    reasoning.add_argument(
        "--reasoning-layers", type=int, default=1, help="text encoder's top layers that become each skill's module"
    )
    reasoning.add_argument("--reasoning-top-k", type=int, default=2, help="skills activated per step (0: all)")
    reasoning.add_argument(
        "--reasoning-modules",
        choices=("shared", "private"),
        default="shared",
        help="one module per skill for all steps with step adapters, or one per skill and step",
    )
    reasoning.add_argument(
        "--reasoning-checkpointing",
        action="store_true",
        help="recompute the reasoning modules in the backward pass: much less memory, about a "
        "third more time (same numbers)",
    )
    reasoning.add_argument(
        "--skill-pretraining-steps",
        type=int,
        default=0,
        metavar="N",
        help="batches of skill pre-training (MLM, TGCL, KPC, QRC, routing loss) before adaptation",
    )
    reasoning.add_argument("--routing-weight", type=float, default=1.0, help="weight of the skill routing loss")
    add_training_flags(parser, learning_rate=3e-5, batch_size=16)
    parser.set_defaults(run=run_train_multitask)


# models.reasoning.SKILLS, as a literal so building the parser imports no torch (a test keeps them equal).
SKILLS = ("general", "language", "alignment", "knowledge", "relation")


def _skill_list(value: str) -> list[str]:
    skills = [s.strip() for s in value.split(",") if s.strip()]
    unknown = [s for s in skills if s not in SKILLS]
    if not skills or unknown:
        raise argparse.ArgumentTypeError(f"skills must be some of {','.join(SKILLS)}, got {value!r}")
    return skills


def _register_train_simcse(kinds) -> None:
    parser = kinds.add_parser(
        "simcse",
        help="a retrieval encoder (SimCSE: dropout views, in-batch negatives)",
        description="Train an encoder for similar-problem search on unlabelled texts: two "
        "dropout views of a text are positives, the batch's other texts negatives.",
    )
    add_corpus_argument(parser, "JSONL texts to train on")
    _add_start_model(parser)
    parser.add_argument("--steps", type=int, default=1000, dest="max_steps", help="optimizer steps (default: 1000)")
    parser.add_argument(
        "--mode",
        choices=("joint", "text", "graph", "fused"),
        default="joint",
        help="which vector is trained (use the same mode for the index)",
    )
    add_training_flags(parser, learning_rate=3e-5, batch_size=16)
    parser.set_defaults(run=run_train_simcse)


def _register_evaluate(commands) -> None:
    evaluate = commands.add_parser("evaluate", help="evaluate a trained model on a task file (prints JSON)")
    evaluate.add_argument("task", choices=TASKS)
    evaluate.add_argument(
        "--model",
        default="shipped",
        metavar="NAME",
        help="any model `predict` takes: a package ('shipped', an export, a Hub id), a task, multi-task, TF-IDF "
        "or alignment model (default: shipped)",
    )
    evaluate.add_argument(
        "--hybrid",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a package's late fusion, as `predict --hybrid` (default: where dev said it helps)",
    )
    evaluate.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available, else cpu)")
    add_runtime_argument(evaluate)
    evaluate.add_argument("--data", required=True, type=input_path, metavar="FILE")
    evaluate.add_argument("--text-field", help="KPC text field (default: the one the model was trained with)")
    evaluate.add_argument("--label-field", help="KPC label field (default: the one the model was trained with)")
    evaluate.add_argument("--batch-size", type=at_least_one, default=32)
    evaluate.add_argument(
        "--threads", type=at_least_one, help="torch CPU threads (default: the cores this process may use)"
    )
    evaluate.set_defaults(run=run_evaluate)


def add_training_flags(
    parser: argparse.ArgumentParser,
    learning_rate: float,
    batch_size: int,
    new_model: tuple[str, ...] = (),
    frozen_prefix: bool = False,
) -> None:
    """The flags of ``tasks.training.trainer.TrainingArguments`` (``dest`` = its field names), shared by every training command.

    A command lists only the options it takes: ``new_model`` names the options that set up a new model it can
    start (``"gat_heads"``, ``"split_digits"``), ``frozen_prefix`` adds ``--freeze-text-layers`` (single-task
    fine-tuning only: pre-training, SimCSE and multi-task training change what the text layers compute)."""
    group = parser.add_argument_group("training")
    group.add_argument("--output", required=True, metavar="DIR", dest="output_dir")
    group.add_argument("--epochs", type=at_least_one, default=3)
    group.add_argument("--batch-size", type=at_least_one, default=batch_size)
    group.add_argument("--eval-batch-size", type=at_least_one, default=32)
    group.add_argument(
        "--lr",
        type=float,
        default=learning_rate,
        dest="learning_rate",
        help=f"the pre-trained text encoder's learning rate (default: {learning_rate})",
    )
    group.add_argument(
        "--head-lr",
        type=float,
        default=1e-3,
        dest="head_learning_rate",
        help="learning rate of the parts that start fresh: heads, GAT, memory, MoE routers, "
        "LoRA experts (default: 1e-3)",
    )
    group.add_argument(
        "--warmup-ratio", type=float, default=0.05, help="linear warm-up share of the steps (default: 0.05)"
    )
    group.add_argument("--gradient-accumulation-steps", type=at_least_one, default=1)
    group.add_argument("--seed", type=int, default=0)
    group.add_argument(
        "--mixed-precision",
        choices=("no", "fp16", "bf16"),
        default="no",
        help="autocast on a GPU (fp16 is refused on a CPU, where it would be fp32; bf16 runs there "
        "with a warning: no speed-up without bf16 units)",
    )
    group.add_argument("--resume", action="store_true", help="continue from OUTPUT/checkpoint-last")
    group.add_argument("--skip-bad", action="store_true", help="skip invalid rows (counted in a warning)")
    group.add_argument(
        "--workers", type=at_least_one, default=1, dest="parse_workers", help="parser processes (default: 1)"
    )
    group.add_argument(
        "--threads", type=at_least_one, help="torch CPU threads (default: the cores this process may use)"
    )
    group.add_argument(
        "--loader-workers",
        type=int,
        default=0,
        help="processes that collate batches (default: 0, in the training process)",
    )
    group.add_argument(
        "--graph-cache",
        default="default",
        metavar="default|none|FILE",
        help="where parsed graphs are cached (default: ~/.cache/mathgraph/graphs.sqlite, or $MATHGRAPH_CACHE_DIR)",
    )
    group.add_argument(
        "--packed",
        metavar="DIR",
        dest="packed_features",
        help="read the problems from a pack made beforehand (a kit's packed/ folder, `mathgraph kit build`): "
        "nothing is parsed, no parser needs to be installed",
    )
    group.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        dest="time_limit_s",
        help="stop training after this many seconds, the learning-rate schedule planned to end then",
    )
    if frozen_prefix:
        group.add_argument(
            "--freeze-text-layers",
            type=int,
            default=0,
            metavar="N",
            help="freeze the embeddings and first N text layers and compute their outputs once per "
            "problem (faster epochs; the frozen layers do not adapt)",
        )
    if "gat_heads" in new_model:
        group.add_argument(
            "--gat-heads",
            type=int,
            help="a new model's (--model untrained) GAT heads of 64: default text width / 64 (6 for "
            "MiniLM = 384 wide); 12 gives COMUS's 768",
        )
    if "split_digits" in new_model:
        group.add_argument(
            "--split-digits",
            action="store_true",
            default=None,
            help="a new model's (--model untrained) tokenizer cuts numbers into single digits (Qwen-style: "
            "1,000.5 -> 1 , 0 0 0 . 5); saved in config.json, so the model keeps doing it",
        )


def _training_arguments(args: argparse.Namespace, **overrides):
    from mathgraph.tasks.training.trainer import TrainingArguments

    return TrainingArguments.from_namespace(args, **overrides)


def _print_result(result: dict, saved: str, output_dir: str) -> None:
    print(json.dumps(result, default=str))
    report(f"saved the {saved} to {output_dir}")


def run_pretrain(args: argparse.Namespace) -> int:
    """``pretrain``: continual pre-training on corpora (``tasks.training.pretrain.run_pretraining``)."""
    check_model_argument(args.model, names=NAMED_MODELS)
    check_corpus_files(args.corpus)  # missing or empty corpora: before torch loads
    from mathgraph.tasks.training.pretrain import check_pretraining_setup, run_pretraining

    tasks = [t.strip() for t in args.tasks.split(",")]
    check_pretraining_setup(tasks, args.architecture)  # before the slow parsing
    state = run_pretraining(
        corpus_texts(args.corpus),
        _training_arguments(args),
        model=args.model,
        tasks=tasks,
        architecture=args.architecture,
        split_digits=args.split_digits,
        freeze_vocabulary=args.freeze_vocabulary,
    )
    report(f"pre-trained {state['step']} steps; encoder saved to {args.output_dir}")
    return 0


def run_train(args: argparse.Namespace) -> int:
    """``train kpc|qrc|qam|sqr``: a task model (``tasks.training.finetune.train_task``) or a TF-IDF baseline."""
    check_input_file(args.train, "--train")
    check_input_file(args.dev, "--dev")
    check_model_argument(args.model, names=NAMED_MODELS)
    from mathgraph.models.task_model import TaskConfig
    from mathgraph.tasks.training.finetune import train_task

    if args.architecture == "tfidf":
        from mathgraph.api import evaluate
        from mathgraph.tasks.training.tfidf import train_tfidf_file

        config = TaskConfig(args.task, text_field=args.text_field, label_field=args.label_field)
        train_tfidf_file(config, args.train, args.output_dir, args.skip_bad)
        result = (
            {"dev": evaluate(args.output_dir, args.task, args.dev, args.text_field, args.label_field)}
            if args.dev
            else {}
        )
    else:
        config = TaskConfig(
            args.task,
            architecture=args.architecture,
            text_field=args.text_field,
            label_field=args.label_field,
            pooling=args.pooling,
            pair_mode=args.pair_mode,
            alignment=args.alignment,
        )
        result = train_task(
            config,
            args.train,
            _training_arguments(args),
            dev_path=args.dev,
            model=args.model,
            gat_heads=args.gat_heads,
            split_digits=args.split_digits,
        )
    _print_result(result, f"{args.task} model", args.output_dir)
    return 0


def run_train_multitask(args: argparse.Namespace) -> int:
    """``train multitask``: one model with a head per task (``tasks.training.multitask.train_multitask``)."""
    check_model_argument(args.model, names=NAMED_MODELS)
    for spec in args.task_specs:  # TASK:TRAIN[:DEV]: missing or empty files before torch loads
        task, *paths = spec.split(":")
        if task in TASKS and len(paths) in (1, 2):  # a malformed spec is parse_task_spec's to explain
            for path in paths:
                check_input_file(path or None, "--task")
    from mathgraph.models.task_model import TaskConfig
    from mathgraph.tasks.training.multitask import parse_task_spec, train_multitask

    task_files = []
    for spec in args.task_specs:
        task, train_path, dev_path = parse_task_spec(spec)
        task_files.append(
            (
                TaskConfig(
                    task,
                    text_field=args.text_field,
                    label_field=args.label_field,
                    alignment=args.alignment and task != "kpc",
                ),
                train_path,
                dev_path,
            )
        )
    result = train_multitask(
        task_files,
        _training_arguments(args),
        model=args.model,
        adapter=args.adapter,
        architecture=args.architecture,
        moe_layers=args.moe_layers,
        moe_experts=args.moe_experts,
        moe_top_k=args.moe_top_k,
        task_prompts=args.task_prompts,
        lora_rank=args.lora_rank,
        lora_common=args.lora_common,
        sampling=args.sampling,
        temperature=args.temperature,
        label_space=args.label_space,
        freeze_embeddings=args.freeze_embeddings,
        skills=args.skills,
        reasoning_depth=args.reasoning_depth,
        reasoning_layers=args.reasoning_layers,
        reasoning_top_k=args.reasoning_top_k,
        reasoning_modules=args.reasoning_modules,
        reasoning_checkpointing=args.reasoning_checkpointing,
        skill_pretraining_steps=args.skill_pretraining_steps,
        routing_weight=args.routing_weight,
    )
    _print_result(result, "multi-task model", args.output_dir)
    return 0


def run_train_simcse(args: argparse.Namespace) -> int:
    """``train simcse``: a retrieval encoder from unlabelled texts (``tasks.training.simcse``)."""
    check_model_argument(args.model, names=NAMED_MODELS)
    texts = corpus_texts(args.corpus)  # missing or empty corpora: before torch loads
    from mathgraph.tasks.training.simcse import train_simcse

    result = train_simcse(texts, _training_arguments(args), model=args.model, mode=args.mode)
    _print_result(result, "SimCSE encoder", args.output_dir)
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    """``evaluate``: a model's metrics on a task file, printed as JSON (``mathgraph.api.evaluate``)."""
    check_model_argument(args.model)
    check_input_file(args.data, "--data")
    from mathgraph.api import evaluate, set_threads

    set_threads(args.threads)
    metrics = evaluate(
        args.model,
        args.task,
        args.data,
        args.text_field,
        args.label_field,
        batch_size=args.batch_size,
        hybrid=args.hybrid,
        device=args.device,
        runtime=args.runtime,
    )
    print(json.dumps(metrics))
    return 0
