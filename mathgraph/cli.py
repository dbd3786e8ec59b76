"""The ``mathgraph`` command line.

    mathgraph parse "TEXT" [--draw out.png] [--format text|json]
    mathgraph parse --sample N [--draw out.png]
    mathgraph parse --input FILE.jsonl --text-field problem --output GRAPHS.jsonl [--workers N] [--skip-bad]
    mathgraph vocab --corpus FILE.jsonl[:FIELD] [--corpus ...] --output DIR [--min-freq 2] [--latex-min-freq 5]
    mathgraph encode --input FILE.jsonl --text-field problem --output EMB.npy [--graphs GRAPHS.jsonl] [--model DIR]
    mathgraph pretrain --corpus FILE.jsonl[:FIELD] --output DIR [--steps N] [--batch-size B] [--tasks mlm,dtc,tgcl] [--resume]
                       [--split-digits]
    mathgraph train kpc|qrc|qam|sqr --train F --output DIR [--dev F] [--model DIR] [--encoder comus|bert|bert+gat|tfidf]
                                    [--freeze-text-layers N] [--gat-heads H] [--split-digits] [--threads N]
                                    [--graph-cache FILE|none]
    mathgraph train multitask --task kpc:TRAIN[:DEV] --task qrc:... --output DIR [--adapter none|moe|cgc-lora]
                              [--moe-experts 4] [--moe-top-k 1] [--task-prompts] [--sampling proportional|uniform|temperature]
    mathgraph evaluate kpc|qrc|qam|sqr --model DIR --data F
    mathgraph predict kpc|qrc|qam|sqr [--model DIR] [--hybrid|--no-hybrid] TEXT [TEXT ...]
    mathgraph predict kpc|qrc|qam|sqr [--model DIR] --input F.jsonl [--output P.jsonl] [--skip-bad]
    mathgraph train simcse --corpus F.jsonl[:FIELD] [--corpus ...] --output DIR [--model DIR] [--steps N]
    mathgraph index build --input CORPUS.jsonl --text-field problem --model DIR --output INDEX
    mathgraph search --index INDEX "QUERY" [-k 5] [--format json]
    mathgraph refine --problems F.jsonl --index INDEX --llm PATH|URL|smollm2 [--drafts F] [--stages 3] [--iterations T] --output OUT.jsonl
    mathgraph routes --model DIR "TEXT" [--task kpc] [--output routes.html|routes.png]
    mathgraph samples
    mathgraph data qrc-pairs|sqr-lists|qam-pairs --input FILE --output FILE [--seed 0]
    mathgraph data qam-pairs --source gsm8k|gsmplus [--negatives hard|random] --input FILE --output FILE
    mathgraph data split --input FILE [--group-field group | --stratify-field F] [--dev 0.1 --test 0.1]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence

from mathgraph.jsonl import JsonlError, atomic_writer, read_text_records, write_jsonl
from parsers.dependency import PARSER_NAMES


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mathgraph`` console script; returns the exit status."""
    args = build_argument_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(name)s: %(message)s")
    if args.quiet:
        _quiet_libraries()
    try:
        return args.run(args)
    except (JsonlError, FileNotFoundError, IsADirectoryError, ValueError) as err:
        print(f"mathgraph: error: {err}", file=sys.stderr)
        return 2


