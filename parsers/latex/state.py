"""What the parser mixins share: the mutable node ``_N`` and the parser state ``_ParserState``.

``_ParserState`` holds the tokens of one formula, the position, the bracket
scope and the errors, and the small helpers every part of the parser uses
(``peek``, ``here``, ``error``, ``missing``, ``accepts``, ``closing``...).
"""

from __future__ import annotations

from .symbols import _CLOSERS
from .tokenizer import _Tok, _tokenize


class _N:
    """Mutable node used while parsing; frozen into OptNode/OptEdge at the end."""

    __slots__ = ("type", "label", "start", "end", "kids", "flat", "outer")

    def __init__(self, type_: str, label: str, start: int, end: int, kids=None, flat: str | None = None):
        self.type = type_
        self.label = label
        self.start = start
        self.end = end
        self.kids = kids if kids is not None else []
        self.flat = flat  # label of an n-ary operator that may absorb further operands
        self.outer: tuple[int, int] | None = None  # extent with grouping delimiters, used by the parent's span

    def lo(self) -> int:
        return self.start if self.outer is None else min(self.start, self.outer[0])

    def hi(self) -> int:
        return self.end if self.outer is None else max(self.end, self.outer[1])

    def group(self, start: int, end: int) -> _N:
        """Mark this node as written inside delimiters spanning ``start:end``."""
        self.flat = None
        self.outer = (min(start, self.lo()), max(end, self.hi()))
        return self

    def add(self, role: str, node: _N) -> None:
        self.kids.append((role, node))
        if node.lo() < self.start:
            self.start = node.lo()
        if node.hi() > self.end:
            self.end = node.hi()


def _node(
    type_: str,
    label: str,
    kids: list[tuple[str, _N]],
    start: int | None = None,
    end: int | None = None,
    flat: str | None = None,
) -> _N:
    lo = start if start is not None else min((k.lo() for _, k in kids), default=0)
    hi = end if end is not None else max((k.hi() for _, k in kids), default=lo)
    for _, k in kids:
        if k.lo() < lo:
            lo = k.lo()
        if k.hi() > hi:
            hi = k.hi()
    return _N(type_, label, lo, hi, list(kids), flat)


def _args(nodes) -> list[tuple[str, _N]]:
    return [(f"arg{i}", n) for i, n in enumerate(nodes)]


class _ParserState:
    """Tokens, position, scope and errors of one parse, with the shared helpers."""

    def __init__(self, s: str, lo: int, hi: int, depth: int = 0):
        self.s = s
        self.toks = _tokenize(s, lo, hi)
        self.lo = lo
        self.pos = 0
        self.end = len(self.toks)
        self.scope: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.depth = depth
        self._match()

    # -- set-up ---------------------------------------------------------------
    def _match(self) -> None:
        toks = self.toks
        n = len(toks)
        match = [-1] * n
        stack: list[int] = []
        for i, t in enumerate(toks):
            if t.kind == "CHAR" and t.text == "{":
                stack.append(i)
            elif t.kind == "BEGIN":
                stack.append(i)
            elif (t.kind == "CHAR" and t.text == "}") or t.kind == "END":
                want_brace = t.kind == "CHAR"
                k = len(stack) - 1
                while k >= 0:
                    o = toks[stack[k]]
                    if (o.kind == "CHAR") == want_brace:
                        break
                    k -= 1
                if k < 0:
                    continue  # a stray closer: the parser reports it where it meets it
                o_idx = stack[k]
                del stack[k:]
                match[o_idx] = i
                match[i] = o_idx
        self.match = match
        nb = [n] * (n + 1)
        nd = [n] * (n + 1)
        nxt_b = nxt_d = n
        for i in range(n - 1, -1, -1):
            nb[i] = nxt_b
            nd[i] = nxt_d
            t = toks[i]
            if t.kind == "CHAR" and t.text == "|":
                nxt_b = i
            elif t.kind == "CMD" and t.text == r"\|":
                nxt_d = i
        self.next_bar = nb
        self.next_dbar = nd

    # -- helpers --------------------------------------------------------------
    def peek(self) -> _Tok | None:
        return self.toks[self.pos] if self.pos < self.end else None

    def here(self) -> int:
        if self.pos < self.end:
            return self.toks[self.pos].start
        if self.end > 0 and self.end <= len(self.toks):
            return self.toks[self.end - 1].end
        return self.lo

    def error(self, label: str, start: int, end: int, msg: str, kids=()) -> _N:
        self.errors.append(msg)
        return _node("E", label, list(kids), start, end)

    def missing(self, msg: str) -> _N:
        p = self.here()
        return self.error("", p, p, msg)

    def raw(self, tok: _Tok) -> str:
        return self.s[tok.start : tok.end]

    def accepts(self, tok: _Tok) -> bool:
        """Is ``tok`` a closer that some open group of the current scope waits for?"""
        for kind, closer in reversed(self.scope):
            if kind == "left":
                if tok.kind == "CLOSE":
                    return True
            elif tok.kind == "CHAR" and kind in ("paren", "opt", "abs"):
                if tok.text == closer or (kind == "paren" and tok.text in ")]"):
                    return True
            elif tok.kind == "CMD" and tok.text == closer:
                return True
        return False

    def in_scope(self, kind: str) -> bool:
        for k, _ in reversed(self.scope):
            if k == kind:
                return True
        return False

    def set_context(self) -> bool:
        if not self.scope:
            return False
        kind, closer = self.scope[-1]
        return kind == "set" or (kind == "left" and closer == r"\{")

    def is_closer(self, tok: _Tok) -> bool:
        k = tok.kind
        if k == "CHAR":
            return tok.text in ")]}"
        if k in ("CLOSE", "END", "BAD"):
            return True
        return k == "CMD" and tok.text in _CLOSERS

    def closing(self, i: int) -> int:
        """Index of the token matching the opener at ``i`` inside the current range, or -1."""
        m = self.match[i]
        return m if i < m < self.end else -1

    def too_deep(self) -> _N:
        start = self.here()
        end = self.toks[self.end - 1].end if self.end > self.pos else start
        self.pos = self.end
        return self.error(self.s[start:end], start, end, "nesting too deep")
