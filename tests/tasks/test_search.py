"""SearchIndex: exact top-k against brute force, save/load round trip, encoder mismatch, damaged files, faiss."""

import hashlib
import json

import numpy as np
import pytest

import mathgraph.tasks.search.commands
import mathgraph.tasks.search.index
from mathgraph.tasks.search.commands import build_index_from_file
from mathgraph.tasks.search.embedders import Embedder, TextEmbedder, as_embedder, load_embedder
from mathgraph.tasks.search.index import (
    EMBEDDINGS_FILE,
    MANIFEST_FILE,
    ROWS_FILE,
    Hit,
    IndexFormatError,
    IndexMismatchError,
    SearchIndex,
    exact_top_k,
)


class HashingEncoder:
    """Deterministic bag-of-words vectors: texts sharing words are close. ``seed`` changes the model."""

    def __init__(self, dimension=16, seed=0):
        self.dimension, self.seed, self.calls = dimension, seed, 0

    def encode(self, texts, batch_size=32):
        self.calls += 1
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                h = hashlib.sha256(f"{self.seed}:{word}".encode()).digest()
                out[i, h[0] % self.dimension] += 1.0 + h[1] / 255
        return out

    def identity(self):
        return {
            "kind": "test.HashingEncoder",
            "weights_sha256": f"seed-{self.seed}",
            "mode": "bow",
            "dimension": self.dimension,
        }


CORPUS = [
    {"id": "p0", "problem": "find the area of the triangle with sides 3 4 5", "solution": "6"},
    {"id": "p1", "problem": "a circle has radius 2 find its area", "solution": "4 pi"},
    {"id": "p2", "problem": "how many primes are between 20 and 30", "solution": "2"},
    {"id": "p3", "problem": "the triangle has a right angle find the hypotenuse", "solution": "5"},
    {"id": "p4", "problem": "solve for x in 2x plus 3 equals 7", "solution": "2"},
    {"id": "p5", "problem": "natalia sold clips to 48 friends in april", "solution": "72"},
    {"id": "p6", "problem": "what is the remainder when 100 is divided by 7", "solution": "2"},
    {"id": "p7", "problem": "a coin is flipped twice what is the probability of two heads", "solution": "1/4"},
]


@pytest.fixture
def index():
    return SearchIndex.build(CORPUS, HashingEncoder(), text_field="problem", batch_size=3)


