"""Budgeted-SGD kernels: golden section search, the lookup tables, merging and the SGD steps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dsvm.data.blocks import block_from_arrays
from dsvm.kernels import bsgd as kb
from dsvm.solvers.base import encode_labels
from dsvm.solvers.bsgd import BSGDSolver
from dsvm.solvers.bsgd_tables import GRID, merge_tables
from tests import reference_kernel_maps as ref


@pytest.mark.parametrize("m,kappa", [(0.3, 0.9), (0.5, 0.5), (0.8, 0.2), (0.05, 0.99)])
def test_golden_section_finds_the_brute_force_maximum(m, kappa):
    h = kb.golden_section_h(m, math.log(kappa), 0.0, 1.0, 1e-10)
    h_ref = ref.best_h(m, kappa, n=200001)
    assert abs(h - h_ref) < 2e-5
    assert ref.merge_value(h, m, kappa) >= ref.merge_value(h_ref, m, kappa) - 1e-12


def test_tables_hold_the_global_optimum_at_grid_points():
    H, WD = merge_tables()
    assert H.shape == WD.shape == (GRID, GRID)
    rng = np.random.default_rng(0)
    for a, c in rng.integers(1, GRID, size=(25, 2)):
        m, kappa = a / (GRID - 1), c / (GRID - 1)
        h = ref.best_h(m, kappa, n=100001)
        s = ref.merge_value(h, m, kappa)
        assert ref.merge_value(H[a, c], m, kappa) >= s - 1e-9
        wd = m * m + (1 - m) ** 2 - s * s + 2 * m * (1 - m) * kappa
        assert abs(WD[a, c] - wd) < 1e-8


def test_tables_are_cached_on_disk_not_recomputed(tmp_path, monkeypatch):
    from dsvm.solvers import bsgd_tables

    monkeypatch.setenv("DSVM_CACHE_DIR", str(tmp_path))
    bsgd_tables.merge_tables.cache_clear()
    try:
        H1, _ = bsgd_tables.merge_tables(50)
        assert bsgd_tables.cache_path(50).exists()
        monkeypatch.setattr(bsgd_tables, "compute_tables", lambda *a: pytest.fail("recomputed"))
        bsgd_tables.merge_tables.cache_clear()
        H2, _ = bsgd_tables.merge_tables(50)
        np.testing.assert_array_equal(H1, H2)
    finally:
        bsgd_tables.merge_tables.cache_clear()


def test_bilinear_is_exact_on_grid_points_and_linear_between():
    T = np.arange(16.0).reshape(4, 4)
    assert kb.bilinear(T, 1 / 3, 2 / 3) == pytest.approx(T[1, 2])
    assert kb.bilinear(T, 0.5, 0.0) == pytest.approx(0.5 * (T[1, 0] + T[2, 0]))
    assert kb.bilinear(T, 1.0, 1.0) == pytest.approx(T[3, 3])


def _model(seed, n=12, d=3, mixed=True):
    rng = np.random.default_rng(seed)
    SV = rng.normal(scale=0.6, size=(n, d))
    A = rng.uniform(0.1, 1.0, n) * (rng.choice([-1, 1], n) if mixed else 1)
    return SV, A


@pytest.mark.parametrize("method", ["gss-precise", "lookup-h", "lookup-wd", "gss"])
def test_merge_matches_reference_algorithm_1(method):
    H, WD = merge_tables()
    for seed in range(5):
        SV, A = _model(seed)
        SV_ref, A_ref = ref.merge_once(SV.copy(), A.copy(), gamma=0.7)
        sv, a = SV.copy(), A.copy()
        stats = np.zeros(kb.N_STATS)
        n = kb.merge_once(sv, a, len(A), 0.7, kb.MERGE_CODES[method], False, H, WD, stats)
        assert n == len(A) - 1 and stats[kb.STAT_MERGES] == 1
        # same multiset of (vector, coefficient): compare after sorting by coefficient
        tol = 1e-4 if method == "gss-precise" else 2e-2
        np.testing.assert_allclose(np.sort(a[:n]), np.sort(A_ref), atol=tol)
        got = sv[np.argsort(a[:n])]
        want = SV_ref[np.argsort(A_ref)]
        np.testing.assert_allclose(got, want, atol=tol)


def test_merge_never_joins_opposite_signs_and_counts_equal_decisions():
    H, WD = merge_tables()
    SV, A = _model(3, mixed=True)
    before = np.sort(A[A < 0]) if A[np.argmin(np.abs(A))] > 0 else np.sort(A[A > 0])
    stats = np.zeros(kb.N_STATS)
    n = kb.merge_once(SV, A, len(A), 0.7, kb.MERGE_GSS, True, H, WD, stats)
    other_sign = np.sort(A[:n][np.sign(A[:n]) == np.sign(before[0])])
    np.testing.assert_allclose(other_sign, before)  # the other sign's coefficients are untouched
    assert stats[kb.STAT_COMPARED] == 1 and stats[kb.STAT_EQUAL] in (0, 1)


@pytest.mark.parametrize("sparse", [False, True])
def test_bsgd_pass_matches_reference(sparse):
    import scipy.sparse as sp

    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 4))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    order = rng.permutation(120).astype(np.int64)
    SV_ref, A_ref = ref.bsgd(X, y, order, lam=0.01, gamma=0.1, budget=10)
    solver = BSGDSolver(alpha=0.01, gamma=0.1, budget=10, merge="gss-precise")
    state = solver.init_state(4, 1, np.float64)
    block = block_from_arrays(sp.csr_matrix(X) if sparse else X, y)
    stats = solver.run_block(state, block, encode_labels(y, np.array([-1.0, 1.0]), "t"), order)
    n = int(state.extra["n_sv"][0])
    assert n == len(A_ref) == 10 and state.t == 120 and stats.n_rows == 120
    a = state.extra["alpha"][0, :n]
    np.testing.assert_allclose(np.sort(a), np.sort(A_ref), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(state.extra["sv"][0, :n][np.argsort(a)], SV_ref[np.argsort(A_ref)],
                               atol=1e-3)
    assert state.extra["merge_stats"][0, kb.STAT_MERGES] > 0
