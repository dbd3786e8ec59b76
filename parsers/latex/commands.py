"""Commands: ``\\frac``, ``\\sqrt``, accents, named functions, big operators, geometry, fonts, wrappers, text."""

from __future__ import annotations

from .state import _N, _args, _node
from .symbols import (
    _ACCENTS,
    _BIG_OPS,
    _CLOSERS,
    _CONSTANTS,
    _CUSTOM_OPS,
    _FONTS,
    _FUNC_NAMES,
    _GEOMETRY,
    _GREEK,
    _IMPL,
    _MUL,
    _OPENER_CMDS,
    _TEXT_FONTS,
    _UNARY,
    _WRAPPERS,
    _is_operator,
)
from .tokenizer import _is_greek, _is_paren, _Tok


class CommandMixin:
    """Parse a primary that starts with a command token, and ``\\text{...}`` tokens.

    A mixin of ``_Parser`` (``parser.py``): it relies on the state and helpers of
    ``_ParserState`` (``state.py``) and calls the other mixins' methods through ``self``.
    """

    # -- commands ------------------------------------------------------------------
    def command(self, tok: _Tok, no_func: bool) -> _N:
        t = tok.text
        name = t[1:]
        if name in _GREEK:
            self.pos += 1
            return self.maybe_apply(_N("V", t, tok.start, tok.end))
        if t in (r"\frac", r"\binom"):
            self.pos += 1
            a = self.macro_arg(f"missing argument 1 of {t}")
            b = self.macro_arg(f"missing argument 2 of {t}")
            roles = ("num", "den") if t == r"\frac" else ("arg0", "arg1")
            return _node("O", t, [(roles[0], a), (roles[1], b)], tok.start, tok.end)
        if t == r"\sqrt":
            return self.sqrt(tok)
        if t in (r"\stackrel", r"\overset", r"\underset"):
            self.pos += 1
            a = self.macro_arg(f"missing argument 1 of {t}")
            b = self.macro_arg(f"missing argument 2 of {t}")
            return _node("O", t, [("sub" if t == r"\underset" else "sup", a), ("base", b)], tok.start, tok.end)
        if t in _ACCENTS:
            return self.accent(tok)
        if t in _FONTS:
            return self.font(tok)
        if t in _WRAPPERS:
            return self.wrapper(tok)
        if name in _FUNC_NAMES:
            self.pos += 1
            return self.function(_N("F", t, tok.start, tok.end))
        if t in _BIG_OPS:
            self.pos += 1
            return self.big_op(tok)
        if t in _GEOMETRY:
            self.pos += 1
            return self.geometry(tok)
        if t in _OPENER_CMDS:
            return self.opener_command(tok)
        if t == r"\|":
            return self.fence("norm", r"\|", "norm")
        if t == r"\$":
            self.pos += 1
            if self.starts_operand():
                return _node("O", t, [("arg0", self.parse_expr(_UNARY))], tok.start, tok.end)
            return _N("C", t, tok.start, tok.end)
        if t in _CUSTOM_OPS:
            return self.custom_symbol(tok)
        if t in _CONSTANTS:
            self.pos += 1
            return _N("C", t, tok.start, tok.end)
        if _is_operator(t) or t in _CLOSERS or t in (r"\choose", r"\over", r"\atop"):
            return self.missing(f"missing operand before {t}")
        # unknown command: F over the braced groups that follow, else a symbol
        self.pos += 1
        args = []
        while (
            self.pos < self.end
            and self.toks[self.pos].kind == "CHAR"
            and self.toks[self.pos].text == "{"
            and self.closing(self.pos) > 0
        ):
            args.append(self.brace_group())
        if args:
            return _node("F", t, _args(args), tok.start, tok.end)
        return _N("C", t, tok.start, tok.end)

    def sqrt(self, tok: _Tok) -> _N:
        """``\\sqrt[index]{x}``: ``(O:\\sqrt index=... arg0=...)``."""
        t = tok.text
        self.pos += 1
        kids = []
        nxt = self.peek()
        if nxt is not None and nxt.kind == "CHAR" and nxt.text == "[":
            _, close_tok, elems, err = self.delim_content("opt", "]")
            idx = (
                elems[0]
                if len(elems) == 1
                else (
                    _node("O", "list", _args(elems))
                    if elems
                    else self.error("", nxt.end, nxt.end, r"empty \sqrt index")
                )
            )
            if err is not None:
                idx = self.error("[", nxt.start, nxt.end, err, [("arg0", idx)])
            kids.append(("index", idx))
        kids.append(("arg0", self.macro_arg(r"missing argument of \sqrt")))
        return _node("O", t, kids, tok.start, tok.end)

    def accent(self, tok: _Tok) -> _N:
        """An accent (``\\overline``, ``\\vec``...) over its argument, or alone over a blank."""
        t = tok.text
        self.pos += 1
        close = (
            self.closing(self.pos)
            if self.pos < self.end and self.toks[self.pos].kind == "CHAR" and self.toks[self.pos].text == "{"
            else -1
        )
        if close > 0 and all(self._separator(x) for x in self.toks[self.pos + 1 : close]):
            self.pos = close + 1
            return _N("O", t, tok.start, self.toks[close].end)  # a blank to fill in: ``\\underline{\\hspace{1cm}}``
        return _node("O", t, [("arg0", self.macro_arg(f"missing argument of {t}"))], tok.start, tok.end)

    def opener_command(self, tok: _Tok) -> _N:
        """An opening delimiter command: ``\\{`` (a set), ``\\langle``, ``\\lfloor``, ``\\lceil``, ``\\lvert``..."""
        t = tok.text
        kind, closer = _OPENER_CMDS[t]
        if kind == "set":
            return self.set_group()
        if kind == "angle":
            open_tok = tok
            _, close_tok, elems, err = self.delim_content(kind, closer)
            end = close_tok.end if close_tok is not None else open_tok.end
            return self._finish_group(
                open_tok, close_tok, err, _node("O", r"\langle", _args(elems), open_tok.start, end)
            )
        label = {"floor": "floor", "ceil": "ceil", "lvert": "abs", "lVert": "norm"}[kind]
        return self.fence(kind, closer, label)

    def custom_symbol(self, tok: _Tok) -> _N:
        """A custom operator symbol (``\\star``, ``\\#``...) in operand position: applied, or a ``C`` leaf."""
        t = tok.text
        self.pos += 1
        nxt = self.peek()
        if _is_paren(nxt):
            return self._call(tok, t)
        if self.starts_operand():
            return _node("F", t, [("arg0", self.parse_expr(_UNARY))], tok.start, tok.end)
        return _N("C", t, tok.start, tok.end)

    def _call(self, tok: _Tok, label: str) -> _N:
        f = _N("F", label, tok.start, tok.end)
        open_tok = self.toks[self.pos]
        _, close_tok, elems, err = self.delim_content()
        for i, e in enumerate(elems):
            f.add(f"arg{i}", e)
        f.end = max(f.end, close_tok.end if close_tok is not None else self.here())
        if err is not None:
            return self.error(self.raw(open_tok), open_tok.start, open_tok.end, err, [("arg0", f)])
        return f

    def function(self, f: _N) -> _N:
        """A named function (``\\sin``, ``\\log``, ``\\operatorname{lcm}``); the head is consumed."""
        while self.pos < self.end:
            tok = self.toks[self.pos]
            if tok.kind == "CHAR" and tok.text in "^_":
                self.pos += 1
                f.add("sup" if tok.text == "^" else "sub", self.script_arg(tok.text))
            elif tok.kind == "CHAR" and tok.text == "'":
                self.pos += 1
                f.label += "'"
                f.end = tok.end
            elif tok.kind == "CMD" and tok.text in (r"\limits", r"\nolimits"):
                self.pos += 1
            else:
                break
        tok = self.peek()
        if tok is None:
            return f
        if (tok.kind == "CHAR" and tok.text in "([") or (tok.kind == "OPEN" and tok.text in "(["):
            open_tok = tok
            _, close_tok, elems, err = self.delim_content()
            n0 = sum(1 for r, _ in f.kids if r.startswith("arg"))
            for i, e in enumerate(elems):
                f.add(f"arg{n0 + i}", e)
            f.end = max(f.end, close_tok.end if close_tok is not None else self.here())
            special = (
                self._special_sup()
                if self.pos < self.end and self.toks[self.pos].text == "^" and self.toks[self.pos].kind == "CHAR"
                else None
            )
            if special is not None and special[0] == r"\degree" and len(elems) == 1 and err is None:
                # ``\sin(2k-1)^\circ``: the degree sign belongs to the argument
                self.pos = special[2]
                role, arg = f.kids[-1]
                f.kids[-1] = (role, _node("O", r"\degree", [("arg0", arg)], arg.start, special[1]))
                f.end = special[1]
            if err is not None:
                return self.error(self.raw(open_tok), open_tok.start, open_tok.end, err, [("arg0", f)])
            return f
        if self.starts_operand():
            f.add("arg0", self.parse_expr(_IMPL, no_func=True))
        return f

    def big_op(self, tok: _Tok) -> _N:
        kids: list[tuple[str, _N]] = []
        while self.pos < self.end:
            t = self.toks[self.pos]
            if t.kind == "CHAR" and t.text in "^_":
                self.pos += 1
                kids.append(("upper" if t.text == "^" else "lower", self.script_arg(t.text)))
            elif t.kind == "CMD" and t.text in (r"\limits", r"\nolimits"):
                self.pos += 1
            else:
                break
        if self.starts_operand():
            body = self.parse_expr(_MUL)
            if tok.text in (r"\int", r"\iint", r"\iiint", r"\oint"):
                body, var = self._split_differential(body)
                if body is not None:
                    kids.append(("body", body))
                if var is not None:
                    kids.append(("var", var))
            else:
                kids.append(("body", body))
        return _node("O", tok.text, kids, tok.start, tok.end)

    @staticmethod
    def _split_differential(body: _N):
        if body.type == "U" and body.label == "mul" and body.flat == "mul" and len(body.kids) >= 2:
            d = body.kids[-2][1]
            v = body.kids[-1][1]
            if d.type == "V" and d.label in ("d", r"\mathrm{d}") and v.type == "V":
                rest = [n for _, n in body.kids[:-2]]
                var = _node("V", v.label, [], d.start, v.end)
                if not rest:
                    return None, var
                if len(rest) == 1:
                    return rest[0], var
                return _node("U", "mul", _args(rest), flat="mul"), var
        return body, None

    def geometry(self, tok: _Tok) -> _N:
        atoms: list[_N] = []
        while self.pos < self.end:
            t = self.toks[self.pos]
            if t.kind == "LET" or _is_greek(t):
                self.pos += 1
                atoms.append(self._geo_decor(_N("V", t.text, t.start, t.end)))
            elif t.kind == "DIG" and not atoms:
                atoms.append(self.parse_number())
                break
            else:
                break
        if not atoms:
            nxt = self.peek()
            close = self.closing(self.pos) if nxt is not None and nxt.kind == "CHAR" and nxt.text == "{" else -1
            if close > 0 and all(x.kind == "LET" for x in self.toks[self.pos + 1 : close]):
                atoms = [_N("V", x.text, x.start, x.end) for x in self.toks[self.pos + 1 : close]]
                self.pos = close + 1
            elif close > 0:
                atoms.append(self.brace_group())
            elif _is_paren(nxt):
                f = self._call(tok, tok.text)
                f.type = "O"
                return f
            else:
                return _N("C", tok.text, tok.start, tok.end)
        return _node("O", tok.text, _args(atoms), tok.start, tok.end)

    def _geo_decor(self, node: _N) -> _N:
        while self.pos < self.end:
            t = self.toks[self.pos]
            if t.kind == "CHAR" and t.text == "'":
                self.pos += 1
                node = _node("O", "'", [("arg0", node)], t.start, t.end)
            elif t.kind == "CHAR" and t.text == "_":
                self.pos += 1
                node = _node("O", "_", [("base", node), ("sub", self.script_arg("_"))], t.start, t.end)
            else:
                break
        return node

    def font(self, tok: _Tok) -> _N:
        font = tok.text
        self.pos += 1
        nxt = self.peek()
        if nxt is None:
            return _N("C", font, tok.start, tok.end)
        inner: list[_Tok]
        if nxt.kind == "CHAR" and nxt.text == "{" and self.closing(self.pos) > 0:
            close = self.closing(self.pos)
            inner = self.toks[self.pos + 1 : close]
            end_idx = close + 1
        else:
            inner = [nxt]
            end_idx = self.pos + 1
        if len(inner) == 1 and (inner[0].kind in ("LET", "DIG") or _is_greek(inner[0])):
            end = self.toks[end_idx - 1].end
            self.pos = end_idx
            type_ = "C" if font == r"\mathbb" else "V"
            head = _N(type_, f"{font}{{{inner[0].text}}}", tok.start, end)
            return self.maybe_apply(head) if type_ == "V" else head
        if inner and len(inner) >= 2 and all(x.kind == "LET" for x in inner) and font in _TEXT_FONTS:
            word = "".join(x.text for x in inner)
            end = self.toks[end_idx - 1].end
            self.pos = end_idx
            if word in _FUNC_NAMES:
                return self.function(_N("F", "\\" + word, tok.start, end))
            return _N("T", word, tok.start, end)
        return self.macro_arg(f"missing argument of {font}")

    def wrapper(self, tok: _Tok) -> _N:
        self.pos += 1
        nxt = self.peek()
        if nxt is not None and nxt.kind == "CHAR" and nxt.text == "{" and self.closing(self.pos) == self.pos + 2:
            inner = self.toks[self.pos + 1]
            name = None
            if inner.kind == "TEXT" and self._text_func(inner):
                name = "\\" + " ".join(inner.text.split())
            elif inner.kind == "OPNAME":
                name = "\\" + inner.text
            elif inner.kind == "CMD" and inner.text[1:] in _FUNC_NAMES:
                name = inner.text
            if name is not None:
                end = self.toks[self.pos + 2].end
                self.pos += 3
                return self.function(_N("F", name, tok.start, end))
        return self.macro_arg(f"missing argument of {tok.text}")

    @staticmethod
    def _text_func(tok: _Tok) -> bool:
        return " ".join(tok.text.split()) in _FUNC_NAMES

    def text_node(self, tok: _Tok) -> _N:
        self.pos += 1
        cs, ce, closed = tok.aux
        content = tok.text
        label = " ".join(content.replace("{", " ").replace("}", " ").split())
        if label in _FUNC_NAMES and closed:
            return self.function(_N("F", "\\" + label, tok.start, tok.end))
        node = _N("T", label, tok.start, tok.end)
        if "$" in content:
            node = self._text_with_math(tok, cs, ce)
        if not closed:
            return self.error(r"\text", tok.start, tok.end, r"unclosed \text{", [("arg0", node)])
        return node

    def _text_with_math(self, tok: _Tok, cs: int, ce: int) -> _N:
        s = self.s
        words: list[str] = []
        maths: list[_N] = []
        i = cs
        while i < ce:
            j = s.find("$", i, ce)
            while j > 0 and s[j - 1] == "\\" and j != -1:
                j = s.find("$", j + 1, ce)
            if j == -1:
                words.append(s[i:ce])
                break
            words.append(s[i:j])
            k = s.find("$", j + 1, ce)
            if k == -1:
                words.append(s[j:ce])
                break
            sub = type(self)(s, j + 1, k, self.depth + 1)  # a fresh _Parser (parser.py) over the math part
            node = sub.parse_range(0, len(sub.toks), trim=True)
            self.errors.extend(sub.errors)
            if node is not None:
                maths.append(node)
            i = k + 1
        label = " ".join(" ".join(words).split())
        return _node("T", label, _args(maths), tok.start, tok.end)
