"""The server in the base install, where matplotlib is not installed: the picture endpoint says which extra draws,
every other endpoint answers as before."""

from __future__ import annotations

import sys

import pytest
from fastapi.testclient import TestClient

from mathgraph.serve.app import create_app

PROBLEM = "Tom has 3 apples and buys 5 more. How many apples does he have?"


@pytest.fixture
def client_without_matplotlib(stand_service, monkeypatch):
    for name in [name for name in sys.modules if name == "matplotlib" or name.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails, as where it is not installed
    with TestClient(create_app(stand_service)) as client:
        yield client


def test_the_picture_names_the_draw_extra_and_the_rest_is_served(client_without_matplotlib):
    client = client_without_matplotlib
    drawn = client.post("/api/draw", json={"text": PROBLEM})
    assert drawn.status_code == 422
    assert drawn.json()["detail"] == (
        'drawing a graph needs matplotlib, which the base install leaves out: pip install "mathgraph[draw]"'
    )
    parsed = client.post("/api/parse", json={"texts": [PROBLEM], "layout": True})
    assert parsed.status_code == 200
    assert parsed.json()["graphs"][0]["text"] == PROBLEM and "layouts" in parsed.json()
    assert client.post("/api/check", json={"problem": PROBLEM, "solution": "3 + 5 = 8"}).status_code == 200
    compared = client.post("/api/compare", json={"pairs": [{"text_a": PROBLEM, "text_b": PROBLEM.replace("5", "6")}]})
    assert compared.status_code == 200
    assert client.get("/api/health").json()["status"] == "ok"
