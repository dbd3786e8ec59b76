"""QAM (question-answer matching): a question and a solution -> 1 when the solution solves the question (it
"matches"), else 0 ("does not match"), the data README's definition. Labels are ints; a user sees their
names beside them (``mathgraph.labels``)."""

from __future__ import annotations

from dataclasses import dataclass

from mathgraph.task_definitions.definition import TaskDefinition


@dataclass(frozen=True)
class QamPair:
    """A question ``text_a``, a solution ``text_b``, ``label`` 1 if it solves the question, else 0."""

    id: str
    group: str
    text_a: str
    text_b: str
    label: int


def input_example(texts: tuple, position: int = 0) -> QamPair:
    """``(question, solution)`` as a pair with the placeholder label 0."""
    text_a, text_b = texts
    return QamPair(id=f"input-{position}", group="", text_a=text_a, text_b=text_b, label=0)


DEFINITION = TaskDefinition(
    name="qam",
    input_shape="pair",
    classifies=True,
    metric="accuracy",
    example_type=QamPair,
    make_input_example=input_example,
    title="QAM (GSM-Plus number-swap pairs)",
    dataset=("qintongli/GSM-Plus", "GSM-Plus"),
    decode_label=int,  # the model's label names are "0" and "1"
    label_names={"1": "matches", "0": "does not match"},
    label_meaning="whether the solution (text_b) solves the question (text_a)",
    aligned_with="solution",
)

__all__ = ["QamPair", "DEFINITION"]
