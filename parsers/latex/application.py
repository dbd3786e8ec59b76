"""Letters as function heads: deciding between ``f(x)`` (an application) and ``x(x+1)`` (a product)."""

from __future__ import annotations

from .state import _N
from .symbols import _STRONG_HEADS
from .tokenizer import _is_greek, _is_paren


class ApplicationMixin:
    """Decide whether a letter followed by parentheses is a function application and build it.

    A mixin of ``_Parser`` (``parser.py``): it relies on the state and helpers of
    ``_ParserState`` (``state.py``) and calls the other mixins' methods through ``self``.
    """

    # -- letters as function heads ------------------------------------------
    def maybe_apply(self, head: _N) -> _N:
        """``head`` is a V leaf just consumed; decorate it and decide on f(x)."""
        node = self.parse_postfix(head, scripts_only=True)
        tok = self.peek()
        if tok is None:
            return node
        if not _is_paren(tok):
            return node
        primes, sub, sup, base = self._decorations(node)
        if base is not head:
            return node
        close = self._find_close(self.pos)
        if close < 0:
            return node
        lo, hi = self.pos + 1, close
        letter = head.label
        if primes:
            apply = True
        elif letter in _STRONG_HEADS:
            apply = not self._plain_occurrence(lo, hi, letter)
        else:
            apply = sup is None and (self._has_top_comma(lo, hi) or self._simple_atom(lo, hi))
        if not apply:
            return node
        return self._apply(node, head, primes)

    def _apply(self, node: _N, head: _N, primes: str) -> _N:
        decor = []
        cur = node
        while cur is not head:
            if cur.label in ("^", "_"):
                decor.append(("sup" if cur.label == "^" else "sub", cur.kids[1][1]))
            cur = cur.kids[0][1]
        decor.reverse()
        f = _N("F", head.label + primes, head.start, head.end)
        for role, n in decor:
            f.add(role, n)
        open_tok = self.toks[self.pos]
        _, close_tok, elems, unclosed = self.delim_content()
        for i, e in enumerate(elems):
            f.add(f"arg{i}", e)
        f.end = max(f.end, close_tok.end if close_tok is not None else self.here())
        if unclosed is not None:
            return self.error(self.raw(open_tok), open_tok.start, open_tok.end, unclosed, [("arg0", f)])
        return f

    @staticmethod
    def _decorations(node: _N):
        primes = ""
        sub = sup = None
        cur = node
        while cur.type == "O" and cur.kids and cur.label in ("^", "_") or (cur.type == "O" and set(cur.label) == {"'"}):
            if cur.label == "^":
                if sup is not None:
                    break
                sup = cur.kids[1][1]
            elif cur.label == "_":
                if sub is not None:
                    break
                sub = cur.kids[1][1]
            else:
                primes = cur.label + primes
            cur = cur.kids[0][1]
        return primes, sub, sup, cur

    def _find_close(self, i: int) -> int:
        toks = self.toks
        opener = toks[i]
        if opener.kind == "OPEN":
            depth = 0
            j = i
            while j < self.end:
                t = toks[j]
                if t.kind == "OPEN":
                    depth += 1
                elif t.kind == "CLOSE":
                    depth -= 1
                    if depth == 0:
                        return j
                elif t.kind in ("CHAR", "BEGIN") and self.match[j] > j:
                    j = self.match[j]
                j += 1
            return -1
        depth = 0
        j = i
        while j < self.end:
            t = toks[j]
            if t.kind == "CHAR":
                if t.text == "(":
                    depth += 1
                elif t.text == ")":
                    depth -= 1
                    if depth == 0:
                        return j
                elif t.text == "{" and self.match[j] > j:
                    j = self.match[j]
            elif t.kind == "BEGIN" and self.match[j] > j:
                j = self.match[j]
            j += 1
        return -1

    def _has_top_comma(self, lo: int, hi: int) -> bool:
        depth = 0
        j = lo
        toks = self.toks
        while j < hi:
            t = toks[j]
            if t.kind == "CHAR":
                if t.text in "([":
                    depth += 1
                elif t.text in ")]":
                    depth -= 1
                elif t.text == "{" and self.match[j] > j:
                    j = self.match[j]
                elif t.text == "," and depth == 0:
                    return True
            elif t.kind == "OPEN":
                depth += 1
            elif t.kind == "CLOSE":
                depth -= 1
            elif t.kind == "CMD" and t.text == r"\{":
                depth += 1
            elif t.kind == "CMD" and t.text == r"\}":
                depth -= 1
            j += 1
        return False

    def _simple_atom(self, lo: int, hi: int) -> bool:
        toks = self.toks[lo:hi]
        if not toks:
            return False
        if toks[0].kind == "CHAR" and toks[0].text == "-":
            toks = toks[1:]
        if not toks:
            return False
        if all(t.kind == "DIG" or t.kind == "THSEP" or (t.kind == "CHAR" and t.text == ".") for t in toks):
            return True
        first = toks[0]
        if not (first.kind == "LET" or _is_greek(first)):
            return False
        rest = toks[1:]
        if not rest:
            return True
        if rest[0].kind == "CHAR" and rest[0].text == "(" and self._find_close(hi - len(rest)) == hi - 1:
            return True  # a nested application: N(O(3))
        if rest[0].kind == "CHAR" and rest[0].text == "_":
            if len(rest) == 2 and rest[1].kind in ("LET", "DIG"):
                return True
            if (
                len(rest) >= 3
                and rest[1].kind == "CHAR"
                and rest[1].text == "{"
                and rest[-1].text == "}"
                and all(t.kind in ("LET", "DIG") or (t.kind == "CHAR" and t.text in "+-") for t in rest[2:-1])
            ):
                return True
        return False

    def _plain_occurrence(self, lo: int, hi: int, letter: str) -> bool:
        toks = self.toks
        for j in range(lo, hi):
            t = toks[j]
            if t.kind in ("LET", "CMD") and t.text == letter:
                nxt = toks[j + 1] if j + 1 < hi else None
                if nxt is None or not (
                    (nxt.kind == "CHAR" and nxt.text in "(_^'") or (nxt.kind == "OPEN" and nxt.text == "(")
                ):
                    return True
        return False
