"""COMUS encoder cost on this CPU, and what the default (shipped, pre-trained) model makes of GSM-Plus paraphrases.

    python benchmarks/encode_benchmark.py [--limit 256] [--batch-size 32] [--repeats 3] [--sort-by-length]
                                          [--threads N]
                                          [--math ../shared/data/math/train.jsonl]
                                          [--gsmplus ../shared/data/gsmplus/variants.jsonl] [--smoke]

Prints markdown tables (nothing here asserts a speed):

1. **Throughput.** The first ``--limit`` MATH train problems are parsed once
   (spaCy back end) and collated once into batches of ``--batch-size`` in file
   order (or, with ``--sort-by-length``, by text length as ``MathEncoder.encode``
   batches them). On those same batches, under ``torch.inference_mode()`` in fp32 and
   eval mode, three models take turns batch by batch after a warm-up pass:
   COMUS with k=2 (``MathEncoder.from_pretrained("shipped")``), COMUS with k=0
   (``MathEncoder.build(fusion_layers=0)``: MiniLM and the GAT side by side,
   no memory) and the packaged MiniLM alone (``load_text_encoder("minilm")``
   run on the batches' ``input_ids``/``attention_mask``/``token_type_ids``).
   The turn order rotates with each repetition, so machine noise hits all
   models alike. The plain MiniLM gets the same resized embedding matrix as
   COMUS (the LaTeX tokens have ids past its vocabulary), which changes no
   cost. Collation (tokenizer, graph tensors, padding) is
   timed on its own and is not part of the model times.
2. **Parameters** of each part of the default COMUS model.
3. **Peak memory** of one forward of the largest batch, COMUS vs MiniLM alone,
   each in a fresh process (see ``_peak_memory`` for the method).
4. **GSM-Plus sanity figure.** For each seed problem, the cosine between the
   seed and its "problem understanding" variant (a paraphrase) against the
   mean cosine between the seed and all the variants of the 199 other seeds.
   The shipped model is pre-trained (MLM, DTC, TGCL) but not trained for
   similarity, so this shows what pre-training alone gives.

``--smoke``: 8 problems of the smoke data (``benchmarks/smoke.py``) in batches of 4, one
repetition, and the packaged GSM-Plus sample (3 seeds): seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from mathgraph.graph import MathSyntaxGraph
from mathgraph.models.batching import ProblemBatch, ProblemCollator, graph_features
from mathgraph.models.encoder import LATEX_TOKENS_NAME, UNTRAINED_MODEL_DIR, MathEncoder
from mathgraph.models.text_encoder import add_latex_tokens, load_text_encoder
from mathgraph.parsers.graph_cache import parse_cached

from smoke import SMOKE_MATH

REPO = Path(__file__).resolve().parents[1]
PARAPHRASE = "problem understanding"
MODES = ("joint", "text", "graph", "token mean")
MEMORY_MODELS = ("COMUS k=2", "MiniLM alone")


def main() -> None:
    args = _arguments()
    torch.set_num_threads(args.threads)
    if args.memory_child:
        print(json.dumps(_measure_forward_memory(args.memory_child, args.batch_file, args.threads)))
        return
    _print_header(args)

    comus = MathEncoder.from_pretrained("shipped", device="cpu")
    no_fusion = MathEncoder.build(fusion_layers=0)
    no_fusion.model.eval()  # build() leaves the model in training mode, with dropout on
    minilm, base_vocab_size = _plain_minilm(comus)

    with open(args.math, encoding="utf-8") as f:
        texts = [json.loads(line)["problem"] for line in f][: args.limit]
    graphs = parse_cached(texts, parser="spacy")  # the graph cache: a second run parses nothing
    if args.sort_by_length:  # as MathEncoder.encode forms its batches
        graphs.sort(key=lambda g: len(g.text))
    chunks = [graphs[i : i + args.batch_size] for i in range(0, len(graphs), args.batch_size)]
    batches = [comus.collator(chunk) for chunk in chunks]

    runners: dict[str, Callable[[ProblemBatch], object]] = {
        "COMUS k=2": comus.forward,
        "COMUS k=0 (MiniLM + GAT, no memory)": no_fusion.forward,
        "MiniLM alone": lambda b: minilm(
            input_ids=b.input_ids, attention_mask=b.attention_mask, token_type_ids=b.token_type_ids
        ),
    }
    _throughput(runners, batches, args.repeats, _truncated(comus.collator, graphs), args.sort_by_length)
    _collation(comus.collator, chunks, args.repeats)
    _equivalence_check(comus, minilm, batches[0])
    _parameters(comus, minilm, base_vocab_size)
    _peak_memory(max(batches, key=lambda b: (b.input_ids.numel(), b.slot_mask.numel())), args.threads)
    _gsmplus(comus, Path(args.gsmplus), args.batch_size)


# ------------------------------------------------------------------ setup
def _print_header(args: argparse.Namespace) -> None:
    import transformers

    print(f"command: python {shlex.join(sys.argv)}")
    print(
        f"machine: {_cpu_name()}, {os.cpu_count()} cores, torch.set_num_threads({args.threads}) "
        f"(torch.get_num_threads() = {torch.get_num_threads()}); Python {platform.python_version()}, "
        f"torch {torch.__version__}, transformers {transformers.__version__}; fp32, eval mode, inference_mode"
    )
    print()


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _plain_minilm(comus: MathEncoder) -> tuple[torch.nn.Module, int]:
    """The packaged MiniLM with COMUS's resized word embeddings, and its original vocabulary size."""
    model, _ = load_text_encoder("minilm")
    base_vocab_size = model.config.vocab_size
    model.resize_token_embeddings(len(comus.tokenizer), mean_resizing=False)
    with torch.no_grad():
        model.get_input_embeddings().weight.copy_(comus.model.text.get_input_embeddings().weight)
    return model.eval(), base_vocab_size


