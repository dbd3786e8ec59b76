"""TF-IDF fitted in NumPy (``TfidfFeatures.fit``) and its column-indexed matrix (``ColumnMatrix``): the terms, idf
weights and dot products scikit-learn's ``TfidfVectorizer`` gives on the same documents, and the hand-computed idf
of a tiny corpus."""

import math

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from mathgraph.models.tfidf import VECTORIZER_DEFAULTS
from mathgraph.models.tfidf_features import ColumnMatrix, TfidfFeatures
from mathgraph.samples import sample_problems

TEXTS = [row["problem"] for row in sample_problems()]


def test_idf_by_hand():
    features = TfidfFeatures.fit(["apples and pears", "apples", "plums"], {})
    assert features.terms == ["and", "apples", "pears", "plums"]
    # smooth idf: log((1 + n) / (1 + df)) + 1 with n = 3 documents
    expected = [math.log(4 / 2) + 1, math.log(4 / 3) + 1, math.log(4 / 2) + 1, math.log(4 / 2) + 1]
    assert np.allclose(features.idf, expected)


@pytest.mark.parametrize(
    "options",
    [VECTORIZER_DEFAULTS, {"min_df": 2}, {"max_df": 0.5, "smooth_idf": False}, {"max_features": 40, "norm": "l1"}],
    ids=["defaults", "min_df", "max_df", "max_features"],
)
def test_fit_and_dot_products_are_scikit_learns(options):
    vectorizer = TfidfVectorizer(**options)
    matrix = vectorizer.fit_transform(TEXTS)
    features = TfidfFeatures.fit(TEXTS, options)
    if "max_features" not in options:  # terms tied at the cut may be chosen otherwise
        assert features.terms == list(vectorizer.get_feature_names_out())
        assert np.allclose(features.idf, vectorizer.idf_)
    assert len(features) == len(vectorizer.vocabulary_)
    columns = ColumnMatrix(features.transform(TEXTS), len(features))
    queries, expected = features.transform(TEXTS[:3]), vectorizer.transform(TEXTS[:3])
    for i in range(3):
        if "max_features" in options:
            break
        assert np.allclose(columns.dot(queries[i]), (expected[i] @ matrix.T).toarray().ravel())
        assert np.allclose(columns.dot(queries[i], [4, 0, 2]), (expected[i] @ matrix[[4, 0, 2]].T).toarray().ravel())


def test_token_bags_with_a_callable_analyzer():
    bags = [text.split() for text in TEXTS]
    vectorizer = TfidfVectorizer(analyzer=lambda bag: bag, sublinear_tf=True)
    matrix = vectorizer.fit_transform(bags)
    features = TfidfFeatures.fit(bags, {"sublinear_tf": True}, analyze=lambda bag: bag)
    assert features.terms == list(vectorizer.get_feature_names_out())
    columns = ColumnMatrix(features.transform(bags), len(features))
    assert np.allclose(
        columns.dot(features.transform_one(bags[1])), (vectorizer.transform([bags[1]]) @ matrix.T).toarray()
    )


def test_nothing_to_fit_is_a_clear_error():
    with pytest.raises(ValueError, match="at least one document"):
        TfidfFeatures.fit([], {})
    with pytest.raises(ValueError, match="no term is left"):
        TfidfFeatures.fit(["a b", "c"], {"min_df": 5})