def _quiet_libraries() -> None:
    """``-q`` for the libraries too: transformers' notices and progress bars, and the progress bars of tqdm.

    Environment variables reach the libraries a command imports later (they read them on import);
    transformers, if already imported, is told directly."""
    os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["TQDM_DISABLE"] = "1"
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mathgraph", description="Math problem understanding: parse, encode, train.")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    parse = commands.add_parser(
        "parse",
        help="parse problems into math syntax graphs",
        description="Parse one problem (TEXT or --sample) and show its graph, or a JSONL file into one graph per line.",
    )
    parse.add_argument("text", nargs="?", help="the problem text, with LaTeX formulas between $...$")
    parse.add_argument("--sample", metavar="N", help="parse bundled sample problem N (index or id; see `mathgraph samples`)")
    parse.add_argument("--format", choices=("text", "json"), default="text", help="how to print one graph (default: text)")
    parse.add_argument("--draw", metavar="PNG", help="also draw the graph to this picture (png, svg, pdf)")
    parse.add_argument("--input", metavar="FILE", help="JSONL file of problems")
    parse.add_argument("--text-field", default="problem", help="field holding the problem text (default: problem)")
    parse.add_argument("--output", metavar="FILE", help="JSONL file of graphs, one per good input line, in input order")
    parse.add_argument("--workers", type=int, default=1, help="worker processes for --input (default: 1)")
    parse.add_argument("--batch-size", type=int, default=64, help="problems per parser batch (default: 64)")
    parse.add_argument("--skip-bad", action="store_true", help="skip bad input lines, count and report them, instead of stopping")
    parse.add_argument("--parser", choices=PARSER_NAMES, default="auto", help="dependency parser back end (default: auto)")
    parse.add_argument("--bare-arithmetic", action="store_true", help="treat arithmetic in plain text (48/2 = 24) as formulas")
    parse.set_defaults(run=run_parse)

    vocab = commands.add_parser(
        "vocab",
        help="build node, relation and LaTeX-token vocabularies from corpora",
        description="Parse corpora and write node_vocab.json, relation_vocab.json and latex_tokens.json, "
        "the vocabularies a new encoder is built with (MathEncoder.build).",
    )
    vocab.add_argument("--corpus", action="append", required=True, metavar="FILE[:FIELD]",
                       help="JSONL corpus and its text field (default field: problem); repeatable")
    vocab.add_argument("--output", required=True, metavar="DIR")
    vocab.add_argument("--min-freq", type=int, default=2, help="keep node labels seen this often (default: 2)")
    vocab.add_argument("--latex-min-freq", type=int, default=5, help="add LaTeX commands seen this often as tokens (default: 5)")
    vocab.add_argument("--workers", type=int, default=1)
    vocab.add_argument("--parser", choices=PARSER_NAMES, default="auto")
    vocab.set_defaults(run=run_vocab)

    encode = commands.add_parser(
        "encode",
        help="encode problems into vectors (.npy)",
        description="Encode the problems of a JSONL file (parsing them, or taking graphs from `mathgraph parse`) "
        "into a float32 matrix saved with numpy, one row per problem in input order.",
    )
    encode.add_argument("--input", metavar="FILE", help="JSONL file of problems")
    encode.add_argument("--text-field", default="problem")
    encode.add_argument("--graphs", metavar="FILE", help="graphs of the same problems from `mathgraph parse --output`")
    encode.add_argument("--output", required=True, metavar="EMB.npy")
    encode.add_argument("--model", default="default",
                        help="model directory, 'default' (the shipped pre-trained COMUS) or 'untrained'")
    encode.add_argument("--mode", choices=("fused", "text", "graph"), default="fused")
    encode.add_argument("--batch-size", type=int, default=32)
    encode.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    encode.set_defaults(run=run_encode)

    _add_data_commands(commands)

    pretrain = commands.add_parser(
        "pretrain",
        help="continual pre-training (MLM, DTC, TGCL) of an encoder on math corpora",
        description="Pre-train COMUS (--tasks mlm,dtc,tgcl) or DAPT-BERT (--encoder bert --tasks mlm) and save an "
        "encoder directory that `mathgraph encode/train --model DIR` loads.",
    )
    pretrain.add_argument("--corpus", action="append", required=True, metavar="FILE[:FIELD]",
                          help="JSONL corpus and its text field (default field: problem); repeatable")
    pretrain.add_argument("--model", default="untrained",
                          help="encoder to start from: 'untrained' (default), 'default' (the shipped one) or a directory")
    pretrain.add_argument("--tasks", default="mlm,dtc,tgcl", help="comma-separated subset of mlm,dtc,tgcl")
    pretrain.add_argument("--encoder", choices=("comus", "bert"), default="comus")
    pretrain.add_argument("--steps", type=int, default=1000, dest="max_steps", help="optimizer steps (default: 1000)")
    pretrain.add_argument("--freeze-vocabulary", action="store_true",
                          help="keep the pre-trained word embeddings fixed; only added LaTeX tokens train")
    _add_training_flags(pretrain, learning_rate=5e-5, batch_size=32)
    pretrain.set_defaults(run=run_pretrain)

    train = commands.add_parser("train", help="fine-tune a task model (kpc, qrc, qam, sqr) or a multi-task one",
                                description="Fine-tune an encoder with a task head, or fit the TF-IDF baseline "
                                "(--encoder tfidf); the model directory keeps its label names. `train multitask "
                                "--task kpc:TRAIN[:DEV] --task qrc:...` trains one encoder with a head per task.")
    train.add_argument("task", choices=("kpc", "qrc", "qam", "sqr", "multitask", "simcse"))
    train.add_argument("--train", metavar="FILE", help="training file (single-task)")
    train.add_argument("--dev", metavar="FILE", help="evaluated after each epoch; the best epoch is kept")
    train.add_argument("--task", action="append", dest="task_specs", metavar="TASK:TRAIN[:DEV]",
                       help="multitask: a task with its training (and dev) file; repeat for each task")
    train.add_argument("--model", default="default",
                       help="encoder to start from: 'default' (the shipped pre-trained COMUS), 'untrained' or a directory")
    train.add_argument("--encoder", choices=("comus", "bert", "bert+gat", "tfidf"), default="comus")
    train.add_argument("--text-field", default="problem", help="KPC text field (default: problem)")
    train.add_argument("--label-field", default="subject", help="KPC label field (default: subject)")
    train.add_argument("--pooling", choices=("mean", "cls"), default="mean",
                       help="text half of the problem vector: mean of the token states or [CLS] (default: mean)")
    train.add_argument("--pair-mode", choices=("cross", "bi"),
                       help="QRC/QAM: read the two texts as one sequence with both graphs under one ROOT "
                            "(cross, default) or encode each alone (bi)")
    _add_training_flags(train, learning_rate=3e-5, batch_size=16)
    simcse = train.add_argument_group("simcse options (retrieval encoder: dropout views, in-batch negatives)")
    simcse.add_argument("--corpus", action="append", metavar="FILE.jsonl[:FIELD]",
                        help="texts to train on (default field: problem); repeatable")
    simcse.add_argument("--steps", type=int, dest="max_steps", help="optimizer steps (default: 1000)")
    simcse.add_argument("--mode", choices=("fused", "text", "graph"), default="fused",
                        help="which vector is trained (use the same mode for the index)")
    multitask = train.add_argument_group("multitask options")
    multitask.add_argument("--adapter", choices=("none", "moe", "cgc-lora"), default="none")
    multitask.add_argument("--moe-layers", default="last-2", help="all, last-N or indices like 4,5 (default: last-2)")
    multitask.add_argument("--moe-experts", type=int, default=4)
    multitask.add_argument("--moe-top-k", type=int, default=1)
    multitask.add_argument("--task-prompts", action="store_true", help="a learned prompt per task after [CLS]")
    multitask.add_argument("--lora-rank", type=int, default=8, help="CGC-LoRA total rank r")
    multitask.add_argument("--lora-common", type=int, default=2, help="CGC-LoRA task-common experts N_C")
    multitask.add_argument("--sampling", choices=("proportional", "uniform", "temperature"), default="proportional")
    multitask.add_argument("--temperature", type=float, default=2.0, help="for --sampling temperature")
    multitask.add_argument("--label-space", choices=("per-task", "unified"), default="per-task",
                           help="a head per task, or one classifier over the union of the KPC/QRC/QAM labels "
                                "(JiuZhang 2.0's multi-label setting)")
    multitask.add_argument("--freeze-embeddings", action="store_true",
                           help="keep the word, position and node-label embeddings as the start encoder has them "
                                "(the model then differs from it in layers, graph side and heads only)")
    train.set_defaults(run=run_train)

    evaluate = commands.add_parser("evaluate", help="evaluate a trained model on a task file (prints JSON)")
    evaluate.add_argument("task", choices=("kpc", "qrc", "qam", "sqr"))
    evaluate.add_argument("--model", required=True, metavar="DIR")
    evaluate.add_argument("--data", required=True, metavar="FILE")
    evaluate.add_argument("--text-field", help="KPC text field (default: the one the model was trained with)")
    evaluate.add_argument("--label-field", help="KPC label field (default: the one the model was trained with)")
    evaluate.add_argument("--batch-size", type=int, default=32)
    evaluate.add_argument("--threads", type=int, help="torch CPU threads (default: the cores this process may use)")
    evaluate.set_defaults(run=run_evaluate)
    _add_predict_command(commands)

    _add_search_commands(commands)

    routes = commands.add_parser("routes", help="draw which MoE expert each token goes to (HTML or PNG)",
                                 description="Route a problem through a multi-task MoE model and draw, per MoE "
                                 "layer, each token coloured by its expert (JiuZhang 2.0, Table 6).")
    routes.add_argument("text", metavar="TEXT")
    routes.add_argument("--model", required=True, metavar="DIR", help="a `train multitask --adapter moe` directory")
    routes.add_argument("--task", help="whose task prompt and routing to use (default: the model's first task)")
    routes.add_argument("--output", default="routes.html", metavar="FILE.html|FILE.png")
    routes.set_defaults(run=run_routes)

    samples = commands.add_parser("samples", help="list the bundled sample problems")
    samples.set_defaults(run=run_samples)
    return parser


