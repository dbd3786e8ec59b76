"""Whole-pipeline properties: any text gives a well-formed graph or a clear error."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathgraph import MathSyntaxGraph, parse_problem, parse_problems
from mathgraph.graph import GraphVocabulary
from mathgraph.parsers.problem import ProblemParser
from mathgraph.samples import sample_problems

PARSER = ProblemParser("spacy")
PROBLEMS = [row["problem"] for row in sample_problems()]
PIECES = [
    "$",
    "$$",
    "\\$",
    "\\(",
    "\\)",
    "\\[",
    "\\]",
    "\\frac",
    "{",
    "}",
    "^",
    "_",
    "x",
    "2",
    " ",
    ".",
    "The",
    "[asy]",
    "[/asy]",
    "<<",
    ">>",
    "\\begin{tabular}",
    "\\end{tabular}",
    "\\left(",
    "|",
    "&",
    "\\\\",
    "\n",
]


def assert_well_formed(graph: MathSyntaxGraph, text: str) -> None:
    assert graph.text == text
    assert MathSyntaxGraph.from_dict(graph.to_dict()) == graph  # the constructor checks it is a tree
    for node in graph.nodes[1:]:
        assert node.span is not None and 0 <= node.span[0] <= node.span[1] <= len(text)
    assert sum(n.kind == "math" for n in graph.nodes) == len(graph.formulas)
    for index, formula in enumerate(graph.formulas):
        assert formula.status in ("ok", "partial", "failed")
        assert any(n.kind == "formula" and n.formula == index for n in graph.nodes)


def mutate(text: str, data) -> str:
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if action == "delete":
            text = text[:position] + text[position + 1 :]
        elif action == "insert":
            text = text[:position] + data.draw(st.sampled_from(PIECES)) + text[position:]
        else:
            text = text[:position] + text[position : position + 5] + text[position:]
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_real_problems_give_well_formed_graphs(data):
    text = mutate(data.draw(st.sampled_from(PROBLEMS)), data)
    if not text.strip():
        return
    assert_well_formed(PARSER.parse(text), text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=5), min_size=1, max_size=12).map("".join))
def test_random_strings_give_well_formed_graphs_or_a_clear_error(text):
    if not text.strip():
        with pytest.raises(ValueError, match="empty"):
            PARSER.parse(text)
        return
    assert_well_formed(PARSER.parse(text), text)


def test_empty_and_non_string_problems_are_rejected_clearly():
    with pytest.raises(ValueError, match="problem: the problem text is empty"):
        parse_problem("  \n", parser="spacy")
    with pytest.raises(TypeError, match="expected the problem text as a str, got int"):
        parse_problem(3, parser="spacy")
    with pytest.raises(ValueError, match="problem 2: the problem text is empty"):
        list(parse_problems(["a $x$", "b", ""], parser="spacy", batch_size=2))


def test_bulk_parsing_equals_one_by_one_and_ids_are_stable():
    one_by_one = [PARSER.parse(p) for p in PROBLEMS]
    assert list(parse_problems(PROBLEMS, parser="spacy", batch_size=3)) == one_by_one
    assert list(parse_problems(iter(PROBLEMS), parser="spacy", batch_size=4, n_process=2)) == one_by_one
    first = GraphVocabulary.build(one_by_one, min_freq=1)
    second = GraphVocabulary.build(list(reversed(one_by_one)), min_freq=1)
    assert first == second
    assert [g.to_pyg(first).x.tolist() for g in one_by_one] == [g.to_pyg(second).x.tolist() for g in one_by_one]
