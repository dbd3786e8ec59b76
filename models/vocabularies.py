"""The vocabularies a new encoder is built with (``MathEncoder.build``), from a corpus: ``mathgraph vocab``.

    graph_vocabulary, latex_tokens = build_vocabularies(texts, min_freq=2, latex_min_freq=5)
    save_vocabularies("vocab", graph_vocabulary, latex_tokens)
    encoder = MathEncoder.build("vocab")

The graph side (node labels, relations) comes from the parsed graphs, the text side
(LaTeX commands the tokenizer learns as whole tokens) from the raw texts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

from mathgraph.graph import GraphVocabulary
from mathgraph.models.encoder import LATEX_TOKENS_NAME
from mathgraph.models.text_encoder import latex_commands
from mathgraph.parsers.problem import parse_problems


def build_vocabularies(
    texts: Sequence[str],
    parser: str = "auto",
    workers: int = 1,
    min_freq: int = 2,
    latex_min_freq: int = 5,
    show_progress: bool = False,
) -> tuple[GraphVocabulary, list[str]]:
    """Parse ``texts`` (with ``workers`` processes) and count: node labels seen at least ``min_freq`` times
    and every relation (``GraphVocabulary.build``), and the LaTeX commands seen at least ``latex_min_freq``
    times, most frequent first (``models.text_encoder.latex_commands``)."""
    graphs = parse_problems(texts, parser=parser, n_process=workers, show_progress=show_progress)
    return GraphVocabulary.build(graphs, min_freq=min_freq), latex_commands(texts, min_freq=latex_min_freq)


def save_vocabularies(directory: str | PathLike, graph_vocabulary: GraphVocabulary, latex_tokens: list[str]) -> None:
    """Write the files ``MathEncoder.build(directory)`` reads: ``node_vocab.json``, ``relation_vocab.json``
    and ``LATEX_TOKENS_NAME``."""
    directory = Path(directory)
    graph_vocabulary.save_pretrained(directory)  # creates the directory
    with open(directory / LATEX_TOKENS_NAME, "w", encoding="utf-8") as f:
        json.dump(latex_tokens, f, indent=0)
