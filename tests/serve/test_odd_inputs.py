"""No endpoint answers 500, whatever the text: odd but valid Unicode gets an answer, a lone surrogate (which
JSON can carry as ``"\\ud800"`` but no parser can encode) a 422 that names the field. The service's models
are stand-ins (fast); parsing, drawing, aligning and checking are the library's own."""

import json

import pytest
from fastapi.testclient import TestClient

from mathgraph.serve.app import create_app

ODD_TEXTS = [
    "Tom has 3 apples.\x00 He eats 1.",  # a NUL character
    "Tom has 3 🍎 and 2 🍐; how many fruit?",  # outside the Basic Multilingual Plane
    "توم لديه 3 تفاحات. How many apples?",  # right-to-left script
    "$$$$ $ \\frac{ $x^{2$ \\\\ }",  # broken LaTeX
    "9" * 3000,  # one long number
    "\ufeff\u200bWhat is 2+2?\u2028And 3+3?",  # byte-order mark, zero-width space, line separator
    "e\u0301\u0301\u0301 = 5",  # combining marks
    "???!!!...",  # no words
]


@pytest.fixture(scope="module")
def client(stand_service):
    with TestClient(create_app(stand_service), raise_server_exceptions=False) as client:
        yield client


def bodies(text):
    """Every endpoint's body with ``text`` in it: (path, body, the field that holds it)."""
    pair = {"text_a": "Tom has 3 apples.", "text_b": text}
    return [
        ("/api/parse", {"texts": [text]}, ["texts", 0]),
        ("/api/draw", {"text": text}, ["text"]),
        ("/api/encode", {"texts": [text]}, ["texts", 0]),
        ("/api/predict/kpc", {"inputs": [text]}, ["inputs", 0, "text"]),
        ("/api/predict/qrc", {"inputs": [pair]}, ["inputs", 0, "pair", "text_b"]),
        ("/api/compare", {"pairs": [pair]}, ["pairs", 0, "text_b"]),
        ("/api/compare", {"pairs": [pair], "solution": True}, ["pairs", 0, "text_b"]),
        ("/api/check", {"problem": "Tom has 3 apples.", "solution": text}, ["solution"]),
        ("/api/check", {"problem": text, "solution": "3 + 1 = 4"}, ["problem"]),
    ]


@pytest.mark.parametrize("text", ODD_TEXTS, ids=range(len(ODD_TEXTS)))
def test_odd_text_gets_an_answer(client, text):
    for path, body, _ in bodies(text):
        response = client.post(path, json=body)
        assert response.status_code == 200, (path, response.text[:300])


def test_a_lone_surrogate_is_a_422_naming_the_field(client):
    for path, body, field in bodies("Tom \ud800 has 3 apples."):
        # json.dumps escapes the surrogate as \ud800, as a client's JSON would carry it
        response = client.post(path, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        assert response.status_code == 422, (path, response.text[:300])
        [error] = response.json()["detail"]
        assert error["loc"] == ["body", *field]
        assert "the text is not valid Unicode: a lone surrogate (U+D800) at character 4" in error["msg"]
        assert error["input"] == "Tom \ufffd has 3 apples."  # shown, with the surrogate replaced
