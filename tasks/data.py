"""Task data: validated readers, builders of QRC/QAM/SQR files, and leak-free splits.

File formats (JSONL, one example per line):

- KPC: any JSONL with a text and a label field (MATH: ``problem`` -> ``subject``).
- QRC pairs: ``{"id", "group", "text_a", "text_b", "label"}``; ``text_a`` is a seed
  problem, ``text_b`` one of its GSM-Plus variants (label: the perturbation type)
  or a question of another seed (label ``"irrelevant"``).
- QAM pairs: ``{"id", "group", "text_a", "text_b", "label"}``; a question (``text_a``)
  with a solution (``text_b``) that solves it (label 1) or does not (label 0). From
  GSM8K (``build_qam_pairs``): each question with its own solution and the solution
  of its most TF-IDF-similar other question (or a random one). From GSM-Plus
  (``build_qam_number_swap``): seed and variant questions with their own solutions
  (1) and crossed with each other's (0).
- SQR lists: ``{"id", "group", "query", "candidates", "relevance"}``; ``query`` is a
  seed problem, ``candidates`` its variants and the variants of other seeds most
  TF-IDF-similar to it, shuffled, and ``relevance`` one graded label per candidate
  (``SQR_RELEVANCE``): 2 for variants that keep the seed's solution steps, 1 for
  variants that change them, 0 for critical-thinking variants and other seeds'
  variants. Every list has at least one candidate of relevance 2. ``load_sqr`` also
  reads the older ``"relevant"`` field (indices of the relevant candidates) as
  relevance 2 at those indices and 0 elsewhere.

``group`` names the seed (``seed-017``: the 18th seed in first-appearance order)
or question (``q-00017``), so that a split never puts one seed in two parts.
Every builder is deterministic for a given ``random_state`` and uses its own
``random.Random``.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from mathgraph.errors import UserError
from mathgraph.jsonl import JsonlError, atomic_writer, read_rows, write_jsonl
from mathgraph.models.examples import KpcExample, QamPair, QrcPair, SqrList
from mathgraph.models.task_heads import TaskHead, get_task_head
from mathgraph.task_specs import check_candidates, row_input

logger = logging.getLogger(__name__)

PERTURBATION_TYPES = (
    "numerical substitution",
    "digit expansion",
    "integer-decimal-fraction conversion",
    "adding operation",
    "reversing operation",
    "problem understanding",
    "distraction insertion",
    "critical thinking",
)
IRRELEVANT = "irrelevant"
QRC_LABELS = PERTURBATION_TYPES + (IRRELEVANT,)
# SQR relevance of a seed's own variants by perturbation type (README, "SQR, graded"): 2 when the
# variant is solved by the seed's steps with another surface, 1 when the steps change, 0 for critical
# thinking (the variant drops information the seed needs: it can no longer be solved as posed).
# Variants of other seeds are always 0.
SQR_RELEVANCE = {
    "numerical substitution": 2,
    "digit expansion": 2,
    "integer-decimal-fraction conversion": 2,
    "problem understanding": 2,
    "distraction insertion": 2,
    "adding operation": 1,
    "reversing operation": 1,
    "critical thinking": 0,
}
SQR_MAX_RELEVANCE = 2
SQR_OTHER_SEEDS = 4  # variants of other seeds per list, the most TF-IDF-similar to the query
SQR_MIN_CANDIDATES, SQR_MAX_CANDIDATES = 6, 15  # a full list is 8 variants + 4 others = 12
# GSM-Plus variants whose solution is the seed's with other numbers or steps: the QAM number-swap pairs.
QAM_SWAP_TYPES = (
    "numerical substitution",
    "digit expansion",
    "integer-decimal-fraction conversion",
    "adding operation",
    "reversing operation",
)
VARIANT_FIELDS = ("question", "perturbation_type", "seed_question")
SPLITS = ("train", "dev", "test")


# ---------------------------------------------------------------- reading


def _valid_rows(
    path: str | PathLike, fields: Sequence[str], skip_bad: bool = False, check: Callable[[dict], None] | None = None
) -> tuple[list[dict], list[JsonlError]]:
    """``mathgraph.jsonl.read_rows`` without the line numbers."""
    numbered, bad = read_rows(path, fields, skip_bad, check)
    return [row for _, row in numbered], bad


def load_kpc(
    path: str | PathLike, text_field: str = "problem", label_field: str = "subject", skip_bad: bool = False
) -> list[KpcExample]:
    """Knowledge-point examples: ``text_field`` -> ``label_field`` (both non-empty strings)."""
    rows, bad = _valid_rows(path, (text_field, label_field), skip_bad)
    _log_skipped(path, bad)
    return [KpcExample(row[text_field], row[label_field]) for row in rows]


def load_qrc(path: str | PathLike, skip_bad: bool = False) -> list[QrcPair]:
    """QRC pairs; ids must be unique, labels non-empty strings."""
    rows, bad = _valid_rows(path, ("id", "group", "text_a", "text_b", "label"), skip_bad, _unique_ids())
    _log_skipped(path, bad)
    return [QrcPair(r["id"], r["group"], r["text_a"], r["text_b"], r["label"]) for r in rows]


def load_qam(path: str | PathLike, skip_bad: bool = False) -> list[QamPair]:
    """QAM pairs; ids must be unique, labels the integers 0 or 1."""
    unique = _unique_ids()

    def check(row: dict) -> None:
        label = row.get("label")
        if type(label) is not int or label not in (0, 1):
            raise UserError(f"field 'label' must be the integer 0 or 1, got {label!r}")
        unique(row)

    rows, bad = _valid_rows(path, ("id", "group", "text_a", "text_b"), skip_bad, check)
    _log_skipped(path, bad)
    return [QamPair(r["id"], r["group"], r["text_a"], r["text_b"], r["label"]) for r in rows]


def load_sqr(path: str | PathLike, skip_bad: bool = False) -> list[SqrList]:
    """SQR lists of 6..15 candidate strings, each graded 0..2 in ``relevance``, at least one graded 2.

    Rows in the older format, ``"relevant"``: distinct indices of the relevant candidates, are read as
    relevance 2 at those indices and 0 elsewhere (``relevance`` wins when a row has both).
    """
    unique = _unique_ids()

    def check(row: dict) -> None:
        sqr_relevance(row)
        unique(row)

    rows, bad = _valid_rows(path, ("id", "group", "query"), skip_bad, check)
    _log_skipped(path, bad)
    return [SqrList(r["id"], r["group"], r["query"], tuple(r["candidates"]), sqr_relevance(r)) for r in rows]


def load_task(
    task: str, path: str | PathLike, text_field: str = "problem", label_field: str = "subject", skip_bad: bool = False
) -> list:
    """The validated examples of ``task``'s JSONL file: KPC reads ``text_field`` -> ``label_field``, the other
    tasks' files have the fixed fields of the module docstring. ``ValueError`` for an unknown task."""
    if task == "kpc":
        return load_kpc(path, text_field, label_field, skip_bad)
    loaders = {"qrc": load_qrc, "qam": load_qam, "sqr": load_sqr}
    if task not in loaders:
        raise ValueError(f"unknown task {task!r}; choose one of {('kpc', *loaders)}")
    return loaders[task](path, skip_bad)


