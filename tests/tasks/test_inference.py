"""Predictions from text (``TaskModel.predict``, ``models.prediction``) on tiny untrained models."""

import pytest

from mathgraph.models.prediction import feature_store
from mathgraph.models.task_batches import example_lengths, length_sorted_batches
from mathgraph.models.task_io import InputError, build_examples, input_from_texts
from mathgraph.models.task_model import TaskConfig, TaskModel
from mathgraph.models.tfidf import TfidfPredictor
from mathgraph.samples import sample_problems
from mathgraph.tasks.task_types import get_task

PROBLEMS = [row["problem"] for row in sample_problems()]
LABELS = ["Algebra", "Geometry", "Number Theory"]


def by_length(texts, descending=True):
    return sorted(texts, key=len, reverse=descending)


@pytest.fixture
def kpc_model(tiny_encoder):
    return TaskModel(tiny_encoder, TaskConfig("kpc", labels=list(LABELS))).eval()


def test_predict_keeps_input_order_across_length_sorted_batches(kpc_model):
    texts = by_length(PROBLEMS[:6])  # longest first: the length sort reverses them
    task = kpc_model.config.task_type
    examples = build_examples(task, texts)
    order = [
        i
        for batch in length_sorted_batches(example_lengths(task, examples, feature_store(kpc_model, texts)), 2)
        for i in batch
    ]
    assert order != list(range(len(texts)))

    results = kpc_model.predict(texts, batch_size=2)
    assert len(results) == len(texts)
    for text, result in zip(texts, results):
        [alone] = kpc_model.predict([text], batch_size=1)
        assert result["label"] == alone["label"]
        assert result["probabilities"] == pytest.approx(alone["probabilities"], abs=1e-4)
    # the texts get different predictions, so a permutation would have shown above
    assert len({tuple(round(p, 4) for p in r["probabilities"].values()) for r in results}) > 1


def test_probabilities_are_a_softmax_over_the_labels(kpc_model):
    results = kpc_model.predict(PROBLEMS[:3])
    for result in results:
        probabilities = result["probabilities"]
        assert list(probabilities) == LABELS
        assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-9)
        assert all(0 < p < 1 for p in probabilities.values())
        assert result["label"] == max(probabilities, key=probabilities.get)
    assert kpc_model.predict([]) == []


def test_pairs_and_qam_int_labels(tiny_encoder):
    model = TaskModel(tiny_encoder, TaskConfig("qam", labels=["0", "1"])).eval()
    results = model.predict([(PROBLEMS[0], PROBLEMS[1]), [PROBLEMS[2], PROBLEMS[0]]])
    for result in results:
        assert result["label"] in (0, 1) and set(result["probabilities"]) == {0, 1}
        assert sum(result["probabilities"].values()) == pytest.approx(1.0)


def test_sqr_scores_and_ranking(tiny_encoder):
    model = TaskModel(tiny_encoder, TaskConfig("sqr")).eval()
    inputs = [(PROBLEMS[0], PROBLEMS[1:4]), (PROBLEMS[4], [PROBLEMS[0], PROBLEMS[5]])]
    results = model.predict(inputs, batch_size=2)
    assert [len(r["scores"]) for r in results] == [3, 2]
    for result in results:
        scores, ranking = result["scores"], result["ranking"]
        assert sorted(ranking) == list(range(len(scores)))
        assert [scores[j] for j in ranking] == sorted(scores, reverse=True)
    [alone] = model.predict([inputs[1]])
    assert alone["scores"] == pytest.approx(results[1]["scores"], abs=1e-4)


def test_multitask_view_predicts_like_a_task_model(tiny_encoder):
    from mathgraph.models.multitask import MultiTaskConfig, MultiTaskModel

    config = MultiTaskConfig([{"task": "kpc", "labels": list(LABELS)}, {"task": "sqr", "labels": []}])
    model = MultiTaskModel(tiny_encoder, config).eval()
    [kpc] = model.for_task("kpc").predict([PROBLEMS[0]])
    assert list(kpc["probabilities"]) == LABELS and sum(kpc["probabilities"].values()) == pytest.approx(1.0)
    [sqr] = model.for_task("sqr").predict([(PROBLEMS[0], PROBLEMS[1:3])])
    assert len(sqr["scores"]) == 2 and sorted(sqr["ranking"]) == [0, 1]


@pytest.mark.parametrize(
    "task,item,message",
    [
        ("kpc", "", "input 0: the text is empty"),
        ("kpc", "   \n", "the text is empty"),
        ("kpc", ("a", "b"), "kpc takes one text"),
        ("qrc", "just one text", "qrc takes a pair"),
        ("qam", ("only one",), "qam takes a pair"),
        ("qrc", ("a", ""), "text_b: the text is empty"),
        ("qrc", ("a", 3), "text_b: expected a text"),
        ("sqr", ("query", "not a list"), "sqr takes"),
        ("sqr", ("query", []), "no candidates"),
        ("sqr", ("query", ["good", " "]), "candidate 1: the text is empty"),
        ("sqr", "query alone", "sqr takes"),
    ],
)
def test_bad_inputs_are_refused_clearly(task, item, message):
    with pytest.raises(InputError, match=message):
        build_examples(get_task(task), [item])


def test_inputs_from_command_line_texts():
    assert input_from_texts("kpc", ["a"]) == "a"
    assert input_from_texts("qrc", ["a", "b"]) == ("a", "b")
    assert input_from_texts("sqr", ["q", "c1", "c2"]) == ("q", ["c1", "c2"])
    with pytest.raises(InputError, match="qam takes two TEXTs"):
        input_from_texts("qam", ["a"])
    with pytest.raises(InputError, match="kpc takes one TEXT"):
        input_from_texts("kpc", ["a", "b"])


def test_tfidf_baseline_predicts_in_the_same_format(gsmplus):
    from mathgraph.tasks.data import build_qrc_pairs, build_sqr_lists, group_seeds
    from mathgraph.tasks.training.tfidf import train_tfidf

    pairs = build_qrc_pairs(group_seeds(gsmplus), random_state=0)
    predictor = TfidfPredictor("qrc", train_tfidf("qrc", pairs))
    results = predictor.predict([(p["text_a"], p["text_b"]) for p in pairs[:4]])
    assert len(results) == 4
    for result in results:
        assert sum(result["probabilities"].values()) == pytest.approx(1.0)
        assert result["label"] == max(result["probabilities"], key=result["probabilities"].get)
    ranker = train_tfidf("sqr", build_sqr_lists(group_seeds(gsmplus), random_state=0))
    [ranked] = TfidfPredictor("sqr", ranker).predict([("a b c", ["x y", "a b", "c"])])
    assert ranked["ranking"][0] == 1 and len(ranked["scores"]) == 3
    with pytest.raises(ValueError, match="cannot predict kpc"):
        TfidfPredictor("kpc", ranker)
    with pytest.raises(InputError, match="qrc takes a pair"):
        predictor.predict(["one text"])
