"""QRC (question relation classification): a GSM-Plus seed problem and a variant of it (or another seed's
problem) -> the perturbation type, or ``irrelevant``. The labels are words already."""

from __future__ import annotations

from dataclasses import dataclass

from mathgraph.task_definitions.definition import TaskDefinition


@dataclass(frozen=True)
class QrcPair:
    """A seed problem ``text_a``, a variant or another seed's problem ``text_b``, their relation ``label``."""

    id: str
    group: str
    text_a: str
    text_b: str
    label: str


def input_example(texts: tuple, position: int = 0) -> QrcPair:
    """``(text_a, text_b)`` as a pair with an empty label."""
    text_a, text_b = texts
    return QrcPair(id=f"input-{position}", group="", text_a=text_a, text_b=text_b, label="")


DEFINITION = TaskDefinition(
    name="qrc",
    input_shape="pair",
    classifies=True,
    metric="accuracy",
    example_type=QrcPair,
    make_input_example=input_example,
    title="QRC (GSM-Plus relation, 9 classes)",
    dataset=("qintongli/GSM-Plus", "GSM-Plus"),
)

__all__ = ["QrcPair", "DEFINITION"]
