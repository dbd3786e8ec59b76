"""Groups: braces, brackets and intervals, fences (``|x|``, norms, floor, ceil), sets, ``\\left...\\right``."""

from __future__ import annotations

from .state import _N, _args, _node
from .tokenizer import _Tok


class GroupMixin:
    """Parse delimited content and turn it into grouping, bracket, fence or set nodes.

    A mixin of ``_Parser`` (``parser.py``): it relies on the state and helpers of
    ``_ParserState`` (``state.py``) and calls the other mixins' methods through ``self``.
    """

    # -- groups -------------------------------------------------------------------
    def brace_group(self, msg: str = "empty group") -> _N:
        tok = self.toks[self.pos]
        close = self.closing(self.pos)
        hi = close if close > 0 else self.end
        node = self.parse_range(self.pos + 1, hi)
        self.pos = hi + 1 if close > 0 else hi
        if node is None:
            node = self.error("", tok.end, tok.end, msg)
        if close < 0:
            node.flat = None
            return self.error("{", tok.start, tok.end, "unclosed '{'", [("arg0", node)])
        return node.group(tok.start, self.toks[close].end)

    def delim_content(self, kind: str | None = None, closer: str = ""):
        """Parse an opener at pos and its content.

        Returns (open tok, close tok or None, elements, error message or None)."""
        open_tok = self.toks[self.pos]
        self.pos += 1
        if kind is None:
            if open_tok.kind == "OPEN":
                kind, closer = "left", open_tok.text
            else:
                kind, closer = "paren", ")"
        self.scope.append((kind, closer))
        try:
            content = None
            tok = self.peek()
            if tok is not None and (kind == "abs" or not self._closes(kind, closer, tok)):
                content = self.parse_expr(0)
        finally:
            self.scope.pop()
        tok = self.peek()
        if tok is not None and self._closes(kind, closer, tok):
            self.pos += 1
            close_tok = tok
            err = None
        else:
            close_tok = None
            err = f"unclosed '{self.raw(open_tok)}'"
        if content is None:
            elems = []
        elif content.type == "O" and content.label == "list" and content.flat == "list":
            elems = [n for _, n in content.kids]
        else:
            elems = [content]
        return open_tok, close_tok, elems, err

    @staticmethod
    def _closes(kind: str, closer: str, tok: _Tok) -> bool:
        if kind == "left":
            return tok.kind == "CLOSE"
        if kind == "paren":
            return tok.kind == "CHAR" and tok.text in ")]"
        if kind in ("opt", "abs"):
            return tok.kind == "CHAR" and tok.text == closer
        return tok.kind == "CMD" and tok.text == closer

    def _finish_group(self, open_tok: _Tok, close_tok: _Tok | None, err: str | None, node: _N) -> _N:
        end = close_tok.end if close_tok is not None else max(node.end, open_tok.end)
        node.start = min(node.start, open_tok.start)
        node.end = max(node.end, end)
        if err is not None:
            return self.error(self.raw(open_tok), open_tok.start, open_tok.end, err, [("arg0", node)])
        return node

    def _grouped(
        self, open_tok: _Tok, close_tok: _Tok | None, err: str | None, elems: list[_N], label: str, type_: str = "O"
    ) -> _N:
        """Brackets: one element is grouping only, several make a node labelled ``label``."""
        if len(elems) == 1 and label in ("()", "[]", "(]", "[)", "list"):
            node = elems[0]
            if err is not None:
                node.flat = None
                return self.error(self.raw(open_tok), open_tok.start, open_tok.end, err, [("arg0", node)])
            return node.group(open_tok.start, close_tok.end)
        end = close_tok.end if close_tok is not None else open_tok.end
        node = _node(type_, label, _args(elems), open_tok.start, end)
        return self._finish_group(open_tok, close_tok, err, node)

    def bracket_group(self) -> _N:
        open_tok = self.toks[self.pos]
        kind = "paren"
        _, close_tok, elems, err = self.delim_content(kind, ")")
        close = close_tok.text if close_tok is not None else (")" if open_tok.text == "(" else "]")
        return self._grouped(open_tok, close_tok, err, elems, open_tok.text + close)

    def fence(self, kind: str, closer: str, label: str) -> _N:
        open_tok = self.toks[self.pos]
        _, close_tok, elems, err = self.delim_content(kind, closer)
        if not elems:
            p = open_tok.end
            elems = [self.error("", p, p, f"empty {label}")]
        if len(elems) > 1:
            inner = _node("O", "list", _args(elems), flat="list")
            elems = [inner]
        node = _node(
            "O", label, [("arg0", elems[0])], open_tok.start, close_tok.end if close_tok is not None else open_tok.end
        )
        return self._finish_group(open_tok, close_tok, err, node)

    def set_group(self) -> _N:
        open_tok = self.toks[self.pos]
        _, close_tok, elems, err = self.delim_content("set", r"\}")
        return self._set_node(open_tok, close_tok, err, elems)

    def _set_node(self, open_tok, close_tok, err, elems) -> _N:
        end = close_tok.end if close_tok is not None else open_tok.end
        if len(elems) == 1 and elems[0].type == "O" and elems[0].label == r"\mid" and len(elems[0].kids) == 2:
            node = _node(
                "O", "{|}", [("arg0", elems[0].kids[0][1]), ("arg1", elems[0].kids[1][1])], open_tok.start, end
            )
        else:
            node = _node("U", "{}", _args(elems), open_tok.start, end)
        return self._finish_group(open_tok, close_tok, err, node)

    def left_right(self) -> _N:
        open_tok = self.toks[self.pos]
        _, close_tok, elems, err = self.delim_content()
        o = open_tok.text
        c = close_tok.text if close_tok is not None else "."
        if o == "." or c == ".":
            if not elems:
                p = open_tok.end
                return (
                    self.error("", p, p, "empty group")
                    if err is None
                    else self.error(self.raw(open_tok), open_tok.start, open_tok.end, err)
                )
            return self._grouped(open_tok, close_tok, err, elems, "list")
        if o == r"\{":
            return self._set_node(open_tok, close_tok, err, elems)
        labels = {"|": "abs", r"\|": "norm", r"\lfloor": "floor", r"\lceil": "ceil"}
        if o in labels:
            if not elems:
                elems = [self.error("", open_tok.end, open_tok.end, f"empty {labels[o]}")]
            inner = elems[0] if len(elems) == 1 else _node("O", "list", _args(elems), flat="list")
            end = close_tok.end if close_tok is not None else open_tok.end
            return self._finish_group(
                open_tok, close_tok, err, _node("O", labels[o], [("arg0", inner)], open_tok.start, end)
            )
        if o == r"\langle":
            end = close_tok.end if close_tok is not None else open_tok.end
            return self._finish_group(
                open_tok, close_tok, err, _node("O", r"\langle", _args(elems), open_tok.start, end)
            )
        if o in "([" and c in ")]":
            return self._grouped(open_tok, close_tok, err, elems, o + c)
        if not elems:
            return self._grouped(open_tok, close_tok, err, elems, o + c)
        return self._grouped(open_tok, close_tok, err, elems, "list")
