"""Index types: flat, ivf-flat, ivf-pq and hnsw indexes built from vector shards, saved, loaded
memory-mapped, searched with exact re-scoring, and the steps after the first stage (hybrid fusion, the alignment
step) the same on every type; older indexes still load."""

import builtins
import hashlib
import json
import sys

import numpy as np
import pytest

import mathgraph.tasks.search.index as index_module
from mathgraph.tasks.search import index_format, index_types
from mathgraph.tasks.search.index import SearchIndex, exact_search, exact_top_k, write_index
from mathgraph.tasks.search.index_format import IndexFormatError
from mathgraph.tasks.search.index_store import RowStore, VectorWriter, open_vectors

pytest.importorskip("faiss")

DIMENSION = 16
IDENTITY = {"kind": "test.vectors", "weights_sha256": "none", "mode": "raw", "dimension": DIMENSION}


def clustered_vectors(count=2000, clusters=40, seed=0):
    """Unit vectors in ``clusters`` tight groups (as near-duplicate problems are), no two equal."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, DIMENSION))
    vectors = centres[rng.integers(0, clusters, count)] + 0.15 * rng.normal(size=(count, DIMENSION))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def rows_of(count):
    return [{"id": i, "text": f"problem {i}"} for i in range(count)]


def shards_of(vectors, sizes=(700, 1000)):
    """``vectors`` cut into shards of uneven sizes, as an encoder's output files would be."""
    cuts = np.cumsum(sizes)
    return [vectors[a:b] for a, b in zip([0, *cuts], [*cuts, len(vectors)])]


# --------------------------------------------------------------------------- choosing and parameters
def test_auto_is_flat_below_a_hundred_thousand_rows_and_ivf_flat_from_there():
    assert index_types.choose_index_type("auto", 99_999) == "flat"
    assert index_types.choose_index_type("auto", 100_000) == "ivf-flat"
    assert index_types.choose_index_type("hnsw", 10) == "hnsw"
    with pytest.raises(ValueError, match="index type must be 'auto' or one of flat, ivf-flat, ivf-pq, hnsw"):
        index_types.choose_index_type("ivf", 10)


def test_build_and_search_parameters_by_size():
    # a million 384-d vectors: 2^round(log2 1000) = 1024 cells, trained on 65,536 vectors (64 a cell), 48 bytes
    # a code (8 dimensions each); nprobe 3 x 1024 / 128 = 24, and 80 candidates a hit re-scored
    assert index_types.build_parameters("ivf-pq", 1_000_000, 384) == {
        "nlist": 1024,
        "training_size": 65_536,
        "pq_m": 48,
        "pq_bits": 8,
    }
    assert index_types.search_parameters("ivf-pq", {"nlist": 1024}) == {"rescore": 80, "nprobe": 24}
    # 1,000 vectors: 32 cells would have 31 training points each (< 39): 16 cells; nprobe at least 8
    assert index_types.build_parameters("ivf-flat", 1000, 16) == {"nlist": 16, "training_size": 1000}
    assert index_types.search_parameters("ivf-flat", {"nlist": 16}) == {"rescore": 1, "nprobe": 8}
    # 2,000 training points for 256 codes a sub-quantizer is too few: log2(2000 / 39) -> 5 bits
    assert index_types.build_parameters("ivf-pq", 2000, 16)["pq_bits"] == 5
    assert index_types.build_parameters("hnsw", 5, 16) == {"hnsw_m": 32, "ef_construction": 200}
    assert index_types.search_parameters("hnsw", {}) == {"rescore": 1, "ef_search": 64}
    assert index_types.build_parameters("flat", 5, 16) == {}