def brute_force(index, query_vectors, k):
    """The top k by a full sort of every cosine similarity."""
    e = index.embeddings.astype(np.float64)
    q = np.asarray(query_vectors, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    scores = q @ e.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(scores, order, axis=1)


def test_embeddings_are_unit_length_and_rows_kept(index):
    assert np.allclose(np.linalg.norm(index.embeddings, axis=1), 1.0, atol=1e-6)
    assert index.rows == CORPUS and len(index) == 8 and index.dimension == 16


@pytest.mark.parametrize("k", [1, 3, 8, 20])
def test_top_k_equals_brute_force(index, k):
    queries = ["triangle area", "probability of heads", "primes between 20 and 30", "x plus 3"]
    hits = index.search(queries, k=k)
    expected, expected_scores = brute_force(index, HashingEncoder().encode(queries), min(k, 8))
    for query_hits, order, scores in zip(hits, expected, expected_scores):
        assert [h.index for h in query_hits] == list(order)
        assert np.allclose([h.score for h in query_hits], scores, atol=1e-5)
        assert all(h.row is CORPUS[h.index] or h.row == CORPUS[h.index] for h in query_hits)


def test_random_vectors_match_brute_force():
    rng = np.random.default_rng(0)
    embeddings = rng.normal(size=(500, 24)).astype(np.float32)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    queries = rng.normal(size=(30, 24)).astype(np.float32)
    indices, scores = exact_top_k(queries, embeddings, 7)
    full = queries @ embeddings.T
    assert np.array_equal(indices, np.argsort(-full, axis=1, kind="stable")[:, :7])
    assert np.allclose(scores, np.sort(full, axis=1)[:, ::-1][:, :7])


def test_single_query_gives_one_list(index):
    hits = index.search(["area of a triangle"], k=2)[0]
    assert isinstance(hits, list) and all(isinstance(h, Hit) for h in hits)
    assert hits[0].row["id"] == "p0"
    assert hits[0].score >= hits[1].score
    assert json.loads(json.dumps(hits[0].to_dict()))["row"]["id"] == "p0"


def test_plain_strings_become_rows():
    index = SearchIndex.build(["one two", "three four"], HashingEncoder(), text_field="text")
    assert index.rows == [{"text": "one two"}, {"text": "three four"}]


def test_round_trip(index, tmp_path):
    index.save_pretrained(tmp_path / "idx")
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == sorted(
        ["config.json", MANIFEST_FILE, EMBEDDINGS_FILE, ROWS_FILE]
    )
    manifest = json.loads((tmp_path / "idx" / MANIFEST_FILE).read_text())
    assert manifest["encoder"] == HashingEncoder().identity() and manifest["count"] == 8
    loaded = SearchIndex.from_pretrained(tmp_path / "idx", encoder=HashingEncoder())
    assert np.array_equal(loaded.embeddings, index.embeddings)
    assert loaded.rows == index.rows and loaded.text_field == "problem"
    assert loaded.search(["coin probability"], k=3)[0] == index.search(["coin probability"], k=3)[0]


def test_load_without_encoder_searches_vectors_only(index, tmp_path):
    index.save_pretrained(tmp_path)
    # HashingEncoder names no model to load again: "auto" loads the vectors alone, as encoder=None does
    assert SearchIndex.from_pretrained(tmp_path).embedder is None
    loaded = SearchIndex.from_pretrained(tmp_path, encoder=None)
    with pytest.raises(ValueError, match="no encoder"):
        loaded.search(["triangle"])[0]
    assert loaded.search_vectors(index.embeddings[2], k=1)[0][0].index == 2


def test_other_model_is_a_mismatch(index, tmp_path):
    index.save_pretrained(tmp_path)
    with pytest.raises(IndexMismatchError, match="weights_sha256"):
        SearchIndex.from_pretrained(tmp_path, encoder=HashingEncoder(seed=1))
    with pytest.raises(IndexMismatchError, match="dimension"):
        SearchIndex.from_pretrained(tmp_path, encoder=HashingEncoder(dimension=8))


def test_empty_corpus_and_bad_k(index):
    with pytest.raises(ValueError, match="empty corpus"):
        SearchIndex.build([], HashingEncoder())
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="k must be"):
            index.search(["triangle"], k=k)[0]
    with pytest.raises(ValueError, match="query 1 is empty"):
        index.search(["triangle", "  "])
    with pytest.raises(TypeError, match="wrap a single query in a list"):
        index.search("triangle")  # a lone string is refused, as MathEncoder.encode refuses one


def test_bad_rows_and_encoders_are_named():
    with pytest.raises(ValueError, match="corpus row 1: field 'problem'.*fields: question"):
        SearchIndex.build([{"problem": "a b"}, {"question": "c d"}], HashingEncoder())
    with pytest.raises(TypeError, match="not an encoder"):
        SearchIndex.build(["a"], object())

    class WrongShape(HashingEncoder):
        def encode(self, texts, batch_size=32):
            return np.zeros((len(texts) + 1, 4))

    with pytest.raises(ValueError, match="returned shape"):
        SearchIndex.build(["a b"], WrongShape())


