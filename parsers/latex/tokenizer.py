"""Tokeniser: a formula's characters -> ``_Tok`` tokens (commands resolved, spacing dropped)."""

from __future__ import annotations

import re

from .symbols import _CHAR_CMDS, _DELIMS, _DROP, _DROP_ARGS, _GREEK, _SEP_CMDS, _SYNONYMS, _TEXT_CMDS


class _Tok:
    __slots__ = ("kind", "text", "start", "end", "aux")

    def __init__(self, kind: str, text: str, start: int, end: int, aux=None):
        self.kind = kind
        self.text = text
        self.start = start
        self.end = end
        self.aux = aux


def _is_ascii_letter(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _skip_star(s: str, i: int, hi: int) -> int:
    """Past the optional ``*`` of a starred command (``\\operatorname*``, ``\\hspace*``, ``\\\\*``) at ``i``."""
    return i + 1 if i < hi and s[i] == "*" else i


def _skip_space(s: str, i: int, hi: int) -> int:
    while i < hi and s[i].isspace():
        i += 1
    return i


def _read_group(s: str, i: int, hi: int) -> tuple[int, int, int, bool]:
    """At ``s[i] == '{'``: (content start, content end, index after group, closed)."""
    depth = 0
    j = i
    while j < hi:
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1, j, j + 1, True
        j += 1
    return i + 1, hi, hi, False


def _skip_arg(s: str, i: int, hi: int) -> int:
    """Skip one macro argument (a braced group, a command or one character)."""
    i = _skip_space(s, i, hi)
    if i >= hi:
        return i
    if s[i] == "{":
        return _read_group(s, i, hi)[2]
    if s[i] == "\\":
        j = i + 1
        while j < hi and _is_ascii_letter(s[j]):
            j += 1
        return max(j, min(i + 2, hi))
    return i + 1


# A number in digits grouped by plain commas (1,000,000): a comma-separated list of numbers looks the same
# ((20,100), \{400,401,402\}), so only a run that no list would be is read as one number: one with a group led
# by 0 (10,000; 2,048; 1,000,000), with no digit, point or comma before it and no digit or comma after
# (2,500 and 1,234,567 stay apart: a list may be written so).
_GROUPED_DIGITS = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:,\d{3})+(?![\d,])")


def _thousands_commas(s: str, lo: int, hi: int) -> set[int]:
    """The positions of the commas in ``s[lo:hi]`` that separate thousands (``_GROUPED_DIGITS``)."""
    commas: set[int] = set()
    if "," not in s[lo:hi]:
        return commas
    for match in _GROUPED_DIGITS.finditer(s, lo, hi):
        groups = match.group().split(",")[1:]
        if any(group.startswith("0") for group in groups):
            commas.update(i for i in range(match.start(), match.end()) if s[i] == ",")
    return commas


