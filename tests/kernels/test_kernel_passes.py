"""Pass kernels against the row-by-row NumPy references in tests/reference.py.

Every kernel call here gets read-only inputs and float64 codes, as the solvers pass them
(dsvm.solvers.objective.kernel_inputs), so the whole module compiles 8 specialisations (2
algorithms x 2 layouts x 2 dtypes), the ones the fits use, which the disk cache keeps. (Pegasos
without an average gets a (K, 0) average array, the same type as with one.)
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.kernels import hparams as H
from dsvm.kernels.losses import LOSS_CODES
from dsvm.kernels.pairs import UNIT, pair_scratch
from dsvm.kernels.passes import pegasos_pass, sgd_pass
from dsvm.kernels.probe import ProbeLoss, probe_loss_sums
from dsvm.kernels.rows import max_row_sqnorm
from dsvm.kernels.rules import pegasos_rule, sgd_rule
from dsvm.kernels.stochastic import PassModel, PassRows, stochastic_steps
from tests.reference import (
    averaged_pegasos_pass_ref,
    pegasos_pass_ref,
    sgd_pass_ref,
    targets_ref,
)

# The body's ``carry`` when nothing is carried: strided (an 'A'-layout array, the type the
# passes hand it), with no slot per output of these problems' K > 1 (and flags off for K = 1).
NO_CARRY = np.zeros((1, 2, 4))[:, :, ::2]

ALPHA = 0.05
ETA0 = 0.3
RADIUS = 1.0 / math.sqrt(ALPHA)


def _ro(a):
    v = np.ascontiguousarray(a).view()
    v.flags.writeable = False
    return v


def kernel_codes(codes):
    """The kernels' view of int class ``codes`` (or float targets): float64 and read-only, as
    kernel_inputs builds them. Int32 codes would compile variants of their own (~9 s each on a
    cold cache) that no fit uses; the references keep the int codes."""
    return _ro(np.asarray(codes, dtype=np.float64))


def strided(a):
    """A copy of 2-D ``a`` as a non-contiguous view (numba's layout 'A')."""
    out = np.empty((*a.shape, 2), a.dtype)[..., 0]
    out[:] = a
    return out


def make_problem(n=60, d=7, n_outputs=1, seed=0):
    """Dense float64 rows, half the entries zero, rows 3 and 7 entirely zero; codes, weights
    and order read-only, as the solvers hand them to the kernels (writable ones would compile
    variants of their own, 5-10 s each on a cold cache)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.5] = 0.0
    X[3] = 0.0
    X[7] = 0.0
    n_classes = 2 if n_outputs == 1 else n_outputs
    codes = rng.integers(0, n_classes, size=n).astype(np.int32)
    sw = rng.uniform(0.5, 2.0, size=n)
    order = rng.permutation(n).astype(np.int64)
    return X, _ro(codes), _ro(sw), _ro(order)


def kernel_X(X, layout, dtype):
    """The kernel's view of dense float64 ``X``: a C array or a CSR triple, in ``dtype``."""
    Xt = np.asarray(X, dtype=dtype)
    if layout == "dense":
        return _ro(Xt)
    csr = sp.csr_matrix(Xt)
    return (
        _ro(csr.indptr.astype(np.int64)),
        _ro(csr.indices.astype(np.int32)),
        _ro(csr.data.astype(dtype)),
    )


def run_pegasos(X, codes, sw, order, W, b, **kw):
    """Call the kernel with read-only inputs, no average; returns (W, b, t, loss)."""
    K = W.shape[0]
    W, b, _, _, t, _, loss = run_avg_pegasos(
        X, codes, sw, order, W, b, np.zeros((K, 0)), np.zeros(K), average=False, **kw
    )
    return W, b, t, loss


def run_avg_pegasos(X, codes, sw, order, W, b, A, ab, **kw):
    """Call the kernel with read-only inputs; returns (W, b, A, ab, t, n_avg, loss)."""
    hp = H.make_hp(
        alpha=kw.get("alpha", ALPHA),
        t=kw.get("t", 0.0),
        batch_size=kw.get("batch_size", 1),
        loss=LOSS_CODES[kw.get("loss", "hinge")],
        fit_intercept=kw.get("fit_intercept", True),
        dtype=W.dtype,
        radius=kw.get("radius", RADIUS),
        bias_bound=kw.get("bias_bound", math.inf),
        intercept_eta_max=kw.get("intercept_eta_max", math.inf),
        average=kw.get("average", True),
        avg_start=kw.get("avg_start", 0.0),
        avg_power=kw.get("avg_power", 1.0),
        n_avg=kw.get("n_avg", 0.0),
    )
    if "scale_min" in kw:
        hp[H.SCALE_MIN] = kw["scale_min"]
    sw_arg = np.empty(0) if sw is None else sw
    loss = pegasos_pass(X, kernel_codes(codes), _ro(sw_arg), _ro(order), W, b, A, ab,
                      hp, pair_scratch(X, W, A, hp[H.AVERAGE] != 0.0))
    return W, b, A, ab, hp[H.T], hp[H.N_AVG], loss


def run_sgd(X, codes, sw, order, W, b, A, ab, **kw):
    """Call the SGD kernel with read-only inputs; returns (W, b, A, ab, t, n_avg, loss)."""
    hp = H.make_hp(
        alpha=kw.get("alpha", ALPHA),
        t=kw.get("t", 0.0),
        batch_size=kw.get("batch_size", 1),
        loss=LOSS_CODES[kw.get("loss", "hinge")],
        fit_intercept=kw.get("fit_intercept", True),
        dtype=W.dtype,
        eta0=kw.get("eta0", ETA0),
        power=kw.get("power", 0.75),
        average=kw.get("average", True),
        avg_start=kw.get("avg_start", 5.0),
        n_avg=kw.get("n_avg", 0.0),
    )
    if "scale_min" in kw:
        hp[H.SCALE_MIN] = kw["scale_min"]
    sw_arg = np.empty(0) if sw is None else sw
    loss = sgd_pass(X, kernel_codes(codes), _ro(sw_arg), _ro(order), W, b, A, ab,
                      hp, pair_scratch(X, W, A, hp[H.AVERAGE] != 0.0))
    return W, b, A, ab, hp[H.T], hp[H.N_AVG], loss


def tolerances(dtype):
    return {"rtol": 1e-11, "atol": 1e-12} if dtype == np.float64 else {"rtol": 2e-5, "atol": 2e-5}


def assert_same_to_rounding(got, want, dtype):
    """Two compiled specialisations of one kernel (writable or read-only inputs, strided or
    paired state, the unit or the general variant) run the same steps in the same order, but
    with fast-math (reassoc, contract) LLVM chooses the summation order and the fused
    multiply-adds per specialisation and per CPU (AVX-512 vectorises otherwise than AVX2): only
    one compiled function is guaranteed the same bits everywhere. So their results agree to
    rounding; counters (t, n_avg) are exact in any order and so compared exactly."""
    for x, y in zip(got, want):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(x, y, **tolerances(dtype))


def zeros_state(K, d, dtype, seed=None):
    if seed is None:
        return np.zeros((K, d), dtype), np.zeros(K, dtype)
    rng = np.random.default_rng(seed)
    return rng.normal(scale=0.3, size=(K, d)).astype(dtype), rng.normal(size=K).astype(dtype)


LAYOUTS = ["dense", "csr"]
DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_pegasos_matches_reference(layout, dtype, n_outputs, batch_size, fit_intercept, weighted):
    X, codes, sw, order = make_problem(n_outputs=n_outputs)
    sw = sw if weighted else None
    W, b = zeros_state(n_outputs, X.shape[1], dtype)
    kw = dict(batch_size=batch_size, fit_intercept=fit_intercept)
    W, b, t, loss = run_pegasos(kernel_X(X, layout, dtype), codes, sw, order, W, b, **kw)
    Xr = np.asarray(X, dtype=dtype)
    Wr, br, tr, lr = pegasos_pass_ref(
        Xr, codes, sw, order, np.zeros((n_outputs, X.shape[1])), np.zeros(n_outputs),
        alpha=ALPHA, t=0.0, loss="hinge", radius=RADIUS, **kw,
    )
    tol = tolerances(dtype)
    assert W.dtype == dtype and b.dtype == dtype
    np.testing.assert_allclose(W, Wr, **tol)
    np.testing.assert_allclose(b, br, **tol)
    assert t == tr == math.ceil(len(order) / batch_size)
    assert loss == pytest.approx(lr, rel=tol["rtol"] * 10)
    if not fit_intercept:
        assert np.all(b == 0)


def avg_ref(X, codes, sw, order, W, b, A, ab, **kw):
    """averaged_pegasos_pass_ref with this module's defaults (kernel keywords accepted)."""
    kw = dict(kw)
    kw.pop("scale_min", None)
    kw.pop("average", None)
    params = dict(alpha=ALPHA, t=0.0, batch_size=1, loss="hinge", fit_intercept=True,
                  radius=RADIUS, avg_start=0.0, avg_power=1.0, n_avg=0.0)
    params.update(kw)
    return averaged_pegasos_pass_ref(X, codes, sw, order, W, b, A, ab, **params)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_averaged_pegasos_matches_reference(
    layout, dtype, n_outputs, batch_size, fit_intercept, weighted
):
    """The t-weighted average (mu_t = 2 / (t + 1)) of the iterates, against explicit sums."""
    X, codes, sw, order = make_problem(n_outputs=n_outputs, seed=12)
    sw = sw if weighted else None
    d = X.shape[1]
    W, b = zeros_state(n_outputs, d, dtype)
    A, ab = np.full((n_outputs, d), 7.0), np.full(n_outputs, 7.0)  # n_avg = 0: overwritten
    kw = dict(batch_size=batch_size, fit_intercept=fit_intercept)
    W, b, A, ab, t, n_avg, loss = run_avg_pegasos(
        kernel_X(X, layout, dtype), codes, sw, order, W, b, A, ab, **kw
    )
    ref = avg_ref(np.asarray(X, dtype=dtype), codes, sw, order, np.zeros((n_outputs, d)),
                  np.zeros(n_outputs), np.zeros((n_outputs, d)), np.zeros(n_outputs), **kw)
    tol = tolerances(dtype)
    assert W.dtype == dtype and A.dtype == np.float64 and ab.dtype == np.float64
    np.testing.assert_allclose(W, ref[0], **tol)
    np.testing.assert_allclose(b, ref[1], **tol)
    np.testing.assert_allclose(A, ref[2], **tol)
    np.testing.assert_allclose(ab, ref[3], **tol)
    n_steps = math.ceil(len(order) / batch_size)
    assert t == ref[4] == n_steps
    assert n_avg == ref[5] == n_steps * (n_steps + 1) / 2  # sum of the weights a_t = t
    assert loss == pytest.approx(ref[6], rel=tol["rtol"] * 10)
    if not fit_intercept:
        assert np.all(ab == 0)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_averaging_leaves_the_iterates_bit_identical(layout, dtype):
    """average on or off: the same w_t, b_t and loss (to rounding: the fused row primitive may
    sum ||u||^2's change in another order under fast-math reassociation)."""
    X, codes, sw, order = make_problem(n_outputs=3, seed=13)
    d = X.shape[1]
    Xk = kernel_X(X, layout, dtype)
    W0, b0 = zeros_state(3, d, dtype, seed=4)
    kw = dict(batch_size=2, t=5.0, radius=2.0)
    on = run_avg_pegasos(Xk, codes, sw, order, W0.copy(), b0.copy(), np.zeros((3, d)),
                         np.zeros(3), **kw)
    off = run_pegasos(Xk, codes, sw, order, W0.copy(), b0.copy(), **kw)
    tol = {"rtol": 1e-13, "atol": 1e-15} if dtype == np.float64 else {"rtol": 1e-6, "atol": 1e-7}
    np.testing.assert_allclose(on[0], off[0], **tol)
    np.testing.assert_allclose(on[1], off[1], **tol)
    assert on[4] == off[2]
    assert on[6] == pytest.approx(off[3], rel=tol["rtol"])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    ("avg_power", "avg_start", "t0", "n_avg0"),
    [(1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0), (0.0, 20.0, 0.0, 0.0), (2.0, 0.0, 0.0, 0.0),
     (8.0, 0.0, 0.0, 0.0), (1.5, 0.0, 0.0, 0.0), (8.0, 2.5, 9.0, 1e7),
     (1.0, 0.0, 9.0, 45.0), (1.0, 15.0, 9.0, 0.0), (0.0, 3.0, 9.0, 6.0)],
)
def test_averaging_weights_and_continuation_match_reference(
    layout, avg_power, avg_start, t0, n_avg0
):
    """Uniform and polynomial weights (integer powers by repeated squaring, 1.5 by pow), a
    start step, and a pass that continues an average (t0 > 0, n_avg0 > 0, non-zero A0, W0)."""
    X, codes, sw, order = make_problem(n_outputs=3, seed=14)
    d = X.shape[1]
    W0, b0 = zeros_state(3, d, np.float64, seed=6)
    A0, ab0 = zeros_state(3, d, np.float64, seed=7)
    kw = dict(batch_size=2, t=t0, n_avg=n_avg0, avg_power=avg_power, avg_start=avg_start)
    got = run_avg_pegasos(kernel_X(X, layout, np.float64), codes, sw, order, W0.copy(),
                          b0.copy(), A0.copy(), ab0.copy(), **kw)
    ref = avg_ref(X, codes, sw, order, W0, b0, A0, ab0, **kw)
    for g, r in zip(got[:4], ref[:4]):
        np.testing.assert_allclose(g, r, rtol=1e-11, atol=1e-12)
    assert got[4] == ref[4] and got[5] == pytest.approx(ref[5], rel=1e-14)