def sqr_relevance(row: dict) -> tuple[int, ...]:
    """The validated graded relevance of an SQR row, one int in 0..2 per candidate.

    Reads ``relevance`` or, in the older format, ``relevant`` (indices -> 2 there, 0 elsewhere); raises
    ``ValueError`` naming the problem (candidates not 6..15 non-empty strings, lengths that differ, grades
    outside 0..2, no candidate of relevance 2).
    """
    candidates = row.get("candidates")
    if not isinstance(candidates, list) or not all(isinstance(c, str) and c.strip() for c in candidates):
        raise UserError("field 'candidates' must be a list of non-empty strings")
    if not SQR_MIN_CANDIDATES <= len(candidates) <= SQR_MAX_CANDIDATES:
        raise UserError(f"{len(candidates)} candidates; a list needs {SQR_MIN_CANDIDATES} to {SQR_MAX_CANDIDATES}")
    if "relevance" in row:
        relevance = row["relevance"]
        if not isinstance(relevance, list) or not all(type(r) is int for r in relevance):
            raise UserError("field 'relevance' must be a list of integers, one per candidate")
        if len(relevance) != len(candidates):
            raise UserError(f"field 'relevance' has {len(relevance)} grades for {len(candidates)} candidates")
        if not all(0 <= r <= SQR_MAX_RELEVANCE for r in relevance):
            raise UserError(f"field 'relevance' must hold grades 0..{SQR_MAX_RELEVANCE}, got {relevance}")
    elif "relevant" in row:
        relevant = row["relevant"]
        if not isinstance(relevant, list) or not relevant or not all(type(i) is int for i in relevant):
            raise UserError("field 'relevant' must be a non-empty list of integers")
        if len(set(relevant)) != len(relevant) or not all(0 <= i < len(candidates) for i in relevant):
            raise UserError(f"field 'relevant' must hold distinct indices in 0..{len(candidates) - 1}, got {relevant}")
        relevance = [SQR_MAX_RELEVANCE if i in set(relevant) else 0 for i in range(len(candidates))]
    else:
        raise UserError("no field 'relevance' (one grade 0..2 per candidate) or old-format 'relevant'")
    if SQR_MAX_RELEVANCE not in relevance:
        raise UserError(f"field 'relevance' has no candidate of relevance {SQR_MAX_RELEVANCE}")
    return tuple(relevance)


