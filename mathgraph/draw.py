"""Drawing a math syntax graph with matplotlib as a layered tree.

The graph is a tree rooted at ``[ROOT]``, so a tidy layered layout reads far
better than a force-directed one: depth goes down, leaves are spread left to
right in source order, and every parent sits above the middle of its children.
"""

from __future__ import annotations

from os import PathLike
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import matplotlib.axes
    import matplotlib.figure

    from mathgraph.graph import MathSyntaxGraph

KIND_COLOURS = {"root": "#9e9e9e", "word": "#8ecae6", "math": "#ffb703", "formula": "#95d5b2"}
ERROR_COLOUR = "#ef476f"


def tree_layout(graph: MathSyntaxGraph) -> dict[int, tuple[float, float]]:
    """Positions ``{node id: (x, y)}``: y = -depth, leaves at x = 0, 1, 2, ... in source order."""
    children: dict[int, list[int]] = {}
    for edge in graph.edges:
        children.setdefault(edge.src, []).append(edge.dst)

    def source_order(node_id: int) -> tuple[int, int]:
        span = graph.nodes[node_id].span
        return (span[0], node_id) if span else (-1, node_id)

    positions: dict[int, tuple[float, float]] = {}
    next_leaf = 0.0
    # An explicit stack instead of recursion: formula trees can be deep.
    stack: list[tuple[int, int, bool]] = [(0, 0, False)]
    while stack:
        node_id, depth, expanded = stack.pop()
        kids = sorted(children.get(node_id, []), key=source_order)
        if not kids:
            positions[node_id] = (next_leaf, -depth)
            next_leaf += 1
        elif expanded:
            xs = [positions[k][0] for k in kids]
            positions[node_id] = ((min(xs) + max(xs)) / 2, -depth)
        else:
            stack.append((node_id, depth, True))
            stack.extend((k, depth + 1, False) for k in reversed(kids))
    return positions


def picture_size(graph: MathSyntaxGraph) -> tuple[float, float]:
    """The figure size ``draw_graph`` gives ``graph``, in inches: about 0.85 per leaf column and 1.1 per
    level of ``tree_layout``, at least 6 x 3 and at most 60 x 30."""
    positions = tree_layout(graph)
    width = max(xy[0] for xy in positions.values()) + 1
    depth = -min(xy[1] for xy in positions.values()) + 1
    return min(max(6.0, 0.85 * width), 60.0), min(max(3.0, 1.1 * depth), 30.0)


def node_colour(node) -> str:
    """The fill ``draw_graph`` gives a node: its kind's colour, or red for an operator-tree error node."""
    return ERROR_COLOUR if node.opt_type == "E" else KIND_COLOURS[node.kind]


def graph_layout(graph: MathSyntaxGraph) -> dict:
    """The picture ``draw_graph`` draws, as JSON for an interactive viewer (``mathgraph serve``'s page):
    ``{"nodes": [{id, label, kind, colour, x, y, span?}], "edges": [{src, dst, relation}]}`` with
    ``tree_layout``'s positions (x = leaf column, y = -depth) and ``node_colour``'s fills."""
    positions = tree_layout(graph)
    nodes = []
    for node in graph.nodes:
        x, y = positions[node.id]
        nodes.append(
            {
                "id": node.id,
                "label": node.label,
                "kind": node.kind,
                "colour": node_colour(node),
                "x": x,
                "y": y,
                **({"span": list(node.span)} if node.span is not None else {}),
            }
        )
    edges = [{"src": e.src, "dst": e.dst, "relation": e.relation} for e in graph.edges]
    return {"nodes": nodes, "edges": edges}


def draw_graph(
    graph: MathSyntaxGraph,
    path: str | PathLike | None = None,
    ax: matplotlib.axes.Axes | None = None,
    show_relations: bool = True,
    title: str | None = None,
    dpi: int = 150,
) -> matplotlib.figure.Figure:
    """Draw ``graph``: nodes coloured by kind (error nodes red), relation names on edges.

    Writes the picture to ``path`` when given (format from its suffix) and
    returns the figure; draws into ``ax`` when given (for subplots).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    positions = tree_layout(graph)
    width = max(xy[0] for xy in positions.values()) + 1
    depth = -min(xy[1] for xy in positions.values()) + 1
    if ax is None:
        fig, ax = plt.subplots(figsize=picture_size(graph))
    else:
        fig = ax.figure

    for edge in graph.edges:
        (x0, y0), (x1, y1) = positions[edge.src], positions[edge.dst]
        ax.annotate(
            "",
            xy=(x1, y1),
            xytext=(x0, y0),
            arrowprops={"arrowstyle": "-|>", "color": "#555555", "lw": 0.8, "shrinkA": 9, "shrinkB": 9},
        )
        if show_relations:
            name = edge.relation.split(":", 1)[-1]
            ax.text(
                (x0 + x1) / 2,
                (y0 + y1) / 2,
                name,
                fontsize=6,
                color="#333333",
                ha="center",
                va="center",
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8},
            )

    for node in graph.nodes:
        x, y = positions[node.id]
        ax.text(
            x,
            y,
            _short(node.label),
            fontsize=7,
            ha="center",
            va="center",
            zorder=3,
            bbox={"boxstyle": "round,pad=0.3", "fc": node_colour(node), "ec": "#333333", "lw": 0.5},
        )

    ax.set_xlim(-0.8, width - 0.2)
    ax.set_ylim(-depth + 0.4, 0.6)
    ax.axis("off")
    ax.legend(
        handles=[Patch(color=c, label=k) for k, c in KIND_COLOURS.items()], loc="upper right", fontsize=7, frameon=False
    )
    ax.set_title(title if title is not None else _short(graph.text, 120), fontsize=8)
    if path is not None:
        fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return fig


def _short(text: str, limit: int = 14) -> str:
    """One line of at most ``limit`` characters, with ``$`` escaped so matplotlib never reads it as mathtext."""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("$", r"\$")
