"""The solver registry and the LocalSolver protocol as the driver uses it."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm.solvers.base import LocalSolver, SolverState
from dsvm.solvers.bsgd import BSGDSolver
from dsvm.solvers.pegasos import PegasosSolver
from dsvm.solvers.registry import SOLVERS, make_solver
from dsvm.solvers.sgd import SGDSolver


def test_registry_contents():
    assert SOLVERS["pegasos"] is PegasosSolver and SOLVERS["sgd"] is SGDSolver
    assert SOLVERS["bsgd"] is BSGDSolver
    for name, cls in SOLVERS.items():
        assert cls.name == name


def test_make_solver_passes_parameters():
    s = make_solver("sgd", alpha=0.5, eta0=0.25, batch_size=4)
    assert s == SGDSolver(alpha=0.5, eta0=0.25, batch_size=4)
    assert make_solver("pegasos") == PegasosSolver()


def test_make_solver_unknown_name():
    with pytest.raises(ValueError, match=r"Got 'dcd'; expected one of \[.*'pegasos', 'sgd'.*\]"):
        make_solver("dcd")


def test_make_solver_bad_parameter():
    with pytest.raises(TypeError, match="eta0"):
        make_solver("pegasos", eta0=1.0)
    with pytest.raises(ValueError, match="'alpha' parameter of PegasosSolver"):
        make_solver("pegasos", alpha=-1.0)


# bsgd: tests/kernels/test_bsgd.py; cocoa (rounds, not per-row passes): tests/distributed
@pytest.mark.parametrize("name", sorted(set(SOLVERS) - {"bsgd", "cocoa"}))
def test_protocol_round_trip(name):
    """init_state -> calibrate -> run_block on a copy, as the driver does it."""
    from dsvm.data.blocks import block_from_arrays

    solver: LocalSolver = make_solver(name, alpha=0.01)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)).astype(np.float32)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    codes = (y > 0).astype(np.int32)
    block = block_from_arrays(X, y)
    state = solver.init_state(3, 1, np.dtype(np.float32))
    state = solver.calibrate(state, block, codes)
    before = state.copy()
    work = state.copy()
    stats = solver.run_block(work, block, codes, rng.permutation(40))
    assert isinstance(work, SolverState) and work.t == 40
    assert np.array_equal(state.coef, before.coef)  # only the copy changed
    assert stats.n_rows == 40 and np.isfinite(stats.loss_sum)
    coef, intercept = work.model()
    if name.startswith("asset"):
        return  # ASSET's robust steps need more than 40 rows: tests/solvers/test_asset.py
    assert np.mean(((X @ coef.T).ravel() + intercept[0] > 0) == (codes == 1)) > 0.9
