"""KPC (knowledge point classification): one MATH problem -> its subject. The subjects are words already, so
the task has no label names."""

from __future__ import annotations

from dataclasses import dataclass

from mathgraph.task_definitions.definition import TaskDefinition


@dataclass(frozen=True)
class KpcExample:
    """One problem ``text`` and its subject ``label``."""

    text: str
    label: str


def input_example(texts: tuple, position: int = 0) -> KpcExample:
    """``(text,)`` as an example with an empty label."""
    (text,) = texts
    return KpcExample(text=text, label="")


DEFINITION = TaskDefinition(
    name="kpc",
    input_shape="single",
    classifies=True,
    metric="accuracy",
    example_type=KpcExample,
    make_input_example=input_example,
    title="KPC (MATH subject, 7 classes)",
    dataset=("hendrycks/competition_math", "MATH"),
)

__all__ = ["KpcExample", "DEFINITION"]
