"""LaTeX coverage on real formulas: our operator-tree parser against SymPy's ``parse_latex``.

    python benchmarks/latex_coverage.py [--data ../shared/data/math/train.jsonl] [--limit N]
                                        [--workers 2] [--timeout 5] [--no-sympy] [--smoke]

Every formula of every problem (found by ``parsers.segment``) is parsed by
``parsers.latex.parse_latex`` and by ``sympy.parsing.latex.parse_latex`` (the
ANTLR back end, antlr4-python3-runtime 4.11.1). For ours the table counts the
formulas that raise no exception and the tree status: ``ok`` (structured, no
``E`` node), ``partial`` (some ``E`` nodes) and ``failed``; for SymPy, "no
exception" is the only signal of a structured result. SymPy runs in a pool of
``--workers`` processes with a per-formula ``--timeout`` (a formula that runs
out of time counts as a failure); each distinct formula is parsed once and
counted as often as it occurs. Then come the 20 most common reasons our parser
gives for ``E`` nodes, with an example each. ``--smoke``: the first 40 formulas of the smoke
data (``benchmarks/smoke.py``): seconds.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import signal
import time
from pathlib import Path

from mathgraph.parsers.latex import parse_latex
from mathgraph.parsers.segment import segment

from smoke import SMOKE_MATH

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    args = _arguments()
    formulas = _formulas(Path(args.data))
    if args.limit is not None:
        formulas = formulas[: args.limit]
    counts = collections.Counter(formulas)

    ours, reasons, examples, ours_seconds = _run_ours(formulas)
    print(f"data: {args.data}: {len(formulas)} formulas ({len(counts)} distinct)")
    print()
    print("| parser | formulas | no exception | structured (ok) | partial | failed | seconds | formulas/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    total = len(formulas)
    print(
        f"| ours (`parsers.latex`) | {total} | {_pct(total - ours['exception'], total)} | {_pct(ours['ok'], total)} "
        f"| {_pct(ours['partial'], total)} | {_pct(ours['failed'], total)} | {ours_seconds:.2f} "
        f"| {total / max(ours_seconds, 1e-9):.0f} |"
    )
    if not args.no_sympy:
        sympy, sympy_seconds = _run_sympy(counts, args.workers, args.timeout)
        ok = sympy["ok"]
        print(
            f"| SymPy `parse_latex` (antlr 4.11.1, {args.workers} workers, {args.timeout:g} s timeout) | {total} "
            f"| {_pct(ok, total)} | {_pct(ok, total)} | - | {_pct(total - ok, total)} "
            f"(timeouts: {sympy['timeout']}) | {sympy_seconds:.1f} | {total / max(sympy_seconds, 1e-9):.0f} |"
        )
    print()
    print("Top 20 reasons for E nodes in our trees (formulas with that reason):")
    print()
    print("| # | formulas | reason | example |")
    print("|---:|---:|---|---|")
    for rank, (reason, n) in enumerate(reasons.most_common(20), 1):
        example = examples[reason].replace("\n", " ").replace("|", "\\|")
        if len(example) > 80:
            example = example[:77] + "..."
        print(f"| {rank} | {n} | {reason.replace('|', chr(92) + '|')} | `{example}` |")
    if not reasons:
        print("| - | 0 | (none) | |")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        default=str((REPO / "../shared/data/math/train.jsonl").resolve()),
        help="JSONL file with a `problem` field (default: ../shared/data/math/train.jsonl)",
    )
    parser.add_argument("--text-field", default="problem")
    parser.add_argument("--limit", type=int, default=None, help="only the first N formulas")
    parser.add_argument("--workers", type=int, default=2, help="processes for SymPy")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds SymPy may spend on one formula")
    parser.add_argument("--no-sympy", action="store_true", help="skip SymPy (quick runs)")
    parser.add_argument("--smoke", action="store_true", help="40 formulas of the smoke data: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.data, args.limit = SMOKE_MATH, 40
    args.data = str(Path(args.data))
    return args


def _formulas(path: Path) -> list[str]:
    formulas: list[str] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                formulas.extend(formula.latex for formula in segment(json.loads(line)["problem"]).formulas)
    return formulas


def _run_ours(formulas: list[str]):
    status: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    start = time.perf_counter()
    for latex in formulas:
        try:
            tree = parse_latex(latex)
        except Exception:  # noqa: BLE001 - counting exceptions is the point
            status["exception"] += 1
            continue
        status[tree.status] += 1
        for reason in dict.fromkeys(tree.errors):
            reasons[reason] += 1
            examples.setdefault(reason, latex)
    return status, reasons, examples, time.perf_counter() - start


class _Timeout(BaseException):
    """Raised by SIGALRM; a BaseException so that SymPy's own ``except Exception`` cannot swallow it."""


def _alarm(signum, frame):
    raise _Timeout


def _init_sympy_worker(timeout: float) -> None:
    global _SYMPY_PARSE, _TIMEOUT
    from sympy.parsing.latex import parse_latex as sympy_parse_latex

    _SYMPY_PARSE = sympy_parse_latex
    _TIMEOUT = timeout
    signal.signal(signal.SIGALRM, _alarm)


def _sympy_status(latex: str) -> str:
    signal.setitimer(signal.ITIMER_REAL, _TIMEOUT)
    try:
        _SYMPY_PARSE(latex)
        return "ok"
    except _Timeout:
        return "timeout"
    except Exception:  # noqa: BLE001 - any failure of the foreign parser is a data point
        return "error"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _run_sympy(counts: collections.Counter, workers: int, timeout: float):
    distinct = list(counts)
    result: collections.Counter = collections.Counter()
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers, _init_sympy_worker, (timeout,)) as pool:
        for latex, status in zip(distinct, pool.imap(_sympy_status, distinct, chunksize=32), strict=True):
            result[status] += counts[latex]
    return result, time.perf_counter() - start


def _pct(n: int, total: int) -> str:
    return f"{n} ({100 * n / total:.2f}%)" if total else "0"


if __name__ == "__main__":
    main()
