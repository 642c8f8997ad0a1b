"""NESVM (dsvm.solvers.nesvm): closed forms, the paper's rate bound, homotopy, LP-SVM, a9a."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from dsvm import SVMClassifier
from dsvm.data.blocks import block_from_arrays
from dsvm.solvers.base import encode_labels
from dsvm.solvers.nesvm import (
    NesvmProblem,
    NesvmSettings,
    Points,
    block_share,
    read_pass,
)
from dsvm.solvers.nesvm_run import nesvm_minimize
from tests.conftest import liblinear_objective, load_libsvm

PAPER = {"precondition": False, "lipschitz_start": 1.0,  # Algorithms 1-2 exactly: step 1/L_mu,
         "continuation": False,  # each homotopy stage restarts Eq. 33-35,
         "step": "doubling"}  # and the step stays at the bound


def oracle_for(X, y, problem):
    """An in-process oracle over one block (the distributed one is tested elsewhere)."""
    block = block_from_arrays(X, y)
    classes = np.unique(y).astype(np.float64)
    codes = encode_labels(block.y, classes, where="test")

    def oracle(points, mu):
        return block_share(block, codes, points, problem.loss, mu, problem.fit_intercept)

    return oracle


def smoothed_objective(X, y, problem, mu):
    """F_mu(w, b) and its gradient as plain functions (through read_pass), for scipy."""
    oracle = oracle_for(X, y, problem)
    d = X.shape[1]

    def f(theta):
        w, b = theta[:d][None, :], theta[d:] if problem.fit_intercept else np.zeros(1)
        pts = Points(np.ascontiguousarray(w), np.asarray(b, dtype=np.float64), 1)
        res = read_pass(oracle(pts, mu), pts, problem, mu)
        grad = res.grad.ravel() if not problem.fit_intercept else np.append(res.grad, res.grad_b)
        return float(res.smoothed[0, 0]), grad

    return f


def run(X, y, problem, **settings):
    d = X.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nesvm_minimize(oracle_for(X, y, problem), problem, NesvmSettings(**settings),
                              np.zeros((1, d)), np.zeros(1))


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6))
    y = np.where(X @ rng.normal(size=6) + 0.4 + 0.8 * rng.normal(size=300) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_gradient_matches_finite_differences(small, fit_intercept):
    X, y = small
    problem = NesvmProblem("hinge", "l2", 0.01, fit_intercept)
    f = smoothed_objective(X, y, problem, 0.5)
    theta = np.random.default_rng(0).normal(scale=0.3, size=X.shape[1] + fit_intercept)
    _, g = f(theta)
    eps = 1e-6
    num = np.array([(f(theta + eps * e)[0] - f(theta - eps * e)[0]) / (2 * eps)
                    for e in np.eye(len(theta))])
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("precondition", [False, True])
def test_ls_svm_equals_closed_form(small, fit_intercept, precondition):
    """LS-SVM: alpha/2 ||w||^2 + mean (1 - y(x.w + b))^2 has the normal equations
    (alpha I' + 2/n A^T A) theta = 2/n A^T y with A = [X, 1] and I' without the bias entry."""
    X, y = small
    alpha = 0.05
    n, d = X.shape
    A = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    reg = np.eye(A.shape[1]) * alpha
    if fit_intercept:
        reg[-1, -1] = 0.0
    theta = np.linalg.solve(reg + 2.0 / n * A.T @ A, 2.0 / n * A.T @ y)
    w = theta[:d]
    best = 0.5 * alpha * w @ w + np.mean((1 - y * (A @ theta)) ** 2)
    problem = NesvmProblem("squared", "l2", alpha, fit_intercept)
    result = run(X, y, problem, mu=1.0, tol=None, max_passes=600, precondition=precondition,
                 lipschitz_start=1.0, step="doubling")
    assert result.history[-1]["objective"] == pytest.approx(best, rel=1e-6)
    assert result.history[-1]["objective"] >= best * (1 - 1e-12)


def test_rate_bound_of_theorem_4_at_fixed_mu(small):
    """Eq. 43: F_mu(y^k) - F_mu* <= 4 L_mu d2(w*) / ((k+1)(k+2)) with the paper's steps."""
    X, y = small
    mu = 0.2
    problem = NesvmProblem("hinge", "l2", 1e-3, False)
    f = smoothed_objective(X, y, problem, mu)
    opt = minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                   options={"maxiter": 10_000, "gtol": 1e-12, "ftol": 1e-15})
    f_star = opt.fun
    d2 = 0.5 * float(opt.x @ opt.x)  # prox centre w* (the paper's guess) = w^0 = 0
    result = run(X, y, problem, mu=mu, tol=None, max_passes=200, **PAPER)
    L = result.history[0]["lipschitz_factor"] * _paper_L(X, problem, mu)
    # history[k]["smoothed_objective_y"] is F_mu(y^(k-1))
    for k, rec in enumerate(result.history[1:]):
        gap = rec["smoothed_objective_y"] - f_star
        assert gap >= -1e-9
        assert gap <= 4 * L * d2 / ((k + 1) * (k + 2)) + 1e-12
    assert result.history[-1]["smoothed_objective_y"] - f_star < 1e-3 * abs(f_star)


