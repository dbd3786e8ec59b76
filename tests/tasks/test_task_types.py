"""Each task class: batch layout, targets, loss against hand computation, decoding, metrics; the registry."""

import math
from types import SimpleNamespace

import pytest
import torch

from mathgraph.models.examples import KpcExample, QamPair, QrcPair, SqrList
from mathgraph.tasks.task_types import TASKS, get_task


def fixed_linear(linear, weight, bias):
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(weight))
        linear.bias.copy_(torch.tensor(bias))


def test_kpc_loss_and_decoding_by_hand():
    task = get_task("kpc")
    examples = [KpcExample("a", "Algebra"), KpcExample("b", "Geometry")]
    assert task.batch_texts(examples) == ["a", "b"]
    assert task.label_names(examples) == ["Algebra", "Geometry"]
    head = task.make_head(2, 2).eval()
    fixed_linear(head.classifier, [[1.0, 0.0], [0.0, 1.0]], [0.0, 0.0])  # logits = vectors
    vectors = torch.tensor([[2.0, 0.0], [0.0, 1.0]])
    batch = SimpleNamespace(**task.targets(examples, {"Algebra": 0, "Geometry": 1}))
    out = task.outputs(head, vectors, batch)
    expected = (-math.log(math.exp(2) / (math.exp(2) + 1)) - math.log(math.e / (1 + math.e))) / 2
    assert out["loss"].item() == pytest.approx(expected, rel=1e-6)
    assert task.decode(out, examples, ["Algebra", "Geometry"]) == ["Algebra", "Geometry"]
    assert task.metrics(examples, ["Algebra", "Algebra"])["accuracy"] == 0.5
    with pytest.raises(ValueError, match="not seen in training"):
        task.targets([KpcExample("c", "Topology")], {"Algebra": 0})
    assert task.targets(examples, None)["labels"].tolist() == [0, 0]  # prediction: no gold labels needed


def test_pair_tasks_read_a_then_b_and_qam_decodes_ints():
    qrc, qam = get_task("qrc"), get_task("qam")
    pairs = [QrcPair("1", "g", "a1", "b1", "irrelevant"), QrcPair("2", "g", "a2", "b2", "paraphrase")]
    assert qrc.batch_texts(pairs) == ["a1", "a2", "b1", "b2"]
    head = qrc.make_head(1, 2).eval()
    # logits = [u; v; |u - v|; u * v] W^T: class 0 reads u * v, class 1 reads |u - v|
    fixed_linear(head.head.classifier, [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]], [0.0, 0.0])
    vectors = torch.tensor([[1.0], [3.0], [2.0], [1.0]])  # pairs (1, 2) and (3, 1)
    batch = SimpleNamespace(labels=torch.tensor([0, 1]))
    out = qrc.outputs(head, vectors, batch)
    assert out["logits"].tolist() == [[2.0, 1.0], [3.0, 2.0]]
    expected = (
        -math.log(math.exp(2) / (math.exp(2) + math.e)) - math.log(math.exp(2) / (math.exp(3) + math.exp(2)))
    ) / 2
    assert out["loss"].item() == pytest.approx(expected, rel=1e-6)
    qam_pairs = [QamPair("1", "g", "q", "s", 1), QamPair("2", "g", "q", "t", 0)]
    assert qam.label_names(qam_pairs) == ["0", "1"]
    assert qam.decode({"logits": torch.tensor([[0.0, 1.0], [1.0, 0.0]])}, qam_pairs, ["0", "1"]) == [1, 0]


def test_sqr_targets_scores_and_decoding():
    task = get_task("sqr")
    lists = [SqrList("1", "g", "q1", ("c1", "c2", "c3"), (2, 0, 1)), SqrList("2", "g", "q2", ("d1", "d2"), (0, 2))]
    assert task.batch_texts(lists) == ["q1", "q2", "c1", "c2", "c3", "d1", "d2"]
    targets = task.targets(lists, None)
    assert targets["candidates"].tolist() == [[2, 3, 4], [5, 6, 0]]
    assert targets["candidate_mask"].tolist() == [[True, True, True], [True, True, False]]
    assert targets["relevant"].tolist() == [[2, 0, 1], [0, 2, 0]] and targets["relevant"].dtype == torch.long
    head = task.make_head(2, 0)
    vectors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    out = task.outputs(head, vectors, SimpleNamespace(**targets))
    assert out["scores"][1, 2].item() == float("-inf")
    scores = task.decode(out, lists, [])
    assert [len(s) for s in scores] == [3, 2]
    manual = head(vectors[:2], vectors[targets["candidates"]])
    logits = manual / head.temperature
    log_p = torch.log_softmax(logits[0], 0)
    first = -(0.75 * log_p[0] + 0.25 * log_p[2])  # gains 3, 0, 1
    second = -(logits[1, 1] - torch.logsumexp(logits[1, :2], 0))
    assert out["loss"].item() == pytest.approx(((first + second) / 2).item(), rel=1e-5)
    assert task.metric == "ndcg@3" and not task.classifies
    metrics = task.metrics(lists, [[3.0, 2.0, 1.0], [0.0, 1.0]])
    assert metrics["hr@1"] == 1.0 and metrics["map"] == 1.0
    # list 1 ranked gains 3, 0, 1 (ideal 3, 1, 0); list 2 perfect
    assert metrics["ndcg@3"] == pytest.approx(((3 + 1 / 2) / (3 + 1 / math.log2(3)) + 1) / 2)
    row = task.tfidf_row(lists[0])
    assert row["relevance"] == [2, 0, 1] and row["candidates"] == ["c1", "c2", "c3"] and "relevant" not in row


