"""Similar-problem search in a real bank: does the right problem come first among thousands?

    python benchmarks/bank_search.py --work WORK [--split dev|test|dev+test] [--banks gsm8k,math]
                                     [--rows default,hybrid,...] [--add-row 'NAME:model=SPEC,mode=text,hybrid=off']
    python benchmarks/bank_search.py --work WORK --choose-weights | --choose-numbers | --choose-lead | --pools
                                     [--split dev|test]
    python benchmarks/bank_search.py --smoke --work WORK

Two banks, each searched with every row (a named search configuration, ``ROWS``):

- **GSM8K bank**: the 7,473 GSM8K train questions plus the GSM-Plus seed questions of one part of the project's
  seed split (``tasks.data.split_by_group(variants, "seed_question", seed=0)``, 80/10/10 by seed: the split of
  ``benchmarks/results.py`` and of the shipped model's release, ``benchmarks/release_model.py``); dev by default,
  ``--split test`` for test. The queries are each seed's ``problem understanding`` (kind ``paraphrase``),
  ``numerical substitution`` (``numbers``) and ``distraction insertion`` (``distraction``) variants, and
  ``TEMPLATES_PER_SEED`` template-made variants of it (``template``: new person names, new numbers, one or two
  added irrelevant clauses; ``bank_search_templates.py``, seeded by the seed's name); the answer is the seed
  question. GSM-Plus seeds are GSM8K *test* questions: none is among the train questions (checked
  here on whitespace- and case-normalised text), so each seed is in the bank once, as the row added for it.
- **MATH bank**: the 7,500 MATH train problems; the queries are hand-written rewrites of problems of the bank
  (``benchmarks/data/math_bank_queries.jsonl``, ``math_bank_queries_third.jsonl``, a third set, all test, and
  ``math_bank_queries_fourth.jsonl``, a fourth, all dev, ``math_bank_queries_sixth.jsonl``, a sixth, all dev, of
  problems with a sibling in the bank, ``math_bank_queries_seventh.jsonl``, a seventh, all dev;
  ``math_bank_queries_fifth.jsonl``, ``math_bank_queries_eighth.jsonl``, ``math_bank_queries_ninth.jsonl`` and
  ``math_bank_queries_tenth.jsonl``, ``math_bank_queries_eleventh.jsonl``, ``math_bank_queries_twelfth.jsonl``,
  ``math_bank_queries_thirteenth.jsonl`` and ``math_bank_queries_fourteenth.jsonl``, a fifth and the eighth to the
  fourteenth, all test, read only when named;
  ``--queries`` to choose; made as ``benchmarks/data/MATH_BANK_QUERIES.md`` says) with
  other numbers (kind ``numbers``), other wording (``wording``), both (``both``) or renamed variables
  (``variables``), those of ``--split`` (each query's ``split`` field: dev or test); the answer is the original,
  which the bank contains (that is the point: find the original from a rewrite; a problem that appears twice
  in MATH counts as found at either copy).

Per bank, row and query kind: R@1 and R@10 with Wilson 95% intervals, and MRR counted to rank ``DEPTH`` (an
answer below it scores 0) with a percentile-bootstrap 95% interval (``BOOTSTRAP`` resamples of the queries,
seeded). A row searches as ``SearchIndex.search`` does for ``mathgraph search`` (the same first stage, TF-IDF
fusion and alignment step, with the weights that the row's ``hybrid`` gives through
``tasks.search.commands.hybrid_search_weight`` / ``structure_search_weight``, or its own), asking for ``DEPTH``
hits, so the alignment step re-scores the same ``STRUCTURE_RERANK`` rows as ``mathgraph search -k 10`` does.

Rows are parameters: ``ROWS`` (the table of docs/search.md) and ``Row`` in Python (``rows(names, extra)``), or
``--rows NAME,...`` and ``--add-row 'NAME:model=SPEC,mode=MODE,hybrid=auto|on|off,sparse=W,structure=W,
min_cosine=C,label=TEXT'`` on the command line (``model``: any ``load_embedder`` spec: ``shipped``, a model
directory, ``text:minilm``, ``text:DIR``; ``tfidf`` for the TF-IDF cosine). A new first stage saved as a model
directory is one ``--add-row`` away.

The ``default`` row is ``mathgraph search`` as shipped: the package's search encoder fused with TF-IDF and the
skeleton channel (``tasks.search.skeleton``, weights ``SKELETON_WEIGHTS``, each query's skeleton weight scaled by
the channel's confidence, ``SKELETON_CONFIDENCE``, fused as ``SKELETON_FUSION`` says, plus ``NUMBERS_BONUS`` times
the match's weight for a row whose literal numbers, in digits or also said in words, are exactly the query's, and
the sentence encoder's first row kept first where its cosine leads the second by ``ENCODER_LEAD``); ``no-lead`` the
default without that fall-back; ``weights-before`` the default's
weights before the signed, IDF-weighted numbers match (skeleton 0.7, bonus 0.05); ``cosine`` the default before
the numbers bonus (its skeleton weight 0.7); ``standardised``
the default before the cosine fusion (standardised scores, skeleton 0.4, confidence from 0.2), ``fixed`` the
skeleton fusion with fixed weights (TF-IDF 0.1, skeleton 0.3 for every query: the default before the
confidence), ``before`` the default before the skeleton channel (TF-IDF fusion 0.2 alone), ``skeleton`` the
channel alone. ``--choose-weights`` chooses the TF-IDF weight, the skeleton's largest weight, its confidence and
the fusion (``FUSION_GRID``) on the dev queries of the banks (``choose_weights``, each choice measured both
fusing every row and fusing an approximate index's ``HYBRID_POOL`` candidates, a query found first only where
it is in both: every kind's R@1 at least the sentence encoder's alone; then the largest expected worst
per-kind margin over the sentence encoder, the worst over the kinds of the paired R@1 difference, averaged over
``MARGIN_BOOTSTRAP`` resamples of each kind's queries, so that a choice that loses some queries of a kind and
wins as many back ranks below one that loses none; then the best mean R@1 over the kinds, the best mean MRR,
the smallest weights) and writes ``OUTPUT_weights.json``. ``--choose-numbers`` chooses the numbers bonus
(``NUMBERS_GRID``) added to the shipped fusion by the same rule, ties of R@1 and MRR broken by the soft R@1
(``LEAD_SCALE``: how far the answers lead), and writes ``OUTPUT_numbers.json``. ``--choose-lead`` chooses ``ENCODER_LEAD`` (``choose_encoder_lead``: the smallest
lead of ``LEAD_GRID`` at or above which the sentence encoder's first row is every dev query's answer) and writes
``OUTPUT_lead.json``. ``--pools`` prints the R@1 of the
default fusion and the ones before, fusing every row and an approximate index's ``HYBRID_POOL`` candidates
(``pools_report``).

Bank vectors are cached under ``WORK/embeddings`` per model (keyed by the sha256 of the model's files) and per
text, so a rerun, another split or another row of the same model encodes only what it has not seen; the
shipped encoder's ``joint`` vectors are stored once and its ``text`` / ``graph`` vectors sliced from them
(``[CLS] ; mean node``, checked on a few problems against ``encode(mode=...)``); the skeleton channel's token bags
under ``WORK/skeleton``, per bank (the counts that tell names apart are the bank's). Each row's wall time is its
bank encoding as measured when the vectors were cached (and on which machine) plus this run's search of all
the queries (query encoding, TF-IDF, alignment step). A full run writes
``benchmarks/results/issue37_bank_search.{md,json}`` (``--output`` to change; ``--smoke`` writes only under
``WORK/smoke``).

``--smoke``: the smoke data (``benchmarks/data/smoke``): a GSM8K bank of its 40 questions and the 2 dev seeds
of its 15 GSM-Plus seeds (6 queries; no template variants), a MATH bank of its first 20 problems and the originals of the first 4 MATH
queries (the queries file carries them); rows TF-IDF, MiniLM, the shipped encoder's cosine and the default
search; seconds of work, results under ``WORK/smoke``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bank_search_templates import template_variants  # noqa: E402

from smoke import SMOKE_DATA, smoke_work  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
MATH_QUERIES = REPO / "benchmarks" / "data" / "math_bank_queries.jsonl"
MATH_QUERIES_THIRD = REPO / "benchmarks" / "data" / "math_bank_queries_third.jsonl"  # a third set, all test
MATH_QUERIES_FOURTH = REPO / "benchmarks" / "data" / "math_bank_queries_fourth.jsonl"  # a fourth set, all dev
MATH_QUERIES_FIFTH = REPO / "benchmarks" / "data" / "math_bank_queries_fifth.jsonl"  # a fifth set, all test
# a sixth set, all dev: rewrites of problems whose bank holds a sibling with other numbers
MATH_QUERIES_SIXTH = REPO / "benchmarks" / "data" / "math_bank_queries_sixth.jsonl"
MATH_QUERIES_SEVENTH = REPO / "benchmarks" / "data" / "math_bank_queries_seventh.jsonl"  # a seventh set, all dev
MATH_QUERIES_EIGHTH = REPO / "benchmarks" / "data" / "math_bank_queries_eighth.jsonl"  # an eighth set, all test
MATH_QUERIES_NINTH = REPO / "benchmarks" / "data" / "math_bank_queries_ninth.jsonl"  # a ninth set, all test
MATH_QUERIES_TENTH = REPO / "benchmarks" / "data" / "math_bank_queries_tenth.jsonl"  # a tenth set, all test
MATH_QUERIES_ELEVENTH = REPO / "benchmarks" / "data" / "math_bank_queries_eleventh.jsonl"  # an eleventh, all test
MATH_QUERIES_TWELFTH = REPO / "benchmarks" / "data" / "math_bank_queries_twelfth.jsonl"  # a twelfth, all test
MATH_QUERIES_THIRTEENTH = REPO / "benchmarks" / "data" / "math_bank_queries_thirteenth.jsonl"  # all test
MATH_QUERIES_FOURTEENTH = REPO / "benchmarks" / "data" / "math_bank_queries_fourteenth.jsonl"  # all test
RESULTS = REPO / "benchmarks" / "results" / "issue37_bank_search"
SPLIT_SEED = 0  # benchmarks/results.py's and the release's split seed
DEPTH = 50  # hits asked of each search: MRR is counted to this rank (the alignment step re-scores 50 rows)
BOOTSTRAP = 2000
# GSM-Plus perturbation type -> query kind in the tables
GSM_KINDS = {
    "problem understanding": "paraphrase",
    "numerical substitution": "numbers",
    "distraction insertion": "distraction",
}
TEMPLATE_KIND = "template"  # template-made variants of each seed (bank_search_templates)
TEMPLATES_PER_SEED = 5
MATH_KINDS = ("numbers", "wording", "both", "variables")
SMOKE_MATH_QUERIES = 4
SMOKE_MATH_ROWS = 20


# --------------------------------------------------------------------------- search configurations
@dataclass(frozen=True)
class Row:
    """One search configuration. ``model``: a ``load_embedder`` spec, or ``"tfidf"`` (TF-IDF cosine over the
    bank, ``models.tfidf.VECTORIZER_DEFAULTS``, fitted on the bank's texts). ``hybrid``: None / True / False as
    ``mathgraph search`` / ``--hybrid`` / ``--no-hybrid`` (the shipped package's search weights);
    ``sparse_weight`` / ``structure_weight`` / ``min_cosine``, when given, override them;
    ``skeleton_confidence``: ``SearchIndex.search``'s (``"shipped"``, None for one skeleton weight for every
    query, or ``(low, high)``); ``fusion``: ``SearchIndex.search``'s (None: the shipped one); ``numbers_bonus``:
    ``SearchIndex.search``'s (None: ``skeleton.NUMBERS_BONUS`` where the skeleton channel is on); ``encoder_lead``:
    ``SearchIndex.search``'s (``"shipped"``: ``skeleton.ENCODER_LEAD``; None: never). ``embedder``: a
    function returning an ``Embedder`` for a first stage that is not a model directory (then ``model`` names
    its cache). ``mode`` None: what ``mathgraph index build --model MODEL`` uses, a package's search encoder
    (``config.json`` ``search.encoder``) when it names one, else the joint vectors (``first_stage``)."""

    name: str
    label: str
    model: str = "shipped"
    mode: str | None = "joint"
    hybrid: bool | None = False
    sparse_weight: float | None = None
    structure_weight: float | None = None
    min_cosine: float | None = None
    skeleton_weight: float | None = None
    skeleton_confidence: tuple[float, float] | None | str = "shipped"
    fusion: str | None = None
    numbers_bonus: float | None = None
    encoder_lead: float | None | str = "shipped"
    embedder: Callable | None = field(default=None, compare=False, repr=False)

    def weights(self) -> tuple[float, float, float | None, float]:
        """``(sparse_weight, structure_weight, structure_min_cosine, skeleton_weight)`` for
        ``SearchIndex.search``: ``mathgraph search``'s (``commands.search_weights``) where the row gives none."""
        if self.model == "tfidf":
            return 0.0, 0.0, None, 0.0
        from mathgraph.tasks.search.commands import search_weights

        sparse, structure, skeleton = search_weights(self.hybrid)
        sparse = sparse if self.sparse_weight is None else self.sparse_weight
        structure = structure if self.structure_weight is None else self.structure_weight
        skeleton = skeleton if self.skeleton_weight is None else self.skeleton_weight
        return float(sparse), float(structure), self.min_cosine, float(skeleton)

    def describe(self) -> dict:
        sparse, structure, min_cosine, skeleton = self.weights()
        if structure > 0 and min_cosine is None:
            from mathgraph.tasks.search.index import shipped_structure_min_cosine

            min_cosine = shipped_structure_min_cosine()
        config = {k: v for k, v in asdict(self).items() if k != "embedder"}
        numbers = self.numbers_bonus
        if numbers is None:
            from mathgraph.tasks.search.skeleton import NUMBERS_BONUS

            numbers = NUMBERS_BONUS if skeleton > 0 else 0.0
        lead = self.encoder_lead
        if lead == "shipped":
            from mathgraph.tasks.search.skeleton import ENCODER_LEAD

            lead = ENCODER_LEAD
        return {
            **config,
            "sparse_weight": sparse,
            "structure_weight": structure,
            "min_cosine": min_cosine,
            "skeleton_weight": skeleton,
            "numbers_bonus": numbers,
            "encoder_lead": lead if skeleton > 0 else None,
        }


ROWS = {
    row.name: row
    for row in (
        Row(
            "default",
            "default `mathgraph search` (the package's search encoder fused with the skeleton channel, the numbers "
            "bonus, the encoder's lead kept)",
            mode=None,
            hybrid=None,
        ),
        Row(
            "no-lead",
            "the default without the fall-back on the sentence encoder where it leads (skeleton.ENCODER_LEAD)",
            mode=None,
            hybrid=None,
            encoder_lead=None,
        ),
        Row(
            "weights-before",
            "the default's weights before the signed, IDF-weighted numbers match (skeleton 0.7 by its confidence "
            "from 0, numbers bonus 0.05), with the current skeleton tokens and number matches",
            mode=None,
            hybrid=None,
            sparse_weight=0.0,
            skeleton_weight=0.7,
            skeleton_confidence=(0.0, 1.0),
            fusion="cosine",
            numbers_bonus=0.05,
            encoder_lead=None,
        ),
        Row(
            "cosine",
            "the default before the numbers bonus (cosine fusion, skeleton 0.7 by its confidence from 0)",
            mode=None,
            hybrid=None,
            sparse_weight=0.0,
            skeleton_weight=0.7,
            skeleton_confidence=(0.0, 1.0),
            fusion="cosine",
            numbers_bonus=0.0,
            encoder_lead=None,
        ),
        Row(
            "standardised",
            "the default before the cosine fusion (standardised scores, skeleton 0.4 by its confidence from 0.2)",
            mode=None,
            hybrid=None,
            sparse_weight=0.0,
            skeleton_weight=0.4,
            skeleton_confidence=(0.2, 1.0),
            fusion="standardised",
            numbers_bonus=0.0,
            encoder_lead=None,
        ),
        Row(
            "before",
            "the default before the skeleton channel (the package's search encoder, TF-IDF fusion 0.2)",
            mode=None,
            hybrid=None,
            sparse_weight=0.2,
            skeleton_weight=0.0,
        ),
        Row(
            "fixed",
            "the skeleton fusion with fixed weights (TF-IDF 0.1, skeleton 0.3 for every query, no confidence)",
            mode=None,
            hybrid=None,
            sparse_weight=0.1,
            skeleton_weight=0.3,
            skeleton_confidence=None,
            numbers_bonus=0.0,
            encoder_lead=None,
        ),
        Row(
            "skeleton",
            "skeleton channel alone (formula paths, quantities, question; numbers and names abstracted)",
            mode=None,
            hybrid=None,
            sparse_weight=0.0,
            skeleton_weight=1.0,
            skeleton_confidence=None,
            numbers_bonus=0.0,
            encoder_lead=None,
        ),
        Row(
            "hybrid", "`--hybrid` (the package's search encoder, TF-IDF fusion, alignment step)", mode=None, hybrid=True
        ),
        Row("no-hybrid", "`--no-hybrid` (shipped encoder, joint vectors, cosine)", hybrid=False),
        Row("shipped-text", "shipped encoder's text vectors (`--mode text`), cosine", mode="text"),
        Row(
            "minilm",
            "`text:minilm` (all-MiniLM-L6-v2, mean pooled: the base sentence encoder), cosine",
            "text:minilm",
            "mean",
        ),
        Row("tfidf", "TF-IDF cosine", "tfidf", "cosine"),
    )
}
SMOKE_ROWS = ("tfidf", "minilm", "no-hybrid", "default")


def first_stage(row: Row) -> Row:
    """``row`` with the vectors it searches made explicit: for ``mode`` None, a package's ``search.encoder``
    (e.g. ``text:minilm``) when its ``config.json`` names one, else its joint vectors, as ``load_embedder``
    chooses for ``mathgraph index build``."""
    from dataclasses import replace

    if row.mode is not None or row.model == "tfidf" or row.embedder is not None:
        return row
    from mathgraph.registry import model_type, resolve

    directory = resolve(row.model)
    if model_type(directory) == "package":
        from mathgraph.models.package import ModelPackage

        encoder = ModelPackage(directory).search_setting("encoder")
        if encoder:
            return replace(row, model=str(encoder), mode="mean" if str(encoder).startswith("text:") else "joint")
    return replace(row, mode="joint")


def rows(names: Sequence[str] | None = None, extra: Sequence[Row] = ()) -> list[Row]:
    """The rows ``names`` of ``ROWS`` (all when None), then ``extra``."""
    known = {**ROWS, **{row.name: row for row in extra}}
    chosen = [known[name] for name in (names if names is not None else ROWS)]
    return chosen + [row for row in extra if row not in chosen]


def parse_row(text: str) -> Row:
    """``NAME:key=value,...`` (``--add-row``) as a ``Row``; ``hybrid``: auto, on or off; ``confidence``: shipped,
    none or LOW-HIGH (the skeleton weight's confidence)."""
    name, _, spec = text.partition(":")
    if not name or not spec:
        raise ValueError(f"--add-row {text!r}: give NAME:model=SPEC[,mode=...,hybrid=...]")
    options: dict = {}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if key in ("sparse", "structure", "skeleton"):
            key += "_weight"
        if key == "hybrid":
            options[key] = {"auto": None, "on": True, "off": False}[value.strip()]
        elif key in ("numbers", "numbers_bonus"):
            options["numbers_bonus"] = float(value)
        elif key in ("sparse_weight", "structure_weight", "min_cosine", "skeleton_weight"):
            options[key] = float(value)
        elif key in ("model", "mode", "label", "fusion"):
            options[key] = value.strip()
        elif key in ("lead", "encoder_lead"):
            value = value.strip()
            options["encoder_lead"] = value if value == "shipped" else None if value == "none" else float(value)
        elif key in ("confidence", "skeleton_confidence"):
            value = value.strip()
            if value in ("shipped", "none"):
                options["skeleton_confidence"] = None if value == "none" else value
            else:
                low, _, high = value.partition("-")
                options["skeleton_confidence"] = (float(low), float(high))
        else:
            raise ValueError(f"--add-row {text!r}: unknown key {key!r}")
    options.setdefault("label", name)
    return Row(name, **options)


# --------------------------------------------------------------------------- banks and queries
@dataclass
class Bank:
    """The rows searched (``texts[i]`` is row ``i``) and the queries, each with its kind and answer rows."""

    name: str
    texts: list[str]
    queries: list[dict]  # {"id", "kind", "text", "answers": [row indices]}
    kinds: tuple[str, ...]
    facts: dict


def normalise(text: str) -> str:
    return " ".join(text.split()).lower()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def answers_of(text: str, positions: dict[str, list[int]]) -> list[int]:
    return positions.get(normalise(text), [])


def positions_of(texts: Sequence[str]) -> dict[str, list[int]]:
    positions: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        positions.setdefault(normalise(text), []).append(i)
    return positions


def gsm8k_bank(data: Path, split: str, templates: int = TEMPLATES_PER_SEED) -> Bank:
    """GSM8K train questions plus the seeds of ``split`` (``dev``, ``test`` or ``dev+test``); queries: each
    seed's GSM-Plus variants and ``templates`` template-made variants (``bank_search_templates``)."""
    from mathgraph.tasks.data import group_seeds, split_by_group

    train = [row["question"] for row in read_jsonl(data / "gsm8k" / "train.jsonl")]
    variants = read_jsonl(data / "gsmplus" / "variants.jsonl")
    names = {seed.question: seed.group for seed in group_seeds(variants)}  # seed-NNN in the whole file's order
    parts = split_by_group(variants, "seed_question", seed=SPLIT_SEED)
    seeds = [seed for part in split.split("+") for seed in group_seeds(parts[part])]
    train_positions = positions_of(train)
    in_train = [seed.question for seed in seeds if normalise(seed.question) in train_positions]
    texts = train + [seed.question for seed in seeds]
    positions = positions_of(texts)
    queries = []
    for seed in seeds:
        for perturbation, question in seed.variants:
            if perturbation in GSM_KINDS:
                queries.append(
                    {
                        "id": f"{names[seed.question]}/{GSM_KINDS[perturbation]}",
                        "kind": GSM_KINDS[perturbation],
                        "text": question,
                        "answers": answers_of(seed.question, positions),
                    }
                )
        for j, question in enumerate(template_variants(seed.question, names[seed.question], templates)):
            queries.append(
                {
                    "id": f"{names[seed.question]}/{TEMPLATE_KIND}-{j}",
                    "kind": TEMPLATE_KIND,
                    "text": question,
                    "answers": answers_of(seed.question, positions),
                }
            )
    facts = {
        "bank": f"{len(train):,} GSM8K train questions + {len(seeds)} GSM-Plus {split} seeds = {len(texts):,} rows",
        "split": f"{split} seeds of split_by_group(gsmplus, 'seed_question', seed={SPLIT_SEED}), 80/10/10 by seed",
        "seeds": sorted(names[seed.question] for seed in seeds),
        "seeds_already_in_gsm8k_train": len(in_train),
        "queries": len(queries),
    }
    return Bank("gsm8k", texts, queries, kinds_of(queries, (*GSM_KINDS.values(), TEMPLATE_KIND)), facts)


def kinds_of(queries: Sequence[dict], order: Sequence[str]) -> tuple[str, ...]:
    """The kinds of ``order`` that some query has (a smoke bank has no template or renamed-variable queries)."""
    present = {q["kind"] for q in queries}
    return tuple(kind for kind in order if kind in present)


def math_bank(data: Path, queries_file: Path | Sequence[Path], smoke: bool = False, split: str = "dev") -> Bank:
    """MATH train problems; queries: the hand-written rewrites of ``split`` (``dev``, ``test`` or ``dev+test``:
    each query's ``split`` field) in ``queries_file`` (one file or several, read in order), answers their
    originals. ``smoke``: the smoke problems plus the originals of the first ``SMOKE_MATH_QUERIES`` queries (the
    files carry them), whatever their split."""
    files = [Path(queries_file)] if isinstance(queries_file, (str, Path)) else [Path(f) for f in queries_file]
    written = [row for path in files for row in read_jsonl(path)]
    if len({row["id"] for row in written}) != len(written):
        raise ValueError(f"{', '.join(f.name for f in files)}: query ids are not unique")
    if not smoke:
        written = [row for row in written if row["split"] in split.split("+")]
    if smoke:
        written = written[:SMOKE_MATH_QUERIES]
        texts = [row["problem"] for row in read_jsonl(data / "math" / "train.jsonl")][:SMOKE_MATH_ROWS]
        texts += [row["original"] for row in written]
    else:
        texts = [row["problem"] for row in read_jsonl(data / "math" / "train.jsonl")]
        for row in written:  # the file's index and its copy of the original must name the same problem
            if normalise(texts[row["index"]]) != normalise(row["original"]):
                raise ValueError(f"query {row['id']}: row {row['index']} is not its original")
    positions = positions_of(texts)
    queries = [
        {"id": row["id"], "kind": row["kind"], "text": row["query"], "answers": answers_of(row["original"], positions)}
        for row in written
    ]
    facts = {
        "bank": f"{len(texts):,} MATH train problems" + (" (smoke rows + query originals)" if smoke else ""),
        "queries": f"{len(queries)} hand-written rewrites ({', '.join(f.name for f in files)}, split "
        f"{split if not smoke else 'any'})",
        "originals_in_bank": sum(bool(q["answers"]) for q in queries),
    }
    return Bank("math", texts, queries, kinds_of(queries, MATH_KINDS), facts)


# --------------------------------------------------------------------------- cached vectors
def model_fingerprint(spec: str) -> str:
    """sha256 over the weight and config files of the model ``spec`` names (its directory, recursively; for a
    model package, its encoder's directory)."""
    if spec.startswith("text:"):
        from mathgraph.models.text_encoder import resolve_text_encoder

        directory = Path(resolve_text_encoder(spec[len("text:") :]))
    else:
        from mathgraph.registry import model_type, read_config, resolve

        directory = Path(resolve(spec))
        if model_type(directory) == "package":  # its vectors are its encoder's: release notes may change freely
            directory = directory / read_config(directory)["encoder"]
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.suffix in (".safetensors", ".bin", ".json"):
            digest.update(f"{path.relative_to(directory)}|".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


class VectorStore:
    """One model's vectors, kept on disk per text (``WORK/embeddings/MODEL-FINGERPRINT``); the model loads only
    when a text is missing. A MathEncoder's vectors are stored as ``joint`` and sliced for ``text`` / ``graph``
    (``ModeEmbedder``)."""

    def __init__(self, row: Row, directory: Path, batch_size: int = 32):
        self.row, self.batch_size = row, batch_size
        fingerprint = row.model if row.embedder is not None else model_fingerprint(row.model)
        safe = "".join(c if c.isalnum() else "-" for c in row.model)[:60]
        self.directory = directory / f"{safe}-{fingerprint}"
        self.directory.mkdir(parents=True, exist_ok=True)
        self._inner = None
        self._store: dict[str, np.ndarray] | None = None
        self.encoded_seconds, self.encoded_count = 0.0, 0

    def inner(self):
        """The embedder, loaded on first need (a MathEncoder's with mode ``joint``)."""
        if self._inner is None:
            if self.row.embedder is not None:
                self._inner = self.row.embedder()
            else:
                from mathgraph.tasks.search.embedders import load_embedder

                self._inner = load_embedder(self.row.model, mode="joint")
                if self.slices():
                    self._check_slices()
        return self._inner

    def slices(self) -> bool:
        """Whether the stored vectors are a MathEncoder's joint ones (and other modes are their halves)."""
        if self.row.embedder is not None or self.row.model.startswith("text:"):
            return False
        from mathgraph.tasks.search.embedders import MathEncoderEmbedder, OnnxEncoderEmbedder

        return isinstance(self.inner(), (MathEncoderEmbedder, OnnxEncoderEmbedder))

    def text_dimension(self) -> int:
        return self.inner().encoder.dimension("text")

    def _check_slices(self) -> None:
        texts = ["Find $x$ if $2x+3=7$.", "A shop sells 3 pens for $2. How much do 12 pens cost?"]
        encoder = self._inner.encoder
        joint = encoder.encode(texts, mode="joint", show_progress=False)
        d = encoder.dimension("text")
        for mode, part in (("text", slice(0, d)), ("graph", slice(d, None))):
            direct = encoder.encode(texts, mode=mode, show_progress=False)
            if not np.allclose(joint[:, part], direct, atol=1e-4):
                raise RuntimeError(f"the joint vector's {mode} half is not encode(mode={mode!r}): cannot slice")

    def _load(self) -> dict[str, np.ndarray]:
        if self._store is None:
            self._store = {}
            for path in sorted(self.directory.glob("part-*.npz")):
                with np.load(path) as part:
                    self._store.update(zip(part["keys"].tolist(), part["vectors"]))
        return self._store

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors as stored (joint for a MathEncoder), encoding and saving those missing."""
        store = self._load()
        keys = [self.key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in store))
        if missing:
            by_key = dict(zip(keys, texts))
            todo = [by_key[k] for k in missing]
            inner = self.inner()
            start = time.perf_counter()
            if self.slices():
                vectors = inner.encoder.encode(
                    todo, batch_size=self.batch_size, mode="joint", show_progress=len(todo) > 200
                )
            else:
                vectors = inner.encode(todo, batch_size=self.batch_size)
            vectors = np.asarray(vectors, np.float32)
            seconds = time.perf_counter() - start
            self.encoded_seconds += seconds
            self.encoded_count += len(todo)
            name = f"part-{len(list(self.directory.glob('part-*.npz'))):04d}"
            np.savez(self.directory / f"{name}.npz", keys=np.array(missing), vectors=vectors)
            (self.directory / f"{name}.json").write_text(
                json.dumps({"count": len(todo), "seconds": seconds, "machine": machine()}), encoding="utf-8"
            )
            store.update(zip(missing, vectors))
        return np.stack([store[k] for k in keys])

    def cached_encoding(self) -> dict:
        """Seconds and problems of the encodings stored in this cache, with the machine of the last one."""
        parts = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(self.directory.glob("part-*.json"))]
        return {
            "seconds": sum(p["seconds"] for p in parts),
            "count": sum(p["count"] for p in parts),
            "machine": parts[-1]["machine"] if parts else None,
        }


class ModeEmbedder:
    """An ``Embedder`` over a ``VectorStore``: its vectors, or their ``mode`` half for a MathEncoder's."""

    def __init__(self, store: VectorStore, mode: str):
        self.store, self.mode = store, mode

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        vectors = self.store.vectors(texts)
        if self.mode in ("joint", "fused") or not self.store.slices():
            return vectors
        d = self.store.text_dimension()
        return vectors[:, :d] if self.mode == "text" else vectors[:, d:]

    def identity(self) -> dict:
        return {"kind": "bank_search.ModeEmbedder", "source": self.store.row.model, "mode": self.mode}


def skeleton_index(bank: Bank, work: Path):
    """The bank's ``SkeletonIndex`` and the seconds its token bags took, the bags cached under
    ``WORK/skeleton`` (keyed by the bank's texts and the feature code, whose counts of names depend on the
    whole bank)."""
    from mathgraph.tasks.search import skeleton as module
    from mathgraph.tasks.search.skeleton import NameCounts, SkeletonIndex, problem_skeleton

    digest = hashlib.sha256("\n".join(bank.texts).encode("utf-8"))
    digest.update(Path(module.__file__).read_bytes())
    path = work / "skeleton" / f"{bank.name}-{digest.hexdigest()[:16]}.json"
    if path.is_file():
        cached = json.loads(path.read_text(encoding="utf-8"))
        read = (cached["tokens"], cached["numbers"], cached["spoken"])
        return SkeletonIndex(bank.texts, *read), cached["seconds"]
    start = time.perf_counter()
    names = NameCounts(bank.texts)
    tokens, numbers, spoken = (list(part) for part in zip(*(problem_skeleton(text, names) for text in bank.texts)))
    seconds = time.perf_counter() - start
    path.parent.mkdir(parents=True, exist_ok=True)
    facts = {"seconds": seconds, "machine": machine(), "tokens": tokens, "numbers": numbers, "spoken": spoken}
    path.write_text(json.dumps(facts), encoding="utf-8")
    return SkeletonIndex(bank.texts, tokens, numbers, spoken), seconds


# --------------------------------------------------------------------------- searching
def rank_of(hits: Sequence[int], answers: Sequence[int]) -> int | None:
    """1-based rank of the first answer among the hit rows, None when none is there."""
    wanted = set(answers)
    return next((rank for rank, index in enumerate(hits, 1) if index in wanted), None)


def search_tfidf(bank: Bank, depth: int) -> list[list[int]]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    from mathgraph.models.tfidf import VECTORIZER_DEFAULTS

    vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS)
    matrix = vectorizer.fit_transform(bank.texts)
    scores = (vectorizer.transform([q["text"] for q in bank.queries]) @ matrix.T).toarray()
    return [np.argsort(-row, kind="stable")[:depth].tolist() for row in scores]


def run_row(row: Row, bank: Bank, work: Path, batch_size: int, stores: dict) -> dict:
    """Search every query of ``bank`` with ``row``: per-query ranks and timings."""
    sparse, structure, min_cosine, skeleton = row.weights()
    described = row.describe()
    row = first_stage(row)
    described["first_stage"] = {"model": row.model, "mode": row.mode}
    timing: dict = {}
    if row.model == "tfidf":
        start = time.perf_counter()
        hits = search_tfidf(bank, DEPTH)
        timing = {
            "search_s": time.perf_counter() - start,
            "bank_encoding_s": 0.0,
            "encoding_note": "fitted in the search",
        }
    else:
        from mathgraph.tasks.search.index import SearchIndex, l2_normalize

        if row.model not in stores:  # one per model: a MathEncoder's joint vectors serve its text and graph modes
            stores[row.model] = VectorStore(row, work / "embeddings", batch_size)
        store = stores[row.model]
        embedder = ModeEmbedder(store, row.mode)
        before = store.encoded_count
        start = time.perf_counter()
        vectors = embedder.encode(bank.texts)
        bank_s = time.perf_counter() - start
        index = SearchIndex(
            l2_normalize(vectors), [{"text": t} for t in bank.texts], "text", embedder.identity(), embedder
        )
        skeleton_s = 0.0
        if skeleton > 0 or described["numbers_bonus"] > 0:
            index.skeleton, skeleton_s = skeleton_index(bank, work)
        start = time.perf_counter()
        found = index.search(
            [q["text"] for q in bank.queries],
            k=DEPTH,
            batch_size=batch_size,
            sparse_weight=sparse,
            structure_weight=structure,
            structure_min_cosine=min_cosine,
            skeleton_weight=skeleton,
            skeleton_confidence=row.skeleton_confidence,
            fusion=row.fusion,
            numbers_bonus=row.numbers_bonus,
            encoder_lead=row.encoder_lead,
        )
        hits = [[hit.index for hit in query_hits] for query_hits in found]
        search_s = time.perf_counter() - start
        encoded_now = store.encoded_count - before
        # the bank's encoding time, kept from the run that encoded all of it (model loading included)
        record = store.directory / f"bank-{hashlib.sha256(chr(10).join(bank.texts).encode()).hexdigest()[:16]}.json"
        if encoded_now >= len(set(bank.texts)):
            facts = {"seconds": bank_s, "count": len(bank.texts), "machine": machine()}
            record.write_text(json.dumps(facts), encoding="utf-8")
        if record.exists():
            facts = json.loads(record.read_text(encoding="utf-8"))
            encoding_s = facts["seconds"]
            note = f"{facts['count']:,} problems encoded in {encoding_s:.1f} s on {facts['machine']}"
        else:  # encoded in pieces: the cache's mean time per problem
            cached = store.cached_encoding()
            encoding_s = cached["seconds"] * len(bank.texts) / max(cached["count"], 1)
            note = f"mean of {cached['count']:,} cached problems, {cached['seconds']:.1f} s on {cached['machine']}"
        if row.mode != "joint" and store.slices():
            note += f"; the {row.mode} half of the joint vectors"
        if skeleton > 0:
            note += f"; skeleton features of the bank {skeleton_s:.1f} s (when they were cached)"
            encoding_s += skeleton_s
        timing = {
            "search_s": search_s,
            "bank_vectors_this_run_s": bank_s,
            "encoded_this_run": encoded_now,
            "bank_encoding_s": encoding_s,
            "encoding_note": note,
        }
    ranks = [rank_of(h, q["answers"]) for h, q in zip(hits, bank.queries)]
    return {
        "row": described,
        "ranks": {q["id"]: r for q, r in zip(bank.queries, ranks)},
        "top1": {q["id"]: h[0] if h else None for q, h in zip(bank.queries, hits)},
        "timing": timing,
        "wall_s": timing["bank_encoding_s"] + timing["search_s"],
    }


# --------------------------------------------------------------------------- choosing the fusion weights
WEIGHT_STEP = 0.1
MIN_DENSE_WEIGHT = 0.1
MARGIN_BOOTSTRAP = 1000  # resamples of expected_worst_margin
# the skeleton confidences --choose-weights tries: None (one weight for every query), or (low, 1.0): the full
# weight for a query whose best skeleton cosine is 1, none at or below low
CONFIDENCE_GRID = (None, *((round(0.1 * i, 1), 1.0) for i in range(7)))
# the fusions --choose-weights tries (skeleton.fuse_channels), the one before first: it is kept on a tie
FUSION_GRID = ("standardised", "cosine")
# the numbers bonuses --choose-numbers tries (SearchIndex.search's numbers_bonus), added to the shipped fusion (its
# weights, confidence and fusion as they are: the bonus is a tie-breaker of that fusion, not a new fusion)
NUMBERS_GRID = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)
# with them, --choose-numbers tries the skeleton's largest weight (TF-IDF 0, the shipped confidence and fusion) and
# the information at which a numbers match gets the whole bonus (skeleton.NUMBERS_INFORMATION; 0.001: every match
# the whole bonus, as before the weight)
NUMBERS_SKELETON_GRID = (0.7, 0.8, 0.9)
NUMBERS_INFORMATION_GRID = (0.001, 2.0, 3.0, 5.0, 8.0, 12.0)
# a query's lead (its answer's fused score less the best other row's) as a share of LEAD_SCALE, clipped to [-1, 1]
# and averaged over the queries: the "soft R@1" that breaks ties of R@1 and MRR in choose_weights (1 where every
# answer leads by at least LEAD_SCALE, -1 where every one trails by as much)
LEAD_SCALE = 0.05
# --choose-weights measures each choice twice, fusing every row (an exact index) and the HYBRID_POOL rows of the
# best cosines (an approximate one: tasks.search.index); a query counts as found first only where it is in both.