def test_averaged_pegasos_forced_folds_match_reference():
    """scale_min close to 1 folds the weight scale (shrink and projection) and the average's
    beta at every step, so that every flush of the lazy average runs; a small radius
    projects every step."""
    X, codes, sw, order = make_problem(n_outputs=3, seed=15)
    d = X.shape[1]
    for layout in LAYOUTS:
        W, b = zeros_state(3, d, np.float64, seed=1)
        kw = dict(t=2.0, batch_size=3, radius=0.5, bias_bound=0.2, intercept_eta_max=0.5,
                  n_avg=3.0)
        A0, ab0 = zeros_state(3, d, np.float64, seed=8)
        ref = avg_ref(X, codes, sw, order, W, b, A0, ab0, **kw)
        for scale_min in (0.999, 1e-9):
            got = run_avg_pegasos(kernel_X(X, layout, np.float64), codes, sw, order, W.copy(),
                                  b.copy(), A0.copy(), ab0.copy(), scale_min=scale_min, **kw)
            for g, r in zip(got[:4], ref[:4]):
                np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_sgd_matches_reference(layout, dtype, n_outputs, batch_size, fit_intercept, weighted):
    X, codes, sw, order = make_problem(n_outputs=n_outputs, seed=1)
    sw = sw if weighted else None
    d = X.shape[1]
    W, b = zeros_state(n_outputs, d, dtype)
    A, ab = np.zeros((n_outputs, d)), np.zeros(n_outputs)
    kw = dict(batch_size=batch_size, fit_intercept=fit_intercept)
    W, b, A, ab, t, n_avg, loss = run_sgd(
        kernel_X(X, layout, dtype), codes, sw, order, W, b, A, ab, **kw
    )
    ref = sgd_pass_ref(
        np.asarray(X, dtype=dtype), codes, sw, order, np.zeros((n_outputs, d)),
        np.zeros(n_outputs), np.zeros((n_outputs, d)), np.zeros(n_outputs),
        alpha=ALPHA, t=0.0, loss="hinge", eta0=ETA0, power=0.75, average=True, avg_start=5.0,
        **kw,
    )
    tol = tolerances(dtype)
    np.testing.assert_allclose(W, ref[0], **tol)
    np.testing.assert_allclose(b, ref[1], **tol)
    np.testing.assert_allclose(A, ref[2], **tol)
    np.testing.assert_allclose(ab, ref[3], **tol)
    assert (t, n_avg) == (ref[4], ref[5])
    assert n_avg == t - 5
    assert loss == pytest.approx(ref[6], rel=tol["rtol"] * 10)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", sorted(LOSS_CODES))
