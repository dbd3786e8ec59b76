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
