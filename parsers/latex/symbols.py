"""Vocabulary of LaTeX commands (what each command is to the parser) and the binding powers."""

from __future__ import annotations

import re

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
_ADD_OPS = {
    "+": "U",
    "-": "O",
    r"\pm": "O",
    r"\mp": "O",
    r"\cup": "U",
    r"\cap": "U",
    r"\setminus": "O",
    r"\oplus": "U",
    r"\ominus": "O",
    r"\sqcup": "U",
    r"\sqcap": "U",
    r"\uplus": "U",
}
_MUL_OPS = {
    r"\cdot": "U",
    r"\times": "U",
    "*": "O",
    "/": "O",
    r"\div": "O",
    r"\circ": "O",
    r"\bmod": "O",
    r"\otimes": "U",
}
_CUSTOM_OPS = set(
    r"\star \ast \bullet \diamond \Diamond \diamondsuit \heartsuit \clubsuit \spadesuit \nabla \bowtie "
    r"\oslash \odot \dagger \ddagger \S \# \& \Box \square \triangledown \triangleright \triangleleft "
    r"\boxplus \boxtimes \boxdot \boxminus \circledast \circledcirc \wr \amalg \maltese \lozenge "
    r"\blacktriangle \blacksquare \natural \sharp \flat \P \copyright \dashv \vdash \models".split()
)
_RELATIONS = {
    "=": "U",
    "<": "O",
    ">": "O",
    r"\le": "O",
    r"\ge": "O",
    r"\neq": "U",
    r"\approx": "U",
    r"\equiv": "U",
    r"\sim": "U",
    r"\simeq": "U",
    r"\cong": "U",
    r"\parallel": "U",
    r"\perp": "U",
    r"\in": "O",
    r"\notin": "O",
    r"\ni": "O",
    r"\subset": "O",
    r"\subseteq": "O",
    r"\supset": "O",
    r"\supseteq": "O",
    r"\subsetneq": "O",
    r"\supsetneq": "O",
    r"\to": "O",
    r"\mapsto": "O",
    r"\gets": "O",
    r"\propto": "O",
    r"\ll": "O",
    r"\gg": "O",
    r"\prec": "O",
    r"\succ": "O",
    r"\preceq": "O",
    r"\succeq": "O",
    r"\nmid": "O",
    ":=": "O",
    r"\doteq": "U",
    r"\asymp": "U",
    r"\lessgtr": "O",
    r"\gtrless": "O",
    r"\leftarrow": "O",
    r"\longleftarrow": "O",
    r"\nless": "O",
    r"\ngtr": "O",
    r"\nleq": "O",
    r"\ngeq": "O",
    r"\nsim": "U",
    r"\ncong": "U",
    r"\sqsubset": "O",
    r"\sqsubseteq": "O",
    r"\approxeq": "U",
    r"\nparallel": "U",
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
_STRONG_HEADS = set("fghpqFGHPQ") | set(r"\zeta \phi \varphi \sigma \tau \Gamma \psi \chi \Phi \Psi".split())
_ALIGN_ENVS = {
    "align",
    "aligned",
    "eqnarray",
    "split",
    "gather",
    "gathered",
    "flalign",
    "alignat",
    "alignedat",
    "multline",
    "equation",
    "IEEEeqnarray",
    "align*",
    "eqnarray*",
    "gather*",
    "flalign*",
    "alignat*",
    "multline*",
    "equation*",
}
_SPEC_ENVS = {"array", "tabular", "subarray", "alignat", "alignat*", "alignedat", "darray", "tabularx"}
_CONNECTIVES = set(
    "if and or for otherwise where when whenever then is are but so with since as else unless iff "
    "such that which also not all each every because let given thus hence while".split()
)
_CHOICE_RE = re.compile(r"^\(?[A-Ea-e]\)$|^\([A-E]\)|^\(?[A-E]\)\s")

_SYNONYMS = {
    r"\leq": r"\le",
    r"\leqslant": r"\le",
    r"\leqq": r"\le",
    r"\geq": r"\ge",
    r"\geqslant": r"\ge",
    r"\geqq": r"\ge",
    r"\ne": r"\neq",
    r"\rightarrow": r"\to",
    r"\longrightarrow": r"\to",
    r"\Rightarrow": r"\implies",
    r"\Longrightarrow": r"\implies",
    r"\Leftrightarrow": r"\iff",
    r"\Longleftrightarrow": r"\iff",
    r"\leftrightarrow": r"\iff",
    r"\Leftarrow": r"\impliedby",
    r"\Longleftarrow": r"\impliedby",
    r"\wedge": r"\land",
    r"\vee": r"\lor",
    r"\lnot": r"\neg",
    r"\dfrac": r"\frac",
    r"\tfrac": r"\frac",
    r"\cfrac": r"\frac",
    r"\dbinom": r"\binom",
    r"\tbinom": r"\binom",
    r"\dots": r"\ldots",
    r"\dotsc": r"\ldots",
    r"\dotso": r"\ldots",
    r"\dotsb": r"\cdots",
    r"\dotsm": r"\cdots",
    r"\dotsi": r"\cdots",
    r"\varnothing": r"\emptyset",
    r"\lbrace": r"\{",
    r"\rbrace": r"\}",
    r"\mod": r"\pmod",
    r"\bold": r"\mathbf",
    r"\boldsymbol": r"\mathbf",
    r"\bm": r"\mathbf",
    r"\pmb": r"\mathbf",
    r"\measuredangle": r"\angle",
    r"\bigtriangleup": r"\triangle",
    r"\vartriangle": r"\triangle",
    r"\widehat": r"\hat",
    r"\widetilde": r"\tilde",
    r"\overrightarrow": r"\vec",
    r"\wideparen": r"\overarc",
    r"\centerdot": r"\cdot",
    r"\cdotp": r"\cdot",
    r"\textdollar": r"\$",
    r"\dollar": r"\$",
    r"\vert": "|",
    r"\Vert": r"\|",
    r"\lt": "<",
    r"\gt": ">",
    r"\lbrack": "[",
    r"\rbrack": "]",
    r"\textdegree": r"\degree",
    r"\textperthousand": r"\%",
    r"\percent": r"\%",
    r"\Bbb": r"\mathbb",
    r"\mathds": r"\mathbb",
    r"\owns": r"\ni",
    r"\bot": r"\perp",
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
    "label": 1,
    "tag": 1,
    "cline": 1,
    "vspace": 1,
    "color": 1,
    "pagecolor": 1,
    "phantom": 1,
    "hphantom": 1,
    "vphantom": 1,
    "renewcommand": 2,
    "newcommand": 2,
    "setlength": 2,
    "addtolength": 2,
    "rule": 2,
    "raisebox": 1,
    "setcounter": 2,
    "def": 1,
    "DeclareMathOperator": 2,
    "multicolumn": 2,
    "multirow": 2,
    "cellcolor": 1,
    "rowcolor": 1,
    "hdashline": 0,
    "mkern": 1,
    "mskip": 1,
    "kern": 1,
}
_SEP_CMDS = {"quad", "qquad", "enspace", "hfill", "hfil", "newline", "enskip"}
_DELIMS = {
    "(": "(",
    ")": ")",
    "[": "[",
    "]": "]",
    "|": "|",
    ".": ".",
    "/": ".",
    "<": r"\langle",
    ">": r"\rangle",
    r"\{": r"\{",
    r"\}": r"\}",
    r"\lbrace": r"\{",
    r"\rbrace": r"\}",
    r"\|": r"\|",
    r"\vert": "|",
    r"\Vert": r"\|",
    r"\lvert": "|",
    r"\rvert": "|",
    r"\lVert": r"\|",
    r"\rVert": r"\|",
    r"\langle": r"\langle",
    r"\rangle": r"\rangle",
    r"\lfloor": r"\lfloor",
    r"\rfloor": r"\rfloor",
    r"\lceil": r"\lceil",
    r"\rceil": r"\rceil",
    r"\lbrack": "[",
    r"\rbrack": "]",
    r"\backslash": ".",
    r"\uparrow": ".",
    r"\downarrow": ".",
    r"\updownarrow": ".",
    r"\Uparrow": ".",
    r"\Downarrow": ".",
}
_CLOSERS = {r"\}", r"\rfloor", r"\rceil", r"\rangle", r"\rvert", r"\rVert"}
_OPENER_CMDS = {
    r"\{": ("set", r"\}"),
    r"\lfloor": ("floor", r"\rfloor"),
    r"\lceil": ("ceil", r"\rceil"),
    r"\langle": ("angle", r"\rangle"),
    r"\lvert": ("lvert", r"\rvert"),
    r"\lVert": ("lVert", r"\rVert"),
}
_TRAILING_PUNCT = {",", ".", ";", "?", ":"}

# binding powers
_STRAY, _OVER, _SEQ, _LIST, _MID, _PMOD, _LOGICBP, _REL, _RATIO, _ADD, _MUL, _IMPL, _UNARY = range(1, 14)


def _is_operator(t: str) -> bool:
    """A binary operator or relation command (not a custom symbol such as ``\\star``)."""
    return (
        t in _ADD_OPS
        or t in _MUL_OPS
        or t in _RELATIONS
        or t in _LOGIC
        or t.startswith(r"\not")
        or t in (r"\mid", r"\colon", r"\pmod")
    )
