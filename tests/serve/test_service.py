"""``mathgraph serve``'s service and app without a real model (fast): model work runs one call at a time
while requests run in parallel, the limits are checked, a search without an index is a 404."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from fastapi.testclient import TestClient

from mathgraph.serve.app import create_app
from mathgraph.serve.service import Limits, Service


class OverlapRecorder:
    """A KPC 'predictor' that takes a while and records how many calls ever ran at once."""

    def __init__(self):
        self.running, self.most, self.guard, self.calls = 0, 0, threading.Lock(), []

    def predict(self, inputs, batch_size=32, graphs=None, rows=None):
        self.calls.append(len(inputs))
        with self.guard:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)
        with self.guard:
            self.running -= 1
        return [{"label": "Algebra", "probabilities": {"Algebra": 1.0}, "text": text} for text in inputs]


class FixedEncoder:
    def dimension(self, mode="joint"):
        return 3

    def encode(self, problems, mode="joint"):  # texts, or the graphs the service parsed them into
        return np.array([[len(getattr(p, "text", p)), 0.0, 1.0] for p in problems], dtype=np.float32)


@pytest.fixture
def recorder():
    return OverlapRecorder()


@pytest.fixture
def client(recorder):
    service = Service({"kpc": recorder}, FixedEncoder(), model_name="fake")
    with TestClient(create_app(service, Limits(max_request_bytes=1000))) as client:
        yield client


def test_parallel_requests_run_the_model_one_call_at_a_time(client, recorder):
    texts = [f"problem {i}" for i in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda t: client.post("/api/predict/kpc", json={"inputs": [t]}).json(), texts))
    assert [a["results"][0]["text"] for a in answers] == texts  # each request got its own answer
    assert recorder.most == 1  # never two model calls at once
    # the requests that waited while the first call ran were run together, as one batch
    assert sum(recorder.calls) == 8 and len(recorder.calls) < 8 and max(recorder.calls) > 1


def test_a_bad_input_is_named_by_its_place_in_its_own_request(client):
    response = client.post("/api/predict/kpc", json={"inputs": ["fine", {"text_a": "a", "text_b": "b"}]})
    assert response.status_code == 422
    assert response.json()["detail"] == "input 1: kpc takes one text (a str) per input, got a tuple of 2"


def test_health_of_a_server_without_an_index(client):
    health = client.get("/api/health").json()
    assert health["model"] == "fake" and health["index"] is None
    assert health["tasks"] == [{"name": "kpc", "input": "single", "hybrid": False}]


def test_search_without_an_index_is_a_404_that_says_how_to_get_one(client):
    response = client.post("/api/search", json={"queries": ["x"]})
    assert response.status_code == 404 and "--index DIR" in response.json()["detail"]


def test_the_service_itself_says_how_to_get_an_index():
    with pytest.raises(LookupError, match="start the server with --index DIR"):
        Service({}, FixedEncoder()).search(["x"])


def test_encode_returns_the_vectors_as_lists(client):
    answer = client.post("/api/encode", json={"texts": ["ab", "abcd"]}).json()
    assert answer == {"mode": "joint", "dimension": 3, "vectors": [[2.0, 0.0, 1.0], [4.0, 0.0, 1.0]]}


def test_a_request_exactly_at_the_byte_limit_passes_and_one_byte_more_does_not(client):
    prefix, suffix = b'{"texts": ["', b'"]}'
    at_limit = prefix + b"x" * (1000 - len(prefix) - len(suffix)) + suffix
    assert len(at_limit) == 1000
    assert client.post("/api/encode", content=at_limit, headers={"Content-Type": "application/json"}).status_code == 200
    over = at_limit.replace(b"x", b"xx", 1)
    assert client.post("/api/encode", content=over, headers={"Content-Type": "application/json"}).status_code == 413


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="max_batch must be >= 1, got 0"):
        Limits(max_batch=0)


class GatedKpc:
    """A KPC 'predictor' whose first call waits at a gate; it records the inputs of every call, in order."""

    def __init__(self):
        self.calls, self.first_call, self.gate = [], threading.Event(), threading.Event()

    def predict(self, inputs, batch_size=32, graphs=None, rows=None):
        self.calls.append(list(inputs))
        if len(self.calls) == 1:
            self.first_call.set()
            self.gate.wait(10)
        return [{"label": "Algebra", "probabilities": {"Algebra": 1.0}} for _ in inputs]


def test_a_small_request_runs_between_the_chunks_of_a_large_one():
    from mathgraph.serve.service import MODEL_CHUNK

    kpc = GatedKpc()
    service = Service({"kpc": kpc}, FixedEncoder(), model_name="fake")
    large = [f"large problem {i}" for i in range(3 * MODEL_CHUNK[0])]
    with ThreadPoolExecutor(max_workers=2) as pool:
        large_done = pool.submit(service.predict, "kpc", large)
        assert kpc.first_call.wait(10)  # the large request's first chunk holds the model lock
        small_done = pool.submit(service.predict, "kpc", ["small problem"])
        for _ in range(1000):  # until the small request waits for the lock
            if service.model_lock.queued:
                break
            time.sleep(0.01)
        kpc.gate.set()
        assert len(small_done.result(10)) == 1 and len(large_done.result(10)) == len(large)
    chunk = MODEL_CHUNK[0]
    assert kpc.calls == [large[:chunk], ["small problem"], large[chunk : 2 * chunk], large[2 * chunk :]]


def test_a_request_over_the_character_budget_is_refused_before_any_work(recorder):
    with TestClient(
        create_app(Service({"kpc": recorder}, FixedEncoder(), model_name="fake"), Limits(max_request_chars=20))
    ) as small_budget:
        response = small_budget.post("/api/predict/kpc", json={"inputs": ["a" * 8, "b" * 8, "c" * 8]})
    assert response.status_code == 413
    assert response.json()["detail"] == (
        "the texts of this request have 24 characters in all; this server takes at most 20 a request "
        "(--max-request-chars): send them in several requests"
    )
    assert recorder.calls == []
