"""No request makes any endpoint answer 500, as a property: hypothesis writes the bodies. A body of
the right shape whose texts are anything (control characters, other scripts, broken LaTeX, long numbers, lone
surrogates, blanks) gets 200, or 422 naming the field, or 413 past the request budget; any other JSON gets 422.
The models are stand-ins (fast); parsing, drawing, aligning and checking are the library's own."""

import json

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathgraph.serve.app import create_app
from mathgraph.serve.service import Limits

PIECES = ["Tom has ", "3", "12.5", "−4", "½", " apples", ". ", "? ", "$", "\\frac{", "}", "{", "^", "x", "=", "\n"]
TEXTS = st.one_of(
    st.text(max_size=40),  # any Unicode but surrogates
    st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=12).map("".join),  # problem-like pieces
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2).map(
        lambda s: "Tom has 3 apples " + s  # a lone surrogate, as JSON's "\ud800" carries one
    ),
    st.integers(1, 6000).map(lambda n: "Tom has " + "9" * n + " apples."),  # past str's 4,300 digits
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
PATHS = [
    "/api/parse",
    "/api/draw",
    "/api/encode",
    "/api/predict/kpc",
    "/api/predict/qrc",
    "/api/predict/qam",
    "/api/search",
    "/api/compare",
    "/api/check",
]
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def client(stand_service):
    limits = Limits(max_request_chars=20_000)  # small, so that hypothesis reaches the budget too
    with TestClient(create_app(stand_service, limits), raise_server_exceptions=False) as client:
        yield client


def bodies(draw_text):
    """A body of the right shape for each path, its texts drawn by ``draw_text``."""
    pair = lambda: {"text_a": draw_text(), "text_b": draw_text()}  # noqa: E731
    return {
        "/api/parse": {"texts": [draw_text() for _ in range(2)]},
        "/api/draw": {"text": draw_text()},
        "/api/encode": {"texts": [draw_text()]},
        "/api/predict/kpc": {"inputs": [draw_text()]},
        "/api/predict/qrc": {"inputs": [pair()]},
        "/api/predict/qam": {"inputs": [pair()]},
        "/api/search": {"queries": [draw_text()]},
        "/api/compare": {"pairs": [pair()], "solution": False},
        "/api/check": {"problem": draw_text(), "solution": draw_text()},
    }


def post(client, path, body):
    # json.dumps escapes a lone surrogate as \ud800, as a client's JSON would carry it
    return client.post(path, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


def assert_answered(response, path):
    """200, or an error the client can act on: 413 (over budget), 422 (naming the field), 404 (no index)."""
    assert response.status_code in (200, 404, 413, 422), (path, response.status_code, response.text[:300])
    if response.status_code == 422:  # a body that does not fit names the field; the library's refusal says why
        detail = response.json()["detail"]
        if isinstance(detail, str):
            assert detail and "Traceback" not in detail and "set_int_max_str_digits" not in detail, (path, detail)
        for error in detail if isinstance(detail, list) else []:
            assert error["loc"][0] == "body" and error["msg"], (path, error)
    elif response.status_code == 404:
        assert path == "/api/search" and "index" in response.json()["detail"]


@PROPERTY
@given(st.data())
def test_any_text_in_a_body_of_the_right_shape_is_answered(client, data):
    for path, body in bodies(lambda: data.draw(TEXTS)).items():
        assert_answered(post(client, path, body), path)
    # compare reading text_b as a solution, too
    body = {"pairs": [{"text_a": data.draw(TEXTS), "text_b": data.draw(TEXTS)}], "solution": True}
    assert_answered(post(client, "/api/compare", body), "/api/compare")


@PROPERTY
@given(st.sampled_from(PATHS), JSON)
def test_any_other_json_is_a_422(client, path, body):
    response = post(client, path, body)
    assert response.status_code == 422, (path, body, response.text[:300])
