"""``mathgraph kit build``: everything a GPU job needs, parsed and packed on the CPU, small enough to travel.

A kit holds:

- ``packed/``: every problem of the pre-training corpus and the task files, parsed once here and packed
  (``models.packed_features``: token ids, graph nodes and edges, and the alignment-feature rows of every pair
  the pair heads read), so the job imports no parser;
- ``data/``: the task files and the corpus themselves, gzipped (the job reads its examples from them);
- ``base/``: the start encoder's text weights in bf16 without the word-embedding rows no kit text uses
  (``tasks.kit.weights``), its config, tokenizer and graph vocabularies;
- ``kit.json``: the job's description (what each phase trains, batch sizes, learning rates, the share of
  the time each phase gets) and the kit's size by part.

The data are the ``TASK.PART.jsonl`` files of ``tasks.release.build.task_files`` and the pre-training corpus
``pretrain.train.jsonl``: train and dev parts for the four tasks, and KPC's test part for the knowledge-point
study the job reports (evaluated, never trained on). The corpus holds train parts only. QAM folds for the
job's cross-validation (``qam.cvK-train``, ``qam.cvK-dev``, ``qam.cvK-test``: fold ``K``'s training pairs, the
dev pairs that choose its epoch, its held-out pairs; ``benchmarks/qam_number_swap_cv.py --export-folds``
writes them) travel too when ``data`` has them; the ``qam-cv`` phase needs them.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

KIT_FORMAT = "mathgraph-kit"
KIT_VERSION = 1
KIT_NAME = "kit.json"
PACKED_DIR, DATA_DIR, BASE_DIR = "packed", "data", "base"
TEXT_WEIGHTS = "text.safetensors"
GRAPH_WEIGHTS = "graph.safetensors"  # a trained start's graph side (bf16); an untrained start has none
# What travels with the code: the transfer limit of the GPU windows this kit is made for is 64 MiB, and the
# job needs some room beside it.
KIT_AND_CODE_LIMIT = 60 * 2**20
# The parts a kit carries: train and dev of every task, and KPC test for the study (evaluated only).
EVALUATION_ONLY = {"kpc": ("test",)}
ALIGNED_TASKS = ("qrc", "qam", "sqr")  # the pair tasks whose heads read alignment features
QAM_FOLD_PART = re.compile(r"cv(?P<fold>\d+)-(?P<role>train|dev|test)")  # a QAM cross-validation fold's part


@dataclass
class JobSettings:
    """What ``kit run`` trains; saved in ``kit.json``. The defaults are the job planned for one GPU."""

    seed: int = 0
    pretrain_batch_size: int = 128
    pretrain_lr: float = 1e-4
    # the KPC study's fine-tuning: the best of the settings a GPU run compared on dev (docs/gpu.md)
    kpc_learning_rate: float = 1e-4
    kpc_epochs: int = 6
    kpc_batch_size: int = 32
    kpc_seeds: int = 1  # KPC fine-tunings per study phase, each from its own seed; reported as their ensemble
    # KPC settings to compare in the study (each {"learning_rate", "epochs", "batch_size", "seeds"}, any of them
    # left out taking the values above); empty: one setting, the values above
    kpc_settings: list = field(default_factory=list)
    # the qam-cv phase: one QAM model per fold of the kit's qam.cvK-* parts, best epoch on the fold's dev
    qam_cv_learning_rate: float = 1e-4
    qam_cv_epochs: int = 3
    qam_cv_batch_size: int = 16
    multitask_epochs: int = 2
    multitask_batch_size: int = 16
    finetune_lr: float = 3e-5  # the multi-task phase's
    # the share of the training time each phase gets (of the minutes left when it starts, over the shares left)
    shares: dict = field(
        default_factory=lambda: {"comus": 0.30, "multitask": 0.25, "dapt": 0.25, "kpc-dapt": 0.09, "kpc-comus": 0.11}
    )
    reserve_s: float = 40.0  # kept for the final writing and the report
    max_steps: int | None = None  # a cap on every phase's steps (smoke runs)


def kpc_runs(settings: JobSettings) -> list[dict]:
    """The KPC study's fine-tunings, in the order they run: each setting of ``kpc_settings`` (or the job's own
    KPC values) once per seed, seeds ``seed, seed+1, ...``; the first seed of every setting runs before any
    second seed, so a job cut short still has one run of each."""
    default = {
        "learning_rate": settings.kpc_learning_rate,
        "epochs": settings.kpc_epochs,
        "batch_size": settings.kpc_batch_size,
        "seeds": settings.kpc_seeds,
    }
    chosen = [{**default, **setting} for setting in settings.kpc_settings] or [default]
    most = max(setting["seeds"] for setting in chosen)
    return [
        {"setting": number, "seed": settings.seed + index, **{k: v for k, v in setting.items() if k != "seeds"}}
        for index in range(most)
        for number, setting in enumerate(chosen)
        if index < setting["seeds"]
    ]


def read_kit(kit: str | Path) -> dict:
    """The kit's description (``kit.json``); ``ValueError`` for a folder that is no kit."""
    path = Path(kit) / KIT_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{kit}: not a mathgraph kit (no {KIT_NAME}; write one with `mathgraph kit build`)")
    description = json.loads(path.read_text(encoding="utf-8"))
    if description.get("format") != KIT_FORMAT or description.get("version") != KIT_VERSION:
        raise ValueError(f"{path}: not a version-{KIT_VERSION} {KIT_FORMAT} description")
    return description


