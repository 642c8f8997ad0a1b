"""Block evaluation helpers against direct NumPy computations."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data.blocks import block_from_arrays
from dsvm.solvers.objective import (
    accuracy_counts,
    decision_block,
    loss_block,
    ovr_targets,
    primal_objective,
)
from tests.reference import loss_ref, primal_objective_ref, targets_ref


def problem(n_outputs, layout, dtype=np.float64, weighted=False, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 5))
    X[rng.random(X.shape) < 0.4] = 0.0
    n_classes = 2 if n_outputs == 1 else n_outputs
    codes = rng.integers(0, n_classes, size=30).astype(np.int32)
    sw = rng.uniform(0.1, 2.0, size=30) if weighted else None
    Xt = X.astype(dtype)
    block = block_from_arrays(sp.csr_matrix(Xt) if layout == "csr" else Xt, codes, sw)
    coef = rng.normal(size=(n_outputs, 5)).astype(dtype)
    intercept = rng.normal(size=n_outputs).astype(dtype)
    return Xt.astype(np.float64), codes, sw, block, coef, intercept


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_decision_and_loss_block(layout, n_outputs, dtype):
    X, codes, sw, block, coef, b = problem(n_outputs, layout, dtype, weighted=True)
    P = decision_block(coef, b, block)
    assert P.dtype == np.float64 and P.shape == (30, n_outputs)
    expected = X @ coef.astype(np.float64).T + b.astype(np.float64)
    np.testing.assert_allclose(P, expected, rtol=1e-12, atol=1e-12)
    for loss in ("hinge", "squared_hinge", "logistic"):
        total, wsum = loss_block(coef, b, block, codes, loss)
        per_row = loss_ref(loss, expected, targets_ref(codes, n_outputs)).sum(axis=1)
        assert total == pytest.approx(float(sw @ per_row), rel=1e-12)
        assert wsum == pytest.approx(sw.sum(), rel=1e-14)


def test_loss_block_without_weights_counts_rows():
    X, codes, _, block, coef, b = problem(1, "dense")
    total, wsum = loss_block(coef, b, block, codes, "hinge")
    assert wsum == 30.0
    P = X @ coef.T + b
    assert total == pytest.approx(loss_ref("hinge", P, targets_ref(codes, 1)).sum(), rel=1e-12)
    with pytest.raises(ValueError, match="Got loss 'nope'"):
        loss_block(coef, b, block, codes, "nope")


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_accuracy_counts(layout):
    X, codes, _, block, coef, b = problem(1, layout)
    pred = (X @ coef.T + b).ravel() > 0
    assert accuracy_counts(coef, b, block, codes) == (int(np.sum(pred == (codes == 1))), 30)
    X, codes, _, block, coef, b = problem(3, layout, seed=1)
    pred = np.argmax(X @ coef.T + b, axis=1)
    assert accuracy_counts(coef, b, block, codes) == (int(np.sum(pred == codes)), 30)


@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge", "logistic"])
def test_primal_objective(n_outputs, loss):
    X, codes, _, _, coef, b = problem(n_outputs, "dense")
    expected = primal_objective_ref(coef, b, X, codes, loss, 0.3)
    assert primal_objective(coef, b, X, codes, loss, 0.3) == pytest.approx(expected, rel=1e-13)
    got_sparse = primal_objective(coef, b, sp.csr_matrix(X), codes, loss, 0.3)
    assert got_sparse == pytest.approx(expected, rel=1e-13)


def test_ovr_targets():
    np.testing.assert_array_equal(ovr_targets(np.array([1, 0, 1]), 1), [[1.0], [-1.0], [1.0]])
    np.testing.assert_array_equal(
        ovr_targets(np.array([2, 0]), 3), [[-1.0, -1.0, 1.0], [1.0, -1.0, -1.0]]
    )


@pytest.mark.parametrize("solver_name", ["pegasos", "sgd"])
def test_passes_in_one_thread_keep_one_pairing_scratch_and_give_the_same_model(solver_name):
    """An in-process fit keeps the CSR passes' pairing scratch from pass to pass
    (pass_scratch_kept): the same array serves every pass, the models are those of passes
    that each allocate their own, and nothing is kept once the fit is over."""
    from dsvm.kernels.pairs import CARRY
    from dsvm.solvers import objective
    from dsvm.solvers.registry import make_solver
    from dsvm.training.engines import engine_for
    from tests.solvers.test_pegasos import as_block, fit_epochs, linear_problem

    X, y, codes = linear_problem(n=300, d=12)
    block = as_block(X, y, "csr", np.float32)
    solver = make_solver(solver_name, alpha=1e-2)
    alone = fit_epochs(solver, block, codes, epochs=3)
    with engine_for(sp.csr_matrix(X)):  # the scope of an in-process fit
        kept = solver.init_state(block.n_features, 1, block.dtype)
        kept = solver.calibrate(kept, block, codes)
        rng = np.random.default_rng(1)
        scratches = []
        for _ in range(3):
            solver.run_block(kept, block, codes, rng.permutation(block.n_samples))
            scratches.append(objective._kept.scratch["pairs"])
    assert scratches[0].shape == (1, 12 + CARRY, 2)  # (d + the carry's slots: kernels.pairs)
    assert scratches[1] is scratches[0] and scratches[2] is scratches[0]
    np.testing.assert_array_equal(kept.coef, alone.coef)
    np.testing.assert_array_equal(kept.avg_coef, alone.avg_coef)
    assert kept.t == alone.t and kept.n_avg == alone.n_avg
    assert getattr(objective._kept, "scratch", None) is None


def test_kernel_inputs_give_one_float64_codes_dtype_and_say_which_kind():
    """Class codes and real targets reach the pass kernels as one dtype, float64 and read-only
    (a dtype per kind compiled every pass kernel twice); ``regression`` says which they are,
    and the values are kept exactly."""
    from dsvm.solvers.objective import kernel_inputs
    from dsvm.solvers.pegasos import init_linear_state

    _, codes, _, block, _, _ = problem(3, "csr")
    state = init_linear_state(5, 3, np.float64)
    order = np.arange(30)
    classes = kernel_inputs(block, codes, order, state, "test")
    assert classes.codes.dtype == np.float64 and not classes.codes.flags.writeable
    np.testing.assert_array_equal(classes.codes, codes)
    assert classes.regression is False
    y = np.random.default_rng(1).normal(scale=50.0, size=30)
    targets = kernel_inputs(block, y, order, state, "test")
    assert targets.codes.dtype == np.float64 and not targets.codes.flags.writeable
    np.testing.assert_array_equal(targets.codes, y)
    assert targets.regression is True


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="no dispatchers with NUMBA_DISABLE_JIT=1")
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_classification_and_regression_run_one_compiled_pass(layout):
    """A classifier's and a regressor's passes over the same rows call the same compiled
    specialisation of the pass kernel: the regression adds no signature."""
    from dsvm.kernels.passes import sgd_pass
    from dsvm.solvers.sgd import SGDSolver

    X, codes, _, block, _, _ = problem(1, layout)
    order = np.arange(30)
    classifier = SGDSolver(alpha=0.01, eta0=0.1)
    classifier.run_block(classifier.init_state(5, 1, np.float64), block, codes, order)
    compiled = set(sgd_pass.signatures)
    assert compiled
    regressor = SGDSolver(alpha=0.01, eta0=0.1, loss="epsilon_insensitive")
    y = X @ np.arange(1.0, 6.0) + 3.0
    state = regressor.init_state(5, 1, np.float64)
    regressor.run_block(state, block, y, order)
    assert set(sgd_pass.signatures) == compiled
    assert np.any(state.coef != 0.0)


def test_a_wide_sparse_block_is_scored_on_the_columns_it_touches_with_the_same_sums():
    """decision_block cuts a 2^20-column block and model to the columns the rows touch (no
    O(K d) copies of the model per block); the decision values are bit for bit the full
    product's: every row's entries are summed in the same order."""
    from dsvm.solvers.objective import decision_block, touched_columns

    rng = np.random.default_rng(5)
    d, n = 2 ** 20, 60
    X = sp.random(n, d, density=8 / d, format="csr", random_state=rng, dtype=np.float32)
    coef = rng.standard_normal((3, d)).astype(np.float32)
    b = rng.standard_normal(3)
    cut, part = touched_columns(X, coef)
    assert cut.shape[1] == np.unique(X.indices).size < d // 1000 and part.shape == (3, cut.shape[1])
    expected = np.asarray(X @ coef.astype(np.float64).T) + b
    got = decision_block(coef, b, block_from_arrays(X, np.ones(n)))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("nnz_per_row", [8, 40])  # below d/16 entries (sorted), above (marked)
def test_both_ways_of_finding_the_touched_columns_cut_alike(nnz_per_row):
    """A block with many entries finds its columns by marking them (no sort of the entries):
    the same columns, numbered the same, and the same decision values bit for bit."""
    from dsvm.solvers.objective import touched_columns

    rng = np.random.default_rng(6)
    d, n = 2 ** 16, 200
    X = sp.random(n, d, density=nnz_per_row / d, format="csr", random_state=rng,
                  dtype=np.float32)
    coef = rng.standard_normal((2, d)).astype(np.float32)
    assert (X.nnz >= d // 16) == (nnz_per_row == 40) and X.nnz < d // 4
    cut, part = touched_columns(X, coef)
    cols = np.unique(X.indices)
    np.testing.assert_array_equal(part, coef[:, cols])
    np.testing.assert_array_equal(cut.toarray(), X[:, cols].toarray())
    b = rng.standard_normal(2)
    expected = np.asarray(X @ coef.astype(np.float64).T) + b
    got = decision_block(coef, b, block_from_arrays(X, np.ones(n)))
    np.testing.assert_array_equal(got, expected)
