"""The English stop words that TF-IDF models read without scikit-learn are scikit-learn's."""

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as SKLEARN_STOP_WORDS
from sklearn.feature_extraction.text import TfidfVectorizer

from mathgraph.models.tfidf_features import ENGLISH_STOP_WORDS, TfidfFeatures


def test_the_stop_words_are_scikit_learns():
    assert ENGLISH_STOP_WORDS == SKLEARN_STOP_WORDS and len(ENGLISH_STOP_WORDS) == 318


def test_a_model_fitted_with_english_stop_words_transforms_as_scikit_learn_does():
    texts = ["The cat sat on the mat.", "A dog and the cat", "Find the sum of all of the numbers"]
    vectorizer = TfidfVectorizer(stop_words="english").fit(texts)
    assert "the" not in vectorizer.vocabulary_ and "cat" in vectorizer.vocabulary_
    terms = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get)
    features = TfidfFeatures({"stop_words": "english"}, terms, vectorizer.idf_)
    expected = vectorizer.transform(texts).toarray()
    for row, got in zip(expected, features.transform(texts)):
        dense = np.zeros(len(row))
        dense[got.columns] = got.values
        np.testing.assert_allclose(dense, row, rtol=0, atol=1e-12)