def kit_parts(files: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The task files a kit carries: every task's train and dev parts (``dev-*`` too), KPC's test part, and
    QAM's cross-validation folds (``cvK-train``, ``cvK-dev``, ``cvK-test``)."""
    chosen = {}
    for task, parts in files.items():
        keep = {
            part: path
            for part, path in parts.items()
            if part == "train"
            or part.startswith("dev")
            or part in EVALUATION_ONLY.get(task, ())
            or (task == "qam" and QAM_FOLD_PART.fullmatch(part))
        }
        if keep:
            chosen[task] = keep
    return chosen


def qam_folds(parts: dict[str, str]) -> dict[int, dict[str, str]]:
    """QAM's cross-validation folds among a kit's QAM ``parts``: ``{fold: {"train", "dev", "test": path}}``;
    ``ValueError`` for a fold that lacks one of the three."""
    folds: dict[int, dict[str, str]] = {}
    for part, path in parts.items():
        match = QAM_FOLD_PART.fullmatch(part)
        if match:
            folds.setdefault(int(match["fold"]), {})[match["role"]] = path
    for fold, roles in sorted(folds.items()):
        missing = sorted({"train", "dev", "test"} - set(roles))
        if missing:
            raise ValueError(f"QAM fold {fold} has no {' or '.join(f'qam.cv{fold}-{m}.jsonl' for m in missing)}")
    return dict(sorted(folds.items()))


def task_config(task: str):
    """The ``TaskConfig`` a kit trains ``task`` with: the release's fields, alignment features for the pair tasks."""
    from mathgraph.models.task_model import TaskConfig

    return TaskConfig(task, text_field="problem", label_field="subject", alignment=task in ALIGNED_TASKS)


def build_kit(
    data: str | Path,
    output: str | Path,
    model: str = "untrained",
    settings: JobSettings | None = None,
    parse_workers: int = 1,
    graph_cache="default",
    say: Callable[[str], None] = print,
) -> dict:
    """Parse and pack the task files in ``data`` (``tasks.release.build.task_files``) and the corpus
    ``pretrain.train.jsonl``, store ``model``'s text weights compactly, and describe the job in ``output``.
    Returns the kit's description, with its size by part."""
    from mathgraph.models.alignment_features import alignment_rows
    from mathgraph.models.features import FeatureStore, graph_cache_option
    from mathgraph.models.packed_features import pack_features
    from mathgraph.models.text_encoder import first_added_latex_row
    from mathgraph.parsers.graph_cache import parse_cached
    from mathgraph.tasks.release.build import PRETRAIN_CORPUS, task_files
    from mathgraph.tasks.task_types import load_examples
    from mathgraph.tasks.training.finetune import load_start_encoder

    from .weights import save_compact_text_state

    started = time.perf_counter()
    settings = settings or JobSettings()
    output = Path(output)
    files = task_files(data)
    if "train" not in files.get(PRETRAIN_CORPUS, {}):
        raise FileNotFoundError(f"{data}: a kit needs the pre-training corpus {PRETRAIN_CORPUS}.train.jsonl")
    carried = kit_parts({t: p for t, p in files.items() if t != PRETRAIN_CORPUS})
    if "qam-cv" in settings.shares and not qam_folds(carried.get("qam", {})):
        raise FileNotFoundError(
            f"{data}: the qam-cv phase needs QAM folds, qam.cvK-train/-dev/-test.jsonl "
            "(python benchmarks/qam_number_swap_cv.py --export-folds DATA)"
        )
    if output.exists():
        shutil.rmtree(output)
    (output / DATA_DIR).mkdir(parents=True)

    pretrains = {"comus", "dapt"} & set(settings.shares)  # a job without pre-training carries no corpus
    corpus_path = files[PRETRAIN_CORPUS]["train"]
    corpus = [json.loads(line)["text"] for line in open(corpus_path, encoding="utf-8")] if pretrains else []
    texts, pairs = list(corpus), {}
    for task, parts in carried.items():
        config = task_config(task)
        head = config.task_type
        for path in parts.values():
            examples = load_examples(config, path)
            for example in examples:
                for text in head.example_texts(example):
                    texts.extend(text if isinstance(text, tuple) else (text,))
            if config.alignment:
                pairs.setdefault(head.aligned_with, []).extend(head.alignment_pairs(examples))
    encoder = load_start_encoder(model)
    say(f"parsing {len(set(texts)):,} distinct texts ({len(corpus):,} of the pre-training corpus)")
    store = FeatureStore(
        encoder.collator,
        texts,
        parser=encoder.parser,
        graph_cache=graph_cache_option(graph_cache),
        parse_workers=parse_workers,
        show_progress=True,
    )
    rows = {}
    cache = graph_cache_option(graph_cache)
    for against, aligned in pairs.items():
        say(f"alignment features of {len(set(aligned)):,} ({against}) pairs")
        # parsed as alignment_features parses when it trains from text (the default parser), through the cache
        parse = lambda texts: parse_cached(texts, cache=cache, n_process=parse_workers, show_progress=True)  # noqa: E731
        rows.update(alignment_rows(against, aligned, parse=parse))
    pack_features(output / PACKED_DIR, store, rows)

    # the start encoder: text weights (bf16, the rows the kit's tokens use), config, tokenizer, vocabularies
    base = output / BASE_DIR
    base.mkdir()
    tokenizer = encoder.tokenizer
    used = {int(i) for f in store.features for i in f.input_ids.tolist()}
    latex_start = first_added_latex_row(tokenizer)
    rows_total = encoder.model.text.get_input_embeddings().num_embeddings
    kept = (
        used
        | set(tokenizer.all_special_ids)
        | set(range(latex_start if latex_start is not None else rows_total, rows_total))
    )
    save_compact_text_state(base / TEXT_WEIGHTS, encoder.model.text.state_dict(), kept)
    start_facts = {}
    if str(model) != "untrained":  # a trained start (a job that continues another's): its graph side travels too
        import torch
        from safetensors.torch import save_file

        from mathgraph.tasks.release.build import PACKAGE_FACTS

        graph = {
            k: v.detach().to(torch.bfloat16).contiguous()
            for k, v in encoder.model.state_dict().items()
            if not k.startswith("text.")
        }
        save_file(graph, str(base / GRAPH_WEIGHTS))
        facts_path = Path(model) / PACKAGE_FACTS
        start_facts = json.loads(facts_path.read_text(encoding="utf-8")) if facts_path.is_file() else {}
    encoder.model.save_config(base)
    tokenizer.save_pretrained(base / "tokenizer")
    encoder.vocab.save_pretrained(base)

    # the data files themselves, gzipped
    for task, parts in {**carried, **({PRETRAIN_CORPUS: files[PRETRAIN_CORPUS]} if pretrains else {})}.items():
        for part, path in parts.items():
            with open(path, "rb") as source, gzip.open(output / DATA_DIR / f"{task}.{part}.jsonl.gz", "wb") as target:
                shutil.copyfileobj(source, target)

    description = {
        "format": KIT_FORMAT,
        "version": KIT_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "start_model": str(model),
        "data": {task: sorted(parts) for task, parts in carried.items()},
        "evaluation_only": {t: list(p) for t, p in EVALUATION_ONLY.items()},
        "pretrain_texts": len(corpus),
        "problems": len(store),
        "alignment_rows": len(rows),
        "word_embedding_rows": {"kept": len(kept), "of": rows_total},
        "start_facts": start_facts,
        "job": asdict(settings),
    }
    for _ in range(2):  # written twice: the sizes it records include its own, which the first write sets
        description["sizes"] = kit_sizes(output)
        (output / KIT_NAME).write_text(json.dumps(description, indent=1), encoding="utf-8")
    say(f"kit written to {output} in {time.perf_counter() - started:.0f} s: {json.dumps(description['sizes'])}")
    return description


def kit_sizes(kit: str | Path) -> dict[str, int]:
    """Bytes of each part of a kit (``packed``, ``data``, ``base``, ``kit.json``) and their ``total``."""
    kit = Path(kit)
    sizes = {}
    for part in (PACKED_DIR, DATA_DIR, BASE_DIR, KIT_NAME):
        path = kit / part
        sizes[part] = (
            path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        )
    sizes["total"] = sum(sizes.values())
    return sizes


def code_bytes(repository: str | Path) -> int:
    """Bytes of the code that travels with a kit: the files git tracks (and untracked ones it does not ignore)
    in ``repository``, without the shipped package's weights (``mathgraph/data/shipped_model``)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=repository,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "surrogateescape")
    root = Path(repository)
    names = [n for n in listed.split("\0") if n and not n.startswith("mathgraph/data/shipped_model/")]
    return sum((root / n).stat().st_size for n in names if (root / n).is_file())


def check_kit_size(kit_bytes: int, code: int, limit: int = KIT_AND_CODE_LIMIT) -> None:
    """``ValueError`` when a kit and the code together exceed ``limit`` bytes (what a GPU window takes in)."""
    if kit_bytes + code > limit:
        raise ValueError(
            f"the kit ({kit_bytes / 2**20:.1f} MiB) and the code ({code / 2**20:.1f} MiB) exceed "
            f"{limit / 2**20:.0f} MiB together"
        )


__all__ = [
    "JobSettings",
    "build_kit",
    "read_kit",
    "kit_parts",
    "qam_folds",
    "task_config",
    "kit_sizes",
    "code_bytes",
    "check_kit_size",
    "KIT_AND_CODE_LIMIT",
]
