"""Task data: validated readers, builders of QRC/QAM/SQR files, and leak-free splits.

File formats (JSONL, one example per line):

- KPC: any JSONL with a text and a label field (MATH: ``problem`` -> ``subject``).
- QRC pairs: ``{"id", "group", "text_a", "text_b", "label"}``; ``text_a`` is a seed
  problem, ``text_b`` one of its GSM-Plus variants (label: the perturbation type)
  or a question of another seed (label ``"irrelevant"``).
- QAM pairs: ``{"id", "group", "text_a", "text_b", "label"}``; a question with its
  own solution (label 1) or the solution of another question (label 0).
- SQR lists: ``{"id", "group", "query", "candidates", "relevant"}``; ``relevant``
  holds indices into ``candidates`` of the query's own variants.

``group`` names the seed (``seed-017``: the 18th seed in first-appearance order)
or question (``q-00017``), so that a split never puts one seed in two parts.
Every builder is deterministic for a given ``seed`` and uses its own
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

from mathgraph.jsonl import JsonlError, atomic_writer, write_jsonl
from mathgraph.jsonl import read_rows as read_numbered_rows

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
# Critical-thinking variants drop information the seed needs, so they are not
# "the same problem" for recommendation; they stay usable as distractors of other seeds.
SQR_EXCLUDED_TYPES = frozenset({"critical thinking"})
SQR_MIN_CANDIDATES, SQR_MAX_CANDIDATES = 6, 15
VARIANT_FIELDS = ("question", "perturbation_type", "seed_question")
SPLITS = ("train", "dev", "test")


# ---------------------------------------------------------------- reading


def read_rows(
    path: str | PathLike,
    fields: Sequence[str],
    skip_bad: bool = False,
    check: Callable[[dict], None] | None = None,
) -> tuple[list[dict], list[JsonlError]]:
    """The rows of a JSONL file whose ``fields`` all hold non-empty strings (see ``mathgraph.jsonl.read_rows``)."""
    rows, bad = read_numbered_rows(path, fields, skip_bad, check)
    return [row for _, row in rows], bad


@dataclass(frozen=True)
class KpcExample:
    text: str
    label: str


@dataclass(frozen=True)
class QrcPair:
    id: str
    group: str
    text_a: str
    text_b: str
    label: str


@dataclass(frozen=True)
class QamPair:
    id: str
    group: str
    text_a: str
    text_b: str
    label: int


@dataclass(frozen=True)
class SqrList:
    id: str
    group: str
    query: str
    candidates: tuple[str, ...]
    relevant: tuple[int, ...]


def load_kpc(
    path: str | PathLike, text_field: str = "problem", label_field: str = "subject", skip_bad: bool = False
) -> list[KpcExample]:
    """Knowledge-point examples: ``text_field`` -> ``label_field`` (both non-empty strings)."""
    rows, bad = read_rows(path, (text_field, label_field), skip_bad)
    _log_skipped(path, bad)
    return [KpcExample(row[text_field], row[label_field]) for row in rows]


def load_qrc(path: str | PathLike, skip_bad: bool = False) -> list[QrcPair]:
    """QRC pairs; ids must be unique, labels non-empty strings."""
    rows, bad = read_rows(path, ("id", "group", "text_a", "text_b", "label"), skip_bad, _unique_ids())
    _log_skipped(path, bad)
    return [QrcPair(r["id"], r["group"], r["text_a"], r["text_b"], r["label"]) for r in rows]


def load_qam(path: str | PathLike, skip_bad: bool = False) -> list[QamPair]:
    """QAM pairs; ids must be unique, labels the integers 0 or 1."""
    unique = _unique_ids()

    def check(row: dict) -> None:
        label = row.get("label")
        if type(label) is not int or label not in (0, 1):
            raise ValueError(f"field 'label' must be the integer 0 or 1, got {label!r}")
        unique(row)

    rows, bad = read_rows(path, ("id", "group", "text_a", "text_b"), skip_bad, check)
    _log_skipped(path, bad)
    return [QamPair(r["id"], r["group"], r["text_a"], r["text_b"], r["label"]) for r in rows]


def load_sqr(path: str | PathLike, skip_bad: bool = False) -> list[SqrList]:
    """SQR lists of 6..15 candidate strings with at least one relevant index, all in range."""
    unique = _unique_ids()

    def check(row: dict) -> None:
        candidates, relevant = row.get("candidates"), row.get("relevant")
        if not isinstance(candidates, list) or not all(isinstance(c, str) and c.strip() for c in candidates):
            raise ValueError("field 'candidates' must be a list of non-empty strings")
        if not SQR_MIN_CANDIDATES <= len(candidates) <= SQR_MAX_CANDIDATES:
            raise ValueError(f"{len(candidates)} candidates; a list needs {SQR_MIN_CANDIDATES} to {SQR_MAX_CANDIDATES}")
        if not isinstance(relevant, list) or not relevant or not all(type(i) is int for i in relevant):
            raise ValueError("field 'relevant' must be a non-empty list of integers")
        if len(set(relevant)) != len(relevant) or not all(0 <= i < len(candidates) for i in relevant):
            raise ValueError(f"field 'relevant' must hold distinct indices in 0..{len(candidates) - 1}, got {relevant}")
        unique(row)

    rows, bad = read_rows(path, ("id", "group", "query"), skip_bad, check)
    _log_skipped(path, bad)
    return [SqrList(r["id"], r["group"], r["query"], tuple(r["candidates"]), tuple(r["relevant"])) for r in rows]


def _unique_ids() -> Callable[[dict], None]:
    seen: set[str] = set()

    def check(row: dict) -> None:
        if row.get("id") in seen:
            raise ValueError(f"duplicate id {row['id']!r}")
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
    rows, bad = read_rows(path, VARIANT_FIELDS, skip_bad)
    seeds = group_seeds(rows)
    if len(seeds) < 2:
        raise ValueError(f"{path}: {len(seeds)} seed problems; the tasks need at least 2")
    return seeds, bad


# ---------------------------------------------------------------- builders


def build_qrc_pairs(seeds: Sequence[Seed], seed: int = 0, irrelevant_per_seed: int = 1) -> list[dict]:
    """Each seed with each of its variants (label: perturbation type) and with
    ``irrelevant_per_seed`` random questions (seed or variant) of other seeds (label: irrelevant)."""
    if irrelevant_per_seed < 0:
        raise ValueError("irrelevant_per_seed must be >= 0")
    rng = random.Random(seed)
    pairs = []
    for s in seeds:
        for k, (kind, question) in enumerate(s.variants):
            pairs.append({"id": f"qrc-{s.group}-v{k}", "group": s.group, "text_a": s.question,
                          "text_b": question, "label": kind})
        others = [q for o in seeds if o.group != s.group for q in (o.question, *(v for _, v in o.variants))]
        others = [q for q in dict.fromkeys(others) if q != s.question and q not in {v for _, v in s.variants}]
        if irrelevant_per_seed > len(others):
            raise ValueError(f"{irrelevant_per_seed} irrelevant pairs per seed, but only {len(others)} other questions")
        for k, question in enumerate(rng.sample(others, irrelevant_per_seed)):
            pairs.append({"id": f"qrc-{s.group}-i{k}", "group": s.group, "text_a": s.question,
                          "text_b": question, "label": IRRELEVANT})
    return pairs


def build_qam_pairs(
    rows: Sequence[dict], seed: int = 0, negatives: int = 1,
    question_field: str = "question", solution_field: str = "answer",
) -> list[dict]:
    """Each question with its own solution (1) and ``negatives`` random solutions of other questions (0)."""
    if negatives < 0:
        raise ValueError("negatives must be >= 0")
    if negatives >= len(rows):
        raise ValueError(f"{negatives} negatives per question need more than {len(rows)} questions")
    rng = random.Random(seed)
    pairs = []
    for i, row in enumerate(rows):
        question, solution = row[question_field], row[solution_field]
        group = f"q-{i:05d}"
        pairs.append({"id": f"qam-{i:05d}-pos", "group": group, "text_a": question, "text_b": solution, "label": 1})
        chosen: list[str] = []
        while len(chosen) < negatives:
            other = rows[rng.randrange(len(rows))][solution_field]
            if other != solution and other not in chosen:
                chosen.append(other)
        for k, other in enumerate(chosen):
            pairs.append({"id": f"qam-{i:05d}-neg{k}", "group": group, "text_a": question, "text_b": other, "label": 0})
    return pairs


def build_sqr_lists(
    seeds: Sequence[Seed], seed: int = 0, relevant: int | None = 4, hard: int = 6, random_negatives: int = 2,
    excluded_types: frozenset[str] = SQR_EXCLUDED_TYPES,
) -> list[dict]:
    """One candidate list per seed problem (the query).

    Relevant: ``relevant`` of the seed's variants drawn at random from those whose
    type is not in ``excluded_types`` (``None``: all of them). Distractors: the
    ``hard`` variants of other seeds closest to the query by TF-IDF cosine, plus
    ``random_negatives`` random other variants of other seeds. Shuffled.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import linear_kernel

    if min(hard, random_negatives) < 0 or (relevant is not None and relevant < 1):
        raise ValueError("need relevant >= 1 and hard, random >= 0")
    pool = [(s.group, q) for s in seeds for _, q in s.variants]
    pool_texts = [q for _, q in pool]
    vectorizer = TfidfVectorizer(sublinear_tf=True).fit([s.question for s in seeds] + pool_texts)
    similarity = linear_kernel(vectorizer.transform([s.question for s in seeds]), vectorizer.transform(pool_texts))
    rng = random.Random(seed)
    lists = []
    for row_index, s in enumerate(seeds):
        eligible = [q for kind, q in s.variants if kind not in excluded_types]
        if not eligible:
            raise ValueError(f"{s.group} has no variants outside {sorted(excluded_types)}")
        chosen = eligible if relevant is None else rng.sample(eligible, min(relevant, len(eligible)))
        own = {q for _, q in s.variants} | {s.question}
        others = [j for j, (g, q) in enumerate(pool) if g != s.group and q not in own]
        # Ties broken by pool position, so the choice does not depend on sort stability.
        ranked = sorted(others, key=lambda j: (-similarity[row_index, j], j))
        distractors = list(dict.fromkeys(pool_texts[j] for j in ranked))
        hard_texts, rest = distractors[:hard], distractors[hard:]
        if random_negatives > len(rest):
            raise ValueError(f"{s.group}: not enough variants of other seeds for {hard} hard + {random_negatives} random")
        random_texts = rng.sample(rest, random_negatives)
        candidates = [(q, True) for q in chosen] + [(q, False) for q in hard_texts + random_texts]
        if not SQR_MIN_CANDIDATES <= len(candidates) <= SQR_MAX_CANDIDATES:
            raise ValueError(f"{s.group}: {len(candidates)} candidates; a list needs "
                             f"{SQR_MIN_CANDIDATES} to {SQR_MAX_CANDIDATES} (change --relevant/--hard/--random)")
        rng.shuffle(candidates)
        lists.append({"id": f"sqr-{s.group}", "group": s.group, "query": s.question,
                      "candidates": [q for q, _ in candidates],
                      "relevant": [i for i, (_, is_relevant) in enumerate(candidates) if is_relevant]})
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
        raise ValueError(f"{len(groups)} groups are too few for dev={dev} and test={test}")
    part = {g: "test" for g in groups[:n_test]}
    part.update({g: "dev" for g in groups[n_test:n_test + n_dev]})
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
        indices, dev_part = train_test_split(indices, test_size=dev / (1 - test), random_state=seed, stratify=rest_labels)
    return {name: [rows[i] for i in sorted(part)] for name, part in zip(SPLITS, (indices, dev_part, test_part))}


