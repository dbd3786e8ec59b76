"""Near-duplicates in a bank: which rows are the same problem (the same text up to wording and formatting, the
same quantities and the same question), as group ids.

    result = find_duplicates(texts, load_embedder("text:minilm"))
    result.groups        # one id a row: the position of the first row of its group
    result.pairs         # the confirmed pairs (row a, row b, cosine, how they were matched)

Three steps:

1. Copies: rows whose text is the same once formatting is set aside (``canonical_text``: whitespace, math
   delimiters, LaTeX spacing and sizing commands, braces around one character) are one problem outright.
2. Candidates: one row per distinct text is embedded into a search index (``write_index``; its index type by
   size, so a large bank is searched approximately) and each row's ``neighbours`` nearest rows with a cosine
   of at least ``min_cosine`` are candidates.
3. Confirmation: a candidate pair is the same problem when the alignment of its two graphs
   (``parsers.compare.align_problems``, graphs through the graph cache) says so (``same_problem``): the same
   quantity values (as a multiset: "12 apples" and "12.5 apples" differ), the same formulas, the question
   kept (reworded at most: its word similarity at least ``min_question_similarity``), and, with
   ``check_sentences``, no sentence that carries quantities inserted or deleted.

Groups are the connected components of copies and confirmed pairs (``scipy.sparse.csgraph``). The default
thresholds were chosen on the dev part of ``benchmarks/dedupe_quality.py`` (docs/search.md has its figures).
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mathgraph.errors import UserError

# Chosen on the dev part of benchmarks/dedupe_quality.py (the best F1 over its grid; docs/search.md): a reworded
# question shares few words with the original (GSM-Plus paraphrases: similarity 0.1 to 0.5), and a paraphrase
# regroups numbers into other sentences, so neither check helped there; a question missing on one side still
# rules a pair out.
NEIGHBOURS = 10
MIN_COSINE = 0.75
MIN_QUESTION_SIMILARITY = 0.0
CHECK_SENTENCES = False
# Query vectors searched at a time while finding candidates.
QUERY_BATCH = 1024

# What canonical_text removes or rewrites: formatting that never changes a problem.
_SIZING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])")
_SPACING = re.compile(r"\\[,;:! ]|\\(?:quad|qquad)(?![a-zA-Z])|~")
_FRACTION = re.compile(r"\\[dt]frac(?![a-zA-Z])")
_DELIMITERS = re.compile(r"\$\$?|\\\(|\\\)|\\\[|\\\]")
_ONE_CHARACTER_GROUP = re.compile(r"\{(\w)\}")
_SPACE_AT_SYMBOL = re.compile(r" ?([^\w\s]) ?")


@dataclass(frozen=True)
class DedupeSettings:
    """How near a pair must be to be compared (``neighbours``, ``min_cosine``), how similar two questions
    must be to be the same question once reworded (``min_question_similarity``, the alignment's word
    similarity of the two question sentences), and whether a sentence with quantities that only one problem
    has (inserted or deleted: a rewording that regroups the numbers makes such sentences too) rules a pair
    out (``check_sentences``)."""

    neighbours: int = NEIGHBOURS
    min_cosine: float = MIN_COSINE
    min_question_similarity: float = MIN_QUESTION_SIMILARITY
    check_sentences: bool = CHECK_SENTENCES

    def __post_init__(self) -> None:
        if self.neighbours < 1:
            raise UserError(f"neighbours must be >= 1, got {self.neighbours}")
        for name in ("min_cosine", "min_question_similarity"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise UserError(f"{name} must be in [-1, 1], got {getattr(self, name)}")


@dataclass(frozen=True)
class DuplicatePair:
    """Rows ``a`` < ``b`` found to be the same problem: ``how`` is ``"copy"`` (the same canonical text) or
    ``"aligned"`` (a candidate confirmed by the alignment), with the cosine of their vectors (1 for a copy)."""

    a: int
    b: int
    cosine: float
    how: str

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"a": self.a, "b": self.b, "cosine": round(self.cosine, 6), "how": self.how}


@dataclass(frozen=True)
class DedupeResult:
    """``groups``: a group id per row (the position of the group's first row); ``pairs``: the pairs that joined
    them; ``candidates``: candidate pairs compared by alignment, confirmed or not; ``rejected``: why each
    candidate that was not confirmed was not (reason -> count)."""

    groups: np.ndarray
    pairs: list[DuplicatePair]
    candidates: int
    rejected: dict[str, int]

    @property
    def group_count(self) -> int:
        """How many distinct problems the rows are."""
        return len(np.unique(self.groups))


def canonical_text(text: str) -> str:
    """``text`` with formatting set aside: math delimiters (``$``, ``\\(``, ``\\[``), LaTeX spacing (``\\,``,
    ``\\quad``) and sizing (``\\left``, ``\\big``) commands, ``\\dfrac``/``\\tfrac`` written ``\\frac``, braces
    around one character (``x^{2}`` -> ``x^2``), runs of whitespace, and spaces next to symbols. Two texts with
    the same canonical text differ in formatting only."""
    text = _SIZING.sub("", text)
    text = _SPACING.sub(" ", text)
    text = _FRACTION.sub(r"\\frac", text)
    text = _DELIMITERS.sub(" ", text)
    text = _ONE_CHARACTER_GROUP.sub(r"\1", text)
    text = " ".join(text.split())
    return _SPACE_AT_SYMBOL.sub(r"\1", text)


def same_problem(alignment, graph_a, graph_b, settings: DedupeSettings = DedupeSettings()) -> str | None:
    """None when an aligned pair of problems is the same problem, else the reason it is not: ``quantities``
    (other values, as multisets), ``formulas`` (a formula added, removed or edited), ``question`` (missing on
    one side, or reworded below ``min_question_similarity``), ``sentences`` (with ``check_sentences``: a
    sentence with quantities inserted or deleted). ``alignment``: ``align_problems(graph_a, graph_b)``."""
    values_a = Counter(q.value for q in graph_a.quantities())
    if values_a != Counter(q.value for q in graph_b.quantities()):
        return "quantities"
    features = alignment.features
    if not features["formulas_a"] == features["formulas_b"] == features["formulas_same"]:
        return "formulas"
    if alignment.question in ("missing", "added") or (
        alignment.question == "changed" and alignment.question_similarity < settings.min_question_similarity
    ):
        return "question"
    if settings.check_sentences and (features["inserted_with_quantities"] or features["deleted_with_quantities"]):
        return "sentences"
    return None


def copy_groups(texts: Sequence[str]) -> tuple[list[int], np.ndarray]:
    """``(representatives, copy_of)``: the first row of each distinct canonical text, and for every row the
    representative it is a copy of (itself for a representative)."""
    first: dict[str, int] = {}
    copy_of = np.empty(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        copy_of[i] = first.setdefault(canonical_text(text), i)
    return list(first.values()), copy_of


def candidate_pairs(index, settings: DedupeSettings) -> list[tuple[int, int, float]]:
    """``(a, b, cosine)`` with ``a < b``: each row of ``index`` (a ``SearchIndex``) with its ``neighbours``
    nearest other rows whose cosine is at least ``min_cosine``, each pair once, in order."""
    pairs: dict[tuple[int, int], float] = {}
    k = min(len(index), settings.neighbours + 1)  # + the row itself
    for start in range(0, len(index), QUERY_BATCH):
        queries = np.asarray(index.embeddings[start : start + QUERY_BATCH], dtype=np.float32)
        indices, scores = index.top_k(queries, k)
        for offset, (row_i, row_s) in enumerate(zip(indices, scores)):
            row = start + offset
            for other, score in zip(row_i.tolist(), row_s.tolist()):
                if other >= 0 and other != row and score >= settings.min_cosine:
                    pairs[min(row, other), max(row, other)] = score
    return [(a, b, score) for (a, b), score in sorted(pairs.items())]


def group_ids(count: int, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """A group id for each of ``count`` rows joined by ``pairs``: the connected components, each named by its
    first row (so a row alone is its own group)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(count, count))
    _, component = connected_components(graph, directed=False)
    first = np.full(component.max() + 1 if count else 0, count, dtype=np.int64)
    np.minimum.at(first, component, np.arange(count))
    return first[component]


def find_duplicates(
    texts: Sequence[str],
    embedder,
    settings: DedupeSettings = DedupeSettings(),
    batch_size: int = 32,
    show_progress: bool = False,
) -> DedupeResult:
    """Group the rows ``texts`` of a bank by problem (module docstring): copies, then candidates from a search
    index of one row per distinct text (``embedder``: a ``tasks.search.embedders`` encoder), confirmed by
    alignment. The index is written to a temporary directory, so the vectors are held once, memory-mapped."""
    from mathgraph.parsers.compare import align_problems
    from mathgraph.parsers.graph_cache import parse_cached
    from mathgraph.tasks.search.commands import encode_shards
    from mathgraph.tasks.search.index import write_index

    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"row {i}: the text is empty or not a string: {text!r}")
    representatives, copy_of = copy_groups(texts)
    pairs = [DuplicatePair(int(copy_of[i]), i, 1.0, "copy") for i in range(len(texts)) if copy_of[i] != i]
    unique = [texts[i] for i in representatives]
    rejected: Counter[str] = Counter()
    candidates: list[tuple[int, int, float]] = []
    if len(unique) > 1:
        with tempfile.TemporaryDirectory(prefix="mathgraph-dedupe-") as directory:
            shards = encode_shards(embedder, unique, batch_size, show_progress)
            index = write_index(directory, shards, ({"text": t} for t in unique), "text", embedder.identity())
            candidates = candidate_pairs(index, settings)
            del index  # its files are mapped: let them go before the directory is removed
        involved = sorted({i for a, b, _ in candidates for i in (a, b)})
        graphs = dict(zip(involved, parse_cached([unique[i] for i in involved], show_progress=show_progress)))
        for a, b, cosine in candidates:
            reason = same_problem(align_problems(graphs[a], graphs[b]), graphs[a], graphs[b], settings)
            if reason is None:
                pairs.append(DuplicatePair(representatives[a], representatives[b], cosine, "aligned"))
            else:
                rejected[reason] += 1
    groups = group_ids(len(texts), [(p.a, p.b) for p in pairs])
    return DedupeResult(groups, sorted(pairs, key=lambda p: (p.a, p.b)), len(candidates), dict(rejected))


__all__ = [
    "DedupeSettings",
    "DuplicatePair",
    "DedupeResult",
    "canonical_text",
    "same_problem",
    "copy_groups",
    "candidate_pairs",
    "group_ids",
    "find_duplicates",
]