def channel_scores(bank: Bank, work: Path, batch_size: int, stores: dict) -> dict[str, np.ndarray]:
    """Every query's score to every row of ``bank`` on each channel the fused default search fuses: ``dense``
    (the default row's first stage, cosine), ``sparse`` (TF-IDF as ``SearchIndex`` fits it), ``skeleton`` and
    ``numbers`` (1 where a row's numbers are exactly the query's: ``SkeletonIndex.number_matches``), ``[queries,
    rows]`` each."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from mathgraph.models.tfidf import VECTORIZER_DEFAULTS
    from mathgraph.tasks.search.index import l2_normalize

    row = first_stage(ROWS["default"])
    if row.model not in stores:
        stores[row.model] = VectorStore(row, work / "embeddings", batch_size)
    embedder = ModeEmbedder(stores[row.model], row.mode)
    texts = [q["text"] for q in bank.queries]
    dense = l2_normalize(embedder.encode(texts)) @ l2_normalize(embedder.encode(bank.texts)).T
    vectorizer = TfidfVectorizer(**VECTORIZER_DEFAULTS)
    matrix = vectorizer.fit_transform(bank.texts)
    sparse = (vectorizer.transform(texts) @ matrix.T).toarray()
    skeleton, _ = skeleton_index(bank, work)
    return {
        "dense": dense,
        "sparse": sparse,
        "skeleton": np.stack(skeleton.scores(texts)),
        "numbers": np.stack(skeleton.number_matches(texts)),
    }


def fused_ranks(
    bank: Bank,
    scores: dict[str, np.ndarray],
    sparse: float,
    skeleton: float,
    confidence: tuple[float, float] | None = None,
    fusion: str = "standardised",
    pool: int | None = None,
    numbers: float = 0.0,
    leads: list | None = None,
    encoder_lead: float | None = None,
) -> list[int | None]:
    """Each query's rank of its first answer (``DEPTH`` at most, else None) when the channels are fused with
    these weights as ``SearchIndex.search`` fuses them (``skeleton.fuse_channels``, ties to the lower row);
    ``confidence``: as ``SearchIndex.search``'s ``skeleton_confidence`` (None: ``skeleton`` for every query);
    ``fusion``: ``"standardised"`` or ``"cosine"``; ``pool``: fuse only the ``pool`` rows of the best cosine
    (ties to the lower row), as an approximate index fuses its ``HYBRID_POOL`` candidates (None: every row, as
    an exact index does); an answer outside them is not found; ``numbers``: the bonus of a row whose numbers are
    exactly the query's (``SearchIndex.search``'s ``numbers_bonus``; ``scores["numbers"]``). ``leads``, when
    given a list, receives each query's lead: its best answer's fused score less the best other row's (below 0
    where another row comes first; ``-inf`` where no answer is among the rows fused). ``encoder_lead``:
    ``SearchIndex.search``'s (``skeleton.keep_encoder_lead``; None: never)."""
    from mathgraph.tasks.search.skeleton import confident_weight, fuse_channels, keep_encoder_lead

    ranks = []
    for i, query in enumerate(bank.queries):
        rows = np.arange(len(bank.texts))
        if pool is not None:
            rows = np.sort(np.argsort(-scores["dense"][i], kind="stable")[:pool])
        channels = [scores[c][i][rows] for c in ("dense", "sparse", "skeleton")]
        own = confident_weight(float(np.max(channels[2])), skeleton, confidence) if skeleton > 0 else 0.0
        weights = (max(0.0, 1.0 - sparse - own), sparse, own)
        fused = fuse_channels(channels, weights, fusion)
        if numbers > 0:
            fused = fused + numbers * scores["numbers"][i][rows]
        if skeleton > 0:
            fused = keep_encoder_lead(fused, channels[0], encoder_lead)
        answers = query["answers"]
        if pool is not None:  # the answers' positions among the fused rows
            position = {int(row): j for j, row in enumerate(rows)}
            answers = [position[a] for a in answers if a in position]
        if not answers:
            ranks.append(None)
            if leads is not None:
                leads.append(-math.inf)
            continue
        best = max(answers, key=lambda a: (fused[a], -a))
        if leads is not None:
            others = np.delete(fused, answers)
            leads.append(float(fused[best] - others.max()) if len(others) else math.inf)
        rank = 1 + int(np.sum(fused > fused[best])) + int(np.sum(fused[:best] == fused[best]))
        ranks.append(rank if rank <= DEPTH else None)
    return ranks