def _tokenize(s: str, lo: int, hi: int) -> list[_Tok]:
    toks: list[_Tok] = []
    add = toks.append
    thousands = _thousands_commas(s, lo, hi)
    i = lo
    while i < hi:
        c = s[i]
        if c.isspace() or c == "~":
            i += 1
            continue
        if c == "\\":
            if i + 1 >= hi:
                add(_Tok("BAD", "\\", i, i + 1))
                i += 1
                continue
            j = i + 1
            if _is_ascii_letter(s[j]):
                while j < hi and _is_ascii_letter(s[j]):
                    j += 1
                name = s[i + 1 : j]
            else:
                name = s[j]
                j += 1
            i = _command(s, i, j, hi, name, toks)
            continue
        if "0" <= c <= "9":
            add(_Tok("DIG", c, i, i + 1))
            i += 1
            continue
        if _is_ascii_letter(c) or c.isalpha():
            add(_Tok("LET", c, i, i + 1))
            i += 1
            continue
        if c == "{" and s.startswith("{,}", i):
            if toks and toks[-1].kind == "DIG" and i + 3 < hi and "0" <= s[i + 3] <= "9":
                add(_Tok("THSEP", ",", i, i + 3))
            i += 3
            continue
        if (
            c == ","
            and s.startswith("\\!", i + 1)
            and toks
            and toks[-1].kind == "DIG"
            and toks[-1].end == i
            and i + 3 < hi
            and "0" <= s[i + 3] <= "9"
        ):
            add(_Tok("THSEP", ",", i, i + 3))
            i += 3
            continue
        if i in thousands:
            add(_Tok("THSEP", ",", i, i + 1))
            i += 1
            continue
        if c == "." and s.startswith("...", i):
            add(_Tok("CMD", r"\ldots", i, i + 3))
            i += 3
            continue
        if c == ":" and i + 1 < hi and s[i + 1] == "=":
            add(_Tok("CMD", ":=", i, i + 2))
            i += 2
            continue
        if c == "&":
            add(_Tok("AMP", "&", i, i + 1))
            i += 1
            continue
        if c == "%":
            add(_Tok("CMD", r"\%", i, i + 1))
            i += 1
            continue
        add(_Tok("CHAR", c, i, i + 1))
        i += 1
    return toks


def _read_delim(s: str, i: int, hi: int) -> tuple[str | None, int]:
    i = _skip_space(s, i, hi)
    if i >= hi:
        return None, i
    if s[i] == "\\":
        j = i + 1
        if j < hi and _is_ascii_letter(s[j]):
            while j < hi and _is_ascii_letter(s[j]):
                j += 1
        else:
            j = min(j + 1, hi)
        name = s[i:j]
        return _DELIMS.get(name, "."), j
    if s[i] in _DELIMS:
        return _DELIMS[s[i]], i + 1
    return None, i


def _command(s: str, i: int, j: int, hi: int, name: str, toks: list[_Tok]) -> int:
    """Tokenise the command ``\\name`` spanning ``s[i:j]``; return the next index."""
    add = toks.append
    if name in _TEXT_CMDS:
        return _text_command(s, i, j, hi, toks)
    if name == "operatorname":
        return _operatorname(s, i, j, hi, toks)
    if name in ("begin", "end"):
        return _begin_end(s, i, j, hi, name, toks)
    if name in ("left", "right", "middle"):
        return _sized_delim(s, i, j, hi, name, toks)
    if name in _DROP or name in (",", "!", ";", ":", ">", " ", "\n", "\t", "\r", "/", "-", "@", "*"):
        return j
    if name in _DROP_ARGS:
        k = _skip_star(s, j, hi)
        for _ in range(_DROP_ARGS[name]):
            k = _skip_arg(s, k, hi)
        return k
    if name in _SEP_CMDS or name == "hspace":
        k = j
        if name == "hspace":
            k = _skip_star(s, k, hi)
            k = _skip_arg(s, k, hi)
        add(_Tok("SEP", "\\" + name, i, k))
        return k
    if name == "\\" or name == "cr":
        return _row_break(s, i, j, hi, toks)
    if name == "not":
        return _negation(s, i, j, hi, toks)
    text = "\\" + name
    text = _SYNONYMS.get(text, text)
    if text in _CHAR_CMDS:
        add(_Tok("CHAR", text, i, j))
    else:
        add(_Tok("CMD", text, i, j))
    return j


def _text_command(s: str, i: int, j: int, hi: int, toks: list[_Tok]) -> int:
    """``\\text{...}`` and the like: one TEXT token holding the raw content."""
    add = toks.append
    k = _skip_space(s, j, hi)
    if k < hi and s[k] == "{":
        cs, ce, nxt, closed = _read_group(s, k, hi)
    elif k < hi:
        cs, ce = k, _skip_arg(s, k, hi)
        nxt, closed = ce, True
    else:
        cs = ce = nxt = k
        closed = False
    content = s[cs:ce]
    if closed and not content.strip():
        return nxt
    add(_Tok("TEXT", content, i, nxt, (cs, ce, closed)))
    return nxt


