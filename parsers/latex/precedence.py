"""Precedence climbing (Pratt) core: ranges, the binary-operator loop, prefix operators and primaries."""

from __future__ import annotations

import re

from .state import _N, _args, _node
from .symbols import (
    _ADD,
    _ADD_OPS,
    _BIG_OPS,
    _CHOICE_RE,
    _CLOSERS,
    _CONNECTIVES,
    _CUSTOM_OPS,
    _FUNC_NAMES,
    _IMPL,
    _LIST,
    _LOGIC,
    _LOGICBP,
    _MID,
    _MUL,
    _MUL_OPS,
    _OVER,
    _PMOD,
    _RATIO,
    _REL,
    _RELATIONS,
    _SEQ,
    _STRAY,
    _TRAILING_PUNCT,
    _UNARY,
    _is_operator,
)
from .tokenizer import _Tok
from .tree import MAX_DEPTH


class PrecedenceMixin:
    """Parse ranges and expressions: infix operators by binding power, relation chains, prefixes, numbers.

    A mixin of ``_Parser`` (``parser.py``): it relies on the state and helpers of
    ``_ParserState`` (``state.py``) and calls the other mixins' methods through ``self``.
    """

    # -- ranges ---------------------------------------------------------------
    def parse_range(self, lo: int, hi: int, trim: bool = False, hyphen: bool = False) -> _N | None:
        """Parse tokens ``lo:hi`` as one expression in a fresh bracket scope (None when empty).

        ``trim`` drops trailing sentence punctuation, ``hyphen`` also a trailing ``-``
        (``the $x-$coordinate``)."""
        saved = (self.pos, self.end, self.scope)
        if trim:
            while hi - lo > 1 and (
                self._trailing(self.toks[hi - 1])
                or (hyphen and self.toks[hi - 1].kind == "CHAR" and self.toks[hi - 1].text == "-")
            ):
                hi -= 1
        self.pos, self.end, self.scope = lo, hi, []
        try:
            if all(self._separator(t) and t.text != "." for t in self.toks[lo:hi]):
                return None
            if hi - lo == 1:
                single = self._single_symbol(self.toks[lo])
                if single is not None:
                    self.pos = hi
                    return single
            node = self.parse_expr(0)
            while self.pos < self.end:
                tok = self.toks[self.pos]
                self.pos += 1
                rhs = self.parse_expr(_STRAY + 1) if self.pos < self.end else None
                kids = [("arg0", node)] + ([("arg1", rhs)] if rhs is not None else [])
                node = self.error(self.raw(tok), tok.start, tok.end, f"unexpected '{self.raw(tok)}'", kids)
            return node
        finally:
            self.pos, self.end, self.scope = saved

    @staticmethod
    def _trailing(tok: _Tok) -> bool:
        return (tok.kind == "CHAR" and tok.text in _TRAILING_PUNCT) or tok.kind in ("SEP", "AMP", "ROW")

    def _single_symbol(self, tok: _Tok) -> _N | None:
        t = tok.text
        if tok.kind == "CHAR" and t in "+-*/=<>,.;:!?'^_|":
            return _N("C", t, tok.start, tok.end)
        if tok.kind == "CMD" and (_is_operator(t) or t in _CUSTOM_OPS or t in (r"\{", r"\}", r"\neg")):
            return _N("C", t, tok.start, tok.end)
        return None

    # -- Pratt loop -----------------------------------------------------------
    def parse_expr(self, min_bp: int, no_func: bool = False) -> _N:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                return self.too_deep()
            left = self.parse_prefix(no_func)
            while self.pos < self.end:
                tok = self.toks[self.pos]
                before = self.pos
                kind, bp = self.classify(tok, left, no_func)
                if kind == "term" or bp < min_bp:
                    break
                left = self.infix(kind, bp, tok, left, no_func)
                if self.pos == before:
                    self.pos += 1
                    left = self.error(
                        self.raw(tok), tok.start, tok.end, f"unexpected '{self.raw(tok)}'", [("arg0", left)]
                    )
            return left
        finally:
            self.depth -= 1

    def classify(self, tok: _Tok, left: _N, no_func: bool) -> tuple[str, int]:
        k = tok.kind
        t = tok.text
        if k == "CHAR":
            return self._classify_char(tok, left)
        if k in ("DIG", "LET", "OPNAME", "BEGIN", "OPEN"):
            if k == "OPNAME" and no_func:
                return "term", 0
            return self.juxt(left, tok)
        if k == "TEXT":
            if no_func and self._text_func(tok):
                return "term", 0
            return self.juxt(left, tok)
        if k == "CLOSE":
            return ("term", 0) if self.accepts(tok) else ("stray", _STRAY)
        if k in ("END", "BAD"):
            return "stray", _STRAY
        if k in ("SEP", "ROW"):
            return "seq", _SEQ
        if k in ("AMP", "THSEP"):
            return "skip", 100
        # CMD
        if t in _ADD_OPS:
            return "bin", _ADD
        if t in _MUL_OPS or t in _CUSTOM_OPS:
            return "bin", _MUL
        if t in _RELATIONS or (t.startswith(r"\not") and t != r"\notin_"):
            return "rel", _REL
        if t in _LOGIC:
            return "logic", _LOGICBP
        if t in (r"\mid", r"\colon"):
            return "mid", _MID
        if t == r"\pmod":
            return "pmod", _PMOD
        if t in (r"\choose", r"\over", r"\atop", r"\brack", r"\brace"):
            return "over", _OVER
        if t in _CLOSERS:
            return ("term", 0) if self.accepts(tok) else ("stray", _STRAY)
        if t == r"\|":
            if self.in_scope("norm"):
                return "term", 0
            if self.next_dbar[self.pos] < self.end:
                return self.juxt(left, tok)
            return "rel", _REL
        if t in (r"\%", r"\prime", r"\degree"):
            return "post", _UNARY + 1
        if no_func and (t in _BIG_OPS or t[1:] in _FUNC_NAMES):
            return "term", 0
        return self.juxt(left, tok)

    def _classify_char(self, tok: _Tok, left: _N) -> tuple[str, int]:
        """``classify`` for a CHAR token."""
        t = tok.text
        if t in "+-":
            return ("juxt", _SEQ) if self._ends_connective(left) else ("bin", _ADD)
        if t in "*/@#":
            return "bin", _MUL
        if t in "=<>":
            return "rel", _REL
        if t == ",":
            return "list", _LIST
        if t in ";.":
            return "seq", _SEQ
        if t == ":":
            if self.set_context() or self._to_follows():
                return "mid", _MID
            return "ratio", _RATIO
        if t == "|":
            if self.in_scope("abs"):
                return "term", 0
            nxt = self.toks[self.pos + 1] if self.pos + 1 < self.end else None
            if nxt is not None and nxt.kind == "CHAR" and nxt.text == "|" and nxt.start == tok.end:
                return "rel", _REL  # ``AB || CD``
            if self.next_bar[self.pos] < self.end:
                return self.juxt(left, tok)
            return "mid", _MID
        if t in ")]":
            return ("term", 0) if self.accepts(tok) else ("stray", _STRAY)
        if t == "}":
            return "stray", _STRAY
        if t == "{" and self._empty_braces():
            return "skip", 100
        if t in "^_'!":
            return "post", _UNARY + 1
        return self.juxt(left, tok)

    def juxt(self, left: _N, tok: _Tok) -> tuple[str, int]:
        if (tok.kind == "TEXT" and self._connective(tok.text)) or self._ends_connective(left):
            return "juxt", _SEQ
        return "juxt", _IMPL

    @staticmethod
    def _connective(text: str) -> bool:
        t = " ".join(text.split())
        if not t:
            return False
        if _CHOICE_RE.match(t):
            return True
        first = re.split(r"[\s,.;:]+", t.lower())[0]
        return first in _CONNECTIVES

    def _ends_connective(self, node: _N) -> bool:
        if node.type == "T" and not node.kids and self._connective(node.label):
            return True
        if node.type == "O" and node.label == "seq" and node.flat == "seq" and node.kids:
            last = node.kids[-1][1]
            return last.type == "T" and not last.kids and self._connective(last.label)
        return False

    def _to_follows(self) -> bool:
        for i in range(self.pos + 1, self.end):
            t = self.toks[i]
            if t.kind == "CMD" and t.text in (r"\to", r"\mapsto"):
                return True
            if t.kind == "CHAR" and t.text in ",;":
                return False
        return False

    def infix(self, kind: str, bp: int, tok: _Tok, left: _N, no_func: bool) -> _N:
        if kind == "bin":
            return self.binary(tok, bp, left)
        if kind == "juxt":
            rhs = self.parse_expr(bp + 1, no_func)
            label = "seq" if bp == _SEQ else "mul"
            return self.nary("O" if bp == _SEQ else "U", label, left, rhs)
        if kind in ("rel", "logic"):
            return self.chain(left, bp)
        if kind == "list":
            self.pos += 1
            rhs = self.parse_expr(_LIST + 1) if not self.at_stop() else self.missing("missing item after ','")
            return self.nary("O", "list", left, rhs)
        if kind == "seq":
            while self.pos < self.end and self._separator(self.toks[self.pos]):
                self.pos += 1
            if self.at_stop():
                return left
            rhs = self.parse_expr(_SEQ + 1)
            return self.nary("O", "seq", left, rhs)
        if kind == "ratio":
            self.pos += 1
            rhs = self.parse_expr(_RATIO + 1) if not self.at_stop() else self.missing("missing operand after ':'")
            return self.nary("O", ":", left, rhs)
        if kind == "mid":
            self.pos += 1
            label = r"\colon" if tok.text in (r"\colon", ":") and not self.set_context() else r"\mid"
            rhs = self.parse_expr(_MID + 1) if not self.at_stop() else self.missing(f"missing operand after {label}")
            return _node("O", label, [("arg0", left), ("arg1", rhs)])
        if kind == "pmod":
            self.pos += 1
            arg = self.parse_expr(_UNARY) if self.starts_operand() else self.missing(r"missing argument of \pmod")
            return _node("O", r"\pmod", [("arg0", left), ("mod", arg)], tok.start, tok.end)
        if kind == "over":
            self.pos += 1
            if self.at_stop():
                rhs = self.missing(f"missing operand after {tok.text}")
            else:
                rhs = self.parse_expr(_OVER + 1)
            if tok.text == r"\over":
                return _node("O", r"\frac", [("num", left), ("den", rhs)])
            return _node("O", r"\binom", [("arg0", left), ("arg1", rhs)])
        if kind == "post":
            return self.parse_postfix(left)
        if kind == "skip":
            self.pos += 2 if tok.kind == "CHAR" else 1
            return left
        # stray closer
        self.pos += 1
        kids = [("arg0", left)]
        if self.starts_operand():
            kids.append(("arg1", self.parse_expr(_STRAY + 1)))
        return self.error(self.raw(tok), tok.start, tok.end, f"unexpected '{self.raw(tok)}'", kids)

    @staticmethod
    def _separator(tok: _Tok) -> bool:
        return tok.kind in ("SEP", "ROW", "AMP") or (tok.kind == "CHAR" and tok.text in ";.")

    def at_stop(self) -> bool:
        """True at the end of the range or at a closer of an open group."""
        if self.pos >= self.end:
            return True
        tok = self.toks[self.pos]
        return self.is_closer(tok)

    def starts_operand(self) -> bool:
        if self.pos >= self.end:
            return False
        tok = self.toks[self.pos]
        k = tok.kind
        if k in ("DIG", "LET", "TEXT", "OPNAME", "BEGIN", "OPEN"):
            return True
        if k == "CHAR":
            if tok.text in "([{":
                return not (tok.text == "{" and self.match[self.pos] == self.pos + 1)
            if tok.text in "|-":
                return True
            if tok.text == ".":
                return self._dot_number() or self._dot_overline()
            return tok.text not in "+*/=<>,;:)]}^_'!"
        if k != "CMD":
            return False
        t = tok.text
        if t in (r"\pm", r"\mp", r"\neg"):
            return True
        return not (
            t in _ADD_OPS
            or t in _MUL_OPS
            or t in _RELATIONS
            or t in _LOGIC
            or t in _CLOSERS
            or t.startswith(r"\not")
            or t in (r"\mid", r"\colon", r"\pmod", r"\%", r"\prime", r"\choose", r"\over", r"\atop", r"\degree")
        )

    def nary(self, type_: str, label: str, left: _N, rhs: _N) -> _N:
        if left.flat == label and left.type == type_:
            left.add(f"arg{len(left.kids)}", rhs)
            return left
        return _node(type_, label, [("arg0", left), ("arg1", rhs)], flat=label)

    def binary(self, tok: _Tok, bp: int, left: _N) -> _N:
        t = tok.text
        self.pos += 1
        custom = t in _CUSTOM_OPS or t in "@#"
        if custom:
            type_ = "O"
        else:
            type_ = _ADD_OPS.get(t) or _MUL_OPS.get(t) or "O"
        if not self.starts_operand():
            if custom:
                return _node("O", t, [("arg0", left)], tok.start, tok.end)
            rhs = self.missing(f"missing operand after '{t}'")
        else:
            rhs = self.parse_expr(bp + 1)
        if type_ == "U":
            return self.nary("U", t, left, rhs)
        return _node(type_, t, [("arg0", left), ("arg1", rhs)], tok.start, tok.end)

    def chain(self, left: _N | None, level: int) -> _N:
        table = _RELATIONS if level == _REL else _LOGIC
        items: list[tuple[str, _N]] = []
        if left is not None:
            items.append(("arg", left))
        ops: list[str] = []
        while self.pos < self.end:
            tok = self.toks[self.pos]
            kind, bp = self.classify(tok, left if left is not None else _N("V", "", 0, 0), False)
            if kind not in ("rel", "logic") or bp != level:
                break
            self.pos += 1
            label = tok.text
            if label == r"\|":
                label = r"\parallel"
            type_ = table.get(label)
            if type_ is None:
                base = label[4:] if label.startswith(r"\not") else label
                type_ = _RELATIONS.get(base, "O")
            ops.append(label)
            end = tok.end
            if tok.kind == "CHAR" and tok.text == "|":
                self.pos += 1
                label, type_, end = r"\parallel", "U", self.toks[self.pos - 1].end
            items.append(("rel", _N(type_, label, tok.start, end)))
            if self.pos >= self.end:
                break  # a relation at the very end: a fill-in-the-blank fragment such as ``BF=``
            if self.at_stop() or not self.starts_operand_after_rel():
                items.append(("arg", self.missing(f"missing operand after '{label}'")))
            else:
                items.append(("arg", self.parse_expr(level + 1)))
        if len(set(ops)) == 1:
            op = items[1][1] if left is not None else items[0][1]
            args = [n for r, n in items if r == "arg"]
            return _node(op.type, op.label, _args(args), op.start, op.end)
        kids = []
        na = nr = 0
        for r, n in items:
            if r == "arg":
                kids.append((f"arg{na}", n))
                na += 1
            else:
                kids.append((f"rel{nr}", n))
                nr += 1
        return _node("O", "chain", kids)

    def starts_operand_after_rel(self) -> bool:
        tok = self.toks[self.pos]
        if tok.kind == "CHAR" and tok.text in "+":
            return True
        if tok.kind == "CMD" and (tok.text in _RELATIONS or tok.text in _LOGIC):
            return False
        return self.starts_operand() or (tok.kind == "CMD" and tok.text in _CUSTOM_OPS)

    # -- prefix / primary -----------------------------------------------------
    def parse_prefix(self, no_func: bool = False) -> _N:
        while self.pos < self.end:
            tok = self.toks[self.pos]
            if tok.kind == "THSEP" or (self._separator(tok) and not self._dot_number() and not self._dot_overline()):
                self.pos += 1
            elif self._empty_braces():
                self.pos += 2
            else:
                break
        tok = self.peek()
        if tok is None:
            return self.missing("missing operand")
        k, t = tok.kind, tok.text
        if self._lone_operator(tok):
            self.pos += 1
            return _N("C", t, tok.start, tok.end)
        if (k == "CHAR" and t in "+-") or (k == "CMD" and t in (r"\pm", r"\mp", r"\neg")):
            self.pos += 1
            type_ = "U" if t == "+" else "O"
            if self.starts_operand():
                operand = self.parse_expr(_UNARY)
            else:
                operand = self.missing(f"missing operand after '{t}'")
            return _node(type_, t, [("arg0", operand)], tok.start, tok.end)
        if (k == "CHAR" and t in "=<>") or (k == "CMD" and (t in _RELATIONS or t.startswith(r"\not"))):
            return self.chain(None, _REL)
        if k == "CMD" and t in _LOGIC:
            return self.chain(None, _LOGICBP)
        if k == "CMD" and t == r"\pmod":
            self.pos += 1
            arg = self.parse_expr(_UNARY) if self.starts_operand() else self.missing(r"missing argument of \pmod")
            return _node("O", r"\pmod", [("mod", arg)], tok.start, tok.end)
        node = self.parse_primary(no_func)
        return self.parse_postfix(node)

    def _lone_operator(self, tok: _Tok) -> bool:
        """An operator standing for itself, as in ``\\{+,-,\\times,\\div\\}``."""
        t = tok.text
        if tok.kind == "CHAR":
            if t not in "+-*/=<>":
                return False
        elif tok.kind != "CMD" or not (t in _ADD_OPS or t in _MUL_OPS or t in _RELATIONS or t in _LOGIC):
            return False
        nxt = self.toks[self.pos + 1] if self.pos + 1 < self.end else None
        if nxt is not None and nxt.kind == "CHAR" and nxt.text == ",":
            return True
        after_open = self.pos > 0 and self.toks[self.pos - 1].kind == "CHAR" and self.toks[self.pos - 1].text in ",("
        return after_open and (nxt is None or self.is_closer(nxt))

    def _empty_braces(self) -> bool:
        tok = self.toks[self.pos]
        return tok.kind == "CHAR" and tok.text == "{" and self.closing(self.pos) == self.pos + 1

    def _dot_number(self) -> bool:
        return (
            self.pos + 1 < self.end
            and self.toks[self.pos + 1].kind == "DIG"
            and self.toks[self.pos + 1].start == self.toks[self.pos].end
        )

    def parse_primary(self, no_func: bool = False) -> _N:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                return self.too_deep()
            return self._primary(no_func)
        finally:
            self.depth -= 1

    def _primary(self, no_func: bool) -> _N:
        tok = self.peek()
        if tok is None:
            return self.missing("missing operand")
        k, t = tok.kind, tok.text
        if k == "DIG" or (k == "CHAR" and t == "." and self._dot_number()):
            return self.parse_number()
        if k == "LET":
            self.pos += 1
            return self.maybe_apply(_N("V", t, tok.start, tok.end))
        if k == "CHAR":
            if t in "([":
                return self.bracket_group()
            if t == "{":
                close = self.closing(self.pos)
                if (
                    close == self.pos + 2
                    and self.toks[self.pos + 1].kind == "CMD"
                    and self.toks[self.pos + 1].text in _BIG_OPS
                ):
                    op = self.toks[self.pos + 1]
                    self.pos = close + 1
                    return self.big_op(op)  # ``{\prod}_{j=1}^{12}``
                return self.brace_group()
            if t == "|":
                return self.fence("abs", "|", r"abs")
            if t in ")]}":
                if t != "}" and self.accepts(tok):
                    return self.missing("missing operand")
                self.pos += 1
                return self.error(t, tok.start, tok.end, f"unexpected '{t}'")
            if t in "^_":
                return self.baseless_script(tok)
            if t == "." and self._dot_overline():
                return self.parse_number()
            if t in "*/=<>,;:'!+-.":
                return self.missing(f"missing operand before '{t}'")
            self.pos += 1
            return _N("C", t, tok.start, tok.end)
        if k == "TEXT":
            return self.text_node(tok)
        if k == "OPNAME":
            self.pos += 1
            node = self.function(_N("F", "\\" + t, tok.start, tok.end))
            if not tok.aux:
                return self.error(r"\operatorname", tok.start, tok.end, r"unclosed \operatorname{", [("arg0", node)])
            return node
        if k == "BEGIN":
            return self.environment()
        if k == "OPEN":
            return self.left_right()
        if k in ("CLOSE", "END", "BAD"):
            if k == "CLOSE" and self.accepts(tok):
                return self.missing("missing operand")
            self.pos += 1
            return self.error(self.raw(tok), tok.start, tok.end, f"unexpected '{self.raw(tok)}'")
        if k in ("SEP", "ROW", "AMP", "THSEP"):
            return self.missing("missing operand")
        return self.command(tok, no_func)

    def _dot_overline(self) -> bool:
        p = self.pos + 1
        return (
            p < self.end
            and self.toks[p].kind == "CMD"
            and self.toks[p].text == r"\overline"
            and self.toks[p].start == self.toks[self.pos].end
        )

    def baseless_script(self, tok: _Tok) -> _N:
        """``^\\circ`` or ``{}^{14}`` with nothing before: a script node without a base."""
        special = self._special_sup() if tok.text == "^" else None
        if special is not None:
            label, end, nxt = special
            self.pos = nxt
            return _N("O", label, tok.start, end)
        self.pos += 1
        role = "sup" if tok.text == "^" else "sub"
        return _node("O", tok.text, [(role, self.script_arg(tok.text))], tok.start, tok.end)

    def parse_number(self) -> _N:
        toks = self.toks
        start_tok = toks[self.pos]
        parts: list[str] = []
        seen_dot = False
        last_end = start_tok.start
        while self.pos < self.end:
            tok = toks[self.pos]
            if tok.start != last_end and parts:
                break
            if tok.kind == "DIG":
                parts.append(tok.text)
            elif tok.kind == "CHAR" and tok.text == "." and not seen_dot and self._dot_number():
                parts.append(".")
                seen_dot = True
            elif tok.kind == "THSEP" and self.pos + 1 < self.end and toks[self.pos + 1].kind == "DIG" and parts:
                pass
            else:
                break
            last_end = tok.end
            self.pos += 1
        node = _N("N", "".join(parts), start_tok.start, last_end)
        # repeating decimal: 0.\overline{3}, 0.1\overline{6}
        nxt = self.peek()
        if (
            nxt is not None
            and nxt.kind == "CHAR"
            and nxt.text == "."
            and nxt.start == last_end
            and self.pos + 1 < self.end
            and toks[self.pos + 1].kind == "CMD"
            and toks[self.pos + 1].text == r"\overline"
            and not seen_dot
        ):
            self.pos += 1
            node = _N("N", node.label + ".", node.start, nxt.end)
            seen_dot = True
            nxt = self.peek()
        if seen_dot and nxt is not None and nxt.kind == "CMD" and nxt.text == r"\overline" and nxt.start == node.end:
            self.pos += 1
            rep = self.macro_arg(r"missing argument of \overline")
            return _node("O", "repeat", [("arg0", node), ("arg1", rep)])
        return node