def expected_worst_margin(
    hits: np.ndarray, alone: np.ndarray, kinds: Sequence[str], resamples: int = 1000, seed: int = 0
) -> float:
    """The worst per-kind R@1 margin over the sentence encoder alone (``hits`` and ``alone``: whether each query's
    answer came first), averaged over ``resamples`` bootstrap resamples of each kind's queries (paired, seeded):
    0 for a choice that loses no query the sentence encoder finds, below 0 for one that loses some, even where
    it wins as many back in the same kind."""
    rng = np.random.default_rng(seed)
    kinds = np.asarray(kinds)
    worst = np.full(resamples, np.inf)
    for kind in dict.fromkeys(kinds.tolist()):
        chosen = kinds == kind
        difference = hits[chosen].astype(float) - alone[chosen].astype(float)
        draws = rng.integers(0, len(difference), size=(resamples, len(difference)))
        worst = np.minimum(worst, difference[draws].mean(axis=1))
    return float(worst.mean())


def choose_weights(
    banks: Sequence[Bank],
    scores: Sequence[dict],
    confidences: Sequence[tuple[float, float] | None] = (None,),
    fusions: Sequence[str] = ("standardised",),
    pools: Sequence[int | None] = (None,),
    numbers: Sequence[float] = (0.0,),
    grid: Sequence[tuple[float, float]] | None = None,
) -> dict:
    """The TF-IDF weight, the skeleton's (largest) weight (a grid of ``WEIGHT_STEP``, the sentence encoder keeping
    at least ``MIN_DENSE_WEIGHT``), the skeleton's confidence (one of ``confidences``; None: the same weight
    for every query) and the fusion (one of ``fusions``: ``skeleton.fuse_channels``) chosen on these (dev) banks:
    among the choices where every kind of every bank has an R@1 at least the sentence encoder's alone, the
    largest expected worst per-kind margin over it (``expected_worst_margin``, ``MARGIN_BOOTSTRAP`` resamples),
    then the best mean R@1 over the kinds, then the best mean MRR, then the smallest total weight, the highest
    confidence floor and the fusion first in ``fusions``. ``pools``: the searches each choice is measured in
    (``fused_ranks``: None, every row fused, as an exact index does; a number, the rows of the best cosines, as an
    approximate index does): a query counts as found first only where it is in every one, and a kind's MRR is
    its lowest. ``numbers``: the numbers bonuses tried (``fused_ranks``), each with every choice of the rest; ties
    of R@1 and MRR go to the best soft R@1 (``LEAD_SCALE``: how far the answers lead, a query's lead its lowest
    over the searches) before the smallest weights, then to the smallest bonus. Returns the choice and every
    choice's figures. ``grid``: the (TF-IDF, skeleton) weights tried (None: every pair of the ``WEIGHT_STEP``
    grid); it must hold (0, 0), the sentence encoder alone."""
    if grid is None:
        steps = int(round((1 - MIN_DENSE_WEIGHT) / WEIGHT_STEP))
        grid = [
            (round(a * WEIGHT_STEP, 2), round(b * WEIGHT_STEP, 2)) for a in range(steps + 1) for b in range(steps + 1)
        ]
        grid = [(a, b) for a, b in grid if a + b <= 1 - MIN_DENSE_WEIGHT + 1e-9]
    if (0.0, 0.0) not in grid:
        raise ValueError("the grid must hold (0, 0), the sentence encoder alone, to compare the choices with")
    table = []
    hits_alone = None
    for fusion, confidence, (sparse, skeleton), bonus in itertools.product(fusions, confidences, grid, numbers):
        if skeleton == 0 and (confidence != confidences[0] or fusion != fusions[0]):
            continue  # the same as the first confidence and fusion: without the skeleton they change nothing
        per_kind, hits, kinds, query_leads = {}, [], [], []
        for bank, bank_scores in zip(banks, scores):
            searches, lead_lists = [], []
            for p in pools:
                lead_lists.append([])
                searches.append(
                    fused_ranks(bank, bank_scores, sparse, skeleton, confidence, fusion, p, bonus, lead_lists[-1])
                )
            query_leads += [min(values) for values in zip(*lead_lists)]
            # a query's rank: its worst over the searches (None, not found, the worst of all)
            ranks = [None if None in r else max(r) for r in zip(*searches)]
            mrr: dict = {}
            for search in searches:
                measured = summarise(bank, {"ranks": dict(zip((q["id"] for q in bank.queries), search))})
                for kind, m in measured.items():
                    mrr[kind] = min(mrr.get(kind, m["mrr"]), m["mrr"])
            result = {"ranks": dict(zip((q["id"] for q in bank.queries), ranks))}
            for kind, m in summarise(bank, result).items():
                if kind != "all":
                    per_kind[f"{bank.name}/{kind}"] = (m["r1"], mrr[kind])
            hits += [r == 1 for r in ranks]
            kinds += [f"{bank.name}/{q['kind']}" for q in bank.queries]
        entry = {
            "sparse": sparse,
            "skeleton": skeleton,
            "confidence": confidence,
            "fusion": fusion,
            "numbers": bonus,
            "per_kind": per_kind,
            "soft_r1": float(np.mean(np.clip(np.asarray(query_leads) / LEAD_SCALE, -1.0, 1.0))),
        }
        entry["hits"] = np.array(hits)
        if sparse == 0 and skeleton == 0 and bonus == 0:
            hits_alone = entry["hits"]
        entry["kinds"] = kinds
        table.append(entry)
    alone = next(e for e in table if e["sparse"] == 0 and e["skeleton"] == 0 and e["numbers"] == 0)["per_kind"]
    for entry in table:
        values = entry["per_kind"].values()
        entry["feasible"] = all(entry["per_kind"][k][0] >= alone[k][0] for k in alone)
        entry["worst_margin"] = min(entry["per_kind"][k][0] - alone[k][0] for k in alone)
        entry["expected_worst_margin"] = expected_worst_margin(
            entry.pop("hits"), hits_alone, entry.pop("kinds"), MARGIN_BOOTSTRAP
        )
        entry["mean_r1"] = float(np.mean([v[0] for v in values]))
        entry["mean_mrr"] = float(np.mean([v[1] for v in values]))
    feasible = [e for e in table if e["feasible"]]
    chosen = max(
        feasible,
        key=lambda e: (
            round(e["expected_worst_margin"], 9),
            e["mean_r1"],
            round(e["mean_mrr"], 9),
            round(e["soft_r1"], 9),
            -(e["sparse"] + e["skeleton"]),
            -1.0 if e["confidence"] is None else e["confidence"][0],
            -list(fusions).index(e["fusion"]),
            -e["numbers"],
        ),
    )
    return {
        "chosen": {
            "sparse": chosen["sparse"],
            "skeleton": chosen["skeleton"],
            "confidence": chosen["confidence"],
            "fusion": chosen["fusion"],
            "numbers": chosen["numbers"],
        },
        "grid": table,
    }


