"""``mathgraph refine``: JiuZhang 2.0's iterative refinement of solutions (Section 3.3)."""

from __future__ import annotations

import argparse
import json

from mathgraph.cli.common import check_index_argument, check_input_file
from mathgraph.errors import UserError
from mathgraph.quiet import report
from mathgraph.samples import input_path


def register(commands) -> None:
    """Add ``refine`` to the ``mathgraph`` commands."""
    refine = commands.add_parser(
        "refine",
        help="refine solutions with retrieved exemplars and an LLM",
        description="JiuZhang 2.0 iterative refinement: three stages (logic, deduction, "
        "language and calculation), each retrieving its exemplars and asking an LLM.",
    )
    refine.add_argument("--problems", required=True, type=input_path, metavar="F.jsonl")
    refine.add_argument("--index", required=True, metavar="INDEX", help="exemplars: rows with problem and solution")
    refine.add_argument(
        "--llm",
        required=True,
        metavar="PATH|URL|smollm2",
        help="a local Hugging Face causal LM, an OpenAI-compatible URL, or the packaged smollm2",
    )
    refine.add_argument("--llm-model", help="model name for an OpenAI-compatible endpoint")
    refine.add_argument(
        "--drafts", type=input_path, metavar="F.jsonl", help="draft solutions (default: the LLM writes them)"
    )
    refine.add_argument("--stages", type=int, choices=(1, 2, 3), default=3)
    refine.add_argument("--iterations", type=int, default=1, help="T, per stage")
    refine.add_argument("--exemplars", type=int, default=8)
    refine.add_argument("--max-new-tokens", type=int, default=256)
    refine.add_argument("--retries", type=int, default=2)
    refine.add_argument("--solution-field", default="solution", help="solution field of the index rows")
    refine.add_argument("--limit", type=int, help="only the first N problems")
    refine.add_argument("--output", required=True, metavar="OUT.jsonl")
    refine.set_defaults(run=run_refine)


def run_refine(args: argparse.Namespace) -> int:
    """``refine``: solutions refined with retrieved exemplars and an LLM (``tasks.refine.refinement``)."""
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be >= 1, got {args.limit}")
    check_input_file(args.problems, "--problems")  # before the LLM's and the index's seconds of loading
    check_input_file(args.drafts, "--drafts")
    check_index_argument(args.index)
    from mathgraph.tasks.refine.llm import load_llm
    from mathgraph.tasks.refine.refinement import refine_file
    from mathgraph.tasks.search.index import SearchIndex

    summary = refine_file(
        args.problems,
        SearchIndex.from_pretrained(args.index),
        load_llm(args.llm, model=args.llm_model),
        args.output,
        drafts_path=args.drafts,
        stages=args.stages,
        iterations=args.iterations,
        exemplars=args.exemplars,
        max_new_tokens=args.max_new_tokens,
        retries=args.retries,
        solution_field=args.solution_field,
        limit=args.limit,
    )
    print(json.dumps(summary, default=str))
    report(f"wrote {args.output}")
    return 0
