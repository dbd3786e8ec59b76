"""What one task is, without torch: ``TaskDefinition``, the record each task's module (``kpc``, ``qrc``, ``qam``,
``sqr``) fills in. The model side (``models.task_heads``: the head, the loss, the tensors) and the data side
(``tasks.task_types``: reading files, metrics) read their task's facts from here.

Input shapes: ``single`` (one problem: KPC), ``pair`` (two texts: QRC, QAM), ``ranker`` (a query and its
candidates: SQR).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

INPUT_SHAPES = ("single", "pair", "ranker")
# the text fields of a prediction file's row (an SQR row also has its list of "candidates")
INPUT_FIELDS = {"pair": ("text_a", "text_b"), "ranker": ("query",)}
TEXT_ARGUMENTS = {
    "single": (1, 1, "one TEXT"),
    "pair": (2, 2, "two TEXTs (text_a text_b)"),
    "ranker": (2, None, "a QUERY and its CANDIDATEs"),
}


def _as_is(label):
    """A label that is its own name (KPC's subjects, QRC's relations)."""
    return label


@dataclass(frozen=True)
class TaskDefinition:
    """One task: its ``name``, what it predicts from (``input_shape``), whether it classifies (else it ranks),
    the dev ``metric`` that picks the best epoch, its example type and how one input to a prediction becomes
    an example (``make_input_example``), how a predicted label name decodes (``decode_label``), what its coded
    labels mean (``label_names``, ``label_meaning``), what the second text of its pairs is for their alignment
    features (``aligned_with``), and how the model card names it (``title``, ``hub_type``,
    ``dataset``: Hugging Face Hub id and name)."""

    name: str
    input_shape: str
    classifies: bool
    metric: str
    example_type: type
    make_input_example: Callable[[tuple, int], object]
    title: str
    dataset: tuple[str, str]
    hub_type: str = "text-classification"
    decode_label: Callable[[str], object] = _as_is
    label_names: dict[str, str] = field(default_factory=dict)
    label_meaning: str = ""
    aligned_with: str = "problem"  # the second text of its pairs, for their alignment features: "problem" or "solution"

    def __post_init__(self):
        if self.input_shape not in INPUT_SHAPES:
            raise ValueError(f"{self.name}: unknown input shape {self.input_shape!r}; known: {INPUT_SHAPES}")

    @property
    def text_arguments(self) -> tuple[int, int | None, str]:
        """How many TEXT arguments a command line gives (fewest, most or None), and in words."""
        return TEXT_ARGUMENTS[self.input_shape]

    def input_fields(self, text_field: str = "problem") -> tuple[str, ...]:
        """The text fields of a prediction file's row (``mathgraph predict --input``)."""
        return (text_field,) if self.input_shape == "single" else INPUT_FIELDS[self.input_shape]

    def input_example(self, texts: tuple, position: int = 0):
        """The example of one input to a prediction (its texts as ``models.task_io.check_input`` gives them),
        with placeholder gold the prediction does not read; ``position`` numbers its ``id``."""
        return self.make_input_example(texts, position)

    def label_name(self, label) -> str | None:
        """The name of a coded ``label`` (QAM's 1: ``"matches"``), or None where the label is its own name."""
        return self.label_names.get(str(label))


__all__ = ["TaskDefinition", "INPUT_SHAPES", "INPUT_FIELDS"]
