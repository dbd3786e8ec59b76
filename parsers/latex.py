r"""LaTeX -> operator tree (OPT), as in Tangent-S (Zanibbi & Blostein).

``parse_latex(latex)`` turns one formula body (no ``$`` delimiters) into an
:class:`OperatorTree`: operators are internal nodes, operands are their
children, every node keeps its character span in the formula. It is a
hand-written tokeniser plus a Pratt (precedence climbing) parser, pure Python,
no SymPy, no torch. It never raises on any ``str``.

Node types (``NODE_TYPES``): ``V`` variable, ``N`` number, ``O`` ordered
operator, ``U`` unordered (commutative) operator, ``F`` function application,
``C`` constant or symbol, ``T`` text, ``E`` error.

Text form (``OperatorTree.to_sexpr``): a leaf is ``TYPE:LABEL`` (``V:x``,
``N:2``, ``C:\pi``); an inner node is ``(TYPE:LABEL role=child role=child ...)``
with the children in source order, e.g. ``a+b\cdot c`` is
``(U:+ arg0=V:a arg1=(U:\cdot arg0=V:b arg1=V:c))``. A label that is empty or
holds whitespace or ``"`` is written as a JSON string (``E:""``, ``T:"for n"``).

Design rules
------------
* Source order is kept; nothing is ever reordered. Nodes are numbered in
  preorder (a parent before its children, children in source order), the root
  is node 0. An inner node's span covers its whole subexpression; a leaf's span
  is its token.
* Commutative operators are n-ary and flattened as in Tangent-S:
  ``a+b+c`` is one ``U:+`` with ``arg0..arg2``. Explicit parentheses stop the
  flattening (``(a+b)+c`` keeps the inner node). ``U``: ``+``, ``\cdot``,
  ``\times``, implicit multiplication (label ``mul``), ``\cup``, ``\cap``,
  ``=``, ``\neq`` and the symmetric relations ``\approx \equiv \sim \simeq
  \cong \parallel \perp \iff``, sets.
* Ordered operators are binary and left-associative: ``a-b-c`` is
  ``-(-(a,b),c)``, ``a+b-c`` is ``-(+(a,b),c)``; ``^`` is right-associative
  (``2^3^4`` is ``2^(3^4)``). Everything not listed as ``U`` is ``O``
  (``-``, ``/``, ``\div``, ``*``, ``\frac``, ``^``, ``_``, ``<``, ``\le``,
  ``\in``, ``\subset``, ``\to``...). Unary minus/plus/``\pm`` use the binary
  label with a single child ``arg0`` (``-x`` is ``(O:- arg0=V:x)``).
* Precedence, loosest first: stray-token recovery; ``\over``/``\choose``;
  sequence (``seq``: ``\quad``, ``\qquad``, ``\hspace``, ``;``, ``\\`` outside
  an environment, and connective text such as ``\text{and}``/``\text{if}``/
  ``\textbf{(A)}``); comma list (``list``); ``\mid``/``\colon`` (and ``:`` inside
  a set or before ``\to``); ``\pmod``; logic (``\implies \iff \land \lor``);
  relations (``= < > \le \ge \neq \approx \equiv \in \notin \subset \subseteq
  \to \sim \cong \parallel \perp`` ...); ratio ``:``; additive (``+ - \pm \mp
  \cup \cap \setminus``); explicit multiplicative (``\cdot \times \div / *
  \circ \bmod`` and custom symbols such as ``\star``, ``\#``, ``\clubsuit``);
  implicit multiplication; unary minus; ``^`` and ``_``; postfix ``!``, ``'``,
  ``^\circ``, ``\%``. Implicit multiplication binds tighter than the explicit
  operators, so ``x/2y`` is ``x/(2y)`` and ``2\cdot 3x`` is ``2\cdot(3x)``;
  unary minus binds tighter still, so ``-2x`` is ``mul(-2, x)`` and ``-x^2``
  is ``-(x^2)``. Text next to math is a factor when it reads as a unit
  (``5\text{ cm}`` is ``mul(5, T:cm)``) and a sequence item when it is a
  connective or a choice label (``\text{if } x>0`` is ``seq(T:if, >(x,0))``).
* A top-level comma makes ``(O:list ...)`` and binds looser than relations:
  ``x=1, y=2`` is ``list(=(x,1), =(y,2))`` and ``x = 1, 2`` is
  ``list(=(x,1), 2)``. ``a_1, a_2, \ldots, a_n`` is a list with ``C:\ldots``.
* Relation chains are one node: the same relation repeated is one n-ary node
  (``a<b<c`` is ``(O:< arg0 arg1 arg2)``, ``a=b=c`` is ``(U:= ...)``); mixed
  relations make ``(O:chain arg0=a rel0=O:< arg1=b rel1=O:\le arg2=c)`` with
  operands and relation leaves in source order. A relation with no left
  operand (``= 5``, the ``&= ...`` lines of ``align``, ``\in [0,1]``) is allowed
  and is not an error.
* Brackets: a bracket pair holding one expression is grouping only (no node).
  A pair holding a comma list is a node labelled by its delimiters, so
  intervals and tuples keep their brackets: ``[0,2]`` is ``(O:[] ...)``,
  ``(0,1]`` is ``(O:(] ...)``, ``(-\infty,3)`` and the point ``(2,-3)`` are
  ``(O:() ...)``. ``\langle a,b\rangle`` is ``O:\langle``.
* Sets: ``\{1,2,3\}`` and ``\{a_n\}`` are ``(U:{} ...)`` (``\{\}`` has no
  children); set-builder ``\{x \mid x>0\}`` (also with ``|`` or ``:``) is
  ``(O:{|} arg0=V:x arg1=(O:> ...))``.
* Fences: ``|x|``, ``\left|x\right|``, ``\lvert x\rvert`` are ``(O:abs
  arg0=...)``; ``\|v\|`` is ``O:norm``; ``\lfloor x\rfloor`` is ``O:floor``;
  ``\lceil x\rceil`` is ``O:ceil``. ``|`` after an operand opens a new fence
  when another ``|`` follows in the same group (``2|x|``), otherwise it is
  ``\mid`` (divides), and ``||`` written together is ``\parallel``; likewise
  ``\|`` is ``\parallel`` when no second ``\|`` follows. ``\left. ... \right|``
  (a null delimiter) is grouping only; ``\left\{`` cases ``\right.`` is just
  the cases.
* Functions: ``f(x)`` is ``(F:f arg0=V:x)``, ``g(f(2))`` nests, ``\gcd(a,b)``
  has ``arg0, arg1``. A letter before ``(`` is a function when it is one of
  ``f g h p q F G H P Q`` or ``\zeta \phi \sigma \tau \Gamma``... (unless the
  letter itself occurs inside, as in ``p(1-p)``), when it carries a prime
  (``f'(x)`` is ``(F:f' ...)``), or when the parentheses hold a tuple
  (``A(3,1)``), a single atom (``b(6)``, ``r(x)``) or another application
  (``N(O(3))``); otherwise it is a product (``x(x+1)``). Scripts of the head are
  named children before the arguments: ``f^{-1}(x)`` is
  ``(F:f sup=(O:- arg0=N:1) arg0=V:x)``, ``\log_2 8`` is
  ``(F:\log sub=N:2 arg0=N:8)``, ``\sin^2 x`` is ``(F:\sin sup=N:2 arg0=V:x)``,
  and ``\sin(2k-1)^\circ`` puts the degree sign on the argument.
  A named function without parentheses takes the implicit product that follows,
  up to the next function or operator: ``\sin 2x\cos x`` is
  ``mul(\sin(2x), \cos(x))``. ``\operatorname{lcm}``, ``\text{gcd}``,
  ``\mathrm{lcm}`` become ``F:\lcm``/``F:\gcd``. An unknown command followed
  by braced groups (``\foo{x}``) is an ``F`` node over them; an unknown command
  alone is a ``C`` symbol.
* Big operators ``\sum \prod \int \lim \bigcup``... are ``O`` nodes with the
  named children ``lower``, ``upper`` (scripts, in source order) and ``body``
  (the multiplicative expression that follows); an integral's trailing ``dx``
  becomes ``var`` (``\int_0^1 x\,dx`` is ``(O:\int lower=N:0 upper=N:1
  body=V:x var=V:x)``).
* Scripts: ``x^2`` is ``(O:^ base=V:x sup=N:2)``, ``a_n`` is ``(O:_ base=V:a
  sub=V:n)``, ``x_1^2`` is ``(O:^ base=(O:_ base=V:x sub=N:1) sup=N:2)``.
  Arguments follow TeX: an unbraced argument is one token, so ``\frac 18`` is
  1/8, ``x^23`` is ``x^2`` times 3 and ``\sqrt2`` is sqrt(2) (a sign before it
  is kept: ``x^-1`` is ``x^{-1}``). An empty script ``x^{}`` makes no node; a
  script with nothing before it (``^\circ`` alone, ``{}^{14}``) is a node
  without ``base``.
* Fixed slots: ``\frac`` has ``num``/``den`` (``\dfrac``, ``\tfrac``,
  ``\cfrac``, ``{a \over b}`` are all ``O:\frac``); ``\binom`` (and
  ``\dbinom``, ``{n \choose k}``) has ``arg0``/``arg1``; ``\sqrt[3]{x}`` is
  ``(O:\sqrt index=N:3 arg0=V:x)``; ``\stackrel{a}{b}``/``\overset`` have
  ``sup``/``base``; accents ``\overline \vec \hat \bar \tilde \underline``...
  have ``arg0`` (``\overline{AB}`` is ``(O:\overline arg0=(U:mul V:A V:B))``);
  ``a \equiv b \pmod n`` is ``(O:\pmod arg0=(U:\equiv ...) mod=V:n)``.
* Postfix: ``30^\circ`` is ``(O:\degree arg0=N:30)``, ``n!`` is ``(O:!
  arg0=V:n)``, ``5\%`` is ``(O:\% arg0=N:5)``, ``A'`` is ``(O:' arg0=V:A)``.
  ``\$5`` is ``(O:\$ arg0=N:5)``. Repeating decimals ``0.\overline{3}`` are
  ``(O:repeat arg0=N:0. arg1=N:3)``.
* Geometry: ``\angle ABC`` and ``\triangle ABC`` take the following points as
  ordered arguments: ``(O:\angle arg0=V:A arg1=V:B arg2=V:C)``. Segments
  ``AB`` are products of points (``mul``).
* Leaves: letters and Greek letters are ``V`` (``e`` and ``i`` too: whether
  they are constants depends on the problem); ``\pi``, ``\infty``,
  ``\emptyset``, dots and other symbols are ``C``; numbers are ``N`` with
  thousands separators removed (``1{,}000`` and ``12,\!000`` are ``N:1000`` and
  ``N:12000``; a plain ``1,000`` stays a list, since ``(20,100)`` is a point);
  ``\text{ cm}``, ``\mbox``, ``\textbf`` are ``T`` with the stripped text as
  label (math inside ``\text{if $n<10$}`` becomes the T node's children).
  A styled single letter is one leaf: ``\mathbf{v}`` is ``V:\mathbf{v}``,
  ``\mathbb{R}`` is ``C:\mathbb{R}``; styled longer content is just grouped.
* Environments (``pmatrix``, ``bmatrix``, ``vmatrix``, ``array``, ``cases``,
  ``aligned``, ``align*``...) are ``(O:<name> arg0=(O:row arg0=cell ...)
  ...)``: one ``row`` node per ``\\``, one child per ``&`` cell (an empty cell
  is ``T:""``). In align-like environments ``&`` is an alignment point, not a
  cell boundary. A trailing ``*`` of the name is dropped.
* Spacing (``\, \! \; \: \ `` ``~``), sizing (``\left \right \bigl \Bigr``...),
  ``\displaystyle``, ``\limits``, ``\hline``, ``\renewcommand``... make no
  nodes. Sentence punctuation at the end of a formula or cell (``x = 5.``,
  ``a,``, ``?``, ``:``) is ignored, and so is a final hyphen (``the $x-$axis``).
  A relation may also lack its right operand at the very end (the blank of
  ``then $BF=$``). An operator that stands for itself, as a whole formula
  (``+``, ``\times``) or as a list item (``\{+,-,\times,\div\}``), is one
  ``C`` leaf; an accent over a blank (``\underline{\hspace{1cm}}``) is a leaf.
* Synonyms get one label: ``\leq``->``\le``, ``\geq``->``\ge``,
  ``\ne``->``\neq``, ``\rightarrow``->``\to``, ``\Rightarrow``->``\implies``,
  ``\dots``/``...``->``\ldots``, ``\dotsb``->``\cdots``, ``\mod``->``\pmod``,
  ``\overrightarrow``->``\vec``, ``\boldsymbol``->``\mathbf``, ``\bot``->``\perp``
  and the like.
* Errors: malformed input gives ``E`` nodes and status ``"partial"`` with one
  message per problem in ``errors``: a missing operand or argument is an
  empty-labelled ``E:""`` leaf (``x+``, ``\frac{1}``, a dangling ``^``); an
  unclosed group is an ``E`` node labelled by its opener with the recovered
  content as child; a stray closer (``}``, ``)``, ``\end{x}``) is an ``E`` node
  labelled by itself, joining what stands left and right of it. When nothing
  but errors is left the status is ``"failed"`` and the tree is a single ``E``
  node holding the raw string; an empty or whitespace-only string is
  ``"failed"`` with one ``E`` node labelled ``""``. Nesting deeper than
  :data:`MAX_DEPTH` is cut off into an ``E`` node. ``errors`` is empty exactly
  when the status is ``"ok"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
import json
import re

__all__ = ["NODE_TYPES", "OptNode", "OptEdge", "OperatorTree", "parse_latex", "MAX_DEPTH"]

NODE_TYPES = ("V", "N", "O", "U", "F", "C", "T", "E")

MAX_DEPTH = 120  # parser recursion units (about three per nesting level)


@dataclass(frozen=True)
class OptNode:
    id: int
    type: str
    label: str
    span: tuple[int, int]


@dataclass(frozen=True)
class OptEdge:
    src: int
    dst: int
    role: str


@dataclass(frozen=True)
class OperatorTree:
    latex: str
    nodes: tuple[OptNode, ...]
    edges: tuple[OptEdge, ...]
    status: str
    errors: tuple[str, ...] = ()

    @property
    def root(self) -> int:
        return 0

    @cached_property
    def _child_index(self) -> list[list[tuple[str, int]]]:
        index: list[list[tuple[str, int]]] = [[] for _ in self.nodes]
        for e in self.edges:
            index[e.src].append((e.role, e.dst))
        return index

    def children(self, node_id: int) -> list[tuple[str, int]]:
        """``(role, child id)`` pairs of a node, in source order."""
        return list(self._child_index[node_id])

    def to_sexpr(self) -> str:
        out: list[str] = []
        index = self._child_index
        stack: list[tuple[int, str | None]] = [(0, None)]
        while stack:
            nid, closing = stack.pop()
            if closing is not None:
                out.append(closing)
                continue
            node = self.nodes[nid]
            head = f"{node.type}:{_quote(node.label)}"
            kids = index[nid]
            if not kids:
                out.append(head)
                continue
            out.append("(" + head)
            stack.append((-1, ")"))
            for role, child in reversed(kids):
                stack.append((child, None))
                stack.append((-1, f" {role}="))
        return "".join(out)

    def to_dict(self) -> dict:
        return {
            "latex": self.latex,
            "status": self.status,
            "errors": list(self.errors),
            "nodes": [{"id": n.id, "type": n.type, "label": n.label, "span": list(n.span)} for n in self.nodes],
            "edges": [{"src": e.src, "dst": e.dst, "role": e.role} for e in self.edges],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "OperatorTree":
        return cls(
            latex=d["latex"],
            nodes=tuple(OptNode(int(n["id"]), n["type"], n["label"], (int(n["span"][0]), int(n["span"][1])))
                        for n in d["nodes"]),
            edges=tuple(OptEdge(int(e["src"]), int(e["dst"]), e["role"]) for e in d["edges"]),
            status=d["status"],
            errors=tuple(d.get("errors", ())),
        )


def _quote(label: str) -> str:
    if label == "" or '"' in label or any(c.isspace() for c in label):
        return json.dumps(label, ensure_ascii=False)
    return label


# ----------------------------------------------------------------------------
# Vocabulary of commands

_GREEK = set(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi omicron "
    "rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma "
    "Upsilon Phi Psi Omega ell imath jmath aleph beth".split()
)
_CONSTANTS = set(
    r"\pi \infty \emptyset \ldots \cdots \vdots \ddots \partial \hbar \top \checkmark \frown \smile "
    r"\forall \exists \nexists \wp \prime \degree \circ \angle \triangle \$ \% \surd \varpi".split()
)
_FUNC_NAMES = set(
    "sin cos tan cot sec csc arcsin arccos arctan arccot arcsec arccsc sinh cosh tanh coth sech csch "
    "log ln lg exp det gcd lcm deg dim ker arg max min sup inf Pr hom sgn sign cis proj tr rank ord "
    "Arg Log lcd Re Im".split()
)
_BIG_OPS = set(
    r"\sum \prod \coprod \int \iint \iiint \oint \bigcup \bigcap \bigoplus \bigotimes \bigvee \bigwedge "
    r"\bigsqcup \lim \limsup \liminf".split()
)
_ADD_OPS = {"+": "U", "-": "O", r"\pm": "O", r"\mp": "O", r"\cup": "U", r"\cap": "U", r"\setminus": "O",
            r"\oplus": "U", r"\ominus": "O", r"\sqcup": "U", r"\sqcap": "U", r"\uplus": "U"}
_MUL_OPS = {r"\cdot": "U", r"\times": "U", "*": "O", "/": "O", r"\div": "O", r"\circ": "O", r"\bmod": "O",
            r"\otimes": "U"}
_CUSTOM_OPS = set(
    r"\star \ast \bullet \diamond \Diamond \diamondsuit \heartsuit \clubsuit \spadesuit \nabla \bowtie "
    r"\oslash \odot \dagger \ddagger \S \# \& \Box \square \triangledown \triangleright \triangleleft "
    r"\boxplus \boxtimes \boxdot \boxminus \circledast \circledcirc \wr \amalg \maltese \lozenge "
    r"\blacktriangle \blacksquare \natural \sharp \flat \P \copyright \dashv \vdash \models".split()
)
_RELATIONS = {
    "=": "U", "<": "O", ">": "O", r"\le": "O", r"\ge": "O", r"\neq": "U", r"\approx": "U",
    r"\equiv": "U", r"\sim": "U", r"\simeq": "U", r"\cong": "U", r"\parallel": "U", r"\perp": "U",
    r"\in": "O", r"\notin": "O", r"\ni": "O", r"\subset": "O", r"\subseteq": "O", r"\supset": "O",
    r"\supseteq": "O", r"\subsetneq": "O", r"\supsetneq": "O", r"\to": "O", r"\mapsto": "O",
    r"\gets": "O", r"\propto": "O", r"\ll": "O", r"\gg": "O", r"\prec": "O", r"\succ": "O",
    r"\preceq": "O", r"\succeq": "O", r"\nmid": "O", ":=": "O", r"\doteq": "U", r"\asymp": "U",
    r"\lessgtr": "O", r"\gtrless": "O", r"\leftarrow": "O", r"\longleftarrow": "O", r"\nless": "O",
    r"\ngtr": "O", r"\nleq": "O", r"\ngeq": "O", r"\nsim": "U", r"\ncong": "U", r"\sqsubset": "O",
    r"\sqsubseteq": "O", r"\approxeq": "U", r"\nparallel": "U",
}
_LOGIC = {r"\implies": "O", r"\iff": "U", r"\land": "U", r"\lor": "U", r"\impliedby": "O"}
_ACCENTS = set(
    r"\overline \underline \bar \vec \hat \tilde \dot \ddot \dddot \check \breve \acute \grave \mathring "
    r"\overarc \overleftrightarrow \overleftarrow \underrightarrow \underleftarrow \overbrace \underbrace "
    r"\cancel \bcancel \xcancel \sout \widecheck \utilde \overparen \underparen".split()
)
_FONTS = set(r"\mathbf \mathbb \mathcal \mathrm \mathit \mathsf \mathtt \mathfrak \mathscr \mathnormal".split())
_TEXT_FONTS = {r"\mathrm", r"\mathit", r"\mathsf", r"\mathtt", r"\mathnormal"}
_WRAPPERS = set(
    r"\mathop \mathord \mathbin \mathrel \mathpunct \mathinner \boxed \ensuremath \smash \mathclap "
    r"\llap \rlap \clap \mathllap \mathrlap \lefteqn".split()
)
_GEOMETRY = {r"\angle", r"\triangle"}
_STRONG_HEADS = set("fghpqFGHPQ") | set(
    r"\zeta \phi \varphi \sigma \tau \Gamma \psi \chi \Phi \Psi".split())
_ALIGN_ENVS = {"align", "aligned", "eqnarray", "split", "gather", "gathered", "flalign", "alignat",
               "alignedat", "multline", "equation", "IEEEeqnarray", "align*", "eqnarray*", "gather*",
               "flalign*", "alignat*", "multline*", "equation*"}
_SPEC_ENVS = {"array", "tabular", "subarray", "alignat", "alignat*", "alignedat", "darray", "tabularx"}
_CONNECTIVES = set(
    "if and or for otherwise where when whenever then is are but so with since as else unless iff "
    "such that which also not all each every because let given thus hence while".split()
)
_CHOICE_RE = re.compile(r"^\(?[A-Ea-e]\)$|^\([A-E]\)|^\(?[A-E]\)\s")

_SYNONYMS = {
    r"\leq": r"\le", r"\leqslant": r"\le", r"\leqq": r"\le", r"\geq": r"\ge", r"\geqslant": r"\ge",
    r"\geqq": r"\ge", r"\ne": r"\neq", r"\rightarrow": r"\to", r"\longrightarrow": r"\to",
    r"\Rightarrow": r"\implies", r"\Longrightarrow": r"\implies", r"\Leftrightarrow": r"\iff",
    r"\Longleftrightarrow": r"\iff", r"\leftrightarrow": r"\iff", r"\Leftarrow": r"\impliedby",
    r"\Longleftarrow": r"\impliedby", r"\wedge": r"\land", r"\vee": r"\lor", r"\lnot": r"\neg",
    r"\dfrac": r"\frac", r"\tfrac": r"\frac", r"\cfrac": r"\frac", r"\dbinom": r"\binom",
    r"\tbinom": r"\binom", r"\dots": r"\ldots", r"\dotsc": r"\ldots", r"\dotso": r"\ldots",
    r"\dotsb": r"\cdots", r"\dotsm": r"\cdots", r"\dotsi": r"\cdots", r"\varnothing": r"\emptyset",
    r"\lbrace": r"\{", r"\rbrace": r"\}", r"\mod": r"\pmod", r"\bold": r"\mathbf",
    r"\boldsymbol": r"\mathbf", r"\bm": r"\mathbf", r"\pmb": r"\mathbf", r"\measuredangle": r"\angle",
    r"\bigtriangleup": r"\triangle", r"\vartriangle": r"\triangle", r"\widehat": r"\hat",
    r"\widetilde": r"\tilde", r"\overrightarrow": r"\vec", r"\wideparen": r"\overarc",
    r"\centerdot": r"\cdot", r"\cdotp": r"\cdot", r"\textdollar": r"\$", r"\dollar": r"\$",
    r"\vert": "|", r"\Vert": r"\|",
    r"\lt": "<", r"\gt": ">", r"\lbrack": "[", r"\rbrack": "]", r"\textdegree": r"\degree",
    r"\textperthousand": r"\%", r"\percent": r"\%", r"\Bbb": r"\mathbb", r"\mathds": r"\mathbb",
    r"\owns": r"\ni", r"\bot": r"\perp",
}
_CHAR_CMDS = {"|": "CHAR", "<": "CHAR", ">": "CHAR", "[": "CHAR", "]": "CHAR", "*": "CHAR"}

_TEXT_CMDS = set(
    "text textbf textit textrm textsf texttt textup textnormal textmd textsl textsc mbox hbox emph fbox "
    "framebox makebox intertext shortintertext".split()
)
_DROP = set(
    "displaystyle textstyle scriptstyle scriptscriptstyle limits nolimits allowbreak indent noindent "
    "nonumber notag hline centering relax protect nobreak strut mathstrut bf rm it cal sf tt em sl sc "
    "small large Large LARGE normalsize tiny footnotesize scriptsize huge Huge boldmath unboldmath "
    "big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr bigm Bigm biggm Biggm "
    "displaybreak smallskip medskip bigskip toprule midrule bottomrule newpage linebreak "
    "pagebreak par vfill hfilneg negthinspace negmedspace negthickspace thinspace medspace "
    "thickspace nolinebreak".split()
)
_DROP_ARGS = {
    "label": 1, "tag": 1, "cline": 1, "vspace": 1, "color": 1, "pagecolor": 1, "phantom": 1,
    "hphantom": 1, "vphantom": 1, "renewcommand": 2, "newcommand": 2, "setlength": 2, "addtolength": 2,
    "rule": 2, "raisebox": 1, "setcounter": 2, "def": 1, "DeclareMathOperator": 2,
    "multicolumn": 2, "multirow": 2, "cellcolor": 1, "rowcolor": 1, "hdashline": 0, "mkern": 1,
    "mskip": 1, "kern": 1,
}
_SEP_CMDS = {"quad", "qquad", "enspace", "hfill", "hfil", "newline", "enskip"}
_DELIMS = {
    "(": "(", ")": ")", "[": "[", "]": "]", "|": "|", ".": ".", "/": ".", "<": r"\langle",
    ">": r"\rangle", r"\{": r"\{", r"\}": r"\}", r"\lbrace": r"\{", r"\rbrace": r"\}", r"\|": r"\|",
    r"\vert": "|", r"\Vert": r"\|", r"\lvert": "|", r"\rvert": "|", r"\lVert": r"\|", r"\rVert": r"\|",
    r"\langle": r"\langle", r"\rangle": r"\rangle", r"\lfloor": r"\lfloor", r"\rfloor": r"\rfloor",
    r"\lceil": r"\lceil", r"\rceil": r"\rceil", r"\lbrack": "[", r"\rbrack": "]", r"\backslash": ".",
    r"\uparrow": ".", r"\downarrow": ".", r"\updownarrow": ".", r"\Uparrow": ".", r"\Downarrow": ".",
}
_CLOSERS = {r"\}", r"\rfloor", r"\rceil", r"\rangle", r"\rvert", r"\rVert"}
_OPENER_CMDS = {r"\{": ("set", r"\}"), r"\lfloor": ("floor", r"\rfloor"), r"\lceil": ("ceil", r"\rceil"),
                r"\langle": ("angle", r"\rangle"), r"\lvert": ("lvert", r"\rvert"),
                r"\lVert": ("lVert", r"\rVert")}
_TRAILING_PUNCT = {",", ".", ";", "?", ":"}

# binding powers
_STRAY, _OVER, _SEQ, _LIST, _MID, _PMOD, _LOGICBP, _REL, _RATIO, _ADD, _MUL, _IMPL, _UNARY = range(1, 14)


# ----------------------------------------------------------------------------
# Tokeniser

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


def _tokenize(s: str, lo: int, hi: int) -> list[_Tok]:
    toks: list[_Tok] = []
    add = toks.append
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
                name = s[i + 1:j]
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
        if c == "," and s.startswith("\\!", i + 1) and toks and toks[-1].kind == "DIG" and toks[-1].end == i \
                and i + 3 < hi and "0" <= s[i + 3] <= "9":
            add(_Tok("THSEP", ",", i, i + 3))
            i += 3
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
    if name == "operatorname":
        k = j
        if k < hi and s[k] == "*":
            k += 1
        k = _skip_space(s, k, hi)
        if k < hi and s[k] == "{":
            cs, ce, nxt, closed = _read_group(s, k, hi)
            label = re.sub(r"\\[A-Za-z]+|[{}\s]", "", s[cs:ce])
            add(_Tok("OPNAME", label or "operatorname", i, nxt, closed))
            return nxt
        add(_Tok("CMD", r"\operatorname", i, j))
        return j
    if name in ("begin", "end"):
        k = _skip_space(s, j, hi)
        if k < hi and s[k] == "{":
            cs, ce, nxt, closed = _read_group(s, k, hi)
            if closed:
                add(_Tok("BEGIN" if name == "begin" else "END", s[cs:ce].strip(), i, nxt))
                return nxt
        add(_Tok("BAD", "\\" + name, i, j))
        return j
    if name in ("left", "right", "middle"):
        delim, nxt = _read_delim(s, j, hi)
        if delim is None:
            return j
        if name == "middle":
            add(_Tok("CMD", r"\mid", i, nxt))
        else:
            add(_Tok("OPEN" if name == "left" else "CLOSE", delim, i, nxt))
        return nxt
    if name in _DROP or name in (",", "!", ";", ":", ">", " ", "\n", "\t", "\r", "/", "-", "@", "*"):
        return j
    if name in _DROP_ARGS:
        k = j
        if k < hi and s[k] == "*":
            k += 1
        for _ in range(_DROP_ARGS[name]):
            k = _skip_arg(s, k, hi)
        return k
    if name in _SEP_CMDS or name == "hspace":
        k = j
        if name == "hspace":
            if k < hi and s[k] == "*":
                k += 1
            k = _skip_arg(s, k, hi)
        add(_Tok("SEP", "\\" + name, i, k))
        return k
    if name == "\\" or name == "cr":
        k = j
        if k < hi and s[k] == "*":
            k += 1
        m = _skip_space(s, k, hi)
        if m < hi and s[m] == "[":
            close = s.find("]", m, hi)
            if close != -1 and close - m < 12:
                k = close + 1
        add(_Tok("ROW", r"\\", i, k))
        return k
    if name == "not":
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
    text = "\\" + name
    text = _SYNONYMS.get(text, text)
    if text in _CHAR_CMDS:
        add(_Tok("CHAR", text, i, j))
    else:
        add(_Tok("CMD", text, i, j))
    return j


# ----------------------------------------------------------------------------
# Parser

def _is_paren(tok: _Tok | None) -> bool:
    return tok is not None and tok.text == "(" and tok.kind in ("CHAR", "OPEN")


def _is_greek(tok: _Tok) -> bool:
    return tok.kind == "CMD" and tok.text[1:] in _GREEK


def _is_operator(t: str) -> bool:
    """A binary operator or relation command (not a custom symbol such as ``\\star``)."""
    return (t in _ADD_OPS or t in _MUL_OPS or t in _RELATIONS or t in _LOGIC or t.startswith(r"\not")
            or t in (r"\mid", r"\colon", r"\pmod"))


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

    def group(self, start: int, end: int) -> "_N":
        """Mark this node as written inside delimiters spanning ``start:end``."""
        self.flat = None
        self.outer = (min(start, self.lo()), max(end, self.hi()))
        return self

    def add(self, role: str, node: "_N") -> None:
        self.kids.append((role, node))
        if node.lo() < self.start:
            self.start = node.lo()
        if node.hi() > self.end:
            self.end = node.hi()


def _node(type_: str, label: str, kids: list[tuple[str, _N]], start: int | None = None, end: int | None = None,
          flat: str | None = None) -> _N:
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


class _Parser:
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
        return self.s[tok.start:tok.end]

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

    # -- ranges ---------------------------------------------------------------
    def parse_range(self, lo: int, hi: int, trim: bool = False, hyphen: bool = False) -> _N | None:
        """Parse tokens ``lo:hi`` as one expression in a fresh bracket scope (None when empty).

        ``trim`` drops trailing sentence punctuation, ``hyphen`` also a trailing ``-``
        (``the $x-$coordinate``)."""
        saved = (self.pos, self.end, self.scope)
        if trim:
            while hi - lo > 1 and (self._trailing(self.toks[hi - 1]) or (
                    hyphen and self.toks[hi - 1].kind == "CHAR" and self.toks[hi - 1].text == "-")):
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
                    left = self.error(self.raw(tok), tok.start, tok.end, f"unexpected '{self.raw(tok)}'",
                                      [("arg0", left)])
            return left
        finally:
            self.depth -= 1

    def classify(self, tok: _Tok, left: _N, no_func: bool) -> tuple[str, int]:
        k = tok.kind
        t = tok.text
        if k == "CHAR":
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
        return not (t in _ADD_OPS or t in _MUL_OPS or t in _RELATIONS or t in _LOGIC
                    or t in _CLOSERS or t.startswith(r"\not") or t in (r"\mid", r"\colon", r"\pmod", r"\%",
                                                                       r"\prime", r"\choose", r"\over",
                                                                       r"\atop", r"\degree"))

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
        return self.pos + 1 < self.end and self.toks[self.pos + 1].kind == "DIG" \
            and self.toks[self.pos + 1].start == self.toks[self.pos].end

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
                if close == self.pos + 2 and self.toks[self.pos + 1].kind == "CMD" \
                        and self.toks[self.pos + 1].text in _BIG_OPS:
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
        return p < self.end and self.toks[p].kind == "CMD" and self.toks[p].text == r"\overline" \
            and self.toks[p].start == self.toks[self.pos].end

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
        if nxt is not None and nxt.kind == "CHAR" and nxt.text == "." and nxt.start == last_end \
                and self.pos + 1 < self.end and toks[self.pos + 1].kind == "CMD" \
                and toks[self.pos + 1].text == r"\overline" and not seen_dot:
            self.pos += 1
            node = _N("N", node.label + ".", node.start, nxt.end)
            seen_dot = True
            nxt = self.peek()
        if seen_dot and nxt is not None and nxt.kind == "CMD" and nxt.text == r"\overline" \
                and nxt.start == node.end:
            self.pos += 1
            rep = self.macro_arg(r"missing argument of \overline")
            return _node("O", "repeat", [("arg0", node), ("arg1", rep)])
        return node

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
            if len(rest) >= 3 and rest[1].kind == "CHAR" and rest[1].text == "{" and rest[-1].text == "}" \
                    and all(t.kind in ("LET", "DIG") or (t.kind == "CHAR" and t.text in "+-") for t in rest[2:-1]):
                return True
        return False

    def _plain_occurrence(self, lo: int, hi: int, letter: str) -> bool:
        toks = self.toks
        for j in range(lo, hi):
            t = toks[j]
            if t.kind in ("LET", "CMD") and t.text == letter:
                nxt = toks[j + 1] if j + 1 < hi else None
                if nxt is None or not ((nxt.kind == "CHAR" and nxt.text in "(_^'") or
                                       (nxt.kind == "OPEN" and nxt.text == "(")):
                    return True
        return False

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
                while self.pos < self.end and self.toks[self.pos].kind == "CHAR" and self.toks[self.pos].text == "^" \
                        and self._special_sup() is None:
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
                while self.pos < self.end and ((self.toks[self.pos].kind == "CHAR" and self.toks[self.pos].text == "'")
                                               or (self.toks[self.pos].kind == "CMD"
                                                   and self.toks[self.pos].text == r"\prime")):
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
            inner = toks[p + 1:close]
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
        if t in (r"\circ", r"\cdot", r"\times", r"\star", r"\ast", r"\bullet", r"\dagger", r"\prime",
                 r"\%", r"\#", r"\$"):
            return True
        return not (t in _ADD_OPS or t in _MUL_OPS or t in _RELATIONS or t in _LOGIC or t in _CLOSERS
                    or t.startswith(r"\not") or t in (r"\mid", r"\colon", r"\pmod", r"\choose", r"\over", r"\atop"))

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

    def _grouped(self, open_tok: _Tok, close_tok: _Tok | None, err: str | None, elems: list[_N], label: str,
                 type_: str = "O") -> _N:
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
        node = _node("O", label, [("arg0", elems[0])], open_tok.start,
                     close_tok.end if close_tok is not None else open_tok.end)
        return self._finish_group(open_tok, close_tok, err, node)

    def set_group(self) -> _N:
        open_tok = self.toks[self.pos]
        _, close_tok, elems, err = self.delim_content("set", r"\}")
        return self._set_node(open_tok, close_tok, err, elems)

    def _set_node(self, open_tok, close_tok, err, elems) -> _N:
        end = close_tok.end if close_tok is not None else open_tok.end
        if len(elems) == 1 and elems[0].type == "O" and elems[0].label == r"\mid" and len(elems[0].kids) == 2:
            node = _node("O", "{|}", [("arg0", elems[0].kids[0][1]), ("arg1", elems[0].kids[1][1])],
                         open_tok.start, end)
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
                return self.error("", p, p, "empty group") if err is None else \
                    self.error(self.raw(open_tok), open_tok.start, open_tok.end, err)
            return self._grouped(open_tok, close_tok, err, elems, "list")
        if o == r"\{":
            return self._set_node(open_tok, close_tok, err, elems)
        labels = {"|": "abs", r"\|": "norm", r"\lfloor": "floor", r"\lceil": "ceil"}
        if o in labels:
            if not elems:
                elems = [self.error("", open_tok.end, open_tok.end, f"empty {labels[o]}")]
            inner = elems[0] if len(elems) == 1 else _node("O", "list", _args(elems), flat="list")
            end = close_tok.end if close_tok is not None else open_tok.end
            return self._finish_group(open_tok, close_tok, err, _node("O", labels[o], [("arg0", inner)],
                                                                      open_tok.start, end))
        if o == r"\langle":
            end = close_tok.end if close_tok is not None else open_tok.end
            return self._finish_group(open_tok, close_tok, err, _node("O", r"\langle", _args(elems),
                                                                      open_tok.start, end))
        if o in "([" and c in ")]":
            return self._grouped(open_tok, close_tok, err, elems, o + c)
        if not elems:
            return self._grouped(open_tok, close_tok, err, elems, o + c)
        return self._grouped(open_tok, close_tok, err, elems, "list")

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
            self.pos += 1
            kids = []
            nxt = self.peek()
            if nxt is not None and nxt.kind == "CHAR" and nxt.text == "[":
                _, close_tok, elems, err = self.delim_content("opt", "]")
                idx = elems[0] if len(elems) == 1 else (_node("O", "list", _args(elems)) if elems else
                                                        self.error("", nxt.end, nxt.end, r"empty \sqrt index"))
                if err is not None:
                    idx = self.error("[", nxt.start, nxt.end, err, [("arg0", idx)])
                kids.append(("index", idx))
            kids.append(("arg0", self.macro_arg(r"missing argument of \sqrt")))
            return _node("O", t, kids, tok.start, tok.end)
        if t in (r"\stackrel", r"\overset", r"\underset"):
            self.pos += 1
            a = self.macro_arg(f"missing argument 1 of {t}")
            b = self.macro_arg(f"missing argument 2 of {t}")
            return _node("O", t, [("sub" if t == r"\underset" else "sup", a), ("base", b)], tok.start, tok.end)
        if t in _ACCENTS:
            self.pos += 1
            close = self.closing(self.pos) if self.pos < self.end and self.toks[self.pos].kind == "CHAR" \
                and self.toks[self.pos].text == "{" else -1
            if close > 0 and all(self._separator(x) for x in self.toks[self.pos + 1:close]):
                self.pos = close + 1
                return _N("O", t, tok.start, self.toks[close].end)  # a blank to fill in: ``\\underline{\\hspace{1cm}}``
            return _node("O", t, [("arg0", self.macro_arg(f"missing argument of {t}"))], tok.start, tok.end)
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
            kind, closer = _OPENER_CMDS[t]
            if kind == "set":
                return self.set_group()
            if kind == "angle":
                open_tok = tok
                _, close_tok, elems, err = self.delim_content(kind, closer)
                end = close_tok.end if close_tok is not None else open_tok.end
                return self._finish_group(open_tok, close_tok, err, _node("O", r"\langle", _args(elems),
                                                                          open_tok.start, end))
            label = {"floor": "floor", "ceil": "ceil", "lvert": "abs", "lVert": "norm"}[kind]
            return self.fence(kind, closer, label)
        if t == r"\|":
            return self.fence("norm", r"\|", "norm")
        if t == r"\$":
            self.pos += 1
            if self.starts_operand():
                return _node("O", t, [("arg0", self.parse_expr(_UNARY))], tok.start, tok.end)
            return _N("C", t, tok.start, tok.end)
        if t in _CUSTOM_OPS:
            self.pos += 1
            nxt = self.peek()
            if _is_paren(nxt):
                return self._call(tok, t)
            if self.starts_operand():
                return _node("F", t, [("arg0", self.parse_expr(_UNARY))], tok.start, tok.end)
            return _N("C", t, tok.start, tok.end)
        if t in _CONSTANTS:
            self.pos += 1
            return _N("C", t, tok.start, tok.end)
        if _is_operator(t) or t in _CLOSERS or t in (r"\choose", r"\over", r"\atop"):
            return self.missing(f"missing operand before {t}")
        # unknown command: F over the braced groups that follow, else a symbol
        self.pos += 1
        args = []
        while self.pos < self.end and self.toks[self.pos].kind == "CHAR" and self.toks[self.pos].text == "{" \
                and self.closing(self.pos) > 0:
            args.append(self.brace_group())
        if args:
            return _node("F", t, _args(args), tok.start, tok.end)
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
            special = self._special_sup() if self.pos < self.end and self.toks[self.pos].text == "^" \
                and self.toks[self.pos].kind == "CHAR" else None
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
            if close > 0 and all(x.kind == "LET" for x in self.toks[self.pos + 1:close]):
                atoms = [_N("V", x.text, x.start, x.end) for x in self.toks[self.pos + 1:close]]
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
            inner = self.toks[self.pos + 1:close]
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
            sub = _Parser(s, j + 1, k, self.depth + 1)
            node = sub.parse_range(0, len(sub.toks), trim=True)
            self.errors.extend(sub.errors)
            if node is not None:
                maths.append(node)
            i = k + 1
        label = " ".join(" ".join(words).split())
        return _node("T", label, _args(maths), tok.start, tok.end)

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
            return self.error(self.raw(end_tok), end_tok.start, end_tok.end,
                              "environment name mismatch", [("arg0", node)])
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


# ----------------------------------------------------------------------------
# Entry point

def _failed(latex: str, errors: list[str]) -> OperatorTree:
    return OperatorTree(latex, (OptNode(0, "E", latex, (0, len(latex))),), (), "failed", tuple(errors))


def _freeze(latex: str, root: _N, errors: list[str]) -> OperatorTree:
    n_chars = len(latex)
    nodes: list[OptNode] = []
    edges: list[OptEdge] = []
    has_e = False
    all_e = True
    stack: list[tuple[_N, int, str]] = [(root, -1, "")]
    while stack:
        node, parent, role = stack.pop()
        nid = len(nodes)
        lo = min(max(node.start, 0), n_chars)
        hi = min(max(node.end, lo), n_chars)
        nodes.append(OptNode(nid, node.type, node.label, (lo, hi)))
        if node.type == "E":
            has_e = True
        else:
            all_e = False
        if parent >= 0:
            edges.append(OptEdge(parent, nid, role))
        for r, child in reversed(node.kids):
            stack.append((child, nid, r))
    if all_e:
        return _failed(latex, errors or ["nothing could be parsed"])
    if has_e:
        return OperatorTree(latex, tuple(nodes), tuple(edges), "partial", tuple(errors or ["unparsed input"]))
    return OperatorTree(latex, tuple(nodes), tuple(edges), "ok", ())


def parse_latex(latex: str) -> OperatorTree:
    """Parse one LaTeX formula body into an operator tree. Never raises."""
    if not isinstance(latex, str):
        latex = str(latex)
    if not latex.strip():
        return OperatorTree(latex, (OptNode(0, "E", "", (0, len(latex))),), (), "failed", ("empty formula",))
    try:
        parser = _Parser(latex, 0, len(latex))
        root = parser.parse_range(0, len(parser.toks), trim=True, hyphen=True)
        if root is None:
            return _failed(latex, ["nothing could be parsed"])
        return _freeze(latex, root, parser.errors)
    except RecursionError:
        return _failed(latex, ["nesting too deep"])
    except Exception as exc:  # noqa: BLE001 - the contract is to never raise
        return _failed(latex, [f"internal error: {type(exc).__name__}: {exc}"])
