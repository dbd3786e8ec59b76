"""A neural step scorer beside the step verifier: does the packaged MiniLM, reading the mathematics of a line,
help find the first wrong step of ProcessBench's solutions? Out-of-fold dev figures only (no test half read).

    python benchmarks/step_scorer.py [--work DIR] [--data DIR] [--stage prepare|encode|heads|evaluate|all]
        [--limit N] [--threads N] [--smoke]

Each line of the ProcessBench dev halves (MATH and OlympiadBench) up to its solution's first wrong step is read by
the packaged all-MiniLM-L6-v2 as a cross-encoder input ``[CLS] problem [SEP] previous line [SEP] line [SEP]``
(at most ``PROBLEM_TOKENS``, ``PREVIOUS_TOKENS`` and ``LINE_TOKENS`` tokens of each). The encoder is frozen: on
this shared 2-core CPU fine-tuning it runs at about 1 example a second (fine-tuning on the 5 folds' 40,000
training lines would take some 11 hours), so the stages are:

1. ``prepare``: the dev lines, their labels (1 on the lines of the first wrong step), the step verifier's
   features (``parsers.step_verifier.line_features``) and the folds of ``benchmarks/process_errors.py`` (5,
   grouped by problem);
2. ``encode``: the encoder's last layer read three ways (the [CLS] vector, the mean over the line's tokens,
   the mean over all tokens), written in chunks (resumable);
3. ``heads``: per fold, a logistic regression on the encoder's vectors fitted on the other folds' lines, so
   every dev line gets an out-of-fold neural score;
4. ``evaluate``: the step verifier (the same logistic regression, Platt calibration and threshold rule as
   ``process_errors.py --fit-verifier``) fitted out of fold with its features alone, and with the neural score
   and its maximum over the solution's earlier lines added (and, as a control, the same columns made from the
   scores shuffled across lines); the dev error acc, correct acc and F1 of each, per part, at the threshold of
   best mean dev F1 with every part's correct acc >= 90, and a paired bootstrap interval of the F1 gain.

``--smoke``: 12 solutions a part (both halves: the few of ``benchmarks/data/smoke``), 2 folds, written under
``--work`` only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from process_errors import (  # noqa: E402  (a sibling script)
    DATA,
    PROCESSBENCH,
    _platt,
    _threshold,
    fold_of,
    load_part,
    step_of_line,
)

from mathgraph.parsers.graph_cache import parse_cached  # noqa: E402
from mathgraph.parsers.solution import check_solution  # noqa: E402
from mathgraph.parsers.step_verifier import fit, line_features  # noqa: E402

PROBLEM_TOKENS = 48
PREVIOUS_TOKENS = 32
LINE_TOKENS = 64
CHUNK = 256  # lines encoded per chunk file
HEAD_C = 0.05  # the neural head's inverse regularisation (fixed, not tuned)


def main() -> None:
    """Run the stages (module docstring) and print the dev table."""
    args = _arguments()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    folds = 2 if args.smoke else 5
    limit = 12 if args.smoke else args.limit
    stages = ["prepare", "encode", "heads", "evaluate"] if args.stage == "all" else [args.stage]
    if "prepare" in stages:
        prepare(Path(args.data), work, limit, args.smoke, folds)
    if "encode" in stages:
        encode(work, args.threads)
    if "heads" in stages:
        heads(work, folds)
    if "evaluate" in stages:
        evaluate(work, folds, Path(args.output) if args.output else None)


def prepare(data: Path, work: Path, limit: int | None, smoke: bool, folds: int) -> None:
    """The dev solutions with their lines, rule findings and verifier features (``items.json``, ``features.npy``)
    and the lines the encoder reads (those up to each first wrong step)."""
    started = time.perf_counter()
    items, features, texts = [], [], []
    for part in PROCESSBENCH:
        rows = [r for r in load_part(data, part, limit, smoke) if smoke or r["half"] == "dev"]
        for row, graph in zip(rows, parse_cached([r["problem"] for r in rows])):
            check = check_solution(graph, "\n".join(row["steps"]), verifier=None)
            numbers, x = line_features(check)
            steps = step_of_line(row["steps"])
            item = {"part": part, "label": row["label"], "steps": steps, "rule_line": check.first_error_step}
            item.update({"lines": numbers, "fold": fold_of(row["problem"], folds), "read": []})
            for k, (number, step) in enumerate(zip(numbers, check.graph.steps)):
                if row["label"] == -1 or steps[number] <= row["label"]:
                    previous = check.graph.steps[k - 1].text if k else ""
                    item["read"].append(len(texts))
                    texts.append({"problem": row["problem"], "previous": previous, "line": step.text})
                    texts[-1]["label"] = int(steps[number] == row["label"])
                else:
                    item["read"].append(-1)
            items.append(item)
            features.append(x)
    (work / "items.json").write_text(json.dumps(items) + "\n")
    (work / "texts.json").write_text(json.dumps(texts) + "\n")
    np.save(work / "features.npy", np.concatenate(features) if features else np.zeros((0, 0)))
    positives = sum(t["label"] for t in texts)
    print(
        f"prepared {len(items)} solutions, {len(texts)} lines read ({positives} first wrong) in "
        f"{time.perf_counter() - started:.1f} s"
    )


def encode(work: Path, threads: int) -> None:
    """The frozen encoder's vectors of every read line, by chunks of ``CHUNK`` (a chunk already written is kept)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from mathgraph.models.text_encoder import resolve_text_encoder
    from mathgraph.quiet import quiet_transformers

    torch.set_num_threads(threads)
    texts = json.loads((work / "texts.json").read_text())
    path = resolve_text_encoder("minilm")
    tokenizer = AutoTokenizer.from_pretrained(path)
    with quiet_transformers():
        model = AutoModel.from_pretrained(path).eval()
    chunks = work / "chunks"
    chunks.mkdir(exist_ok=True)
    started, done = time.perf_counter(), 0
    for start in range(0, len(texts), CHUNK):
        out = chunks / f"{start:06d}.npy"
        if out.exists():
            continue
        batch = [_tokens(tokenizer, t) for t in texts[start : start + CHUNK]]
        vectors = []
        order = sorted(range(len(batch)), key=lambda i: len(batch[i][0]))
        for b in range(0, len(order), 16):
            pick = order[b : b + 16]
            vectors.extend(zip(pick, _vectors(model, [batch[i] for i in pick])))
        vectors.sort(key=lambda pair: pair[0])
        np.save(out, np.stack([v for _, v in vectors]).astype(np.float16))
        done += len(batch)
        rate = done / (time.perf_counter() - started)
        print(f"encoded {start + len(batch)}/{len(texts)} lines ({rate:.1f} lines/s)", flush=True)


