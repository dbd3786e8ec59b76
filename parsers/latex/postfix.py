"""Postfix operators and scripts: ``^``, ``_``, primes, ``!``, ``\\%``, degrees, and TeX macro arguments."""

from __future__ import annotations

from .state import _N, _node
from .symbols import _ADD_OPS, _CLOSERS, _LOGIC, _MUL_OPS, _RELATIONS
from .tree import MAX_DEPTH


class PostfixMixin:
    """Attach scripts and postfix operators to an operand; read one TeX macro argument.

    A mixin of ``_Parser`` (``parser.py``): it relies on the state and helpers of
    ``_ParserState`` (``state.py``) and calls the other mixins' methods through ``self``.
    """

    # -- postfix ----------------------------------------------------------------
    def parse_postfix(self, node: _N, scripts_only: bool = False) -> _N:
        while self.pos < self.end:
            tok = self.toks[self.pos]
            k, t = tok.kind, tok.text
            if k == "CHAR" and t in "^_" and self._empty_script():
                self.pos += 3
                continue
            if k == "CHAR" and t == "^":
                special = self._special_sup()
                if special is not None:
                    label, end, nxt = special
                    if label == r"\degree" and scripts_only:
                        return node
                    self.pos = nxt
                    node = _node("O", label, [("arg0", node)], tok.start, end)
                    continue
                self.pos += 1
                sups = [self.script_arg("^")]
                while (
                    self.pos < self.end
                    and self.toks[self.pos].kind == "CHAR"
                    and self.toks[self.pos].text == "^"
                    and self._special_sup() is None
                ):
                    self.pos += 1
                    sups.append(self.script_arg("^"))
                sup = sups[-1]
                for s in reversed(sups[:-1]):
                    sup = _node("O", "^", [("base", s), ("sup", sup)])
                node = _node("O", "^", [("base", node), ("sup", sup)], tok.start, tok.end)
            elif k == "CHAR" and t == "_":
                self.pos += 1
                node = _node("O", "_", [("base", node), ("sub", self.script_arg("_"))], tok.start, tok.end)
            elif (k == "CHAR" and t == "'") or (k == "CMD" and t == r"\prime"):
                n = 0
                end = tok.end
                while self.pos < self.end and (
                    (self.toks[self.pos].kind == "CHAR" and self.toks[self.pos].text == "'")
                    or (self.toks[self.pos].kind == "CMD" and self.toks[self.pos].text == r"\prime")
                ):
                    end = self.toks[self.pos].end
                    n += 1
                    self.pos += 1
                node = _node("O", "'" * n, [("arg0", node)], tok.start, end)
            elif scripts_only:
                break
            elif k == "CHAR" and t == "!":
                n = 0
                end = tok.end
                while self.pos < self.end and self.toks[self.pos].kind == "CHAR" and self.toks[self.pos].text == "!":
                    end = self.toks[self.pos].end
                    n += 1
                    self.pos += 1
                node = _node("O", "!" * n, [("arg0", node)], tok.start, end)
            elif k == "CMD" and t in (r"\%", r"\degree"):
                self.pos += 1
                node = _node("O", t, [("arg0", node)], tok.start, tok.end)
            else:
                break
        return node

    def _empty_script(self) -> bool:
        """``^{}`` / ``_{}``: an empty script, which TeX typesets as nothing."""
        p = self.pos + 1
        return p < self.end and self.toks[p].kind == "CHAR" and self.toks[p].text == "{" and self.closing(p) == p + 1

    def _special_sup(self) -> tuple[str, int, int] | None:
        """At '^': ``^\\circ``, ``^{\\circ}``, ``^\\prime``, ``^{\\prime\\prime}`` -> (label, end, next pos)."""
        p = self.pos + 1
        toks = self.toks
        if p >= self.end:
            return None
        t = toks[p]
        if t.kind == "CMD" and t.text in (r"\circ", r"\degree"):
            return r"\degree", t.end, p + 1
        if t.kind == "CMD" and t.text == r"\prime":
            return "'", t.end, p + 1
        close = self.closing(p) if t.kind == "CHAR" and t.text == "{" else -1
        if close > p:
            inner = toks[p + 1 : close]
            if len(inner) == 1 and inner[0].kind == "CMD" and inner[0].text in (r"\circ", r"\degree"):
                return r"\degree", toks[close].end, close + 1
            if inner and all(x.kind == "CMD" and x.text == r"\prime" for x in inner):
                return "'" * len(inner), toks[close].end, close + 1
        return None

    def script_arg(self, which: str) -> _N:
        tok = self.peek()
        if tok is not None and tok.text in ("-", r"\pm", r"\mp") and tok.kind in ("CHAR", "CMD"):
            self.pos += 1
            operand = self.macro_arg(f"missing operand after '{tok.text}'")
            return _node("O", tok.text, [("arg0", operand)], tok.start, tok.end)
        return self.macro_arg("missing superscript" if which == "^" else "missing subscript")

    def macro_arg(self, msg: str) -> _N:
        """One TeX macro argument: a braced group or a single token (with its own arguments)."""
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                return self.too_deep()
            tok = self.peek()
            if tok is None:
                return self.missing(msg)
            k, t = tok.kind, tok.text
            if k == "CHAR" and t == "{":
                if self._empty_braces():
                    self.pos += 2
                    p = tok.end
                    return self.error("", p, p, msg)
                return self.brace_group(msg)
            if k == "DIG":
                self.pos += 1
                return _N("N", t, tok.start, tok.end)
            if k == "LET":
                self.pos += 1
                return _N("V", t, tok.start, tok.end)
            if k == "CHAR" and t in "([|":
                return self.parse_primary()
            if k in ("CMD", "TEXT", "OPNAME", "OPEN", "BEGIN"):
                if k == "CMD" and not self._cmd_is_operand(t):
                    return self.missing(msg)
                return self.parse_primary()
            if k == "CHAR" and t not in "+-*/=<>,;:)]}^_'!.&":
                self.pos += 1
                return _N("C", t, tok.start, tok.end)
            return self.missing(msg)
        finally:
            self.depth -= 1

    @staticmethod
    def _cmd_is_operand(t: str) -> bool:
        if t in (
            r"\circ",
            r"\cdot",
            r"\times",
            r"\star",
            r"\ast",
            r"\bullet",
            r"\dagger",
            r"\prime",
            r"\%",
            r"\#",
            r"\$",
        ):
            return True
        return not (
            t in _ADD_OPS
            or t in _MUL_OPS
            or t in _RELATIONS
            or t in _LOGIC
            or t in _CLOSERS
            or t.startswith(r"\not")
            or t in (r"\mid", r"\colon", r"\pmod", r"\choose", r"\over", r"\atop")
        )