# ------------------------------------------------------------- throughput
def _truncated(collator: ProblemCollator, graphs: Sequence[MathSyntaxGraph]) -> int:
    """How many problems have more tokens than the collator keeps."""
    texts = [collator.encoder_text(g.text) for g in graphs]
    return sum(len(ids) > collator.max_length for ids in collator.tokenizer(texts, verbose=False)["input_ids"])


def _throughput(
    runners: dict[str, Callable], batches: Sequence[ProblemBatch], repeats: int, truncated: int, sort_by_length: bool
) -> None:
    names = list(runners)
    seconds = {name: np.zeros((repeats, len(batches))) for name in names}
    with torch.inference_mode():
        for batch in batches:  # warm-up pass, not timed
            for run in runners.values():
                run(batch)
        for repeat in range(repeats):
            order = names[repeat % len(names) :] + names[: repeat % len(names)]
            for i, batch in enumerate(batches):
                for name in order:
                    start = time.perf_counter()
                    runners[name](batch)
                    seconds[name][repeat, i] = time.perf_counter() - start

    problems = sum(len(b) for b in batches)
    lengths = [b.input_ids.shape[1] for b in batches]
    nodes = [b.node_labels.shape[0] for b in batches]
    slots = [b.slot_mask.shape[1] for b in batches]
    print(
        f"## Throughput: {problems} MATH train problems, {len(batches)} batch(es) of up to {len(batches[0])}, "
        f"{'sorted by length' if sort_by_length else 'in file order'}, "
        f"{repeats} interleaved repetition(s) after a warm-up pass"
    )
    print()
    print(
        f"Padded length L per batch: mean {np.mean(lengths):.0f} (min {min(lengths)}, max {max(lengths)}; "
        f"{truncated} of the {problems} problems are longer and truncated); "
        f"nodes per batch: mean {np.mean(nodes):.0f}; slots T per problem (padded): mean {np.mean(slots):.0f}, "
        f"max {max(slots)}."
    )
    print()
    print(
        "| model | s / batch (mean) | s / pass (median of repetitions) | problems/s | x MiniLM alone (median, min-max over repetitions) |"
    )
    print("|---|---:|---:|---:|---:|")
    reference = seconds["MiniLM alone"].sum(axis=1)
    for name in names:
        passes = seconds[name].sum(axis=1)
        ratios = passes / reference
        print(
            f"| {name} | {seconds[name].mean():.3f} | {np.median(passes):.2f} | {problems / np.median(passes):.1f} "
            f"| {np.median(ratios):.2f}x ({ratios.min():.2f}-{ratios.max():.2f}) |"
        )
    print()


