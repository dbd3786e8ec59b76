"""mathgraph: math problem understanding that reads the words and the formulas together.

The public API (README, "Python API"): ``load`` any model mathgraph writes, a
``Predictor`` for a task, the encoder, the search index, and the parse, compare
and draw functions. Names load lazily, so ``import mathgraph`` stays fast and
pulls in neither spaCy nor torch until a name is used.
"""

from importlib import import_module

__version__ = "0.5.0"

_EXPORTS = {
    # load models and predict (mathgraph.api)
    "load": "mathgraph.api",
    "Predictor": "mathgraph.api",
    "MathEncoder": "mathgraph.models.encoder",
    "SearchIndex": "mathgraph.tasks.search.index",
    # parse, compare and draw problems
    "parse_problem": "mathgraph.parsers.problem",
    "parse_problems": "mathgraph.parsers.problem",
    "ProblemParser": "mathgraph.parsers.problem",
    "parse_latex": "mathgraph.parsers.latex",
    "segment": "mathgraph.parsers.segment",
    "align_problems": "mathgraph.parsers.compare",
    "align_solution": "mathgraph.parsers.solution",
    "parse_solution": "mathgraph.parsers.solution",
    "check_solution": "mathgraph.parsers.solution",
    "draw_graph": "mathgraph.draw",
    "sample_problems": "mathgraph.samples",
    # the data model and the errors a caller may catch
    "MathSyntaxGraph": "mathgraph.graph",
    "Quantity": "mathgraph.graph",
    "CheckpointError": "mathgraph.models.comus",
    "InputError": "mathgraph.models.task_io",
    "UserError": "mathgraph.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'mathgraph' has no attribute {name!r}")


def __dir__():
    return __all__
