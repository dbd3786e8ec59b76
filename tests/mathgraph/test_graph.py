"""MathSyntaxGraph schema, exports and vocabularies, on a hand-built graph."""

import json

import pytest
import torch

from mathgraph.draw import (
    ERROR_COLOUR,
    KIND_COLOURS,
    MAX_COLUMNS,
    graph_layout,
    picture_size,
    tree_layout,
    wrapped_layout,
)
from mathgraph.graph import (
    SCHEMA_VERSION,
    Edge,
    FormulaRecord,
    GraphFormatError,
    GraphVocabulary,
    MathSyntaxGraph,
    Node,
    reverse_relation,
)
from mathgraph.vocab import Vocabulary

TEXT = "Solve $x+1=2$."


def hand_graph() -> MathSyntaxGraph:
    """ROOT -> solve -(dobj)-> [MATH] -(math)-> = (+ (x, 1), 2), solve -(punct)-> ."""
    nodes = (
        Node(0, "root", "[ROOT]"),
        Node(1, "word", "solve", span=(0, 5), lemma="solve", upos="VERB", sentence=0),
        Node(2, "math", "[MATH]", span=(6, 13), upos="NOUN", sentence=0, formula=0),
        Node(3, "word", ".", span=(13, 14), lemma=".", upos="PUNCT", sentence=0),
        Node(4, "formula", "=", span=(10, 11), opt_type="U", formula=0),
        Node(5, "formula", "+", span=(8, 9), opt_type="U", formula=0),
        Node(6, "formula", "x", span=(7, 8), opt_type="V", formula=0),
        Node(7, "formula", "1", span=(9, 10), opt_type="N", formula=0),
        Node(8, "formula", "2", span=(11, 12), opt_type="N", formula=0),
    )
    edges = (
        Edge(0, 1, "root"),
        Edge(1, 2, "dep:dobj"),
        Edge(1, 3, "dep:punct"),
        Edge(2, 4, "math"),
        Edge(4, 5, "opt:arg0"),
        Edge(4, 8, "opt:arg1"),
        Edge(5, 6, "opt:arg0"),
        Edge(5, 7, "opt:arg1"),
    )
    return MathSyntaxGraph(TEXT, nodes, edges, (FormulaRecord("x+1=2", (6, 13), "ok"),), parser="spacy")


def test_triplets_follow_edges():
    graph = hand_graph()
    assert graph.triplets()[:3] == [(0, "root", 1), (1, "dep:dobj", 2), (1, "dep:punct", 3)]
    assert ("[MATH]", "math", "=") in graph.labelled_triplets()
    assert ("+", "opt:arg1", "1") in graph.labelled_triplets()
    assert len(graph.triplets()) == graph.num_nodes - 1  # a tree


def test_dict_round_trip_is_exact_and_json_safe():
    graph = hand_graph()
    data = json.loads(json.dumps(graph.to_dict()))
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["formulas"] == [{"latex": "x+1=2", "span": [6, 13], "status": "ok", "delimiter": "$", "errors": []}]
    assert data["nodes"][2] == {
        "id": 2,
        "kind": "math",
        "label": "[MATH]",
        "span": [6, 13],
        "upos": "NOUN",
        "sentence": 0,
        "formula": 0,
    }
    assert MathSyntaxGraph.from_dict(data) == graph
    assert MathSyntaxGraph.from_json(graph.to_json()) == graph


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(schema_version=99), "schema_version"),
        (lambda d: d.pop("nodes"), "malformed graph"),
        (lambda d: d["edges"].append({"src": 0, "dst": 42, "relation": "root"}), "outside"),
        (lambda d: d["edges"].append({"src": 3, "dst": 5, "relation": "dep:x"}), "tree"),
        (lambda d: d["nodes"][1].update(kind="verb"), "unknown kind"),
        (lambda d: d["formulas"][0].update(status="fine"), "status"),
        (lambda d: d["nodes"][4].update(formula=3), "formula 3"),
    ],
)
def test_from_dict_rejects_malformed_graphs(mutate, message):
    data = hand_graph().to_dict()
    mutate(data)
    with pytest.raises(GraphFormatError, match=message):
        MathSyntaxGraph.from_dict(data)


def test_from_json_rejects_non_json():
    with pytest.raises(GraphFormatError, match="not JSON"):
        MathSyntaxGraph.from_json("{nodes: 1")


