"""PegasosSolver: reference agreement through the solver (last iterate and average), schedule
and average continuity, the combine of parallel streams, coherence with LIBLINEAR (via
LinearSVC), intercept, regularisation limit, divergence errors, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from dsvm.combine.averaging import ParameterAveraging
from dsvm.data.blocks import CSRBlock, DenseBlock, block_from_arrays
from dsvm.solvers.base import PassStats
from dsvm.solvers.objective import primal_objective
from dsvm.solvers.pegasos import AVERAGE_POWER, AVERAGE_START, PegasosSolver, ball_radius
from tests.reference import averaged_pegasos_pass_ref, pegasos_pass_ref


def linear_problem(n=1000, d=10, seed=0, noise=0.8, offset=0.0, n_classes=2):
    """Gaussian rows, labels from a random linear rule (+ offset) with label noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if n_classes == 2:
        w = rng.normal(size=d)
        y = np.where(X @ w + offset + noise * rng.normal(size=n) > 0, 1.0, -1.0)
        codes = (y > 0).astype(np.int32)
    else:
        Wt = rng.normal(size=(n_classes, d))
        codes = np.argmax(X @ Wt.T + noise * rng.normal(size=(n, n_classes)), axis=1)
        codes = codes.astype(np.int32)
        y = codes.astype(np.float64)
    return X, y, codes


def as_block(X, y, layout, dtype=np.float64, sample_weight=None):
    Xt = np.asarray(X, dtype=dtype)
    return block_from_arrays(sp.csr_matrix(Xt) if layout == "csr" else Xt, y, sample_weight)


def fit_epochs(solver, block, codes, n_outputs=1, epochs=20, seed=1):
    state = solver.init_state(block.n_features, n_outputs, block.dtype)
    state = solver.calibrate(state, block, codes)
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        solver.run_block(state, block, codes, rng.permutation(block.n_samples))
    return state


def liblinear_objective(X, codes, alpha, fit_intercept=False):
    """The optimum of alpha/2 ||w||^2 + mean hinge as LinearSVC (LIBLINEAR) finds it.

    With an intercept, LIBLINEAR regularises b / intercept_scaling; a large scaling makes
    that penalty negligible, so the result is the free-intercept optimum.
    """
    y = np.where(codes == 1, 1, -1)
    svc = LinearSVC(
        loss="hinge", C=1.0 / (alpha * X.shape[0]), fit_intercept=fit_intercept,
        intercept_scaling=30.0, dual=True, tol=1e-6, max_iter=100_000,
    ).fit(X, y)
    return primal_objective(svc.coef_, np.ravel(svc.intercept_), X, codes, "hinge", alpha)


def averaged_ref(X, codes, sw, order, W, b, A, ab, **kw):
    """averaged_pegasos_pass_ref with the solver's averaging weights and intercept cap."""
    return averaged_pegasos_pass_ref(
        X, codes, sw, order, W, b, A, ab, loss="hinge", intercept_eta_max=1.0,
        avg_power=AVERAGE_POWER, avg_start=AVERAGE_START, **kw,
    )


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_run_block_matches_reference(layout, dtype, fit_intercept, average):
    X, y, codes = linear_problem(n=50, d=6, n_classes=3, seed=2)
    X[4] = 0.0
    sw = np.random.default_rng(3).uniform(0.5, 3.0, size=50)
    block = as_block(X, y, layout, dtype, sw)
    solver = PegasosSolver(alpha=0.02, batch_size=3, fit_intercept=fit_intercept,
                           average=average)
    state = solver.init_state(6, 3, dtype)
    order = np.random.default_rng(4).permutation(50)
    stats = solver.run_block(state, block, codes, order)

    radius = math.sqrt(max(1.0, sw.max()) / 0.02)  # Lemma 1, scaled by the largest weight
    # The damped intercept step 1 / (alpha t + 1) is intercept_eta_max = 1.
    Wr, br, Ar, abr, tr, nr, lr = averaged_ref(
        np.asarray(X, dtype), codes, sw, order, np.zeros((3, 6)), np.zeros(3),
        np.zeros((3, 6)) if average else None, np.zeros(3) if average else None,
        alpha=0.02, t=0.0, batch_size=3, fit_intercept=fit_intercept, radius=radius,
    )
    tol = dict(rtol=1e-11, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-5)
    assert state.coef.dtype == dtype and state.intercept.dtype == dtype
    np.testing.assert_allclose(state.coef, Wr, **tol)
    np.testing.assert_allclose(state.intercept, br, **tol)
    assert state.t == tr == 17
    if average:
        assert state.avg_coef.dtype == np.float64 and state.avg_intercept.dtype == np.float64
        np.testing.assert_allclose(state.avg_coef, Ar, **tol)
        np.testing.assert_allclose(state.avg_intercept, abr, **tol)
        assert state.n_avg == pytest.approx(nr, rel=1e-14)
        assert state.model()[0] is state.avg_coef and state.model()[1] is state.avg_intercept
    else:
        assert state.avg_coef is None and state.avg_intercept is None and state.n_avg == 0
        assert state.model()[0] is state.coef
    assert stats.n_rows == 50
    assert stats.weight_sum == pytest.approx(sw.sum())
    assert stats.loss_sum == pytest.approx(lr, rel=10 * tol["rtol"])


