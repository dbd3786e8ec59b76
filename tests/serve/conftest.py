"""The served models, loaded once: the shipped multi-task model and an index of 40 bundled MATH problems; and a
service of stand-in models (fast) for the tests of what any input does to the endpoints."""

import json

import pytest

from mathgraph.samples import SAMPLE_PATH

KPC_SAMPLE = SAMPLE_PATH.parent / "kpc_sample.jsonl"
INDEXED_ROWS = 40


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory):
    """A search index (``mathgraph index build``, shipped encoder) of the first 40 KPC sample problems."""
    from mathgraph.tasks.search.commands import build_index_from_file

    rows = [json.loads(line) for line in KPC_SAMPLE.read_text(encoding="utf-8").splitlines()[:INDEXED_ROWS]]
    corpus = tmp_path_factory.mktemp("serve") / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    output = corpus.parent / "index"
    build_index_from_file(corpus, model="default", output=output)
    return output


@pytest.fixture(scope="session")
def service(index_dir):
    from mathgraph.serve.service import Service

    return Service.load(index=index_dir)


class Stand:
    """A stand-in for every model: predictors that answer "a", an encoder of ones."""

    def predict(self, inputs, batch_size=32, graphs=None, rows=None):
        return [{"label": "a", "probabilities": {"a": 1.0}} for _ in inputs]

    def dimension(self, mode="joint"):
        return 2

    def encode(self, problems, mode="joint"):
        import numpy as np

        return np.ones((len(problems), 2), dtype=np.float32)


@pytest.fixture(scope="session")
def stand_service():
    """A ``Service`` whose KPC, QRC and QAM predictors and encoder are ``Stand``s: parsing, drawing, aligning
    and checking are the library's own, the models answer at once."""
    from mathgraph.serve.service import Service

    stand = Stand()
    return Service({"kpc": stand, "qrc": stand, "qam": stand}, stand, model_name="fake")
