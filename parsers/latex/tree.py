"""The operator tree: ``NODE_TYPES``, ``MAX_DEPTH``, ``OptNode``, ``OptEdge`` and ``OperatorTree``.

The format is specified in ``docs/latex_operator_trees.md``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property

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
    def from_dict(cls, d: dict) -> OperatorTree:
        return cls(
            latex=d["latex"],
            nodes=tuple(
                OptNode(int(n["id"]), n["type"], n["label"], (int(n["span"][0]), int(n["span"][1]))) for n in d["nodes"]
            ),
            edges=tuple(OptEdge(int(e["src"]), int(e["dst"]), e["role"]) for e in d["edges"]),
            status=d["status"],
            errors=tuple(d.get("errors", ())),
        )


def _quote(label: str) -> str:
    if label == "" or '"' in label or any(c.isspace() for c in label):
        return json.dumps(label, ensure_ascii=False)
    return label
