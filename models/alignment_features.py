"""Alignment features of problem pairs, as numbers a model reads (``parsers.compare``), computed once per pair.

``alignment_features(against, pairs)`` gives the ``[n, F]`` matrix of the named features
of ``(text_a, text_b)`` pairs: ``align_problems`` where ``text_b`` is a ``"problem"``
(QRC, and SQR's query and candidate), ``align_solution`` where it is a ``"solution"``
(QAM's question and solution); each task says which (``TaskHead.aligned_with``). Problems are
parsed through the graph cache, and the rows of the last ``REMEMBERED_ROWS`` pairs are kept (keyed by a
digest of the two texts, so memory stays bounded), so an epoch after the first, or the dev pass,
computes nothing again; ``AlignmentRows.remember_alignments`` adds the rows of alignments a caller already
made. The rows are an ``AlignmentRows`` object passed in as an argument (``rows=``: a prediction's own, from
``mathgraph.api.Predictor``, or a ``models.features.FeatureStore``'s), else ``TRAINING_ROWS``, a training run's.
Both the alignment model (``models.alignment_model``) and the neural pair heads that read
the alignment next to their pair vector (``TaskConfig.alignment``) use it.

Feature sets: ``feature_names(against)`` is the set the neural heads read (``ALIGNMENT_FEATURES`` or
``SOLUTION_FEATURES``: the shipped multi-task model was trained on them); ``available_features(against)`` is every
feature this mathgraph computes, for a solution also the solution graph's (``SOLUTION_GRAPH_FEATURES``: operands
explained, unused quantities, wrong calculations, whether the answer follows) and then the step findings of checking
the solution against the problem (``STEP_FINDING_FEATURES``, ``step_finding_features``: findings per kind, the share
of lines flagged, where the first error is, whether the answer traces back to the problem, the step verifier's
highest probability). ``candidate_features`` computes the features no shipped model reads yet
(``CANDIDATE_FEATURES``: the newest finding kinds and ``parsers.solution_fit``), apart from these rows, for
measuring them before a release. ``names`` picks columns; a model names the columns it was trained on, so models trained
before a feature was added read the columns they know.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from mathgraph.parsers.compare import ALIGNMENT_FEATURES, align_problems
from mathgraph.parsers.solution import (
    SOLUTION_FEATURES,
    SOLUTION_GRAPH_FEATURES,
    align_solution,
)
from mathgraph.parsers.solution_check import SolutionCheck, check_solution, with_verifier
from mathgraph.parsers.solution_features import graph_features
from mathgraph.parsers.solution_fit import FIT_FEATURES, fit_features
from mathgraph.parsers.solution_graph import problem_values

AGAINST = ("problem", "solution")  # what the second text of a pair is
# the findings ``check_solution`` reports, counted per kind (``parsers.solution_check.FINDING_KINDS``)
FINDING_COUNTED = (
    "arithmetic",
    "unexplained_operand",
    "unused_quantity",
    "answer_mismatch",
    "false_claim",
    "suspect_step",
    "no_work",
)
STEP_FINDING_FEATURES = tuple(f"findings_{kind}" for kind in FINDING_COUNTED) + (
    "findings_share_lines_flagged",  # lines with an error finding / lines of the solution
    "findings_first_error_position",  # (line + 1) / lines of the earliest error; 0 when none
    "findings_answer_unexplained",  # 1: the answer is not reached from the problem's numbers (module docstring)
    "findings_verifier_max_probability",  # the step verifier's highest line probability; NaN without a verifier
)
# Features computed for a solution that no shipped model reads yet (``candidate_features``): the two finding kinds
# ``check_solution`` added last, then how the solution fits its problem (``parsers.solution_fit``). They are not
# among ``available_features``, so the rows, packs and models of this release keep their width; a release that
# refits the alignment models adds them after ``STEP_FINDING_FEATURES``.
CANDIDATE_FEATURES = ("findings_inverse_operation", "findings_answer_unit") + FIT_FEATURES
REMEMBERED_ROWS = 200_000  # pairs whose rows are kept: a training set's, many times over; some 100 MB at most


def pair_key(against: str, a: str, b: str) -> bytes:
    """The key of the pair ``(a, b)``'s row among ``AlignmentRows``: a digest of ``against`` and the two texts."""
    return hashlib.blake2b("\0".join((against, a, b)).encode("utf-8", "surrogatepass"), digest_size=16).digest()


