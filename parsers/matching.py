"""Matching the parts of two problems in near-linear time (what ``parsers.compare`` aligns with).

Comparing every sentence (or quantity) of one problem with every one of the other costs n x m; these
helpers build a small set of candidate pairs instead and find the best matching among them:

* ``occurrence_pairs``: the k-th occurrence of a key in a with its k-th occurrence in b (hashed keys:
  exact sentences, sentences up to case and numbers, quantity values);
* ``band_pairs``: the pairs near the diagonal of two sequences (each element with the few at the same
  relative place in the other), for what no key connects;
* ``best_chain``: the heaviest chain of pairs increasing in both sequences (a monotone alignment, as an
  edit-distance table gives, in ``O(P log P)`` for ``P`` candidate pairs);
* ``max_weight_matching``: an optimal one-to-one matching of weighted candidate pairs (the Hungarian
  method's problem: SciPy's ``linear_sum_assignment`` on a small table, ``min_weight_full_bipartite_matching``,
  LAPJVsp, on a sparse graph; ``shortest_augmenting_path`` in NumPy where SciPy is not installed).

Every helper treats its two sides alike (swap a and b and the answer is the mirror image) as long as no
two answers weigh the same; callers add a tie-breaker that is itself symmetric to make that so.
"""

from __future__ import annotations

import importlib.util
import zlib
from collections.abc import Hashable, Iterator, Sequence

import numpy as np

DENSE_UP_TO = 4096  # max_weight_matching solves tables of at most this many cells densely
DIAGONAL_WIDTH = 3  # band_pairs' width where the callers need no other: each element meets ~7 of the other side


