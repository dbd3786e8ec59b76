"""Figures of similar-problem search on the SQR lists, and LLM refinement of GSM8K solutions.

    python benchmarks/search_and_refine.py --work results/ --search [--simcse-steps 100 | --simcse-model DIR]
                                           [--lists N] [--split test] [--mode joint]
    python benchmarks/search_and_refine.py --work results/ --refine [--problems 50] [--llm smollm2]
                                           [--index-model DIR] [--stages 3] [--iterations 1] [--exemplars 2]
                                           [--max-new-tokens 192] [--index-limit N] [--threads 1]
    python benchmarks/search_and_refine.py --work results/ --smoke [--search] [--refine]

``--search`` ranks the candidates of every SQR list (``WORK/data/sqr.test.jsonl``,
written by ``benchmarks/results.py``; built the same way when it is missing) by
cosine similarity to the list's query, with

- TF-IDF (``tasks.training.tfidf.train_tfidf("sqr", ...)``: the vectorizer is fitted on
  every query and candidate text of the *training* lists),
- the untrained ``"default"`` encoder (``MathEncoder.encode``, ``--mode`` vectors,
  ``joint`` by default),
- a SimCSE encoder (``tasks.training.simcse.train_simcse``) trained from the default model
  on the distinct texts of the training lists (GSM-Plus seeds and variants of the
  training split only) for ``--simcse-steps`` steps; ``--simcse-model DIR`` uses
  an encoder trained before instead. A trained one is kept in
  ``WORK/simcse/steps-N-seed-S`` and reused by later runs,
- and, as a floor, random order (the mean of 100 seeded shuffles).

It reports HR@1/3/5 and NDCG@3/5 (``tasks.metrics.ranking_metrics``; ties count
against the ranker) and writes ``WORK/search_results.json``.

``--refine`` takes the first ``--problems`` GSM8K problems of the *test* part of
the GSM8K split of ``benchmarks/results.py`` (``split_by_group`` by question,
seed 0, 80/10/10), an index over the questions of the *train* part (their GSM8K
``answer`` is the exemplar solution; encoder ``--index-model``, default the
untrained default model; kept in ``WORK/refine_index/`` and reused), lets the LLM
(``--llm``, default the packaged SmolLM2-135M) write each draft, and refines it
with ``tasks.refine.refinement.refine_file``. Answers are checked against GSM8K's ``#### N``
by ``tasks.answers``. Per-problem records (every stage's query, exemplars, prompt
and output) go to ``WORK/refine_records.jsonl``, the summary to
``WORK/refine_summary.json``.

On a busy 2-core CPU, ``--threads 1`` is much faster than two threads for the LLM.

``--smoke`` (both parts unless one is named): the smoke data (``benchmarks/smoke.py``; task files
as ``benchmarks/results.py --smoke`` builds them), SimCSE for 2 steps of 4 texts from a tiny new
encoder (``smoke.tiny_encoder``) instead of the shipped one, and one problem
refined in one stage with one exemplar from an index of 8, 16 new tokens, by a tiny random language
model (``smoke.tiny_llm``; ``--llm smollm2`` for the packaged one, some 20 s more to load), all in
``WORK/smoke``: seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mathgraph.jsonl import read_rows, write_jsonl
from mathgraph.tasks.data import load_sqr, split_by_group
from mathgraph.tasks.metrics import ranking_metrics
from mathgraph.tasks.search.index import l2_normalize

from results import DATA, build_task_files
from smoke import SMOKE_DATA, smoke_work, tiny_encoder, tiny_llm

METRICS = ("hr@1", "hr@3", "hr@5", "ndcg@3", "ndcg@5")


def main() -> None:
    args = _arguments()
    if args.smoke:
        args.search, args.refine = (args.search, args.refine) if args.search or args.refine else (True, True)
        args.simcse_steps, args.simcse_batch_size = min(args.simcse_steps, 2), 4
        args.problems, args.index_limit, args.stages, args.exemplars = 1, 8, 1, 1
        args.max_new_tokens, args.retries = 16, 0
    if not (args.search or args.refine):
        raise SystemExit("give --search, --refine or both")
    if args.threads:
        torch.set_num_threads(args.threads)
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.llm is None:
        args.llm = tiny_llm(work) if args.smoke else "smollm2"
    if args.search:
        search_benchmark(work, args)
    if args.refine:
        refine_benchmark(work, args)


# --------------------------------------------------------------------------- search
def search_benchmark(work: Path, args: argparse.Namespace) -> dict:
    from mathgraph.models.encoder import MathEncoder
    from mathgraph.tasks.training.tfidf import train_tfidf

    data = work / "data"
    paths = {split: data / f"sqr.{split}.jsonl" for split in ("train", args.split)}
    if not all(path.exists() for path in paths.values()):
        print(f"{paths[args.split]} is missing: building the task files as benchmarks/results.py does", flush=True)
        build_task_files(data, args.seed, smoke=args.smoke)
    train = load_sqr(paths["train"])
    lists = load_sqr(paths[args.split])
    if args.lists:
        lists = lists[: args.lists]
    relevant = [lst.relevance for lst in lists]  # graded 0..2 per candidate
    print(
        f"{len(lists)} {args.split} lists ({sum(len(item.candidates) for item in lists)} candidates), "
        f"{len(train)} training lists",
        flush=True,
    )
    results: dict = {}

    rng = random.Random(args.seed)
    shuffles = [
        ranking_metrics([[rng.random() for _ in lst.candidates] for lst in lists], relevant) for _ in range(100)
    ]
    results["random order"] = {key: float(np.mean([m[key] for m in shuffles])) for key in METRICS}
    results["random order"].update(n=len(lists), seconds=0.0)

    started = time.perf_counter()
    tfidf = train_tfidf("sqr", [_sqr_row(lst) for lst in train])
    scores = [tfidf.score(lst.query, list(lst.candidates)) for lst in lists]
    results["TF-IDF (fitted on the training lists)"] = _timed(ranking_metrics(scores, relevant), started)

    texts = list(dict.fromkeys(t for lst in lists for t in (lst.query, *lst.candidates)))
    default = MathEncoder.from_pretrained("shipped")
    started = time.perf_counter()
    graphs = dict(zip(texts, default.parse(texts, show_progress=True)))
    parse_seconds = time.perf_counter() - started
    print(f"parsed {len(texts)} distinct texts in {parse_seconds:.0f} s", flush=True)
    started = time.perf_counter()
    scores = _encoder_scores(default, lists, graphs, args.mode, args.batch_size)
    results[f"shipped encoder ({args.mode})"] = _timed(ranking_metrics(scores, relevant), started)

    simcse_info = None
    if args.simcse_model or args.simcse_steps > 0:
        if args.simcse_model:
            directory = Path(args.simcse_model)
            info_path = directory / "simcse_run.json"  # written when this script trained it
            simcse_info = {
                **(json.loads(info_path.read_text()) if info_path.exists() else {}),
                "model": args.simcse_model,
                "trained_here": False,
            }
        else:
            directory = work / "simcse" / f"steps-{args.simcse_steps}-seed-{args.seed}"
            start = tiny_encoder(work) if args.smoke else "shipped"
            simcse_info = train_or_reuse_simcse(directory, train, args, start=start)
        encoder = MathEncoder.from_pretrained(directory)
        reuse = encoder.parser == default.parser
        started = time.perf_counter()
        scores = _encoder_scores(encoder, lists, graphs if reuse else None, args.mode, args.batch_size)
        name = f"SimCSE encoder ({simcse_info.get('steps', '?')} steps, {args.mode})"
        results[name] = _timed(ranking_metrics(scores, relevant), started)

    summary = {
        "split": args.split,
        "lists": len(lists),
        "mode": args.mode,
        "parse_seconds": round(parse_seconds, 1),
        "simcse": simcse_info,
        "machine": _machine(),
        "results": results,
    }
    (work / "search_results.json").write_text(json.dumps(summary, indent=1))
    _print_search_table(summary)
    return summary


def train_or_reuse_simcse(directory: Path, train: list, args: argparse.Namespace, start: str = "shipped") -> dict:
    """Train a SimCSE encoder from ``start`` (a model name or directory) on the training lists' texts into
    ``directory``, unless one is already there."""
    from mathgraph.tasks.training.simcse import train_simcse
    from mathgraph.tasks.training.trainer import TrainingArguments

    info_path = directory / "simcse_run.json"
    if (directory / "config.json").exists() and info_path.exists():
        info = json.loads(info_path.read_text())
        print(f"reusing the SimCSE encoder in {directory} ({info['steps']} steps)", flush=True)
        return {**info, "trained_here": False}
    texts = list(dict.fromkeys(t for lst in train for t in (lst.query, *lst.candidates)))
    print(
        f"SimCSE: {args.simcse_steps} steps, batch {args.simcse_batch_size}, on {len(texts)} training texts", flush=True
    )
    started = time.perf_counter()
    # threads: the training loop sets torch's threads; keep --threads (or torch's default) for the encoding after it.
    training = TrainingArguments(
        output_dir=str(directory),
        max_steps=args.simcse_steps,
        batch_size=args.simcse_batch_size,
        learning_rate=args.simcse_lr,
        seed=args.seed,
        threads=torch.get_num_threads(),
    )
    result = train_simcse(texts, training, model=start, mode=args.mode)
    history = result["history"]
    info = {
        "model": str(directory),
        "steps": result["steps"],
        "texts": len(texts),
        "batch_size": args.simcse_batch_size,
        "learning_rate": args.simcse_lr,
        "mode": args.mode,
        "seconds": round(time.perf_counter() - started, 1),
        "last_loss": history[-1].get("loss") if history else None,
    }
    info_path.write_text(json.dumps(info, indent=1))
    return {**info, "trained_here": True}


def _encoder_scores(encoder, lists: list, graphs: dict | None, mode: str, batch_size: int) -> list[np.ndarray]:
    """Cosine of every candidate with its list's query, with ``encoder``'s ``mode`` vectors."""
    texts = list(dict.fromkeys(t for lst in lists for t in (lst.query, *lst.candidates)))
    problems = [graphs[t] for t in texts] if graphs is not None else texts
    vectors = l2_normalize(encoder.encode(problems, batch_size=batch_size, mode=mode))
    row = {text: i for i, text in enumerate(texts)}
    return [vectors[[row[c] for c in lst.candidates]] @ vectors[row[lst.query]] for lst in lists]


def _sqr_row(lst) -> dict:
    return {"id": lst.id, "query": lst.query, "candidates": list(lst.candidates), "relevance": list(lst.relevance)}


def _timed(metrics: dict, started: float) -> dict:
    return {**metrics, "seconds": round(time.perf_counter() - started, 1)}


def _print_search_table(summary: dict) -> None:
    print(f"\n{_machine_line(summary['machine'])}")
    simcse = summary["simcse"]
    if simcse:
        print(
            f"SimCSE: {simcse.get('steps')} steps, batch {simcse.get('batch_size')}, lr {simcse.get('learning_rate')}, "
            f"{simcse.get('texts')} training texts, {simcse.get('seconds')} s to train "
            f"({'this run' if simcse.get('trained_here') else 'trained before'}; {simcse.get('model')})"
        )
    print(
        f"SQR {summary['split']} lists: {summary['lists']}; candidates ranked by cosine with the query; "
        "ties count against the ranker\n"
    )
    print("| ranker | HR@1 | HR@3 | HR@5 | NDCG@3 | NDCG@5 | lists | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, m in summary["results"].items():
        print(f"| {name} | " + " | ".join(f"{m[k]:.4f}" for k in METRICS) + f" | {m['n']} | {m['seconds']} |")


# --------------------------------------------------------------------------- refinement
def refine_benchmark(work: Path, args: argparse.Namespace) -> dict:
    from mathgraph.tasks.refine.llm import load_llm
    from mathgraph.tasks.refine.refinement import refine_file

    rows = _read_jsonl((SMOKE_DATA if args.smoke else DATA) / "gsm8k" / "train.jsonl")
    parts = split_by_group(rows, "question", seed=args.seed)
    problems = [
        {"id": f"gsm8k-test-{i}", "question": row["question"], "answer": row["answer"]}
        for i, row in enumerate(parts["test"][: args.problems])
    ]
    corpus = [
        {"id": f"gsm8k-train-{i}", "question": row["question"], "answer": row["answer"]}
        for i, row in enumerate(parts["train"])
    ]
    if args.index_limit:
        corpus = corpus[: args.index_limit]
    problems_path = work / "refine_problems.jsonl"
    with open(problems_path, "w", encoding="utf-8") as f:
        write_jsonl(f, problems)
    print(
        f"{len(problems)} GSM8K test-part problems; exemplar index over {len(corpus)} train-part problems", flush=True
    )

    index, index_seconds = gsm8k_index(work, corpus, args)
    started = time.perf_counter()
    llm = load_llm(args.llm, model=args.llm_model)
    load_seconds = time.perf_counter() - started
    print(f"LLM {getattr(llm, 'name', args.llm)} loaded in {load_seconds:.0f} s", flush=True)

    records_path = work / "refine_records.jsonl"
    summary = refine_file(
        problems_path,
        index,
        llm,
        records_path,
        stages=args.stages,
        iterations=args.iterations,
        exemplars=args.exemplars,
        max_new_tokens=args.max_new_tokens,
        retries=args.retries,
        problem_field="question",
        reference_field="answer",
        solution_field="answer",
        index_problem_field="question",
    )
    records = _read_jsonl(records_path)
    steps = [step for record in records for step in record.get("steps", [])]
    judged = [r for r in records if r.get("correct") is not None]
    summary.update(
        llm=getattr(llm, "name", args.llm),
        llm_load_seconds=round(load_seconds, 1),
        index={"rows": len(index), "model": args.index_model, "seconds": index_seconds},
        steps=len(steps),
        failed_steps=sum(s.get("status") == "failed" for s in steps),
        skipped_steps=sum(s.get("status") == "skipped" for s in steps),
        failed_drafts=sum(r.get("draft", {}).get("status") == "failed" for r in records),
        wrong_to_right=sum(bool(r["correct"]) and not r["draft_correct"] for r in judged),
        right_to_wrong=sum(bool(r["draft_correct"]) and not r["correct"] for r in judged),
        draft_correct=sum(bool(r["draft_correct"]) for r in judged),
        final_correct=sum(bool(r["correct"]) for r in judged),
        machine=_machine(),
    )
    (work / "refine_summary.json").write_text(json.dumps(summary, indent=1))
    _print_refine_table(summary)
    return summary


def gsm8k_index(work: Path, corpus: list[dict], args: argparse.Namespace):
    """The exemplar index over ``corpus`` (question -> answer), built once per model and size, then reused."""
    from mathgraph.tasks.search.embedders import load_embedder
    from mathgraph.tasks.search.index import IndexFormatError, IndexMismatchError, SearchIndex

    tag = "shipped" if args.index_model in ("shipped", "default") else Path(args.index_model).resolve().name
    directory = work / "refine_index" / f"{tag}-{len(corpus)}"
    if (directory / "manifest.json").exists():
        try:
            index = SearchIndex.from_pretrained(directory, encoder=args.index_model)
            if len(index) == len(corpus):
                print(f"reusing the exemplar index in {directory}", flush=True)
                return index, 0.0
        except (IndexFormatError, IndexMismatchError) as err:
            print(f"rebuilding {directory}: {err}", flush=True)
    started = time.perf_counter()
    index = SearchIndex.build(
        corpus, load_embedder(args.index_model), text_field="question", batch_size=args.batch_size
    )
    index.save_pretrained(directory)
    seconds = round(time.perf_counter() - started, 1)
    print(f"indexed {len(index)} problems in {seconds:.0f} s ({directory})", flush=True)
    return index, seconds


def _print_refine_table(s: dict) -> None:
    config = s["config"]
    print(f"\n{_machine_line(s['machine'])}")
    print(
        f"LLM {s['llm']} (greedy; loaded in {s['llm_load_seconds']} s); stages {config['stages']}, "
        f"T = {config['iterations']}, {config['exemplars']} exemplars, max {config['max_new_tokens']} new tokens "
        f"(drafts too), {config['retries']} retries; exemplar index: {s['index']['rows']} GSM8K train-part "
        f"problems, encoder {s['index']['model']}; drafts written by the LLM\n"
    )
    n = s["with_reference"]
    print(
        "| problems | draft accuracy | final accuracy | wrong -> right | right -> wrong | failed steps | "
        "failed drafts | seconds / problem |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    draft, final = _with_interval(s["draft_correct"], n), _with_interval(s["final_correct"], n)
    seconds = "n/a" if s["seconds_per_problem"] is None else f"{s['seconds_per_problem']:.1f}"
    print(
        f"| {s['problems']} | {draft} | {final} | {s['wrong_to_right']} | {s['right_to_wrong']} | "
        f"{s['failed_steps']} of {s['steps']} | {s['failed_drafts']} | {seconds} |"
    )
    print(
        f"\nstatuses: ok {s['ok']}, partial {s['partial']}, failed {s['failed']}, error {s['errors']}; "
        f"records in {s['output']}"
    )


def _with_interval(correct: int, total: int) -> str:
    """``"0.060 (3/50) [0.02, 0.16]"``: accuracy with its Wilson 95% interval."""
    from scipy.stats import binomtest

    if not total:
        return "n/a"
    interval = binomtest(correct, total).proportion_ci(confidence_level=0.95, method="wilson")
    return f"{correct / total:.3f} ({correct}/{total}) [{interval.low:.2f}, {interval.high:.2f}]"


# --------------------------------------------------------------------------- common
def _read_jsonl(path: Path) -> list[dict]:
    return [row for _, row in read_rows(path)[0]]


def _machine() -> dict:
    return {
        "processor": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.is_available(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }


def _machine_line(machine: dict) -> str:
    gpu = f", GPU {machine['gpu']}" if machine.get("gpu") else ""
    return (
        f"machine: {machine['processor']}, {machine['cores']} cores, torch {machine['torch']} "
        f"({machine['torch_threads']} threads), cuda {machine['cuda']}{gpu}"
    )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="results", help="work directory of benchmarks/results.py")
    parser.add_argument("--search", action="store_true", help="search quality on the SQR lists")
    parser.add_argument("--refine", action="store_true", help="refinement of GSM8K drafts")
    parser.add_argument("--seed", type=int, default=0, help="data split, SimCSE and shuffle seed")
    parser.add_argument("--threads", type=int, help="torch threads (1 is fastest on a busy 2-core CPU)")
    parser.add_argument("--batch-size", type=int, default=32, help="encoding batch size")
    parser.add_argument("--smoke", action="store_true", help="the smoke data, tiny sizes: seconds (WORK/smoke)")
    search = parser.add_argument_group("--search")
    search.add_argument("--split", choices=("dev", "test"), default="test", help="which SQR lists to rank")
    search.add_argument("--lists", type=int, help="only the first N lists (quick checks)")
    search.add_argument("--mode", choices=("joint", "text", "graph"), default="joint", help="encoder vectors")
    search.add_argument("--simcse-steps", type=int, default=100, help="SimCSE training steps (0: no SimCSE row)")
    search.add_argument("--simcse-model", help="a SimCSE encoder directory to use instead of training one")
    search.add_argument("--simcse-batch-size", type=int, default=32)
    search.add_argument("--simcse-lr", type=float, default=3e-5)
    refine = parser.add_argument_group("--refine")
    refine.add_argument("--problems", type=int, default=50, help="first N problems of the GSM8K test part")
    refine.add_argument("--index-model", default="shipped", help="encoder of the exemplar index")
    refine.add_argument("--index-limit", type=int, help="index only the first N train-part problems (quick checks)")
    refine.add_argument(
        "--llm",
        help="smollm2 (the default; --smoke: a tiny random model), a model directory or an OpenAI-compatible URL",
    )
    refine.add_argument("--llm-model", help="model name on an OpenAI-compatible server")
    refine.add_argument("--stages", type=int, choices=(1, 2, 3), default=3)
    refine.add_argument("--iterations", type=int, default=1, help="T, per stage")
    refine.add_argument("--exemplars", type=int, default=2, help="B, per step")
    refine.add_argument("--max-new-tokens", type=int, default=192)
    refine.add_argument("--retries", type=int, default=2)
    return parser.parse_args()


if __name__ == "__main__":
    main()