def _add_training_flags(parser: argparse.ArgumentParser, learning_rate: float, batch_size: int) -> None:
    """The flags of ``tasks.trainer.TrainingArguments`` (``dest`` = its field names), shared by every training command."""
    group = parser.add_argument_group("training")
    group.add_argument("--output", required=True, metavar="DIR", dest="output_dir")
    group.add_argument("--epochs", type=int, default=3)
    group.add_argument("--batch-size", type=int, default=batch_size)
    group.add_argument("--eval-batch-size", type=int, default=32)
    group.add_argument("--lr", type=float, default=learning_rate, dest="learning_rate",
                       help=f"the pre-trained text encoder's learning rate (default: {learning_rate})")
    group.add_argument("--head-lr", type=float, default=1e-3, dest="head_learning_rate",
                       help="learning rate of the parts that start fresh: heads, GAT, memory, MoE routers, "
                            "LoRA experts (default: 1e-3)")
    group.add_argument("--warmup-ratio", type=float, default=0.05, help="linear warm-up share of the steps (default: 0.05)")
    group.add_argument("--gradient-accumulation-steps", type=int, default=1)
    group.add_argument("--seed", type=int, default=0)
    group.add_argument("--mixed-precision", choices=("no", "fp16", "bf16"), default="no", help="GPU autocast")
    group.add_argument("--resume", action="store_true", help="continue from OUTPUT/checkpoint-last")
    group.add_argument("--skip-bad", action="store_true", help="skip invalid rows (counted in a warning)")
    group.add_argument("--workers", type=int, default=1, dest="parse_workers", help="parser processes (default: 1)")
    group.add_argument("--threads", type=int, help="torch CPU threads (default: the cores this process may use)")
    group.add_argument("--loader-workers", type=int, default=0,
                       help="processes that collate batches (default: 0, in the training process)")
    group.add_argument("--graph-cache", default="default", metavar="default|none|FILE",
                       help="where parsed graphs are cached (default: ~/.cache/mathgraph/graphs.sqlite, "
                            "or $MATHGRAPH_CACHE_DIR)")
    group.add_argument("--freeze-text-layers", type=int, default=0, metavar="N",
                       help="freeze the embeddings and first N text layers and compute their outputs once per "
                            "problem (faster epochs; the frozen layers do not adapt)")
    group.add_argument("--gat-heads", type=int,
                       help="a new model's (--model untrained) GAT heads of 64: default text width / 64 (6 for "
                            "MiniLM = 384 wide); 12 gives COMUS's 768")
    group.add_argument("--split-digits", action="store_true", default=None,
                       help="a new model's (--model untrained) tokenizer cuts numbers into single digits (Qwen-style: "
                            "1,000.5 -> 1 , 0 0 0 . 5); saved in config.json, so the model keeps doing it "
                            "(train kpc|qrc|qam|sqr and pretrain)")