@pytest.mark.parametrize("damage", ["truncate_embeddings", "edit_rows", "bad_manifest", "no_manifest", "new_version"])
def test_damaged_files_are_clear_errors(index, tmp_path, damage):
    index.save_pretrained(tmp_path)
    if damage == "truncate_embeddings":
        data = (tmp_path / EMBEDDINGS_FILE).read_bytes()
        (tmp_path / EMBEDDINGS_FILE).write_bytes(data[: len(data) // 2])
        message = "checksum"
    elif damage == "edit_rows":
        (tmp_path / ROWS_FILE).write_text((tmp_path / ROWS_FILE).read_text().replace("triangle", "square"))
        message = "checksum"
    elif damage == "bad_manifest":
        (tmp_path / MANIFEST_FILE).write_text("{not json")
        message = "not valid JSON"
    elif damage == "no_manifest":
        (tmp_path / MANIFEST_FILE).unlink()
        message = "not a search index"
    else:
        manifest = json.loads((tmp_path / MANIFEST_FILE).read_text())
        (tmp_path / MANIFEST_FILE).write_text(json.dumps({**manifest, "version": 99}))
        message = "rebuild"
    with pytest.raises(IndexFormatError, match=message):
        SearchIndex.from_pretrained(tmp_path, encoder=HashingEncoder())


def test_faiss_gives_the_exact_top_k():
    faiss = pytest.importorskip("faiss")
    assert faiss is not None
    rng = np.random.default_rng(1)
    texts = [
        " ".join(rng.choice(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"], size=6)) + f" w{i}"
        for i in range(300)
    ]
    index = SearchIndex.build(texts, HashingEncoder(dimension=32), text_field="text")
    queries = texts[:20]
    exact = index.search(queries, k=5, approximate=False)
    for kind in ("flat", "hnsw"):
        approx = index.search(queries, k=5, approximate=True, approximate_kind=kind)
        for e, a in zip(exact, approx):
            # Equal scores may come in another order; the score lists and the set of rows must agree.
            assert np.allclose([h.score for h in e], [h.score for h in a], atol=1e-5)
            assert {h.index for h in e if h.score > e[-1].score + 1e-5} <= {h.index for h in a}


def test_missing_faiss_is_a_clear_error(index, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_faiss(name, *args, **kwargs):
        if name == "faiss":
            raise ImportError("no faiss")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_faiss)
    with pytest.raises(ImportError, match=r'pip install "mathgraph\[faiss\]"'):
        index.search(["triangle"], approximate=True)[0]
    assert index.search(["triangle"], k=1)[0]  # the default stays exact and works


def test_the_fake_encoder_is_an_embedder():
    assert isinstance(HashingEncoder(), Embedder)
    assert as_embedder(HashingEncoder()) is not None


def test_with_a_tiny_math_encoder(tiny_encoder, tmp_path):
    problems = [
        "Find $x$ if $2x+3=7$.",
        "What is the area of a circle of radius $r=2$?",
        "How many primes lie between $20$ and $30$?",
    ]
    index = SearchIndex.build(problems, tiny_encoder, text_field="problem", mode="fused")  # joint's old name
    assert index.identity["kind"] == "mathgraph.MathEncoder" and index.identity["mode"] == "joint"
    assert index.dimension == tiny_encoder.dimension("joint") == tiny_encoder.dimension("fused")
    hits = index.search([problems[1]], k=3)[0]
    assert hits[0].index == 1 and hits[0].score == pytest.approx(1.0, abs=1e-4)
    index.save_pretrained(tmp_path)
    loaded = SearchIndex.from_pretrained(tmp_path, encoder=tiny_encoder)
    assert [h.index for h in loaded.search([problems[1]], k=3)[0]] == [h.index for h in hits]
    with pytest.raises(IndexMismatchError, match="mode"):
        SearchIndex.from_pretrained(tmp_path, encoder=tiny_encoder, mode="text")
    with pytest.raises(IndexMismatchError):
        SearchIndex.from_pretrained(tmp_path, encoder=HashingEncoder(dimension=index.dimension))


def test_index_files_with_a_saved_math_encoder(tiny_encoder, tmp_path):
    """The CLI path: build from a JSONL corpus with a model directory, then search with the model it records."""
    model_dir = tmp_path / "model"
    tiny_encoder.save_pretrained(model_dir)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": i, "problem": p}) + "\n"
            for i, p in enumerate(
                [
                    "Find $x$ if $2x+3=7$.",
                    "What is $\\frac{1}{2}+\\frac{1}{3}$?",
                    "A circle has radius $3$. Find its area.",
                ]
            )
        )
    )
    built = build_index_from_file(corpus, model=model_dir, text_field="problem", output=tmp_path / "idx")
    assert built.identity["source"] == str(model_dir.resolve())
    index = SearchIndex.from_pretrained(tmp_path / "idx")  # the model is found from the manifest
    hits = index.search(["A circle has radius $3$. Find its area."], k=2)[0]
    assert hits[0].row["id"] == 2 and len(hits) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"problem": "ok"}) + "\n" + json.dumps({"question": "no problem field"}) + "\n")
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        build_index_from_file(bad, model=model_dir)