@pytest.mark.parametrize("algo", ["pegasos", "sgd"])
def test_every_loss_matches_reference(layout, dtype, loss, algo):
    X, codes, sw, order = make_problem(n_outputs=3, seed=2)
    d = X.shape[1]
    tol = tolerances(dtype)
    W0, b0 = zeros_state(3, d, dtype, seed=5)  # start away from zero: exercises t > 0 too
    kw = dict(batch_size=2, loss=loss, t=3.0)
    if algo == "pegasos":
        W, b, _, lsum = run_pegasos(
            kernel_X(X, layout, dtype), codes, sw, order, W0.copy(), b0.copy(), **kw
        )
        Wr, br, _, lr = pegasos_pass_ref(
            np.asarray(X, dtype), codes, sw, order, W0, b0, alpha=ALPHA, fit_intercept=True,
            radius=RADIUS, **kw,
        )
    else:
        A, ab = np.zeros((3, d)), np.zeros(3)
        W, b, *_, lsum = run_sgd(
            kernel_X(X, layout, dtype), codes, sw, order, W0.copy(), b0.copy(), A, ab, **kw
        )
        Wr, br, *_, lr = sgd_pass_ref(
            np.asarray(X, dtype), codes, sw, order, W0, b0, np.zeros((3, d)), np.zeros(3),
            alpha=ALPHA, fit_intercept=True, eta0=ETA0, power=0.75, average=True,
            avg_start=5.0, **kw,
        )
    np.testing.assert_allclose(W, Wr, **tol)
    np.testing.assert_allclose(b, br, **tol)
    assert lsum == pytest.approx(lr, rel=tol["rtol"] * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_equals_csr(dtype):
    X, codes, sw, order = make_problem(n=80, d=9, n_outputs=3, seed=3)
    out = {}
    for layout in LAYOUTS:
        W, b = zeros_state(3, 9, dtype)
        A, ab = np.zeros((3, 9)), np.zeros(3)
        out[layout] = run_sgd(kernel_X(X, layout, dtype), codes, sw, order, W, b, A, ab)
    for got, exp in zip(out["csr"], out["dense"]):
        np.testing.assert_allclose(got, exp, **tolerances(dtype))


def test_forced_rescales_and_projections_match_reference():
    """scale_min close to 1 folds the scale every step; a small radius projects every step;
    a small bias bound clips the intercept, whose step is also capped."""
    X, codes, sw, order = make_problem(n_outputs=3, seed=4)
    d = X.shape[1]
    for layout in LAYOUTS:
        W, b = zeros_state(3, d, np.float64, seed=1)
        Wr, br, *_ = pegasos_pass_ref(
            X, codes, sw, order, W, b, alpha=ALPHA, t=2.0, batch_size=3, loss="hinge",
            fit_intercept=True, radius=0.5, bias_bound=0.2, intercept_eta_max=0.5,
        )
        Wk, bk, *_ = run_pegasos(
            kernel_X(X, layout, np.float64), codes, sw, order, W.copy(), b.copy(), t=2.0,
            batch_size=3, radius=0.5, bias_bound=0.2, intercept_eta_max=0.5, scale_min=0.999,
        )
        np.testing.assert_allclose(Wk, Wr, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(bk, br, rtol=1e-11, atol=1e-12)
        assert np.all(np.abs(bk) <= 0.2)
        assert np.all(np.linalg.norm(Wk, axis=1) <= 0.5 * (1 + 1e-12))

        A, ab = np.zeros((3, d)), np.zeros(3)
        ref = sgd_pass_ref(
            X, codes, sw, order, W, b, A, ab, alpha=ALPHA, t=0.0, batch_size=3, loss="hinge",
            fit_intercept=True, eta0=ETA0, power=0.75, average=True, avg_start=0.0,
        )
        got = run_sgd(
            kernel_X(X, layout, np.float64), codes, sw, order, W.copy(), b.copy(), A.copy(),
            ab.copy(), batch_size=3, avg_start=0.0, scale_min=0.999,
        )
        for g, r in zip(got[:4], ref[:4]):
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


def test_sgd_step_larger_than_one_over_alpha_zeroes_w():
    """eta lambda >= 1 clips the shrink factor at 0: w restarts from the step's gradient."""
    X, codes, sw, order = make_problem(seed=6)
    d = X.shape[1]
    W, b = zeros_state(1, d, np.float64, seed=2)
    A, ab = np.zeros((1, d)), np.zeros(1)
    kw = dict(eta0=50.0, power=0.0, batch_size=2, alpha=0.05, avg_start=0.0)  # eta*alpha = 2.5
    ref = sgd_pass_ref(
        X, codes, None, order, W, b, A, ab, t=0.0, loss="hinge", fit_intercept=True,
        average=True, **kw,
    )
    for layout in LAYOUTS:
        got = run_sgd(
            kernel_X(X, layout, np.float64), codes, None, order, W.copy(), b.copy(),
            A.copy(), ab.copy(), **kw,
        )
        for g, r in zip(got[:4], ref[:4]):
            np.testing.assert_allclose(g, r, rtol=1e-11, atol=1e-11)


def test_pegasos_first_step_erases_the_start():
    """At t = 1, 1 - eta lambda = 0 exactly: w_2 depends only on the first batch."""
    X, codes, _, order = make_problem(seed=7)
    d = X.shape[1]
    outs = []
    for seed in (1, 2):
        W, b = zeros_state(1, d, np.float64, seed=seed)
        W, *_ = run_pegasos(
            kernel_X(X, "csr", np.float64), codes, None, order[:1], W, b,
            fit_intercept=False, radius=math.inf,
        )
        outs.append(W)
    i = order[0]
    y = 1.0 if codes[i] == 1 else -1.0
    margin_starts = [zeros_state(1, d, np.float64, seed=s) for s in (1, 2)]
    for W, (W0, b0) in zip(outs, margin_starts):
        violated = y * (W0[0] @ X[i] + b0[0]) < 1.0
        expected = (y / ALPHA) * X[i] if violated else np.zeros(d)
        np.testing.assert_allclose(W[0], expected, rtol=1e-13)
        assert np.all(np.isfinite(W))


@pytest.mark.parametrize("algo", ["pegasos", "sgd", "avg_pegasos"])
@pytest.mark.parametrize("batch_size", [1, 5])
def test_chained_calls_equal_one_call(algo, batch_size):
    """Two passes over order[:30] and order[30:] == one pass over order (schedule continues)."""
    X, codes, sw, order = make_problem(seed=8)
    d = X.shape[1]
    Xk = kernel_X(X, "csr", np.float64)
    kw = dict(batch_size=batch_size)
    if algo == "pegasos":
        W1, b1, t1, l1 = run_pegasos(Xk, codes, sw, order, *zeros_state(1, d, np.float64), **kw)
        W2, b2, ta, la = run_pegasos(
            Xk, codes, sw, order[:30], *zeros_state(1, d, np.float64), **kw
        )
        W2, b2, t2, lb = run_pegasos(Xk, codes, sw, order[30:], W2, b2, t=ta, **kw)
        np.testing.assert_allclose(W2, W1, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(b2, b1, rtol=1e-13, atol=1e-15)
        assert t2 == t1
        assert la + lb == pytest.approx(l1, rel=1e-13)
    else:
        run = run_sgd if algo == "sgd" else run_avg_pegasos
        z = lambda: (np.zeros((1, d)), np.zeros(1))  # noqa: E731
        one = run(Xk, codes, sw, order, *zeros_state(1, d, np.float64), *z(), **kw)
        first = run(Xk, codes, sw, order[:30], *zeros_state(1, d, np.float64), *z(), **kw)
        W, b, A, ab, t, n_avg, _ = first
        two = run(Xk, codes, sw, order[30:], W, b, A, ab, t=t, n_avg=n_avg, **kw)
        for g, r in zip(two[:4], one[:4]):
            np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
        assert two[4:6] == one[4:6]
        assert first[6] + two[6] == pytest.approx(one[6], rel=1e-13)


@pytest.mark.parametrize("algo", ["pegasos", "sgd"])
def test_same_order_same_bits_and_order_matters(algo):
    X, codes, sw, order = make_problem(n_outputs=3, seed=9)
    d = X.shape[1]

    def go(o):
        W, b = zeros_state(3, d, np.float32)
        if algo == "pegasos":
            return run_pegasos(kernel_X(X, "dense", np.float32), codes, sw, o, W, b)[0]
        A, ab = np.zeros((3, d)), np.zeros(3)
        return run_sgd(kernel_X(X, "dense", np.float32), codes, sw, o, W, b, A, ab)[2]

    a, b = go(order), go(order)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, go(order[::-1].copy()))


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="plain functions with NUMBA_DISABLE_JIT=1")
@pytest.mark.parametrize("solver", ["pegasos", "sgd"])
def test_fits_hand_the_pass_kernels_read_only_rows(solver):
    """A fit on the user's writable arrays (dense and CSR) calls its pass kernel with
    read-only rows, codes, weights and order (dsvm.solvers.objective.kernel_inputs): numba
    compiles a variant per writeable flag, ~9 s each on a cold cache, and the read-only ones
    are those this module compiles. So no specialisation of the kernel in this process has a
    writable one. (It replaces a test that compiled the writable variant on purpose to
    compare it with the read-only one.)"""
    from dsvm import SVMClassifier

    X, codes, sw, _ = make_problem(seed=10)
    y = np.asarray(codes).copy()
    for rows in (np.array(X), sp.csr_matrix(X)):
        SVMClassifier(solver=solver, max_epochs=1, tol=None, random_state=0).fit(
            rows, y, sample_weight=np.array(sw))
    kernel = pegasos_pass if solver == "pegasos" else sgd_pass
    inputs = [t for sig in kernel.signatures for a in sig[:4]
              for t in (a.types if isinstance(a, numba.types.BaseTuple) else [a])]
    assert len(kernel.signatures) >= 2 and inputs
    writable = [t for t in inputs if t.mutable]
    assert not writable, writable


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="plain functions with NUMBA_DISABLE_JIT=1")
@pytest.mark.parametrize("params, kernels", [
    (dict(solver="cocoa"), [("dcd", "dcd_pass", 1)]),
    (dict(solver="nesvm"), [("nesvm", "nesvm_pass", 1)]),
    (dict(solver="bsgd", budget=20), [("bsgd", "bsgd_pass", 1)]),
    (dict(kernel="rff", n_components=16), [("feature_maps", "rff_dense", 1),
                                           ("feature_maps", "rff_csr", 3)]),
    (dict(kernel="nystroem", n_components=16), [("feature_maps", "rbf_dense", 1),
                                                ("feature_maps", "rbf_csr", 3)]),
])
def test_fits_hand_every_kernel_read_only_rows(params, kernels):
    """The other kernels that read a block's rows get them as the pass kernels do, read-only
    (dsvm.data.block_ops.kernel_rows): a fit on the user's writable arrays and one on read-only
    zarr chunks used to compile a variant each (dcd_pass 1.2-1.8 s, rff_dense 3.6-4.5 s on a
    cold cache)."""
    import importlib

    from dsvm import SVMClassifier

    X, codes, sw, _ = make_problem(seed=10)
    y = np.asarray(codes).copy()
    for rows in (np.array(X), sp.csr_matrix(X)):
        SVMClassifier(max_epochs=1, tol=None, random_state=0, **params).fit(rows, y)
    for module, name, n_row_args in kernels:
        kernel = getattr(importlib.import_module(f"dsvm.kernels.{module}"), name)
        rows_types = [t for sig in kernel.signatures for a in sig[:n_row_args]
                      for t in (a.types if isinstance(a, numba.types.BaseTuple) else [a])]
        assert rows_types, name
        writable = [t for t in rows_types if t.mutable]
        assert not writable, (name, writable)