def _unique_ids() -> Callable[[dict], None]:
    seen: set[str] = set()

    def check(row: dict) -> None:
        if row.get("id") in seen:
            raise UserError(f"duplicate id {row['id']!r}")
        seen.add(row.get("id"))

    return check


def _log_skipped(path: str | PathLike, bad: list[JsonlError]) -> None:
    if bad:
        logger.warning("%s: skipped %d bad rows, first: %s", path, len(bad), bad[0])


# ---------------------------------------------------------------- GSM-Plus seeds


@dataclass(frozen=True)
class Seed:
    """A GSM-Plus seed problem and its variants as ``(perturbation_type, question)`` in file order."""

    group: str
    question: str
    variants: tuple[tuple[str, str], ...]


def group_seeds(rows: Iterable[dict]) -> list[Seed]:
    """Group GSM-Plus rows by ``seed_question``, seeds numbered in first-appearance order."""
    variants: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        variants.setdefault(row["seed_question"], []).append((row["perturbation_type"], row["question"]))
    return [Seed(f"seed-{i:03d}", question, tuple(v)) for i, (question, v) in enumerate(variants.items())]


def read_seeds(path: str | PathLike, skip_bad: bool = False) -> tuple[list[Seed], list[JsonlError]]:
    """The seeds of a GSM-Plus variants file (``group_seeds``) and its skipped rows; needs 2 seeds or more."""
    rows, bad = _valid_rows(path, VARIANT_FIELDS, skip_bad)
    seeds = group_seeds(rows)
    if len(seeds) < 2:
        raise UserError(f"{path}: {len(seeds)} seed problems; the tasks need at least 2")
    return seeds, bad


# ---------------------------------------------------------------- builders