class AlignmentRows:
    """The feature rows of pairs already aligned, keyed by a digest of ``against`` and the two texts: at most
    ``limit`` rows, the oldest dropped first. Thread-safe (a server's request threads may share one).

    ``alignment_features(..., rows=ROWS)`` reads and keeps rows here; a call that names none uses
    ``TRAINING_ROWS``, the rows of this process's training run."""

    def __init__(self, limit: int = REMEMBERED_ROWS):
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit
        self._rows: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The kept rows of ``keys``; unknown keys are left out."""
        with self._lock:
            return {key: self._rows[key] for key in keys if key in self._rows}

    def put_many(self, rows: dict[bytes, np.ndarray]) -> None:
        """Keep ``rows`` (key -> features), dropping the oldest beyond ``limit``."""
        with self._lock:
            for key, row in rows.items():
                self._rows[key] = np.asarray(row, dtype=np.float64)
                self._rows.move_to_end(key)
            while len(self._rows) > self.limit:
                self._rows.popitem(last=False)

    def remember_alignments(self, pairs: Sequence[tuple[str, str]], alignments: Sequence) -> None:
        """Keep the rows of ``align_problems`` alignments already made of ``(text_a, text_b)`` problem pairs, so
        that ``alignment_features("problem", pairs, rows=self)`` does not align them again (compare, then QRC)."""
        self.put_many(
            {pair_key("problem", a, b): alignment.feature_vector() for (a, b), alignment in zip(pairs, alignments)}
        )

    def __contains__(self, key: bytes) -> bool:
        with self._lock:
            return key in self._rows

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)


TRAINING_ROWS = AlignmentRows()  # a training run's rows: an epoch after the first, or the dev pass, aligns nothing


def alignment_rows(against: str, pairs: Sequence[tuple[str, str]], **options) -> dict[bytes, np.ndarray]:
    """``{key: row}`` of every feature (``available_features(against)``) of ``pairs``, keyed as
    ``alignment_features`` looks rows up: what a pack of training data stores (``models.packed_features``).
    ``options`` are ``alignment_features``' (``parse``, ``show_progress``)."""
    pairs = list(dict.fromkeys(tuple(p) for p in pairs))
    rows = alignment_features(against, pairs, names=available_features(against), **options)
    return {pair_key(against, *pair): row for pair, row in zip(pairs, rows)}


def feature_names(against: str) -> tuple[str, ...]:
    """The named features of pairs whose second text is a ``"problem"`` or a ``"solution"``."""
    _check_against(against)
    return SOLUTION_FEATURES if against == "solution" else ALIGNMENT_FEATURES


def available_features(against: str) -> tuple[str, ...]:
    """Every feature computed for pairs whose second text is ``against``: ``feature_names(against)``, and for
    a solution the solution graph's ``SOLUTION_GRAPH_FEATURES`` and the step findings' ``STEP_FINDING_FEATURES``
    after them."""
    return feature_names(against) + (SOLUTION_GRAPH_FEATURES + STEP_FINDING_FEATURES if against == "solution" else ())