@pytest.mark.parametrize("algo", ["pegasos", "sgd"])
def test_empty_order_and_all_empty_rows(algo):
    d = 4
    X = np.zeros((5, d))
    codes = np.array([0, 1, 0, 1, 1], dtype=np.int32)
    for order in (np.empty(0, np.int64), np.array([4, 0, 2, 2, 1], np.int64)):
        W, b = zeros_state(1, d, np.float64, seed=3)
        W0 = W.copy()
        if algo == "pegasos":
            W, b, t, loss = run_pegasos(kernel_X(X, "csr", np.float64), codes, None, order, W, b,
                                        t=10.0, fit_intercept=False)
            shrink = np.prod([1 - 1 / s for s in range(11, 11 + len(order))])
            np.testing.assert_allclose(W, W0 * shrink, rtol=1e-13)
            assert t == 10 + len(order)
        else:
            A, ab = np.zeros((1, d)), np.zeros(1)
            W, b, A, ab, t, n_avg, loss = run_sgd(
                kernel_X(X, "csr", np.float64), codes, None, order, W, b, A, ab, t=10.0,
                fit_intercept=False, avg_start=0.0,
            )
            assert t == 10 + len(order) and n_avg == len(order)
        assert np.isfinite(loss) and np.all(np.isfinite(W))


