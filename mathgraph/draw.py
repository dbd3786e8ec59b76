"""Drawing a math syntax graph with matplotlib as a layered tree.

The graph is a tree rooted at ``[ROOT]``, so a tidy layered layout reads far
better than a force-directed one: depth goes down, leaves are spread left to
right in source order, and every parent sits above the middle of its children.

A long problem has more leaves than a picture can show side by side: its drawing
(``wrapped_layout``) wraps the children of a node whose subtree is wider than
``MAX_COLUMNS`` leaf columns onto several rows, one under the other, the node
repeated (dashed) above each further row, so a picture stays at most about
``MAX_COLUMNS * COLUMN_INCHES`` inches wide (some 2,300 pixels at 150 dpi) with
its labels apart, and grows downwards instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING

from mathgraph.extras import require

if TYPE_CHECKING:
    import matplotlib.axes
    import matplotlib.figure

    from mathgraph.graph import MathSyntaxGraph

KIND_COLOURS = {"root": "#9e9e9e", "word": "#8ecae6", "math": "#ffb703", "formula": "#95d5b2"}
ERROR_COLOUR = "#ef476f"
# Leaf columns side by side in one row of a drawing, and the inches a column and a level of the tree take:
# a 14-character label at 7 pt fits a column, so 18 columns are about 15 inches, 2,300 pixels at 150 dpi.
MAX_COLUMNS = 18
COLUMN_INCHES = 0.85
LEVEL_INCHES = 1.1
# A wrapped drawing is tall: its levels are closer together (still well apart for a label and a relation name).
WRAPPED_LEVEL_INCHES = 0.75
# The vertical space between two rows of wrapped children, in levels.
ROW_GAP = 0.4
# Where on an edge its relation name sits, from parent (0) to child (1): a node's edges all start at one
# point, so the names of its children's edges alternate between two heights, and neighbours never touch.
LABEL_AT = (0.5, 0.74)


def tree_layout(graph: MathSyntaxGraph) -> dict[int, tuple[float, float]]:
    """Positions ``{node id: (x, y)}``: y = -depth, leaves at x = 0, 1, 2, ... in source order (one row,
    however wide: ``mathgraph serve``'s page pans and zooms; ``wrapped_layout`` is what pictures use)."""
    children = _children(graph)
    positions: dict[int, tuple[float, float]] = {}
    next_leaf = 0.0
    # An explicit stack instead of recursion: formula trees can be deep.
    stack: list[tuple[int, int, bool]] = [(0, 0, False)]
    while stack:
        node_id, depth, expanded = stack.pop()
        kids = children.get(node_id, [])
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


@dataclass(frozen=True)
class Box:
    """A node as drawn: its id, where it is, and whether it repeats a node whose children went on in this row."""

    node: int
    x: float
    y: float
    continued: bool = False


@dataclass
class Layout:
    """A drawing's boxes and edges (``(parent box, child box, relation)``, indices into ``boxes``), and its size
    in leaf columns and levels."""

    boxes: list[Box]
    edges: list[tuple[int, int, str]]
    width: float
    height: float


def wrapped_layout(graph: MathSyntaxGraph, max_columns: int = MAX_COLUMNS) -> Layout:
    """``tree_layout`` at most ``max_columns`` leaf columns wide: where a node's children together are wider,
    they are cut, in source order, into rows of at most ``max_columns`` columns (a child wider than that is a
    row of its own, wrapped in turn), each further row under the one before with a dashed copy of the node
    above it. A tree that fits is laid out exactly as ``tree_layout`` lays it out."""
    if max_columns < 1:
        raise ValueError(f"max_columns must be >= 1, got {max_columns}")
    children = _children(graph)
    relation = {(e.src, e.dst): e.relation for e in graph.edges}
    done: dict[int, Layout] = {}
    stack: list[tuple[int, bool]] = [(0, False)]  # post-order without recursion: formula trees can be deep
    while stack:
        node_id, expanded = stack.pop()
        kids = children.get(node_id, [])
        if not kids:
            done[node_id] = Layout([Box(node_id, 0.0, 0.0)], [], 1.0, 1.0)
        elif expanded:
            parts = [(done.pop(k), relation[node_id, k]) for k in kids]
            done[node_id] = _join(node_id, parts, max_columns)
        else:
            stack.append((node_id, True))
            stack.extend((k, False) for k in reversed(kids))
    return done[0]


def _join(node_id: int, parts: list[tuple[Layout, str]], max_columns: int) -> Layout:
    """The layout of a node over its children's layouts, rows of at most ``max_columns`` columns."""
    rows: list[list[tuple[Layout, str]]] = [[]]
    for part in parts:
        if rows[-1] and sum(p.width for p, _ in rows[-1]) + part[0].width > max_columns:
            rows.append([])
        rows[-1].append(part)
    boxes: list[Box] = []
    edges: list[tuple[int, int, str]] = []
    top = 0.0
    for number, row in enumerate(rows):
        head = len(boxes)
        boxes.append(Box(node_id, 0.0, top, continued=number > 0))  # x once the children are placed
        left, heads = 0.0, []
        for part, name in row:
            offset = len(boxes)
            boxes.extend(Box(b.node, b.x + left, b.y + top - 1, b.continued) for b in part.boxes)
            edges.extend((offset + a, offset + b, r) for a, b, r in part.edges)
            edges.append((head, offset, name))  # a layout's first box is its top node
            heads.append(boxes[offset].x)
            left += part.width
        boxes[head] = Box(node_id, (min(heads) + max(heads)) / 2, top, continued=number > 0)
        top -= 1 + max(part.height for part, _ in row) + ROW_GAP
    width = max(sum(part.width for part, _ in row) for row in rows)
    return Layout(boxes, edges, width, -top - ROW_GAP)


def _children(graph: MathSyntaxGraph) -> dict[int, list[int]]:
    """Each node's children in source order (by span start; nodes without a span first)."""
    children: dict[int, list[int]] = {}
    for edge in graph.edges:
        children.setdefault(edge.src, []).append(edge.dst)

    def source_order(node_id: int) -> tuple[int, int]:
        span = graph.nodes[node_id].span
        return (span[0], node_id) if span else (-1, node_id)

    return {node: sorted(kids, key=source_order) for node, kids in children.items()}


def picture_size(graph: MathSyntaxGraph) -> tuple[float, float]:
    """The figure size ``draw_graph`` gives ``graph``, in inches: ``COLUMN_INCHES`` per leaf column (at most
    ``MAX_COLUMNS`` of them: ``wrapped_layout``) and ``LEVEL_INCHES`` per level, at least 6 x 3 and at most
    16 x 60 (``WRAPPED_LEVEL_INCHES`` per level where children wrap)."""
    return _size(wrapped_layout(graph))


def _size(layout: Layout) -> tuple[float, float]:
    level = WRAPPED_LEVEL_INCHES if any(box.continued for box in layout.boxes) else LEVEL_INCHES
    return min(max(6.0, COLUMN_INCHES * layout.width), 16.0), min(max(3.0, level * layout.height), 60.0)


def node_colour(node) -> str:
    """The fill ``draw_graph`` gives a node: its kind's colour, or red for an operator-tree error node."""
    return ERROR_COLOUR if node.opt_type == "E" else KIND_COLOURS[node.kind]


def graph_layout(graph: MathSyntaxGraph) -> dict:
    """The picture ``draw_graph`` draws, as JSON for an interactive viewer (``mathgraph serve``'s page):
    ``{"nodes": [{id, label, kind, colour, x, y, span?}], "edges": [{src, dst, relation}]}`` with
    ``tree_layout``'s positions (x = leaf column, y = -depth: one row, the viewer pans and zooms) and
    ``node_colour``'s fills."""
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


def require_matplotlib(what: str):
    """``matplotlib.pyplot``, or a ``UserError`` saying that ``what`` needs the ``draw`` extra (the base install
    parses, predicts and serves without matplotlib; only pictures need it)."""
    return require("matplotlib.pyplot", "draw", what)


def check_picture_path(path: str | PathLike) -> None:
    """A ``UserError`` unless matplotlib can write a picture named ``path``: its suffix one of the formats the
    installed matplotlib saves (png, svg, pdf, ...), or no suffix (a PNG). Checked before any work, so that a
    ``--draw graph.txt`` is refused in one line rather than after the parse."""
    from matplotlib.backend_bases import FigureCanvasBase

    from mathgraph.errors import UserError

    suffix = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        raise UserError(f"cannot draw a .{suffix} picture ({path}); name one of: {', '.join(sorted(formats))}")


def draw_graph(
    graph: MathSyntaxGraph,
    path: str | PathLike | None = None,
    ax: matplotlib.axes.Axes | None = None,
    show_relations: bool = True,
    title: str | None = None,
    dpi: int = 150,
    max_columns: int = MAX_COLUMNS,
) -> matplotlib.figure.Figure:
    """Draw ``graph``: nodes coloured by kind (error nodes red), relation names on edges, laid out by
    ``wrapped_layout`` (a long problem's children wrap onto rows of at most ``max_columns`` leaf columns,
    under a dashed copy of their parent), so the picture is at most about 16 inches wide.

    Writes the picture to ``path`` when given (format from its suffix) and
    returns the figure; draws into ``ax`` when given (for subplots).
    """
    plt = require_matplotlib("drawing a graph")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    layout = wrapped_layout(graph, max_columns)
    if ax is None:
        fig, ax = plt.subplots(figsize=_size(layout))
    else:
        fig = ax.figure

    siblings: dict[int, int] = {}  # edges drawn so far from each box
    for src, dst, relation in layout.edges:
        parent, child = layout.boxes[src], layout.boxes[dst]
        at = LABEL_AT[siblings.get(src, 0) % 2]
        siblings[src] = siblings.get(src, 0) + 1
        ax.annotate(
            "",
            xy=(child.x, child.y),
            xytext=(parent.x, parent.y),
            arrowprops={"arrowstyle": "-|>", "color": "#555555", "lw": 0.8, "shrinkA": 9, "shrinkB": 9},
        )
        if show_relations:
            ax.text(
                parent.x + at * (child.x - parent.x),
                parent.y + at * (child.y - parent.y),
                relation.split(":", 1)[-1],
                fontsize=6,
                color="#333333",
                ha="center",
                va="center",
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8},
            )

    for box in layout.boxes:
        node = graph.nodes[box.node]
        ax.text(
            box.x,
            box.y,
            _short(node.label),
            fontsize=7,
            ha="center",
            va="center",
            zorder=3,
            alpha=0.75 if box.continued else 1.0,
            bbox={
                "boxstyle": "round,pad=0.3",
                "fc": node_colour(node),
                "ec": "#333333",
                "lw": 0.8 if box.continued else 0.5,
                "ls": "--" if box.continued else "-",
            },
        )

    ax.set_xlim(-0.8, layout.width - 0.2)
    ax.set_ylim(-layout.height + 0.4, 0.6)
    ax.axis("off")
    handles = [Patch(color=c, label=k) for k, c in KIND_COLOURS.items()]
    if any(box.continued for box in layout.boxes):
        handles.append(Line2D([], [], color="#333333", ls="--", lw=0.8, label="continued: more children"))
    # beside the tree, not over its top-right nodes
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    ax.set_title(title if title is not None else _short(graph.text, 120), fontsize=8)
    if path is not None:
        fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return fig


def _short(text: str, limit: int = 14) -> str:
    """One line of at most ``limit`` characters, with ``$`` escaped so matplotlib never reads it as mathtext."""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("$", r"\$")
