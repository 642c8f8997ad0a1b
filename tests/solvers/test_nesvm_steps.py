"""NESVM's secant step (the default, ``NesvmSettings(step="secant")``) against the doubling step,
and the w8a recipe: Pegasos epochs, then NESVM warm-started from them, within 0.1% of
LIBLINEAR's optimum in 100 data passes in all.

Full a9a/w8a figures (lambda = 1/n, no intercept, 100 passes; % above LIBLINEAR's optimum):
plain NESVM at mu = 0.03, doubling -> secant: a9a 0.088% -> 0.055%, w8a 1.73% -> 0.23%.
w8a cannot get within 0.1% at mu = 0.03 at all: the minimiser of F_0.03 is 0.16% above the
optimum (L-BFGS run to convergence), so the recipe uses mu = 0.005 (0.02% at its minimiser).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from dsvm import SVMClassifier
from dsvm.solvers.nesvm import STALL_PASSES, NesvmProblem, NesvmSettings
from dsvm.solvers.nesvm_run import _Stall, nesvm_minimize
from tests.conftest import liblinear_objective, load_libsvm
from tests.solvers.test_nesvm import oracle_for


def run(X, y, problem, **settings):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nesvm_minimize(oracle_for(X, y, problem), problem, NesvmSettings(**settings),
                              np.zeros((1, X.shape[1])), np.zeros(1))


def test_step_rule_is_validated():
    with pytest.raises(ValueError, match="step must be one of"):
        NesvmSettings(step="bb")


def test_stall_guard_doubles_the_floor_after_passes_without_a_new_lowest_value():
    stall = _Stall()
    stall.observe(np.array([1.0]), 0.01)
    for _ in range(STALL_PASSES - 1):
        stall.observe(np.array([1.5]), 0.01)
    assert stall.floor == 0.0
    stall.observe(np.array([1.5]), 0.01)
    assert stall.floor == 0.02
    stall.observe(np.array([0.5]), 0.001)  # a new lowest value resets the count, keeps the floor
    assert stall.floor == 0.02 and stall.misses == 0


@pytest.mark.realdata
def test_secant_step_goes_down_and_beats_doubling_on_a_w8a_slice():
    """On 8,000 rows of w8a (C-SVM, lambda = 1/n, mu = 0.01, 60 passes) the doubling factor keeps
    growing while the curvature along the iterates stays small; the secant factor follows it
    down, and the objective ends far lower."""
    X, y = load_libsvm("w8a/w8a.xz", 300)
    X, y = X[:8000], y[:8000]
    problem = NesvmProblem("hinge", "l2", 1.0 / X.shape[0], False)
    doubling = run(X, y, problem, mu=0.01, tol=None, max_passes=60, step="doubling")
    secant = run(X, y, problem, mu=0.01, tol=None, max_passes=60)
    factors = [h["lipschitz_factor"] for h in secant.history]
    assert any(b < a for a, b in itertools.pairwise(factors))
    assert max(factors) <= 1.0
    opt = liblinear_objective(X, y, problem.alpha)
    gap_doubling = doubling.history[-1]["objective"] / opt - 1
    gap_secant = secant.history[-1]["objective"] / opt - 1
    assert gap_secant < 0.3 * gap_doubling, (gap_secant, gap_doubling)


@pytest.mark.realdata
def test_w8a_within_0p1_percent_of_liblinear_in_100_passes_from_a_pegasos_warm_start():
    """The acceptance figure for w8a: 30 Pegasos epochs, then 70 NESVM passes from that model
    (``init=``), every data pass counted: at most 100 in all, within 0.1% of LIBLINEAR."""
    X, y = load_libsvm("w8a/w8a.xz", 300)
    alpha = 1.0 / X.shape[0]
    opt = liblinear_objective(X, y, alpha)
    kw = {"alpha": alpha, "fit_intercept": False, "tol": None}
    peg = SVMClassifier(solver="pegasos", max_epochs=30, random_state=0, **kw).fit(X, y)
    assert peg.evaluate(X, y)["objective"] > opt * 1.002  # Pegasos alone is not there (0.43%)
    clf = SVMClassifier(solver="nesvm", mu=0.005, max_epochs=70, **kw).fit(X, y, init=peg)
    assert peg.n_iter_ + clf.n_iter_ <= 100
    obj = clf.evaluate(X, y)["objective"]
    assert obj <= opt * 1.001, (obj, opt, obj / opt - 1)