def test_max_row_sqnorm():
    X, *_ = make_problem(seed=11)
    expected = float(np.max(np.sum(X * X, axis=1)))
    for layout in LAYOUTS:
        assert max_row_sqnorm(kernel_X(X, layout, np.float64)) == pytest.approx(expected)
    assert max_row_sqnorm(kernel_X(np.zeros((0, 3)), "csr", np.float64)) == 0.0


@pytest.mark.parametrize("average", [False, True])
def test_young_support_folds_match_dense_and_reference(average):
    """From zero weights a CSR pass sweeps only the coordinates its steps touched
    (dsvm.kernels.support) while they are few: with scale_min close to 1 and a small radius
    every step folds and projects, first over the listed support, then (once 60 sparse rows
    have touched more than d / SUPPORT_FRACTION coordinates) densely. Both phases must give
    the dense layout's and the NumPy reference's iterates and averages."""
    rng = np.random.default_rng(21)
    n, d = 60, 400
    X = np.zeros((n, d))
    for i in range(n):
        X[i, rng.choice(d, size=5, replace=False)] = rng.normal(size=5)
    codes = rng.integers(0, 3, size=n).astype(np.int32)
    order = rng.permutation(n).astype(np.int64)
    kw = dict(batch_size=2, radius=0.5, intercept_eta_max=0.5, average=average)
    out = {}
    for layout in LAYOUTS:
        W, b = zeros_state(3, d, np.float64)
        A, ab = np.zeros((3, d if average else 0)), np.zeros(3)
        out[layout] = run_avg_pegasos(kernel_X(X, layout, np.float64), codes, None, order, W, b,
                                      A, ab, scale_min=0.999, **kw)
    for got, exp in zip(out["csr"][:4], out["dense"][:4]):
        np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-12)
    W, b = zeros_state(3, d, np.float64)
    ref = avg_ref(X, codes, None, order, W, b, np.zeros((3, d)), np.zeros(3), **kw)
    n_checked = 4 if average else 2  # without an average, the iterates (the same either way)
    for g, r in zip(out["csr"][:n_checked], ref[:n_checked]):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