def _tokens(tokenizer, text: dict) -> tuple[list[int], list[int], int]:
    """Token ids, token types and where the line starts, of ``[CLS] problem [SEP] previous [SEP] line [SEP]``."""

    def ids(s: str, n: int) -> list[int]:
        return tokenizer(s, add_special_tokens=False, truncation=True, max_length=n)["input_ids"]

    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    problem, previous = ids(text["problem"], PROBLEM_TOKENS), ids(text["previous"], PREVIOUS_TOKENS)
    line = ids(text["line"], LINE_TOKENS)
    head = [cls, *problem, sep]
    tokens = head + previous + [sep] + line + [sep]
    types = [0] * len(head) + [1] * (len(tokens) - len(head))
    return tokens, types, len(head) + len(previous) + 1


def _vectors(model, batch: list[tuple[list[int], list[int], int]]) -> np.ndarray:
    """[CLS], mean over the line's tokens and mean over all tokens of the last layer: ``(len(batch), 3 * 384)``."""
    import torch

    width = max(len(t) for t, _, _ in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    line = torch.zeros((len(batch), width))
    for i, (tokens, kinds, start) in enumerate(batch):
        ids[i, : len(tokens)] = torch.tensor(tokens)
        types[i, : len(kinds)] = torch.tensor(kinds)
        mask[i, : len(tokens)] = 1
        line[i, start : len(tokens) - 1] = 1
    with torch.inference_mode():
        hidden = model(input_ids=ids, token_type_ids=types, attention_mask=mask).last_hidden_state
    m = mask.unsqueeze(-1).float()
    lm = line.unsqueeze(-1)
    mean_all = (hidden * m).sum(1) / m.sum(1).clamp(min=1)
    mean_line = (hidden * lm).sum(1) / lm.sum(1).clamp(min=1)
    return torch.cat([hidden[:, 0], mean_line, mean_all], dim=1).numpy()


def heads(work: Path, folds: int) -> None:
    """Out-of-fold neural scores (``neural.npy``, one logit per read line) from a logistic regression on the
    encoder's vectors per fold."""
    from sklearn.linear_model import LogisticRegression

    texts = json.loads((work / "texts.json").read_text())
    items = json.loads((work / "items.json").read_text())
    chunks = sorted((work / "chunks").glob("*.npy"))
    vectors = np.concatenate([np.load(c).astype(np.float32) for c in chunks])
    if len(vectors) != len(texts):
        raise SystemExit(f"{len(vectors)} of {len(texts)} lines encoded: run --stage encode first")
    labels = np.asarray([t["label"] for t in texts])
    fold = np.zeros(len(texts), dtype=int)
    for item in items:
        for r in item["read"]:
            if r >= 0:
                fold[r] = item["fold"]
    scores = np.zeros(len(texts))
    for f in range(folds):
        train, held = fold != f, fold == f
        if len(set(labels[train].tolist())) < 2 or not held.any():
            continue
        mean, scale = vectors[train].mean(0), vectors[train].std(0) + 1e-6
        model = LogisticRegression(C=HEAD_C, class_weight="balanced", max_iter=3000)
        model.fit((vectors[train] - mean) / scale, labels[train])
        scores[held] = model.decision_function((vectors[held] - mean) / scale)
    np.save(work / "neural.npy", scores)
    from sklearn.metrics import roc_auc_score

    auc = roc_auc_score(labels, scores) if len(set(labels.tolist())) == 2 else float("nan")
    print(f"neural head: out-of-fold line AUC {auc:.4f} on {len(labels)} lines ({int(labels.sum())} first wrong)")


def neural_columns(item: dict, neural: np.ndarray) -> np.ndarray:
    """The neural features of a solution's lines: its score (0 where the line was not read) and the maximum
    score of the solution's earlier lines (0 for the first)."""
    s = np.asarray([neural[r] if r >= 0 else 0.0 for r in item["read"]])
    before = np.concatenate([[0.0], np.maximum.accumulate(s)[:-1]]) if len(s) else s
    return np.stack([s, before], axis=1).reshape(len(s), 2)


def evaluate(work: Path, folds: int, output: Path | None = None) -> dict:
    """Out-of-fold dev figures of the step verifier with and without the neural columns (module docstring)."""
    items = json.loads((work / "items.json").read_text())
    features = np.load(work / "features.npy")
    neural = np.load(work / "neural.npy")
    shuffled = np.random.default_rng(0).permutation(neural)  # the same columns with the scores' reading taken away
    offsets = np.cumsum([0] + [len(item["lines"]) for item in items])
    base = [features[offsets[k] : offsets[k + 1]] for k in range(len(items))]
    variants = {
        "verifier features": base,
        "verifier + neural score": [np.hstack([b, neural_columns(it, neural)[:, :1]]) for b, it in zip(base, items)],
        "verifier + neural": [np.hstack([b, neural_columns(it, neural)]) for b, it in zip(base, items)],
        "neural alone": [neural_columns(it, neural) for it in items],
        "verifier + shuffled neural (control)": [
            np.hstack([b, neural_columns(it, shuffled)]) for b, it in zip(base, items)
        ],
    }
    report, hits = {}, {}
    print("| features | part | n wrong | n right | error acc | correct acc | F1 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, xs in variants.items():
        threshold, chosen, hits[name] = out_of_fold(items, xs, folds)
        report[name] = {"threshold": threshold, "dev": chosen}
        for part, s in chosen.items():
            print(
                f"| {name} | {part} | {s['n_wrong']} | {s['n_right']} | {s['error_acc']} | {s['correct_acc']} | "
                f"{s['f1']} |"
            )
    report["paired"] = {}
    for part in chosen:
        pick = [k for k, item in enumerate(items) if item["part"] == part]
        wrong = np.asarray([items[k]["label"] != -1 for k in pick])
        a, b = (np.asarray([hits[name][k] for k in pick]) for name in ("verifier + neural", "verifier features"))
        low, high = paired_f1_difference(wrong, a, b)
        report["paired"][part] = [low, high]
        print(f"{part} dev F1 (verifier + neural) - (verifier features), paired bootstrap 95%: [{low}, {high}]")
    for path in (work / "evaluate.json", output):
        if path is not None:
            path.write_text(json.dumps(report, indent=1) + "\n")
            print(f"wrote {path}")
    return report


def paired_f1_difference(wrong: np.ndarray, a: np.ndarray, b: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """The 95% bootstrap interval (1,000 resamples of the solutions, in F1 points) of F1(a) - F1(b), where ``a``
    and ``b`` say per solution whether each system got it right and ``wrong`` which solutions are wrong."""

    def f1(w: np.ndarray, h: np.ndarray) -> float:
        e, c = h[w].mean(), h[~w].mean()
        return 2 * e * c / (e + c) if e + c else 0.0

    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(1000):
        pick = rng.integers(0, len(wrong), len(wrong))
        w = wrong[pick]
        if w.any() and (~w).any():
            diffs.append(f1(w, a[pick]) - f1(w, b[pick]))
    if not diffs:
        return float("nan"), float("nan")
    return tuple(round(100 * float(np.percentile(diffs, q)), 1) for q in (2.5, 97.5))


def out_of_fold(items: list[dict], xs: list[np.ndarray], folds: int) -> tuple[float, dict, list[bool]]:
    """``process_errors.fit_verifier``'s procedure on the columns ``xs``: out-of-fold logistic scores, Platt
    calibration on them, the threshold of best mean dev F1 with each part's correct acc >= 90; with the dev
    figures at it and, per solution, whether its prediction is right."""
    rows = [dict(item, features=x) for item, x in zip(items, xs)]
    for f in range(folds):
        x, y = _lines([r for r in rows if r["fold"] != f])
        verifier = fit(x, y) if len(set(y.tolist())) == 2 else None
        for r in rows:
            if r["fold"] == f:
                scored = verifier is not None and len(r["lines"])
                r["scores"] = verifier.scores(r["features"]) if scored else np.zeros(len(r["lines"]))
    calibration = {part: [r for r in rows if r["part"] == part] for part in PROCESSBENCH}
    calibration = {p: v for p, v in calibration.items() if v}

    class _Platt:  # what _threshold reads of a verifier
        platt = _platt(calibration)

    threshold, chosen = _threshold(calibration, _Platt)
    a, b = _Platt.platt
    hits = []
    for r in rows:
        flagged = [line for line, z in zip(r["lines"], r["scores"]) if 1 / (1 + np.exp(-(a * z + b))) >= threshold]
        if r["rule_line"] is not None:
            flagged.append(r["rule_line"])
        hits.append((r["steps"][min(flagged)] if flagged else -1) == r["label"])
    return threshold, chosen, hits


def _lines(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of the lines up to each solution's first wrong step (1 on its lines)."""
    xs, ys = [], []
    for r in rows:
        for number, x in zip(r["lines"], r["features"]):
            step = r["steps"][number]
            if r["label"] == -1 or step <= r["label"]:
                xs.append(x)
                ys.append(int(step == r["label"]))
    width = rows[0]["features"].shape[1] if rows else 0
    return np.asarray(xs).reshape(len(xs), width), np.asarray(ys)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA), help="the shared data folder (holds processbench/)")
    parser.add_argument("--work", default="/tmp/step_scorer", help="where the stages write their files")
    parser.add_argument("--stage", default="all", choices=["prepare", "encode", "heads", "evaluate", "all"])
    parser.add_argument("--limit", type=int, help="the first N solutions of each part")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for the encoder")
    parser.add_argument("--output", help="also write the dev figures here (JSON)")
    parser.add_argument("--smoke", action="store_true", help="12 solutions a part, 2 folds")
    return parser.parse_args()


if __name__ == "__main__":
    main()
