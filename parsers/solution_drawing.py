"""Drawing a solution graph (``SolutionGraph.to_networkx()``) with matplotlib, left to right.

The first column holds where numbers come from (the problem's quantities, the known constants, the
unexplained operands, in red); each line of the solution that states calculations gets a column of
its results; the final answer stands last. Edges run from an operand's source to the result it feeds.
"""

from __future__ import annotations

from os import PathLike
from typing import TYPE_CHECKING

from mathgraph.draw import require_matplotlib

if TYPE_CHECKING:
    import matplotlib.axes
    import matplotlib.figure
    import networkx

__all__ = ["draw_solution_graph", "KIND_COLOURS"]

KIND_COLOURS = {
    "quantity": "#8ecae6",
    "constant": "#cdb4db",
    "unexplained": "#ef476f",
    "result": "#95d5b2",
    "answer": "#ffb703",
    "step": "#95d5b2",
}
_SOURCE_KINDS = ("quantity", "constant", "unexplained")


def solution_layout(graph: networkx.DiGraph) -> dict[str, tuple[float, float]]:
    """Positions ``{node: (x, y)}``: sources at x = 0, the results of the k-th line with calculations at
    x = k + 1, the answer after them; nodes of a column spread downwards in order."""
    lines = sorted({data["step"] for _, data in graph.nodes(data=True) if data.get("kind") == "result"})
    column_of = {line: k + 1 for k, line in enumerate(lines)}
    columns: dict[int, list[str]] = {}
    for node, data in graph.nodes(data=True):
        kind = data.get("kind")
        if kind in _SOURCE_KINDS:
            x = 0
        elif kind == "answer":
            x = len(lines) + 1
        else:
            x = column_of.get(data.get("step"), 0)
        columns.setdefault(x, []).append(node)
    return {node: (float(x), -float(y)) for x, nodes in columns.items() for y, node in enumerate(nodes)}


def draw_solution_graph(
    graph: networkx.DiGraph,
    path: str | PathLike | None = None,
    ax: matplotlib.axes.Axes | None = None,
) -> matplotlib.figure.Figure:
    """Draw a solution graph (module docstring) on ``ax`` (a new figure if ``None``); save it to ``path``
    if given. Returns the figure."""
    require_matplotlib("drawing a solution graph")
    import matplotlib

    if ax is None:
        matplotlib.use("Agg", force=False) if path is not None else None
    import matplotlib.pyplot as plt
    import networkx as nx

    positions = solution_layout(graph)
    width = 2.6 * (max((x for x, _ in positions.values()), default=0) + 1)
    height = 0.9 * (max((-y for _, y in positions.values()), default=0) + 1)
    if ax is None:
        figure, ax = plt.subplots(figsize=(max(width, 4.0), max(height, 2.5)))
    else:
        figure = ax.figure
    colours = [KIND_COLOURS.get(data.get("kind"), "#dddddd") for _, data in graph.nodes(data=True)]
    labels = {node: _short(data.get("label", str(node))) for node, data in graph.nodes(data=True)}
    nx.draw_networkx_edges(graph, positions, ax=ax, arrows=True, edge_color="#888888", node_size=1800)
    nx.draw_networkx_nodes(graph, positions, ax=ax, node_color=colours, node_size=1800, node_shape="s")
    nx.draw_networkx_labels(graph, positions, labels=labels, ax=ax, font_size=7)
    ax.set_axis_off()
    ax.margins(0.15)
    if path is not None:
        figure.savefig(path, dpi=150, bbox_inches="tight")
    return figure


def _short(label: str, limit: int = 24) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"