def alignment_features(
    against: str,
    pairs: Sequence[tuple[str, str]],
    parse: Callable | None = None,
    show_progress: bool = False,
    names: Sequence[str] | None = None,
    rows: AlignmentRows | None = None,
) -> np.ndarray:
    """``[n, F]`` float64 features of ``(text_a, text_b)`` pairs whose ``text_b`` is ``against`` (module docstring).

    ``parse`` maps a list of texts to graphs (default: ``parsers.graph_cache.parse_cached``). ``names``: the
    columns, in order, from ``available_features(against)`` (default ``feature_names(against)``). A pair that
    is not two non-empty texts, or a name this mathgraph does not compute, raises ``ValueError``. ``rows``:
    where rows already computed are read and new ones kept (default: ``TRAINING_ROWS``).
    """
    _check_against(against)
    available = available_features(against)
    names = feature_names(against) if names is None else tuple(names)
    unknown = [name for name in names if name not in available]
    if unknown:
        raise ValueError(f"unknown {against} alignment features {unknown}: this mathgraph computes {list(available)}")
    columns = [available.index(name) for name in names]
    solution = against == "solution"
    pairs = [tuple(p) for p in pairs]
    if any(len(p) != 2 or not all(isinstance(t, str) and t.strip() for t in p) for p in pairs):
        raise ValueError("alignment features need (text_a, text_b) pairs of non-empty texts")
    keys = [pair_key(against, *p) for p in pairs]
    rows = TRAINING_ROWS if rows is None else rows
    # a row kept before features were added (a pack of training data made then) is shorter: computed again
    known = {key: row for key, row in rows.get_many(keys).items() if len(row) == len(available)}
    missing = sorted({p for p, key in zip(pairs, keys) if key not in known})
    if missing:
        if parse is None:
            from mathgraph.parsers.graph_cache import parse_cached

            parse = lambda texts: parse_cached(texts, show_progress=show_progress)  # noqa: E731
        # a solution is read as text (align_solution); only problems are parsed
        texts = sorted({a for a, _ in missing} | (set() if solution else {b for _, b in missing}))
        graphs = dict(zip(texts, parse(texts)))
        for a, b in missing:
            if solution:
                check = check_solution(graphs[a], b, verifier=None)  # the rules, as solution_graph_features
                graph_row = graph_features(check)
                row = (
                    align_solution(graphs[a], b).feature_vector()
                    + [graph_row[k] for k in SOLUTION_GRAPH_FEATURES]
                    + list(step_finding_features(check).values())
                )
            else:
                row = align_problems(graphs[a], graphs[b]).feature_vector()
            key = pair_key(against, a, b)
            known[key] = np.asarray(row, dtype=np.float64)
            rows.put_many({key: known[key]})
    if not pairs:
        return np.zeros((0, len(columns)))
    return np.stack([known[key] for key in keys])[:, columns]


def candidate_features(pairs: Sequence[tuple[str, str]], parse: Callable | None = None) -> np.ndarray:
    """``[n, len(CANDIDATE_FEATURES)]`` float64 features of ``(question, solution)`` pairs that no shipped model
    reads yet (``CANDIDATE_FEATURES``), from the rules' check of each solution (``check_solution(...,
    verifier=None)``, as ``alignment_features`` checks it). ``parse`` maps a list of texts to graphs (default:
    ``parsers.graph_cache.parse_cached``). A pair that is not two non-empty texts raises ``ValueError``."""
    pairs = [tuple(p) for p in pairs]
    if any(len(p) != 2 or not all(isinstance(t, str) and t.strip() for t in p) for p in pairs):
        raise ValueError("candidate features need (question, solution) pairs of non-empty texts")
    if not pairs:
        return np.zeros((0, len(CANDIDATE_FEATURES)))
    if parse is None:
        from mathgraph.parsers.graph_cache import parse_cached

        parse = parse_cached
    texts = sorted({a for a, _ in pairs})
    graphs = dict(zip(texts, parse(texts)))
    rows = []
    for a, b in pairs:
        check = check_solution(graphs[a], b, verifier=None)
        kinds = [float(sum(f.kind == kind for f in check.findings)) for kind in ("inverse_operation", "answer_unit")]
        rows.append(kinds + list(fit_features(check).values()))
    return np.asarray(rows, dtype=np.float64)


