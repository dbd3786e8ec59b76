"""SQR (similar question recommendation): a query and its candidates -> a score per candidate; graded
relevance (0..2) per candidate, NDCG@3 picks the best epoch. It ranks, so it has no labels."""

from __future__ import annotations

from dataclasses import dataclass

from mathgraph.task_definitions.definition import TaskDefinition


@dataclass(frozen=True)
class SqrList:
    """One SQR candidate list: ``relevance[i]`` (0, 1 or 2) grades ``candidates[i]`` for ``query``."""

    id: str
    group: str
    query: str
    candidates: tuple[str, ...]
    relevance: tuple[int, ...]


def input_example(texts: tuple, position: int = 0) -> SqrList:
    """``(query, candidates)`` as a list whose first candidate stands as the relevant one: the loss computed
    beside the scores needs one."""
    query, candidates = texts
    return SqrList(
        id=f"input-{position}",
        group="",
        query=query,
        candidates=candidates,
        relevance=(1,) + (0,) * (len(candidates) - 1),
    )


DEFINITION = TaskDefinition(
    name="sqr",
    input_shape="ranker",
    classifies=False,
    metric="ndcg@3",
    example_type=SqrList,
    make_input_example=input_example,
    title="SQR (graded GSM-Plus lists)",
    dataset=("qintongli/GSM-Plus", "GSM-Plus"),
    hub_type="text-ranking",
)

__all__ = ["SqrList", "DEFINITION"]
