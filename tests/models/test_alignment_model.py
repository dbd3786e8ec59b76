"""The alignment model: its tree walker equals scikit-learn, it learns relations, saves without pickle."""

import json

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from mathgraph.models.alignment_features import alignment_features, available_features
from mathgraph.models.alignment_model import AlignmentModel, _tree_arrays
from mathgraph.parsers.problem import ProblemParser
from mathgraph.registry import load, model_type

PARSER = ProblemParser("spacy")


def parse(texts):
    return [PARSER.parse(t) for t in texts]


@pytest.mark.parametrize("classes", [2, 4])
def test_tree_walker_gives_sklearn_probabilities(classes):
    rng = np.random.default_rng(0)
    features = rng.normal(size=(300, 6))
    features[rng.random(features.shape) < 0.05] = np.nan  # missing values take the learned side
    labels = (features[:, 0] > 0).astype(int) + (classes > 2) * (np.nan_to_num(features[:, 1]) > 0.5) * 2
    estimator = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(features, labels.astype(str))
    model = AlignmentModel("qrc")
    model.trees, model.labels = _tree_arrays(estimator), list(estimator.classes_)
    np.testing.assert_allclose(model.predict_proba(features), estimator.predict_proba(features), atol=1e-10)


SEED = "Tom has 12 apples. He buys 3 bags with 4 apples each. How many apples does he have now?"
VARIANTS = {
    "numerical substitution": "Tom has 15 apples. He buys 2 bags with 4 apples each. How many apples does he have now?",
    "distraction insertion": (
        "Tom has 12 apples. His sister has 7 pears. He buys 3 bags with 4 apples each. "
        "How many apples does he have now?"
    ),
    "irrelevant": "A train travels 60 miles in 2 hours. What is its speed?",
}


def qrc_data(copies: int):
    inputs, labels = [], []
    for k in range(copies):  # the same relations with other numbers
        seed = SEED.replace("12", str(12 + k))
        for label, variant in VARIANTS.items():
            inputs.append((seed, variant.replace("12", str(12 + k))))
            labels.append(label)
    return inputs, labels


def test_learns_relations_and_round_trips(tmp_path):
    inputs, labels = qrc_data(6)
    model = AlignmentModel("qrc", {"max_iter": 30, "min_samples_leaf": 2})
    model.parse = parse
    model.fit(inputs, labels)
    predicted = [r["label"] for r in model.predict(inputs)]
    assert predicted == labels
    model.save_pretrained(tmp_path / "m")
    assert model_type(tmp_path / "m") == "structure"
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["arrays.safetensors", "config.json"]
    again = load(tmp_path / "m")
    again.parse = parse
    assert again.predict(inputs[:3]) == model.predict(inputs[:3])


def test_sqr_ranks_by_expected_gain():
    lists = [
        (
            SEED.replace("12", str(12 + k)),
            [VARIANTS["irrelevant"], VARIANTS["numerical substitution"], VARIANTS["distraction insertion"]],
        )
        for k in range(6)
    ]
    model = AlignmentModel("sqr", {"max_iter": 30, "min_samples_leaf": 2})
    model.parse = parse
    model.fit(lists, [[0, 2, 1]] * 6)
    (result,) = model.predict(lists[:1])
    assert result["ranking"] == [1, 2, 0]
    query = lists[0][0]
    (with_itself,) = model.predict([(query, [VARIANTS["distraction insertion"], query])])
    assert with_itself["ranking"][0] == 1  # a problem is its own most similar problem


def test_qam_reads_the_solution_and_keeps_integer_labels(tmp_path):
    """QAM pairs a question with a solution: solution features, not the problems' alignment; labels stay 0/1."""

    inputs, labels = [], []
    for k in range(6):
        question = SEED.replace("12", str(12 + k))
        inputs += [
            (question, f"3 * 4 = 12. {12 + k} + 12 = {24 + k}. The answer is {24 + k}."),
            (question, "5 * 6 = 30. 30 + 7 = 37. The answer is 37."),
        ]
        labels += [1, 0]
    model = AlignmentModel("qam", {"max_iter": 30, "min_samples_leaf": 2})
    model.parse = parse
    model.fit(inputs, labels)
    assert model.labels == [0, 1]
    assert [r["label"] for r in model.predict(inputs)] == labels
    model.save_pretrained(tmp_path / "m")
    again = load(tmp_path / "m")
    assert again.labels == [0, 1] and again.aligned_with == "solution"
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert len(again.trees["baseline"]) == 1
    assert tuple(config["features"]) == available_features("solution")  # the solution graph's and step findings too
    assert [r["label"] for r in again.predict(inputs)] == labels