# --------------------------------------------------------------------------- the files
def test_vector_writer_streams_shards_into_a_plain_npy_file(tmp_path):
    vectors = clustered_vectors(50)
    path = tmp_path / "v.npy"
    with VectorWriter(path, DIMENSION) as writer:
        for shard in shards_of(vectors, (7, 30)):
            writer.append(shard)
    assert writer.count == 50
    np.testing.assert_array_equal(np.load(path), vectors)
    mapped = open_vectors(path)
    assert isinstance(mapped, np.memmap) and mapped.shape == (50, DIMENSION)
    with pytest.raises(ValueError, match=r"a vector shard must be \[rows, 16\]"):
        with VectorWriter(tmp_path / "bad.npy", DIMENSION) as writer:
            writer.append(np.zeros((2, 8)))
    assert not (tmp_path / "bad.npy").exists()  # a failed write leaves no file


def test_row_store_reads_rows_by_number(tmp_path):
    path = tmp_path / "rows.jsonl"
    rows = [{"text": "première"}, {"text": "a\nb"}, {"id": 3}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + "\n", encoding="utf-8")
    store = RowStore(path)
    assert len(store) == 3 and store[1] == {"text": "a\nb"} and store[-1] == {"id": 3}
    assert list(store) == rows and store == rows and store[0:2] == rows[:2]
    with pytest.raises(IndexError):
        store[3]
    path.write_text('{"a": 1}\n{"a": 2}', encoding="utf-8")  # no newline after the last row
    assert list(RowStore(path)) == [{"a": 1}, {"a": 2}]


# --------------------------------------------------------------------------- every type
@pytest.mark.parametrize("index_type", ["flat", "ivf-flat", "ivf-pq", "hnsw"])
def test_each_type_built_from_shards_loads_mapped_and_finds_the_exact_top_k(tmp_path, index_type):
    vectors = clustered_vectors()
    queries = clustered_vectors(2020)[2000:]  # new points of the same clusters
    built = write_index(tmp_path / "idx", shards_of(vectors), rows_of(2000), "text", IDENTITY, index_type)
    files = {p.name for p in (tmp_path / "idx").iterdir()}
    assert files == {"config.json", "manifest.json", "vectors.npy", "rows.jsonl"} | (
        {"ann.faiss"} if index_type != "flat" else set()
    )
    index = SearchIndex.from_pretrained(tmp_path / "idx", encoder=None)
    assert index.index_type == built.index_type == index_type
    assert isinstance(index.embeddings, np.memmap) and isinstance(index.rows, RowStore)
    np.testing.assert_allclose(np.asarray(index.embeddings), vectors, atol=1e-6)
    exact_i, exact_s = exact_top_k(queries, vectors, 10)
    # every cell scanned, a wide beam, many candidates: the approximate types find the exact top 10
    index.search_parameters.update(nprobe=10_000, ef_search=500, rescore=50)
    hits = index.search_vectors(queries, k=10)
    assert [[h.index for h in q] for q in hits] == exact_i.tolist()
    # the scores are the exact cosines (re-scored from the stored vectors), and each hit carries its row
    np.testing.assert_allclose([[h.score for h in q] for q in hits], exact_s, atol=1e-5)
    assert all(h.row == {"id": h.index, "text": f"problem {h.index}"} for q in hits for h in q)
    # with the default parameters, recall@10 against exact search stays high on clustered vectors
    defaults = SearchIndex.from_pretrained(tmp_path / "idx", encoder=None)
    found = defaults.search_vectors(queries, k=10)
    recall = np.mean([len({h.index for h in q} & set(e)) / 10 for q, e in zip(found, exact_i.tolist())])
    assert recall >= 0.9
    exact = defaults.search_vectors(queries, k=10, approximate=False)  # exact on every type
    assert [[h.index for h in q] for q in exact] == exact_i.tolist()


def test_the_manifest_records_the_type_parameters_and_file_sizes(tmp_path):
    vectors = clustered_vectors()
    write_index(tmp_path, [vectors], rows_of(2000), "text", IDENTITY, "ivf-pq")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["version"] == 2 and manifest["index_type"] == "ivf-pq" and manifest["count"] == 2000
    # 2,000 rows: 2^round(log2 44.7) = 32 cells (32 x 39 <= 2,000 training points); 2 sub-quantizers of 8
    # dimensions; 5 bits (log2(2000 / 39) = 5.7)
    assert manifest["parameters"] == {
        "build": {"nlist": 32, "training_size": 2000, "pq_m": 2, "pq_bits": 5},
        "search": {"rescore": 80, "nprobe": 8},
    }
    assert manifest["bytes"]["vectors.npy"] == 128 + 2000 * DIMENSION * 4  # the header, then float32 rows
    assert set(manifest["sha256"]) == {"vectors.npy", "rows.jsonl", "ann.faiss"}