def _add_data_commands(commands) -> None:
    """``mathgraph data qrc-pairs | sqr-lists | qam-pairs | split``: task files (see tasks/data.py for formats)."""
    data = commands.add_parser("data", help="build and split task data (QRC pairs, SQR lists, QAM pairs)",
                               description="Build task files from GSM-Plus / GSM8K JSONL and split them without leaks.")
    actions = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    specs = {
        "qrc-pairs": ("question relation pairs from GSM-Plus variants (9 labels)", run_data_qrc),
        "sqr-lists": ("graded similar-question candidate lists from GSM-Plus variants (relevance 0..2)",
                      run_data_sqr),
        "qam-pairs": (("question/solution matching pairs from GSM8K rows (hard or random negatives) or "
                       "GSM-Plus variants (number-swap pairs)"), run_data_qam),
        "split": ("split a JSONL file into train/dev/test by group, or by row (stratified)", run_data_split),
    }
    parsers = {}
    for name, (help_text, run) in specs.items():
        parsers[name] = sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--input", required=True, metavar="FILE")
        sub.add_argument("--seed", type=int, default=0, help="random seed; same seed, same output (default: 0)")
        sub.add_argument("--skip-bad", action="store_true", help="skip bad input lines, count and report them")
        if name != "split":
            sub.add_argument("--output", required=True, metavar="FILE")
        sub.set_defaults(run=run)
    parsers["qrc-pairs"].add_argument("--irrelevant-per-seed", type=int, default=1, metavar="N",
                                      help="pairs of a seed with another seed's question (default: 1)")
    sqr = parsers["sqr-lists"]
    sqr.add_argument("--other-seeds", type=int, default=4, metavar="N",
                     help="variants of other seeds per list, the N most TF-IDF-similar to the query, relevance 0 "
                          "(default: 4; with a seed's 8 variants a list has 12 candidates)")
    qam = parsers["qam-pairs"]
    qam.add_argument("--source", choices=("gsm8k", "gsmplus"), default="gsm8k",
                     help="gsm8k: question/solution rows, one negative per question; gsmplus: GSM-Plus variants, "
                          "number-swap pairs grouped by seed (default: gsm8k)")
    qam.add_argument("--negatives", choices=("hard", "random"),
                     help="gsm8k only: the solution of the most TF-IDF-similar other question (hard, the default) "
                          "or of a random other question")
    qam.add_argument("--limit", type=int, metavar="N", help="use the first N input rows only")
    qam.add_argument("--question-field", help="gsm8k only: the question field (default: question)")
    qam.add_argument("--solution-field", help="gsm8k only: the solution field (default: answer)")
    split = parsers["split"]
    split.add_argument("--group-field", help="keep rows with the same value together (e.g. group)")
    split.add_argument("--stratify-field", help="without --group-field: stratify rows by this label")
    split.add_argument("--dev", type=float, default=0.1, help="fraction for dev (default: 0.1)")
    split.add_argument("--test", type=float, default=0.1, help="fraction for test (default: 0.1)")
    split.add_argument("--output-dir", metavar="DIR", help="where to write STEM.{train,dev,test}.jsonl (default: next to input)")


def _write_data(rows: list, output: str, summary: str, bad: list) -> None:
    from tasks.data import write_rows

    write_rows(output, rows)
    print(f"wrote {len(rows)} rows to {output} ({summary})", file=sys.stderr)
    if bad:
        print(f"skipped {len(bad)} bad lines:", file=sys.stderr)
        for error in bad[:20]:
            print(f"  {error}", file=sys.stderr)


def run_data_qrc(args: argparse.Namespace) -> int:
    from tasks.data import build_qrc_pairs, count_summary, read_seeds

    seeds, bad = read_seeds(args.input, args.skip_bad)
    pairs = build_qrc_pairs(seeds, args.seed, args.irrelevant_per_seed)
    _write_data(pairs, args.output, f"{len(seeds)} seeds; {count_summary(pairs, 'label')}", bad)
    return 0


def run_data_sqr(args: argparse.Namespace) -> int:
    """``data sqr-lists``: graded SQR lists (``tasks.data.build_sqr_lists``); prints the list shapes and grades."""
    from collections import Counter

    from tasks.data import build_sqr_lists, read_seeds

    seeds, bad = read_seeds(args.input, args.skip_bad)
    lists = build_sqr_lists(seeds, args.seed, args.other_seeds)
    shapes = Counter(f"{len(r['candidates'])} candidates, relevance 2/1/0: "
                     + "/".join(str(r["relevance"].count(grade)) for grade in (2, 1, 0)) for r in lists)
    grades = Counter(grade for r in lists for grade in r["relevance"])
    summary = (f"{len(seeds)} seeds; lists of " + ", ".join(f"{k}: {n}" for k, n in shapes.most_common())
               + "; candidates of relevance " + ", ".join(f"{g}: {grades[g]}" for g in (2, 1, 0)))
    _write_data(lists, args.output, summary, bad)
    return 0


def run_data_qam(args: argparse.Namespace) -> int:
    """``data qam-pairs``: GSM8K pairs with hard or random negatives (``tasks.data.build_qam_pairs``) or GSM-Plus
    number-swap pairs (``tasks.data.build_qam_number_swap``); prints the counts."""
    from tasks.data import (
        QAM_SWAP_FIELDS,
        build_qam_number_swap,
        build_qam_pairs,
        count_summary,
        read_rows,
    )

    if args.source == "gsmplus":
        given = [flag for flag, value in (("--negatives", args.negatives), ("--question-field", args.question_field),
                                          ("--solution-field", args.solution_field)) if value is not None]
        if given:
            raise ValueError(f"{', '.join(given)} apply to --source gsm8k only")
        rows, bad = read_rows(args.input, QAM_SWAP_FIELDS, args.skip_bad)
        rows = rows[: args.limit] if args.limit is not None else rows
        pairs = build_qam_number_swap(rows)
        summary = f"{len({p['group'] for p in pairs})} seeds, number-swap pairs; label {count_summary(pairs, 'label')}"
        _write_data(pairs, args.output, summary, bad)
        return 0
    question_field, solution_field = args.question_field or "question", args.solution_field or "answer"
    negatives = args.negatives or "hard"
    rows, bad = read_rows(args.input, (question_field, solution_field), args.skip_bad)
    rows = rows[: args.limit] if args.limit is not None else rows
    pairs = build_qam_pairs(rows, args.seed, negatives, question_field, solution_field)
    _write_data(pairs, args.output, f"{len(rows)} questions, {negatives} negatives; label "
                                    f"{count_summary(pairs, 'label')}", bad)
    return 0


