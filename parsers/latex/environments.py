"""Environments (``\\begin{...}...\\end{...}``): rows and cells of matrices, cases and aligned equations."""

from __future__ import annotations

from .state import _N, _args, _node
from .symbols import _ADD_OPS, _ALIGN_ENVS, _LOGIC, _RELATIONS, _SPEC_ENVS


class EnvironmentMixin:
    """Parse an environment into ``row`` nodes of cells.

    A mixin of ``_Parser`` (``parser.py``): it relies on the state and helpers of
    ``_ParserState`` (``state.py``) and calls the other mixins' methods through ``self``.
    """

    # -- environments ----------------------------------------------------------
    def environment(self) -> _N:
        tok = self.toks[self.pos]
        name = tok.text
        close = self.closing(self.pos)
        hi = close if close > 0 else self.end
        i = self.pos + 1
        if name in _SPEC_ENVS:
            if i < hi and self.toks[i].kind == "CHAR" and self.toks[i].text == "[":
                while i < hi and not (self.toks[i].kind == "CHAR" and self.toks[i].text == "]"):
                    i += 1
                i += 1
            if i < hi and self.toks[i].kind == "CHAR" and self.toks[i].text == "{" and 0 < self.match[i] < hi:
                i = self.match[i] + 1
        rows = self._split_rows(min(i, hi), hi)
        align = name in _ALIGN_ENVS
        row_nodes = []
        for cells in rows:
            if align:
                merged: list[list[int]] = []
                for lo_c, hi_c in cells:
                    if merged and lo_c < hi_c and self._continues(lo_c):
                        merged[-1][1] = hi_c
                    else:
                        merged.append([lo_c, hi_c])
                cells = [(a, b) for a, b in merged if a < b]
            cell_nodes = []
            for lo_c, hi_c in cells:
                node = self.parse_range(lo_c, hi_c, trim=True)
                if node is None:
                    p = self.toks[lo_c - 1].end if lo_c > 0 else tok.end
                    node = _N("T", "", p, p)
                cell_nodes.append(node)
            if not cell_nodes:
                continue
            row_nodes.append(_node("O", "row", _args(cell_nodes)))
        label = name[:-1] if name.endswith("*") else name
        end_tok = self.toks[close] if close > 0 else None
        node = _node("O", label or "env", _args(row_nodes), tok.start, end_tok.end if end_tok else tok.end)
        self.pos = hi + 1 if close > 0 else hi
        if end_tok is None:
            return self.error(self.raw(tok), tok.start, tok.end, f"unclosed \\begin{{{name}}}", [("arg0", node)])
        if end_tok.text != name:
            return self.error(
                self.raw(end_tok), end_tok.start, end_tok.end, "environment name mismatch", [("arg0", node)]
            )
        return node

    def _continues(self, i: int) -> bool:
        t = self.toks[i]
        if t.kind == "CHAR":
            return t.text in "=<>+-"
        if t.kind == "CMD":
            return t.text in _RELATIONS or t.text in _LOGIC or t.text in _ADD_OPS or t.text.startswith(r"\not")
        return False

    def _split_rows(self, lo: int, hi: int) -> list[list[tuple[int, int]]]:
        rows: list[list[tuple[int, int]]] = []
        cells: list[tuple[int, int]] = []
        start = lo
        i = lo
        toks = self.toks
        while i < hi:
            t = toks[i]
            if t.kind == "ROW":
                cells.append((start, i))
                rows.append(cells)
                cells = []
                start = i + 1
            elif t.kind == "AMP":
                cells.append((start, i))
                start = i + 1
            elif (t.kind == "CHAR" and t.text == "{") or t.kind == "BEGIN":
                if self.match[i] > i:
                    i = self.match[i]
            i += 1
        cells.append((start, hi))
        if any(a < b for a, b in cells) or not rows:
            rows.append(cells)
        return [r for r in rows if any(a < b for a, b in r)] or []
