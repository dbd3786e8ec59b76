"""Is a string text? The check every entry point runs on a user's text before anything slow.

A Python ``str`` may hold lone surrogates (U+D800-U+DFFF), which are not characters: UTF-8 cannot encode
them, so spaCy, hashing and writing fail on them deep inside with a position in some internal string.
They come from two places: bytes that are not UTF-8, which Python decodes with ``surrogateescape`` (a
command-line argument, a file read that way: byte 0xff becomes U+DCFF), and ``\\ud800``-style escapes in
JSON. ``text_error`` says which, and where in the user's own text. Standard library only (the bottom layer).
"""

from __future__ import annotations

import re

from mathgraph.errors import UserError

_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_CONTEXT = 20  # characters of the text shown before the bad one


def text_error(text: str) -> str | None:
    """Why ``text`` is not text, or None when it is: ``"is not valid UTF-8: byte 0xff at character 5 (after
    'Tom h')"`` or ``"holds a lone surrogate U+D800 at character 5 (after 'Tom h'), which is not a character"``."""
    match = _SURROGATE_RE.search(text)
    if match is None:
        return None
    at, code = match.start(), ord(match.group())
    where = f"at character {at + 1}" + (f" (after {text[max(0, at - _CONTEXT) : at]!r})" if at else "")
    if 0xDC80 <= code <= 0xDCFF:  # what surrogateescape makes of a byte that is not UTF-8
        return f"is not valid UTF-8: byte 0x{code - 0xDC00:02x} {where}"
    return f"holds a lone surrogate U+{code:04X} {where}, which is not a character"


def check_text(text: str, name: str) -> None:
    """Raise ``ValueError("<name> <what is wrong>")`` unless ``text`` is text (``text_error``)."""
    error = text_error(text)
    if error is not None:
        raise UserError(f"{name} {error}")


__all__ = ["text_error", "check_text"]
