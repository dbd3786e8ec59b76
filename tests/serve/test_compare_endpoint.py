"""``POST /api/compare`` through the ASGI test client: each answer is ``mathgraph compare --format json``'s, the
relation comes from the loaded QRC model through the model lock (none for a solution or a model without QRC),
and bad requests get the other endpoints' 422 and 413 answers. Only the last test loads the shipped model."""

import json

import pytest
from fastapi.testclient import TestClient

from mathgraph.cli.compare import compare_pairs
from mathgraph.parsers.compare import align_problems
from mathgraph.parsers.problem import parse_problem
from mathgraph.parsers.solution import align_solution
from mathgraph.serve.app import create_app
from mathgraph.serve.service import Limits, Service

A = "Tom has 3 apples. He buys 5 more apples. How many apples does he have now?"
B = (
    "Tom has three apples. He buys 12 more apples at the shop. His sister has 4 pears. "
    "How many apples does he have now?"
)
SOLUTION = "He has 3 + 5 = 8 apples.\n#### 8"


def as_json(data):
    """``data`` as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(data))


class FakeQrc:
    """A QRC 'predictor' that records its calls: 'longer' when text_b is longer than text_a."""

    def __init__(self):
        self.calls = []

    def predict(self, inputs, batch_size=32, graphs=None, rows=None):
        self.calls.append(list(inputs))
        return [
            {"label": "longer", "probabilities": {"longer": 0.75, "not longer": 0.25}}
            if len(b) > len(a)
            else {"label": "not longer", "probabilities": {"longer": 0.25, "not longer": 0.75}}
            for a, b in inputs
        ]


@pytest.fixture
def qrc():
    return FakeQrc()


@pytest.fixture
def fake_service(qrc):
    """A service whose only model is a ``FakeQrc`` (fast: nothing is loaded)."""
    return Service({"qrc": qrc}, encoder=None, model_name="fake")


@pytest.fixture
def client(fake_service):
    with TestClient(create_app(fake_service, Limits(max_text_chars=500, max_batch=2))) as client:
        yield client


def test_compare_gives_the_alignments_and_relations_of_mathgraph_compare(client, fake_service, qrc):
    pairs = [{"text_a": A, "text_b": B}, {"text_a": B, "text_b": A}]
    response = client.post("/api/compare", json={"pairs": pairs})
    assert response.status_code == 200
    results = response.json()["results"]
    expected = align_problems(parse_problem(A), parse_problem(B)).to_dict()
    assert results[0]["alignment"] == as_json(expected)
    assert [r["relation"] for r in results] == [
        {"label": "longer", "probabilities": {"longer": 0.75, "not longer": 0.25}},
        {"label": "not longer", "probabilities": {"longer": 0.25, "not longer": 0.75}},
    ]
    assert qrc.calls == [[(A, B), (B, A)]] and fake_service.model_lock.batches == 1  # one call, through the lock
    # the CLI's answer (`mathgraph compare --format json`, one line per pair of an --input file)
    assert results == as_json(compare_pairs([(A, B), (B, A)], predictor=FakeQrc()))


def test_a_solution_is_aligned_with_its_question_and_has_no_relation(client, qrc):
    answer = client.post("/api/compare", json={"pairs": [{"text_a": A, "text_b": SOLUTION}], "solution": True}).json()
    assert answer == {
        "results": [{"alignment": as_json(align_solution(parse_problem(A), SOLUTION).to_dict()), "relation": None}]
    }
    assert qrc.calls == []


def test_a_model_without_qrc_gives_no_relation():
    service = Service({}, encoder=None, model_name="fake")
    with TestClient(create_app(service)) as client:
        [result] = client.post("/api/compare", json={"pairs": [{"text_a": A, "text_b": B}]}).json()["results"]
    assert result["relation"] is None and result["alignment"]["question"] == "same"


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"pairs": [{"text_a": "  ", "text_b": B}]}, 422, "the text is empty"),
        ({"pairs": [{"text_a": A, "text_b": ""}]}, 422, "the text is empty"),
        ({"pairs": []}, 422, "at least 1 item"),
        ({"pairs": [{"text_a": A}]}, 422, "Field required"),
        ({"pairs": [A]}, 422, "valid dictionary"),
        ({"pairs": [{"text_a": A, "text_b": B, "label": "x"}]}, 422, "Extra inputs are not permitted"),
        ({"pairs": [{"text_a": A, "text_b": B}], "model": "x"}, 422, "Extra inputs are not permitted"),
        ({"pairs": [{"text_a": A, "text_b": B}], "solution": "maybe"}, 422, "valid boolean"),
        ({"pairs": [{"text_a": A, "text_b": B}] * 3}, 413, "3 items in one request; this server takes at most 2"),
        (
            {"pairs": [{"text_a": A, "text_b": "x" * 501}]},
            413,
            "text 1 has 501 characters; this server takes at most 500",
        ),
    ],
)
def test_bad_requests_get_clear_errors(client, qrc, body, status, message):
    response = client.post("/api/compare", json=body)
    assert response.status_code == status
    assert message in str(response.json()["detail"])
    assert qrc.calls == []


def test_the_openapi_schema_lists_compare(client):
    schema = client.get("/api/openapi.json").json()
    assert "/api/compare" in schema["paths"] and "CompareRequest" in schema["components"]["schemas"]


@pytest.mark.slow
def test_the_shipped_model_gives_the_relation(service):
    # conftest's service: the shipped multi-task model, as `mathgraph serve` loads it
    pair = {"text_a": A, "text_b": B}
    with TestClient(create_app(service)) as client:
        [result] = client.post("/api/compare", json={"pairs": [pair]}).json()["results"]
    [expected] = service.predictors["qrc"].predict([(A, B)])
    assert result["relation"]["label"] == expected["label"]
    assert result["relation"]["probabilities"] == pytest.approx(expected["probabilities"], abs=1e-5)
    assert result["alignment"] == as_json(align_problems(parse_problem(A), parse_problem(B)).to_dict())
