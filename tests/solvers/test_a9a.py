"""Objective reached on the real a9a data (UCI Adult, n = 32,561, d = 123) at lambda = 1/n.

LIBLINEAR's optimum of lambda/2 ||w||^2 + mean hinge (C = 1, no bias) is 0.35115. Measured with
this code (20 epochs, batch 1, a fresh permutation per epoch, no intercept):

* averaged SGD: 0.35388 (+0.8%); 0.35254 (+0.4%) after 100 epochs.
* Pegasos (last iterate, as Algorithm 2 returns): 0.404 (+15%); 0.374 (+6%) after 100 epochs.
  lambda n = 1 here, so 20 epochs are only lambda T = 20: Pegasos' last iterate is still
  noisy (its guarantee is for O(1/(lambda eps)) steps); averaging removes that noise.
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


def run_epochs(solver, X, codes, epochs, dtype=np.float64, seed=0):
    block = block_from_arrays(X.astype(dtype), codes)
    state = solver.init_state(X.shape[1], 1, block.dtype)
    state = solver.calibrate(state, block, codes)
    rng = np.random.default_rng(seed)
    history = []
    for _ in range(epochs):
        solver.run_block(state, block, codes, rng.permutation(X.shape[0]))
        history.append(primal_objective(*state.model(), X, codes, "hinge", solver.alpha))
    return state, history


@pytest.fixture(scope="module")
def a9a():
    X, y = load_libsvm("a9a/a9a.xz", n_features=123)
    return X, (y > 0).astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_averaged_sgd_within_2_percent_of_liblinear(a9a, dtype):
    X, codes = a9a
    solver = SGDSolver(alpha=1.0 / X.shape[0], fit_intercept=False)
    state, history = run_epochs(solver, X, codes, 20, dtype)
    assert state.coef.dtype == dtype
    assert LIBLINEAR_OPTIMUM * (1 - 1e-4) <= history[-1] <= 1.02 * LIBLINEAR_OPTIMUM


def test_pegasos_last_iterate_on_a9a(a9a):
    X, codes = a9a
    solver = PegasosSolver(alpha=1.0 / X.shape[0], fit_intercept=False)
    state, history = run_epochs(solver, X, codes, 20)
    assert state.t == 20 * X.shape[0]
    # Not within 2% at lambda T = 20 (see the module docstring); it does make steady progress.
    assert history[-1] <= 1.20 * LIBLINEAR_OPTIMUM
    assert history[-1] < 0.5 * history[0]
