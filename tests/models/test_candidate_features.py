"""The features no shipped model reads yet (``CANDIDATE_FEATURES``): values against hand counts, and the features
of this release (``available_features``) untouched by them."""

import numpy as np
import pytest

from mathgraph.models.alignment_features import (
    CANDIDATE_FEATURES,
    STEP_FINDING_FEATURES,
    available_features,
    candidate_features,
)
from mathgraph.parsers.problem import ProblemParser
from mathgraph.parsers.solution import SOLUTION_FEATURES, SOLUTION_GRAPH_FEATURES
from mathgraph.parsers.solution_fit import FIT_FEATURES

PARSER = ProblemParser("spacy")
HALF = "Jo has 12 apples. Sam has half as many apples as Jo. How many apples do they have together?"
READING = "Jo reads 30 pages an hour. How many minutes does it take her to read 45 pages?"


def parse(texts):
    return [PARSER.parse(t) for t in texts]


def named(row):
    return dict(zip(CANDIDATE_FEATURES, row.tolist()))


def test_the_newest_finding_kinds_against_hand_counts():
    pairs = [
        (HALF, "Sam has 12 * 2 = 24 apples.\n24 + 12 = 36\n#### 36"),  # half as many computed as twice
        (HALF, "Sam has 12 / 2 = 6 apples.\n6 + 12 = 18\n#### 18"),
        (READING, "She needs 45 / 30 = 1.5 hours.\n#### 1.5"),  # minutes asked, hours given
        (READING, "She needs 45 / 30 * 60 = 90 minutes.\n#### 90"),
    ]
    rows = [named(row) for row in candidate_features(pairs, parse)]
    assert [r["findings_inverse_operation"] for r in rows] == [1.0, 0.0, 0.0, 0.0]
    assert [r["findings_answer_unit"] for r in rows] == [0.0, 0.0, 1.0, 0.0]
    # the 2 of "12 * 2" is the problem's "half" (an implied value of it): no constant without a cue
    assert [r["operands_constant_uncued"] for r in rows] == [0.0, 0.0, 0.0, 0.0]
    # 12 and half are both used in the first two; 30 and 45 in the last two
    assert [r["quantities_unmatched"] for r in rows] == [0.0, 0.0, 0.0, 0.0]


def test_candidates_are_the_new_kinds_then_the_fit_and_not_yet_available():
    assert CANDIDATE_FEATURES == ("findings_inverse_operation", "findings_answer_unit") + FIT_FEATURES
    # the features of this release, as its models were trained: the candidates are not among them
    assert available_features("solution") == SOLUTION_FEATURES + SOLUTION_GRAPH_FEATURES + STEP_FINDING_FEATURES
    assert not set(CANDIDATE_FEATURES) & set(available_features("solution"))
    assert candidate_features([], parse).shape == (0, len(CANDIDATE_FEATURES))
    with pytest.raises(ValueError, match="non-empty texts"):
        candidate_features([(HALF, " ")], parse)


def test_rows_are_those_of_each_pair_alone():
    pairs = [(HALF, "Sam has 12 / 2 = 6 apples.\n6 + 12 = 18\n#### 18"), (READING, "45 / 30 = 1.5 hours\n#### 1.5")]
    together = candidate_features(pairs, parse)
    assert np.array_equal(together, np.vstack([candidate_features([p], parse) for p in pairs]))