def run_data_split(args: argparse.Namespace) -> int:
    from tasks.data import split_file

    paths, splits, bad = split_file(args.input, args.dev, args.test, args.seed, args.group_field,
                                    args.stratify_field, args.output_dir, args.skip_bad)
    for name, rows in splits.items():
        groups = f", {len({r[args.group_field] for r in rows})} groups" if args.group_field else ""
        print(f"{name}: {len(rows)} rows{groups} -> {paths[name]}", file=sys.stderr)
    if bad:
        print(f"skipped {len(bad)} bad lines, first: {bad[0]}", file=sys.stderr)
    return 0


def run_parse(args: argparse.Namespace) -> int:
    if args.input:
        if args.text is not None or args.sample is not None:
            raise ValueError("give either TEXT, --sample or --input, not several")
        if not args.output:
            raise ValueError("--input needs --output")
        return _parse_file(args)
    if (args.text is None) == (args.sample is None):
        raise ValueError("give the problem TEXT, --sample N, or --input FILE")
    if args.workers != 1 or args.skip_bad or args.output:
        raise ValueError("--workers, --skip-bad and --output apply to --input files only")
    from parsers.problem import parse_problem

    text = args.text if args.text is not None else _sample_text(args.sample)
    graph = parse_problem(text, parser=args.parser, bare_arithmetic=args.bare_arithmetic)
    print(graph.to_text() if args.format == "text" else json.dumps(graph.to_dict(), ensure_ascii=False, indent=1))
    if args.draw:
        graph.draw(args.draw)
        print(f"drew the graph to {args.draw}", file=sys.stderr)
    return 0


def _parse_file(args: argparse.Namespace) -> int:
    from parsers.problem import parse_problems

    records, bad = read_text_records(args.input, args.text_field, skip_bad=args.skip_bad)
    graphs = parse_problems(
        (r.text for r in records),
        parser=args.parser,
        batch_size=args.batch_size,
        n_process=args.workers,
        bare_arithmetic=args.bare_arithmetic,
        show_progress=not args.quiet,
        total=len(records),
    )
    with atomic_writer(args.output) as out:
        # the input row's id (when it has one) comes first, so graphs can be joined back to their rows
        written = write_jsonl(out, ({**({"id": r.row["id"]} if "id" in r.row else {}), **g.to_dict(), "line": r.line}
                                    for r, g in zip(records, graphs)))
    print(f"wrote {written} graphs to {args.output}", file=sys.stderr)
    _report_skipped(bad)
    return 0


def _read_corpora(specs: list[str]) -> list[str]:
    """Texts of every ``FILE[:FIELD]`` corpus (field ``problem`` by default), in order."""
    from pathlib import Path

    texts: list[str] = []
    for spec in specs:
        path, _, field = spec.rpartition(":") if ":" in spec and not Path(spec).exists() else (spec, "", "")
        records, _ = read_text_records(path, field or "problem")
        texts.extend(r.text for r in records)
        print(f"{path}: {len(records)} texts from field {field or 'problem'!r}", file=sys.stderr)
    return texts


def _training_arguments(args: argparse.Namespace, **overrides):
    from tasks.trainer import TrainingArguments

    return TrainingArguments.from_namespace(args, **overrides)


def run_pretrain(args: argparse.Namespace) -> int:
    from tasks.pretrain import check_pretraining_setup, run_pretraining

    tasks = [t.strip() for t in args.tasks.split(",")]
    check_pretraining_setup(tasks, args.encoder)  # before the slow parsing
    _refuse_gat_heads(args)
    state = run_pretraining(_read_corpora(args.corpus), _training_arguments(args), model=args.model, tasks=tasks,
                            encoder=args.encoder, split_digits=args.split_digits,
                            freeze_vocabulary=args.freeze_vocabulary)
    print(f"pre-trained {state['step']} steps; encoder saved to {args.output_dir}", file=sys.stderr)
    return 0


def _refuse_gat_heads(args: argparse.Namespace) -> None:
    if args.gat_heads is not None:
        raise ValueError("--gat-heads is for fine-tuning a new model (train kpc|qrc|qam|sqr --model untrained)")


def _refuse_split_digits(args: argparse.Namespace) -> None:
    if args.split_digits:
        raise ValueError("--split-digits sets up a new model: use it with train kpc|qrc|qam|sqr or pretrain "
                         "(--model untrained); a saved model keeps its own setting")


