"""A million-vector search index of each type: build time, file sizes, resident memory, query latency
and recall@10 against the exact (flat) index.

    python benchmarks/index_scale.py --work WORK [--rows 1000000] [--queries 1000] [--types flat,ivf-flat,ivf-pq,hnsw]

The vectors: the MiniLM (``text:minilm``, the package's search first stage) vectors of the GSM8K train
questions and the MATH train problems (14,973 real problems), topped up to ``--rows`` by small random
perturbations of them (a real vector plus Gaussian noise of norm ``--noise``, renormalised: cosine about 0.96
to its source), each top-up row carrying its source's text. The queries: ``--queries`` GSM-Plus variant
questions (real problems, none in the index). Encodings are cached in ``--cache`` (default /tmp).

The exact top 10 of every query (the flat index's, all queries at once) is the truth; the flat index's
latency is measured on the first ``--flat-latency`` queries (each a scan of every vector). Each index type
is built from the flat index's vector file read in shards (``write_index``) in a process of
its own (faiss on one thread: the development machine's 2 cores are shared with other jobs), then loaded
(memory-mapped) and queried in another: one query at a time, one thread (faiss and BLAS),
for each search setting; the resident memory is that process's (peak, and anonymous / file-backed pages after
the queries). Recall@10: the share of the exact top 10 found, against the flat index's exact search.
``--smoke``: 3,000 random unit vectors, 30 queries, a few settings (the same code, in seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TYPES = ("flat", "ivf-flat", "ivf-pq", "hnsw")
SHARD_ROWS = 50_000
# Search settings tried per type (the first row of each is what the table calls its default when it is the
# index's own default; every row is measured).
SWEEP = {
    "flat": [{}],
    "ivf-flat": [{"nprobe": n} for n in (4, 8, 16, 24, 32, 64, 128)],
    "ivf-pq": [{"nprobe": n, "rescore": r} for n in (8, 16, 32) for r in (10, 40)]
    + [{"nprobe": 24, "rescore": 80}, {"nprobe": 32, "rescore": 80}],
    "hnsw": [{"ef_search": e} for e in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)],
}
SMOKE_SWEEP = {
    "flat": [{}],
    "ivf-flat": [{"nprobe": 8}],
    "ivf-pq": [{"nprobe": 8, "rescore": 10}],
    "hnsw": [{"ef_search": 32}],
}
TARGET_RECALL, TARGET_P50_MS = 0.95, 10.0


# --------------------------------------------------------------------------- vectors
def cached_vectors(texts: list[str], cache: Path, model: str = "text:minilm") -> np.ndarray:
    """The ``model`` vectors of ``texts`` (float32), read from ``cache`` (``minilm-texts.json`` and
    ``minilm-vectors.npy``) and encoded there first where missing (in order of length, in batches of 32)."""
    cache.mkdir(parents=True, exist_ok=True)
    names, matrix = cache / "minilm-texts.json", cache / "minilm-vectors.npy"
    known = json.loads(names.read_text(encoding="utf-8")) if names.exists() else []
    stored = np.load(matrix) if matrix.exists() else np.zeros((0, 384), dtype=np.float32)
    position = {text: i for i, text in enumerate(known)}
    missing = [t for t in dict.fromkeys(texts) if t not in position]
    if missing:
        from mathgraph.tasks.search.embedders import load_embedder

        print(f"encoding {len(missing):,} texts with {model} (cached in {cache})", file=sys.stderr)
        embedder = load_embedder(model)
        order = sorted(range(len(missing)), key=lambda i: len(missing[i]))
        new = np.zeros((len(missing), stored.shape[1]), dtype=np.float32)
        for start in range(0, len(order), 256):
            chunk = order[start : start + 256]
            new[chunk] = embedder.encode([missing[i] for i in chunk], batch_size=32)
        stored = np.concatenate([stored, new])
        known += missing
        np.save(matrix, stored)
        names.write_text(json.dumps(known, ensure_ascii=False), encoding="utf-8")
        position = {text: i for i, text in enumerate(known)}
    return stored[[position[t] for t in texts]]


def read_texts(path: Path, field: str) -> list[str]:
    """The ``field`` of every row of a JSONL file."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)[field] for line in f if line.strip()]