# each kernel and each dtype once (every pair compiles two more specialisations, ~11 s on a
# cold cache; the reference tests above check all four numerically)
@pytest.mark.parametrize(("kind", "dtype"), [("pegasos", np.float32), ("sgd", np.float64)])
def test_paired_average_is_the_separate_arrays_to_rounding(kind, dtype):
    """A CSR pass with an average runs on w and its average interleaved (kernels.pairs): the
    same arithmetic in the same dtypes as on the two arrays, so the same values to rounding
    (another specialisation: see assert_same_to_rounding); a scratch of the wrong shape is
    replaced."""
    X, codes, sw, order = make_problem(n=80, d=9, n_outputs=3, seed=4)
    Xk = kernel_X(X, "csr", dtype)
    kernel, rule = (pegasos_pass, pegasos_rule) if kind == "pegasos" else (sgd_pass, sgd_rule)
    hp = H.make_hp(alpha=ALPHA, t=3.0, batch_size=2, loss=0, fit_intercept=True,
                   dtype=np.dtype(dtype), radius=RADIUS, eta0=ETA0, power=0.75, average=True,
                   avg_start=0.0, avg_power=2.0 if kind == "pegasos" else 0.0)
    results = []
    for scratch in ("separate", "given", "own"):
        W, b = zeros_state(3, X.shape[1], dtype, seed=1)
        A, ab = np.full((3, X.shape[1]), 0.25), np.full(3, 0.5)
        h = hp.copy()
        h[H.N_AVG] = 2.0
        if scratch == "separate":
            # strided views, as a pass hands W and A to its steps: its specialisation serves
            Ws, As = strided(W), strided(A)
            loss = stochastic_steps(rule(h),
                              PassRows(Xk, kernel_codes(codes), sw, order),
                              PassModel(Ws, b, As, ab), h, True, False, NO_CARRY)
            W[:], A[:] = Ws, As
        else:
            P = pair_scratch(Xk, W, A, True) if scratch == "given" else np.empty((0, 0, 2))
            loss = kernel(Xk, kernel_codes(codes), sw, order, W, b, A, ab, h, P)
        results.append((loss, W, b, A, ab, h))
    for other in results[1:]:
        assert_same_to_rounding(other, results[0], dtype)
        assert other[-1][H.T] == results[0][-1][H.T]  # the same steps were taken
        assert other[-1][H.N_AVG] == results[0][-1][H.N_AVG]


