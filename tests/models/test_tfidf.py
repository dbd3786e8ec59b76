"""TF-IDF models on small hand-made data: they learn what is learnable, and survive save -> load without pickle."""

import json
import random

import pytest

from mathgraph.models.tfidf import TfidfClassifier, TfidfRanker
from mathgraph.registry import load
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
    assert len(config["terms"]) == len(kpc_model.vectorizer.vocabulary_)


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