def base_and_queries(args) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The real vectors with their texts, and the query vectors."""
    if args.smoke:
        rng = np.random.default_rng(0)
        base = rng.normal(size=(300, 384)).astype(np.float32)
        queries = base[:30] + 0.5 * rng.normal(size=(30, 384)).astype(np.float32)
        return base, [f"random vector {i}" for i in range(len(base))], queries
    bank = list(
        dict.fromkeys(
            read_texts(DATA / "gsm8k" / "train.jsonl", "question")
            + read_texts(DATA / "math" / "train.jsonl", "problem")
        )
    )
    variants = [
        t for t in dict.fromkeys(read_texts(DATA / "gsmplus" / "variants.jsonl", "question")) if t not in set(bank)
    ]
    chosen = sorted(np.random.default_rng(0).choice(len(variants), args.queries, replace=False).tolist())
    query_texts = [variants[i] for i in chosen]
    vectors = cached_vectors(bank + query_texts, args.cache)
    return vectors[: len(bank)], bank, vectors[len(bank) :]


def topped_up_shards(base: np.ndarray, rows: int, noise: float, seed: int = 0):
    """``base`` (normalised), then perturbed copies of random base rows up to ``rows`` vectors, in shards;
    each shard with its rows' sources."""
    from mathgraph.tasks.search.index import l2_normalize

    base = l2_normalize(base)
    yield base, np.arange(len(base))
    rng = np.random.default_rng(seed)
    for start in range(len(base), rows, SHARD_ROWS):
        size = min(SHARD_ROWS, rows - start)
        sources = rng.integers(0, len(base), size)
        directions = rng.normal(size=(size, base.shape[1])).astype(np.float32)
        directions *= noise / np.linalg.norm(directions, axis=1, keepdims=True)
        yield l2_normalize(base[sources] + directions), sources


# --------------------------------------------------------------------------- the child processes
def memory() -> dict:
    """This process's resident memory in MB: peak (VmHWM), now, anonymous and file-backed pages."""
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return {
        k: int(fields[name].split()[0]) / 1024
        for k, name in (("peak", "VmHWM"), ("now", "VmRSS"), ("anon", "RssAnon"), ("file", "RssFile"))
    }


def child_build(args) -> dict:
    """Build one index type; the flat one from the topped-up shards, the others from the flat one's files."""
    import faiss

    from mathgraph.tasks.search.index import write_index
    from mathgraph.tasks.search.index_store import RowStore, open_vectors, vector_shards

    # One thread: on cores shared with other jobs, two OpenMP threads trained faiss 7 times slower than one.
    faiss.omp_set_num_threads(1)
    identity = {"kind": "benchmark.minilm", "weights_sha256": "text:minilm", "mode": "mean", "dimension": 384}
    target = args.work / f"index-{args.index_type}"
    shutil.rmtree(target, ignore_errors=True)
    start = time.perf_counter()
    if args.index_type == "flat":
        base, texts, _ = base_and_queries(args)
        sources: list[np.ndarray] = []

        def shards():
            for vectors, source in topped_up_shards(base, args.rows, args.noise):
                sources.append(source)
                yield vectors

        def rows():  # write_index reads every shard before the rows, so the sources are all known here
            row = 0
            for source in iter_sources(sources):
                yield {"id": row, "text": texts[source], "source": int(source)}
                row += 1

        index = write_index(target, shards(), rows(), "text", identity, "flat", normalized=True)
    else:
        flat = args.work / "index-flat"
        index = write_index(
            target,
            vector_shards(open_vectors(flat / "vectors.npy")),
            RowStore(flat / "rows.jsonl"),
            "text",
            identity,
            args.index_type,
            normalized=True,
        )
    seconds = time.perf_counter() - start
    sizes = {p.name: p.stat().st_size / 2**20 for p in target.iterdir()}
    return {
        "build_s": seconds,
        "files_mb": sizes,
        "parameters": {"build": index.build_parameters, "search": index.search_parameters},
        "memory": memory(),
    }


def iter_sources(sources: list[np.ndarray]):
    """The sources of the shards written so far, in order (the rows follow the vectors' shards)."""
    for shard in sources:
        yield from shard.tolist()


def child_query(args) -> dict:
    """Load one index type, search the queries one at a time for each setting; latency, recall, memory."""
    import faiss

    from mathgraph.tasks.search.index import SearchIndex, exact_search

    faiss.omp_set_num_threads(1)
    queries = np.load(args.work / "queries.npy")
    start = time.perf_counter()
    index = SearchIndex.from_pretrained(args.work / f"index-{args.index_type}", encoder=None)
    load_s = time.perf_counter() - start
    if args.index_type == "flat":  # the truth: every query at once, exactly; the latency on the first few
        np.save(args.work / "truth.npy", exact_search(queries, index.embeddings, 10)[0])
        queries = queries[: args.flat_latency]
    truth = np.load(args.work / "truth.npy")
    defaults = dict(index.search_parameters)
    results = []
    for setting in (SMOKE_SWEEP if args.smoke else SWEEP)[args.index_type]:
        index.search_parameters = {**defaults, **setting}
        index.search_vectors(queries[:1], k=10)  # the first search maps the structure
        latencies, found = [], []
        for query in queries:
            begin = time.perf_counter()
            (hits,) = index.search_vectors(query[None], k=10)
            latencies.append(time.perf_counter() - begin)
            found.append([hit.index for hit in hits])
        recall = float(np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth)]))
        results.append(
            {
                "setting": setting,
                "default": all(defaults.get(k) == v for k, v in setting.items()),
                "p50_ms": float(np.percentile(latencies, 50) * 1000),
                "p95_ms": float(np.percentile(latencies, 95) * 1000),
                "recall": recall,
            }
        )
    return {"load_s": load_s, "settings": results, "memory": memory()}