# --------------------------------------------------------------------------- metrics
def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return (float("nan"), float("nan"))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean(values: Sequence[float], resamples: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    return (float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))


def metrics(ranks: Sequence[int | None]) -> dict:
    n = len(ranks)
    hit1 = sum(r == 1 for r in ranks)
    hit10 = sum(r is not None and r <= 10 for r in ranks)
    reciprocal = [0.0 if r is None else 1.0 / r for r in ranks]
    return {
        "n": n,
        "r1": hit1 / n if n else float("nan"),
        "r1_ci": wilson(hit1, n),
        "r10": hit10 / n if n else float("nan"),
        "r10_ci": wilson(hit10, n),
        "mrr": float(np.mean(reciprocal)) if n else float("nan"),
        "mrr_ci": bootstrap_mean(reciprocal),
    }


def summarise(bank: Bank, result: dict) -> dict:
    by_kind = {}
    for kind in (*bank.kinds, "all"):
        ranks = [result["ranks"][q["id"]] for q in bank.queries if kind == "all" or q["kind"] == kind]
        by_kind[kind] = metrics(ranks)
    return by_kind


# --------------------------------------------------------------------------- tables
def machine() -> str:
    """The CPU, the cores this process may use, torch's threads, CUDA, and the load average (other work)."""
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (
        f"{platform.processor() or platform.machine()}, {cores} cores available, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), cuda {torch.cuda.is_available()}{load}"
    )


