"""Shared fixtures: real sample problems parsed once, a tiny BERT for fast model tests, a captured stderr that
passes for a terminal."""

import os
import sys

import pytest

if "PYTEST_XDIST_WORKER" in os.environ and hasattr(os, "sched_setaffinity"):
    # under pytest -n N the N workers share the cores: each worker (and every process it starts) gets its own
    # share of them, so that torch, which sizes its threads by the cores a process may use, does not run
    # N x cores threads that take turns (a notebook that trains ran 5x slower so)
    _cores = sorted(os.sched_getaffinity(0))
    _workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    _index = int(os.environ["PYTEST_XDIST_WORKER"].removeprefix("gw"))
    if 1 < _workers <= len(_cores):
        os.sched_setaffinity(0, _cores[_index % _workers :: _workers])


@pytest.fixture(autouse=True)
def _graph_cache_in_tmp(tmp_path_factory, monkeypatch):
    # Parsing goes through the on-disk graph cache: keep the tests out of the user's ~/.cache
    # (one directory for the session; GraphCache creates it when first opened).
    monkeypatch.setenv("MATHGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "graph-cache"))


@pytest.fixture
def terminal_stderr(capsys, monkeypatch):
    """``capsys``'s stderr, passing for a terminal: mathgraph draws its progress bars only on a terminal. (The
    class is patched: ``capsys`` puts its own stream in place only when the test starts, after the fixtures.)"""
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(type(sys.stderr), "isatty", lambda self: True)
    return capsys


@pytest.fixture(scope="session")
def sample_graphs():
    from mathgraph.parsers.problem import ProblemParser
    from mathgraph.samples import sample_problems

    parser = ProblemParser("spacy")
    return [parser.parse(row["problem"]) for row in sample_problems()]


@pytest.fixture(scope="session")
def sample_vocab(sample_graphs):
    from mathgraph.graph import GraphVocabulary

    return GraphVocabulary.build(sample_graphs, min_freq=1)


@pytest.fixture(scope="session")
def tiny_text_dir(tmp_path_factory):
    """A randomly initialised 3-layer, 32-wide BERT with the packaged MiniLM tokenizer, saved as a directory."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from mathgraph.models.text_encoder import resolve_text_encoder

    tokenizer = AutoTokenizer.from_pretrained(resolve_text_encoder("default"))
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    directory = tmp_path_factory.mktemp("tiny-bert")
    BertModel(config, add_pooling_layer=False).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def build_tiny_encoder(tiny_text_dir):
    """``build(vocab_dir)``: a new tiny COMUS ``MathEncoder`` (3 BERT layers of 32, 3 GAT layers of 2 x 8,
    k = 2) in eval mode, with the vocabularies in ``vocab_dir`` (as ``tiny_vocab_dir`` holds them)."""
    from mathgraph.models.encoder import MathEncoder

    def build(vocab_dir):
        encoder = MathEncoder.build(
            vocab_dir,
            text_encoder=str(tiny_text_dir),
            gat_layers=3,
            gat_heads=2,
            gat_head_dim=8,
            relation_dim=4,
            memory_views=2,
            fusion_layers=2,
            dropout=0.0,
        )
        encoder.model.eval()
        return encoder

    return build


@pytest.fixture
def tiny_encoder(build_tiny_encoder, tiny_vocab_dir):
    """A tiny COMUS ``MathEncoder`` of its own (``build_tiny_encoder``) in eval mode."""
    return build_tiny_encoder(tiny_vocab_dir)


@pytest.fixture
def tiny_vocab_dir(tmp_path, sample_vocab):
    """Vocabularies of the sample problems plus two LaTeX tokens, as `mathgraph vocab` writes them."""
    import json

    sample_vocab.save_pretrained(tmp_path)
    (tmp_path / "latex_tokens.json").write_text(json.dumps(["\\frac", "\\in", "\\angle"]))
    return tmp_path