def _paper_L(X, problem, mu):
    a = np.abs(X).max(axis=1)
    sq = (X * X).sum(axis=1)
    return problem.alpha + np.mean(np.where(a > 0, sq / np.maximum(a, 1e-300), 0.0)) / mu


def test_homotopy_schedule():
    assert NesvmSettings(mu=0.1, mu0=1.0).schedule() == pytest.approx(
        [1.0, 0.5, 1 / 3, 0.25, 0.2, 1 / 6, 1 / 7, 1 / 8, 1 / 9, 0.1])
    assert NesvmSettings(mu=0.1).schedule() == [0.1]
    assert NesvmSettings(mu=0.1, mu0=0.05).schedule() == [0.1]


def test_homotopy_needs_fewer_passes_than_plain_nesvm(small):
    """Algorithm 2 vs Algorithm 1 at a small final mu, the paper's steps: homotopy reaches the
    objective plain NESVM has after its whole budget in fewer passes."""
    X, y = small
    problem = NesvmProblem("hinge", "l2", 1e-3, False)
    plain = run(X, y, problem, mu=0.01, tol=None, max_passes=150, **PAPER)
    target = plain.history[-1]["objective"]
    homo = run(X, y, problem, mu=0.01, mu0=1.0, tol=1e-4, max_passes=150, **PAPER)
    reached = [h["epoch"] for h in homo.history if h["objective"] <= target]
    assert reached and reached[0] < 150
    assert len({h["stage"] for h in homo.history}) > 1


