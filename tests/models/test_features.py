"""``FeatureStore`` draws a parsing bar for a training set, not for the handful of inputs of a prediction
(``mathgraph serve`` would otherwise log a bar per request)."""

import pytest

from mathgraph.models.features import PROGRESS_MIN_TEXTS, FeatureStore


@pytest.mark.parametrize(
    "show_progress, texts, drawn",
    [
        (None, 2, False),
        (True, 2, True),
        (None, PROGRESS_MIN_TEXTS + 1, True),
        (False, PROGRESS_MIN_TEXTS + 1, False),
    ],
)
def test_the_parsing_bar_by_default_only_for_many_texts(tiny_encoder, terminal_stderr, show_progress, texts, drawn):
    problems = [f"Find $x$ if $x+{i}=0$." for i in range(texts)]
    store = FeatureStore(
        tiny_encoder.collator, problems, parser="spacy", graph_cache=False, show_progress=show_progress
    )
    assert len(store.features) == texts
    assert ("parsing:" in terminal_stderr.readouterr().err) == drawn


def test_a_store_built_from_given_graphs_parses_nothing(tiny_encoder, sample_graphs, monkeypatch):
    """``FeatureStore(..., graphs=ParsedGraphs)``: the graphs passed in are built as they are (the parser is
    never called) and give the features a store that parses builds; the alignment rows are those passed in."""
    from mathgraph.models.alignment_features import TRAINING_ROWS, AlignmentRows
    from mathgraph.parsers import graph_cache

    graphs = sample_graphs[:3]
    texts = [g.text for g in graphs]
    parsed_store = FeatureStore(tiny_encoder.collator, texts, parser=tiny_encoder.parser, graph_cache=False)
    given = graph_cache.ParsedGraphs(cache=None)
    given.add(texts, graphs, parser=tiny_encoder.parser)

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(graph_cache, "parse_problems", no_parsing)
    rows = AlignmentRows(limit=4)
    store = FeatureStore(tiny_encoder.collator, texts, parser=tiny_encoder.parser, graphs=given, alignment_rows=rows)
    built, expected = store.batch(texts).as_model_inputs(), parsed_store.batch(texts).as_model_inputs()
    assert built.keys() == expected.keys()
    for name in expected:
        assert built[name].tolist() == expected[name].tolist(), name
    assert store.alignment_rows is rows and parsed_store.alignment_rows is TRAINING_ROWS
    with pytest.raises(AssertionError, match="parsed"):  # a text the graphs do not hold is parsed
        store.add(["A text no graph was given for."])