def run_child(args, action: str, index_type: str) -> dict:
    """Run ``--child ACTION`` for ``index_type`` in a fresh process (one thread for queries) and read its JSON."""
    command = [sys.executable, __file__, "--child", action, "--index-type", index_type, "--work", str(args.work)]
    command += [
        "--rows",
        str(args.rows),
        "--queries",
        str(args.queries),
        "--noise",
        str(args.noise),
        "--cache",
        str(args.cache),
    ]
    command += ["--flat-latency", str(args.flat_latency)] + (["--smoke"] if args.smoke else [])
    threads = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"} if action == "query" else {}
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **threads})
    if done.returncode != 0:
        raise SystemExit(f"{action} {index_type} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- the report
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.3, help="norm of the Gaussian noise of a top-up vector")
    parser.add_argument("--types", default=",".join(TYPES))
    parser.add_argument(
        "--flat-latency", type=int, default=100, help="queries timed on the flat index (a full scan each)"
    )
    parser.add_argument("--cache", type=Path, default=Path("/tmp/mathgraph-bench"))
    parser.add_argument(
        "--reuse", action="store_true", help="keep the indexes (and build figures) of an earlier run in --work"
    )
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--child", choices=("build", "query"), help=argparse.SUPPRESS)
    parser.add_argument("--index-type", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.rows, args.queries = 3000, 30
    args.work.mkdir(parents=True, exist_ok=True)
    if args.child:
        print(json.dumps(child_build(args) if args.child == "build" else child_query(args)))
        return
    types = args.types.split(",")
    if types[0] != "flat" or any(t not in TYPES for t in types):
        raise SystemExit(
            f"--types: flat first (the others are built from it and measured against it), then any of {TYPES}"
        )
    _, _, queries = base_and_queries(args)
    np.save(args.work / "queries.npy", np.asarray(queries, dtype=np.float32))
    earlier = args.work / "index_scale.json"
    built = json.loads(earlier.read_text()) if args.reuse and earlier.exists() else {}
    report = {}
    for index_type in types:
        started = time.perf_counter()
        reuse = index_type in built and (args.work / f"index-{index_type}" / "manifest.json").exists()
        build = built[index_type]["build"] if reuse else run_child(args, "build", index_type)
        report[index_type] = {"build": build, "query": run_child(args, "query", index_type)}
        print(f"{index_type}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    (args.work / "index_scale.json").write_text(json.dumps(report, indent=2))
    print_report(args, report)


def print_report(args, report: dict) -> None:
    """The tables: one row a type at its default setting, then every setting measured."""
    from mathgraph.tasks.release.build import machine

    real = "random unit vectors (smoke)" if args.smoke else "MiniLM vectors of 14,973 GSM8K + MATH train problems"
    print(
        f"## {args.rows:,}-vector index: {real}, topped up by perturbed copies (noise norm {args.noise}); {args.queries} GSM-Plus queries"
    )
    print(
        f"\n{machine()}; queries one at a time, one thread (the flat index's latency on the first "
        f"{min(args.flat_latency, args.queries)}); recall@10 against the exact top 10 of every query\n"
    )
    print(
        "| index | build s | vectors MB | structure MB | rows MB | load s | peak RSS MB | RSS anon / file MB | default setting | p50 ms | p95 ms | recall@10 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for index_type, entry in report.items():
        build, query = entry["build"], entry["query"]
        files = build["files_mb"]
        default = next((s for s in query["settings"] if s["default"]), query["settings"][0])
        memory = query["memory"]
        print(
            f"| {index_type} | {build['build_s']:.1f} | {files['vectors.npy']:.0f} | {files.get('ann.faiss', 0):.0f} | "
            f"{files['rows.jsonl']:.0f} | {query['load_s']:.2f} | {memory['peak']:.0f} | {memory['anon']:.0f} / "
            f"{memory['file']:.0f} | {_setting(build['parameters']['search'])} | {default['p50_ms']:.2f} | "
            f"{default['p95_ms']:.2f} | {default['recall']:.3f} |"
        )
    print(
        "\n### Every setting\n\n| index | setting | p50 ms | p95 ms | recall@10 | target met |\n|---|---|---:|---:|---:|---|"
    )
    met = []
    for index_type, entry in report.items():
        for result in entry["query"]["settings"]:
            ok = result["recall"] >= TARGET_RECALL and result["p50_ms"] <= TARGET_P50_MS
            met += [f"{index_type} {_setting(result['setting'])}"] if ok else []
            print(
                f"| {index_type} | {_setting(result['setting']) or 'exact'} | {result['p50_ms']:.2f} | "
                f"{result['p95_ms']:.2f} | {result['recall']:.3f} | {'yes' if ok else 'no'} |"
            )
    print(f"\nTarget recall@10 >= {TARGET_RECALL} at p50 <= {TARGET_P50_MS:.0f} ms met by: {', '.join(met) or 'none'}")
    print("Build parameters: " + "; ".join(f"{t} {e['build']['parameters']['build']}" for t, e in report.items()))


def _setting(setting: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in setting.items() if k != "rescore" or v != 1)


if __name__ == "__main__":
    main()