def test_bias_is_not_penalised():
    """All labels +1 bar a few: the unpenalised bias carries the constant, w stays small."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(rng.random(200) < 0.9, 1.0, -1.0)
    clf = SVMClassifier(solver="nesvm", loss="squared", alpha=10.0, max_epochs=300, tol=None)
    clf.fit(X, y)
    # LS-SVM with a huge alpha: w -> 0 and b -> the minimiser of mean (1 - y b)^2 = mean(y)
    assert np.abs(clf.coef_).max() < 0.02
    assert clf.intercept_[0] == pytest.approx(y.mean(), abs=0.01)


def test_estimator_basics(small):
    X, y = small
    clf = SVMClassifier(solver="nesvm", alpha=1e-3, max_epochs=40, tol=None).fit(X, y)
    assert clf.n_iter_ == 40 and len(clf.history_) == 40
    assert clf.score(X, y) > 0.8
    objs = [h["objective"] for h in clf.history_]
    assert all(b <= a for a, b in itertools.pairwise(objs))  # best-so-far model
    # history's objective is the exact objective of the returned model
    assert clf.evaluate(X, y)["objective"] == pytest.approx(objs[-1], rel=1e-6)
    for h in clf.history_:
        assert h["smoothed_objective"] <= h["iterate_objective"] + 1e-12  # Theorem 1
    with pytest.raises(ValueError, match="full-gradient"):
        clf.partial_fit(X, y)
    with pytest.raises(ValueError, match="penalty"):
        SVMClassifier(solver="nesvm", penalty="elasticnet").fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        SVMClassifier(solver="nesvm", loss="logistic").fit(X, y)
    with pytest.raises(ValueError, match="'mu' parameter"):
        SVMClassifier(solver="nesvm", mu=0.0).fit(X, y)
    with pytest.raises(ValueError, match="init= needs solver='nesvm'"):
        SVMClassifier(solver="sgd").fit(X, y, init=clf)


def test_multiclass_one_vs_rest(small):
    X, _ = small
    rng = np.random.default_rng(1)
    centres = rng.normal(scale=3, size=(3, X.shape[1]))
    labels = rng.integers(0, 3, size=len(X))
    Xc = X + centres[labels]
    clf = SVMClassifier(solver="nesvm", alpha=1e-3, max_epochs=60, tol=None).fit(Xc, labels)
    assert clf.coef_.shape == (3, X.shape[1])
    assert clf.score(Xc, labels) > 0.9


def test_warm_start_from_sgd_and_init(small):
    X, y = small
    sgd = SVMClassifier(solver="sgd", alpha=1e-3, max_epochs=5, tol=None, random_state=0)
    sgd.fit(X, y)
    start = sgd.evaluate(X, y)["objective"]
    clf = SVMClassifier(solver="nesvm", alpha=1e-3, max_epochs=5, tol=None)
    clf.fit(X, y, init=sgd)
    assert clf.history_[0]["iterate_objective"] == pytest.approx(start, rel=1e-9)
    assert clf.history_[-1]["objective"] <= start
    sgd.set_params(solver="nesvm", warm_start=True, max_epochs=5)
    sgd.fit(X, y)
    assert sgd.history_[0]["iterate_objective"] == pytest.approx(start, rel=1e-9)
    with pytest.raises(ValueError, match="shape"):
        SVMClassifier(solver="nesvm").fit(X[:, :3], y, init=clf)


def test_sparse_and_dense_agree(small):
    X, y = small
    kw = {"solver": "nesvm", "alpha": 1e-3, "max_epochs": 20, "tol": None}
    a = SVMClassifier(**kw).fit(X, y)
    b = SVMClassifier(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)


def test_lp_svm_is_sparse_at_comparable_accuracy():
    """LP-SVM (smoothed L1 + smoothed hinge) vs LinearSVC(penalty='l1', squared hinge) on a
    problem with 5 informative features among 40."""
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(7)
    n, d = 2000, 40
    X = rng.normal(size=(n, d))
    w = np.zeros(d)
    w[:5] = rng.normal(scale=2, size=5)
    y = np.where(X @ w + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    alpha = 0.05
    clf = SVMClassifier(solver="nesvm", penalty="l1", alpha=alpha, mu=0.001, max_epochs=300,
                        tol=None).fit(X, y)
    svc = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=1.0 / (alpha * n)).fit(X, y)
    coef = clf.coef_.ravel()
    # the Huber smoothing leaves the dropped weights inside |w| < mu, not at exact zero
    small_share = np.mean(np.abs(coef) < clf.mu)
    assert small_share >= np.mean(svc.coef_ == 0) >= 0.8  # LinearSVC: 85% exact zeros
    assert np.all(np.abs(coef[:5]) > 10 * clf.mu)
    assert clf.score(X, y) >= svc.score(X, y) - 0.02  # hinge vs squared hinge: 95.6% vs 96.7%


@pytest.mark.realdata
def test_a9a_within_0p1_percent_of_liblinear_in_100_passes():
    X, y = load_libsvm("a9a/a9a.xz", 123)
    alpha = 1.0 / X.shape[0]
    opt = liblinear_objective(X, y, alpha)
    clf = SVMClassifier(solver="nesvm", alpha=alpha, mu=0.03, fit_intercept=False,
                        max_epochs=100, tol=None).fit(X, y)
    obj = clf.evaluate(X, y)["objective"]
    assert clf.n_iter_ == 100
    assert obj <= opt * 1.001, (obj, opt, obj / opt - 1)


def test_adaptive_step_recovers_from_a_far_too_long_first_step(small):
    """The descent test doubles the step's L factor (never past the bound) and restarts after
    an uphill step, so even a first step 2^20 times too long ends near the optimum."""
    X, y = small
    mu = 0.2
    problem = NesvmProblem("hinge", "l2", 1e-3, True)
    f = smoothed_objective(X, y, problem, mu)
    f_star = minimize(f, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                      options={"maxiter": 10_000, "gtol": 1e-12, "ftol": 1e-15}).fun
    result = run(X, y, problem, mu=mu, tol=None, max_passes=300, lipschitz_start=2.0 ** -20,
                 step="doubling")
    factors = [h["lipschitz_factor"] for h in result.history]
    assert all(b >= a for a, b in itertools.pairwise(factors)) and factors[-1] <= 1.0
    assert any(h["restart"] for h in result.history)
    best = min(h["smoothed_objective"] for h in result.history)
    assert best - f_star < 1e-4 * abs(f_star)
