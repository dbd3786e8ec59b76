"""``POST /api/check`` through the ASGI test client (no model loaded: fast): the answer is the library's
``check_solution(...).to_dict()``, the problem is parsed under the parser lock and the model lock is never
taken, and bad requests get the other endpoints' 422 and 413 answers."""

import json

import pytest
from fastapi.testclient import TestClient

from mathgraph.parsers.problem import parse_problem
from mathgraph.parsers.solution import check_solution
from mathgraph.serve.app import create_app
from mathgraph.serve.service import Limits, Service

PROBLEM = "Tom has 3 apples and 2 pears. He buys 5 more apples. How many apples does he have now?"
SOLUTION = "He buys 5 more apples.\nHe has 3 + 5 = 9 apples now.\n#### 9"


@pytest.fixture
def service():
    return Service({}, encoder=None, model_name="fake")


@pytest.fixture
def client(service):
    with TestClient(create_app(service, Limits(max_text_chars=200, max_request_chars=250))) as client:
        yield client


def test_check_gives_the_findings_of_check_solution(client, service):
    response = client.post("/api/check", json={"problem": PROBLEM, "solution": SOLUTION})
    assert response.status_code == 200
    answer = response.json()
    assert answer == json.loads(json.dumps(check_solution(parse_problem(PROBLEM), SOLUTION).to_dict()))
    # by hand: 3 + 5 is not 9 (line 1, counted from 0), and the 2 pears are never used
    assert (answer["ok"], answer["first_error_step"]) == (False, 1)
    assert [(f["kind"], f["severity"], f["step"]) for f in answer["findings"]] == [
        ("arithmetic", "error", 1),
        ("unused_quantity", "warning", None),
    ]
    assert [step["index"] for step in answer["graph"]["steps"]] == [0, 1, 2]
    assert service.parse_lock.batches == 1 and service.model_lock.batches == 0  # parsed; no model


def test_a_right_solution_is_ok(client):
    solution = "He buys 5 more apples.\nHe has 3 + 5 = 8 apples now.\n#### 8"
    answer = client.post("/api/check", json={"problem": PROBLEM.replace(" and 2 pears", ""), "solution": solution})
    assert answer.json()["ok"] is True and answer.json()["findings"] == []


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"problem": " ", "solution": SOLUTION}, 422, "the text is empty"),
        ({"problem": PROBLEM}, 422, "Field required"),
        ({"problem": PROBLEM, "solution": SOLUTION, "steps": 3}, 422, "Extra inputs are not permitted"),
        ({"problem": PROBLEM, "solution": ["3 + 5 = 8"]}, 422, "valid string"),
        ({"problem": PROBLEM, "solution": "x" * 201}, 413, "text 1 has 201 characters; this server takes at most 200"),
        ({"problem": PROBLEM, "solution": "x" * 200}, 413, "have 286 characters in all; this server takes at most 250"),
    ],
)
def test_bad_requests_get_clear_errors(client, body, status, message):
    response = client.post("/api/check", json=body)
    assert response.status_code == status
    assert message in str(response.json()["detail"])


def test_the_openapi_schema_lists_check(client):
    schema = client.get("/api/openapi.json").json()
    assert "/api/check" in schema["paths"] and "CheckRequest" in schema["components"]["schemas"]