def fmt(value: float, ci: tuple[float, float] | None = None) -> str:
    text = f"{value:.3f}"
    return f"{text} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci is not None else text


def tables(report: dict) -> str:
    lines = []
    for bank in report["banks"].values():
        kinds = bank["kinds"]
        lines += [f"## {bank['title']}", ""]
        lines += [f"- {key}: {value}" for key, value in bank["facts"].items() if key != "seeds"]
        if "seeds" in bank["facts"]:
            lines.append(f"- seed names (group_seeds order over the whole file): {', '.join(bank['facts']['seeds'])}")
        lines += ["", "R@1 per kind (Wilson 95% interval), R@10 and MRR over all queries, and wall time:", ""]
        header = "| search | " + " | ".join(f"{k} R@1" for k in kinds) + " | R@10, all | MRR, all | wall s |"
        lines += [header, "|---|" + "---:|" * (len(kinds) + 3)]
        for result in bank["rows"].values():
            m = result["metrics"]
            cells = [fmt(m[k]["r1"], m[k]["r1_ci"]) for k in kinds]
            lines.append(
                f"| {result['row']['label']} | "
                + " | ".join(cells)
                + f" | {fmt(m['all']['r10'])} | {fmt(m['all']['mrr'])} | {result['wall_s']:.1f} |"
            )
        lines += ["", f"Per kind (n queries; R@1, R@10 with Wilson, MRR@{DEPTH} with bootstrap 95% intervals):", ""]
        lines += ["| search | kind | n | R@1 | R@10 | MRR |", "|---|---|---:|---:|---:|---:|"]
        for name, result in bank["rows"].items():
            for kind in (*kinds, "all"):
                m = result["metrics"][kind]
                lines.append(
                    f"| {name} | {kind} | {m['n']} | {fmt(m['r1'], m['r1_ci'])} | {fmt(m['r10'], m['r10_ci'])} "
                    f"| {fmt(m['mrr'], m['mrr_ci'])} |"
                )
        lines += [
            "",
            "Wall time per row (the bank's encoding, model loading included, in the run that made its vectors; this run's search of all queries):",
            "",
        ]
        lines += ["| search | bank encoding s | search s | how the bank was encoded |", "|---|---:|---:|---|"]
        for name, result in bank["rows"].items():
            t = result["timing"]
            lines.append(f"| {name} | {t['bank_encoding_s']:.1f} | {t['search_s']:.1f} | {t['encoding_note']} |")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main