def test_an_index_built_in_python_finds_its_encoder_again(tiny_encoder, tmp_path):
    """SearchIndex.build with a loaded MathEncoder records where it came from; a built one records nothing."""
    from mathgraph.models.encoder import MathEncoder

    assert tiny_encoder.name_or_path is None
    model_dir = tmp_path / "model"
    tiny_encoder.save_pretrained(model_dir)
    encoder = MathEncoder.from_pretrained(model_dir)
    assert encoder.name_or_path == str(model_dir.resolve())
    SearchIndex.build(CORPUS, encoder, text_field="problem").save_pretrained(tmp_path / "idx")
    index = SearchIndex.from_pretrained(tmp_path / "idx")  # no encoder given: the recorded one is loaded
    assert index.search([CORPUS[1]["problem"]], k=1)[0][0].index == 1


def test_a_damaged_index_is_reported_before_its_model_loads(tmp_path, monkeypatch):
    import mathgraph.tasks.search.index

    SearchIndex.build(CORPUS, HashingEncoder(), text_field="problem").save_pretrained(tmp_path)
    weights = tmp_path / EMBEDDINGS_FILE
    weights.write_bytes(weights.read_bytes()[:40])
    monkeypatch.setattr(
        mathgraph.tasks.search.index, "load_embedder", lambda *a, **kw: pytest.fail("the model was loaded first")
    )
    with pytest.raises(IndexFormatError):
        SearchIndex.from_pretrained(tmp_path, encoder="any")


def test_text_only_encoder(tiny_text_dir, tmp_path):
    embedder = load_embedder(f"text:{tiny_text_dir}")
    assert isinstance(embedder, TextEmbedder) and isinstance(embedder, Embedder)
    texts = ["the area of a circle", "the remainder of a division", "probability of two heads"]
    index = SearchIndex.build(texts, embedder, text_field="text")
    assert index.identity["kind"] == "transformers.AutoModel" and index.dimension == 32
    assert index.search([texts[1]], k=1)[0][0].index == 1
    index.save_pretrained(tmp_path)
    assert SearchIndex.from_pretrained(tmp_path).search([texts[2]], k=1)[0][0].index == 2


def test_hybrid_search_fuses_standardised_dense_and_tfidf_scores(index):
    from sklearn.feature_extraction.text import TfidfVectorizer

    from mathgraph.models.late_fusion import fuse_scores
    from mathgraph.models.tfidf import VECTORIZER_DEFAULTS

    query = "find the area of a right triangle"
    dense_only = index.search([query], k=8)[0]
    assert [h.index for h in index.search([query], k=8, sparse_weight=0.0)[0]] == [h.index for h in dense_only]
    hits = index.search([query], k=3, sparse_weight=0.4)[0]
    # by hand: every row's cosine and TF-IDF cosine (TF-IDF fitted on the index's texts), fused
    vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS).fit([row["problem"] for row in CORPUS])
    sparse = (vectorizer.transform([query]) @ vectorizer.transform([row["problem"] for row in CORPUS]).T).toarray()[0]
    query_vector = HashingEncoder().encode([query])[0]
    dense = index.embeddings @ (query_vector / np.linalg.norm(query_vector))
    fused = fuse_scores(dense, sparse, 0.4)
    expected = np.argsort(-fused, kind="stable")[:3]
    assert [h.index for h in hits] == list(expected)
    assert [h.score for h in hits] == pytest.approx(list(fused[expected]), abs=1e-5)
    with pytest.raises(ValueError, match=r"sparse_weight must be in \[0, 1\]"):
        index.search([query], sparse_weight=1.5)[0]


