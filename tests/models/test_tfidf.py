"""TF-IDF models on small hand-made data: they learn what is learnable, and survive save -> load without pickle;
on real sample problems they predict what scikit-learn predicts, and they predict without importing it."""

import json
import random
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from mathgraph.models.tfidf import LOGREG_DEFAULTS, VECTORIZER_DEFAULTS, TfidfClassifier, TfidfRanker
from mathgraph.models.tfidf_features import TfidfFeatures
from mathgraph.registry import load
from mathgraph.samples import DATA_DIR, sample_problems
from mathgraph.tasks.training.tfidf import evaluate_tfidf, train_tfidf

TOPICS = {
    "geometry": ["triangle", "circle", "radius", "angle", "polygon", "area", "perimeter", "hypotenuse"],
    "probability": ["coin", "dice", "probability", "random", "marbles", "chosen", "outcomes", "expected"],
    "number_theory": ["prime", "divisor", "remainder", "modulo", "integer", "gcd", "factor", "digits"],
}


def topic_text(rng, topic):
    words = rng.sample(TOPICS[topic], 4) + rng.sample(["the", "of", "a", "find", "what", "is", "$x$", "value"], 3)
    rng.shuffle(words)
    return " ".join(words)


def kpc_rows(n, seed):
    rng = random.Random(seed)
    return [{"problem": topic_text(rng, topic), "subject": topic} for _ in range(n) for topic in TOPICS]