def test_an_in_memory_index_saves_its_type_and_searches_the_same_after_loading(tmp_path):
    vectors = clustered_vectors()
    index = SearchIndex(vectors, rows_of(2000), "text", IDENTITY, index_type="hnsw")
    before = index.search_vectors(vectors[:5], k=5)  # builds the graph in memory
    index.save_pretrained(tmp_path / "idx")  # writes that graph, not a new one
    loaded = SearchIndex.from_pretrained(tmp_path / "idx", encoder=None)
    assert loaded.index_type == "hnsw" and loaded.search_vectors(vectors[:5], k=5) == before
    with pytest.raises(ValueError, match="loaded from there"):
        loaded.save_pretrained(tmp_path / "idx")
    loaded.save_pretrained(tmp_path / "copy")  # a loaded index saves elsewhere, its structure included
    assert SearchIndex.from_pretrained(tmp_path / "copy", encoder=None).search_vectors(vectors[:5], k=5) == before


def test_rows_and_vectors_must_agree(tmp_path):
    with pytest.raises(ValueError, match="1999 rows but 2000 vectors"):
        write_index(tmp_path, [clustered_vectors()], rows_of(1999), "text", IDENTITY)
    assert not (tmp_path / "manifest.json").exists()  # nothing loads a failed build
    with pytest.raises(ValueError, match="corpus row 1: field 'text'"):
        write_index(tmp_path, [clustered_vectors(2)], [{"text": "a"}, {"id": 2}], "text", IDENTITY)


def test_a_failed_rebuild_leaves_the_index_there_whole(tmp_path):
    vectors = clustered_vectors()
    first = write_index(tmp_path / "idx", [vectors], rows_of(2000), "text", IDENTITY, "ivf-flat")
    (tmp_path / "idx" / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in (tmp_path / "idx").iterdir()}
    queries = vectors[:3]
    expected = [[h.index for h in q] for q in first.search_vectors(queries, k=5)]

    def shards_then_a_crash():
        yield vectors[:1000]
        raise KeyboardInterrupt  # the rebuild is stopped half-way through its vectors

    with pytest.raises(KeyboardInterrupt):
        write_index(tmp_path / "idx", shards_then_a_crash(), rows_of(2000), "text", IDENTITY, "flat")
    with pytest.raises(ValueError, match="1999 rows but 2000 vectors"):  # or fails at the end
        write_index(tmp_path / "idx", [vectors], rows_of(1999), "text", IDENTITY, "flat")
    assert {p.name: p.read_bytes() for p in (tmp_path / "idx").iterdir()} == before  # no file touched, none left
    index = SearchIndex.from_pretrained(tmp_path / "idx", encoder=None)
    assert (
        index.index_type == "ivf-flat"
        and [[h.index for h in q] for q in index.search_vectors(queries, k=5)] == expected
    )
    # a rebuild that completes replaces the index and keeps the directory's other files
    rebuilt = write_index(tmp_path / "idx", [vectors[:100]], rows_of(100), "text", IDENTITY, "flat")
    assert len(rebuilt) == 100 and rebuilt.index_type == "flat"
    assert {p.name for p in (tmp_path / "idx").iterdir()} == {
        "config.json",
        "manifest.json",
        "vectors.npy",
        "rows.jsonl",
        "notes.txt",
    }


