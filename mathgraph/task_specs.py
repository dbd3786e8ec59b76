"""The four tasks by name, without torch: what each predicts from, so that commands check their input before
any model code is imported. The task heads (``models.task_heads``) and the data side (``tasks.task_types``)
take their input shapes from here, so there is one table, not copies.

Input shapes: ``single`` (one problem: KPC), ``pair`` (two texts: QRC, QAM), ``ranker`` (a query and its
candidates: SQR).
"""

from __future__ import annotations

from dataclasses import dataclass

from mathgraph.errors import UserError

# the text fields of a prediction file's row (an SQR row also has its list of "candidates")
INPUT_FIELDS = {"pair": ("text_a", "text_b"), "ranker": ("query",)}


@dataclass(frozen=True)
class TaskSpec:
    """A task's name, what it predicts from (``input_shape``) and whether it classifies (else it ranks)."""

    name: str
    input_shape: str
    classifies: bool

    @property
    def text_arguments(self) -> tuple[int, int | None, str]:
        """How many TEXT arguments a command line gives (fewest, most or None), and in words."""
        return {
            "single": (1, 1, "one TEXT"),
            "pair": (2, 2, "two TEXTs (text_a text_b)"),
            "ranker": (2, None, "a QUERY and its CANDIDATEs"),
        }[self.input_shape]

    def input_fields(self, text_field: str = "problem") -> tuple[str, ...]:
        """The text fields of a prediction file's row (``mathgraph predict --input``)."""
        return (text_field,) if self.input_shape == "single" else INPUT_FIELDS[self.input_shape]


TASK_SPECS = {
    "kpc": TaskSpec("kpc", "single", classifies=True),
    "qrc": TaskSpec("qrc", "pair", classifies=True),
    "qam": TaskSpec("qam", "pair", classifies=True),
    "sqr": TaskSpec("sqr", "ranker", classifies=False),
}
TASK_NAMES = tuple(TASK_SPECS)
PAIR_TASKS = tuple(name for name, spec in TASK_SPECS.items() if spec.input_shape == "pair")


def task_spec(name: str) -> TaskSpec:
    """The task called ``name``; an unknown name is a ``ValueError`` listing the known ones."""
    if name not in TASK_SPECS:
        raise UserError(f"unknown task {name!r}; known: {', '.join(TASK_NAMES)}")
    return TASK_SPECS[name]


def check_candidates(row: dict) -> None:
    """An SQR row's ``candidates``: a non-empty list of non-empty strings, else ``ValueError``."""
    candidates = row.get("candidates")
    if (
        not isinstance(candidates, list)
        or not candidates
        or not all(isinstance(c, str) and c.strip() for c in candidates)
    ):
        raise UserError("field 'candidates' must be a non-empty list of non-empty strings")


__all__ = ["TaskSpec", "TASK_SPECS", "TASK_NAMES", "PAIR_TASKS", "task_spec", "check_candidates"]