def test_average_false_is_algorithm_2():
    """average=False returns the last iterate w_{T+1}, exactly today's pass (no average kept);
    average=True leaves the iterates unchanged and adds the average."""
    X, y, codes = linear_problem(n=80, d=5, seed=9)
    block = as_block(X, y, "csr")
    order = np.random.default_rng(0).permutation(80)
    last = PegasosSolver(alpha=0.05, batch_size=2, average=False)
    avg = PegasosSolver(alpha=0.05, batch_size=2)
    assert avg.average is True  # the default
    s_last, s_avg = last.init_state(5, 1, np.float64), avg.init_state(5, 1, np.float64)
    last.run_block(s_last, block, codes, order)
    avg.run_block(s_avg, block, codes, order)
    Wr, br, tr, _ = pegasos_pass_ref(
        X, codes, None, order, np.zeros((1, 5)), np.zeros(1), alpha=0.05, t=0.0, batch_size=2,
        loss="hinge", fit_intercept=True, radius=ball_radius("hinge", 0.05),
        intercept_eta_max=1.0,
    )
    np.testing.assert_allclose(s_last.coef, Wr, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s_last.intercept, br, rtol=1e-12, atol=1e-14)
    assert s_last.avg_coef is None and s_last.n_avg == 0 and s_last.t == tr
    assert s_last.model() == (s_last.coef, s_last.intercept)
    np.testing.assert_allclose(s_avg.coef, s_last.coef, rtol=1e-13, atol=1e-15)
    assert not np.allclose(s_avg.avg_coef, s_avg.coef)


def test_init_state():
    s = PegasosSolver().init_state(4, 2, np.float32)
    assert s.coef.dtype == np.float32 and s.coef.shape == (2, 4)
    assert s.avg_coef.dtype == np.float64 and s.avg_coef.shape == (2, 4)
    assert s.avg_intercept.dtype == np.float64 and s.avg_intercept.shape == (2,)
    assert s.t == 0 and s.n_avg == 0 and not s.avg_coef.any()
    assert s.model()[0] is s.coef  # nothing averaged yet
    plain = PegasosSolver(average=False).init_state(4, 1, np.float64)
    assert plain.avg_coef is None and plain.avg_intercept is None


def test_positional_parameters_keep_their_order():
    solver = PegasosSolver("logistic", 0.5, False, 4)
    assert (solver.loss, solver.alpha, solver.fit_intercept, solver.batch_size) == (
        "logistic", 0.5, False, 4)
    assert solver.average is True
    assert PegasosSolver("hinge", 0.5, False, 4, False).average is False


def test_averaging_weights():
    """The iterate of step t weighs t ** AVERAGE_POWER: n_avg is their sum."""
    X, y, codes = linear_problem(n=40, d=3, seed=10)
    solver = PegasosSolver(alpha=0.1)
    state = solver.init_state(3, 1, np.float64)
    solver.run_block(state, as_block(X, y, "dense"), codes, np.arange(40))
    steps = np.arange(1, 41, dtype=np.float64)
    assert state.n_avg == pytest.approx(np.sum((steps - AVERAGE_START) ** AVERAGE_POWER))


def test_ball_radius():
    assert ball_radius("hinge", 0.01) == pytest.approx(10.0)
    assert ball_radius("squared_hinge", 0.01) == pytest.approx(math.sqrt(200.0))
    assert ball_radius("logistic", 0.01) == pytest.approx(math.sqrt(200.0 * math.log(2)))
    assert ball_radius("hinge", 0.01, max_weight=4.0) == pytest.approx(20.0)
    assert ball_radius("hinge", 0.01, max_weight=0.5) == pytest.approx(10.0)


