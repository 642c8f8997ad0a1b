"""The ASSET and FOLOS kernels against the eager NumPy references (dense and CSR, both dtypes,
class codes and real targets).

Each (layout, dtype) is a specialisation of its own that numba compiles for 10-15 s on a cold
cache (a dense float32 one twice that: it has the unit variant too); the kind of target is not
(the kernels get float64 codes either way, as kernel_inputs builds them, and hp[REGRESSION]
says which they are). The row primitives behind the layouts and dtypes are checked for every
combination by test_kernel_passes.py; what these tests add is the rule (ASSET's steps,
projection and average, FOLOS' lazy prox) and how it meets each layout, dtype and kind of
target. So each test covers every *pair* of those three (each layout in both dtypes, each with
class codes and with real targets) rather than all eight triples, with the pairs that the
estimator tests compile anyway (`fit` on NumPy float64 rows and on scipy CSR, float32 zarr
datasets) among them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dsvm.kernels import hparams as H
from dsvm.kernels.losses import LOSS_CODES
from dsvm.kernels.pairs import pair_scratch
from dsvm.kernels.passes import asset_pass, pegasos_pass, sgd_prox_pass
from dsvm.solvers.penalties import prox_scratch
from tests.kernels.test_kernel_passes import _ro, kernel_codes, kernel_X, make_problem
from tests.reference_asset import asset_pass_ref, folos_pass_ref

LAYOUTS = ["dense", "csr"]
TOL = {np.float64: dict(rtol=1e-9, atol=1e-11), np.float32: dict(rtol=2e-4, atol=2e-5)}


def _problem(n_outputs, regression, seed=0):
    X, codes, sw, order = make_problem(n_outputs=n_outputs, seed=seed)
    if regression:
        rng = np.random.default_rng(seed + 10)
        codes = (X @ rng.normal(size=X.shape[1]) + 0.1 * rng.normal(size=len(X))).astype(np.float64)
    # two passes' worth of steps over the rows, with repeats
    order = np.concatenate([order, order[::-1]])
    return X, codes, sw, order


# (layout, dtype) with class codes, and with real targets: every pair of layout, dtype and kind
# of target. Class codes over float64 rows and real targets over dense float64 rows are what
# the estimator tests fit with ASSET.
ASSET_CLASS_SPECS = [("dense", np.float64), ("csr", np.float64), ("dense", np.float32)]
ASSET_REAL_SPECS = [("dense", np.float64), ("csr", np.float32)]


@pytest.mark.parametrize(
    ("layout", "dtype", "case"),
    [(lay, dt, case) for lay, dt in ASSET_CLASS_SPECS
     for case in ("hinge-binary", "hinge-ovr", "smoothed")]
    + [(lay, dt, "eps-regression") for lay, dt in ASSET_REAL_SPECS],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_asset_pass_matches_reference(layout, dtype, case):
    n_outputs = 3 if case == "hinge-ovr" else 1
    regression = case == "eps-regression"
    loss = {"eps-regression": "epsilon_insensitive",
            "smoothed": "smoothed_hinge"}.get(case, "hinge")
    a = 0.2 if case in ("eps-regression", "smoothed") else 0.0
    X, codes, sw, order = _problem(n_outputs, regression)
    d = X.shape[1]
    rng = np.random.default_rng(4)
    W0 = (0.1 * rng.normal(size=(n_outputs, d))).astype(dtype)
    b0 = (0.1 * rng.normal(size=n_outputs)).astype(dtype)
    A0 = 0.05 * rng.normal(size=(n_outputs, d))
    ab0 = 0.05 * rng.normal(size=n_outputs)
    kw = dict(alpha=0.05, t=3.0, loss=loss, a=a, fit_intercept=True, radius=2.0, bias_bound=0.7,
              eta0=0.8, power=0.5, average=True, avg_start=40.0, n_avg=0.6)
    W, b, A, ab = W0.copy(), b0.copy(), A0.copy(), ab0.copy()
    hp = H.make_hp(alpha=kw["alpha"], t=kw["t"], batch_size=1, loss=LOSS_CODES[loss],
                   fit_intercept=True, dtype=np.dtype(dtype), radius=kw["radius"],
                   bias_bound=kw["bias_bound"], eta0=kw["eta0"], power=kw["power"], average=True,
                   avg_start=kw["avg_start"], n_avg=kw["n_avg"], loss_param=a,
                   regression=regression)
    Xk = kernel_X(X, layout, dtype)
    # (a CSR pass pairs w with its average in the scratch: kernels.pairs)
    lsum = asset_pass(Xk, kernel_codes(codes), _ro(sw), _ro(order), W, b, A, ab,
                      hp, pair_scratch(Xk, W, A, True))
    ref = asset_pass_ref(np.asarray(X, dtype), codes, sw, order, W0, b0, A0, ab0, **kw)
    tol = TOL[dtype]
    np.testing.assert_allclose(W, ref[0], **tol)
    np.testing.assert_allclose(b, ref[1], **tol)
    np.testing.assert_allclose(A, ref[2], **tol)
    np.testing.assert_allclose(ab, ref[3], **tol)
    assert hp[H.T] == ref[4] == kw["t"] + len(order)
    assert hp[H.N_AVG] == pytest.approx(ref[5], rel=1e-12)
    # the weights are the steps: n_avg grew by sum of eta_j over j > avg_start
    j = np.arange(kw["t"] + 1, kw["t"] + len(order) + 1)
    assert hp[H.N_AVG] - kw["n_avg"] == pytest.approx(np.sum(0.8 / np.sqrt(j[j > 40])), rel=1e-12)
    assert lsum == pytest.approx(ref[6], rel=tol["rtol"] * 10)
    # the projection held: every iterate within the ball and the bias interval
    assert np.all(np.linalg.norm(W.astype(np.float64), axis=1) <= 2.0 * (1 + 1e-6))
    assert np.all(np.abs(b) <= 0.7 + 1e-6)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_asset_star_is_pegasos_without_averaging_or_intercept(layout):
    """ASSET* (eta_j = 1/(lambda j), projection, no intercept) is Algorithm 2 of Pegasos with
    k = 1: the two kernels must agree."""
    X, codes, sw, order = make_problem(seed=5)
    alpha, R = 0.05, 1.0 / math.sqrt(0.05)
    Xk = kernel_X(X, layout, np.float64)
    W1, b1 = np.zeros((1, X.shape[1])), np.zeros(1)
    hp1 = H.make_hp(alpha=alpha, t=0.0, batch_size=1, loss=0, fit_intercept=False,
                    dtype=np.dtype(np.float64), radius=R, eta0=1.0 / alpha, power=1.0)
    asset_pass(Xk, kernel_codes(codes), _ro(sw), _ro(order), W1, b1,
               np.zeros((1, 0)), np.zeros(1), hp1, np.empty((0, 0, 2)))
    W2, b2 = np.zeros((1, X.shape[1])), np.zeros(1)
    hp2 = H.make_hp(alpha=alpha, t=0.0, batch_size=1, loss=0, fit_intercept=False,
                    dtype=np.dtype(np.float64), radius=R)
    pegasos_pass(Xk, kernel_codes(codes), _ro(sw), _ro(order), W2, b2,
               np.zeros((1, 0)), np.zeros(1), hp2, np.empty((0, 0, 2)))
    np.testing.assert_allclose(W1, W2, rtol=1e-12, atol=1e-14)
    assert np.any(W1 != 0.0)


# As for ASSET: every pair of layout, dtype and kind of target; class codes over CSR rows of
# both dtypes and over dense float64 rows are what the estimator tests fit with an L1 penalty.
FOLOS_SPECS = [("dense", np.float64, False), ("csr", np.float64, False),
               ("csr", np.float32, False), ("dense", np.float32, True), ("csr", np.float64, True)]


@pytest.mark.parametrize("penalty", ["l1", "elasticnet"])
@pytest.mark.parametrize(("layout", "dtype", "regression"), FOLOS_SPECS,
                         ids=lambda v: getattr(v, "__name__", v))
def test_folos_pass_matches_eager_reference(layout, dtype, penalty, regression):
    X, codes, sw, order = _problem(1 if regression else 3, regression, seed=7)
    K = 1 if regression else 3
    d = X.shape[1]
    alpha = 0.4
    l1, l2 = (alpha, 0.0) if penalty == "l1" else (0.5 * alpha, 0.5 * alpha)
    loss = "epsilon_insensitive" if regression else "hinge"
    rng = np.random.default_rng(9)
    W0 = (0.3 * rng.normal(size=(K, d))).astype(dtype)
    b0 = np.zeros(K, dtype=dtype)
    kw = dict(alpha=alpha, l1=l1, l2=l2, t=2.0, batch_size=2, loss=loss, a=0.1,
              fit_intercept=True, eta0=0.5, power=1.0)
    W, b = W0.copy(), b0.copy()
    hp = H.make_hp(alpha=alpha, t=2.0, batch_size=2, loss=LOSS_CODES[loss], fit_intercept=True,
                   dtype=np.dtype(dtype), eta0=0.5, power=1.0, loss_param=0.1, l1=l1, l2=l2,
                   regression=regression)
    # (the scratch starts as garbage: the kernel must not read what it held)
    Xk = kernel_X(X, layout, dtype)
    last, pairs = prox_scratch(Xk, W)
    last[:] = np.nan
    lsum = sgd_prox_pass(Xk, kernel_codes(codes), _ro(sw), _ro(order), W, b, hp, last, pairs)
    Wr, br, tr, lr = folos_pass_ref(np.asarray(X, dtype), codes, sw, order, W0, b0, **kw)
    tol = TOL[dtype]
    np.testing.assert_allclose(W, Wr, **tol)
    np.testing.assert_allclose(b, br, **tol)
    assert hp[H.T] == tr
    assert lsum == pytest.approx(lr, rel=tol["rtol"] * 10)
    # the prox leaves exact zeros, in the same places as the eager reference
    assert np.sum(W == 0.0) > 0
    if dtype == np.float64:
        np.testing.assert_array_equal(W == 0.0, Wr == 0.0)


def test_folos_fold_of_the_scale_keeps_pending_thresholds_exact():
    """A tiny scale_min forces no fold, a large one folds every step: same result."""
    X, codes, sw, order = _problem(1, False, seed=11)
    d = X.shape[1]
    out = []
    for scale_min in (1e-300, 0.999):
        W, b = np.zeros((1, d)), np.zeros(1)
        hp = H.make_hp(alpha=0.05, t=0.0, batch_size=1, loss=0, fit_intercept=False,
                       dtype=np.dtype(np.float64), eta0=0.5, power=1.0, l1=0.02, l2=0.03)
        hp[H.SCALE_MIN] = scale_min
        Xk = kernel_X(X, "csr", np.float64)
        sgd_prox_pass(Xk, kernel_codes(codes), _ro(sw), _ro(order), W, b, hp,
                      *prox_scratch(Xk, W))
        out.append(W)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10, atol=1e-13)
