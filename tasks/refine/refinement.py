"""Iterative refinement of a draft solution by an LLM with retrieved exemplars (JiuZhang 2.0, Section 3.3, Algorithm 2).

Three stages, coarse to fine, each run ``T`` times (``iterations``):

====== ===================== ======================= ==========================================
stage  perspective           query for retrieval     instruction (Table 9, quoted exactly)
====== ===================== ======================= ==========================================
1      overall logic         the problem q           "According to similar problems above, choose ..."
2      deduction process     q + the current draft   "... correct the reasoning errors and logical errors ..."
3      language/calculation  the current draft       "... correct the calculation errors and transcription errors ..."
====== ===================== ======================= ==========================================

Each step retrieves ``B`` exemplars (problem, solution) from a ``SearchIndex``, leaving
out the problem itself, builds the prompt ``[q; a_hat; exemplars; instruction]``
(Eq. 8) and asks the LLM; its reply becomes the draft of the next step. A failed
LLM call (a ``RuntimeError`` such as ``LLMError``, an ``OSError``, or an empty reply)
is retried ``retries`` times, then the step is recorded as failed and the draft is
kept. Every step's query, exemplars, prompt, output, status and time go into the
record, so a user can see what changed.

    record = refine_solution(problem, draft, index, llm, reference="72")
    summary = refine_file("problems.jsonl", index, llm, "refined.jsonl", drafts_path="drafts.jsonl")
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from os import PathLike
from pathlib import Path

from mathgraph.jsonl import read_rows, write_jsonl
from mathgraph.quiet import progress_bar
from mathgraph.tasks.answers import answers_equal, extract_answer, reference_answer


@dataclass(frozen=True)
class Stage:
    """One refinement stage of Table 9: what the retrieval query is made of and what the LLM is told."""

    number: int
    name: str
    query: str  # "problem", "problem+draft" or "draft"
    instruction: str
    instruction_zh: str


# Table 9 of JiuZhang 2.0, quoted from the paper (English, and the original Chinese).
STAGES = (
    Stage(
        1,
        "overall logic",
        "problem",
        "According to similar problems above, choose the correct idea to solve this problem and fix mistakes in "
        "the reference solution.",
        "根据上文中相似的题目, 选取正确的解题思路, 修改本题参考解答中的错误。",
    ),
    Stage(
        2,
        "deduction process",
        "problem+draft",
        "According to similar problems above, correct the reasoning errors and logical errors in the reference "
        "solution, determine the reasoning logic of this question and get the correct solution.",
        "根据上文中相似的题目, 修改本题的参考解答中的推理错误和逻辑错误, 确定本题的答题逻辑, 得到正确解答。",
    ),
    Stage(
        3,
        "language and calculation",
        "draft",
        "According to similar problems above, correct the calculation errors and transcription errors in the "
        "reference solution, determine the final answer and get the correct solution.",
        "根据上文中相似的题目, 修改本题的参考解答中的计算错误和抄写错误, 确定本题的正确答案, 得到正确解答。",
    ),
)

SOLVE_TEMPLATE = (
    'Solve the following math problem step by step. End with "The answer is X".\n\nProblem: {problem}\n\nSolution:'
)
PROBLEM_FIELDS = ("problem", "question")
ID_FIELDS = ("id", "unique_id")
REFERENCE_FIELDS = ("answer", "solution")
DRAFT_FIELDS = ("draft", "final_solution", "solution", "output")


@dataclass(frozen=True)
class RefineConfig:
    """Settings of a refinement run. ``stages``: how many of the three stages (1-3), or which ones (``(1, 3)``);
    ``iterations``: T; ``exemplars``: B (Table 7 uses 8 and T = 1); ``retries``: extra attempts per LLM call;
    ``problem_field``/``solution_field``: the fields of the index rows that exemplars are made of."""

    stages: int | tuple[int, ...] = 3
    iterations: int = 1
    exemplars: int = 8
    max_new_tokens: int = 256
    draft_max_new_tokens: int | None = None  # None: max_new_tokens
    retries: int = 2
    retry_wait: float = 1.0
    problem_field: str = "problem"
    solution_field: str = "solution"
    language: str = "en"  # "zh": the Chinese instructions of Table 9

    def stage_list(self) -> list[Stage]:
        """The stages to run, in order; raises ValueError for bad settings."""
        if isinstance(self.stages, int) and not isinstance(self.stages, bool):
            if not 1 <= self.stages <= 3:
                raise ValueError(f"stages must be 1, 2 or 3 (how many stages to run), got {self.stages}")
            numbers = list(range(1, self.stages + 1))
        else:
            numbers = list(self.stages)
            if not numbers or any(n not in (1, 2, 3) for n in numbers) or numbers != sorted(set(numbers)):
                raise ValueError(f"stages must be increasing stage numbers from 1-3, got {self.stages!r}")
        for name, value, low in (
            ("iterations", self.iterations, 1),
            ("exemplars", self.exemplars, 0),
            ("max_new_tokens", self.max_new_tokens, 1),
            ("retries", self.retries, 0),
        ):
            if not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if self.language not in ("en", "zh"):
            raise ValueError(f"language must be 'en' or 'zh', got {self.language!r}")
        return [STAGES[n - 1] for n in numbers]


@dataclass
class CallResult:
    """The outcome of one LLM call with its retries."""

    status: str  # "ok" or "failed"
    output: str | None
    attempts: int
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


# --------------------------------------------------------------------------- pieces
def stage_query(stage: Stage, problem: str, draft: str) -> str:
    """The retrieval query of a stage: the problem, the problem and the draft, or the draft."""
    return {"problem": problem, "problem+draft": f"{problem}\n{draft}", "draft": draft}[stage.query]


def build_prompt(
    problem: str,
    draft: str,
    exemplars: Sequence[Mapping],
    instruction: str,
    problem_field: str = "problem",
    solution_field: str = "solution",
) -> str:
    """Eq. 8: ``[q; a_hat; C; I]``: the problem, the draft ("reference solution"), the exemplars, the instruction."""
    parts = [f"Problem: {problem}", f"Reference solution: {draft}"]
    if exemplars:
        shown = [
            f"Similar problem {i}: {row[problem_field]}\nSolution {i}: {row[solution_field]}"
            for i, row in enumerate(exemplars, start=1)
        ]
        parts.append("Similar problems:\n\n" + "\n\n".join(shown))
    parts.append(instruction)
    parts.append("Corrected solution:")  # where the reply starts; chat models ignore it, base models need it
    return "\n\n".join(parts)


def call_llm(llm, prompt: str, max_new_tokens: int, retries: int = 2, retry_wait: float = 1.0) -> CallResult:
    """``llm.generate`` with up to ``retries`` more attempts after a failure of the model or an empty reply;
    never raises for a failing model. A failure is a ``RuntimeError`` (``LLMError``, which every back end of
    ``tasks.refine.llm`` raises, or a model that crashes or runs out of memory) or an ``OSError`` (a server
    that is away or slow); any other exception is a bug and raises, as KeyboardInterrupt stops the run."""
    start, errors = time.perf_counter(), []
    for attempt in range(1, retries + 2):
        try:
            output = llm.generate(prompt, max_new_tokens=max_new_tokens)
        except (RuntimeError, OSError) as err:
            errors.append(f"{type(err).__name__}: {err}")
        else:
            if isinstance(output, str) and output.strip():
                return CallResult("ok", output.strip(), attempt, errors, time.perf_counter() - start)
            errors.append(f"the model returned an empty reply ({output!r})")
        if attempt <= retries and retry_wait > 0:
            time.sleep(retry_wait * attempt)  # servers that are overloaded recover with a little patience
    return CallResult("failed", None, retries + 1, errors, time.perf_counter() - start)


def retrieve_exemplars(
    index, query: str, count: int, problem: str, problem_id: object = None, problem_field: str = "problem"
) -> list:
    """The ``count`` best hits for ``query``, leaving out the problem itself (same text or same id): the
    paper uses only the training problems' solutions, never the target's."""
    if count == 0:
        return []
    own_text = " ".join(problem.split())
    (hits,) = index.search([query], k=min(count + 3, len(index)))
    kept = [
        h
        for h in hits
        if " ".join(str(h.row.get(problem_field, "")).split()) != own_text
        and (problem_id is None or _row_id(h.row) != problem_id)
    ]
    return kept[:count]


# --------------------------------------------------------------------------- one problem
def refine_solution(
    problem: str,
    draft: str | None,
    index,
    llm,
    config: RefineConfig = RefineConfig(),
    reference: str | None = None,
    problem_id: object = None,
) -> dict:
    """Refine ``draft`` (or, when it is None, a draft the LLM writes first) through the configured stages.

    Returns a JSON-able record: the draft and its source, one entry per step (stage, iteration, query,
    exemplar ids and scores, prompt, output, status, attempts, errors, seconds), the final solution and
    answer, and, with a ``reference``, whether the draft's and the final answer equal it (``answers_equal``).
    """
    if not isinstance(problem, str) or not problem.strip():
        raise ValueError("the problem text is empty")
    stages = config.stage_list()
    _check_index_fields(index, config)
    start = time.perf_counter()
    record: dict = {"id": problem_id, "problem": problem, "reference": reference}
    if draft is None:
        result = call_llm(
            llm,
            SOLVE_TEMPLATE.format(problem=problem),
            config.draft_max_new_tokens or config.max_new_tokens,
            config.retries,
            config.retry_wait,
        )
        record["draft"] = {
            "source": "llm",
            "text": result.output,
            "status": result.status,
            "attempts": result.attempts,
            "errors": result.errors,
            "seconds": round(result.seconds, 3),
        }
        draft = result.output
    else:
        record["draft"] = {"source": "given", "text": draft, "status": "ok"}
    steps = []
    for stage in stages:
        instruction = stage.instruction if config.language == "en" else stage.instruction_zh
        for iteration in range(1, config.iterations + 1):
            step = {"step": len(steps) + 1, "stage": stage.number, "stage_name": stage.name, "iteration": iteration}
            steps.append(step)
            if draft is None:  # no draft to refine: the LLM could not write one
                step.update(status="skipped", reason="no draft")
                continue
            step_start = time.perf_counter()
            query = stage_query(stage, problem, draft)
            hits = retrieve_exemplars(index, query, config.exemplars, problem, problem_id, config.problem_field)
            prompt = build_prompt(
                problem, draft, [h.row for h in hits], instruction, config.problem_field, config.solution_field
            )
            result = call_llm(llm, prompt, config.max_new_tokens, config.retries, config.retry_wait)
            step.update(
                query=query,
                exemplar_ids=[_exemplar_id(h) for h in hits],
                exemplar_scores=[round(h.score, 6) for h in hits],
                prompt=prompt,
                input_draft=draft,
                output=result.output,
                status=result.status,
                attempts=result.attempts,
                errors=result.errors,
                seconds=round(time.perf_counter() - step_start, 3),
            )
            if result.status == "ok":
                draft = result.output  # the refined solution is the next step's draft
    record["steps"] = steps
    record["final_solution"] = draft
    record["draft_answer"] = extract_answer(record["draft"]["text"]) if record["draft"]["text"] else None
    record["final_answer"] = extract_answer(draft) if draft else None
    expected = reference_answer(reference)
    record["reference_answer"] = expected
    record["draft_correct"] = answers_equal(record["draft_answer"], expected) if expected is not None else None
    record["correct"] = answers_equal(record["final_answer"], expected) if expected is not None else None
    record["status"] = _overall_status(record)
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


# --------------------------------------------------------------------------- files
def refine_file(
    problems_path: str | PathLike,
    index,
    llm,
    output_path: str | PathLike,
    *,
    drafts_path: str | PathLike | None = None,
    stages: int | tuple[int, ...] = 3,
    iterations: int = 1,
    exemplars: int = 8,
    max_new_tokens: int = 256,
    retries: int = 2,
    retry_wait: float = 1.0,
    problem_field: str | None = None,
    reference_field: str | None = None,
    draft_field: str | None = None,
    solution_field: str = "solution",
    index_problem_field: str | None = None,
    language: str = "en",
    limit: int | None = None,
    show_progress: bool = True,
) -> dict:
    """Refine every problem of a JSONL file and write one record per problem to ``output_path`` (JSONL).

    Records are written to ``OUTPUT.partial`` as problems finish, and the file is
    renamed to ``output_path`` at the end: an interrupted run keeps what it did.

    ``problem_field`` defaults to ``problem`` or ``question``, ``reference_field`` to ``answer`` (a bare answer,
    or a GSM8K solution whose ``#### N`` is used); rows may have an ``id``/``unique_id``. Drafts come from
    ``drafts_path`` (field ``draft_field``, default the first of draft/final_solution/solution/output; matched
    by id when both files have ids, else line by line) or, without it, from the LLM. A problem whose
    refinement raises is recorded with status ``"error"`` and the run goes on. Returns a summary: counts,
    draft and final accuracy over the problems with a reference, seconds per problem.
    """
    rows = [row for _, row in read_rows(problems_path)[0]]
    if limit is not None:
        rows = rows[:limit]
    if not rows:
        raise ValueError(f"{problems_path}: no problems")
    problem_field = problem_field or _pick_field(rows[0], PROBLEM_FIELDS, problems_path, "problem")
    reference_field = reference_field or next((f for f in REFERENCE_FIELDS if f in rows[0]), None)
    rows = [row for _, row in read_rows(problems_path, (problem_field,))[0]][: len(rows)]  # now validated
    drafts = _read_drafts(drafts_path, rows, draft_field) if drafts_path is not None else [None] * len(rows)
    index_field = index_problem_field or getattr(index, "text_field", None) or "problem"
    config = RefineConfig(
        stages=stages,
        iterations=iterations,
        exemplars=exemplars,
        max_new_tokens=max_new_tokens,
        retries=retries,
        retry_wait=retry_wait,
        problem_field=index_field,
        solution_field=solution_field,
        language=language,
    )
    config.stage_list()  # bad settings fail before any work
    _check_index_fields(index, config)

    records_written, seconds = [], 0.0
    # Records go to OUT.partial as they finish and the file becomes OUT at the end, so an interrupted
    # run keeps the problems it refined (an atomic temporary file would lose them all).
    partial = Path(f"{output_path}.partial")
    with open(partial, "w", encoding="utf-8") as f:
        for position, (row, draft) in enumerate(
            progress_bar(list(zip(rows, drafts)), desc="refining", unit="problem", show=show_progress)
        ):
            problem_id = _row_id(row)
            reference = row.get(reference_field) if reference_field else None
            start = time.perf_counter()
            try:
                record = refine_solution(
                    row[problem_field],
                    draft,
                    index,
                    llm,
                    config,
                    reference=None if reference is None else str(reference),
                    problem_id=problem_id,
                )
            # one bad problem must not stop the others: a row the refinement refuses (ValueError), a model or
            # encoder that fails on it (RuntimeError), a server that does not answer (OSError)
            except (ValueError, RuntimeError, OSError) as err:
                judged = False if reference is not None else None  # an error counts as a wrong answer
                record = {
                    "id": problem_id,
                    "problem": row[problem_field],
                    "status": "error",
                    "error": f"{type(err).__name__}: {err}",
                    "draft_correct": judged,
                    "correct": judged,
                    "seconds": round(time.perf_counter() - start, 3),
                }
            record["line"] = position + 1
            record["llm"] = getattr(llm, "name", type(llm).__name__)
            write_jsonl(f, [record])
            f.flush()
            seconds += record["seconds"]
            records_written.append({k: record.get(k) for k in ("status", "draft_correct", "correct")})
    os.replace(partial, output_path)
    return _summary(records_written, seconds, output_path, config)


# --------------------------------------------------------------------------- helpers
def _row_id(row: Mapping) -> object:
    return next((row[f] for f in ID_FIELDS if row.get(f) is not None), None)


def _exemplar_id(hit) -> object:
    row_id = _row_id(hit.row)
    return hit.index if row_id is None else row_id


def _check_index_fields(index, config: RefineConfig) -> None:
    if config.exemplars == 0 or not getattr(index, "rows", None):
        return
    row = index.rows[0]
    for name in (config.problem_field, config.solution_field):
        if name not in row:
            raise ValueError(
                f"the index rows have no field {name!r} for exemplars (fields: "
                f"{', '.join(sorted(map(str, row)))}); set problem_field/solution_field"
            )


def _pick_field(row: Mapping, candidates: Sequence[str], path: object, what: str) -> str:
    for name in candidates:
        if name in row:
            return name
    raise ValueError(
        f"{path}: no {what} field; expected one of {', '.join(candidates)} (fields: {', '.join(sorted(map(str, row)))})"
    )


def _read_drafts(path: str | PathLike, problems: list[dict], draft_field: str | None) -> list[str]:
    rows = [row for _, row in read_rows(path)[0]]
    if not rows:
        raise ValueError(f"{path}: no drafts")
    draft_field = draft_field or _pick_field(rows[0], DRAFT_FIELDS, path, "draft")
    rows = [row for _, row in read_rows(path, (draft_field,))[0]]
    problem_ids = [_row_id(row) for row in problems]
    draft_ids = [_row_id(row) for row in rows]
    if None not in problem_ids and None not in draft_ids:
        by_id = {draft_id: row[draft_field] for draft_id, row in zip(draft_ids, rows)}
        missing = [pid for pid in problem_ids if pid not in by_id]
        if missing:
            raise ValueError(f"{path}: no draft for {len(missing)} problem(s), e.g. id {missing[0]!r}")
        return [by_id[pid] for pid in problem_ids]
    if len(rows) < len(problems):
        raise ValueError(
            f"{path}: {len(rows)} drafts for {len(problems)} problems; without ids they are matched "
            "line by line, so there must be one per problem"
        )
    return [row[draft_field] for row in rows[: len(problems)]]


def _overall_status(record: dict) -> str:
    statuses = [step["status"] for step in record["steps"]]
    if record["draft"]["status"] != "ok" or (statuses and all(s == "failed" for s in statuses)):
        return "failed"
    return "partial" if "failed" in statuses else "ok"


def _summary(records: list[dict], seconds: float, output_path: object, config: RefineConfig) -> dict:
    judged = [r for r in records if r["correct"] is not None]
    statuses = [r["status"] for r in records]
    return {
        "output": str(output_path),
        "problems": len(records),
        "ok": statuses.count("ok"),
        "partial": statuses.count("partial"),
        "failed": statuses.count("failed"),
        "errors": statuses.count("error"),
        "with_reference": len(judged),
        "draft_accuracy": sum(bool(r["draft_correct"]) for r in judged) / len(judged) if judged else None,
        "final_accuracy": sum(bool(r["correct"]) for r in judged) / len(judged) if judged else None,
        "seconds_per_problem": seconds / len(records) if records else None,
        "config": asdict(replace(config, stages=tuple(s.number for s in config.stage_list()))),
    }