def test_exact_search_in_blocks_equals_one_block(monkeypatch):
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(1000, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[500] = vectors[10]  # a tie: the lower row comes first, across blocks too
    queries = np.concatenate([vectors[10:11], rng.normal(size=(4, 8)).astype(np.float32)])
    whole = exact_top_k(queries, vectors, 6)
    monkeypatch.setattr(index_module, "EXACT_BLOCK_SCORES", 5 * 64)  # blocks of 64 rows
    blocked = exact_search(queries, vectors, 6)
    np.testing.assert_array_equal(blocked[0], whole[0])
    np.testing.assert_allclose(blocked[1], whole[1])
    assert blocked[0][0][:2].tolist() == [10, 500]


# --------------------------------------------------------------------------- the steps after the first stage
class WordEncoder:
    """Sums of random word vectors (seeded by the word): texts sharing words are close, and no two texts of
    different words tie."""

    def encode(self, texts, batch_size=32):
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
                out[i] += np.random.default_rng(seed).normal(size=32)
        return out

    def identity(self):
        return {"kind": "test.WordEncoder", "weights_sha256": "words", "mode": "bow", "dimension": 32}


def same_hits(a, b):
    """The same rows in the same order, with the same scores up to float rounding."""
    assert [[h.index for h in q] for q in a] == [[h.index for h in q] for q in b]
    np.testing.assert_allclose([[h.score for h in q] for q in a], [[h.score for h in q] for q in b], atol=1e-5)
    assert [[h.row for h in q] for q in a] == [[h.row for h in q] for q in b]


PROBLEMS = [
    f"{who} has {n} {thing} and buys {m} more how many {thing} now"
    for who in ("tom", "ann", "lee", "kim", "sam")
    for thing in ("apples", "pens", "books", "cards")
    for n, m in ((3, 4), (12, 5), (7, 9))
]


class RowTexts:
    """A stand-in alignment model that records the row texts it was given and scores longer texts higher."""

    def __init__(self):
        self.calls = []

    def predict(self, inputs):
        from mathgraph.models.task_io import ranking_result

        self.calls.append(inputs)
        return [ranking_result([float(len(c)) for c in candidates]) for _, candidates in inputs]


@pytest.mark.parametrize("index_type", ["ivf-flat", "ivf-pq", "hnsw"])
def test_hybrid_fusion_and_the_alignment_step_work_the_same_on_every_type(tmp_path, index_type):
    queries = ["tom has 12 apples and buys 5 more", "how many cards does kim have"]
    flat = SearchIndex.build(PROBLEMS, WordEncoder(), text_field="text", index_type="flat")
    other = SearchIndex.build(PROBLEMS, WordEncoder(), text_field="text", index_type=index_type)
    other.save_pretrained(tmp_path / "idx")
    other = SearchIndex.from_pretrained(tmp_path / "idx", encoder=WordEncoder())
    other.search_parameters.update(nprobe=10_000, ef_search=500, rescore=60)  # exhaustive: the same candidates
    hybrid = {"k": 5, "sparse_weight": 0.3}
    same_hits(other.search(queries, **hybrid), flat.search(queries, **hybrid))
    for index in (flat, other):
        index.structure = RowTexts()
    aligned = {"k": 5, "structure_weight": 0.5, "structure_min_cosine": -1.0}
    same_hits(other.search(queries, **aligned), flat.search(queries, **aligned))
    # the alignment step read each candidate's text by its row number
    (call,) = other.structure.calls
    first = other.search(queries, k=60)
    assert [texts for _, texts in call] == [
        [h.row["text"] for h in q][: len(texts)] for q, (_, texts) in zip(first, call)
    ]


# --------------------------------------------------------------------------- older indexes, damage, no faiss
def test_a_format_1_index_still_loads_as_flat(tmp_path):
    from safetensors.numpy import save_file

    from mathgraph.checksums import file_sha256

    vectors = clustered_vectors(30)
    save_file({"embeddings": vectors}, str(tmp_path / "embeddings.safetensors"))
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows_of(30)), encoding="utf-8")
    manifest = {
        "format": "mathgraph-search-index",
        "model_type": "search-index",
        "version": 1,
        "count": 30,
        "dimension": DIMENSION,
        "text_field": "text",
        "encoder": IDENTITY,
        "sha256": {name: file_sha256(tmp_path / name) for name in ("embeddings.safetensors", "rows.jsonl")},
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    index = SearchIndex.from_pretrained(tmp_path, encoder=None)
    assert index.index_type == "flat" and index.rows == rows_of(30)
    assert [h.index for h in index.search_vectors(vectors[7], k=1)[0]] == [7]


def test_large_files_are_checked_by_size_and_a_missing_structure_is_named(tmp_path, monkeypatch):
    write_index(tmp_path, [clustered_vectors()], rows_of(2000), "text", IDENTITY, "ivf-flat")
    monkeypatch.setattr(index_format, "CHECKSUM_LIMIT", 0)  # every file "large": sizes only
    data = bytearray((tmp_path / "vectors.npy").read_bytes())
    data[-1] ^= 1
    (tmp_path / "vectors.npy").write_bytes(bytes(data))
    SearchIndex.from_pretrained(tmp_path, encoder=None)  # same size: not hashed, so it loads
    (tmp_path / "vectors.npy").write_bytes(bytes(data[:-4]))
    with pytest.raises(IndexFormatError, match="vectors.npy does not match the checksum.*its size differs"):
        SearchIndex.from_pretrained(tmp_path, encoder=None)
    (tmp_path / "vectors.npy").write_bytes(bytes(data))
    (tmp_path / "ann.faiss").unlink()
    with pytest.raises(IndexFormatError, match="has no ann.faiss"):
        SearchIndex.from_pretrained(tmp_path, encoder=None)


def test_without_faiss_an_approximate_index_searches_exactly(tmp_path, monkeypatch):
    vectors = clustered_vectors()
    write_index(tmp_path, [vectors], rows_of(2000), "text", IDENTITY, "ivf-flat")
    index = SearchIndex.from_pretrained(tmp_path, encoder=None)
    real_import = builtins.__import__

    def no_faiss(name, *args, **kwargs):
        if name == "faiss":
            raise ImportError("no faiss")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_faiss)
    with pytest.warns(UserWarning, match=r'approximate search needs faiss \(pip install "mathgraph\[faiss\]"\)'):
        hits = index.search_vectors(vectors[:3], k=4)
    assert [[h.index for h in q] for q in hits] == exact_top_k(vectors[:3], vectors, 4)[0].tolist()
    with pytest.raises(ImportError, match=r'pip install "mathgraph\[faiss\]"'):
        index.search_vectors(vectors[:3], k=4, approximate=True)


