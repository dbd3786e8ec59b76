"""Parse once: graphs cached on disk in SQLite, keyed by a hash of the text and the parser; and the graphs
parsed for one prediction, handed to the model that reads them.

    graphs = parse_cached(texts)                 # a second run over the same texts parses nothing
    graphs = parse_cached(texts, cache=None)     # parse, write no file

    parsed = ParsedGraphs(cache=None)            # what a prediction parsed (mathgraph.api.Predictor)
    parsed.parse(texts, parser="spacy")          # or parsed.add(texts, graphs, parser) for graphs made elsewhere
    model.predict(inputs, graphs=parsed)         # the model takes them from parsed.parse, parses nothing again

The key covers everything the graph depends on (back end, its model and
library version, ``parsers.PARSER_VERSION``, the graph schema, ``bare_arithmetic``),
so changing any of them misses instead of serving stale graphs.

A ``ParsedGraphs`` is passed to whatever reads graphs, as an argument: its ``parse`` takes the graphs it keeps
and parses the others through its own cache (``None``: no file at all). ``parse_cached`` reads and writes only
the cache it is given (``cache=True``: the default SQLite file, as training and the bank-scale commands use it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path

from mathgraph import graph as graph_module
from mathgraph import parsers
from mathgraph.files import cache_directory
from mathgraph.graph import GraphFormatError, MathSyntaxGraph
from mathgraph.parsers.dependency import DependencyParser
from mathgraph.parsers.problem import ProblemParser, _problem_parser, check_problem_text, parse_problems
from mathgraph.quiet import warn

logger = logging.getLogger("mathgraph")

CACHE_FILE_NAME = "graphs.sqlite"
SQLITE_MAX_VARIABLES = 500  # per query; older sqlite builds allow 999 at most
STORE_EVERY = 256  # graphs per transaction, so an interrupted run keeps what it parsed
LOCK_TIMEOUT_S = 60.0  # a second process writing the same cache waits rather than fails
PARSED_GRAPHS_LIMIT = 100_000  # graphs a ParsedGraphs keeps (oldest out first): a server's memory stays bounded


def parser_identity(problem_parser: ProblemParser) -> str:
    """A string that changes whenever ``problem_parser`` could build different graphs."""
    backend = problem_parser.dependency_parser
    return "|".join(
        [
            f"backend={backend.name}",
            f"model={backend.model}",
            f"library={_library_version(backend.name)}",
            f"parsers={parsers.PARSER_VERSION}",
            f"schema={graph_module.SCHEMA_VERSION}",
            f"bare_arithmetic={bool(problem_parser.bare_arithmetic)}",
        ]
    )


def _library_version(name: str) -> str:
    try:
        return metadata.version(name)
    except (metadata.PackageNotFoundError, ValueError):
        return "?"  # a custom back end that is no installed distribution


def graph_key(text: str, identity: str) -> str:
    """The cache key of ``text`` parsed by a parser of ``identity``: a sha256 hex digest."""
    # NUL cannot occur in an identity, so no (identity, text) pair collides with another.
    return hashlib.sha256(f"{identity}\0{text}".encode()).hexdigest()


def default_cache_path() -> Path:
    """``graphs.sqlite`` in the cache directory (``mathgraph.files.cache_directory``)."""
    return cache_directory() / CACHE_FILE_NAME


class GraphCache:
    """Graphs stored as JSON in a SQLite file, table ``graphs(key, graph)``.

    Safe to share between processes (WAL journal, lock timeout). ``hits`` and
    ``misses`` count the keys ``get_many`` found and did not find.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = self.misses = 0
        try:
            self._db = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_S)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS graphs (key TEXT PRIMARY KEY, graph TEXT)")
            self._db.commit()
        except sqlite3.DatabaseError as err:
            raise ValueError(f"{self.path} is not a usable graph cache ({err}); delete it and run again") from err

    def get_many(self, keys: Iterable[str]) -> dict[str, MathSyntaxGraph]:
        """The cached graphs of ``keys``; unknown keys and unreadable rows are left out."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, MathSyntaxGraph] = {}
        for start in range(0, len(keys), SQLITE_MAX_VARIABLES):
            chunk = keys[start : start + SQLITE_MAX_VARIABLES]
            marks = ",".join("?" * len(chunk))
            for key, text in self._db.execute(f"SELECT key, graph FROM graphs WHERE key IN ({marks})", chunk):
                try:
                    found[key] = MathSyntaxGraph.from_json(text)
                except (GraphFormatError, json.JSONDecodeError, TypeError):
                    pass  # a damaged row is a miss: the caller parses it again and overwrites it
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put_many(self, graphs: Mapping[str, MathSyntaxGraph]) -> None:
        """Store ``graphs`` (key -> graph) in one transaction, replacing rows with the same key."""
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO graphs (key, graph) VALUES (?, ?)",
                ((key, graph.to_json()) for key, graph in graphs.items()),
            )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM graphs").fetchone()[0]

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def __enter__(self) -> GraphCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GraphCache({str(self.path)!r})"


class ParsedGraphs:
    """Graphs parsed for a prediction, keyed as the cache keys them (text and parser), with the graph cache
    they are read from and written to (``cache``: a ``GraphCache``, a path, ``True`` for the default file, or
    ``None``: no file). At most ``limit`` graphs are kept, the oldest dropped first. It is passed to the model
    that reads them (``mathgraph.api.Predictor``'s forward step)."""

    def __init__(self, cache: str | os.PathLike | GraphCache | bool | None = None, limit: int = PARSED_GRAPHS_LIMIT):
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.cache, self.limit = (None if cache is False else cache), limit
        self._graphs: OrderedDict[str, MathSyntaxGraph] = OrderedDict()

    def parse(
        self,
        texts: Iterable[str],
        parser: str | DependencyParser = "auto",
        bare_arithmetic: bool = False,
        show_progress: bool = False,
    ) -> list[MathSyntaxGraph]:
        """The graphs of ``texts`` in input order: those kept here as they are, the others through this object's
        cache (``parse_cached``; ``None``: parsed, no file written), and kept. A bad text raises with its
        position in ``texts`` before anything is parsed."""
        texts = list(texts)
        for i, text in enumerate(texts):
            check_problem_text(text, where=f"problem {i}")
        if not texts:
            return []
        identity = parser_identity(_problem_parser(parser, bare_arithmetic))
        keys = [graph_key(text, identity) for text in texts]
        graphs = self.get_many(keys)
        missing = list(dict.fromkeys(text for text, key in zip(texts, keys) if key not in graphs))
        parsed = parse_cached(
            missing, parser=parser, cache=self.cache, bare_arithmetic=bare_arithmetic, show_progress=show_progress
        )
        new = {graph_key(text, identity): graph for text, graph in zip(missing, parsed)}
        self.put_many(new)
        graphs.update(new)
        return [graphs[key] for key in keys]

    def add(
        self,
        texts: Iterable[str],
        graphs: Iterable[MathSyntaxGraph],
        parser: str | DependencyParser = "auto",
        bare_arithmetic: bool = False,
    ) -> None:
        """Keep ``graphs``, the parses of ``texts`` by ``parser`` made elsewhere (a job's parse stage)."""
        identity = parser_identity(_problem_parser(parser, bare_arithmetic))
        self.put_many({graph_key(text, identity): graph for text, graph in zip(texts, graphs, strict=True)})

    def get_many(self, keys: Iterable[str]) -> dict[str, MathSyntaxGraph]:
        """The kept graphs of ``keys``; unknown keys are left out."""
        return {key: self._graphs[key] for key in keys if key in self._graphs}

    def put_many(self, graphs: Mapping[str, MathSyntaxGraph]) -> None:
        """Keep ``graphs`` (key -> graph), dropping the oldest beyond ``limit``."""
        for key, graph in graphs.items():
            self._graphs[key] = graph
            self._graphs.move_to_end(key)
        while len(self._graphs) > self.limit:
            self._graphs.popitem(last=False)

    def __len__(self) -> int:
        return len(self._graphs)

    def __repr__(self) -> str:
        return f"ParsedGraphs({len(self)} graphs, cache={self.cache!r})"


def parse_cached(
    texts: Iterable[str],
    parser: str | DependencyParser = "auto",
    cache: str | os.PathLike | GraphCache | bool | None = True,
    n_process: int = 1,
    bare_arithmetic: bool = False,
    show_progress: bool = False,
) -> list[MathSyntaxGraph]:
    """Graphs for ``texts`` in input order, parsing only those not already in ``cache``.

    ``cache``: ``True`` for :func:`default_cache_path`, a path for that file, an
    open :class:`GraphCache`, or ``False``/``None`` to parse everything. Equal
    texts are parsed once and share one graph. A bad text (empty, not a string)
    raises with its position in ``texts`` before anything is parsed.
    """
    texts = list(texts)
    for i, text in enumerate(texts):
        check_problem_text(text, where=f"problem {i}")
    if not texts:
        return []
    problem_parser = _problem_parser(parser, bare_arithmetic)
    identity = parser_identity(problem_parser)
    keys = [graph_key(text, identity) for text in texts]
    text_of = dict(zip(keys, texts))  # distinct texts, in first-seen order
    store, owned = _open_cache(cache)
    pending: dict[str, MathSyntaxGraph] = {}
    try:
        graphs: dict[str, MathSyntaxGraph] = {}
        if store is not None:
            graphs.update(store.get_many(list(text_of)))
        misses = [key for key in text_of if key not in graphs]
        parsed = (
            parse_problems(
                [text_of[key] for key in misses],
                parser=parser,
                n_process=n_process,
                bare_arithmetic=bare_arithmetic,
                show_progress=show_progress,
            )
            if misses
            else []  # every graph found: the parser is not even loaded
        )
        for key, graph in zip(misses, parsed):
            graphs[key] = pending[key] = graph
            if store is not None and len(pending) >= STORE_EVERY:
                store.put_many(pending)
                pending.clear()
    finally:
        if store is not None:
            try:
                store.put_many(pending)  # also after an interruption: keep every graph already parsed
            finally:
                if owned:
                    store.close()
    # a note for `mathgraph -v` (DEBUG): a command may come through here several times for one answer
    where = store.path if store is not None else "none (no file)"
    logger.debug("graph cache %s: %d hits, %d parsed", where, len(text_of) - len(misses), len(misses))
    return [graphs[key] for key in keys]


def graphs_for(
    problems: list,
    parser: str,
    show_progress: bool = False,
    cache: str | os.PathLike | GraphCache | bool | None = True,
) -> list[MathSyntaxGraph]:
    """Graphs for ``problems`` as an encoder built on ``parser`` reads them: strings are parsed (through
    ``cache``, as ``parse_cached``), graphs are kept; a graph from another back end is warned about (its
    dependency labels differ from the model's). A bad text raises with its position among all problems."""
    texts = [(i, p) for i, p in enumerate(problems) if not isinstance(p, MathSyntaxGraph)]
    for i, text in texts:
        check_problem_text(text, where=f"problem {i}")  # the position among all problems, graphs included
    graphs: list[MathSyntaxGraph | None] = [p if isinstance(p, MathSyntaxGraph) else None for p in problems]
    parsed = parse_cached([t for _, t in texts], parser=parser, cache=cache, show_progress=show_progress)
    for (i, _), graph in zip(texts, parsed):
        graphs[i] = graph
    foreign = sorted({g.parser for g in graphs if g is not None and g.parser != parser})
    if foreign:
        warn(
            f"the model was built on {parser!r} parses but got graphs from {foreign}: "
            "their dependency labels differ, so expect worse vectors"
        )
    return graphs  # type: ignore[return-value]


def _open_cache(cache: str | os.PathLike | GraphCache | bool | None) -> tuple[GraphCache | None, bool]:
    """The cache to use and whether ``parse_cached`` opened it (and so must close it)."""
    if cache is None or cache is False:
        return None, False
    if isinstance(cache, GraphCache):
        return cache, False
    if cache is True:
        return GraphCache(), True
    if isinstance(cache, (str, os.PathLike)):
        return GraphCache(cache), True
    raise TypeError(f"cache must be a path, a GraphCache, True or False, got {type(cache).__name__}")
