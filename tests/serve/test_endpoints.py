"""The endpoints of ``mathgraph serve`` through the ASGI test client, with the shipped model and a real index:
each answer equals the library's (what the CLI prints), bad requests get clear 4xx answers, and parallel
requests get the same answers as serial ones."""

import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from fastapi.testclient import TestClient

from mathgraph.parsers.problem import parse_problem
from mathgraph.serve.app import create_app
from mathgraph.serve.service import Limits

pytestmark = pytest.mark.slow

PROBLEM = "What is the sum of the roots of $x^2-5x+6=0$?"
OTHER = "A shop sells 3 pens for $2. How much do 12 pens cost?"


@pytest.fixture(scope="module")
def client(service):
    with TestClient(
        create_app(service, Limits(max_text_chars=500, max_batch=4, max_request_bytes=20_000, max_k=10))
    ) as client:
        yield client


def test_health_says_what_is_loaded(client, index_dir):
    health = client.get("/api/health").json()
    assert health["status"] == "ok" and health["model"] == "shipped"
    assert [t["name"] for t in health["tasks"]] == ["kpc", "qrc", "qam", "sqr"]
    assert [t["input"] for t in health["tasks"]] == ["single", "pair", "pair", "ranker"]
    assert health["index"] == {"path": str(index_dir), "rows": 40, "text_field": "problem"}
    assert health["limits"] == {
        "max_text_chars": 500,
        "max_batch": 4,
        "max_request_bytes": 20_000,
        "max_k": 10,
        "max_request_chars": 100_000,
    }


def test_parse_gives_the_graphs_of_mathgraph_parse_and_their_layout(client):
    answer = client.post("/api/parse", json={"texts": [PROBLEM, OTHER], "layout": True}).json()
    assert answer["graphs"] == [parse_problem(PROBLEM).to_dict(), parse_problem(OTHER).to_dict()]
    graph, layout = answer["graphs"][0], answer["layouts"][0]
    assert [n["id"] for n in layout["nodes"]] == [n["id"] for n in graph["nodes"]]
    assert layout["edges"] == graph["edges"]
    root = layout["nodes"][0]
    assert (root["kind"], root["y"], root["colour"]) == ("root", 0, "#9e9e9e")
    math = next(n for n in layout["nodes"] if n["kind"] == "math")
    assert math["colour"] == "#ffb703" and PROBLEM[slice(*math["span"])] == "$x^2-5x+6=0$"
    assert "layouts" not in client.post("/api/parse", json={"texts": [PROBLEM]}).json()


def test_draw_returns_the_svg_picture(client):
    response = client.post("/api/draw", json={"text": "Find $x$ if $2x+3=7$."})
    assert response.status_code == 200 and response.headers["content-type"] == "image/svg+xml"
    assert response.text.lstrip().startswith("<?xml") and "</svg>" in response.text


def test_encode_gives_the_encoder_vectors(client, service):
    answer = client.post("/api/encode", json={"texts": [PROBLEM, OTHER]}).json()
    assert (answer["mode"], answer["dimension"]) == ("joint", 768)
    expected = service.encoder.encode([PROBLEM, OTHER], mode="joint")
    np.testing.assert_allclose(np.array(answer["vectors"]), expected, atol=1e-5)
    assert client.post("/api/encode", json={"texts": [PROBLEM], "mode": "text"}).json()["dimension"] == 384


def test_predict_gives_the_shipped_predictors_results(client, service):
    kpc = client.post("/api/predict/kpc", json={"inputs": [PROBLEM, OTHER]}).json()
    assert kpc["results"] == service.predictors["kpc"].predict([PROBLEM, OTHER])
    assert abs(sum(kpc["results"][0]["probabilities"].values()) - 1) < 1e-6
    pair = {"text_a": PROBLEM, "text_b": "What is the product of the roots of $x^2-5x+6=0$?"}
    qrc = client.post("/api/predict/qrc", json={"inputs": [pair]}).json()["results"]
    assert qrc == service.predictors["qrc"].predict([(pair["text_a"], pair["text_b"])])
    ranking = {"query": PROBLEM, "candidates": [OTHER, "Find the roots of $x^2-5x+6=0$."]}
    [sqr] = client.post("/api/predict/sqr", json={"inputs": [ranking]}).json()["results"]
    assert sorted(sqr["ranking"]) == [0, 1] and len(sqr["scores"]) == 2


def test_search_gives_the_index_hits(client, service):
    answer = client.post("/api/search", json={"queries": [PROBLEM, OTHER], "k": 3, "hybrid": False}).json()
    expected = service.index.search([PROBLEM, OTHER], k=3)
    assert [r["query"] for r in answer["results"]] == [PROBLEM, OTHER]
    for result, hits in zip(answer["results"], expected):
        assert [h["rank"] for h in result["hits"]] == [1, 2, 3]
        assert [h["index"] for h in result["hits"]] == [hit.index for hit in hits]
        assert [h["score"] for h in result["hits"]] == pytest.approx([hit.score for hit in hits], abs=1e-6)
        assert result["hits"][0]["row"] == hits[0].row