def load_bank(name: str, args: argparse.Namespace, data: Path) -> tuple[Bank, str]:
    """The bank ``name`` (``gsm8k`` or ``math``) of ``args.split``, and its title."""
    if name == "gsm8k":
        templates = 0 if args.smoke else TEMPLATES_PER_SEED  # the smoke run keeps its 6 GSM-Plus queries
        return gsm8k_bank(data, args.split, templates), f"GSM8K bank, GSM-Plus {args.split} seeds"
    if name == "math":
        bank = math_bank(data, [Path(p) for p in args.queries.split(",")], smoke=args.smoke, split=args.split)
        return bank, f"MATH bank, hand-written rewrites ({args.split})"
    raise SystemExit(f"unknown bank {name!r}: gsm8k or math")


def weights_report(args: argparse.Namespace, data: Path, work: Path, output: Path, stores: dict) -> dict:
    """``--choose-weights``: the fused default's TF-IDF and skeleton weights chosen on the banks' dev queries
    (``choose_weights``), printed and written to ``OUTPUT_weights.json``; ``--choose-numbers``: the numbers bonus
    (``NUMBERS_GRID``) added to the shipped fusion (``SKELETON_WEIGHTS``, confidence and fusion), written to
    ``OUTPUT_numbers.json``."""
    flag = "--choose-numbers" if args.choose_numbers else "--choose-weights"
    if args.split != "dev" and not args.smoke:
        raise SystemExit(f"{flag} chooses on dev only: leave out --split")
    started = time.perf_counter()
    banks = [load_bank(name, args, data)[0] for name in args.banks.split(",")]
    scores = [channel_scores(bank, work, args.batch_size, stores) for bank in banks]
    from mathgraph.tasks.search.index import HYBRID_POOL

    if args.choose_numbers:
        choice = choose_numbers(banks, scores, work)
    else:
        choice = choose_weights(banks, scores, CONFIDENCE_GRID, FUSION_GRID, (None, HYBRID_POOL))
    ranked = sorted(
        choice["grid"],
        key=lambda e: (
            e["feasible"],
            round(e["expected_worst_margin"], 9),
            e["mean_r1"],
            round(e["mean_mrr"], 9),
            round(e["soft_r1"], 9),
        ),
        reverse=True,
    )
    kinds = list(ranked[0]["per_kind"])
    print(
        "fusion sparse skeleton confidence numbers [information] feasible worst_margin expected_worst mean_R@1 "
        "mean_MRR soft_R@1 | " + " ".join(kinds)
    )
    shown = ranked[:40] if args.choose_numbers else ranked[:20]
    alone = [e for e in ranked if e["sparse"] == 0 and e["skeleton"] == 0 and e["numbers"] == 0]
    for entry in shown + [e for e in alone if e not in shown]:
        cells = " ".join(f"{entry['per_kind'][k][0]:.3f}" for k in kinds)
        print(
            f"{entry['fusion']} {entry['sparse']:.1f} {entry['skeleton']:.1f} {entry['confidence']} "
            f"{entry['numbers']:.2f}{information_cell(entry)} "
            f"{entry['feasible']} {entry['worst_margin']:+.3f} "
            f"{entry['expected_worst_margin']:+.4f} {entry['mean_r1']:.4f} {entry['mean_mrr']:.4f} "
            f"{entry['soft_r1']:.4f} | {cells}"
        )
    print(f"chosen: {choice['chosen']} ({time.perf_counter() - started:.1f} s)")
    path = output.parent / f"{output.name}_{'numbers' if args.choose_numbers else 'weights'}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"banks": [b.name for b in banks], **choice}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return choice