@pytest.mark.parametrize("kind", ["pegasos", "sgd"])
def test_the_unit_variant_is_the_general_pass_to_rounding(kind):
    """A dense pass with one output and one-row steps runs a variant compiled with both as
    constants (kernels.pairs.run_shape): the same steps in the same order, so the same values
    to rounding (another specialisation: see assert_same_to_rounding), averaged or not; the
    general variant still serves K outputs and mini-batches."""
    X, codes, sw, order = make_problem(n=120, d=7, n_outputs=1, seed=5)
    Xk = kernel_X(X, "dense", np.float32)
    rule = pegasos_rule if kind == "pegasos" else sgd_rule
    for average in (False, True):
        hp = H.make_hp(alpha=ALPHA, t=3.0, batch_size=1, loss=0, fit_intercept=True,
                       dtype=np.dtype(np.float32), radius=RADIUS, eta0=ETA0, power=0.75,
                       average=average, avg_power=1.0)
        results = []
        for unit in (False, UNIT):
            W, b = zeros_state(1, X.shape[1], np.float32, seed=1)
            A, ab = np.full((1, X.shape[1] if average else 0), 0.25), np.full(1, 0.5)
            h = hp.copy()
            h[H.N_AVG] = 2.0 if average else 0.0
            loss = stochastic_steps(rule(h),
                              PassRows(Xk, kernel_codes(codes), sw, order),
                              PassModel(W, b, A, ab), h, True, unit, NO_CARRY)
            results.append((loss, W, b, A, ab, h))
        assert_same_to_rounding(results[1], results[0], np.float32)
        assert results[1][-1][H.T] == results[0][-1][H.T]  # the same steps were taken
        assert results[1][-1][H.N_AVG] == results[0][-1][H.N_AVG]


