"""Qwen-style digit tokens (``split_digits``): numbers cut into single digits before the text tokenizer.

The tiny models of ``tests/conftest.py`` use the packaged all-MiniLM-L6-v2 tokenizer
(BERT WordPiece), so these tests run the real tokenizer, only with a small BERT.
"""

import json
import re

import numpy as np
import pytest

from mathgraph.models.comus import CONFIG_NAME, TOKENIZER_DIR
from mathgraph.models.encoder import MathEncoder
from mathgraph.models.text_encoder import set_split_digits, splits_digits
from mathgraph.samples import sample_problems

TEXTS = [row["problem"] for row in sample_problems()]
TINY = {
    "gat_layers": 3,
    "gat_heads": 2,
    "gat_head_dim": 8,
    "relation_dim": 4,
    "memory_views": 2,
    "fusion_layers": 2,
    "dropout": 0.0,
}
_NUMBER = re.compile(r"^(##)?\d+$")


@pytest.fixture
def split_encoder(tiny_text_dir, tiny_vocab_dir):
    """The tiny encoder of ``tiny_encoder``, built with ``split_digits=True``."""
    return MathEncoder.build(tiny_vocab_dir, text_encoder=str(tiny_text_dir), split_digits=True, **TINY)


def _tokens(encoder: MathEncoder, text: str) -> list[str]:
    """What the text encoder reads of ``text``, special tokens left out (through the collator, as training does)."""
    ids = encoder.collator.token_ids([text])[0].tolist()
    return encoder.tokenizer.convert_ids_to_tokens(ids)[1:-1]


def _decoded(encoder: MathEncoder, text: str) -> str:
    ids = encoder.collator.token_ids([text])[0].tolist()
    return "".join(encoder.tokenizer.decode(ids, skip_special_tokens=True).split())


def test_numbers_become_single_digit_tokens(split_encoder):
    assert split_encoder.model.config.split_digits and splits_digits(split_encoder.tokenizer)
    assert _tokens(split_encoder, "1,000.5") == ["1", ",", "0", "0", "0", ".", "5"]
    assert _tokens(split_encoder, "The cost is $12 per hour") == ["the", "cost", "is", "$", "1", "2", "per", "hour"]
    # decoding gives the digits back (WordPiece decoding puts spaces between words)
    assert _decoded(split_encoder, "1,000.5") == "1,000.5"


def test_latex_commands_are_kept_and_only_numbers_differ(split_encoder, tiny_encoder):
    text = "$\\frac{12}{34}$"
    assert _tokens(split_encoder, text) == ["$", "\\frac", "{", "1", "2", "}", "{", "3", "4", "}", "$"]
    assert _tokens(tiny_encoder, text) == ["$", "\\frac", "{", "12", "}", "{", "34", "}", "$"]
    for problem in TEXTS:
        split, plain = _tokens(split_encoder, problem), _tokens(tiny_encoder, problem)
        # every token with a digit is one digit; LaTeX commands are the same tokens as without the option
        assert all(len(t) == 1 for t in split if any(c.isdigit() for c in t)), split
        assert [t for t in split if t.startswith("\\")] == [t for t in plain if t.startswith("\\")]
        # the same characters come back from both: only where the words are cut differs
        assert _decoded(split_encoder, problem) == _decoded(tiny_encoder, problem)
        # numbers standing as words of their own: removing the digits leaves the same tokens
        if problem == TEXTS[4]:  # "The average of the numbers 23 and $x$ is 27. ..."
            assert [t for t in split if not _NUMBER.match(t)] == [t for t in plain if not _NUMBER.match(t)]
        # the text itself is untouched: the graph parser and the collator see the original problem
        assert split_encoder.collator.encoder_text(problem) == tiny_encoder.collator.encoder_text(problem)


def test_feature_store_and_encode_use_digit_tokens(split_encoder, tiny_encoder):
    from mathgraph.models.features import FeatureStore

    store = FeatureStore(split_encoder.collator, TEXTS[7:8], with_graphs=False, show_progress=False)
    ids = store.features[0].input_ids.tolist()
    assert split_encoder.tokenizer.convert_ids_to_tokens(ids)[1:-1] == _tokens(split_encoder, TEXTS[7])
    assert store.length(TEXTS[7]) > FeatureStore(
        tiny_encoder.collator, TEXTS[7:8], with_graphs=False, show_progress=False
    ).length(TEXTS[7])
    # same weights (same seed), other tokens: other vectors
    assert not np.allclose(split_encoder.encode(TEXTS[7:8], mode="text"), tiny_encoder.encode(TEXTS[7:8], mode="text"))