def run_train(args: argparse.Namespace) -> int:
    from tasks.finetune import TaskConfig, train_task

    if args.task == "multitask":
        return _run_train_multitask(args)
    if args.task == "simcse":
        return _run_train_simcse(args)
    if args.corpus:
        raise ValueError("--corpus is for `train simcse`")
    if args.task_specs or not args.train:
        raise ValueError(f"train {args.task} takes --train FILE (and no --task; that is for `train multitask`)")
    if args.encoder == "tfidf":
        from tasks.baselines import train_tfidf
        from tasks.evaluation import evaluate_directory

        config = TaskConfig(args.task, text_field=args.text_field, label_field=args.label_field)
        rows = [config.task_type.tfidf_row(e, args.text_field, args.label_field)
                for e in config.load(args.train, args.skip_bad)]
        train_tfidf(args.task, rows, text_field=args.text_field, label_field=args.label_field).save(args.output_dir)
        result = {"dev": evaluate_directory(args.task, args.output_dir, args.dev, args.text_field, args.label_field)} \
            if args.dev else {}
    else:
        config = TaskConfig(args.task, encoder=args.encoder, text_field=args.text_field, label_field=args.label_field,
                            pooling=args.pooling, pair_mode=args.pair_mode)
        result = train_task(config, args.train, _training_arguments(args), dev_path=args.dev, model=args.model,
                            gat_heads=args.gat_heads, split_digits=args.split_digits)
    print(json.dumps(result, default=str))
    print(f"saved the {args.task} model to {args.output_dir}", file=sys.stderr)
    return 0


def _run_train_multitask(args: argparse.Namespace) -> int:
    from tasks.finetune import TaskConfig
    from tasks.multitask import parse_task_spec, train_multitask

    if args.train or args.dev or not args.task_specs:
        raise ValueError("train multitask takes --task TASK:TRAIN[:DEV] (repeated), not --train/--dev")
    if args.encoder == "tfidf":
        raise ValueError("train multitask needs a neural encoder (comus, bert or bert+gat), not tfidf")
    _refuse_gat_heads(args)
    _refuse_split_digits(args)
    task_files = []
    for spec in args.task_specs:
        task, train_path, dev_path = parse_task_spec(spec)
        task_files.append((TaskConfig(task, text_field=args.text_field, label_field=args.label_field), train_path,
                           dev_path))
    result = train_multitask(
        task_files, _training_arguments(args), model=args.model, adapter=args.adapter, encoder=args.encoder,
        moe_layers=args.moe_layers, moe_experts=args.moe_experts, moe_top_k=args.moe_top_k,
        task_prompts=args.task_prompts, lora_rank=args.lora_rank, lora_common=args.lora_common,
        sampling=args.sampling, temperature=args.temperature, label_space=args.label_space,
        freeze_embeddings=args.freeze_embeddings,
    )
    print(json.dumps(result, default=str))
    print(f"saved the multi-task model to {args.output_dir}", file=sys.stderr)
    return 0


def _run_train_simcse(args: argparse.Namespace) -> int:
    from tasks.simcse import train_simcse

    if not args.corpus or args.train or args.task_specs:
        raise ValueError("train simcse takes --corpus FILE.jsonl[:FIELD] (repeatable), not --train/--task")
    _refuse_gat_heads(args)
    _refuse_split_digits(args)
    result = train_simcse(_read_corpora(args.corpus), _training_arguments(args, max_steps=args.max_steps or 1000),
                          model=args.model, mode=args.mode)
    print(json.dumps(result, default=str))
    print(f"saved the SimCSE encoder to {args.output_dir}", file=sys.stderr)
    return 0


def _add_search_commands(commands) -> None:
    """``mathgraph index build``, ``mathgraph search`` and ``mathgraph refine`` (JiuZhang 2.0, Section 3.3)."""
    index = commands.add_parser("index", help="build a similar-problem search index")
    actions = index.add_subparsers(dest="index_command", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="embed a JSONL corpus and save the index",
                               description="Embed every row's text with a model and save vectors, rows and the "
                               "model's identity; `mathgraph search` then needs no --model.")
    build.add_argument("--input", required=True, metavar="CORPUS.jsonl")
    build.add_argument("--text-field", default="problem")
    build.add_argument("--model", default="default",
                       help="mathgraph encoder directory, 'default' (the shipped pre-trained encoder), 'untrained', "
                            "or text:PATH for a text-only encoder")
    build.add_argument("--mode", choices=("fused", "text", "graph"), default="fused")
    build.add_argument("--batch-size", type=int, default=32)
    build.add_argument("--skip-bad", action="store_true", help="skip invalid rows (counted in a warning)")
    build.add_argument("--output", required=True, metavar="INDEX")
    build.set_defaults(run=run_index_build)

    search = commands.add_parser("search", help="the problems of an index most similar to a query")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--index", required=True, metavar="INDEX")
    search.add_argument("-k", type=int, default=5)
    search.add_argument("--model", help="the model that built the index (default: the one it records)")
    search.add_argument("--approximate", action="store_true", help="faiss HNSW instead of exact cosine")
    search.add_argument("--hybrid", action=argparse.BooleanOptionalAction, default=None,
                        help="fuse cosine with TF-IDF scores over the index's texts, with the shipped model's "
                             "search weight (chosen on dev; default: on only if dev said it helps)")
    search.add_argument("--format", choices=("text", "json"), default="text")
    search.set_defaults(run=run_search)

    refine = commands.add_parser("refine", help="refine solutions with retrieved exemplars and an LLM",
                                 description="JiuZhang 2.0 iterative refinement: three stages (logic, deduction, "
                                 "language and calculation), each retrieving its exemplars and asking an LLM.")
    refine.add_argument("--problems", required=True, metavar="F.jsonl")
    refine.add_argument("--index", required=True, metavar="INDEX", help="exemplars: rows with problem and solution")
    refine.add_argument("--llm", required=True, metavar="PATH|URL|smollm2",
                        help="a local Hugging Face causal LM, an OpenAI-compatible URL, or the packaged smollm2")
    refine.add_argument("--llm-model", help="model name for an OpenAI-compatible endpoint")
    refine.add_argument("--drafts", metavar="F.jsonl", help="draft solutions (default: the LLM writes them)")
    refine.add_argument("--stages", type=int, choices=(1, 2, 3), default=3)
    refine.add_argument("--iterations", type=int, default=1, help="T, per stage")
    refine.add_argument("--exemplars", type=int, default=8)
    refine.add_argument("--max-new-tokens", type=int, default=256)
    refine.add_argument("--retries", type=int, default=2)
    refine.add_argument("--solution-field", default="solution", help="solution field of the index rows")
    refine.add_argument("--limit", type=int, help="only the first N problems")
    refine.add_argument("--output", required=True, metavar="OUT.jsonl")
    refine.set_defaults(run=run_refine)