def step_finding_features(check: SolutionCheck, verifier="auto") -> dict[str, float]:
    """``{name: value}`` of ``STEP_FINDING_FEATURES`` for a solution checked by the rules alone
    (``check_solution(problem, solution, verifier=None)``); ``verifier`` adds its ``suspect_step`` findings and
    its highest line probability ("auto": the packaged step verifier, where its weights load; ``None``: none,
    and the probability is NaN).

    ``findings_answer_unexplained`` is 1 when the final answer is missing, or is neither a value of the problem
    nor the result of a calculation whose operands all trace back, through earlier results, to the problem's
    quantities or known constants (an operand that comes from nowhere breaks the chain)."""
    verifier = _step_verifier() if isinstance(verifier, str) and verifier == "auto" else verifier
    probabilities = verifier.line_probabilities(check) if verifier is not None and check.graph.steps else {}
    if verifier is not None:
        check = with_verifier(check, verifier)
    graph = check.graph
    features = {f"findings_{kind}": float(sum(f.kind == kind for f in check.findings)) for kind in FINDING_COUNTED}
    # the count the shipped models learnt: quantities no calculation uses (the warning now also spares a quantity
    # the solution only writes, in an equation with an unknown)
    no_work = features["findings_no_work"] > 0
    unused = len(graph.problem.quantities()) - len(graph.used_quantities())
    features["findings_unused_quantity"] = 0.0 if no_work else float(unused)
    lines = [step.index for step in graph.steps] + ([graph.answer_line] if graph.answer_line is not None else [])
    n_lines = max(lines) + 1 if lines else 0
    flagged = {f.step for f in check.errors() if f.step is not None}
    features["findings_share_lines_flagged"] = len(flagged) / n_lines if n_lines else 0.0
    first = check.first_error_step
    features["findings_first_error_position"] = (first + 1) / max(n_lines, first + 1) if first is not None else 0.0
    features["findings_answer_unexplained"] = float(_answer_unexplained(graph))
    features["findings_verifier_max_probability"] = (
        max(probabilities.values()) if probabilities else (0.0 if verifier is not None else float("nan"))
    )
    return features


def _answer_unexplained(graph) -> bool:
    """Whether the answer is not reached from the problem's numbers (``step_finding_features``)."""
    if graph.answer is None:
        return True
    given = problem_values(graph.problem)
    if graph.answer in given:
        return False
    rooted: set = set()  # results of calculations whose operands all trace back to the problem or constants
    for _, calculation in graph.calculations():
        if all(
            o.source in ("problem", "constant") or (o.source == "step" and (o.value in rooted or o.value in given))
            for o in calculation.operands
        ):
            rooted.add(calculation.result)
            if calculation.computed is not None:
                rooted.add(calculation.computed)
    return graph.answer not in rooted


_VERIFIER: list = []


def _step_verifier():
    """The packaged step verifier, loaded once; ``None`` where its weights are missing or do not load."""
    if not _VERIFIER:
        from mathgraph.parsers.step_verifier import WEIGHTS, StepVerifier

        try:
            _VERIFIER.append(StepVerifier.load(WEIGHTS))
        except (OSError, ValueError, KeyError):  # not installed, or fitted on other line features
            _VERIFIER.append(None)
    return _VERIFIER[0]


def _check_against(against: str) -> None:
    if against not in AGAINST:
        raise ValueError(f"the second text of a pair is one of {AGAINST}, not {against!r}")


__all__ = [
    "alignment_features",
    "alignment_rows",
    "step_finding_features",
    "STEP_FINDING_FEATURES",
    "CANDIDATE_FEATURES",
    "candidate_features",
    "AlignmentRows",
    "pair_key",
    "TRAINING_ROWS",
    "feature_names",
    "available_features",
    "AGAINST",
]