def test_search_records_streams_in_chunks(monkeypatch):
    from mathgraph.jsonl import TextRecord
    from mathgraph.tasks.search.commands import search_records
    from mathgraph.tasks.search.index import SearchIndex

    class Axes:
        """Vectors along the axis named by the text's first word."""

        calls = []

        def encode(self, texts, batch_size=32):
            self.calls.append(len(texts))
            return np.eye(3, dtype=np.float32)[[int(t.split()[0]) for t in texts]]

        def identity(self):
            return {"kind": "test.Axes", "weights_sha256": "-", "mode": "-", "dimension": 3}

    embedder = Axes()
    index = SearchIndex.build([f"{i} row" for i in range(3)], embedder, text_field="t")
    embedder.calls.clear()
    monkeypatch.setattr(mathgraph.tasks.search.commands, "QUERY_CHUNK", 2)
    records = [TextRecord(line, f"{line % 3} query", {"id": f"q{line}"} if line % 2 else {}) for line in range(5)]
    results = list(search_records(index, records, k=2))
    assert embedder.calls == [2, 2, 1]  # the model sees the queries a chunk at a time
    assert [r["line"] for r in results] == [0, 1, 2, 3, 4] and [r.get("id") for r in results] == [
        None,
        "q1",
        None,
        "q3",
        None,
    ]
    assert [r["hits"][0]["index"] for r in results] == [0, 1, 2, 0, 1]
    assert results[1]["hits"][0] == {
        "rank": 1,
        "index": 1,
        "score": pytest.approx(1.0),
        "cosine": pytest.approx(1.0),
        "row": {"t": "1 row"},
    }
    assert [h["rank"] for h in results[0]["hits"]] == [1, 2]


class FixedStructure:
    """A stand-in SQR alignment model: a fixed score per row text, as ``AlignmentModel.predict`` returns them."""

    def __init__(self, score_of):
        self.score_of, self.calls = score_of, []

    def predict(self, inputs):
        self.calls.append(inputs)
        from mathgraph.models.task_io import ranking_result

        return [ranking_result([self.score_of(c) for c in candidates]) for _, candidates in inputs]


def test_structure_signal_rescores_the_first_stage(index):
    query = "find the area of a circle"
    first = index.search([query], k=len(CORPUS))[0]
    boosted = first[-1].row["problem"]  # the row the first stage ranks last
    index.structure = FixedStructure(lambda text: 10.0 if text == boosted else 0.0)
    every_row = {"structure_min_cosine": -1.0}  # a cosine is never below -1: every first-stage row is scored
    assert index.search([query], k=2, structure_weight=0.0)[0][0].index == first[0].index  # weight 0: no structure
    assert index.structure.calls == []
    hits = index.search([query], k=2, structure_weight=1.0, **every_row)[0]
    assert hits[0].row["problem"] == boosted
    (call,) = index.structure.calls
    assert call[0][0] == query and len(call[0][1]) == len(CORPUS)  # every first-stage row up to STRUCTURE_RERANK
    # halfway, the fused score is the mean of the two standardised scores (models.late_fusion.fuse_scores)
    from mathgraph.models.late_fusion import fuse_scores

    half = index.search([query], k=len(CORPUS), structure_weight=0.5, **every_row)[0]
    expected = fuse_scores([h.score for h in first], [10.0 if h.row["problem"] == boosted else 0.0 for h in first], 0.5)
    assert sorted(round(h.score, 5) for h in half) == sorted(round(float(v), 5) for v in expected)
    with pytest.raises(ValueError, match="structure_weight"):
        index.search([query], structure_weight=1.5)[0]


