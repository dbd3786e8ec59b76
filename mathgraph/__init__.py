"""mathgraph: math problem understanding that reads the words and the formulas together.

Everyday names are importable from here; they load lazily so that
``import mathgraph`` stays fast and does not pull in spaCy or torch.
"""

from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "parse_problem": "parsers.problem",
    "parse_problems": "parsers.problem",
    "ProblemParser": "parsers.problem",
    "MathSyntaxGraph": "mathgraph.graph",
    "GraphVocabulary": "mathgraph.graph",
    "GraphFormatError": "mathgraph.graph",
    "Vocabulary": "mathgraph.vocab",
    "draw_graph": "mathgraph.draw",
    "MathEncoder": "models.encoder",
    "ProblemCollator": "models.batching",
    "sample_problems": "mathgraph.samples",
    "parse_latex": "parsers.latex",
    "segment": "parsers.segment",
    "Quantity": "mathgraph.graph",
    "align_problems": "parsers.compare",
    "align_solution": "parsers.compare",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'mathgraph' has no attribute {name!r}")


def __dir__():
    return __all__