@pytest.mark.parametrize("batch_size", [1, 5])
def test_two_blocks_chain_like_one(batch_size):
    """run_block over two blocks in turn == one run over their concatenation (t, n_avg and
    the average continue)."""
    X, y, codes = linear_problem(n=60, d=5, seed=5)
    solver = PegasosSolver(alpha=0.01, batch_size=batch_size)
    o1 = np.random.default_rng(0).permutation(30)
    o2 = np.random.default_rng(1).permutation(30)
    whole = solver.init_state(5, 1, np.float64)
    solver.run_block(whole, as_block(X, y, "csr"), codes, np.concatenate([o1, 30 + o2]))
    chained = solver.init_state(5, 1, np.float64)
    s1 = solver.run_block(chained, as_block(X[:30], y[:30], "csr"), codes[:30], o1)
    s2 = solver.run_block(chained, as_block(X[30:], y[30:], "dense"), codes[30:], o2)
    np.testing.assert_allclose(chained.coef, whole.coef, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(chained.intercept, whole.intercept, rtol=1e-12, atol=1e-14)
    assert chained.t == whole.t == 60 / batch_size
    # the average continues too: same weights, same running average
    np.testing.assert_allclose(chained.avg_coef, whole.avg_coef, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(chained.avg_intercept, whole.avg_intercept, rtol=1e-12,
                               atol=1e-14)
    assert chained.n_avg == pytest.approx(whole.n_avg, rel=1e-14)
    assert isinstance(s1 + s2, PassStats) and (s1 + s2).n_rows == 60


@pytest.mark.parametrize("split", [60, 70])
def test_parallel_streams_combine_into_one_average(split):
    """Two streams start from one broadcast state (t0, n0, abar0) and are combined by
    ParameterAveraging, which pools their steps and running averages. Each stream's average
    is (n0 abar0 + its own sum of a_t w_t) / n_j with n_j = n0 + its own sum of a_t, so the
    pooled average is the weighted average of the iterates of both streams, whatever their
    lengths, and the next pass continues from the combined last iterate, not the average."""
    X, y, codes = linear_problem(n=120, d=5, seed=11)
    block = as_block(X, y, "csr")
    solver = PegasosSolver(alpha=0.02, batch_size=2)
    rng = np.random.default_rng(0)
    state = solver.init_state(5, 1, np.float64)
    solver.run_block(state, block, codes, rng.permutation(120))  # an average to continue
    t0, n0, A0, ab0 = state.t, state.n_avg, state.avg_coef.copy(), state.avg_intercept.copy()
    assert n0 > 0 and A0.any()
    common = dict(alpha=0.02, batch_size=2, fit_intercept=True,
                  radius=ball_radius("hinge", 0.02))
    order = rng.permutation(120)
    combiner = ParameterAveraging()
    partials, refs = [], []
    for part in (order[:split], order[split:]):
        stream = state.copy()
        stats = solver.run_block(stream, block, codes, part)
        partials.append(combiner.chunk(stream, stats))
        refs.append(averaged_ref(X, codes, None, part, state.coef, state.intercept, A0, ab0,
                                 t=t0, n_avg=n0, **common))
    combined, stats = combiner.finalize(combiner.combine(partials), state)
    assert stats.n_rows == 120
    # each stream's own weighted sum of iterates and of weights, on top of the shared start
    sums = [r[5] * r[2] - n0 * A0 for r in refs]
    b_sums = [r[5] * r[3] - n0 * ab0 for r in refs]
    weights = [r[5] - n0 for r in refs]
    n_all = n0 + sum(weights)
    np.testing.assert_allclose(combined.avg_coef, (n0 * A0 + sum(sums)) / n_all,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(combined.avg_intercept, (n0 * ab0 + sum(b_sums)) / n_all,
                               rtol=1e-10, atol=1e-12)
    assert combined.n_avg == pytest.approx(n_all, rel=1e-12)
    assert combined.t == t0 + 60  # the streams' steps are pooled: 120 rows / batch 2
    w = np.array([split, 120 - split]) / 120
    np.testing.assert_allclose(combined.coef, w[0] * refs[0][0] + w[1] * refs[1][0], rtol=1e-11)
    assert combined.model()[0] is combined.avg_coef

    nxt = combined.copy()
    order2 = rng.permutation(120)
    solver.run_block(nxt, block, codes, order2)
    ref = averaged_ref(X, codes, None, order2, combined.coef, combined.intercept,
                       combined.avg_coef, combined.avg_intercept, t=combined.t,
                       n_avg=combined.n_avg, **common)
    np.testing.assert_allclose(nxt.coef, ref[0], rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(nxt.avg_coef, ref[2], rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(nxt.avg_intercept, ref[3], rtol=1e-11, atol=1e-13)


def test_same_order_same_state_and_different_order_differs():
    X, y, codes = linear_problem(n=200, d=5, seed=6)
    block = as_block(X, y, "dense", np.float32)
    solver = PegasosSolver(alpha=0.01)
    order = np.random.default_rng(0).permutation(200)
    a, b, c = (solver.init_state(5, 1, np.float32) for _ in range(3))
    solver.run_block(a, block, codes, order)
    solver.run_block(b, block, codes, order.copy())
    solver.run_block(c, block, codes, order[::-1].copy())
    assert np.array_equal(a.coef, b.coef) and np.array_equal(a.intercept, b.intercept)
    assert not np.array_equal(a.coef, c.coef)


def test_calibrate_is_a_no_op():
    X, y, codes = linear_problem(n=20, d=3)
    solver = PegasosSolver()
    state = solver.init_state(3, 1, np.float64)
    assert solver.calibrate(state, as_block(X, y, "dense"), codes) is state


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("batch_size", [1, 8])
@pytest.mark.parametrize("average", [True, False])
def test_objective_close_to_liblinear(layout, batch_size, average):
    """20 epochs reach within 2% of LIBLINEAR's optimum (measured, batch 1: +0.03% averaged,
    +0.24% last iterate; batch 8: +0.04% and +0.29%)."""
    alpha = 1e-2
    X, y, codes = linear_problem()
    optimum = liblinear_objective(X, codes, alpha)
    solver = PegasosSolver(alpha=alpha, fit_intercept=False, batch_size=batch_size,
                           average=average)
    state = fit_epochs(solver, as_block(X, y, layout), codes)
    obj = primal_objective(*state.model(), X, codes, "hinge", alpha)
    assert optimum <= obj * (1 + 1e-9)
    assert obj <= 1.02 * optimum


def test_float32_objective_close_to_float64():
    alpha = 1e-2
    X, y, codes = linear_problem()
    solver = PegasosSolver(alpha=alpha, fit_intercept=False)
    s64 = fit_epochs(solver, as_block(X, y, "dense", np.float64), codes)
    s32 = fit_epochs(solver, as_block(X, y, "dense", np.float32), codes)
    assert s32.coef.dtype == np.float32
    assert s32.avg_coef.dtype == np.float64
    o64 = primal_objective(*s64.model(), X, codes, "hinge", alpha)
    o32 = primal_objective(*s32.model(), X, codes, "hinge", alpha)
    assert o32 == pytest.approx(o64, rel=1e-3)


def test_intercept_helps_on_data_with_an_offset():
    """Labels with an offset: the free intercept gets close to LIBLINEAR's optimum with one,
    while no intercept cannot get below the no-intercept optimum."""
    alpha = 1e-2
    X, y, codes = linear_problem(offset=-1.5, seed=7)
    with_b = liblinear_objective(X, codes, alpha, fit_intercept=True)
    without_b = liblinear_objective(X, codes, alpha, fit_intercept=False)
    assert with_b < 0.8 * without_b  # the data really needs an intercept
    state = fit_epochs(PegasosSolver(alpha=alpha, fit_intercept=True), as_block(X, y, "csr"), codes)
    coef, intercept = state.model()
    obj = primal_objective(coef, intercept, X, codes, "hinge", alpha)
    assert obj <= 1.03 * with_b
    assert intercept[0] < -0.5 and state.intercept[0] < -0.5


def test_multiclass_one_vs_rest():
    X, y, codes = linear_problem(n=900, d=6, n_classes=3, noise=0.3, seed=8)
    block = as_block(X, y, "dense")
    state = fit_epochs(PegasosSolver(alpha=1e-3, batch_size=4), block, codes, n_outputs=3)
    assert state.coef.shape == (3, 6) and state.intercept.shape == (3,)
    assert state.avg_coef.shape == (3, 6) and state.avg_intercept.shape == (3,)
    for coef, intercept in (state.model(), (state.coef, state.intercept)):
        pred = np.argmax(X @ coef.T + intercept, axis=1)
        assert np.mean(pred == codes) > 0.85


def test_large_alpha_drives_weights_to_zero_without_fp_warnings():
    X, y, codes = linear_problem(n=300, d=5)
    with np.errstate(all="raise"):
        for layout in ("dense", "csr"):
            state = fit_epochs(PegasosSolver(alpha=1e4), as_block(X, y, layout), codes, epochs=3)
            assert np.linalg.norm(state.coef) < 1e-2
            assert np.linalg.norm(state.avg_coef) < 1e-2
            assert np.all(np.isfinite(state.intercept)) and np.all(np.isfinite(state.avg_intercept))


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_raises_actionable_error(layout, bad):
    X, y, codes = linear_problem(n=40, d=3)
    X[5, 1] = bad  # the projection keeps w bounded, so only bad data can make it non-finite
    solver = PegasosSolver(alpha=1e-4)
    state = solver.init_state(3, 1, np.float64)
    with pytest.raises(FloatingPointError, match=r"non-finite weights after pass over .*"
                       r"scale the features .* or increase alpha"):
        solver.run_block(state, as_block(X, y, layout), codes, np.arange(40))


def test_empty_order_is_a_no_op():
    X, y, codes = linear_problem(n=10, d=3)
    solver = PegasosSolver()
    state = solver.init_state(3, 1, np.float64)
    stats = solver.run_block(state, as_block(X, y, "dense"), codes, np.empty(0, np.int64))
    assert stats == PassStats() and state.t == 0 and not state.coef.any()


def test_read_only_block_and_non_contiguous_input():
    X, y, codes = linear_problem(n=30, d=4)
    Xf = np.asfortranarray(X)
    Xf.flags.writeable = False
    codes_ro = codes.copy()
    codes_ro.flags.writeable = False
    solver = PegasosSolver(alpha=0.05)
    a = solver.init_state(4, 1, np.float64)
    b = solver.init_state(4, 1, np.float64)
    order = np.arange(30, dtype=np.int32)  # any integer dtype
    solver.run_block(a, DenseBlock(X=Xf, y=y), codes_ro, order)
    solver.run_block(b, DenseBlock(X=np.ascontiguousarray(X), y=y), codes, order)
    assert np.array_equal(a.coef, b.coef)
    assert not Xf.flags.writeable  # the caller's data untouched


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"loss": "huber"}, r"'loss' parameter of PegasosSolver must be a str among"),
        ({"alpha": 0.0}, r"'alpha' parameter of PegasosSolver must be a float in the range "
                         r"\(0.0, inf\). Got 0.0 instead"),
        ({"alpha": float("nan")}, "'alpha' parameter"),
        ({"batch_size": 0}, r"'batch_size' parameter of PegasosSolver must be an int in the "
                            r"range \[1, inf\). Got 0 instead"),
        ({"batch_size": 2.0}, "'batch_size' parameter"),
        ({"fit_intercept": "yes"}, "'fit_intercept' parameter"),
        ({"average": 1}, r"'average' parameter of PegasosSolver must be an instance of bool. "
                         r"Got 1 instead"),
    ],
)
def test_invalid_hyper_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        PegasosSolver(**params)


def test_mismatched_inputs_raise_precise_errors():
    X, y, codes = linear_problem(n=10, d=3)
    solver = PegasosSolver()
    block = as_block(X, y, "dense")
    with pytest.raises(TypeError, match="state's weights are float32 but the block is float64"):
        solver.run_block(solver.init_state(3, 1, np.float32), block, codes, np.arange(10))
    with pytest.raises(ValueError, match="the block has 3 features but the state has 4"):
        solver.run_block(solver.init_state(4, 1, np.float64), block, codes, np.arange(10))
    state = solver.init_state(3, 1, np.float64)
    with pytest.raises(ValueError, match=r"order holds row indices in \[0, 10\] but the block "
                                         r"has 10 rows"):
        solver.run_block(state, block, codes, np.arange(11))
    with pytest.raises(ValueError, match=r"codes has shape \(9,\); expected \(10,\)"):
        solver.run_block(state, block, codes[:9], np.arange(10))
    with pytest.raises(ValueError, match="order must be a 1-D integer array"):
        solver.run_block(state, block, codes, np.arange(10.0))
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        solver.init_state(3, 1, np.int64)


def test_csr_block_with_empty_rows():
    X, y, codes = linear_problem(n=40, d=5)
    X[::3] = 0.0
    csr = sp.csr_matrix(X)
    block = CSRBlock(indptr=csr.indptr.astype(np.int64), indices=csr.indices.astype(np.int32),
                     data=csr.data, y=y, n_features=5)
    dense = as_block(X, y, "dense")
    solver = PegasosSolver(alpha=0.01)
    a, b = solver.init_state(5, 1, np.float64), solver.init_state(5, 1, np.float64)
    order = np.random.default_rng(0).permutation(40)
    solver.run_block(a, block, codes, order)
    solver.run_block(b, dense, codes, order)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.intercept, b.intercept, rtol=1e-12, atol=1e-14)
