"""Math syntax graphs of five real problems, checked node by node (spaCy back end).

Each expected tree was read against its problem: the dependency relations are
the packaged spaCy model's (ClearNLP labels), every formula hangs from its
[MATH] placeholder by a ``math`` edge, and operator trees keep source order.
"""

import pytest

from mathgraph.parsers.problem import ProblemParser
from mathgraph.samples import sample_problems

SAMPLES = {row["id"]: row for row in sample_problems()}
PARSER = ProblemParser("spacy")

EXPECTED = {
    "math-1": r"""
formula 0: '\\triangle PQR' [ok]
formula 1: '\\angle P' [ok]
formula 2: '\\angle Q' [ok]
formula 3: '60^\\circ' [ok]
formula 4: '\\angle R' [ok]
quantity 0: '60' = 60 [formula; sentence 0]
[ROOT]
├─root→ is (AUX)
│  ├─dep:prep→ in (ADP)
│  │  └─dep:pobj→ [MATH] (PROPN)
│  │     └─math→ \triangle (O)
│  │        ├─opt:arg0→ P (V)
│  │        ├─opt:arg1→ Q (V)
│  │        └─opt:arg2→ R (V)
│  ├─dep:punct→ , (PUNCT)
│  ├─dep:nsubj→ sum (NOUN)
│  │  ├─dep:det→ the (DET)
│  │  └─dep:prep→ of (ADP)
│  │     └─dep:pobj→ [MATH] (PROPN)
│  │        ├─math→ \angle (O)
│  │        │  └─opt:arg0→ P (V)
│  │        ├─dep:cc→ and (CCONJ)
│  │        └─dep:conj→ [MATH] (PROPN)
│  │           └─math→ \angle (O)
│  │              └─opt:arg0→ Q (V)
│  ├─dep:attr→ [MATH] (PROPN)
│  │  └─math→ \degree (O)
│  │     └─opt:arg0→ 60 (N)
│  └─dep:punct→ . (PUNCT)
└─root→ is (AUX)
   ├─dep:attr→ what (PRON)
   ├─dep:nsubj→ measure (NOUN)
   │  ├─dep:det→ the (DET)
   │  └─dep:prep→ of (ADP)
   │     └─dep:pobj→ [MATH] (PROPN)
   │        └─math→ \angle (O)
   │           └─opt:arg0→ R (V)
   └─dep:punct→ ? (PUNCT)
""",
    "math-2": r"""
formula 0: '\\{1, 2, 3, \\ldots, 24\\}' [ok]
formula 1: '4!' [ok]
quantity 0: '1' = 1 [formula; sentence 0]
quantity 1: '2' = 2 [formula; sentence 0]
quantity 2: '3' = 3 [formula; sentence 0]
quantity 3: '24' = 24 [formula; sentence 0]
quantity 4: '4' = 4 [formula; sentence 1, question]
[ROOT]
├─root→ chosen (VERB)
│  ├─dep:nsubjpass→ number (NOUN)
│  │  └─dep:det→ a (DET)
│  ├─dep:auxpass→ is (AUX)
│  ├─dep:prep→ at (ADP)
│  │  └─dep:amod→ random (ADJ)
│  ├─dep:prep→ from (ADP)
│  │  └─dep:pobj→ set (NOUN)
│  │     ├─dep:det→ the (DET)
│  │     └─dep:prep→ of (ADP)
│  │        └─dep:pobj→ [MATH] (PROPN)
│  │           ├─dep:compound→ numbers (NOUN)
│  │           │  ├─dep:amod→ consecutive (ADJ)
│  │           │  └─dep:amod→ natural (ADJ)
│  │           └─math→ {} (U)
│  │              ├─opt:arg0→ 1 (N)
│  │              ├─opt:arg1→ 2 (N)
│  │              ├─opt:arg2→ 3 (N)
│  │              ├─opt:arg3→ \ldots (C)
│  │              └─opt:arg4→ 24 (N)
│  └─dep:punct→ . (PUNCT)
├─root→ is (AUX)
│  ├─dep:attr→ what (PRON)
│  ├─dep:nsubj→ probability (NOUN)
│  │  ├─dep:det→ the (DET)
│  │  └─dep:acl→ is (AUX)
│  │     ├─dep:mark→ that (SCONJ)
│  │     ├─dep:nsubj→ number (NOUN)
│  │     │  ├─dep:det→ the (DET)
│  │     │  └─dep:acl→ chosen (VERB)
│  │     └─dep:attr→ factor (NOUN)
│  │        ├─dep:det→ a (DET)
│  │        └─dep:prep→ of (ADP)
│  │           └─dep:pobj→ [MATH] (PROPN)
│  │              └─math→ ! (O)
│  │                 └─opt:arg0→ 4 (N)
│  └─dep:punct→ ? (PUNCT)
└─root→ express (VERB)
   ├─dep:dobj→ answer (NOUN)
   │  ├─dep:poss→ your (PRON)
   │  └─dep:prep→ as (ADP)
   │     └─dep:pobj→ fraction (NOUN)
   │        ├─dep:det→ a (DET)
   │        └─dep:amod→ common (ADJ)
   └─dep:punct→ . (PUNCT)
""",
    "math-3": r"""
formula 0: 'y \\in [0,\\pi]' [ok]
formula 1: '\\sin(x+y)\\leq \\sin(x)+\\sin(y)' [ok]
formula 2: 'x' [ok]
formula 3: '0' [ok]
formula 4: '\\pi' [ok]
quantity 0: '0' = 0 [formula; sentence 0, question]
quantity 1: '0' = 0 [formula; sentence 0, question]
[ROOT]
└─root→ find (VERB)
   ├─dep:dobj→ [MATH] (PROPN)
   │  ├─dep:det→ all (DET)
   │  └─math→ \in (O)
   │     ├─opt:arg0→ y (V)
   │     └─opt:arg1→ [] (O)
   │        ├─opt:arg0→ 0 (N)
   │        └─opt:arg1→ \pi (C)
   ├─dep:advcl→ [MATH] (PROPN)
   │  ├─dep:prep→ for (ADP)
   │  │  └─dep:pobj→ which (PRON)
   │  ├─math→ \le (O)
   │  │  ├─opt:arg0→ \sin (F)
   │  │  │  └─opt:arg0→ + (U)
   │  │  │     ├─opt:arg0→ x (V)
   │  │  │     └─opt:arg1→ y (V)
   │  │  └─opt:arg1→ + (U)
   │  │     ├─opt:arg0→ \sin (F)
   │  │     │  └─opt:arg0→ x (V)
   │  │     └─opt:arg1→ \sin (F)
   │  │        └─opt:arg0→ y (V)
   │  └─dep:prep→ for (ADP)
   │     └─dep:pobj→ [MATH] (PROPN)
   │        ├─dep:det→ every (DET)
   │        ├─math→ x (V)
   │        └─dep:prep→ between (ADP)
   │           └─dep:pobj→ [MATH] (PROPN)
   │              ├─math→ 0 (N)
   │              ├─dep:cc→ and (CCONJ)
   │              ├─dep:conj→ [MATH] (PROPN)
   │              │  ├─math→ \pi (C)
   │              │  └─dep:punct→ , (PUNCT)
   │              └─dep:conj→ inclusive (NOUN)
   └─dep:punct→ . (PUNCT)
""",
    "gsm8k-1": r"""
quantity 0: '$12' = 12 [integer; unit $; sentence 0]
quantity 1: '50' = 50 [integer; unit minutes, object babysitting; sentence 1]
[ROOT]
├─root→ earns (VERB)
│  ├─dep:nsubj→ weng (PROPN)
│  ├─dep:dobj→ 12 (NUM)
│  │  ├─dep:nmod→ $ (SYM)
│  │  └─dep:npadvmod→ hour (NOUN)
│  │     └─dep:det→ an (DET)
│  ├─dep:prep→ for (ADP)
│  │  └─dep:pobj→ babysitting (NOUN)
│  └─dep:punct→ . (PUNCT)
├─root→ did (VERB)
│  ├─dep:npadvmod→ yesterday (NOUN)
│  ├─dep:punct→ , (PUNCT)
│  ├─dep:nsubj→ she (PRON)
│  ├─dep:advmod→ just (ADV)
│  ├─dep:dobj→ minutes (NOUN)
│  │  ├─dep:nummod→ 50 (NUM)
│  │  └─dep:prep→ of (ADP)
│  │     └─dep:pobj→ babysitting (NOUN)
│  └─dep:punct→ . (PUNCT)
└─root→ earn (VERB)
   ├─dep:dobj→ much (ADV)
   │  └─dep:advmod→ how (SCONJ)
   ├─dep:aux→ did (AUX)
   ├─dep:nsubj→ she (PRON)
   └─dep:punct→ ? (PUNCT)
""",
    "gsm8k-0 solution, first line": r"""
formula 0: '48/2 = 24' [ok]
quantity 0: '48' = 48 [formula; sentence 0]
quantity 1: '2' = 2 [formula; sentence 0]
quantity 2: '24' = 24 [formula; sentence 0]
[ROOT]
└─root→ sold (VERB)
   ├─dep:nsubj→ natalia (PROPN)
   ├─dep:dobj→ clips (NOUN)
   │  └─dep:compound→ [MATH] (PROPN)
   │     └─math→ = (U)
   │        ├─opt:arg0→ / (O)
   │        │  ├─opt:arg0→ 48 (N)
   │        │  └─opt:arg1→ 2 (N)
   │        └─opt:arg1→ 24 (N)
   ├─dep:prep→ in (ADP)
   │  └─dep:pobj→ may (PROPN)
   └─dep:punct→ . (PUNCT)
""",
}
TEXTS = {
    "math-1": SAMPLES["math-1"]["problem"],
    "math-2": SAMPLES["math-2"]["problem"],
    "math-3": SAMPLES["math-3"]["problem"],
    "gsm8k-1": SAMPLES["gsm8k-1"]["problem"],
    "gsm8k-0 solution, first line": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.",
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_real_problem_graph_node_by_node(name):
    parser = ProblemParser("spacy", bare_arithmetic=name.endswith("solution, first line"))
    graph = parser.parse(TEXTS[name])
    assert graph.to_text().splitlines()[1:] == EXPECTED[name].strip("\n").splitlines()


def test_spans_point_back_into_the_source():
    text = TEXTS["math-3"]
    graph = PARSER.parse(text)
    covered = {text[n.span[0] : n.span[1]] for n in graph.nodes if n.kind == "word"}
    assert {"Find", "all", "which", "every", "between", "inclusive"} <= covered
    math_spans = [text[n.span[0] : n.span[1]] for n in graph.nodes if n.kind == "math"]
    assert math_spans[:2] == ["$y \\in [0,\\pi]$", "\\[\\sin(x+y)\\leq \\sin(x)+\\sin(y)\\]"]
    interval = next(n for n in graph.nodes if n.label == "[]")
    assert text[interval.span[0] : interval.span[1]] == "[0,\\pi]"
    assert [f.delimiter for f in graph.formulas] == ["$", "\\[", "$", "$", "$"]


def test_formula_nodes_follow_their_sentence_and_keep_preorder():
    graph = PARSER.parse(TEXTS["math-1"])
    sentence_of_math = {n.formula: n.sentence for n in graph.nodes if n.kind == "math"}
    assert sentence_of_math == {0: 0, 1: 0, 2: 0, 3: 0, 4: 1}
    for index in range(len(graph.formulas)):
        ids = [n.id for n in graph.nodes if n.kind == "formula" and n.formula == index]
        assert ids == list(range(ids[0], ids[0] + len(ids)))  # contiguous, root first
        math_node = next(n for n in graph.nodes if n.kind == "math" and n.formula == index)
        assert (math_node.id, "math", ids[0]) in graph.triplets()


class DroppingParser:
    """A back end that loses every token: formulas must still reach the graph."""

    name, model = "fake", "drops everything"

    def parse_many(self, texts, batch_size=64):
        return [[] for _ in texts]


def test_formula_without_a_placeholder_token_hangs_from_root(caplog):
    graph = ProblemParser(DroppingParser()).parse("Solve $x+1=2$ now.")
    assert [(n.kind, n.label) for n in graph.nodes] == [
        ("root", "[ROOT]"),
        ("math", "[MATH]"),
        ("formula", "="),
        ("formula", "+"),
        ("formula", "x"),
        ("formula", "1"),
        ("formula", "2"),
    ]
    assert graph.triplets()[:2] == [(0, "root", 1), (1, "math", 2)]
    assert graph.parser == "fake"
    assert "no placeholder token" in caplog.text


def test_the_text_view_says_why_a_formula_is_partial():
    lines = PARSER.parse("Find $\\frac{1}{$ now.").to_text().splitlines()
    assert lines[1] == "formula 0: '\\\\frac{1}{' [partial: missing argument 2 of \\frac; unclosed '{']"