def test_the_numpy_flat_structure_finds_what_faiss_flat_finds():
    import faiss

    from mathgraph.tasks.search.index_types import NumpyFlatIP

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = rng.standard_normal((7, 16)).astype(np.float32)
    theirs, ours = faiss.IndexFlatIP(16), NumpyFlatIP(16)
    for structure in (theirs, ours):
        structure.add(vectors[:100])
        structure.add(vectors[100:])  # added in two chunks, numbered on
    assert ours.ntotal == theirs.ntotal == 300
    for k in (1, 10, 301):  # 301: one more than it holds, padded as faiss pads
        their_scores, their_rows = theirs.search(queries, k)
        our_scores, our_rows = ours.search(queries, k)
        np.testing.assert_array_equal(our_rows, their_rows)
        np.testing.assert_allclose(our_scores, their_scores, rtol=0, atol=1e-5)
    assert our_rows[0, -1] == -1 and our_scores[0, -1] == np.finfo(np.float32).min
    # by hand: the best row for a stored vector is itself, at inner product 1
    scores, rows = ours.search(vectors[[42]], 1)
    assert rows.tolist() == [[42]] and scores[0, 0] == pytest.approx(1.0, abs=1e-6)


def test_a_flat_structure_without_faiss_is_the_numpy_one(monkeypatch):
    from mathgraph.tasks.search.index_types import NumpyFlatIP, new_structure

    monkeypatch.setitem(sys.modules, "faiss", None)
    assert isinstance(new_structure("flat", 8, {}), NumpyFlatIP)
    with pytest.raises(ImportError, match=r'pip install "mathgraph\[faiss\]"'):
        new_structure("hnsw", 8, {"hnsw_m": 4, "ef_construction": 8})