def test_a_saved_split_model_still_splits(split_encoder, tmp_path):
    expected = split_encoder.encode(TEXTS[:3])
    split_encoder.save_pretrained(tmp_path)
    assert json.loads((tmp_path / CONFIG_NAME).read_text())["split_digits"] is True
    # whatever the saved tokenizer says (transformers 5 rebuilds a BERT tokenizer from its vocabulary
    # and drops the pre-tokenizer), the config re-applies it; here the saved one lacks it altogether
    tokenizer_file = tmp_path / TOKENIZER_DIR / "tokenizer.json"
    saved = json.loads(tokenizer_file.read_text())
    assert saved["pre_tokenizer"]["pretokenizers"][0] == {"type": "Digits", "individual_digits": True}
    saved["pre_tokenizer"] = saved["pre_tokenizer"]["pretokenizers"][1]
    tokenizer_file.write_text(json.dumps(saved))
    loaded = MathEncoder.from_pretrained(tmp_path, device="cpu")
    assert loaded.model.config.split_digits and splits_digits(loaded.tokenizer)
    assert _tokens(loaded, "1,000.5") == ["1", ",", "0", "0", "0", ".", "5"]
    assert np.array_equal(loaded.encode(TEXTS[:3]), expected)


def test_default_models_do_not_split(tiny_encoder, tmp_path):
    assert not tiny_encoder.model.config.split_digits and not splits_digits(tiny_encoder.tokenizer)
    assert _tokens(tiny_encoder, "1,000.5") == ["1", ",", "000", ".", "5"]
    tiny_encoder.save_pretrained(tmp_path)
    config = json.loads((tmp_path / CONFIG_NAME).read_text())
    assert config["split_digits"] is False
    # a config.json from before the option loads, as a model that does not split
    del config["split_digits"]
    (tmp_path / CONFIG_NAME).write_text(json.dumps(config))
    loaded = MathEncoder.from_pretrained(tmp_path, device="cpu")
    assert not loaded.model.config.split_digits and not splits_digits(loaded.tokenizer)


def test_set_split_digits_is_idempotent_and_reversible(tiny_encoder):
    tokenizer = tiny_encoder.tokenizer
    original = tokenizer.backend_tokenizer.pre_tokenizer.__getstate__()
    set_split_digits(tokenizer, True)
    set_split_digits(tokenizer, True)
    state = json.loads(tokenizer.backend_tokenizer.pre_tokenizer.__getstate__())
    assert state == {
        "type": "Sequence",
        "pretokenizers": [{"type": "Digits", "individual_digits": True}, json.loads(original)],
    }
    assert tokenizer.tokenize("x2 = 2024") == ["x", "2", "=", "2", "0", "2", "4"]
    set_split_digits(tokenizer, False)
    assert tokenizer.backend_tokenizer.pre_tokenizer.__getstate__() == original
    assert tokenizer.tokenize("x2 = 2024") == ["x", "##2", "=", "202", "##4"]
    # the model's config decides: a non-splitting model given a splitting tokenizer does not split
    set_split_digits(tokenizer, True)
    assert not splits_digits(MathEncoder(tiny_encoder.model, tokenizer, tiny_encoder.vocab).tokenizer)


def test_split_digits_is_a_new_model_option(split_encoder, tmp_path):
    from mathgraph.tasks.training.finetune import load_start_encoder

    split_encoder.save_pretrained(tmp_path)
    assert splits_digits(load_start_encoder(str(tmp_path)).tokenizer)  # a saved model keeps its setting
    with pytest.raises(ValueError, match="apply to --model untrained"):
        load_start_encoder(str(tmp_path), split_digits=True)


def test_index_identity_tells_split_models_apart(split_encoder, tiny_encoder):
    from mathgraph.tasks.search.embedders import MathEncoderEmbedder
    from mathgraph.tasks.search.index import IndexMismatchError, check_identity

    split, plain = MathEncoderEmbedder(split_encoder).identity(), MathEncoderEmbedder(tiny_encoder).identity()
    assert split["weights_sha256"] == plain["weights_sha256"]  # same seed, same weights
    assert split["split_digits"] is True and "split_digits" not in plain  # older indexes keep matching
    with pytest.raises(IndexMismatchError, match="split_digits"):
        check_identity(plain, split)


def test_cli_passes_split_digits_to_new_models(tmp_path, monkeypatch, capsys):
    import mathgraph.tasks.training.finetune
    import mathgraph.tasks.training.pretrain
    from mathgraph.cli import main

    seen = {}
    monkeypatch.setattr(
        mathgraph.tasks.training.finetune, "train_task", lambda *a, **kw: seen.setdefault("train", kw) and {}
    )
    monkeypatch.setattr(
        mathgraph.tasks.training.pretrain,
        "run_pretraining",
        lambda *a, **kw: seen.setdefault("pretrain", kw) and {"step": 0},
    )
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"problem": TEXTS[0]}) + "\n")
    out = str(tmp_path / "out")
    assert main(["-q", "train", "qrc", "--train", str(corpus), "--output", out, "--split-digits"]) == 0
    assert seen.pop("train")["split_digits"] is True
    assert main(["-q", "train", "qrc", "--train", str(corpus), "--output", out]) == 0
    assert seen.pop("train")["split_digits"] is None  # unset: a saved --model keeps its own
    assert main(["-q", "pretrain", "--corpus", str(corpus), "--output", out, "--split-digits"]) == 0
    assert seen.pop("pretrain")["split_digits"] is True
    capsys.readouterr()
    assert main(["-q", "train", "multitask", "--task", f"qrc:{corpus}", "--output", out, "--split-digits"]) == 2
    assert "unrecognized arguments: --split-digits" in capsys.readouterr().err  # not an option of train multitask
