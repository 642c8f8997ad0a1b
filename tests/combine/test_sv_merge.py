"""The budgeted-SGD combine: union of the streams' support vectors, merged back to budget."""

from __future__ import annotations

import numpy as np

from dsvm.combine.sv_merge import SVUnionMerge
from dsvm.solvers.base import PassStats
from dsvm.solvers.bsgd import BSGDSolver


def _stream_state(solver, seed, n):
    rng = np.random.default_rng(seed)
    state = solver.init_state(3, 1, np.float64)
    state.extra["sv"][0, :n] = rng.normal(size=(n, 3))
    state.extra["alpha"][0, :n] = rng.uniform(0.1, 1.0, n) * rng.choice([-1, 1], n)
    state.extra["n_sv"][0] = n
    state.t = 100.0 + seed
    return state


def test_union_is_scaled_average_when_under_budget():
    solver = BSGDSolver(budget=20, gamma=0.5)
    comb = SVUnionMerge(20, 0.5, "lookup-wd")
    start = solver.init_state(3, 1, np.float64)
    parts = [comb.chunk(_stream_state(solver, s, 6), PassStats(1.0, 10, 10.0)) for s in range(3)]
    state, stats = comb.finalize(comb.combine(parts), start)
    assert state.extra["n_sv"][0] == 18 and stats.n_rows == 30
    expected = np.concatenate([p.alpha[0][0] for p in parts]) / 3
    np.testing.assert_allclose(state.extra["alpha"][0, :18], expected)
    assert state.t == 100 + 101 + 102  # pooled steps from a start at t = 0


def test_grouping_does_not_change_the_merged_model():
    solver = BSGDSolver(budget=10, gamma=0.5)
    comb = SVUnionMerge(10, 0.5, "gss")
    start = solver.init_state(3, 1, np.float64)
    parts = [comb.chunk(_stream_state(solver, s, 9), PassStats(1.0, 10, 10.0)) for s in range(4)]
    flat, _ = comb.finalize(comb.combine(parts), start)
    tree, _ = comb.finalize(comb.combine([comb.combine(parts[:2]), comb.combine(parts[2:])]), start)
    assert flat.extra["n_sv"][0] == 10
    np.testing.assert_array_equal(flat.extra["alpha"], tree.extra["alpha"])
    np.testing.assert_array_equal(flat.extra["sv"], tree.extra["sv"])


def test_identical_streams_merge_back_to_the_same_model():
    """K copies of one model, each scaled 1/K, collapse losslessly (kappa = 1 merges)."""
    solver = BSGDSolver(budget=8, gamma=0.5)
    comb = SVUnionMerge(8, 0.5, "gss-precise")
    one = _stream_state(solver, 0, 8)
    one.extra["alpha"][0, :8] = np.abs(one.extra["alpha"][0, :8])  # one sign: all mergeable
    parts = [comb.chunk(one, PassStats(1.0, 10, 10.0)) for _ in range(2)]
    state, _ = comb.finalize(comb.combine(parts), solver.init_state(3, 1, np.float64))
    got = sorted(zip(state.extra["alpha"][0, :8], map(tuple, state.extra["sv"][0, :8])))
    want = sorted(zip(one.extra["alpha"][0, :8], map(tuple, one.extra["sv"][0, :8])))
    for (a, x), (b, z) in zip(got, want):
        assert abs(a - b) < 1e-9 and np.allclose(x, z)