def same_or_different_pairs(n, seed):
    """label 1: b is a (shuffled) rewording of a on the same topic with the same key words; 0: another topic."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        topic, other = rng.sample(sorted(TOPICS), 2)
        a = topic_text(rng, topic)
        words = a.split()
        rng.shuffle(words)
        same = i % 2 == 0
        b = " ".join(words) if same else topic_text(rng, other)
        rows.append({"id": str(i), "group": str(i), "text_a": a, "text_b": b, "label": int(same)})
    return rows


@pytest.fixture(scope="module")
def kpc_model():
    return train_tfidf("kpc", kpc_rows(20, seed=0))


def test_kpc_separable_texts_held_out_accuracy_is_one(kpc_model):
    metrics = evaluate_tfidf("kpc", kpc_model, kpc_rows(10, seed=1))
    assert metrics == {"accuracy": 1.0, "macro_f1": 1.0, "n": 30}
    assert kpc_model.classes_ == sorted(TOPICS)


def test_pair_classifier_learns_same_vs_different():
    model = train_tfidf("qam", same_or_different_pairs(200, seed=0))
    metrics = evaluate_tfidf("qam", model, same_or_different_pairs(60, seed=1))
    assert metrics["accuracy"] >= 0.95
    assert model.predict([("prime divisor gcd", "gcd prime divisor"), ("prime divisor gcd", "circle angle area")]) == [
        1,
        0,
    ]


def test_ranker_puts_lexically_identical_candidate_first():
    rows = kpc_rows(5, seed=0)
    ranker = TfidfRanker().fit([row["problem"] for row in rows])
    query = rows[4]["problem"]
    candidates = [rows[0]["problem"], rows[1]["problem"], query, rows[2]["problem"]]
    assert ranker.rank(query, candidates)[0] == 2
    assert ranker.score(query, candidates)[2] == pytest.approx(1.0)


def test_sqr_train_and_evaluate():
    rng = random.Random(0)
    rows = []
    for i, topic in enumerate(TOPICS):
        others = [t for t in TOPICS if t != topic]
        candidates = [topic_text(rng, topic) for _ in range(2)] + [topic_text(rng, t) for t in others for _ in range(2)]
        rows.append(
            {
                "id": str(i),
                "group": str(i),
                "query": topic_text(rng, topic),
                "candidates": candidates,
                "relevance": [2, 2, 0, 0, 0, 0],
            }
        )
    model = train_tfidf("sqr", rows)
    metrics = evaluate_tfidf("sqr", model, rows, ks=(1, 3))
    assert set(metrics) == {"hr@1", "ndcg@1", "hr@3", "ndcg@3", "map", "n"}
    assert metrics["hr@1"] == 1.0 and metrics["n"] == 3
    # the old format (indices of the relevant candidates) reads as relevance 2 there
    old = [{k: v for k, v in row.items() if k != "relevance"} | {"relevant": [0, 1]} for row in rows]
    assert evaluate_tfidf("sqr", model, old, ks=(1, 3)) == metrics
    # graded: a relevance-1 candidate is a gain for NDCG but not a hit
    graded = [row | {"relevance": [1, 1, 2, 0, 0, 0]} for row in rows]
    assert evaluate_tfidf("sqr", model, graded, ks=(1,))["hr@1"] < 1.0
    with pytest.raises(ValueError, match="row '0': .*no candidate of relevance 2"):
        evaluate_tfidf("sqr", model, [rows[0] | {"relevance": [1, 1, 0, 0, 0, 0]}])


def assert_no_pickle(directory):
    for path in (p for p in directory.rglob("*") if p.is_file()):
        assert path.suffix not in {".pkl", ".pickle", ".joblib", ".pt", ".bin"}
        assert not path.read_bytes().startswith(b"\x80"), f"{path} looks like a pickle"


def test_classifier_save_load_identical_predictions(kpc_model, tmp_path):
    kpc_model.save_pretrained(tmp_path / "kpc")
    assert sorted(p.name for p in (tmp_path / "kpc").iterdir()) == ["arrays.safetensors", "config.json"]
    assert_no_pickle(tmp_path)
    loaded = TfidfClassifier.from_pretrained(tmp_path / "kpc")
    texts = [row["problem"] for row in kpc_rows(10, seed=2)] + ["an unseen sentence with no topic words"]
    assert loaded.predict(texts) == kpc_model.predict(texts)
    assert loaded.predict_proba(texts) == pytest.approx(kpc_model.predict_proba(texts), abs=1e-12)
    assert isinstance(load(tmp_path / "kpc"), TfidfClassifier)


def test_pair_classifier_with_string_labels_save_load(tmp_path):
    rows = same_or_different_pairs(60, seed=0)
    for row in rows:
        row["label"] = "same" if row["label"] else "irrelevant"
    model = train_tfidf("qrc", rows)
    model.save_pretrained(tmp_path / "qrc")
    assert_no_pickle(tmp_path)
    loaded = load(tmp_path / "qrc")
    pairs = [(row["text_a"], row["text_b"]) for row in same_or_different_pairs(20, seed=3)]
    assert loaded.kind == "pair"
    assert loaded.predict(pairs) == model.predict(pairs)
    assert set(loaded.predict(pairs)) <= {"same", "irrelevant"}


def test_ranker_save_load_identical_scores(tmp_path):
    texts = [row["problem"] for row in kpc_rows(5, seed=0)]
    ranker = TfidfRanker().fit(texts)
    ranker.save_pretrained(tmp_path / "sqr")
    assert_no_pickle(tmp_path)
    loaded = load(tmp_path / "sqr")
    assert isinstance(loaded, TfidfRanker)
    assert loaded.score(texts[0], texts[1:]) == pytest.approx(ranker.score(texts[0], texts[1:]), abs=1e-12)
    with pytest.raises(ValueError, match="tfidf_ranker"):
        TfidfClassifier.from_pretrained(tmp_path / "sqr")


def test_config_is_plain_json(kpc_model, tmp_path):
    kpc_model.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["model"] == "tfidf_classifier" and config["kind"] == "single"
    assert config["terms"] == kpc_model.features.terms


def test_errors():
    with pytest.raises(ValueError, match="unknown task"):
        train_tfidf("xyz", [])
    with pytest.raises(ValueError, match="no rows"):
        train_tfidf("kpc", [])
    with pytest.raises(ValueError, match=r"every example has the label \['x'\]; a classifier needs two or more"):
        TfidfClassifier().fit(["a b", "c d"], ["x", "x"])
    with pytest.raises(ValueError, match="2 inputs but 1"):
        TfidfClassifier().fit(["a b", "c d"], ["x"])
    with pytest.raises(ValueError, match="kind"):
        TfidfClassifier("triple")
    with pytest.raises(ValueError, match="field 'text_a'"):
        train_tfidf("qrc", [{"text_b": "x", "label": 1}])
    with pytest.raises(ValueError, match="pair"):
        TfidfClassifier("pair").fit([("a", "b", "c"), ("a", "b", "c")], [0, 1])


# texts that are empty after tokenization (white space; CJK, which the math token pattern does not match),
# accents, other scripts, numbers, LaTeX, one symbol
EDGE_TEXTS = [
    "",
    "  \n\t ",
    "数学问题",
    "Ünïcödé façade: x² − y² ≥ 0, α→β",
    "Числа ٣ and 3.14159 and 1,000,000",
    r"\frac{a}{b} + \sqrt{x^2} = \left(\alpha_1\right)^{46} \pmod{7}",
    "$",
]


def sample_rows(name):
    with open(DATA_DIR / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def sample_texts():
    return [row["problem"] for row in sample_problems()] + [
        row["question"] for row in sample_rows("gsmplus_sample.jsonl")
    ]


def assert_same_probabilities(model, reference, inputs):
    probabilities = model.predict_proba(inputs)
    assert np.abs(probabilities - reference.predict_proba(inputs)).max() < 1e-9
    assert model.predict(inputs) == reference.predict(inputs).tolist()
    assert (probabilities.argmax(axis=1) == reference.predict_proba(inputs).argmax(axis=1)).all()


def test_kpc_predicts_what_scikit_learn_predicts_on_sample_problems(tmp_path):
    rows = sample_rows("kpc_sample.jsonl")
    texts, labels = [row["problem"] for row in rows], [row["subject"] for row in rows]
    vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS)
    logreg = LogisticRegression(**LOGREG_DEFAULTS).fit(vectorizer.fit_transform(texts), labels)
    reference = _Pipeline(vectorizer.transform, logreg)
    model = TfidfClassifier().fit(texts, labels)
    model.save_pretrained(tmp_path)
    loaded = TfidfClassifier.from_pretrained(tmp_path)
    assert len(model.classes_) == 7 and np.array_equal(model.coef_, logreg.coef_)  # the same fit
    inputs = texts[:20] + sample_texts() + EDGE_TEXTS
    assert_same_probabilities(model, reference, inputs)
    assert_same_probabilities(loaded, reference, inputs)


def test_qam_pairs_predict_what_scikit_learn_predicts_on_sample_problems():
    rows = [row for row in sample_problems() if "solution" in row] + [
        {"problem": row["question"], "solution": row["solution"]} for row in sample_rows("gsmplus_sample.jsonl")
    ]
    solutions = [row["solution"] for row in rows[:8]]
    pairs = [(row["problem"], solution) for row in rows for solution in solutions]
    labels = [int(solution == row["solution"]) for row in rows for solution in solutions]
    vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS).fit([text for pair in pairs for text in pair])

    def features(inputs):
        va, vb = (vectorizer.transform([pair[i] for pair in inputs]) for i in (0, 1))
        return sp.hstack([va, vb, abs(va - vb), va.multiply(vb)], format="csr")

    logreg = LogisticRegression(**LOGREG_DEFAULTS).fit(features(pairs), labels)
    model = TfidfClassifier("pair").fit(pairs, labels)
    assert model.classes_ == [0, 1] and np.array_equal(model.coef_, logreg.coef_)
    edge_pairs = [(a, b) for a in EDGE_TEXTS for b in EDGE_TEXTS + sample_texts()[:3]]
    assert_same_probabilities(model, _Pipeline(features, logreg), pairs[:30] + edge_pairs)


def test_sqr_scores_are_scikit_learns_cosines_on_sample_problems(tmp_path):
    texts = sample_texts()
    vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS).fit(texts)
    TfidfRanker().fit(texts).save_pretrained(tmp_path)
    ranker = TfidfRanker.from_pretrained(tmp_path)
    for query in texts[:10] + EDGE_TEXTS:
        candidates = texts + EDGE_TEXTS
        vectors = vectorizer.transform([query, *candidates])
        expected = (vectors[1:] @ vectors[0].T).toarray().ravel()
        assert np.abs(ranker.score(query, candidates) - expected).max() < 1e-9
        assert ranker.rank(query, candidates) == np.argsort(-expected, kind="stable").tolist()


@pytest.mark.parametrize(
    "options",
    [
        {"ngram_range": (1, 3), "stop_words": ["the", "of", "is"], "norm": "l1", "binary": True},
        {"strip_accents": "unicode", "lowercase": False, "sublinear_tf": False},
        {"strip_accents": "ascii", "stop_words": "english", "norm": None},
        {"analyzer": "char_wb", "ngram_range": (2, 4)},
        {"analyzer": "char", "ngram_range": (1, 3), "sublinear_tf": True},
        {"token_pattern": r"(\w)\w*", "ngram_range": (2, 2)},
    ],
)
def test_features_are_scikit_learns_transform_for_other_vectorizer_options(options):
    texts = sample_texts() + ["Ünïcödé façade café naïve", "the of is the of"]
    vectorizer = TfidfVectorizer(**options).fit(texts)
    terms = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get)
    features = TfidfFeatures(options, terms, vectorizer.idf_)
    expected = vectorizer.transform(texts + EDGE_TEXTS)
    for i, row in enumerate(features.transform(texts + EDGE_TEXTS)):
        dense = np.zeros(len(terms))
        dense[row.columns] = row.values
        assert np.abs(dense - expected[[i]].toarray().ravel()).max() < 1e-12


def test_options_it_does_not_compute_are_refused():
    with pytest.raises(ValueError, match=r"\['tokenizer'\] are not computed"):
        TfidfFeatures({"tokenizer": "split"}, ["a"], np.ones(1))
    with pytest.raises(ValueError, match="use_idf=False"):
        TfidfFeatures({"use_idf": False}, ["a"], np.ones(1))


def test_shipped_model_loads_and_predicts_without_scikit_learn_or_torch():
    script = """
import sys
from mathgraph.models.package import ModelPackage
from mathgraph.models.tfidf import TfidfModel, TfidfPredictor
from mathgraph.registry import SHIPPED_DIR

package = ModelPackage(SHIPPED_DIR)
[result] = package.tfidf("kpc").predict(["Find $x$ if $2x+3=7$."])
assert result["label"] in result["probabilities"]
model = TfidfModel.from_pretrained(SHIPPED_DIR / "tfidf" / "sqr")
[ranked] = TfidfPredictor("sqr", model).predict([("Find $x$.", ["Find $y$.", "A circle."])])
assert ranked["ranking"] == [0, 1]
print(sorted(name for name in ("sklearn", "torch", "scipy") if name in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]"]


class _Pipeline:
    """scikit-learn's prediction: ``features`` (texts -> sparse rows), then the fitted ``logreg``."""

    def __init__(self, features, logreg):
        self.features, self.logreg = features, logreg

    def predict(self, inputs):
        return self.logreg.predict(self.features(inputs))

    def predict_proba(self, inputs):
        return self.logreg.predict_proba(self.features(inputs))
