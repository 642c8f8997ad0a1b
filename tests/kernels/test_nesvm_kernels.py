"""NESVM pass kernels against the row-by-row reference (dense and CSR, float32 and float64)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data.blocks import block_from_arrays
from dsvm.kernels.nesvm import smoothed_hinge_dual
from dsvm.solvers.nesvm import Points, block_share
from tests.reference_nesvm import nesvm_pass_ref, smoothed_hinge_ref


def make_rows(n=50, d=6, n_classes=2, seed=0):
    """Dense rows, half the entries zero, rows 2 and 5 entirely zero, labels as codes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=d)
    X[rng.random((n, d)) < 0.5] = 0.0
    X[2] = 0.0
    X[5] = 0.0
    codes = rng.integers(0, n_classes, size=n).astype(np.int32)
    return X, codes


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("loss", ["hinge", "squared"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("with_bias_and_weights", [False, True])
def test_pass_matches_reference(layout, dtype, loss, n_classes, with_bias_and_weights):
    X, codes = make_rows(n_classes=n_classes)
    K = 1 if n_classes == 2 else n_classes
    rng = np.random.default_rng(1)
    # two points: the gradient point and an evaluation point, margins on both sides of 1
    P = rng.normal(scale=0.5, size=(2 * K, X.shape[1]))
    B = rng.normal(scale=0.3, size=2 * K) if with_bias_and_weights else np.zeros(2 * K)
    sw = rng.uniform(0.1, 2.0, size=len(X)) if with_bias_and_weights else None
    bias = 1.0 if with_bias_and_weights else 0.0
    Xd = X.astype(dtype)
    Xin = sp.csr_matrix(Xd) if layout == "csr" else Xd
    block = block_from_arrays(Xin, codes.astype(np.float64), sw)
    points = Points(P, B, K, collect_scaling=True)
    share = block_share(block, codes, points, loss, 0.7, with_bias_and_weights)
    G, gb, sums, stats, colstats = nesvm_pass_ref(Xd, codes, sw, P, B, loss, 0.7, bias, K)
    rtol = 1e-12  # float32 data converts exactly to float64: both dtypes match to rounding
    np.testing.assert_allclose(share.grad, G, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(share.grad_b, gb, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(share.sums, sums, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(share.stats, stats, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(share.colstats, colstats, rtol=rtol, atol=1e-12)


def test_scaling_sums_are_skipped_unless_asked():
    X, codes = make_rows()
    block = block_from_arrays(X, codes.astype(np.float64))
    share = block_share(block, codes, Points(np.zeros((1, 6)), np.zeros(1), 1), "hinge", 0.5,
                        False)
    assert share.colstats.shape == (2, 0)
    assert share.stats[1] == len(X)


def test_read_only_inputs_and_empty_block():
    X, codes = make_rows()
    X.flags.writeable = False
    block = block_from_arrays(X, codes.astype(np.float64))
    share = block_share(block, codes, Points(np.ones((1, 6)), np.zeros(1), 1), "hinge", 0.5, True)
    assert np.isfinite(share.grad).all()
    empty = block_from_arrays(np.zeros((0, 6)), np.zeros(0))
    zero = block_share(empty, np.zeros(0, np.int32), Points(np.ones((1, 6)), np.zeros(1), 1),
                       "hinge", 0.5, True)
    assert zero.stats[1] == 0 and not zero.grad.any()


@pytest.mark.parametrize("a", [0.0, 0.5, 2.0])
def test_smoothed_hinge_bounds_and_reference(a):
    """Theorem 1: h_mu <= h <= h_mu + mu/2 ||x||_inf, and Eq. 6/10 equal the reference."""
    mu = 0.3
    for r in np.linspace(-2, 3, 101):
        u, h = smoothed_hinge_dual(r, a, mu)
        u_ref, h_ref = smoothed_hinge_ref(r, a, mu)
        assert u == pytest.approx(u_ref, abs=1e-15) and h == pytest.approx(h_ref, abs=1e-15)
        hinge = max(0.0, r)
        assert h <= hinge + 1e-15
        assert hinge <= h + 0.5 * mu * a + 1e-15