def _collation(collator: ProblemCollator, chunks: Sequence[Sequence[MathSyntaxGraph]], repeats: int) -> None:
    """Per-batch collation time of ``collator(graphs)``, in its three steps: tokenizing, building each
    problem's graph tensors (``graph_features``), and padding + concatenating them (``collate``).

    Training builds the first two once per problem (``models.features.FeatureStore``)
    and pays only the last per batch.
    """
    for chunk in chunks:  # warm-up
        collator(chunk)
    parts = np.zeros((repeats, len(chunks), 3))
    for repeat in range(repeats):
        for i, chunk in enumerate(chunks):
            start = time.perf_counter()
            ids = collator.token_ids([g.text for g in chunk])
            tokenized = time.perf_counter()
            features = [graph_features(g, collator.vocab, t) for g, t in zip(chunk, ids)]
            built = time.perf_counter()
            collator.collate(features)
            parts[repeat, i] = (tokenized - start, built - tokenized, time.perf_counter() - built)
    tokenizer, graph_tensors, padding = np.median(parts, axis=0).mean(axis=0)  # per batch: median over repetitions
    print("## Collation (`ProblemCollator`, per batch, not included above)")
    print()
    print(
        f"{len(chunks)} batch(es); per batch the median over {repeats} repetition(s) after a warm-up; "
        "then the mean over batches."
    )
    print()
    print("| step | ms / batch |")
    print("|---|---:|")
    print(f"| tokenizer (with `encoder_text`) | {1e3 * tokenizer:.1f} |")
    print(f"| graph tensors per problem (`graph_features`) | {1e3 * graph_tensors:.1f} |")
    print(f"| padding and concatenation (`collate`; all that training pays per batch) | {1e3 * padding:.1f} |")
    print(f"| **whole `collator(graphs)`** | **{1e3 * (tokenizer + graph_tensors + padding):.1f}** |")
    print()


def _equivalence_check(comus: MathEncoder, minilm: torch.nn.Module, batch: ProblemBatch) -> None:
    """How far COMUS's text path is from plain MiniLM's: 0 for the untrained architecture (its memory read-out
    W^O starts at zero); pre-training moves the text layers and the memory, so the shipped model differs."""
    with torch.inference_mode():
        fused = comus.forward(batch).token_states
        plain = minilm(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask, token_type_ids=batch.token_type_ids
        ).last_hidden_state
    mask = batch.attention_mask.bool()
    difference = (fused - plain)[mask].abs().max().item()
    print(
        f"Check: max |COMUS k=2 token states - MiniLM last hidden state| over the real tokens of batch 0 = "
        f"{difference:.2e} (0 for the untrained architecture, whose memory layers start as the identity on the "
        "text path; the pre-trained shipped model's layers moved)."
    )
    print()


# ------------------------------------------------------------- parameters
def _count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _parameters(comus: MathEncoder, minilm: torch.nn.Module, base_vocab_size: int) -> None:
    model = comus.model
    text, graph = model.text, model.graph
    hidden = text.config.hidden_size
    new_rows = text.get_input_embeddings().weight.shape[0] - base_vocab_size
    text_embeddings = _count(text.embeddings)
    graph_embeddings = sum(
        _count(m) for m in (graph.label_embedding, graph.kind_embedding, graph.relation_embedding, graph.embedding_norm)
    )
    memory = [_count(m) for m in model.memories]
    total = _count(model)
    rows = [
        ("text encoder (MiniLM, resized vocabulary)", _count(text)),
        (
            f"- embeddings (word {text.get_input_embeddings().weight.shape[0]} x {hidden}, position, type, norm)",
            text_embeddings,
        ),
        (f"- - of which the {new_rows} new LaTeX token embeddings ({new_rows} x {hidden})", new_rows * hidden),
        (f"- {len(text.encoder.layer)} transformer layers", _count(text.encoder)),
        ("GAT", _count(graph)),
        (
            (
                f"- embeddings (labels {graph.label_embedding.num_embeddings} x {graph.hidden}, kinds, "
                f"relations {graph.relation_embedding.num_embeddings} x {graph.relation_embedding.embedding_dim}, norm)"
            ),
            graph_embeddings,
        ),
        (f"- {len(graph.layers)} attention layers (GATConv + layer norm)", _count(graph.layers)),
        (f"memory layers (k={len(memory)}, {memory[0] if memory else 0:,} each)", sum(memory)),
        ("**total COMUS k=2**", total),
        ("plain MiniLM as packaged (for reference)", _count(minilm) - new_rows * hidden),
    ]
    accounted = _count(text) + _count(graph) + sum(memory)
    print("## Parameters of the default COMUS model")
    print()
    print("| part | parameters | share of total |")
    print("|---|---:|---:|")
    for name, count in rows:
        print(f"| {name} | {count:,} | {100 * count / total:.1f}% |")
    print()
    if accounted != total:
        print(f"(parts add up to {accounted:,}, not {total:,}: some module is not listed)")
        print()