def build_qrc_pairs(seeds: Sequence[Seed], random_state: int = 0, irrelevant_per_seed: int = 1) -> list[dict]:
    """Each seed with each of its variants (label: perturbation type) and with
    ``irrelevant_per_seed`` random questions (seed or variant) of other seeds (label: irrelevant)."""
    if irrelevant_per_seed < 0:
        raise UserError("irrelevant_per_seed must be >= 0")
    rng = random.Random(random_state)
    pairs = []
    for s in seeds:
        for k, (kind, question) in enumerate(s.variants):
            pairs.append(
                {"id": f"qrc-{s.group}-v{k}", "group": s.group, "text_a": s.question, "text_b": question, "label": kind}
            )
        others = [q for o in seeds if o.group != s.group for q in (o.question, *(v for _, v in o.variants))]
        others = [q for q in dict.fromkeys(others) if q != s.question and q not in {v for _, v in s.variants}]
        if irrelevant_per_seed > len(others):
            raise UserError(f"{irrelevant_per_seed} irrelevant pairs per seed, but only {len(others)} other questions")
        for k, question in enumerate(rng.sample(others, irrelevant_per_seed)):
            pairs.append(
                {
                    "id": f"qrc-{s.group}-i{k}",
                    "group": s.group,
                    "text_a": s.question,
                    "text_b": question,
                    "label": IRRELEVANT,
                }
            )
    return pairs


QAM_NEGATIVES = ("hard", "random")


def build_qam_pairs(
    rows: Sequence[dict],
    random_state: int = 0,
    negatives: str = "hard",
    question_field: str = "question",
    solution_field: str = "answer",
) -> list[dict]:
    """Each question with its own solution (1) and one other question's solution (0); group ``q-NNNNN``.

    ``negatives="hard"``: the solution of the most TF-IDF-similar other question (cosine over the question
    texts, ties to the earlier row); ``"random"``: the solution of a random other question. Either way the
    negative is never the question's own solution text nor that of a question with the same text, so a
    negative cannot be a correct solution copied elsewhere in the file. ``random_state`` drives the random choice.
    """
    if negatives not in QAM_NEGATIVES:
        raise UserError(f"negatives must be one of {QAM_NEGATIVES}, got {negatives!r}")
    questions = [row[question_field] for row in rows]
    solutions = [row[solution_field] for row in rows]
    if len(set(solutions)) < 2:
        raise UserError(
            f"{len(rows)} questions with {len(set(solutions))} distinct solutions; QAM negatives need at least 2"
        )
    if negatives == "hard":
        partners = _most_similar_others(questions, solutions)
    else:
        rng = random.Random(random_state)
        partners = []
        for i in range(len(rows)):

            def allowed(j: int, i: int = i) -> bool:
                return solutions[j] != solutions[i] and questions[j] != questions[i]

            draws = (rng.randrange(len(rows)) for _ in range(100))
            j = next((j for j in draws if allowed(j)), None)
            if j is None:  # almost every other row is excluded: draw from the allowed ones
                choices = [j for j in range(len(rows)) if allowed(j)]
                if not choices:
                    raise UserError(f"question {i} has no other question with a different solution")
                j = rng.choice(choices)
            partners.append(j)
    pairs = []
    for i, (question, solution) in enumerate(zip(questions, solutions)):
        group = f"q-{i:05d}"
        pairs.append({"id": f"qam-{i:05d}-pos", "group": group, "text_a": question, "text_b": solution, "label": 1})
        pairs.append(
            {"id": f"qam-{i:05d}-neg", "group": group, "text_a": question, "text_b": solutions[partners[i]], "label": 0}
        )
    return pairs


