"""What a task's coded labels mean, in words: a QAM label is 1 or 0, and a user should not have to know which
is which.

QAM (question-answer matching) asks whether a solution solves a question; its pairs are labelled 1 when it
does (the solution matches the question) and 0 when it does not (the data README's definition). KPC's MATH
subjects and QRC's relations are words already; SQR ranks, it has no labels.

    with_label_names("qam", [{"label": 1, "probabilities": {0: 0.1, 1: 0.9}}])
    # [{"label": 1, "label_name": "matches", "probabilities": {0: 0.1, 1: 0.9}}]

The numeric label stays where it was (``label``, and the keys of ``probabilities``): files and code that read
it keep working; ``label_name`` is added beside it. The names are defined with each task
(``mathgraph.task_definitions``); no torch (the bottom layer).
"""

from __future__ import annotations

from collections.abc import Iterable

from mathgraph.task_definitions import TASK_DEFINITIONS

# task -> {label as text: its name}, for the tasks whose labels are codes (each task's module in
# mathgraph.task_definitions says its own)
LABEL_NAMES: dict[str, dict[str, str]] = {name: d.label_names for name, d in TASK_DEFINITIONS.items() if d.label_names}
# task -> what its names say, for a reader who sees one for the first time
LABEL_MEANINGS: dict[str, str] = {name: d.label_meaning for name, d in TASK_DEFINITIONS.items() if d.label_meaning}


def label_name(task: str, label) -> str | None:
    """The name of ``label`` of ``task`` (``"matches"`` for QAM's 1), or None where the label is its own name."""
    return LABEL_NAMES.get(task, {}).get(str(label))


def label_text(task: str, label) -> str:
    """``label`` as a reader should see it: ``"1 (matches)"`` for a coded label, the label itself otherwise."""
    name = label_name(task, label)
    return str(label) if name is None else f"{label} ({name})"


def with_label_names(task: str, results: Iterable[dict]) -> list[dict]:
    """``results`` of ``task``'s predictions, each with ``label_name`` beside its ``label`` where the task's
    labels are codes (QAM); other results, and the other tasks' results, are returned as they are."""
    results = list(results)
    if task not in LABEL_NAMES:
        return results
    named = []
    for result in results:
        name = label_name(task, result["label"]) if isinstance(result, dict) and "label" in result else None
        if name is None:
            named.append(result)
            continue
        result = dict(result)
        keys = list(result)  # label_name right after label, for whoever reads the JSON
        at = keys.index("label") + 1
        named.append({key: result[key] for key in keys[:at]} | {"label_name": name} | {k: result[k] for k in keys[at:]})
    return named


__all__ = ["LABEL_NAMES", "LABEL_MEANINGS", "label_name", "label_text", "with_label_names"]
