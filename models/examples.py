"""The examples a task model reads, one record per example: what ``Task.input_example`` makes of an input
and what the task readers (``tasks.data``) make of a file's rows.

- ``KpcExample``: one problem ``text`` and its subject ``label``;
- ``QrcPair``: a seed problem ``text_a``, a variant or another seed's problem ``text_b``, their relation;
- ``QamPair``: a question ``text_a``, a solution ``text_b``, 1 if it solves the question, else 0;
- ``SqrList``: a ``query`` with its ``candidates`` and each candidate's graded ``relevance`` (0..2).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KpcExample:
    text: str
    label: str


@dataclass(frozen=True)
class QrcPair:
    id: str
    group: str
    text_a: str
    text_b: str
    label: str


@dataclass(frozen=True)
class QamPair:
    id: str
    group: str
    text_a: str
    text_b: str
    label: int


@dataclass(frozen=True)
class SqrList:
    """One SQR candidate list: ``relevance[i]`` (0, 1 or 2) grades ``candidates[i]`` for ``query``."""

    id: str
    group: str
    query: str
    candidates: tuple[str, ...]
    relevance: tuple[int, ...]


__all__ = ["KpcExample", "QrcPair", "QamPair", "SqrList"]
