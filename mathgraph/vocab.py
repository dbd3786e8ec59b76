"""Vocabularies of node labels and relations with deterministic ids.

Ids are assigned by descending corpus frequency, ties broken by the string
itself, after the special tokens. The same corpus therefore gives the same
ids in every run and on every machine (never ``set`` order).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike

PAD = "[PAD]"
UNK = "[UNK]"


class Vocabulary:
    """A fixed string -> id mapping with ``[PAD]`` = 0 and ``[UNK]`` = 1.

    Unknown strings map to the ``[UNK]`` id; ``vocab.tokens[i]`` is the
    string of id ``i``.
    """

    def __init__(self, tokens: Sequence[str], specials: Sequence[str] = (PAD, UNK)):
        ordered = list(specials) + [t for t in tokens if t not in specials]
        if len(set(ordered)) != len(ordered):
            raise ValueError("vocabulary tokens must be unique")
        self.specials = tuple(specials)
        self.tokens: tuple[str, ...] = tuple(ordered)
        self._ids = {token: i for i, token in enumerate(self.tokens)}

    @classmethod
    def build(
        cls,
        counts: Mapping[str, int] | Iterable[str],
        min_freq: int = 1,
        max_size: int | None = None,
        specials: Sequence[str] = (PAD, UNK),
    ) -> Vocabulary:
        """Build from a frequency mapping or an iterable of occurrences.

        Keeps strings seen at least ``min_freq`` times, most frequent first
        (ties in string order), at most ``max_size`` of them besides the
        specials.
        """
        if min_freq < 1:
            raise ValueError(f"min_freq must be >= 1, got {min_freq}")
        counter = Counter(counts) if not isinstance(counts, Mapping) else Counter(dict(counts))
        kept = sorted((t for t, c in counter.items() if c >= min_freq), key=lambda t: (-counter[t], t))
        if max_size is not None:
            kept = kept[:max_size]
        return cls(kept, specials=specials)

    @property
    def pad_id(self) -> int:
        return self._ids[PAD]

    @property
    def unk_id(self) -> int:
        return self._ids[UNK]

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self._ids

    def __getitem__(self, token: str) -> int:
        return self._ids.get(token, self.unk_id)

    def lookup(self, tokens: Iterable[str]) -> list[int]:
        """Ids of ``tokens``, unknown ones mapped to ``[UNK]``."""
        return [self[t] for t in tokens]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and self.tokens == other.tokens

    def __repr__(self) -> str:
        return f"Vocabulary(size={len(self)})"

    def to_dict(self) -> dict:
        return {"specials": list(self.specials), "tokens": list(self.tokens)}

    @classmethod
    def from_dict(cls, data: Mapping) -> Vocabulary:
        try:
            tokens, specials = data["tokens"], data["specials"]
        except (KeyError, TypeError) as err:
            raise ValueError(f"not a vocabulary: expected 'tokens' and 'specials', got {data!r:.80}") from err
        if list(tokens[: len(specials)]) != list(specials):
            raise ValueError("vocabulary file is inconsistent: tokens must start with the specials")
        return cls(tokens, specials=specials)

    def save(self, path: str | PathLike) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, ensure_ascii=False, indent=0)

    @classmethod
    def load(cls, path: str | PathLike) -> Vocabulary:
        with open(path, encoding="utf-8") as f:
            return cls.from_dict(json.load(f))