def test_the_structure_step_scores_only_rows_close_to_the_query(index):
    query = "find the area of a circle"
    first = index.search([query], k=len(CORPUS))[0]  # no sparse weight: the scores are cosines
    close = first[:3]
    threshold = (first[2].score + first[3].score) / 2
    far, third = first[-1].row["problem"], first[2].row["problem"]
    index.structure = FixedStructure(lambda text: 10.0 if text in (far, third) else 0.0)
    hits = index.search([query], k=len(CORPUS), structure_weight=1.0, structure_min_cosine=threshold)[0]
    # only the three close rows were asked; the far row's 10 was never seen, the third row's lifted it to the top
    (call,) = index.structure.calls
    assert call == [(query, [h.row["problem"] for h in close])]
    assert hits[0].row["problem"] == third
    from mathgraph.models.late_fusion import fuse_scores

    expected = fuse_scores([h.score for h in first], [10.0 if h.index == close[2].index else 0.0 for h in first], 1.0)
    assert [h.index for h in hits] == [first[i].index for i in np.argsort(-expected, kind="stable")]
    # no row that close: no call, and the first stage's hits as they were (cosine scores, not standardised)
    index.structure.calls.clear()
    assert index.search([query], k=3, structure_weight=1.0, structure_min_cosine=1.01)[0] == first[:3]
    assert index.structure.calls == []


def test_close_variant_scores_gates_per_list():
    from mathgraph.models.alignment_model import close_variant_scores

    model = FixedStructure(lambda text: float(len(text)))
    lists = [("q1", ["a", "bbb", "cc"]), ("q2", ["dddd"]), ("q3", ["e", "ff"])]
    cosines = [np.array([0.9, 0.2, 0.8]), np.array([0.1]), np.array([0.5, 0.95])]
    scores = close_variant_scores(model, lists, cosines, 0.8)
    assert model.calls == [[("q1", ["a", "cc"]), ("q3", ["ff"])]]  # one call, the close candidates only
    assert scores[0].tolist() == [1.0, 0.0, 2.0] and scores[1] is None and scores[2].tolist() == [0.0, 2.0]


def test_a_progress_bar_over_the_corpus_gives_the_same_index(terminal_stderr):
    """``show_progress``: chunks of 4 batches of similar length, in a shuffled order, under one bar; the vectors
    and rows are those of the plain build, in the corpus' order."""
    texts = [f"problem {i} " + "word " * (i % 7) for i in range(50)]
    plain = SearchIndex.build(texts, HashingEncoder(), batch_size=2)
    encoder = HashingEncoder()
    shown = SearchIndex.build(texts, encoder, batch_size=2, show_progress=True)
    np.testing.assert_array_equal(shown.embeddings, plain.embeddings)
    assert shown.rows == plain.rows
    assert encoder.calls == 7  # 50 texts in chunks of 2 x 4
    err = terminal_stderr.readouterr().err
    assert "indexing" in err and "50/50" in err


def test_build_index_from_file_takes_the_first_n_rows_and_estimates_the_time(tmp_path, monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    monkeypatch.setattr(mathgraph.tasks.search.commands, "load_embedder", lambda *args, **kwargs: HashingEncoder())
    monkeypatch.setattr(mathgraph.tasks.search.commands, "_load_average", lambda: 0.0)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in CORPUS))
    index = build_index_from_file(corpus, limit=3, show_progress=True)
    assert [row["id"] for row in index.rows] == ["p0", "p1", "p2"]
    assert "indexing 3 problems: roughly 1 s (about 43 problems a second on 2 idle CPU cores" in capsys.readouterr().err
    with pytest.raises(ValueError, match="limit must be >= 1"):
        build_index_from_file(corpus, limit=0)


def test_the_rough_estimate_is_slower_on_busy_cores(monkeypatch):
    import torch

    from mathgraph.tasks.search.commands import BUSY_SLOWDOWN, rough_seconds

    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    monkeypatch.setattr(mathgraph.tasks.search.commands, "_load_average", lambda: 0.2)
    idle, basis = rough_seconds(HashingEncoder(), 7500)
    assert idle == pytest.approx(7500 / 43) and "2 idle CPU cores" in basis
    monkeypatch.setattr(mathgraph.tasks.search.commands, "_load_average", lambda: 2.5)
    busy, basis = rough_seconds(HashingEncoder(), 7500)
    assert busy == pytest.approx(idle * BUSY_SLOWDOWN) and "kept busy by other work (load average 2.5)" in basis
    assert 18 * 60 < busy < 20 * 60  # measured: 7,500 problems beside a training run took 19 min