def _most_similar_others(questions: Sequence[str], solutions: Sequence[str], chunk: int = 512) -> list[int]:
    """For each question, the index of its most TF-IDF-similar other question whose text and solution differ
    from its own (cosine; first index on ties). Computed ``chunk`` rows at a time to bound memory."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectors = TfidfVectorizer(sublinear_tf=True).fit_transform(questions)  # rows L2-normalised: dot = cosine
    question_ids = np.unique(np.asarray(questions, dtype=object), return_inverse=True)[1]
    solution_ids = np.unique(np.asarray(solutions, dtype=object), return_inverse=True)[1]
    partners: list[int] = []
    for start in range(0, len(questions), chunk):
        stop = min(start + chunk, len(questions))
        similarity = (vectors[start:stop] @ vectors.T).toarray()
        excluded = (solution_ids[start:stop, None] == solution_ids[None, :]) | (
            question_ids[start:stop, None] == question_ids[None, :]
        )
        similarity[excluded] = -np.inf
        best = similarity.argmax(axis=1)
        for offset, j in enumerate(best):
            if not np.isfinite(similarity[offset, j]):
                raise UserError(f"question {start + offset} has no other question with a different solution")
        partners.extend(int(j) for j in best)
    return partners


QAM_SWAP_FIELDS = ("question", "solution", "perturbation_type", "seed_question", "seed_solution")


def build_qam_number_swap(variant_rows: Iterable[dict], types: Sequence[str] = QAM_SWAP_TYPES) -> list[dict]:
    """GSM-Plus number-swap QAM pairs, grouped by seed (``seed-NNN`` as in ``group_seeds``).

    For each variant whose ``perturbation_type`` is in ``types`` (default: the five that change numbers or
    steps): positive (variant question, variant solution), negatives (variant question, seed solution) and
    (seed question, variant solution): near-identical wording with the other problem's numbers. Each seed
    with at least one such variant also gives its own positive (seed question, seed solution), once.
    Variants whose question or solution text equals the seed's are skipped (their crossed pairs would be
    correct). Rows need the fields of ``QAM_SWAP_FIELDS``; pairs come in file order.
    """
    variant_rows = list(variant_rows)
    for number, row in enumerate(variant_rows, 1):
        missing = [f for f in QAM_SWAP_FIELDS if not isinstance(row.get(f), str) or not row[f].strip()]
        if missing:
            raise UserError(f"variant row {number}: no text in field(s) {', '.join(missing)}")
    groups = {s.question: s.group for s in group_seeds(variant_rows)}
    by_seed: dict[str, list[tuple[int, dict]]] = {}
    for row in variant_rows:
        members = by_seed.setdefault(row["seed_question"], [])
        members.append((len(members), row))
    kinds = set(types)
    pairs = []
    for seed_question, members in by_seed.items():
        group = groups[seed_question]
        seed_solution = members[0][1]["seed_solution"]
        usable = [
            (k, r)
            for k, r in members
            if r["perturbation_type"] in kinds
            and r["solution"] != r["seed_solution"]
            and r["question"] != seed_question
        ]
        if not usable:
            continue
        pairs.append(
            {"id": f"qam-{group}-pos", "group": group, "text_a": seed_question, "text_b": seed_solution, "label": 1}
        )
        for k, row in usable:
            prefix = f"qam-{group}-v{k}"
            pairs += [
                {
                    "id": f"{prefix}-pos",
                    "group": group,
                    "text_a": row["question"],
                    "text_b": row["solution"],
                    "label": 1,
                },
                {
                    "id": f"{prefix}-neg-seed-solution",
                    "group": group,
                    "text_a": row["question"],
                    "text_b": row["seed_solution"],
                    "label": 0,
                },
                {
                    "id": f"{prefix}-neg-seed-question",
                    "group": group,
                    "text_a": seed_question,
                    "text_b": row["solution"],
                    "label": 0,
                },
            ]
    if not pairs:
        raise UserError(f"no variants of types {sorted(kinds)} with their own solution text")
    return pairs


def build_sqr_lists(
    seeds: Sequence[Seed],
    random_state: int = 0,
    other_seeds: int = SQR_OTHER_SEEDS,
    relevance: dict[str, int] = SQR_RELEVANCE,
) -> list[dict]:
    """One graded candidate list per seed problem (the query), the README's SQR definition.

    Candidates: the seed's variants, graded by ``relevance[perturbation_type]`` (``SQR_RELEVANCE``: 2 same
    steps, 1 changed steps, 0 critical thinking), and the ``other_seeds`` variants of other seeds closest to
    the query by TF-IDF cosine (relevance 0; ties to the earlier variant in file order), shuffled with
    ``random.Random(seed)``. A variant text that occurs twice among a seed's variants is kept once with its
    highest grade. Raises ``ValueError`` for an unknown perturbation type, a seed without a variant of
    relevance 2, or a list outside ``SQR_MIN_CANDIDATES..SQR_MAX_CANDIDATES``.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import linear_kernel

    if other_seeds < 0:
        raise UserError(f"other_seeds must be >= 0, got {other_seeds}")
    unknown = sorted({kind for s in seeds for kind, _ in s.variants} - relevance.keys())
    if unknown:
        raise UserError(f"no SQR relevance for perturbation type(s) {unknown}")
    pool = [(s.group, q) for s in seeds for _, q in s.variants]
    pool_texts = [q for _, q in pool]
    vectorizer = TfidfVectorizer(sublinear_tf=True).fit([s.question for s in seeds] + pool_texts)
    similarity = linear_kernel(vectorizer.transform([s.question for s in seeds]), vectorizer.transform(pool_texts))
    rng = random.Random(random_state)
    lists = []
    for row_index, s in enumerate(seeds):
        own: dict[str, int] = {}
        for kind, question in s.variants:
            own[question] = max(own.get(question, 0), relevance[kind])
        if SQR_MAX_RELEVANCE not in own.values():
            raise UserError(f"{s.group} has no variant of relevance {SQR_MAX_RELEVANCE}")
        others = [j for j, (g, q) in enumerate(pool) if g != s.group and q not in own and q != s.question]
        # Ties broken by pool position, so the choice does not depend on sort stability.
        ranked = sorted(others, key=lambda j: (-similarity[row_index, j], j))
        distractors = list(dict.fromkeys(pool_texts[j] for j in ranked))[:other_seeds]
        if len(distractors) < other_seeds:
            raise UserError(f"{s.group}: {len(distractors)} variants of other seeds, {other_seeds} needed")
        candidates = list(own.items()) + [(q, 0) for q in distractors]
        if not SQR_MIN_CANDIDATES <= len(candidates) <= SQR_MAX_CANDIDATES:
            raise UserError(
                f"{s.group}: {len(candidates)} candidates; a list needs "
                f"{SQR_MIN_CANDIDATES} to {SQR_MAX_CANDIDATES} (change --other-seeds)"
            )
        rng.shuffle(candidates)
        lists.append(
            {
                "id": f"sqr-{s.group}",
                "group": s.group,
                "query": s.question,
                "candidates": [q for q, _ in candidates],
                "relevance": [r for _, r in candidates],
            }
        )
    return lists