def lead_report(args: argparse.Namespace, data: Path, work: Path, output: Path, stores: dict) -> dict:
    """``--choose-lead``: the encoder lead (``choose_encoder_lead``) chosen on the banks' dev queries, printed with
    the default fusion's R@1 per kind with and without it (every row fused), written to ``OUTPUT_lead.json``."""
    from mathgraph.tasks.search.skeleton import (
        NUMBERS_BONUS,
        SKELETON_CONFIDENCE,
        SKELETON_FUSION,
        SKELETON_WEIGHTS,
    )

    if args.split != "dev" and not args.smoke:
        raise SystemExit("--choose-lead chooses on dev only: leave out --split")
    banks = [load_bank(name, args, data)[0] for name in args.banks.split(",")]
    scores = [channel_scores(bank, work, args.batch_size, stores) for bank in banks]
    choice = choose_encoder_lead(banks, scores)
    for entry in choice["grid"]:
        print(f"lead {entry['lead']:.2f}: {entry['queries']} of {choice['queries']} queries, {entry['wrong']} wrong")
    print(f"largest lead of a wrong first row: {choice['largest_wrong_lead']}; chosen: {choice['chosen']}")
    sparse, skeleton = SKELETON_WEIGHTS
    choice["r1"] = {}
    for lead in (None, choice["chosen"]):
        for bank, bank_scores in zip(banks, scores):
            ranks = fused_ranks(
                bank,
                bank_scores,
                sparse,
                skeleton,
                tuple(SKELETON_CONFIDENCE),
                SKELETON_FUSION,
                None,
                NUMBERS_BONUS,
                None,
                lead,
            )
            m = summarise(bank, {"ranks": dict(zip((q["id"] for q in bank.queries), ranks))})
            choice["r1"][f"{bank.name}, lead {lead}"] = {k: m[k]["r1"] for k in (*bank.kinds, "all")}
            print(
                f"{bank.name} default, encoder lead {lead}: "
                + ", ".join(f"{k} {m[k]['r1']:.3f}" for k in (*bank.kinds, "all"))
            )
    path = output.parent / f"{output.name}_lead.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"banks": [b.name for b in banks], **choice}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return choice


def information_cell(entry: dict) -> str:
    """`` I`` for a ``--choose-numbers`` grid entry of information ``I``, else nothing."""
    return f" {entry['information']:g}" if "information" in entry else ""


def choose_numbers(banks: Sequence[Bank], scores: Sequence[dict], work: Path) -> dict:
    """``--choose-numbers``: the numbers bonus (``NUMBERS_GRID``), the skeleton's largest weight
    (``NUMBERS_SKELETON_GRID``, TF-IDF 0, the shipped confidence and fusion) and the information of a whole bonus
    (``NUMBERS_INFORMATION_GRID``: ``SkeletonIndex.number_matches``' ``information``) chosen together on these dev
    banks: ``choose_weights``' rule for each information, then, over them all, the same order with one more
    tie-break last, the largest information (the least bonus where the numbers matched are common ones)."""
    from mathgraph.tasks.search.index import HYBRID_POOL
    from mathgraph.tasks.search.skeleton import SKELETON_CONFIDENCE, SKELETON_FUSION

    pairs = [(0.0, 0.0)] + [(0.0, float(w)) for w in NUMBERS_SKELETON_GRID]
    indexes = [skeleton_index(bank, work)[0] for bank in banks]
    table = []
    for information in NUMBERS_INFORMATION_GRID:
        measured = [
            {
                **bank_scores,
                "numbers": np.stack(index.number_matches([q["text"] for q in bank.queries], None, information)),
            }
            for bank, bank_scores, index in zip(banks, scores, indexes)
        ]
        grid = choose_weights(
            banks, measured, (tuple(SKELETON_CONFIDENCE),), (SKELETON_FUSION,), (None, HYBRID_POOL), NUMBERS_GRID, pairs
        )["grid"]
        table += [{**entry, "information": information} for entry in grid]
    chosen = max(
        (e for e in table if e["feasible"]),
        key=lambda e: (
            round(e["expected_worst_margin"], 9),
            e["mean_r1"],
            round(e["mean_mrr"], 9),
            round(e["soft_r1"], 9),
            -(e["sparse"] + e["skeleton"]),
            -e["numbers"],
            e["information"],
        ),
    )
    keys = ("sparse", "skeleton", "confidence", "fusion", "numbers", "information")
    return {"chosen": {k: chosen[k] for k in keys}, "grid": table}


# the encoder leads --choose-lead tries (SearchIndex.search's encoder_lead, skeleton.keep_encoder_lead)
LEAD_GRID = tuple(round(0.05 * i, 2) for i in range(1, 11))


