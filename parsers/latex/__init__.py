r"""LaTeX -> operator tree (OPT), as in Tangent-S (Zanibbi & Blostein).

``parse_latex(latex)`` turns one formula body (no ``$`` delimiters) into an
:class:`OperatorTree`: operators are internal nodes, operands are their
children, every node keeps its character span in the formula. It is a
hand-written tokeniser plus a Pratt (precedence climbing) parser, pure Python,
no SymPy, no torch. It never raises on any ``str``.

Node types (``NODE_TYPES``): ``V`` variable, ``N`` number, ``O`` ordered
operator, ``U`` unordered (commutative) operator, ``F`` function application,
``C`` constant or symbol, ``T`` text, ``E`` error.

The format of the trees (text form, design rules, every construct and its
labels and roles) is specified in ``docs/latex_operator_trees.md``.

Modules:

* ``tree`` -- ``NODE_TYPES``, ``MAX_DEPTH``, ``OptNode``, ``OptEdge``, ``OperatorTree``;
* ``symbols`` -- the vocabulary of LaTeX commands and the binding powers;
* ``tokenizer`` -- the tokeniser (``_Tok``, ``_tokenize``, ``_command``);
* ``state`` -- the mutable parse node ``_N`` and ``_ParserState`` (tokens, position,
  scope, errors and the helpers shared by the mixins);
* ``precedence`` -- the precedence-climbing core: ranges, infix operators,
  relation chains, prefixes, primaries, numbers;
* ``application`` -- letters as function heads: ``f(x)`` against ``x(x+1)``;
* ``postfix`` -- scripts, primes, ``!``, degrees, percent; TeX macro arguments;
* ``groups`` -- braces, brackets, fences, sets, ``\left...\right``;
* ``commands`` -- command tokens: fractions, roots, accents, named functions,
  big operators, geometry, fonts, wrappers, text;
* ``environments`` -- ``\begin{...}`` environments split into rows and cells;
* ``parser`` -- ``_Parser`` assembled from the mixins, and ``parse_latex``.
"""

from __future__ import annotations

from .parser import parse_latex
from .tree import MAX_DEPTH, NODE_TYPES, OperatorTree, OptEdge, OptNode

__all__ = ["NODE_TYPES", "OptNode", "OptEdge", "OperatorTree", "parse_latex", "MAX_DEPTH"]