# ---------------------------------------------------------------- splits


def split_by_group(
    rows: Sequence[dict], group_field: str, dev: float = 0.1, test: float = 0.1, seed: int = 0
) -> dict[str, list[dict]]:
    """Split whole groups: ``dev`` and ``test`` are fractions of the groups (rounded).

    Rows keep their input order within each split; no group is in two splits.
    """
    _check_fractions(dev, test)
    groups = list(dict.fromkeys(row[group_field] for row in rows))
    random.Random(seed).shuffle(groups)
    n_test, n_dev = round(test * len(groups)), round(dev * len(groups))
    if groups and n_test + n_dev >= len(groups):
        raise UserError(f"{len(groups)} groups are too few for dev={dev} and test={test}")
    part = {g: "test" for g in groups[:n_test]}
    part.update({g: "dev" for g in groups[n_test : n_test + n_dev]})
    splits: dict[str, list[dict]] = {name: [] for name in SPLITS}
    for row in rows:
        splits[part.get(row[group_field], "train")].append(row)
    return splits


def split_rows(
    rows: Sequence[dict], dev: float = 0.1, test: float = 0.1, seed: int = 0, stratify_field: str | None = None
) -> dict[str, list[dict]]:
    """Split single rows, stratified by ``stratify_field`` when given (scikit-learn's
    ``train_test_split``). Rows keep their input order within each split."""
    from sklearn.model_selection import train_test_split

    _check_fractions(dev, test)
    indices = list(range(len(rows)))
    labels = [rows[i][stratify_field] for i in indices] if stratify_field else None
    test_part: list[int] = []
    if test > 0:
        indices, test_part = train_test_split(indices, test_size=test, random_state=seed, stratify=labels)
    dev_part: list[int] = []
    if dev > 0:
        rest_labels = [rows[i][stratify_field] for i in indices] if stratify_field else None
        indices, dev_part = train_test_split(
            indices, test_size=dev / (1 - test), random_state=seed, stratify=rest_labels
        )
    return {name: [rows[i] for i in sorted(part)] for name, part in zip(SPLITS, (indices, dev_part, test_part))}