def test_registry_names_every_task_once():
    assert set(TASKS) == {"kpc", "qrc", "qam", "sqr"}
    assert all(get_task(name).name == name for name in TASKS)
    with pytest.raises(ValueError, match="unknown task 'kpx'"):
        get_task("kpx")


def test_the_heads_take_their_shapes_from_the_one_task_table():
    from mathgraph.models.task_heads import TASK_HEADS
    from mathgraph.task_specs import TASK_SPECS

    assert tuple(TASK_HEADS) == tuple(TASK_SPECS)
    assert {n: (h.input_shape, h.classifies) for n, h in TASK_HEADS.items()} == {
        "kpc": ("single", True),
        "qrc": ("pair", True),
        "qam": ("pair", True),
        "sqr": ("ranker", False),
    }


def test_the_data_side_follows_from_the_definition(tmp_path):
    from mathgraph.tasks.data import load_task
    from mathgraph.tasks.task_types import Task

    kpc, qam, sqr = get_task("kpc"), get_task("qam"), get_task("sqr")
    assert all(isinstance(t, Task) for t in TASKS.values())
    assert [get_task(n).title for n in ("kpc", "sqr")] == [
        "KPC (MATH subject, 7 classes)",
        "SQR (graded GSM-Plus lists)",
    ]
    assert (qam.hub_type, sqr.hub_type, qam.dataset) == (
        "text-classification",
        "text-ranking",
        ("qintongli/GSM-Plus", "GSM-Plus"),
    )
    assert kpc.tfidf_row(KpcExample("x", "Algebra"), "q", "s") == {"q": "x", "s": "Algebra"}
    assert qam.tfidf_row(QamPair("1", "g", "q", "s", 1)) == {
        "id": "1",
        "group": "g",
        "text_a": "q",
        "text_b": "s",
        "label": 1,
    }
    assert kpc.gold({"subject": "Algebra", "label": "x"}) == "Algebra" and qam.gold({"label": 0}) == 0
    assert kpc.gold({"topic": "Geometry"}, "topic") == "Geometry"
    assert sqr.gold({"candidates": list("abcdef"), "relevance": [2, 0, 0, 1, 0, 0]}) == [2, 0, 0, 1, 0, 0]
    # result metrics: accuracy of labels (2 of 3 right), NDCG@3 of a perfect ranking
    assert qam.result_metric([1, 0, 1])([{"label": 1}, {"label": 1}, {"label": 1}]) == pytest.approx(2 / 3)
    assert sqr.result_metric([[2, 0, 1]])([{"scores": [3.0, 1.0, 2.0]}]) == pytest.approx(1.0)
    assert qam.metrics([QamPair("1", "g", "q", "s", 1), QamPair("2", "g", "q", "t", 0)], [1, 1])["accuracy"] == 0.5
    path = tmp_path / "qam.jsonl"
    path.write_text('{"id": "1", "group": "g", "text_a": "q", "text_b": "s", "label": 1}\n')
    assert qam.load(str(path)) == [QamPair("1", "g", "q", "s", 1)]
    with pytest.raises(ValueError, match="unknown task 'kpx'"):
        load_task("kpx", path)


def test_heads_read_their_definition_for_examples_and_decoding():
    from mathgraph.task_definitions import TASK_DEFINITIONS

    assert all(get_task(n).definition is TASK_DEFINITIONS[n] for n in TASKS)
    assert get_task("qam").with_pair_mode("cross").input_example(("q", "s"), 4) == QamPair("input-4", "", "q", "s", 0)
    assert get_task("sqr").input_example(("q", ("a", "b"))).relevance == (1, 0)
    logits = {"logits": torch.tensor([[0.0, 1.0], [1.0, 0.0]])}
    assert get_task("qrc").decode(logits, [None, None], ["irrelevant", "paraphrase"]) == ["paraphrase", "irrelevant"]