def _check_fractions(dev: float, test: float) -> None:
    if dev < 0 or test < 0 or dev + test >= 1:
        raise ValueError(f"need dev >= 0, test >= 0 and dev + test < 1, got dev={dev}, test={test}")


def split_file(
    path: str | PathLike, dev: float = 0.1, test: float = 0.1, seed: int = 0, group_field: str | None = None,
    stratify_field: str | None = None, output_dir: str | PathLike | None = None, skip_bad: bool = False,
) -> tuple[dict[str, Path], dict[str, list[dict]], list[JsonlError]]:
    """Split a JSONL file into ``STEM.train.jsonl``, ``STEM.dev.jsonl`` and ``STEM.test.jsonl``
    (next to it, or in ``output_dir``); returns the paths, the splits and the skipped rows."""
    if group_field and stratify_field:
        raise ValueError("--group-field and --stratify-field do not combine; give one")

    def check(row: dict) -> None:
        if stratify_field:
            if stratify_field not in row:
                raise ValueError(f"no field {stratify_field!r} to stratify by")
            if isinstance(row[stratify_field], (dict, list)) or row[stratify_field] is None:
                raise ValueError(f"field {stratify_field!r} must be a string or number")

    rows, bad = read_rows(path, (group_field,) if group_field else (), skip_bad, check)
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