def test_to_networkx_keeps_attributes():
    nx_graph = hand_graph().to_networkx()
    assert nx_graph.number_of_nodes() == 9 and nx_graph.number_of_edges() == 8
    assert nx_graph.nodes[4]["opt_type"] == "U"
    assert nx_graph.edges[2, 4]["relation"] == "math"


def test_vocabulary_ids_are_deterministic_and_cut_by_frequency():
    vocab = Vocabulary.build({"b": 2, "a": 2, "c": 5, "d": 1}, min_freq=2)
    assert vocab.tokens == ("[PAD]", "[UNK]", "c", "a", "b")
    assert vocab["d"] == vocab.unk_id == 1 and vocab.pad_id == 0
    assert Vocabulary.build(["c", "a", "b", "c", "a", "b", "c", "c", "c", "d"], min_freq=2) == vocab
    with pytest.raises(ValueError, match="min_freq"):
        Vocabulary.build({"a": 1}, min_freq=0)


def test_graph_vocabulary_round_trip(tmp_path):
    vocab = GraphVocabulary.build([hand_graph(), hand_graph()], min_freq=1)
    assert vocab.relations.tokens[2:6] == ("opt:arg0", "rev:opt:arg0", "opt:arg1", "rev:opt:arg1")
    vocab.save_pretrained(tmp_path)
    assert GraphVocabulary.from_pretrained(tmp_path) == vocab
    # Labels seen once per graph are dropped by a cut-off of 3.
    assert "solve" not in GraphVocabulary.build([hand_graph(), hand_graph()], min_freq=3).labels


def test_to_pyg_has_both_directions_with_typed_reverses():
    graph = hand_graph()
    vocab = GraphVocabulary.build([graph], min_freq=1)
    data = graph.to_pyg(vocab)
    assert data.num_nodes == 9
    assert data.x.tolist() == vocab.labels.lookup(n.label for n in graph.nodes)
    assert data.node_kind.tolist() == [0, 1, 2, 1, 3, 3, 3, 3, 3]
    assert data.edge_index.shape == (2, 16) and data.edge_type.shape == (16,)
    pairs = set(map(tuple, data.edge_index.t().tolist()))
    assert all((e.src, e.dst) in pairs and (e.dst, e.src) in pairs for e in graph.edges)
    # Edge 1 is solve -dobj-> [MATH]; its reverse sits at 8 + 1.
    assert data.edge_index[:, 9].tolist() == [2, 1]
    assert vocab.relations.tokens[data.edge_type[1]] == "dep:dobj"
    assert vocab.relations.tokens[data.edge_type[9]] == reverse_relation("dep:dobj")
    assert data.x.dtype == data.edge_index.dtype == torch.long
    # Ids do not depend on the order graphs were seen in.
    again = GraphVocabulary.build([graph], min_freq=1)
    assert torch.equal(graph.to_pyg(again).x, data.x)


def test_tree_layout_centres_parents_over_children():
    positions = tree_layout(hand_graph())
    # Leaves left to right in source order: solve's subtree x (7), 1 (9), 2 (11), then "." (13).
    assert [positions[i][0] for i in (6, 7, 8, 3)] == [0, 1, 2, 3]
    assert positions[5] == (0.5, -4)  # root 0, solve 1, [MATH] 2, = 3, + 4
    assert positions[4][0] == (0.5 + 2) / 2
    assert positions[0][1] == 0 and positions[1][1] == -1


def test_graph_layout_is_the_drawing_as_json():
    graph = hand_graph()
    layout = graph_layout(graph)
    positions = tree_layout(graph)
    assert [(n["id"], n["x"], n["y"]) for n in layout["nodes"]] == [(i, *positions[i]) for i in range(9)]
    assert [n["colour"] for n in layout["nodes"][:5]] == [
        KIND_COLOURS[k] for k in ("root", "word", "math", "word", "formula")
    ]
    assert "span" not in layout["nodes"][0] and layout["nodes"][2]["span"] == [6, 13]
    assert layout["edges"][1] == {"src": 1, "dst": 2, "relation": "dep:dobj"}
    broken = MathSyntaxGraph(
        TEXT,
        graph.nodes[:8] + (Node(8, "formula", "?", span=(11, 12), opt_type="E", formula=0),),
        graph.edges,
        graph.formulas,
    )
    assert graph_layout(broken)["nodes"][8]["colour"] == ERROR_COLOUR


