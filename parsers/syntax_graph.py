"""Glue: segmentation + dependency sentences + operator trees -> ``MathSyntaxGraph``.

Node order is deterministic: ``[ROOT]`` first, then for each sentence its
tokens in text order followed by the operator trees (each in its own
preorder) of the formulas that sentence mentions, in text order.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from mathgraph.graph import MATH_LABEL, ROOT_LABEL, Edge, FormulaRecord, MathSyntaxGraph, Node
from mathgraph.parsers.dependency import DepSentence
from mathgraph.parsers.latex import OperatorTree
from mathgraph.parsers.quantities import find_quantities
from mathgraph.parsers.segment import Segmentation

logger = logging.getLogger("mathgraph.parsers")


def build_syntax_graph(
    segmentation: Segmentation,
    sentences: list[DepSentence],
    trees: list[OperatorTree],
    parser: str,
    parser_model: str = "",
) -> MathSyntaxGraph:
    """Join the dependency tree of ``segmentation.masked_text`` to the operator trees of its formulas.

    ``sentences`` are the parse of the masked text; ``trees[i]`` is the operator
    tree of ``segmentation.formulas[i]``. A token overlapping the placeholder of
    formula ``i`` becomes its ``[MATH]`` node, linked by a ``math`` edge to the
    tree's root. A formula whose placeholder no token covers (a parser that
    dropped it) is still kept: its ``[MATH]`` node hangs from ``[ROOT]``.
    """
    if len(trees) != len(segmentation.formulas):
        raise ValueError(f"{len(trees)} operator trees for {len(segmentation.formulas)} formulas")
    nodes: list[Node] = [Node(0, "root", ROOT_LABEL)]
    edges: list[Edge] = []
    placed: set[int] = set()

    def add_formula_tree(math_id: int, index: int) -> None:
        tree = trees[index]
        offset = segmentation.formulas[index].body_span[0]
        base = len(nodes)
        for opt in tree.nodes:
            nodes.append(
                Node(
                    base + opt.id,
                    "formula",
                    opt.label,
                    span=(offset + opt.span[0], offset + opt.span[1]),
                    opt_type=opt.type,
                    formula=index,
                )
            )
        edges.append(Edge(math_id, base + tree.root, "math"))
        edges.extend(Edge(base + e.src, base + e.dst, f"opt:{e.role}") for e in tree.edges)
        placed.add(index)

    for sentence_index, sentence in enumerate(sentences):
        token_ids: list[int] = []
        pending_formulas: list[tuple[int, int]] = []
        for token in sentence.tokens:
            node_id = len(nodes)
            token_ids.append(node_id)
            span = segmentation.to_source_span(token.start, token.end)
            formula_index = _placeholder_at(segmentation, token.start, token.end, placed)
            if formula_index is None:
                nodes.append(
                    Node(
                        node_id,
                        "word",
                        token.text.lower(),
                        span=span,
                        lemma=token.lemma,
                        upos=token.upos,
                        sentence=sentence_index,
                    )
                )
            else:
                nodes.append(
                    Node(
                        node_id,
                        "math",
                        MATH_LABEL,
                        span=span,
                        upos=token.upos,
                        sentence=sentence_index,
                        formula=formula_index,
                    )
                )
                placed.add(formula_index)
                pending_formulas.append((node_id, formula_index))
        for token, node_id in zip(sentence.tokens, token_ids):
            if token.head < 0:
                edges.append(Edge(0, node_id, "root"))
            else:
                edges.append(Edge(token_ids[token.head], node_id, f"dep:{token.deprel}"))
        # Operator trees go after the sentence's tokens so token ids stay contiguous per sentence.
        for math_id, formula_index in pending_formulas:
            add_formula_tree(math_id, formula_index)

    for index, formula in enumerate(segmentation.formulas):
        if index not in placed:
            logger.warning(
                "formula %d (%r) has no placeholder token in the parse; attaching it to [ROOT]",
                index,
                formula.latex[:40],
            )
            math_id = len(nodes)
            nodes.append(Node(math_id, "math", MATH_LABEL, span=formula.span, formula=index))
            edges.append(Edge(0, math_id, "root"))
            add_formula_tree(math_id, index)

    records = tuple(
        FormulaRecord(latex=f.latex, span=f.span, status=t.status, delimiter=f.delimiter, errors=t.errors)
        for f, t in zip(segmentation.formulas, trees)
    )
    graph = MathSyntaxGraph(
        text=segmentation.source,
        nodes=tuple(nodes),
        edges=tuple(edges),
        formulas=records,
        parser=parser,
        parser_model=parser_model,
    )
    return replace(graph, quantity_records=find_quantities(graph))


def _placeholder_at(segmentation: Segmentation, start: int, end: int, taken: set[int]) -> int | None:
    """Index of the first formula not yet placed whose placeholder overlaps ``[start, end)``."""
    for index, (p_start, p_end) in enumerate(segmentation.placeholder_spans):
        if p_start < end and start < p_end and index not in taken:
            return index
    return None