def test_a_model_saved_with_fewer_features_loads_and_reads_only_those(tmp_path):
    """The shipped QAM alignment model was fitted on the 17 solution features alone: it keeps loading, and
    predicts from those columns; a feature this mathgraph does not compute is a clear error."""
    from mathgraph.parsers.solution import SOLUTION_FEATURES, SOLUTION_GRAPH_FEATURES, solution_graph_features

    pairs = [(SEED, "3 * 4 = 12. 12 + 12 = 24. The answer is 24.")]
    full = alignment_features("solution", pairs, parse, names=None)
    assert full.shape == (1, len(SOLUTION_FEATURES))
    picked = alignment_features("solution", pairs, parse, names=["final_answer_found", "answer_follows"])
    assert picked.tolist() == [[1.0, 1.0]]  # "The answer is 24" is found, and step 2 computed it
    with pytest.raises(ValueError, match="unknown solution alignment features"):
        alignment_features("solution", pairs, parse, names=["no_such_feature"])
    # every feature has a name of its own, so each column can be picked: the graph's are the graph's
    assert len(set(available_features("solution"))) == len(available_features("solution"))
    graph_columns = alignment_features("solution", pairs, parse, names=SOLUTION_GRAPH_FEATURES)
    expected = solution_graph_features(parse([SEED])[0], pairs[0][1])
    assert graph_columns.tolist() == [[expected[name] for name in SOLUTION_GRAPH_FEATURES]]
    model = AlignmentModel("qam", {"max_iter": 5, "min_samples_leaf": 1})
    model.parse = parse
    model.fit(pairs * 2 + [(SEED, "5 * 6 = 30. The answer is 30.")] * 2, [1, 1, 0, 0])
    model.save_pretrained(tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    config["features"] = list(SOLUTION_FEATURES)  # as the shipped model's config says
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    assert load(tmp_path / "m").features == SOLUTION_FEATURES
    config["features"] = ["no_such_feature"]
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="other alignment features"):
        load(tmp_path / "m")


def test_bad_training_sets_and_checkpoints_are_clear_errors(tmp_path):
    model = AlignmentModel("qrc")
    model.parse = parse
    with pytest.raises(ValueError, match="at least two labels"):
        model.fit(qrc_data(1)[0][:1] * 3, ["irrelevant"] * 3)
    with pytest.raises(ValueError, match="not fitted"):
        model.predict_proba(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="non-empty texts"):
        model.fit([("", "b"), ("a", "b")], ["x", "y"])
    with pytest.raises(ValueError, match="serves"):
        AlignmentModel("kpc")
    with pytest.raises(ValueError, match="second text of a pair is one of"):
        alignment_features("qam", [("a", "b")])  # a task name is not what the second text is
    inputs, labels = qrc_data(3)
    model.fit(inputs, labels)
    model.save_pretrained(tmp_path / "m")
    arrays = tmp_path / "m" / "arrays.safetensors"
    arrays.write_bytes(arrays.read_bytes()[:100])  # a truncated checkpoint
    with pytest.raises(ValueError, match="no readable alignment model"):
        AlignmentModel.from_pretrained(tmp_path / "m")


def test_rows_of_alignments_made_elsewhere_are_not_computed_again():
    """The server's compare aligns each pair once: ``remember_alignments`` gives its rows to the QRC alignment
    model; and the rows kept are bounded (``AlignmentRows(limit)``, oldest out first)."""
    from mathgraph.models import alignment_features as features
    from mathgraph.parsers.compare import align_texts

    pairs = [("Tom has 3 apples. How many?", "Tom has 4 apples. How many?")]
    rows = features.AlignmentRows()
    rows.remember_alignments(pairs, align_texts(pairs))

    def no_parsing(texts):
        raise AssertionError("aligned again")

    row = features.alignment_features("problem", pairs, parse=no_parsing, rows=rows)
    assert row.tolist() == [align_texts(pairs)[0].feature_vector()]
    with pytest.raises(AssertionError, match="aligned again"):  # rows are read only where they are passed in
        features.alignment_features("problem", pairs, parse=no_parsing)
    assert features.pair_key("problem", *pairs[0]) not in features.TRAINING_ROWS  # nothing went to the process's rows
    bounded = features.AlignmentRows(limit=2)
    more = [(f"Ann has {n} pens.", f"Ann has {n + 1} pens.") for n in range(3)]
    features.alignment_features("problem", more, rows=bounded)
    assert len(bounded) == 2 and features.pair_key("problem", *more[0]) not in bounded
    assert features.pair_key("problem", *more[2]) in bounded