def test_picture_size_grows_with_the_tree_within_bounds():
    # 4 leaf columns and 6 levels: 0.85 * 4 = 3.4 -> at least 6 wide; 1.1 * 6 = 6.6 high
    assert picture_size(hand_graph()) == pytest.approx((6.0, 6.6))


def wide_graph(sentences: int = 6, words: int = 9) -> MathSyntaxGraph:
    """ROOT -> one verb per sentence -> ``words`` leaves each: ``sentences * words`` leaf columns in one row."""
    nodes, edges, position = [Node(0, "root", "[ROOT]")], [], 0
    for sentence in range(sentences):
        verb = len(nodes)
        nodes.append(Node(verb, "word", f"verb{sentence}", span=(position, position + 1), sentence=sentence))
        edges.append(Edge(0, verb, "root"))
        for word in range(words):
            position += 2
            nodes.append(Node(len(nodes), "word", f"word{word}", span=(position, position + 1), sentence=sentence))
            edges.append(Edge(verb, len(nodes) - 1, "dep:dobj"))
        position += 2
    return MathSyntaxGraph("x " * position, tuple(nodes), tuple(edges), ())


def test_a_tree_that_fits_is_laid_out_as_tree_layout():
    layout = wrapped_layout(hand_graph())
    positions = tree_layout(hand_graph())
    assert not any(box.continued for box in layout.boxes)
    assert {box.node: (box.x, box.y) for box in layout.boxes} == positions
    assert (layout.width, layout.height) == (4, 6)


@pytest.mark.parametrize("max_columns", [MAX_COLUMNS, 10, 4, 1])
def test_a_wide_tree_wraps_into_rows_without_overlapping_boxes(max_columns):
    graph = wide_graph()  # 54 leaf columns in one row
    assert max(x for x, _ in tree_layout(graph).values()) + 1 == 54
    layout = wrapped_layout(graph, max_columns)
    assert layout.width <= max(max_columns, 1) and any(box.continued for box in layout.boxes)
    assert sorted(box.node for box in layout.boxes if not box.continued) == list(range(graph.num_nodes))
    parents = {edge.src for edge in graph.edges}
    assert {box.node for box in layout.boxes if box.continued} <= parents  # only a node with children repeats
    # every edge is drawn once, from a box of its parent to its child's box
    drawn = sorted((layout.boxes[a].node, layout.boxes[b].node, r) for a, b, r in layout.edges)
    assert drawn == sorted((e.src, e.dst, e.relation) for e in graph.edges)
    for i, a in enumerate(layout.boxes):
        for b in layout.boxes[i + 1 :]:
            assert abs(a.y - b.y) > 0.999 or abs(a.x - b.x) > 0.999, (a, b)  # a label's column is its own


def test_a_long_problem_draws_at_most_2500_pixels_wide(tmp_path):
    """The drawing of a long problem was once over 5,000 px wide with overlapping labels."""
    from matplotlib import image

    path = tmp_path / "wide.png"
    figure = wide_graph().draw(path)
    height, width = image.imread(path).shape[:2]
    assert width <= 2500 and height < 2 * 2500
    assert picture_size(wide_graph())[0] <= 16
    assert "continued: more children" in {t.get_text() for t in figure.axes[0].get_legend().get_texts()}


@pytest.mark.slow
def test_a_600_character_problem_draws_at_most_2500_pixels_wide(tmp_path):
    """The longest problem of the bundled GSM-Plus sample (573 characters, 7 sentences), parsed and drawn."""
    from matplotlib import image

    from mathgraph import parse_problem
    from mathgraph.samples import SAMPLE_PATH

    rows = [json.loads(line) for line in (SAMPLE_PATH.parent / "gsmplus_sample.jsonl").read_text().splitlines()]
    text = max((row["question"] for row in rows), key=len)
    assert len(text) > 550
    path = tmp_path / "long.png"
    parse_problem(text).draw(path)
    assert image.imread(path).shape[1] <= 2500


def test_draw_writes_a_picture(tmp_path):
    path = tmp_path / "graph.png"
    figure = hand_graph().draw(path)
    assert path.stat().st_size > 5_000
    texts = {t.get_text() for t in figure.axes[0].texts}
    assert {"solve", "[MATH]", "dobj", "arg0", "math"} <= texts
