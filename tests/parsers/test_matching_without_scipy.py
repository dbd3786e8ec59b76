"""The matching of ``parsers.matching`` where SciPy is not installed (the base install): the NumPy shortest augmenting
path picks what SciPy's ``linear_sum_assignment`` picks, equal costs included, so the alignments (``compare``, the
QRC, QAM and SQR features) are the same with SciPy and without it."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

import mathgraph.parsers.matching as matching
from mathgraph.parsers.matching import max_weight_matching, shortest_augmenting_path


@st.composite
def cost_tables(draw):
    """A table of at most as many rows as columns, its costs from a small range (many ties) or a large one, with
    some cells missing (``inf``)."""
    rows = draw(st.integers(1, 7))
    columns = draw(st.integers(rows, 10))
    top = draw(st.sampled_from([1, 2, 3, 10, 10**6]))
    cells = st.one_of(st.integers(0, top).map(float), st.just(np.inf)) if draw(st.booleans()) else st.integers(0, top)
    values = draw(st.lists(cells, min_size=rows * columns, max_size=rows * columns))
    return np.asarray(values, dtype=np.float64).reshape(rows, columns)


@settings(max_examples=300, deadline=None)
@given(cost_tables())
def test_the_numpy_assignment_is_scipys_ties_included(table):
    rows, columns = table.shape
    try:
        _, expected = linear_sum_assignment(table)
    except ValueError:  # no full matching uses finite costs only
        with pytest.raises(ValueError, match="no full matching"):
            shortest_augmenting_path(rows, columns, lambda i: table[i])
        return
    assert shortest_augmenting_path(rows, columns, lambda i: table[i]).tolist() == expected.tolist()


def test_equal_costs_everywhere_give_scipys_diagonal():
    # every full matching costs the same: scipy (and so the NumPy one) answers the diagonal
    table = np.ones((3, 5))
    assert shortest_augmenting_path(3, 5, lambda i: table[i]).tolist() == [0, 1, 2]


def test_the_cheapest_matching_by_hand():
    # rows 0 and 1 both prefer column 0 (cost 1); 0->0 + 1->1 costs 1 + 5 = 6, 0->1 + 1->0 costs 2 + 1 = 3
    table = np.array([[1.0, 2.0, 9.0], [1.0, 5.0, 9.0]])
    assert shortest_augmenting_path(2, 3, lambda i: table[i]).tolist() == [1, 0]


def without_scipy(monkeypatch):
    """Make ``import scipy`` fail, as in an install without it."""
    for name in [name for name in sys.modules if name == "scipy" or name.startswith("scipy.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "scipy", None)


weight_tables = st.integers(1, 9).flatmap(
    lambda n: st.integers(1, 9).flatmap(
        lambda m: st.tuples(
            st.just(n),
            st.just(m),
            st.dictionaries(
                st.tuples(st.integers(0, n - 1), st.integers(0, m - 1)),
                st.integers(1, 4) | st.integers(1, 10**9),  # small weights: many matchings weigh the same
                max_size=n * m,
            ),
        )
    )
)


@settings(max_examples=300, deadline=None)
@given(weight_tables)
def test_max_weight_matching_is_the_same_with_and_without_scipy(table):
    n, m, weights = table
    with_scipy = max_weight_matching(n, m, weights)
    with pytest.MonkeyPatch.context() as patch:
        without_scipy(patch)
        with pytest.raises(ImportError):
            import scipy  # noqa: F401
        assert max_weight_matching(n, m, weights) == with_scipy


@settings(max_examples=100, deadline=None)
@given(weight_tables)
def test_a_large_table_without_scipy_weighs_what_scipys_sparse_matching_weighs(table):
    n, m, weights = table
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(matching, "DENSE_UP_TO", 0)  # SciPy's sparse solver, as for a large table
        sparse = max_weight_matching(n, m, weights)
        without_scipy(patch)
        mine = max_weight_matching(n, m, weights)
    assert set(mine) <= set(weights)
    assert len({i for i, _ in mine}) == len({j for _, j in mine}) == len(mine)
    assert sum(weights[p] for p in mine) == sum(weights[p] for p in sparse)