@pytest.mark.parametrize(("n_outputs", "regression"), [(1, False), (3, False), (1, True)])
def test_the_regression_flag_says_what_float64_codes_mean(n_outputs, regression):
    """The stochastic kernels' float64 codes are class indices (one output: 1 -> +1, else -1;
    K outputs: +1 at output code) or, with the flag, the targets themselves: checked through
    the probe's losses (kernels.probe, the same codes and target helper as the passes) of two
    models, against the targets computed in NumPy."""
    rng = np.random.default_rng(30)
    n, d, n_models = 40, 5, 2
    X = rng.normal(size=(n, d))
    if regression:
        codes = rng.normal(scale=3.0, size=n)
        codes[:4] = [0.0, 1.0, 2.0, -1.0]  # values that class indices could take, too
        Y = codes[:, None]
    else:
        codes = rng.integers(0, max(n_outputs, 2), size=n)
        Y = targets_ref(codes, n_outputs)
    M = rng.normal(size=(n_models * n_outputs, d))
    m = rng.normal(size=n_models * n_outputs)
    sums = np.zeros((2, n_models))
    loss = ProbeLoss(n_outputs, LOSS_CODES["squared"], 0.0, regression)
    weight, count = probe_loss_sums(_ro(X), kernel_codes(codes), _ro(np.empty(0)), n, 1,
                                    M, m, loss, sums)
    assert (weight, count) == (n, n)
    for q in range(n_models):
        P = X @ M[q * n_outputs:(q + 1) * n_outputs].T + m[q * n_outputs:(q + 1) * n_outputs]
        expected = np.sum((Y - P) ** 2)
        assert sums[0, q] == pytest.approx(expected, rel=1e-12)
    # the other reading of the same codes gives other losses
    other = np.zeros((2, n_models))
    probe_loss_sums(_ro(X), kernel_codes(codes), _ro(np.empty(0)), n, 1, M, m,
                    loss._replace(regression=not regression), other)
    assert not np.allclose(other[0], sums[0])
