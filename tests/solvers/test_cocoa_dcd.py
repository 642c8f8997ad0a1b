"""LIBLINEAR's dual coordinate descent kernel (dsvm.kernels.dcd) against a slow NumPy reference
and against LIBLINEAR's optimum (scikit-learn's LinearSVC, dual=True) on a slice of a9a."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data.blocks import block_from_arrays
from dsvm.engine.hooks import epoch_hook
from dsvm.solvers.cocoa import (
    CocoaSolver,
    LocalModel,
    dcd_block,
    duality_gap,
    gap_terms,
    local_order,
    row_costs,
    window_objective,
)
from tests.conftest import load_libsvm


def reference_dcd(X, codes, cost, duals, V, dW, vb, db, order, sigma, loss, bias):
    """Algorithm 3 of papers/002 written out row by row (CoCoA+'s sigma' scaling); returns
    what the steps took off the local subproblem, step by step."""
    X = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
    K = V.shape[0]
    gain = 0.0
    for i in order:
        c = cost[i]
        if c <= 0:
            continue
        dii, upper = (0.0, c) if loss == "hinge" else (0.5 / c, np.inf)
        q = sigma * (X[i] @ X[i] + bias * bias) + dii
        if q == 0.0:  # an empty row, hinge: -G/q = +inf, projected to C
            duals[i] = upper
            continue
        for k in range(K):
            y = (1.0 if codes[i] == 1 else -1.0) if K == 1 else (1.0 if codes[i] == k else -1.0)
            a = duals[i, k]
            G = y * (X[i] @ V[k] + vb[k] * bias) - 1.0 + dii * a
            pg = min(G, 0.0) if a == 0 else (max(G, 0.0) if a >= upper else G)
            if pg == 0.0:
                continue
            new = min(max(a - G / q, 0.0), upper)
            gain -= G * (new - a) + 0.5 * q * (new - a) ** 2
            duals[i, k] = new
            dW[k] += (new - a) * y * X[i]
            V[k] += sigma * (new - a) * y * X[i]
            db[k] += (new - a) * y * bias
            vb[k] += sigma * (new - a) * y * bias
    return gain


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_kernel_matches_reference(loss, sparse, n_classes):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 7)) * (rng.random((120, 7)) < 0.6)
    codes = rng.integers(0, n_classes, size=120).astype(np.int32)
    K = 1 if n_classes == 2 else n_classes
    sw = rng.uniform(0.0, 2.0, size=120)
    sw[:5] = 0.0
    block = block_from_arrays(sp.csr_matrix(X) if sparse else X, codes.astype(float), sw)
    solver = CocoaSolver(loss=loss, alpha=0.05, fit_intercept=True, local_iters=2.5)
    cost = row_costs(block, 120, solver.alpha)
    order = local_order(120, solver.local_iters, np.random.default_rng(3))
    assert len(order) == 300
    w0 = rng.normal(size=(K, 7)) * 0.1
    b0 = rng.normal(size=K) * 0.1
    duals = rng.uniform(0, cost.max(), size=(120, K)) * (cost[:, None] > 0)
    local = LocalModel.start(w0, b0)
    got = duals.copy()
    _, gain = dcd_block(solver, block, codes, cost, got, local, order, sigma=2.0)
    ref = LocalModel.start(w0, b0)
    want = duals.copy()
    want_gain = reference_dcd(X, codes, cost, want, ref.V, ref.dW, ref.vb, ref.db, order, 2.0,
                              loss, 1.0)
    assert gain > 0 and gain == pytest.approx(want_gain, rel=1e-9)
    # and as the local subproblem's objective says from where the pass started and ended:
    # -e^T d + w0.dw + b0 db + sigma / 2 ||(dw, db)||^2 + 1/2 sum D (a'^2 - a^2)
    d = got - duals
    dii = np.zeros_like(cost) if loss == "hinge" else np.where(cost > 0, 0.5 / np.where(
        cost > 0, cost, 1.0), 0.0)
    change = (-d.sum() + np.sum(w0 * local.dW) + b0 @ local.db
              + 1.0 * (np.sum(local.dW ** 2) + local.db @ local.db)
              + 0.5 * (dii[:, None] * (got ** 2 - duals ** 2)).sum())
    assert gain == pytest.approx(-change, rel=1e-9)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(local.dW, ref.dW, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(local.V, ref.V, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(local.db, ref.db, rtol=1e-9, atol=1e-12)
    assert np.all(got[:5] == duals[:5])  # zero-weight rows keep their duals


def test_sigma_one_reaches_liblinear_optimum_on_a9a():
    """sigma' = 1 on one block is LIBLINEAR: 200 passes reach LinearSVC's optimum and close
    the duality gap."""
    from sklearn.svm import LinearSVC

    X, y = load_libsvm("a9a/a9a.xz", 123)
    X, y = X[:2000], y[:2000]
    n = X.shape[0]
    alpha = 1.0 / n
    svc = LinearSVC(loss="hinge", C=1.0, fit_intercept=False, dual=True, tol=1e-8,
                    max_iter=100_000).fit(X, y)
    w = svc.coef_.ravel()
    best = 0.5 * alpha * w @ w + np.maximum(0, 1 - y * (X @ w)).mean()

    block = block_from_arrays(X, y)
    codes = (y > 0).astype(np.int32)
    solver = CocoaSolver(loss="hinge", alpha=alpha, fit_intercept=False, local_iters=200)
    cost = row_costs(block, n, alpha)
    duals = np.zeros((n, 1))
    local = LocalModel.start(np.zeros((1, 123)), np.zeros(1))
    dcd_block(solver, block, codes, cost, duals, local,
              local_order(n, 200, np.random.default_rng(0)), sigma=1.0)
    np.testing.assert_allclose(local.V, local.dW)  # sigma' = 1, from zero: v = dw = w
    terms = gap_terms(solver, block, codes, cost, duals, local.dW, local.db)
    primal, dual = duality_gap(alpha, local.dW, local.db, 0.0, terms)
    assert primal == pytest.approx(best, rel=1e-3)
    assert dual <= best + 1e-9 <= primal + 2e-9  # weak duality
    assert (primal - dual) / primal < 2e-3
    # w = sum alpha_i y_i x_i, the primal-dual relation the combine keeps
    np.testing.assert_allclose(X.T @ (duals[:, 0] * y), local.dW[0], atol=1e-9)
    # so the rows' parts of LIBLINEAR's primal, computed from their margins, add up to it
    halves = [window_objective(solver, block_from_arrays(X[r], y[r]), codes[r], cost[r],
                               duals[r], local.dW, local.db) for r in (slice(0, 700),
                                                                       slice(700, n))]
    assert sum(halves) == pytest.approx(primal / alpha, rel=1e-9)


def test_local_passes_stop_once_they_gain_far_less_than_the_fits_tol_asks():
    """Each window's local passes (50 by default) stop once a pass takes less than
    1e-6 (LOCAL_GAIN_SHARE x tol) of the window's part of the primal objective off its
    subproblem; with tol=None every pass runs. Rows far more than features (1,000,000 x 20:
    7.6 -> 3.4 s in process) re-read duals that no longer move, and the models agree to
    well within tol."""
    from dsvm import SVMClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50_000, 10))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=len(X)) > 0, 1, -1)
    fits = {tol: SVMClassifier(solver="cocoa", random_state=0, max_epochs=2, tol=tol).fit(X, y)
            for tol in (1e-3, None)}
    steps = {tol: [h["dual_steps"] for h in fit.history_] for tol, fit in fits.items()}
    assert steps[1e-3][0] == steps[None][0]  # the first round's passes all gain enough
    assert steps[1e-3][1] < 0.9 * steps[None][1], steps
    objectives = [fit.outcome_.objective for fit in fits.values()]
    assert objectives[0] == pytest.approx(objectives[1], rel=1e-4)


def test_empty_rows_take_their_bound_and_close_the_gap_on_w8a():
    """w8a has all-zero rows (hinge loss 1 whatever w): their duals go to C_i, as in LIBLINEAR,
    or the dual objective stays short of the primal by C_i per empty row (a relative gap of
    0.64 on the whole of w8a)."""
    X, y = load_libsvm("w8a/w8a.xz", 300)
    X, y = X[:3000], y[:3000]
    empty = np.diff(X.indptr) == 0
    assert empty.sum() > 100
    n = X.shape[0]
    alpha = 1.0 / n
    block = block_from_arrays(X, y)
    codes = (y > 0).astype(np.int32)
    solver = CocoaSolver(loss="hinge", alpha=alpha, fit_intercept=False, local_iters=100)
    cost = row_costs(block, n, alpha)
    duals = np.zeros((n, 1))
    local = LocalModel.start(np.zeros((1, 300)), np.zeros(1))
    dcd_block(solver, block, codes, cost, duals, local,
              local_order(n, 100, np.random.default_rng(0)), sigma=1.0)
    np.testing.assert_array_equal(duals[empty, 0], cost[empty])
    terms = gap_terms(solver, block, codes, cost, duals, local.dW, local.db)
    primal, dual = duality_gap(alpha, local.dW, local.db, 0.0, terms)
    assert 0.0 <= (primal - dual) / primal < 5e-3  # 0.2 with the empty rows at 0


def test_a_cocoa_fit_takes_a_streams_chunks_in_one_window_by_default():
    """The local solver solves one window's duals at a time; a stream's windows meet only
    through the next round's model. By default a CoCoA+ fit takes all of a stream's chunks as
    one window (up to 128 MB), which closes the gap several times faster in epochs than
    windows of 2 chunks (a9a, 16 chunks of 1,024 rows, 2 streams)."""
    import dsvm

    X, y = load_libsvm("a9a/a9a.xz", 123)
    X, y = X[:16384], y[:16384]
    gaps = {}
    for window in (None, 2):
        clf = dsvm.SVMClassifier(solver="cocoa", alpha=1.0 / X.shape[0], fit_intercept=False,
                                 max_epochs=4, tol=None, n_streams=2, random_state=0,
                                 chunk_rows=1024, shuffle_window=window).fit(X, y)
        gaps[window] = clf.history_[-1]["relative_gap"]
    assert gaps[None] < 0.01
    assert gaps[2] > 3 * gaps[None]


def test_in_process_duals_stay_in_memory_and_give_the_stored_duals_model(tmp_path, monkeypatch):
    """A fit in this process without a checkpoint keeps CoCoA+'s duals in memory
    (dsvm.data.duals.MemoryDualStore: writing a zarr array per chunk and epoch and deleting
    each version cost more than the dual steps on small chunks); with a checkpoint they are
    stored next to it, for resume. Both give the same model bit for bit, and the first
    writes nothing to the scratch folder."""
    import dsvm

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("DSVM_SCRATCH", str(scratch))
    X, y = load_libsvm("a9a/a9a.xz", 123)
    X, y = X[:4000], y[:4000]
    kw = dict(solver="cocoa", max_epochs=3, tol=None, n_streams=2, random_state=0,
              chunk_rows=500)
    seen = []

    def look(est, state, history, converged):
        seen.append(sorted(p.name for p in scratch.rglob("*")))

    with epoch_hook(look):
        memory = dsvm.SVMClassifier(**kw).fit(X, y)
    assert seen == [[]] * 3, seen  # (on disk it held dsvm-duals-*/v1/... every epoch)
    stored = dsvm.SVMClassifier(checkpoint=tmp_path / "fit.ckpt", **kw).fit(X, y)
    assert (tmp_path / "fit.ckpt.duals").is_dir()
    np.testing.assert_array_equal(memory.coef_, stored.coef_)
    np.testing.assert_array_equal(memory.intercept_, stored.intercept_)
    assert memory.history_[-1]["relative_gap"] == stored.history_[-1]["relative_gap"]
