"""Public parsing API: problem text -> ``MathSyntaxGraph``, one at a time or in bulk."""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import islice

from mathgraph.errors import UserError
from mathgraph.graph import MathSyntaxGraph
from mathgraph.parsers.dependency import DependencyParser, load_dependency_parser
from mathgraph.parsers.latex import parse_latex
from mathgraph.parsers.segment import segment
from mathgraph.parsers.syntax_graph import build_syntax_graph
from mathgraph.quiet import progress_bar
from mathgraph.text_checks import check_text


class ProblemParser:
    """Segmentation, dependency parsing and formula parsing with one loaded back end.

    ``parser`` is a back-end name (``"auto"``, ``"spacy"``, ``"stanza"``) or a
    ready ``DependencyParser``. ``bare_arithmetic`` also treats arithmetic in
    plain text (``48/2 = 24``) as formulas.
    """

    def __init__(self, parser: str | DependencyParser = "auto", bare_arithmetic: bool = False):
        self.dependency_parser = load_dependency_parser(parser) if isinstance(parser, str) else parser
        self.bare_arithmetic = bare_arithmetic

    def parse(self, text: str) -> MathSyntaxGraph:
        """Parse one problem; raises ``ValueError`` on empty text and ``TypeError`` on a non-string."""
        check_problem_text(text)
        return self.parse_batch([text])[0]

    def parse_batch(self, texts: list[str], start: int = 0) -> list[MathSyntaxGraph]:
        """Parse several problems, batching the dependency parser over them.

        ``start`` is the position of ``texts[0]`` in a larger input, used in errors.
        """
        for i, text in enumerate(texts):
            check_problem_text(text, where=f"problem {start + i}")
        segmentations = [segment(t, bare_arithmetic=self.bare_arithmetic) for t in texts]
        parses = self.dependency_parser.parse_many([s.masked_text for s in segmentations], batch_size=len(texts))
        return [
            build_syntax_graph(
                seg,
                sentences,
                [parse_latex(f.latex) for f in seg.formulas],
                parser=self.dependency_parser.name,
                parser_model=self.dependency_parser.model,
            )
            for seg, sentences in zip(segmentations, parses)
        ]


def check_problem_text(text: object, where: str = "problem") -> None:
    """Raise a clear error unless ``text`` is a non-empty string of text (no lone surrogates:
    ``mathgraph.text_checks``)."""
    if not isinstance(text, str):
        raise TypeError(f"{where}: expected the problem text as a str, got {type(text).__name__}")
    if not text.strip():
        raise UserError(f"{where}: the problem text is empty")
    check_text(text, f"{where}: the problem text")


def parse_problem(text: str, parser: str | DependencyParser = "auto", bare_arithmetic: bool = False) -> MathSyntaxGraph:
    """Parse one math problem (text with LaTeX formulas) into a math syntax graph.

    >>> graph = parse_problem("Let $f(x)=x^2+1$. Find $f(2)$.")   # doctest: +SKIP
    >>> graph.formulas[0].status
    'ok'
    """
    return _problem_parser(parser, bare_arithmetic).parse(text)


def _problem_parser(parser: str | DependencyParser, bare_arithmetic: bool) -> ProblemParser:
    if isinstance(parser, str):
        return _named_problem_parser(parser, bare_arithmetic)
    return ProblemParser(parser, bare_arithmetic=bare_arithmetic)


@lru_cache(maxsize=8)
def _named_problem_parser(parser: str, bare_arithmetic: bool) -> ProblemParser:
    # Loading a back end is slow (and "auto" logs its choice): do it once per process.
    return ProblemParser(parser, bare_arithmetic=bare_arithmetic)


def parse_problems(
    texts: Iterable[str],
    parser: str | DependencyParser = "auto",
    batch_size: int = 64,
    n_process: int = 1,
    bare_arithmetic: bool = False,
    show_progress: bool = False,
    total: int | None = None,
) -> Iterator[MathSyntaxGraph]:
    """Parse many problems lazily, yielding graphs in input order.

    Texts are parsed in batches of ``batch_size``; with ``n_process > 1`` the
    batches go to that many worker processes, each loading the back end once.
    A bad text (empty, not a string) raises with its position in the input.
    """
    if batch_size < 1 or n_process < 1:
        raise ValueError(f"batch_size and n_process must be >= 1, got {batch_size} and {n_process}")
    if total is None and hasattr(texts, "__len__"):
        total = len(texts)  # type: ignore[arg-type]
    batches = _numbered_batches(texts, batch_size)
    if n_process == 1:
        problem_parser = _problem_parser(parser, bare_arithmetic)
        results: Iterator[list[MathSyntaxGraph]] = (_parse_numbered(problem_parser, b) for b in batches)
        yield from _with_progress(results, total, show_progress)
        return
    if not isinstance(parser, str):
        raise ValueError("n_process > 1 needs the parser given by name, so each worker can load its own")
    with _pool_context().Pool(n_process, initializer=_init_worker, initargs=(parser, bare_arithmetic)) as pool:
        yield from _with_progress(pool.imap(_parse_in_worker, batches), total, show_progress)


def _numbered_batches(texts: Iterable[str], batch_size: int) -> Iterator[tuple[int, list[str]]]:
    iterator = iter(texts)
    start = 0
    while batch := list(islice(iterator, batch_size)):
        yield start, batch
        start += len(batch)


def _parse_numbered(problem_parser: ProblemParser, numbered: tuple[int, list[str]]) -> list[MathSyntaxGraph]:
    start, texts = numbered
    return problem_parser.parse_batch(texts, start)


def _with_progress(
    results: Iterable[list[MathSyntaxGraph]], total: int | None, show: bool
) -> Iterator[MathSyntaxGraph]:
    # A batch counts when it is parsed, before its graphs are handed out: a consumer may stop taking them
    # at the last graph it expects (zip) and leave this generator suspended until it is collected, so the
    # bar is closed at its total here rather than left for that (at N - last batch, drawn again later).
    with progress_bar(total=total, unit="problem", desc="parsing", show=show) as bar:
        for graphs in results:
            if total is not None and bar.n + len(graphs) >= total:
                bar.n += len(graphs)  # drawn once, at N/N, by close()
                bar.close()
            else:
                bar.update(len(graphs))
            yield from graphs


def _pool_context():
    # fork starts workers in milliseconds with the parser modules already imported;
    # elsewhere (macOS, Windows) only spawn is safe.
    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


_worker_parser: ProblemParser | None = None


def _init_worker(parser: str, bare_arithmetic: bool) -> None:
    global _worker_parser
    _worker_parser = _named_problem_parser(parser, bare_arithmetic)


def _parse_in_worker(numbered: tuple[int, list[str]]) -> list[MathSyntaxGraph]:
    assert _worker_parser is not None, "worker used before its initializer ran"
    return _parse_numbered(_worker_parser, numbered)