def _operatorname(s: str, i: int, j: int, hi: int, toks: list[_Tok]) -> int:
    """``\\operatorname{name}`` (or ``\\operatorname*``): one OPNAME token."""
    add = toks.append
    k = _skip_star(s, j, hi)
    k = _skip_space(s, k, hi)
    if k < hi and s[k] == "{":
        cs, ce, nxt, closed = _read_group(s, k, hi)
        label = re.sub(r"\\[A-Za-z]+|[{}\s]", "", s[cs:ce])
        add(_Tok("OPNAME", label or "operatorname", i, nxt, closed))
        return nxt
    add(_Tok("CMD", r"\operatorname", i, j))
    return j


def _begin_end(s: str, i: int, j: int, hi: int, name: str, toks: list[_Tok]) -> int:
    """``\\begin{env}`` / ``\\end{env}``: a BEGIN or END token (BAD without a closed name)."""
    add = toks.append
    k = _skip_space(s, j, hi)
    if k < hi and s[k] == "{":
        cs, ce, nxt, closed = _read_group(s, k, hi)
        if closed:
            add(_Tok("BEGIN" if name == "begin" else "END", s[cs:ce].strip(), i, nxt))
            return nxt
    add(_Tok("BAD", "\\" + name, i, j))
    return j


def _sized_delim(s: str, i: int, j: int, hi: int, name: str, toks: list[_Tok]) -> int:
    """``\\left``, ``\\right``, ``\\middle`` with their delimiter: OPEN, CLOSE or ``\\mid``."""
    add = toks.append
    delim, nxt = _read_delim(s, j, hi)
    if delim is None:
        return j
    if name == "middle":
        add(_Tok("CMD", r"\mid", i, nxt))
    else:
        add(_Tok("OPEN" if name == "left" else "CLOSE", delim, i, nxt))
    return nxt


def _row_break(s: str, i: int, j: int, hi: int, toks: list[_Tok]) -> int:
    """``\\\\`` or ``\\cr`` (with an optional ``*`` and ``[length]``): a ROW token."""
    add = toks.append
    k = _skip_star(s, j, hi)
    m = _skip_space(s, k, hi)
    if m < hi and s[m] == "[":
        close = s.find("]", m, hi)
        if close != -1 and close - m < 12:
            k = close + 1
    add(_Tok("ROW", r"\\", i, k))
    return k


def _negation(s: str, i: int, j: int, hi: int, toks: list[_Tok]) -> int:
    """``\\not`` and what it negates (``\\not=`` is ``\\neq``, ``\\not\\in`` is ``\\notin``...)."""
    add = toks.append
    k = _skip_space(s, j, hi)
    if k < hi:
        if s[k] == "=":
            add(_Tok("CMD", r"\neq", i, k + 1))
            return k + 1
        if s[k] in "<>|":
            add(_Tok("CMD", r"\not" + s[k], i, k + 1))
            return k + 1
        if s[k] == "\\":
            m = k + 1
            while m < hi and _is_ascii_letter(s[m]):
                m += 1
            inner = _SYNONYMS.get(s[k:m], s[k:m])
            if inner == r"\in":
                add(_Tok("CMD", r"\notin", i, m))
            elif inner == r"\mid":
                add(_Tok("CMD", r"\nmid", i, m))
            elif inner == r"\parallel":
                add(_Tok("CMD", r"\nparallel", i, m))
            else:
                add(_Tok("CMD", r"\not" + inner, i, m))
            return m
    add(_Tok("CMD", r"\neg", i, j))
    return j


def _is_paren(tok: _Tok | None) -> bool:
    return tok is not None and tok.text == "(" and tok.kind in ("CHAR", "OPEN")


def _is_greek(tok: _Tok) -> bool:
    return tok.kind == "CMD" and tok.text[1:] in _GREEK
