"""The parser assembled from its mixins, and the entry point ``parse_latex``."""

from __future__ import annotations

from .application import ApplicationMixin
from .commands import CommandMixin
from .environments import EnvironmentMixin
from .groups import GroupMixin
from .postfix import PostfixMixin
from .precedence import PrecedenceMixin
from .state import _N, _ParserState
from .tree import OperatorTree, OptEdge, OptNode


class _Parser(
    PrecedenceMixin, ApplicationMixin, PostfixMixin, GroupMixin, CommandMixin, EnvironmentMixin, _ParserState
):
    """Tokeniser plus Pratt parser over one formula (``s[lo:hi]``); see the mixins for the parts."""


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
    """Parse one LaTeX formula body into an operator tree. Never raises on a string: what does not parse
    becomes ``E`` nodes and a status, nesting deeper than Python's recursion allows a failed tree (an
    exception other than that is a bug of the parser, and raises)."""
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