def occurrence_pairs(keys_a: Sequence[Hashable], keys_b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """``(i, j)`` pairing the k-th occurrence of each key in ``keys_a`` with its k-th occurrence in ``keys_b``
    (a key that occurs more often on one side leaves the extra occurrences unpaired). ``None`` keys are skipped."""
    positions: dict[Hashable, list[int]] = {}
    for j, key in enumerate(keys_b):
        if key is not None:
            positions.setdefault(key, []).append(j)
    taken: dict[Hashable, int] = {}
    pairs = []
    for i, key in enumerate(keys_a):
        if key is None or key not in positions:
            continue
        k = taken.get(key, 0)
        if k < len(positions[key]):
            pairs.append((i, positions[key][k]))
            taken[key] = k + 1
    return pairs


def band_pairs(n: int, m: int, width: int) -> Iterator[tuple[int, int]]:
    """The pairs ``(p, q)`` of ``range(n) x range(m)`` with ``|p * m - q * n| <= width * max(n, m)``: each
    element with the ``~2 * width + 1`` elements at the same relative place in the other sequence (all pairs
    when ``n * m`` is small anyway). The condition is the same with the sides swapped."""
    if n == 0 or m == 0:
        return
    if n * m <= (2 * width + 1) * max(n, m):
        yield from ((p, q) for p in range(n) for q in range(m))
        return
    reach = width * max(n, m)
    for p in range(n):
        low = max(0, -((reach - p * m) // n))  # ceil((p * m - reach) / n)
        high = min(m - 1, (p * m + reach) // n)
        yield from ((p, q) for q in range(low, high + 1))


def tie_breaker(i: int, j: int, n: int, m: int, *texts: str) -> tuple[float, int]:
    """What settles a tie between equally good pairs ``(i, j)`` of sequences of lengths ``n`` and ``m`` (a tail
    for a pair's weight tuple), the same with a and b swapped: nearness of their relative places, then a hash
    of their texts (``crc32``: the same in every process, unlike ``hash``)."""
    return -abs(i / max(n, 1) - j / max(m, 1)), zlib.crc32("\x00".join(sorted(texts)).encode("utf-8", "replace"))


def best_chain(pairs: Sequence[tuple[int, int]], weights: Sequence[tuple[float, ...]]) -> list[int]:
    """Positions in ``pairs`` of the heaviest chain ``(i1, j1), (i2, j2), ...`` with ``i`` and ``j`` both
    strictly increasing; a chain weighs the element-wise sum of its pairs' ``weights`` (tuples, compared in
    order: the first number decides, the next break ties). ``O(P log P)`` with a Fenwick tree of prefix maxima."""
    if not pairs:
        return []
    size = max(j for _, j in pairs) + 1
    tree_weight: list[tuple[float, ...] | None] = [None] * (size + 1)
    tree_end: list[int] = [-1] * (size + 1)
    best: list[tuple[float, ...]] = [()] * len(pairs)
    parent = [-1] * len(pairs)
    # by i, and by falling j within one i, so that two pairs of the same i never chain
    for position in sorted(range(len(pairs)), key=lambda k: (pairs[k][0], -pairs[k][1])):
        j = pairs[position][1]
        before, before_end, k = None, -1, j  # the heaviest chain ending at a j' < j
        while k > 0:
            if tree_weight[k] is not None and (before is None or tree_weight[k] > before):
                before, before_end = tree_weight[k], tree_end[k]
            k -= k & -k
        weight = weights[position]
        best[position] = weight if before is None else tuple(x + y for x, y in zip(before, weight))
        parent[position] = before_end
        k = j + 1
        while k <= size:
            if tree_weight[k] is None or best[position] > tree_weight[k]:
                tree_weight[k], tree_end[k] = best[position], position
            k += k & -k
    end = max(range(len(pairs)), key=lambda k: best[k])
    chain = []
    while end >= 0:
        chain.append(end)
        end = parent[end]
    return chain[::-1]


def max_weight_matching(n: int, m: int, weights: dict[tuple[int, int], int]) -> list[tuple[int, int]]:
    """A one-to-one matching of ``range(n)`` with ``range(m)`` among the candidate pairs of ``weights`` (positive
    integers) of the largest total weight; pairs left out of it stay unmatched.

    It is solved as a minimum-cost *full* matching (every node of the smaller side matched); one that may leave
    nodes out becomes one by giving each node of a a stand-in on b's side, its "unmatched". Every a is then
    matched, to a b or its stand-in, so costs ``top - weight`` for a pair and ``top`` for a stand-in (all
    positive: SciPy reads a stored zero as no edge) total ``n * top`` minus the matched weight. Integer weights
    keep the sums exact, so a unique best matching is found from either side, and whether the table is solved
    densely (SciPy's ``linear_sum_assignment``, small tables) or sparsely (``min_weight_full_bipartite_matching``).

    Without SciPy (the base install) ``shortest_augmenting_path`` solves both: on a small table it picks what
    ``linear_sum_assignment`` picks, equal weights included; on a large one a matching of the same (largest)
    weight, which may pair other nodes where two matchings weigh the same."""
    if not weights:
        return []
    top = max(weights.values()) + 1
    if not _scipy_installed():
        rows_of = _sparse_costs(n, m, weights, top)
        matched_cols = shortest_augmenting_path(n, m + n, rows_of)
        return sorted((i, int(j)) for i, j in enumerate(matched_cols) if j < m)
    if n * (n + m) <= DENSE_UP_TO:  # small: a dense table is quicker to build than a sparse graph
        from scipy.optimize import linear_sum_assignment

        costs = np.full((n, m + n), np.inf)
        for (i, j), weight in weights.items():
            costs[i, j] = top - weight
        costs[np.arange(n), m + np.arange(n)] = top
        matched_rows, matched_cols = linear_sum_assignment(costs)
        return sorted((int(i), int(j)) for i, j in zip(matched_rows, matched_cols) if j < m)
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    rows = [i for i, _ in weights] + list(range(n))
    cols = [j for _, j in weights] + [m + i for i in range(n)]
    costs = [top - weight for weight in weights.values()] + [top] * n
    graph = coo_matrix((np.asarray(costs, dtype=np.float64), (rows, cols)), shape=(n, m + n)).tocsr()
    matched_rows, matched_cols = min_weight_full_bipartite_matching(graph)
    return sorted((int(i), int(j)) for i, j in zip(matched_rows, matched_cols) if j < m)


def _scipy_installed() -> bool:
    """Whether SciPy is installed, asked without importing it (the base install has none)."""
    try:
        return importlib.util.find_spec("scipy") is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as none
        return False


def _sparse_costs(n: int, m: int, weights: dict[tuple[int, int], int], top: int):
    """``row_costs(i)``: row ``i`` of the ``n x (m + n)`` cost table of ``max_weight_matching`` (``inf`` where a
    pair is no candidate), built when asked for, so a large table is never held whole."""
    by_row: dict[int, tuple[list[int], list[int]]] = {}
    for (i, j), weight in weights.items():
        columns, costs = by_row.setdefault(i, ([], []))
        columns.append(j)
        costs.append(top - weight)

    def row_costs(i: int) -> np.ndarray:
        row = np.full(m + n, np.inf)
        columns, costs = by_row.get(i, ((), ()))
        row[list(columns)] = costs
        row[m + i] = top
        return row

    return row_costs


def shortest_augmenting_path(rows: int, columns: int, row_costs) -> np.ndarray:
    """The column matched with each row in a full matching of least total cost, ``rows <= columns``, where
    ``row_costs(i)`` is row ``i`` of the cost table (``inf``: no edge); ``ValueError`` when none exists.

    The shortest augmenting path method (Jonker and Volgenant, 1987, as Crouse, "On implementing 2D rectangular
    assignment algorithms", 2016, writes it for rectangular tables, the method of SciPy's
    ``linear_sum_assignment``): the rows are added one at a time, each by a Dijkstra search from it for the
    nearest free column in reduced costs, and the dual prices are updated so that the reduced costs stay
    non-negative. Equal choices are settled as that method settles them, which makes the matching the same as
    ``linear_sum_assignment``'s, also where two matchings cost the same: the columns are scanned from the last
    one down, removing a visited column moves the last unvisited one into its place, and among equally near
    columns the search takes the first scanned, or the last scanned that is free when one is. NumPy, one row of
    the table at a time: ``O(rows * columns)`` memory at most."""
    u = np.zeros(rows)
    v = np.zeros(columns)
    column_of = np.full(rows, -1, dtype=np.int64)
    row_of = np.full(columns, -1, dtype=np.int64)
    for current in range(rows):
        shortest = np.full(columns, np.inf)
        path = np.full(columns, -1, dtype=np.int64)
        visited_rows = np.zeros(rows, dtype=bool)
        visited_columns = np.zeros(columns, dtype=bool)
        remaining = np.arange(columns - 1, -1, -1)  # scan order, shrinking as columns are visited
        unvisited = columns
        lowest = 0.0
        i, sink = current, -1
        while sink == -1:
            visited_rows[i] = True
            scan = remaining[:unvisited]
            reduced = lowest + row_costs(i)[scan] - u[i] - v[scan]
            nearer = reduced < shortest[scan]
            path[scan[nearer]] = i
            shortest[scan[nearer]] = reduced[nearer]
            distances = shortest[scan]
            lowest = float(distances.min())
            if lowest == np.inf:
                raise ValueError("no full matching exists")
            ties = np.flatnonzero(distances == lowest)
            free = ties[row_of[scan[ties]] == -1]
            index = int(free[-1] if len(free) else ties[0])
            j = int(scan[index])
            if row_of[j] == -1:
                sink = j
            else:
                i = int(row_of[j])
            visited_columns[j] = True
            unvisited -= 1
            remaining[index] = remaining[unvisited]
        u[current] += lowest
        others = visited_rows.copy()
        others[current] = False
        u[others] += lowest - shortest[column_of[others]]
        v[visited_columns] -= lowest - shortest[visited_columns]
        j = sink
        while True:  # flip the path's edges: each row on it takes the column after it
            i = int(path[j])
            row_of[j] = i
            column_of[i], j = j, int(column_of[i])
            if i == current:
                break
    return column_of


__all__ = [
    "occurrence_pairs",
    "band_pairs",
    "tie_breaker",
    "best_chain",
    "max_weight_matching",
    "shortest_augmenting_path",
    "DIAGONAL_WIDTH",
]
