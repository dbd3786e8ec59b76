"""The math syntax graph: a problem's dependency tree joined to its formulas' operator trees.

Schema (version ``SCHEMA_VERSION``):

* nodes have an ``id`` (0..n-1), a ``kind`` and a ``label`` (the string the node
  vocabulary sees) and, except the problem root, a ``span`` of character offsets
  into the source text:

  - ``root``: one per problem, label ``[ROOT]``, joins the sentences;
  - ``word``: a token of the text, label = lower-cased token, with ``lemma``,
    ``upos`` and ``sentence`` (index);
  - ``math``: a formula placeholder in the text, label ``[MATH]``, with
    ``formula`` (index into ``formulas``) and ``sentence``;
  - ``formula``: a node of a formula's operator tree, label = operator or
    symbol (``+``, ``\\frac``, ``x``, ``2``), with ``opt_type`` (Tangent-S type
    V, N, O, U, F, C, T or E) and ``formula``.

* ``quantities``: every number the problem states (schema 2): digits, fractions,
  percentages, money and number words in the text, and the numeric literals of
  the formulas' operator trees, each with its exact value, written form, unit or
  object, sentence and whether that sentence is the question (``Quantity``;
  ``parsers.quantities`` finds them).

* edges ``src -> dst`` carry a namespaced ``relation``: ``dep:<label>`` (head ->
  dependent), ``opt:<role>`` (operator -> operand), ``math`` ([MATH] -> the
  root of its formula's operator tree) and ``root`` ([ROOT] -> each sentence root).

The whole graph is a tree rooted at node 0. Graph neural networks see every
edge in both directions: ``reverse_relation(r)`` names the way back.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathgraph.errors import UserError
from mathgraph.jsonl import JsonlError, TextRecord, atomic_writer, read_text_records, write_jsonl
from mathgraph.vocab import Vocabulary

if TYPE_CHECKING:
    import matplotlib.axes
    import networkx
    import torch_geometric.data

SCHEMA_VERSION = 2
NODE_KINDS = ("root", "word", "math", "formula")
ROOT_LABEL = "[ROOT]"
MATH_LABEL = "[MATH]"
FORMULA_STATUSES = ("ok", "partial", "failed")
#: How a quantity is written: "12", "2.5", "3/4", "25%", "three", or a literal inside a formula.
QUANTITY_FORMS = ("integer", "decimal", "fraction", "percent", "word", "formula")
_REVERSE_PREFIX = "rev:"


class GraphFormatError(UserError):
    """A serialised graph that does not follow the schema."""


def reverse_relation(relation: str) -> str:
    """Name of the relation that runs ``dst -> src`` for ``relation``."""
    return _REVERSE_PREFIX + relation


@dataclass(frozen=True)
class Node:
    """One node; optional attributes are ``None`` where they do not apply to its kind."""

    id: int
    kind: str
    label: str
    span: tuple[int, int] | None = None
    lemma: str | None = None
    upos: str | None = None
    sentence: int | None = None
    opt_type: str | None = None
    formula: int | None = None

    def to_dict(self) -> dict:
        data = {k: v for k, v in asdict(self).items() if v is not None}
        if self.span is not None:
            data["span"] = list(self.span)
        return data


@dataclass(frozen=True)
class Edge:
    """A directed, labelled edge ``src -> dst``."""

    src: int
    dst: int
    relation: str


@dataclass(frozen=True)
class FormulaRecord:
    """A formula of the problem: its LaTeX body, span in the source and parse status."""

    latex: str
    span: tuple[int, int]
    status: str
    delimiter: str = "$"
    errors: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "latex": self.latex,
            "span": list(self.span),
            "status": self.status,
            "delimiter": self.delimiter,
            "errors": list(self.errors),
        }


@dataclass(frozen=True)
class Quantity:
    """A number the problem states.

    ``value`` is exact (``25%`` is ``Fraction(1, 4)``, ``$2.50`` is ``Fraction(5, 2)``);
    ``form`` is one of ``QUANTITY_FORMS``; ``unit`` is a measure or sign it is counted
    in (``inch``, ``$``, ``%``) and ``object`` what it counts (``heels``), both read off
    the dependency tree (``None`` where there is none, always for formula literals);
    ``sentence`` is the index of its sentence and ``in_question`` says whether that
    sentence asks the question; ``node`` is the graph node that carries it.
    """

    text: str
    span: tuple[int, int]
    value: Fraction
    form: str
    node: int
    sentence: int | None = None
    in_question: bool = False
    unit: str | None = None
    object: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready; the exact value as a string (``"5/2"``, ``"12"``)."""
        return {
            "text": self.text,
            "span": list(self.span),
            "value": str(self.value),
            "form": self.form,
            "node": self.node,
            "sentence": self.sentence,
            "in_question": self.in_question,
            "unit": self.unit,
            "object": self.object,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Quantity:
        """A quantity written by ``to_dict``."""
        return cls(
            text=str(data["text"]),
            span=(int(data["span"][0]), int(data["span"][1])),
            value=Fraction(str(data["value"])),
            form=str(data["form"]),
            node=int(data["node"]),
            sentence=None if data.get("sentence") is None else int(data["sentence"]),
            in_question=bool(data.get("in_question", False)),
            unit=data.get("unit"),
            object=data.get("object"),
        )


@dataclass(frozen=True)
class MathSyntaxGraph:
    """An immutable math syntax graph of one problem (see the module docstring for the schema)."""

    text: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    formulas: tuple[FormulaRecord, ...] = ()
    parser: str = "spacy"
    parser_model: str = ""
    quantity_records: tuple[Quantity, ...] = ()

    def __post_init__(self) -> None:
        _check_structure(self.nodes, self.edges, self.formulas)
        _check_quantities(self.quantity_records, len(self.nodes))

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    def quantities(self) -> list[Quantity]:
        """The problem's quantities in text order (formula literals at their place in the text)."""
        return list(self.quantity_records)

    def triplets(self) -> list[tuple[int, str, int]]:
        """``(head id, relation, tail id)`` for every edge, in edge order (DTC and memory slots)."""
        return [(e.src, e.relation, e.dst) for e in self.edges]

    def labelled_triplets(self) -> list[tuple[str, str, str]]:
        """Triplets with node labels instead of ids, for reading."""
        return [(self.nodes[h].label, r, self.nodes[t].label) for h, r, t in self.triplets()]

    def children(self, node_id: int) -> list[Edge]:
        """Outgoing edges of ``node_id`` in edge order."""
        return [e for e in self.edges if e.src == node_id]

    # ----------------------------------------------------------------- exports
    def to_networkx(self) -> networkx.DiGraph:
        """A ``networkx.DiGraph`` with node attributes from the schema and ``relation`` on edges."""
        import networkx as nx

        graph = nx.DiGraph(text=self.text, parser=self.parser)
        for node in self.nodes:
            graph.add_node(node.id, **{k: v for k, v in node.to_dict().items() if k != "id"})
        for edge in self.edges:
            graph.add_edge(edge.src, edge.dst, relation=edge.relation)
        return graph

    def to_pyg(self, vocab: GraphVocabulary) -> torch_geometric.data.Data:
        """Tensors for PyG with every edge in both directions.

        Returns ``Data`` with ``x: [num_nodes]`` label ids, ``node_kind: [num_nodes]``
        (index into ``NODE_KINDS``), ``edge_index: [2, 2 * num_edges]`` (forward
        edges first, then their reverses in the same order) and ``edge_type:
        [2 * num_edges]`` relation ids.
        """
        import torch
        from torch_geometric.data import Data

        src = [e.src for e in self.edges]
        dst = [e.dst for e in self.edges]
        relations = [e.relation for e in self.edges]
        edge_index = torch.tensor([src + dst, dst + src], dtype=torch.long).reshape(2, -1)
        edge_type = torch.tensor(
            vocab.relations.lookup(relations + [reverse_relation(r) for r in relations]), dtype=torch.long
        )
        return Data(
            x=torch.tensor(vocab.labels.lookup(n.label for n in self.nodes), dtype=torch.long),
            node_kind=torch.tensor([NODE_KINDS.index(n.kind) for n in self.nodes], dtype=torch.long),
            edge_index=edge_index,
            edge_type=edge_type,
            num_nodes=self.num_nodes,
        )

    def to_dict(self) -> dict:
        """A JSON-ready dict carrying ``schema_version``; ``from_dict`` reads it back."""
        return {
            "schema_version": SCHEMA_VERSION,
            "text": self.text,
            "parser": self.parser,
            "parser_model": self.parser_model,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [{"src": e.src, "dst": e.dst, "relation": e.relation} for e in self.edges],
            "formulas": [f.to_dict() for f in self.formulas],
            "quantities": [q.to_dict() for q in self.quantity_records],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MathSyntaxGraph:
        """Rebuild a graph written by ``to_dict``; raises ``GraphFormatError`` on a malformed one."""
        if not isinstance(data, Mapping):
            raise GraphFormatError(f"a graph must be a JSON object, got {type(data).__name__}")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise GraphFormatError(
                f"unsupported graph schema_version {version!r} (this mathgraph reads "
                f"{SCHEMA_VERSION}; parse the problems again with this version)"
            )
        try:
            nodes = tuple(_node_from_dict(n) for n in data["nodes"])
            edges = tuple(Edge(int(e["src"]), int(e["dst"]), str(e["relation"])) for e in data["edges"])
            formulas = tuple(
                FormulaRecord(
                    latex=str(f["latex"]),
                    span=(int(f["span"][0]), int(f["span"][1])),
                    status=str(f["status"]),
                    delimiter=str(f.get("delimiter", "$")),
                    errors=tuple(f.get("errors", ())),
                )
                for f in data.get("formulas", ())
            )
            return cls(
                text=str(data["text"]),
                nodes=nodes,
                edges=edges,
                formulas=formulas,
                parser=str(data.get("parser", "")),
                parser_model=str(data.get("parser_model", "")),
                quantity_records=tuple(Quantity.from_dict(q) for q in data.get("quantities", ())),
            )
        except GraphFormatError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as err:
            raise GraphFormatError(f"malformed graph: {type(err).__name__}: {err}") from err

    @classmethod
    def from_json(cls, line: str) -> MathSyntaxGraph:
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise GraphFormatError(f"not JSON: {err}") from err
        return cls.from_dict(data)

    # ------------------------------------------------------------------ views
    def to_text(self) -> str:
        """An indented tree view: one node per line with the relation that reaches it."""
        lines = [f"parser: {self.parser} ({self.parser_model})" if self.parser_model else f"parser: {self.parser}"]
        for i, f in enumerate(self.formulas):
            why = f": {'; '.join(f.errors)}" if f.errors else ""
            lines.append(f"formula {i}: {f.latex!r} [{f.status}{why}]")
        for i, q in enumerate(self.quantity_records):
            about = ", ".join(f"{name} {value}" for name, value in (("unit", q.unit), ("object", q.object)) if value)
            where = f"sentence {q.sentence}" + (", question" if q.in_question else "") if q.sentence is not None else ""
            lines.append(
                f"quantity {i}: {q.text!r} = {q.value} [{q.form}" + "".join(f"; {x}" for x in (about, where) if x) + "]"
            )
        children: dict[int, list[Edge]] = {}
        for edge in self.edges:
            children.setdefault(edge.src, []).append(edge)

        def describe(node: Node) -> str:
            extra = node.upos or node.opt_type or ""
            return f"{node.label} ({extra})" if extra else node.label

        def source_order(edge: Edge) -> tuple[int, int]:
            span = self.nodes[edge.dst].span
            return (span[0] if span else -1, edge.dst)

        def walk(node_id: int, prefix: str) -> None:
            kids = sorted(children.get(node_id, []), key=source_order)
            for i, edge in enumerate(kids):
                last = i == len(kids) - 1
                lines.append(f"{prefix}{'└─' if last else '├─'}{edge.relation}→ {describe(self.nodes[edge.dst])}")
                walk(edge.dst, prefix + ("   " if last else "│  "))

        lines.append(describe(self.nodes[0]))
        walk(0, "")
        return "\n".join(lines)

    def draw(self, path: str | PathLike | None = None, ax: matplotlib.axes.Axes | None = None, **kwargs: Any):
        """Draw the graph as a layered tree (see ``mathgraph.draw.draw_graph``); returns the figure."""
        from mathgraph.draw import draw_graph

        return draw_graph(self, path=path, ax=ax, **kwargs)


def _node_from_dict(data: Mapping[str, Any]) -> Node:
    span = data.get("span")
    return Node(
        id=int(data["id"]),
        kind=str(data["kind"]),
        label=str(data["label"]),
        span=None if span is None else (int(span[0]), int(span[1])),
        lemma=data.get("lemma"),
        upos=data.get("upos"),
        sentence=data.get("sentence"),
        opt_type=data.get("opt_type"),
        formula=data.get("formula"),
    )


def _check_structure(nodes: Sequence[Node], edges: Sequence[Edge], formulas: Sequence[FormulaRecord]) -> None:
    """Raise ``GraphFormatError`` unless the nodes and edges form a tree rooted at a ROOT node 0."""
    if not nodes or nodes[0].kind != "root":
        raise GraphFormatError("a graph needs a root node with id 0")
    for i, node in enumerate(nodes):
        if node.id != i:
            raise GraphFormatError(f"node ids must be 0..n-1 in order; position {i} holds id {node.id}")
        if node.kind not in NODE_KINDS:
            raise GraphFormatError(f"node {i} has unknown kind {node.kind!r}; kinds are {NODE_KINDS}")
        if node.formula is not None and not 0 <= node.formula < len(formulas):
            raise GraphFormatError(f"node {i} refers to formula {node.formula}, but there are {len(formulas)}")
    parents = [0] * len(nodes)
    for edge in edges:
        if not (0 <= edge.src < len(nodes) and 0 <= edge.dst < len(nodes)):
            raise GraphFormatError(f"edge {edge} refers to a node outside 0..{len(nodes) - 1}")
        parents[edge.dst] += 1
    if parents[0] != 0 or any(count != 1 for count in parents[1:]):
        raise GraphFormatError("edges must form a tree: the root has no parent and every other node exactly one")
    for f in formulas:
        if f.status not in FORMULA_STATUSES:
            raise GraphFormatError(f"formula status must be one of {FORMULA_STATUSES}, got {f.status!r}")


def _check_quantities(quantities: Sequence[Quantity], num_nodes: int) -> None:
    for i, quantity in enumerate(quantities):
        if quantity.form not in QUANTITY_FORMS:
            raise GraphFormatError(f"quantity {i} has form {quantity.form!r}; forms are {QUANTITY_FORMS}")
        if not 0 < quantity.node < num_nodes:
            raise GraphFormatError(f"quantity {i} refers to node {quantity.node}, outside 1..{num_nodes - 1}")


@dataclass(frozen=True)
class GraphVocabulary:
    """The node-label and relation vocabularies a graph encoder needs.

    ``relations`` holds every kept relation and its reverse, so ``to_pyg`` can
    type both directions of an edge.
    """

    labels: Vocabulary
    relations: Vocabulary
    meta: dict = field(default_factory=dict)

    @classmethod
    def build(
        cls, graphs: Iterable[MathSyntaxGraph], min_freq: int = 2, max_labels: int | None = None
    ) -> GraphVocabulary:
        """Count labels and relations over ``graphs``; labels rarer than ``min_freq`` become ``[UNK]``.

        Relations are kept whatever their frequency (there are few of them).
        """
        label_counts: Counter[str] = Counter()
        relation_counts: Counter[str] = Counter()
        parsers: Counter[str] = Counter()
        for graph in graphs:
            label_counts.update(n.label for n in graph.nodes)
            relation_counts.update(e.relation for e in graph.edges)
            parsers[graph.parser] += 1
        forward = sorted(relation_counts, key=lambda r: (-relation_counts[r], r))
        return cls(
            labels=Vocabulary.build(label_counts, min_freq=min_freq, max_size=max_labels),
            relations=Vocabulary([r for rel in forward for r in (rel, reverse_relation(rel))]),
            meta={"parsers": dict(sorted(parsers.items())), "min_freq": min_freq},
        )

    def save_pretrained(self, directory: str | PathLike) -> None:
        """Write ``node_vocab.json`` and ``relation_vocab.json`` into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        with open(directory / "node_vocab.json", "w", encoding="utf-8") as f:
            json.dump({**self.labels.to_dict(), "meta": self.meta}, f, ensure_ascii=False)
        self.relations.save(directory / "relation_vocab.json")

    @classmethod
    def from_pretrained(cls, directory: str | PathLike) -> GraphVocabulary:
        directory = Path(directory)
        with open(directory / "node_vocab.json", encoding="utf-8") as f:
            data = json.load(f)
        return cls(
            labels=Vocabulary.from_dict(data),
            relations=Vocabulary.load(directory / "relation_vocab.json"),
            meta=data.get("meta", {}),
        )


# ---------------------------------------------------------------------- graph files
def write_graphs(
    path: str | PathLike, graphs: Iterable[MathSyntaxGraph], records: Iterable[TextRecord] | None = None
) -> int:
    """Write a graph file: one graph (``to_dict()``) per line, replacing ``path`` only when all are written.

    With ``records`` (the rows the graphs were parsed from, as ``mathgraph.jsonl.read_text_records`` gives
    them, in the same order) each line also has the row's ``id`` first, when the row has one, and its
    ``line`` last, so graphs can be joined back to their rows. ``graphs`` is read to its end (a lazy parser
    such as ``parsers.problem.parse_problems`` then finishes, progress bar included). Returns how many.
    """
    if records is None:
        lines = (graph.to_dict() for graph in graphs)
    else:
        lines = (
            {**({"id": record.row["id"]} if "id" in record.row else {}), **graph.to_dict(), "line": record.line}
            for graph, record in zip(graphs, records)
        )
    with atomic_writer(path) as f:
        return write_jsonl(f, lines)


def read_graphs(path: str | PathLike) -> list[MathSyntaxGraph]:
    """The graphs of a graph file (``write_graphs``, ``mathgraph parse --output``), in order; blank lines
    are skipped and a line that is not a graph raises ``JsonlError`` naming file and line."""
    graphs = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if line.strip():
                try:
                    graphs.append(MathSyntaxGraph.from_json(line))
                except GraphFormatError as err:
                    raise JsonlError(path, number, str(err)) from None
    return graphs


def read_problems(
    input_path: str | PathLike | None = None, text_field: str = "problem", graphs_path: str | PathLike | None = None
) -> list[str] | list[MathSyntaxGraph]:
    """The problems of files, as an encoder takes them: the ``text_field`` texts of a JSONL file, the graphs
    of a graph file, or, given both, the graphs, checked line by line to be those texts' (so a graph file
    parsed once can stand in for its source). Mismatched files raise ``ValueError`` naming the first bad line.
    """
    if input_path is None and graphs_path is None:
        raise UserError("give an input file of problems, a graph file, or both")
    graphs = read_graphs(graphs_path) if graphs_path is not None else []
    if input_path is None:
        return graphs
    records, _ = read_text_records(input_path, text_field)
    if graphs_path is None:
        return [r.text for r in records]
    if len(graphs) != len(records):
        raise UserError(f"{graphs_path} has {len(graphs)} graphs but {input_path} has {len(records)} problems")
    for record, graph in zip(records, graphs):
        if graph.text != record.text:
            raise UserError(f"{input_path}:{record.line}: its graph in {graphs_path} is of another text")
    return graphs
