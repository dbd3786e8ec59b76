"""The four tasks by name, without torch, for the commands: what each predicts from, so that commands check
their input before any model code is imported. Each task is defined in its own module of
``mathgraph.task_definitions``; this module is the lookup by name (``task_spec``) and the checks of an input
row, so there is one definition per task, not copies.

Input shapes: ``single`` (one problem: KPC), ``pair`` (two texts: QRC, QAM), ``ranker`` (a query and its
candidates: SQR).
"""

from __future__ import annotations

from mathgraph.errors import UserError
from mathgraph.task_definitions import TASK_DEFINITIONS
from mathgraph.task_definitions.definition import INPUT_FIELDS
from mathgraph.task_definitions.definition import TaskDefinition as TaskSpec

TASK_SPECS: dict[str, TaskSpec] = TASK_DEFINITIONS
TASK_NAMES = tuple(TASK_SPECS)
PAIR_TASKS = tuple(name for name, spec in TASK_SPECS.items() if spec.input_shape == "pair")


def task_spec(name: str) -> TaskSpec:
    """The task called ``name``; an unknown name is a ``UserError`` listing the known ones."""
    if name not in TASK_SPECS:
        raise UserError(f"unknown task {name!r}; known: {', '.join(TASK_NAMES)}")
    return TASK_SPECS[name]


def check_candidates(row: dict) -> None:
    """An SQR row's ``candidates``: a non-empty list of non-empty strings, else ``UserError``."""
    candidates = row.get("candidates")
    if (
        not isinstance(candidates, list)
        or not candidates
        or not all(isinstance(c, str) and c.strip() for c in candidates)
    ):
        raise UserError("field 'candidates' must be a non-empty list of non-empty strings")


def row_input(kind: str, row: dict, text_field: str = "problem") -> object:
    """The input of a validated row, for a task whose ``input_shape`` is ``kind``."""
    if kind == "single":
        return row[text_field]
    if kind == "pair":
        return row["text_a"], row["text_b"]
    return row["query"], row["candidates"]


__all__ = [
    "INPUT_FIELDS",
    "TaskSpec",
    "TASK_SPECS",
    "TASK_NAMES",
    "PAIR_TASKS",
    "task_spec",
    "check_candidates",
    "row_input",
]
