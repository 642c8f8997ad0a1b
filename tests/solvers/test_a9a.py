"""Objective reached on the real a9a data (UCI Adult, n = 32,561, d = 123) at lambda = 1/n.

LIBLINEAR's optimum of lambda/2 ||w||^2 + mean hinge (C = 1, no bias) is 0.35115. Measured with
this code (20 epochs, batch 1, a fresh permutation per epoch, no intercept, seed 0):

* averaged SGD: 0.35388 (+0.8%); 0.35254 (+0.4%) after 100 epochs.
* averaged Pegasos (the default, iterates weighted by t^8): 0.3830 (+9.1%) after 10 epochs,
  0.3623 (+3.2%) after 20 (seeds 1, 2: +3.0%, +2.9%); test accuracy on a9a.t after 10 epochs
  84.9%. The t-weighted average (t^1) gets +7.5% after 20 epochs, the uniform one +39%; no
  average of the Pegasos iterates tried gets within 2% in 20 epochs (see
  dsvm.solvers.pegasos, "Averaging"). The driver's Richardson extrapolation of the average
  does (+0.7%): tests/solvers/test_extrapolation.py.
* Pegasos' last iterate (``average=False``, as Algorithm 2 returns): 0.404 (+15%); 0.374 (+6%)
  after 100 epochs; 83.7% test accuracy after 10 epochs (76-84% over seeds). lambda n = 1
  here, so 20 epochs are only lambda T = 20: the last iterate is still noisy.
"""

from __future__ import annotations

import numpy as np
import pytest

from dsvm.data.blocks import block_from_arrays
from dsvm.solvers.objective import primal_objective
from dsvm.solvers.pegasos import PegasosSolver
from dsvm.solvers.sgd import SGDSolver
from tests.conftest import load_libsvm

LIBLINEAR_OPTIMUM = 0.35115

pytestmark = [pytest.mark.slow, pytest.mark.realdata]


def run_epochs(solver, X, codes, epochs, dtype=np.float64, seed=0, on_epoch=None):
    block = block_from_arrays(X.astype(dtype), codes)
    state = solver.init_state(X.shape[1], 1, block.dtype)
    state = solver.calibrate(state, block, codes)
    rng = np.random.default_rng(seed)
    history = []
    for epoch in range(1, epochs + 1):
        solver.run_block(state, block, codes, rng.permutation(X.shape[0]))
        history.append(primal_objective(*state.model(), X, codes, "hinge", solver.alpha))
        if on_epoch is not None:
            on_epoch(epoch, state)
    return state, history


@pytest.fixture(scope="module")
def a9a():
    X, y = load_libsvm("a9a/a9a.xz", n_features=123)
    return X, (y > 0).astype(np.int32)


@pytest.fixture(scope="module")
def a9a_test():
    X, y = load_libsvm("a9a/a9a.t.xz", n_features=123)
    return X, (y > 0).astype(np.int32)


def accuracy(coef, intercept, X, codes):
    scores = X @ np.asarray(coef, np.float64)[0] + float(intercept[0])
    return float(np.mean((scores > 0) == (codes == 1)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_averaged_sgd_within_2_percent_of_liblinear(a9a, dtype):
    X, codes = a9a
    solver = SGDSolver(alpha=1.0 / X.shape[0], fit_intercept=False)
    state, history = run_epochs(solver, X, codes, 20, dtype)
    assert state.coef.dtype == dtype
    assert LIBLINEAR_OPTIMUM * (1 - 1e-4) <= history[-1] <= 1.02 * LIBLINEAR_OPTIMUM


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_averaged_pegasos_on_a9a(a9a, a9a_test, dtype):
    """The solver's own average (no driver, so no extrapolation): test accuracy >= 84.5% after
    10 epochs (84.9%) and the objective at its measured level after 20 epochs (+3.2%; the 2%
    bar is met through the driver: tests/solvers/test_extrapolation.py)."""
    X, codes = a9a
    Xt, ct = a9a_test
    solver = PegasosSolver(alpha=1.0 / X.shape[0], fit_intercept=False)
    assert solver.average
    acc = {}

    def test_accuracy(epoch, state):
        if epoch == 10:
            acc[10] = accuracy(*state.model(), Xt, ct)

    state, history = run_epochs(solver, X, codes, 20, dtype, on_epoch=test_accuracy)
    assert state.t == 20 * X.shape[0]
    assert state.avg_coef.dtype == np.float64 and state.coef.dtype == dtype
    assert acc[10] >= 0.845
    assert LIBLINEAR_OPTIMUM <= history[-1] <= 1.04 * LIBLINEAR_OPTIMUM
    assert history[9] <= 1.12 * LIBLINEAR_OPTIMUM
    assert history[-1] < history[9] < history[4]


def test_pegasos_last_iterate_on_a9a(a9a):
    X, codes = a9a
    solver = PegasosSolver(alpha=1.0 / X.shape[0], fit_intercept=False, average=False)
    state, history = run_epochs(solver, X, codes, 20)
    assert state.t == 20 * X.shape[0] and state.avg_coef is None
    # Not within 2% at lambda T = 20 (see the module docstring); it does make steady progress.
    assert history[-1] <= 1.20 * LIBLINEAR_OPTIMUM
    assert history[-1] < 0.5 * history[0]
