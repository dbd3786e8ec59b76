"""MathEncoder on a tiny model, and once with the real packaged MiniLM."""

import numpy as np
import pytest
import torch

from mathgraph.graph import MathSyntaxGraph, Node
from mathgraph.models.comus import CheckpointError
from mathgraph.models.encoder import MathEncoder
from mathgraph.samples import sample_problems

TEXTS = [row["problem"] for row in sample_problems()]


def test_encode_keeps_order_and_modes(tiny_encoder, sample_graphs):
    vectors = tiny_encoder.encode(TEXTS, batch_size=4)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), 48)
    reverse = tiny_encoder.encode(TEXTS[::-1], batch_size=3)
    assert np.allclose(reverse[::-1], vectors, atol=1e-5)
    # Pre-parsed graphs and texts give the same vectors; modes are the two halves.
    assert np.allclose(tiny_encoder.encode(sample_graphs, batch_size=4), vectors, atol=1e-5)
    assert np.allclose(tiny_encoder.encode(TEXTS, mode="text"), vectors[:, :32], atol=1e-5)
    assert np.allclose(tiny_encoder.encode(TEXTS, mode="graph"), vectors[:, 32:], atol=1e-5)
    assert tiny_encoder.encode([]).shape == (0, 48)


def test_a_mode_is_named_as_both_runtimes_name_it():
    from mathgraph.models.onnx_package import canonical_mode

    assert [canonical_mode(m) for m in ("fused", "joint", "text", "graph")] == ["joint", "joint", "text", "graph"]
    with pytest.raises(ValueError, match="mode must be one of"):
        canonical_mode("both")


def test_encode_rejects_bad_arguments(tiny_encoder):
    with pytest.raises(TypeError, match="list of problems"):
        tiny_encoder.encode("Find $x$.")
    with pytest.raises(ValueError, match="mode must be one of"):
        tiny_encoder.encode(TEXTS, mode="both")
    with pytest.raises(ValueError, match="problem 1: the problem text is empty"):
        tiny_encoder.encode(["Find $x$.", " "])


def test_builds_are_reproducible_and_round_trip(build_tiny_encoder, tiny_vocab_dir, tiny_encoder, tmp_path):
    again = build_tiny_encoder(tiny_vocab_dir)  # a second build of the same configuration
    expected = tiny_encoder.encode(TEXTS[:3])
    assert np.array_equal(again.encode(TEXTS[:3]), expected)
    tiny_encoder.save_pretrained(tmp_path)
    loaded = MathEncoder.from_pretrained(tmp_path, device="cpu")
    assert np.array_equal(loaded.encode(TEXTS[:3]), expected)
    assert loaded.tokenizer.get_added_vocab().keys() == tiny_encoder.tokenizer.get_added_vocab().keys()
    assert loaded.vocab == tiny_encoder.vocab


def test_missing_vocabulary_is_a_clear_error(tiny_encoder, tmp_path):
    tiny_encoder.save_pretrained(tmp_path)
    (tmp_path / "relation_vocab.json").unlink()
    with pytest.raises(CheckpointError, match="vocabularies"):
        MathEncoder.from_pretrained(tmp_path)


def test_graphs_from_another_parser_warn(tiny_encoder, sample_graphs):
    from dataclasses import replace

    with pytest.warns(UserWarning, match="'stanza'"):
        tiny_encoder.encode([replace(sample_graphs[0], parser="stanza")])


@pytest.mark.slow
def test_untrained_architecture_with_the_packaged_minilm():
    encoder = MathEncoder.from_pretrained("untrained", device="cpu")
    assert encoder.model.config.fusion_layers == 2 and len(encoder.model.text.encoder.layer) == 6
    assert {"\\frac", "\\in", "\\infty"} <= encoder.collator.latex_tokens
    assert encoder.tokenizer.tokenize("\\frac{1}{2} \\infty")[0] == "\\frac"
    # A command the vocabulary lacks is not cut after a known prefix (\in + "tercal").
    batch = encoder.collator([MathSyntaxGraph("$\\intercal$", (Node(0, "root", "[ROOT]"),), ())])
    tokens = encoder.tokenizer.convert_ids_to_tokens(batch.input_ids[0])
    assert "\\in" not in tokens and "\\" in tokens
    vectors = encoder.encode(TEXTS, batch_size=4)
    assert encoder.model.config.gat_heads == 6  # the GAT is as wide as MiniLM: 6 x 64 = 384
    from mathgraph.tasks.training.finetune import load_start_encoder

    wide = load_start_encoder("untrained", gat_heads=12)  # COMUS's own width, by option
    assert wide.model.config.gat_hidden == 768 and wide.model.output_dim == 384 + 768
    assert vectors.shape == (len(TEXTS), 384 + 384) and np.isfinite(vectors).all()
    # the same weights on every load (the fresh layers are seeded); a batch of 2 pads to another length than the
    # batch of 4 above, which moves the float rounding of the sums (seen: 1e-6), not the vectors
    again = MathEncoder.from_pretrained("untrained", device="cpu").encode(TEXTS[:2])
    np.testing.assert_allclose(again, vectors[:2], rtol=0, atol=1e-5)
    # Untrained, but [CLS] is MiniLM's: a paraphrase is closer than an unrelated problem.
    text = encoder.encode(
        TEXTS[:1]
        + [
            "Let $f$ be the function with $f(x) = -2 \\sin(\\pi x)$. How many $x$ with "
            "$-2 \\le x \\le 2$ satisfy $f(f(f(x))) = f(x)$?",
            TEXTS[7],
        ],
        mode="text",
    )
    text = text / np.linalg.norm(text, axis=1, keepdims=True)
    assert text[0] @ text[1] > text[0] @ text[2]
    assert torch.get_default_dtype() == torch.float32
