"""The four tasks, one module each (``kpc``, ``qrc``, ``qam``, ``sqr``), without torch: each holds its example
type, its ``TaskDefinition`` (input shape, whether it classifies, metric, how an input becomes an example,
how a label decodes, label names, model-card names). ``mathgraph.task_specs`` and ``mathgraph.labels`` read
them for the commands; the torch head of each task is in ``models.task_heads`` (the models layer, which a
torch-free install does not load), its file loader in ``tasks.data``.

    definition = TASK_DEFINITIONS["qam"]
    definition.input_example(("a question", "a solution"))
"""

from __future__ import annotations

from mathgraph.task_definitions import kpc, qam, qrc, sqr
from mathgraph.task_definitions.definition import TaskDefinition

TASK_DEFINITIONS: dict[str, TaskDefinition] = {
    module.DEFINITION.name: module.DEFINITION for module in (kpc, qrc, qam, sqr)
}

__all__ = ["TaskDefinition", "TASK_DEFINITIONS"]