# ------------------------------------------------------------------ memory
def _peak_memory(batch: ProblemBatch, threads: int) -> None:
    """Peak resident memory of one forward, each model in a fresh process (this script, ``--memory-child``).

    Linux only: the process's high-water mark (``VmHWM``) is reset to the
    current RSS by writing ``5`` to ``/proc/self/clear_refs`` just before the
    forward, then read back after it. The increase, ``VmHWM - VmRSS before``,
    is what the forward itself needs on top of what is resident. The first
    forward also pays one-time allocations (thread pools, kernel caches), so a
    second forward on the same batch gives the steady state; both are shown.
    """
    from safetensors.torch import save_file

    results = {}
    with tempfile.TemporaryDirectory() as directory:
        batch_file = Path(directory) / "batch.safetensors"
        save_file({name: t.contiguous() for name, t in batch.as_model_inputs().items()}, str(batch_file))
        for which in MEMORY_MODELS:
            child = subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--memory-child",
                    which,
                    "--batch-file",
                    str(batch_file),
                    "--threads",
                    str(threads),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            results[which] = json.loads(child.stdout.strip().splitlines()[-1])
    print(
        f"## Peak resident memory, one forward of the largest batch ({len(batch)} problems, "
        f"L = {batch.input_ids.shape[1]}, {batch.node_labels.shape[0]} nodes, T = {batch.slot_mask.shape[1]})"
    )
    print()
    if any(r is None for r in results.values()):
        print("(not measured: /proc/self/clear_refs is not available on this system)")
        print()
        return
    print(
        "| model | RSS after loading (MiB) | first forward: peak (MiB) | first forward adds (MiB) "
        "| second forward: RSS before (MiB) | second forward: peak (MiB) | second forward adds (MiB) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for which, (loaded, first_peak, before, peak) in results.items():
        print(
            f"| {which} | {loaded:.0f} | {first_peak:.0f} | {first_peak - loaded:.0f} | {before:.0f} "
            f"| {peak:.0f} | {peak - before:.0f} |"
        )
    print()
    print(
        "Measured in a fresh process per model: the peak RSS (`VmHWM`) is reset to the current RSS through "
        '`/proc/self/clear_refs` right before each forward and read after it; "adds" = peak - RSS just '
        "before. The first forward also pays one-time allocations (thread pools, kernel caches, allocator growth); "
        "the second, on the same batch, is the steady state."
    )
    print()


def _status_mib(field: str) -> float:
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise KeyError(field)


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _measure_forward_memory(which: str, batch_file: str, threads: int) -> tuple[float, float, float, float] | None:
    """MiB: RSS after loading, peak of the first forward, RSS before and peak of the second; ``None`` off Linux."""
    from safetensors.torch import load_file

    torch.set_num_threads(threads)
    batch = ProblemBatch(**load_file(batch_file))
    if which == "MiniLM alone":
        model, tokenizer = load_text_encoder("minilm")
        with open(UNTRAINED_MODEL_DIR / LATEX_TOKENS_NAME, encoding="utf-8") as f:
            add_latex_tokens(tokenizer, json.load(f))  # as MathEncoder.build does
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
        model.eval()

        def run() -> None:
            model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, token_type_ids=batch.token_type_ids)
    else:
        encoder = MathEncoder.from_pretrained("shipped", device="cpu")

        def run() -> None:
            encoder.forward(batch)

    with torch.inference_mode():
        if not _reset_peak():
            return None
        loaded = _status_mib("VmRSS")
        run()
        first_peak = _status_mib("VmHWM")
        _reset_peak()
        before = _status_mib("VmRSS")
        run()
        return loaded, first_peak, before, _status_mib("VmHWM")


# ---------------------------------------------------------------- GSM-Plus
def _embed_all_modes(encoder: MathEncoder, graphs: Sequence[MathSyntaxGraph], batch_size: int) -> dict[str, np.ndarray]:
    """Vectors in every mode from one forward per batch (``encode`` would run the model once per mode)."""
    order = sorted(range(len(graphs)), key=lambda i: len(graphs[i].text))
    vectors: dict[str, np.ndarray] = {}
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            batch = encoder.collator([graphs[i] for i in chosen])
            output = encoder.forward(batch)
            mask = batch.attention_mask[..., None].float()
            token_mean = (output.token_states * mask).sum(1) / mask.sum(1)
            for mode, tensor in zip(MODES, (output.joint, output.cls, output.mean_node, token_mean)):
                vectors.setdefault(mode, np.zeros((len(graphs), tensor.shape[1]), dtype=np.float32))[chosen] = (
                    tensor.numpy()
                )
    return vectors