def _check_fractions(dev: float, test: float) -> None:
    if dev < 0 or test < 0 or dev + test >= 1:
        raise UserError(f"need dev >= 0, test >= 0 and dev + test < 1, got dev={dev}, test={test}")


def split_file(
    path: str | PathLike,
    dev: float = 0.1,
    test: float = 0.1,
    seed: int = 0,
    group_field: str | None = None,
    stratify_field: str | None = None,
    output_dir: str | PathLike | None = None,
    skip_bad: bool = False,
) -> tuple[dict[str, Path], dict[str, list[dict]], list[JsonlError]]:
    """Split a JSONL file into ``STEM.train.jsonl``, ``STEM.dev.jsonl`` and ``STEM.test.jsonl``
    (next to it, or in ``output_dir``); returns the paths, the splits and the skipped rows."""
    if group_field and stratify_field:
        raise UserError("--group-field and --stratify-field do not combine; give one")

    def check(row: dict) -> None:
        if stratify_field:
            if stratify_field not in row:
                raise UserError(f"no field {stratify_field!r} to stratify by")
            if isinstance(row[stratify_field], (dict, list)) or row[stratify_field] is None:
                raise UserError(f"field {stratify_field!r} must be a string or number")

    rows, bad = _valid_rows(path, (group_field,) if group_field else (), skip_bad, check)
    if group_field:
        splits = split_by_group(rows, group_field, dev, test, seed)
    else:
        splits = split_rows(rows, dev, test, seed, stratify_field)
    source = Path(path)
    stem = source.name[: -len(".jsonl")] if source.name.endswith(".jsonl") else source.stem
    directory = Path(output_dir) if output_dir else source.parent
    directory.mkdir(parents=True, exist_ok=True)
    paths = {name: directory / f"{stem}.{name}.jsonl" for name in SPLITS}
    for name in SPLITS:
        write_rows(paths[name], splits[name])
    return paths, splits, bad


# ---------------------------------------------------------------- writing and summaries


def write_rows(path: str | PathLike, rows: Iterable[dict]) -> int:
    """Write rows as JSONL atomically; returns how many."""
    with atomic_writer(path) as f:
        return write_jsonl(f, rows)


def count_summary(rows: Iterable[dict], field: str) -> str:
    """``"a: 3, b: 1"``: how many rows hold each value of ``field``, most common first."""
    counts = Counter(str(row[field]) for row in rows)
    return ", ".join(f"{value}: {n}" for value, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


# ---------------------------------------------------------------- prediction files
def read_inputs(
    task: str | TaskHead, path: str | PathLike, text_field: str = "problem", skip_bad: bool = False
) -> tuple[list[tuple[int, dict]], list, list[JsonlError]]:
    """``(line, row)`` of the good rows of a JSONL file in the task's format (see the module docstring),
    their inputs, and the bad rows (raised as ``JsonlError`` unless ``skip_bad``)."""
    task = get_task_head(task) if isinstance(task, str) else task
    kind = task.input_shape
    fields = task.definition.input_fields(text_field)

    rows, bad = read_rows(path, fields, skip_bad, check_candidates if kind == "ranker" else None)
    inputs = [row_input(kind, row, text_field) for _, row in rows]
    return rows, inputs, bad