def run_index_build(args: argparse.Namespace) -> int:
    from tasks.retrieval import build_index_from_file

    index = build_index_from_file(args.input, model=args.model, text_field=args.text_field, output=args.output,
                                  mode=args.mode, batch_size=args.batch_size, skip_bad=args.skip_bad)
    print(f"indexed {len(index)} rows ({index.dimension}-dimensional) in {args.output}", file=sys.stderr)
    return 0


def run_search(args: argparse.Namespace) -> int:
    from models.shipped import release_info
    from tasks.retrieval import load_index

    index = load_index(args.index, model=args.model)
    weight = 0.0
    if args.hybrid is not False:  # the shipped model's dev-chosen search weight, and whether it is on by default
        setting = release_info()["search"]["hybrid"]
        weight = setting["weight"] if args.hybrid or setting["default"] else 0.0
    if weight > 0 and args.approximate:
        raise ValueError("--hybrid searches exactly: leave out --approximate (or pass --no-hybrid)")
    hits = index.search(args.query, k=args.k, approximate=args.approximate or None, sparse_weight=weight)
    if args.format == "json":
        print(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False))
    else:
        for rank, hit in enumerate(hits, 1):
            text = " ".join(str(hit.row[index.text_field]).split())
            print(f"{rank}. {hit.score:.4f}  [{hit.index}] {text[:200]}")
    return 0


def run_refine(args: argparse.Namespace) -> int:
    from tasks.llm import load_llm
    from tasks.refine import refine_file
    from tasks.retrieval import load_index

    summary = refine_file(args.problems, load_index(args.index), load_llm(args.llm, model=args.llm_model), args.output,
                          drafts_path=args.drafts, stages=args.stages, iterations=args.iterations,
                          exemplars=args.exemplars, max_new_tokens=args.max_new_tokens, retries=args.retries,
                          solution_field=args.solution_field, limit=args.limit)
    print(json.dumps(summary, default=str))
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def run_routes(args: argparse.Namespace) -> int:
    from mathgraph.routes import save_routes, token_routes
    from tasks.multitask import MultiTaskModel, is_multitask_directory

    if not is_multitask_directory(args.model):
        raise ValueError(f"{args.model} is not a multi-task model directory (train one with `train multitask`)")
    routes = token_routes(MultiTaskModel.from_pretrained(args.model), args.text, args.task)
    path = save_routes(routes, args.output)
    for layer, experts in zip(routes.layers, routes.experts):
        print(f"layer {layer}: " + " ".join(f"{t}/{e}" for t, e in zip(routes.tokens, experts)))
    print(f"wrote {path}", file=sys.stderr)
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from tasks.evaluation import evaluate_directory
    from tasks.trainer import configure_threads

    configure_threads(args.threads)
    metrics = evaluate_directory(args.task, args.model, args.data, args.text_field, args.label_field,
                                 batch_size=args.batch_size)
    print(json.dumps(metrics))
    return 0


class _IntermixedArgumentParser(argparse.ArgumentParser):
    """A subcommand parser whose positionals may come after its options (``predict kpc --model DIR TEXT``):
    plain argparse gives a ``nargs="*"`` positional its share, none, where it meets the first positional."""

    def parse_known_args(self, args=None, namespace=None):
        if getattr(self, "_intermixing", False):  # parse_known_intermixed_args calls back here
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def _add_predict_command(commands) -> None:
    """``mathgraph predict``: predictions of a task model, a multi-task model's head or a TF-IDF baseline."""
    predict = commands.add_parser(
        "predict", help="predict from text with a trained model (a task or multi-task model, or TF-IDF)",
        description="Predict one input given as TEXT arguments (KPC: the problem; QRC/QAM: text_a text_b; SQR: "
        "the query, then its candidates) and print it, or every row of a JSONL file (KPC: --text-field; "
        "QRC/QAM: text_a, text_b; SQR: query, candidates) as JSONL: the row's id and line, then the label "
        "and its probabilities, or the scores and ranking of the candidates.")
    predict.__class__ = _IntermixedArgumentParser  # TEXTs may follow the options
    predict.add_argument("task", choices=("kpc", "qrc", "qam", "sqr"))
    predict.add_argument("texts", nargs="*", metavar="TEXT")
    predict.add_argument("--model", metavar="DIR",
                         help="a task model, a multi-task model (TASK picks the head) or a TF-IDF baseline "
                              "(default: the shipped multi-task model)")
    predict.add_argument("--hybrid", action=argparse.BooleanOptionalAction, default=None,
                         help="fuse the shipped model with its TF-IDF baseline (weight chosen on dev; default: "
                              "on for the tasks where dev said it helps; shipped model only)")
    predict.add_argument("--input", metavar="FILE", help="JSONL file of inputs")
    predict.add_argument("--output", metavar="FILE",
                         help="JSONL predictions, one per good input line (default: stdout)")
    predict.add_argument("--text-field", default="problem", help="KPC text field of --input rows (default: problem)")
    predict.add_argument("--skip-bad", action="store_true",
                         help="skip bad input lines, count and report them, instead of stopping")
    predict.add_argument("--format", choices=("text", "json"), default="text", help="how to print one prediction")
    predict.add_argument("--top", type=int, default=5, help="probabilities printed for one TEXT input (default: 5)")
    predict.add_argument("--batch-size", type=int, default=32)
    predict.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    predict.add_argument("--threads", type=int, help="torch CPU threads (default: the cores this process may use)")
    predict.set_defaults(run=run_predict)


