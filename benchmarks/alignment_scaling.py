"""How the alignment of two problems scales with their length: parse and align times from 1k to 50k characters.

    python benchmarks/alignment_scaling.py [--sizes 1000 2000 5000 10000 20000 50000] [--repeats 3] [--smoke]

Each size gets a problem of short sentences (``Ann has 7 pens.``, ``Each box holds 4 cards.``; ~20
characters each, so 10,000 characters are ~500 sentences and ~500 quantities) drawn with a fixed seed,
and a second problem made from it the way a variant is: every 10th sentence's number changed, every 25th
sentence's verb changed, a sentence inserted every 50, two neighbours swapped every 40. Both are parsed
once (``parse`` column: wall seconds for the two, spaCy included); then ``align_problems`` of the pair is
timed on the parsed graphs (``align``: CPU seconds, the best of ``--repeats`` runs; no parsing in it), and
so is a problem aligned with itself (``self``).

The ``growth`` column is the align time over the first size's, next to what ``n log n`` growth would
give (``n log n``): the target is a ratio at most that, and under 1 s at 10,000 characters; the last line
gives the slope of log time against log size between the first and the last size (1 is linear). A second
table times ``segment._strip_latex`` (the prose check of segmentation) on braces nested as deep as the
size allows: quadratic once, linear now. ``--smoke``: 1,000 and 2,000 characters, one run (seconds).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from functools import partial

from mathgraph.parsers.compare import align_problems
from mathgraph.parsers.problem import ProblemParser
from mathgraph.parsers.segment import _strip_latex

NAMES = ("Ann", "Tom", "Mia", "Leo", "Sam", "Eva", "Max", "Zoe")
THINGS = ("pens", "cards", "apples", "coins", "books", "shells")
BOXES = ("box", "bag", "jar", "crate")
VERBS = ("has", "buys", "finds", "keeps")
OTHER_VERBS = {"has": "owns", "buys": "sells", "finds": "loses", "keeps": "gives"}


def problem_sentences(chars: int, seed: int = 0) -> list[str]:
    """Short sentences, each with one number, adding up to about ``chars`` characters."""
    rng = random.Random(seed)
    sentences, length = [], 0
    while length < chars:
        if rng.random() < 0.7:
            sentence = f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.randint(2, 99)} {rng.choice(THINGS)}."
        else:
            sentence = f"Each {rng.choice(BOXES)} holds {rng.randint(2, 99)} {rng.choice(THINGS)}."
        sentences.append(sentence)
        length += len(sentence) + 1
    return sentences


def variant(sentences: list[str], seed: int = 1) -> list[str]:
    """``sentences`` edited the way a problem variant is (the module docstring)."""
    rng = random.Random(seed)
    out = []
    for k, sentence in enumerate(sentences):
        words = sentence.split()
        if k % 10 == 3:
            words = [str(rng.randint(100, 999)) if w.isdigit() else w for w in words]
        if k % 25 == 7 and words[1] in OTHER_VERBS:
            words[1] = OTHER_VERBS[words[1]]
        out.append(" ".join(words))
        if k % 50 == 20:
            out.append(f"{rng.choice(NAMES)} also sees {rng.randint(2, 99)} birds.")
    for k in range(5, len(out) - 1, 40):
        out[k], out[k + 1] = out[k + 1], out[k]
    return out


def best_time(function, repeats: int) -> float:
    """The shortest CPU time (``time.process_time``) of ``repeats`` calls of ``function``: the alignment runs
    on one core, and on a shared machine the wall clock also counts the time other jobs hold it."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    args = _arguments()
    parser = ProblemParser("spacy")
    parser.parse("Warm up the parser.")
    print("| characters | sentences | quantities a / b | parse s (both) | align s | self s | growth | n log n |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    first = None
    for size in args.sizes:
        sentences_a = problem_sentences(size)
        text_a = " ".join(sentences_a) + " How many things are there?"
        text_b = " ".join(variant(sentences_a)) + " How many things are there in all?"
        start = time.perf_counter()
        graph_a, graph_b = parser.parse(text_a), parser.parse(text_b)
        parse_seconds = time.perf_counter() - start
        align_seconds = best_time(partial(align_problems, graph_a, graph_b), args.repeats)
        self_seconds = best_time(partial(align_problems, graph_a, graph_a), args.repeats)
        if first is None:
            first = (len(text_a), align_seconds)
        n0, t0 = first
        n_log_n = len(text_a) * math.log(len(text_a)) / (n0 * math.log(n0))
        print(
            f"| {len(text_a)} | {len(sentences_a)} | {len(graph_a.quantities())} / {len(graph_b.quantities())} "
            f"| {parse_seconds:.2f} | {align_seconds:.4f} | {self_seconds:.4f} | {align_seconds / t0:.1f} "
            f"| {n_log_n:.1f} |"
        )
        last = (len(text_a), align_seconds)
    slope = math.log(last[1] / first[1]) / math.log(last[0] / first[0]) if last[0] > first[0] else float("nan")
    print(f"\nlog-log slope of align time, {first[0]} to {last[0]} characters: {slope:.2f}")
    print()
    print("| characters | `_strip_latex` s, braces nested |")
    print("|---:|---:|")
    for size in args.sizes:
        depth = size // 4
        body = "\\frac" + "{a" * depth + "}" * depth
        print(f"| {len(body)} | {best_time(partial(_strip_latex, body), args.repeats):.4f} |")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10_000, 20_000, 50_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="1,000 and 2,000 characters, one run: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.repeats = [1000, 2000], 1
    return args


if __name__ == "__main__":
    main()
