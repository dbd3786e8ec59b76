"""The tokenizer read by the ``tokenizers`` library gives the ids transformers' AutoTokenizer gives."""

import pytest
from transformers import AutoTokenizer

from mathgraph.graph import GraphVocabulary
from mathgraph.models.batching import ArrayCollator, ProblemCollator
from mathgraph.models.onnx_tokenizer import read_tokenizer, splits_digits
from mathgraph.registry import SHIPPED_DIR, CheckpointError

TOKENIZER = SHIPPED_DIR / "encoder" / "tokenizer"
TEXTS = [
    "Find $x$ if $2x+3=7$.",
    r"Compute $\int_0^1 x^2\,dx$ and $\frac{1}{2}\sqrt{3}$ where $\angle ABC = 90^\circ$.",
    r"Let $\mathbb{R}$ be the reals and $\in$ be in; is $\infty \notin \mathbb{R}$?",
    "A train travels 1,000.5 miles in 12 hours. What is its average speed?",
    "[asy] draw((0,0)--(1,1)); [/asy] What is the slope of the line?",
    " ".join(["seven"] * 400),  # longer than the 256 tokens read: cut
    "Ünïcödé ça va? 日本語 and emoji 😀 too.",
]


def collators(split_digits: bool = False):
    from mathgraph.models.text_encoder import set_split_digits

    vocab = GraphVocabulary.from_pretrained(SHIPPED_DIR / "encoder")
    auto = AutoTokenizer.from_pretrained(TOKENIZER)
    set_split_digits(auto, split_digits)
    tokenizer, pad_id = read_tokenizer(TOKENIZER, split_digits=split_digits)
    return ArrayCollator(tokenizer, vocab, pad_id=pad_id), ProblemCollator(auto, vocab), auto


@pytest.mark.parametrize("split_digits", [False, True])
def test_tokenizer_json_gives_the_autotokenizers_ids(split_digits):
    light, full, auto = collators(split_digits)
    assert light.pad_id == auto.pad_token_id
    assert light.latex_tokens == full.latex_tokens and r"\frac" in light.latex_tokens
    with pytest.warns(UserWarning, match="was cut"):
        ids = light.token_ids(TEXTS)
    with pytest.warns(UserWarning, match="was cut"):
        expected = full.token_ids(TEXTS)
    reference = auto([full.encoder_text(t) for t in TEXTS], truncation=True, max_length=256)["input_ids"]
    assert [i.tolist() for i in ids] == [i.tolist() for i in expected] == reference
    assert len(ids[5]) == 256 and light.truncated == 1
    assert splits_digits(light.backend) == split_digits
    if split_digits:  # each digit a token of its own
        tokens = auto.convert_ids_to_tokens(ids[3].tolist())
        start = tokens.index(",") - 1
        assert tokens[start : start + 7] == ["1", ",", "0", "0", "0", ".", "5"]


def test_a_cut_text_reads_the_same_characters_with_either_tokenizer():
    light, full, _ = collators()
    long_text = "Tom has 3 apples. " * 80
    with pytest.warns(UserWarning):
        ids = light.token_ids([long_text])[0]
    with pytest.warns(UserWarning):
        expected = full.token_ids([long_text])[0]
    assert light.read_chars(long_text, ids) == full.read_chars(long_text, expected) < len(long_text)


def test_a_missing_tokenizer_is_a_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="cannot read the tokenizer"):
        read_tokenizer(tmp_path)
