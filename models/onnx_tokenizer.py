"""The text encoder's tokenizer without transformers: its ``tokenizer.json`` read by the ``tokenizers`` library.

A model's tokenizer directory (``save_pretrained``'s) holds ``tokenizer.json``, the whole tokenizer
(vocabulary, added LaTeX tokens, normalizer, pre-tokenizer, ``[CLS] ... [SEP]`` template), and
``tokenizer_config.json``, which names the special tokens. transformers' fast tokenizer runs the same
``tokenizers.Tokenizer``; reading it directly takes 0.05 s instead of transformers' seconds of imports
(PyTorch among them), and gives the same ids (``models.batching.ArrayCollator`` tokenizes through the
``tokenizers`` back end for both).

    tokenizer, pad_id = read_tokenizer(package_dir / "encoder" / "tokenizer", split_digits=False)
    collator = ArrayCollator(tokenizer, vocab, pad_id=pad_id)
"""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path

from mathgraph.registry import CheckpointError

# How a pre-tokenizer that cuts numbers into single digits serialises (tokenizer.json).
INDIVIDUAL_DIGITS = {"type": "Digits", "individual_digits": True}


def read_tokenizer(directory: str | PathLike, split_digits: bool = False):
    """``(tokenizers.Tokenizer, pad_id)`` of the tokenizer saved in ``directory``; numbers cut into single
    digits when ``split_digits`` (a model's config says so: ``set_split_digits``). ``CheckpointError`` when
    the directory has no readable ``tokenizer.json`` or its padding token is not in the vocabulary."""
    from tokenizers import Tokenizer

    directory = Path(directory)
    try:
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    except Exception as err:  # tokenizers raises a bare Exception for a missing or damaged file
        raise CheckpointError(f"cannot read the tokenizer {directory / 'tokenizer.json'}: {err}") from err
    try:
        config = json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        config = {}
    pad = config.get("pad_token") or "[PAD]"
    pad = pad["content"] if isinstance(pad, dict) else pad
    pad_id = tokenizer.token_to_id(pad)
    if pad_id is None:
        raise CheckpointError(f"the tokenizer in {directory} has no padding token {pad!r}")
    set_split_digits(tokenizer, split_digits)
    return tokenizer, pad_id


def splits_digits(backend) -> bool:
    """Whether the ``tokenizers.Tokenizer`` ``backend`` cuts numbers into single digits (a
    ``Digits(individual_digits=True)`` pre-tokenizer anywhere in its pre-tokenization)."""
    pre_tokenizer = backend.pre_tokenizer
    return pre_tokenizer is not None and _has_individual_digits(json.loads(pre_tokenizer.__getstate__()))


def set_split_digits(backend, split: bool) -> None:
    """Make the ``tokenizers.Tokenizer`` ``backend`` cut every number into single digits, or undo that.

    ``split=True`` puts ``Digits(individual_digits=True)`` before its own pre-tokenizer, so ``"1,000.5"``
    becomes ``1 , 0 0 0 . 5``; ``split=False`` removes what ``split=True`` added (a tokenizer that splits
    digits by its own pre-tokenizer keeps doing so). Calling it twice is the same as once."""
    from tokenizers import pre_tokenizers

    if splits_digits(backend) == split:
        return
    if split:
        current = backend.pre_tokenizer
        digits = pre_tokenizers.Digits(individual_digits=True)
        backend.pre_tokenizer = pre_tokenizers.Sequence([digits] if current is None else [digits, current])
        return
    state = json.loads(backend.pre_tokenizer.__getstate__())
    steps = state.get("pretokenizers", []) if state.get("type") == "Sequence" else []
    if steps and steps[0] == INDIVIDUAL_DIGITS and len(steps) <= 2:  # the Sequence split=True made
        backend.pre_tokenizer = backend.pre_tokenizer[1] if len(steps) == 2 else None


def _has_individual_digits(state: dict) -> bool:
    return state == INDIVIDUAL_DIGITS or any(_has_individual_digits(s) for s in state.get("pretokenizers", []))


__all__ = ["read_tokenizer", "set_split_digits", "splits_digits", "INDIVIDUAL_DIGITS"]