def choose_encoder_lead(banks: Sequence[Bank], scores: Sequence[dict], grid: Sequence[float] = LEAD_GRID) -> dict:
    """``--choose-lead``: the smallest lead of ``grid`` at or above which the sentence encoder's first row is an
    answer of every dev query of these banks (a query's lead: its best row's cosine less its second best's),
    so that keeping that row first (``skeleton.keep_encoder_lead``) loses no dev query; with each grid value,
    how many dev queries lead by at least it and how many of those the encoder gets wrong, and the largest lead
    of a wrong first row. None where no grid value is safe."""
    leads, right = [], []
    for bank, bank_scores in zip(banks, scores):
        for i, query in enumerate(bank.queries):
            dense = bank_scores["dense"][i]
            first = int(np.argmax(dense))
            leads.append(float(dense[first] - np.partition(dense, -2)[-2]))
            right.append(first in query["answers"])
    leads, right = np.array(leads), np.array(right)
    table = [
        {"lead": float(g), "queries": int(np.sum(leads >= g)), "wrong": int(np.sum((leads >= g) & ~right))}
        for g in grid
    ]
    safe = [e["lead"] for e in table if e["wrong"] == 0]
    wrong = leads[~right]
    return {
        "chosen": min(safe) if safe else None,
        "largest_wrong_lead": float(wrong.max()) if len(wrong) else None,
        "queries": len(leads),
        "grid": table,
    }


POOL_FUSIONS = {  # --pools: the fusions before the default, as fused_ranks arguments (pool_fusions adds the default)
    "cosine (skeleton 0.7, confidence (0, 1))": (0.0, 0.7, (0.0, 1.0), "cosine", 0.0, None),
    "standardised (skeleton 0.4, confidence (0.2, 1))": (0.0, 0.4, (0.2, 1.0), "standardised", 0.0, None),
}


def pool_fusions() -> dict[str, tuple]:
    """``--pools``' fusions: the shipped default (``tasks.search.skeleton``'s weights, confidence, fusion and
    numbers bonus) first, then ``POOL_FUSIONS``."""
    from mathgraph.tasks.search.skeleton import (
        ENCODER_LEAD,
        NUMBERS_BONUS,
        SKELETON_CONFIDENCE,
        SKELETON_FUSION,
        SKELETON_WEIGHTS,
    )

    sparse, skeleton = SKELETON_WEIGHTS
    confidence = tuple(SKELETON_CONFIDENCE)
    label = (
        f"default: {SKELETON_FUSION} (TF-IDF {sparse}, skeleton {skeleton}, confidence {confidence}, "
        f"numbers bonus {NUMBERS_BONUS}, encoder lead {ENCODER_LEAD})"
    )
    return {label: (sparse, skeleton, confidence, SKELETON_FUSION, NUMBERS_BONUS, ENCODER_LEAD), **POOL_FUSIONS}


def pools_report(args: argparse.Namespace, data: Path, work: Path, stores: dict) -> list[str]:
    """``--pools``: R@1 per kind of each of ``pool_fusions()`` fusing every row (an exact index) and fusing the
    ``HYBRID_POOL`` rows of the best cosines (an approximate index), from the channels' scores; printed."""
    from mathgraph.tasks.search.index import HYBRID_POOL

    lines = []
    for name in args.banks.split(","):
        bank = load_bank(name, args, data)[0]
        scores = channel_scores(bank, work, args.batch_size, stores)
        for label, (sparse, skeleton, confidence, fusion, numbers, lead) in pool_fusions().items():
            for pool in (None, HYBRID_POOL):
                ranks = fused_ranks(bank, scores, sparse, skeleton, confidence, fusion, pool, numbers, None, lead)
                m = summarise(bank, {"ranks": dict(zip((q["id"] for q in bank.queries), ranks))})
                cells = " | ".join(f"{k} {fmt(m[k]['r1'], m[k]['r1_ci'])}" for k in (*bank.kinds, "all"))
                where = "every row" if pool is None else f"{pool} candidates"
                lines.append(f"{args.split} {name} {label}, {where}: {cells}; MRR {m['all']['mrr']:.3f}")
                print(lines[-1], flush=True)
    return lines


def main(argv: Sequence[str] | None = None) -> dict:
    args = arguments(argv)
    work = smoke_work(args.work) if args.smoke else Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = SMOKE_DATA if args.smoke else Path(args.data)
    extra = [parse_row(text) for text in args.add_row]
    names = args.rows.split(",") if args.rows else (list(SMOKE_ROWS) if args.smoke else None)
    chosen = rows(names, extra)
    output = Path(args.output) if args.output else (work / "issue37_bank_search" if args.smoke else RESULTS)
    if args.smoke and output.resolve().is_relative_to(REPO.resolve()):
        raise SystemExit("--smoke writes nothing into the repository: give an --output outside it")
    started = time.perf_counter()
    report: dict = {"machine": machine(), "split": args.split, "split_seed": SPLIT_SEED, "depth": DEPTH, "banks": {}}
    stores: dict = {}
    if args.choose_weights or args.choose_numbers:
        return weights_report(args, data, work, output, stores)
    if args.choose_lead:
        return lead_report(args, data, work, output, stores)
    if args.pools:
        return {"pools": pools_report(args, data, work, stores)}
    for bank_name in args.banks.split(","):
        bank, title = load_bank(bank_name, args, data)
        print(f"{title}: {bank.facts['bank']}, {len(bank.queries)} queries", flush=True)
        entry = {"title": title, "facts": bank.facts, "kinds": list(bank.kinds), "rows": {}}
        for row in chosen:
            result = run_row(row, bank, work, args.batch_size, stores)
            result["metrics"] = summarise(bank, result)
            entry["rows"][row.name] = result
            m = result["metrics"]
            print(
                f"  {row.name}: "
                + ", ".join(f"{k} R@1 {m[k]['r1']:.3f}" for k in bank.kinds)
                + f"; all R@10 {m['all']['r10']:.3f} MRR {m['all']['mrr']:.3f}; wall {result['wall_s']:.1f} s",
                flush=True,
            )
        report["banks"][bank_name] = entry
    report["total_s"] = time.perf_counter() - started
    text = f"machine: {report['machine']}; total {report['total_s']:.1f} s\n\n" + tables(report)
    print("\n" + text)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    output.with_suffix(".md").write_text(text, encoding="utf-8")
    print(f"wrote {output.with_suffix('.md')} and .json")
    if args.record:
        from mathgraph.tasks.release.bank_search import record_bank_results

        search = record_bank_results(Path(args.record), report)
        print(f"recorded in {args.record}: search.banks.{args.split}; search.hybrid {json.dumps(search.get('hybrid'))}")
    return report


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", required=True, help="embedding caches (WORK/embeddings); --smoke: WORK/smoke")
    parser.add_argument("--data", default=str(DATA), help="the shared data (math/, gsm8k/, gsmplus/)")
    parser.add_argument("--split", default="dev", choices=("dev", "test", "dev+test"), help="GSM-Plus seeds")
    parser.add_argument("--banks", default="gsm8k,math")
    parser.add_argument(
        "--queries",
        default=f"{MATH_QUERIES},{MATH_QUERIES_THIRD},{MATH_QUERIES_FOURTH},{MATH_QUERIES_SIXTH},{MATH_QUERIES_SEVENTH}",
        help="the MATH bank's query files, comma-separated (default: the first two sets, the third, all test, the "
        f"fourth, the sixth and the seventh, all dev; the fifth and the eighth to the fourteenth, all test, are "
        f"{MATH_QUERIES_FIFTH.relative_to(REPO)}, {MATH_QUERIES_EIGHTH.relative_to(REPO)}, "
        f"{MATH_QUERIES_NINTH.relative_to(REPO)}, {MATH_QUERIES_TENTH.relative_to(REPO)}, "
        f"{MATH_QUERIES_ELEVENTH.relative_to(REPO)}, {MATH_QUERIES_TWELFTH.relative_to(REPO)}, "
        f"{MATH_QUERIES_THIRTEENTH.relative_to(REPO)} and {MATH_QUERIES_FOURTEENTH.relative_to(REPO)})",
    )
    parser.add_argument("--rows", help=f"comma-separated row names (default: all of {', '.join(ROWS)})")
    parser.add_argument("--add-row", action="append", default=[], metavar="NAME:key=value,...")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--output", help=f"results path without suffix (default: {RESULTS.relative_to(REPO)})")
    parser.add_argument(
        "--record",
        metavar="PACKAGE",
        help="keep the tables in PACKAGE's release notes and model card; a dev run with rows named sparse<W> "
        "also sets search's TF-IDF fusion weight (tasks.release.bank_search.record_bank_results)",
    )
    parser.add_argument(
        "--choose-weights",
        action="store_true",
        help="choose the fused default's TF-IDF and skeleton weights on the dev queries (writes OUTPUT_weights.json)",
    )
    parser.add_argument(
        "--choose-numbers",
        action="store_true",
        help="choose the numbers bonus (with the skeleton weight) on the dev queries (writes OUTPUT_numbers.json)",
    )
    parser.add_argument(
        "--choose-lead",
        action="store_true",
        help="choose the sentence encoder's lead at which its first row stays first, on the dev queries "
        "(writes OUTPUT_lead.json)",
    )
    parser.add_argument(
        "--pools",
        action="store_true",
        help="R@1 of the default fusion and the one before over every row and over an approximate index's candidates",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a short run (about 1.5 min on 2 shared cores) on the smoke data (benchmarks/data/smoke): python benchmarks/bank_search.py --smoke "
        "--work WORK (results under WORK/smoke)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    random.seed(0)
    main()