def _gsmplus(encoder: MathEncoder, path: Path, batch_size: int) -> None:
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    seeds = list(dict.fromkeys(r["seed_question"] for r in rows))
    seed_of = np.array([seeds.index(r["seed_question"]) for r in rows])
    types = sorted({r["perturbation_type"] for r in rows})
    type_of = np.array([r["perturbation_type"] for r in rows])

    start = time.perf_counter()
    graphs = encoder.parse(seeds + [r["question"] for r in rows])
    parsed = time.perf_counter()
    vectors = _embed_all_modes(encoder, graphs, batch_size)
    encoded = time.perf_counter()

    print(f"## GSM-Plus sanity figure (shipped model): {len(seeds)} seeds, {len(rows)} variants")
    print()
    print(
        f"Parsing {len(graphs)} texts took {parsed - start:.1f} s, encoding {encoded - parsed:.1f} s. "
        'Paraphrase = the seed\'s "problem understanding" variant. Unrelated = every variant of the other '
        f"{len(seeds) - 1} seeds (all 8 types, {int((seed_of != 0).sum())} questions per seed); per seed we "
        "take the mean cosine over them. Modes: joint = `[CLS] ; mean node` (the encoder's joint vector), text = `[CLS]`, "
        "graph = mean node; token mean = masked mean of the final token states (not an `encode` mode; "
        "all-MiniLM-L6-v2 was trained with mean pooling)."
    )
    print()
    print(
        "| mode | dim | mean cos(seed, paraphrase) | mean cos(seed, unrelated) | paraphrase closer than the mean unrelated | "
        "unrelated questions the paraphrase beats (mean over seeds) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    per_type = {}
    for mode in MODES:
        unit = vectors[mode] / np.linalg.norm(vectors[mode], axis=1, keepdims=True)
        similarity = unit[: len(seeds)] @ unit[len(seeds) :].T  # [seeds, variants]
        own = seed_of[None, :] == np.arange(len(seeds))[:, None]
        paraphrase = np.array([similarity[i, (seed_of == i) & (type_of == PARAPHRASE)][0] for i in range(len(seeds))])
        unrelated_mean = np.where(own, 0.0, similarity).sum(axis=1) / (~own).sum(axis=1)
        beaten = ((similarity < paraphrase[:, None]) & ~own).sum(axis=1) / (~own).sum(axis=1)
        print(
            f"| {mode} | {vectors[mode].shape[1]} | {paraphrase.mean():.3f} | {unrelated_mean.mean():.3f} "
            f"| {int((paraphrase > unrelated_mean).sum())}/{len(seeds)} ({100 * (paraphrase > unrelated_mean).mean():.0f}%) "
            f"| {100 * beaten.mean():.1f}% |"
        )
        per_type[mode] = {t: similarity[own & (type_of[None, :] == t)].mean() for t in types}
        per_type[mode]["(unrelated)"] = unrelated_mean.mean()
    print()
    print("Mean cosine between a seed and its variant, per perturbation type:")
    print()
    print("| perturbation type | " + " | ".join(MODES) + " |")
    print("|---|" + "---:|" * len(MODES))
    for t in [*types, "(unrelated)"]:
        print(f"| {t} | " + " | ".join(f"{per_type[m][t]:.3f}" for m in MODES) + " |")
    print()
    text_norm = np.linalg.norm(vectors["text"], axis=1).mean()
    graph_norm = np.linalg.norm(vectors["graph"], axis=1).mean()
    print(
        f"Mean vector norms: text ([CLS]) {text_norm:.1f}, graph (mean node) {graph_norm:.1f}; the joint cosine "
        "weighs each half by its squared norm."
    )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--math", default=str(REPO.parent / "shared" / "data" / "math" / "train.jsonl"))
    parser.add_argument("--gsmplus", default=str(REPO.parent / "shared" / "data" / "gsmplus" / "variants.jsonl"))
    parser.add_argument("--limit", type=int, default=256, help="MATH problems timed (default 256)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over all batches (default 3)")
    parser.add_argument(
        "--sort-by-length",
        action="store_true",
        help="batch problems of similar length together, as MathEncoder.encode does (default: file order)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        help="torch threads (default: the cores this process may use)",
    )
    parser.add_argument("--memory-child", choices=MEMORY_MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--batch-file", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="8 problems, one repetition: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.math, args.gsmplus = str(SMOKE_MATH), str(REPO / "mathgraph" / "data" / "gsmplus_sample.jsonl")
        args.limit, args.batch_size, args.repeats = 8, 4, 1
    if args.limit < 1 or args.batch_size < 1 or args.repeats < 1 or args.threads < 1:
        parser.error("--limit, --batch-size, --repeats and --threads must be >= 1")
    return args


if __name__ == "__main__":
    main()