@pytest.mark.parametrize(
    "path, body, status, message",
    [
        ("/api/parse", {"texts": ["   "]}, 422, "the text is empty"),
        ("/api/parse", {"texts": []}, 422, "at least 1 item"),
        ("/api/parse", {"text": PROBLEM}, 422, "Field required"),
        ("/api/parse", {"texts": [PROBLEM], "colour": "red"}, 422, "Extra inputs are not permitted"),
        ("/api/encode", {"texts": [PROBLEM], "mode": "sparse"}, 422, "'joint', 'text', 'graph' or 'fused'"),
        ("/api/predict/kpc", {"inputs": [""]}, 422, "the text is empty"),
        ("/api/predict/qrc", {"inputs": [PROBLEM]}, 422, "qrc takes a pair (text_a, text_b) per input, got a str"),
        ("/api/predict/kpc", {"inputs": [{"text_a": PROBLEM}]}, 422, "Field required"),
        ("/api/predict/srq", {"inputs": [PROBLEM]}, 404, "no task 'srq': this model predicts kpc, qrc, qam, sqr"),
        ("/api/parse", {"texts": ["x" * 501]}, 413, "text 0 has 501 characters; this server takes at most 500"),
        ("/api/parse", {"texts": [PROBLEM] * 5}, 413, "5 items in one request; this server takes at most 4"),
        ("/api/predict/sqr", {"inputs": [{"query": PROBLEM, "candidates": [OTHER] * 5}]}, 413, "5 candidates"),
        ("/api/search", {"queries": [PROBLEM], "k": 11}, 413, "at most 10 results"),
        ("/api/search", {"queries": [PROBLEM], "k": 0}, 422, "greater than or equal to 1"),
    ],
)
def test_bad_requests_get_clear_errors(client, path, body, status, message):
    response = client.post(path, json=body)
    assert response.status_code == status
    assert message in str(response.json()["detail"])


def test_a_body_over_the_byte_limit_is_refused_before_it_is_read(client):
    body = {"texts": ["x" * 400] * 60}  # 24 kB: refused by its Content-Length before any other check
    response = client.post("/api/parse", json=body)
    assert response.status_code == 413 and "limit of 20000 bytes" in response.json()["detail"]

    def chunks():  # no Content-Length: the body arrives in pieces and is counted as it comes
        for _ in range(30):
            yield b" " * 1000

    response = client.post("/api/parse", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413


def test_malformed_json_is_a_422(client):
    response = client.post("/api/parse", content=b"{not json", headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and "JSON decode error" in str(response.json()["detail"])


def test_parallel_requests_get_the_serial_answers(client):
    requests = [
        ("/api/parse", {"texts": [PROBLEM]}),
        ("/api/predict/kpc", {"inputs": [OTHER]}),
        ("/api/search", {"queries": [PROBLEM], "k": 2}),
        ("/api/encode", {"texts": [OTHER]}),
        ("/api/predict/qam", {"inputs": [{"text_a": PROBLEM, "text_b": "5"}]}),
        ("/api/parse", {"texts": [OTHER]}),
    ] * 2
    serial = [client.post(path, json=body).json() for path, body in requests]
    with ThreadPoolExecutor(max_workers=6) as pool:
        parallel = list(pool.map(lambda request: client.post(request[0], json=request[1]), requests))
    assert all(response.status_code == 200 for response in parallel)
    for expected, response in zip(serial, parallel):
        assert_close(response.json(), expected)  # waiting requests run as one batch: padding moves the 7th digit


def assert_close(got, expected, tolerance=1e-5):
    """``got == expected``, but numbers within ``tolerance``, in nested dicts and lists."""
    if isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for key in expected:
            assert_close(got[key], expected[key], tolerance)
    elif isinstance(expected, list):
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            assert_close(a, b, tolerance)
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, abs=tolerance)
    else:
        assert got == expected


def test_the_openapi_schema_lists_every_endpoint(client):
    schema = client.get("/api/openapi.json").json()
    assert {
        "/api/health",
        "/api/parse",
        "/api/draw",
        "/api/encode",
        "/api/predict/{task}",
        "/api/search",
        "/api/compare",
        "/api/check",
    } <= set(schema["paths"])
    assert "ParseRequest" in schema["components"]["schemas"]


def test_the_page_and_its_shipped_script_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "/static/vendor/cytoscape.min.js" in page.text
    assert re.findall(r'(?:src|href)="([^"]*)"', page.text) == [
        "/static/style.css",
        "/static/vendor/cytoscape.min.js",
        "/static/app.js",
    ]  # nothing from elsewhere
    script = client.get("/static/vendor/cytoscape.min.js")
    assert script.status_code == 200 and "Cytoscape Consortium" in script.text[:300]
    assert "Permission is hereby granted" in client.get("/static/vendor/cytoscape.LICENSE").text
