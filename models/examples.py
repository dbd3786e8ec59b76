"""The examples a task model reads, one record per example: what a task's ``input_example`` makes of an input
and what the task readers (``tasks.data``) make of a file's rows. Each is defined with its task in
``mathgraph.task_definitions`` (torch-free); they are named here for the model code that reads them.

- ``KpcExample``: one problem ``text`` and its subject ``label``;
- ``QrcPair``: a seed problem ``text_a``, a variant or another seed's problem ``text_b``, their relation;
- ``QamPair``: a question ``text_a``, a solution ``text_b``, 1 if it solves the question, else 0;
- ``SqrList``: a ``query`` with its ``candidates`` and each candidate's graded ``relevance`` (0..2).
"""

from __future__ import annotations

from mathgraph.task_definitions.kpc import KpcExample
from mathgraph.task_definitions.qam import QamPair
from mathgraph.task_definitions.qrc import QrcPair
from mathgraph.task_definitions.sqr import SqrList

__all__ = ["KpcExample", "QrcPair", "QamPair", "SqrList"]