def run_predict(args: argparse.Namespace) -> int:
    """``mathgraph predict``: print one prediction, or write a JSONL file's (``tasks.inference.predict_file``)."""
    from models.encoder import resolve_device
    from tasks.inference import format_prediction, input_from_texts, load_predictor, predict_file
    from tasks.trainer import configure_threads

    if args.input:
        if args.texts:
            raise ValueError("give TEXT arguments or --input FILE, not both")
    elif args.output or args.skip_bad:
        raise ValueError("--output and --skip-bad apply to --input files only")
    elif not args.texts:
        raise ValueError("give the input as TEXT arguments, or --input FILE")
    item = None if args.input else input_from_texts(args.task, args.texts)  # checked before the model loads
    if args.model is not None and args.hybrid:
        raise ValueError("--hybrid fuses the shipped model with its TF-IDF baseline: leave out --model")
    configure_threads(args.threads)
    if args.model is None:
        from tasks.release import shipped_predictor

        predictor = shipped_predictor(args.task, hybrid=args.hybrid)
    else:
        predictor = load_predictor(args.task, args.model, device=resolve_device(args.device))
    if item is not None:
        [result] = predictor.predict([item], batch_size=args.batch_size)
        print(format_prediction(item, result, args.top) if args.format == "text" else json.dumps(result))
        return 0
    written, bad = predict_file(predictor, args.task, args.input, args.output, text_field=args.text_field,
                                batch_size=args.batch_size, skip_bad=args.skip_bad)
    print(f"wrote {written} predictions to {args.output or 'stdout'}", file=sys.stderr)
    _report_skipped(bad)
    return 0


def _report_skipped(bad: list) -> None:
    """Tell stderr how many input lines ``--skip-bad`` left out, and the first 20 of them."""
    if bad:
        print(f"skipped {len(bad)} bad lines:", file=sys.stderr)
        for error in bad[:20]:
            print(f"  {error}", file=sys.stderr)
        if len(bad) > 20:
            print(f"  ... and {len(bad) - 20} more", file=sys.stderr)


def run_vocab(args: argparse.Namespace) -> int:
    from pathlib import Path

    from mathgraph.graph import GraphVocabulary
    from parsers.problem import parse_problems
    from models.text_encoder import latex_commands

    texts = _read_corpora(args.corpus)
    graphs = parse_problems(texts, parser=args.parser, n_process=args.workers, show_progress=not args.quiet)
    vocab = GraphVocabulary.build(graphs, min_freq=args.min_freq)
    latex = latex_commands(texts, min_freq=args.latex_min_freq)
    output = Path(args.output)
    vocab.save(output)
    with open(output / "latex_tokens.json", "w", encoding="utf-8") as f:
        json.dump(latex, f, indent=0)
    print(f"wrote {len(vocab.labels)} node labels, {len(vocab.relations)} relations and {len(latex)} LaTeX tokens "
          f"to {output}", file=sys.stderr)
    return 0


def run_encode(args: argparse.Namespace) -> int:
    import numpy as np

    from models.encoder import MathEncoder

    problems = _problems_to_encode(args)
    encoder = MathEncoder.from_pretrained(args.model, device=args.device)
    vectors = encoder.encode(problems, batch_size=args.batch_size, mode=args.mode, device=args.device,
                             show_progress=not args.quiet)
    with open(args.output, "wb") as f:
        np.save(f, vectors)
    print(f"wrote {vectors.shape[0]} x {vectors.shape[1]} float32 vectors to {args.output}", file=sys.stderr)
    return 0


def _problems_to_encode(args: argparse.Namespace) -> list:
    """Texts from --input, graphs from --graphs, or both, checked to be the same problems line by line."""
    from mathgraph.graph import GraphFormatError, MathSyntaxGraph

    if not args.input and not args.graphs:
        raise ValueError("give --input FILE, --graphs FILE, or both")
    graphs = []
    if args.graphs:
        with open(args.graphs, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if line.strip():
                    try:
                        graphs.append(MathSyntaxGraph.from_json(line))
                    except GraphFormatError as err:
                        raise JsonlError(args.graphs, number, str(err)) from None
    if not args.input:
        return graphs
    records, _ = read_text_records(args.input, args.text_field)
    if not args.graphs:
        return [r.text for r in records]
    if len(graphs) != len(records):
        raise ValueError(f"{args.graphs} has {len(graphs)} graphs but {args.input} has {len(records)} problems")
    for record, graph in zip(records, graphs):
        if graph.text != record.text:
            raise ValueError(f"{args.input}:{record.line}: its graph in {args.graphs} is of another text")
    return graphs


def _sample_text(key: str) -> str:
    from mathgraph.samples import sample_problems

    samples = sample_problems()
    for i, row in enumerate(samples):
        if key in (str(i), row["id"]):
            return row["problem"]
    raise ValueError(f"no sample {key!r}; choose 0..{len(samples) - 1} or an id from `mathgraph samples`")


def run_samples(args: argparse.Namespace) -> int:
    from mathgraph.samples import SAMPLE_PATH, sample_problems

    for i, row in enumerate(sample_problems()):
        print(f"{i}  {row['id']:<10} {' '.join(row['problem'].split())[:100]}")
    print(f"(file: {SAMPLE_PATH})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
