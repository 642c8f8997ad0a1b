"""Penalties of the SGD solver: L2, L1 and the elastic net, the last two by FOLOS prox steps.

With ``alpha`` and ``l1_ratio`` r (scikit-learn's parametrisation of the elastic net):

    penalty(w) = alpha (r ||w||_1 + (1 - r)/2 ||w||^2)      "elasticnet"
               = alpha ||w||_1                               "l1"  (r = 1)
               = alpha/2 ||w||^2                             "l2"  (r = 0)

so lambda_1 = alpha r and lambda_2 = alpha (1 - r). "l2" runs the plain SGD kernel; "l1" and
"elasticnet" run :func:`dsvm.kernels.passes.sgd_prox_pass` (forward step on loss + L2, backward
soft-threshold step on L1; exact zeros; O(nnz) per sparse row). The step schedule keeps
eta0 / (1 + alpha eta0 t) with the whole ``alpha``, so that L1 alone still gets a decaying step.

Only SGD takes an L1 part: Pegasos' step 1/(lambda t) and ball radius, and ASSET*'s, are derived
from the strong convexity of the L2 term, which pure L1 lacks (``solvers.options`` raises a clear
error for the other solvers).

Sparsity is that of FOBOS' last iterate: a weight whose optimum is 0 is pushed off 0 by every
violating row containing its feature (by about eta), while it is shrunk by only eta lambda_1 per
step, so mostly rare features sit at exactly 0 (benchmarks/RESULTS.md compares with LIBLINEAR).

With an L1 part the solver returns the last iterate: no running average is kept (an average of
sparse iterates is not sparse). Across parallel streams the combine averages the streams' last
iterates, so a coordinate stays exactly 0 when it is 0 in every stream.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dsvm.kernels.passes import sgd_prox_pass
from dsvm.kernels.weights import vec_sqnorm
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.objective import check_finite

PENALTIES = ("l2", "l1", "elasticnet")


def validate_penalty(solver: Any) -> None:
    cls = type(solver).__name__
    if solver.penalty not in PENALTIES:
        raise ValueError(
            f"The 'penalty' parameter of {cls} must be a str among {sorted(PENALTIES)}. "
            f"Got {solver.penalty!r} instead."
        )
    r = solver.l1_ratio
    if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) or not (
        0.0 <= float(r) <= 1.0
    ):
        raise ValueError(
            f"The 'l1_ratio' parameter of {cls} must be a float in the range [0.0, 1.0]. "
            f"Got {r!r} instead."
        )
    a = solver.loss_param
    if isinstance(a, bool) or not isinstance(a, (int, float, np.integer, np.floating)) or not (
        0.0 <= float(a) < math.inf
    ):
        raise ValueError(
            f"The 'loss_param' parameter of {cls} must be a float in the range [0.0, inf). "
            f"Got {a!r} instead."
        )


def l1_ratio_of(solver: Any) -> float:
    if solver.penalty == "l1":
        return 1.0
    if solver.penalty == "l2":
        return 0.0
    return float(solver.l1_ratio)


def l1_part(solver: Any) -> float:
    """lambda_1 = alpha r."""
    return float(solver.alpha) * l1_ratio_of(solver)


def l2_part(solver: Any) -> float:
    """lambda_2 = alpha (1 - r)."""
    return float(solver.alpha) * (1.0 - l1_ratio_of(solver))


def penalty_value(solver: Any, coef: np.ndarray) -> float:
    """penalty(W) summed over the outputs, float64."""
    l1, l2 = l1_part(solver), l2_part(solver)
    c = np.asarray(coef)
    if c.dtype != np.float64 and c.ndim == 2 and c.flags.c_contiguous:
        # float32 weights: summed in float64 without a float64 copy of W (32 MB at 2^22
        # features, made several times an epoch by the probes and the objective)
        sq = sum(vec_sqnorm(c, k) for k in range(c.shape[0]))
        return (l1 * float(np.abs(c).sum(dtype=np.float64)) if l1 else 0.0) + 0.5 * l2 * sq
    c = np.asarray(c, dtype=np.float64)  # no copy for float64 averages
    # (the L1 term only when there is one: |c| would be an O(d) temporary at 2^22+ features)
    return (l1 * float(np.abs(c).sum()) if l1 else 0.0) + 0.5 * l2 * float(np.vdot(c, c))


def prox_scratch(X: Any, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The FOLOS kernel's scratch, allocated here (NumPy: huge pages for large arrays, see
    :func:`dsvm.kernels.passes.sgd_prox_pass`): the lazy prox's (K, d) record and, for CSR
    rows, the pairing of W with it (:func:`dsvm.kernels.pairs.pair_scratch`)."""
    from dsvm.kernels.pairs import pair_scratch

    last = np.empty(coef.shape, np.float64)
    return last, pair_scratch(X, coef, last, True)


def run_prox_kernel(state: SolverState, args: Any, hp: np.ndarray, *, who: str) -> PassStats:
    """Call :func:`sgd_prox_pass` on prepared inputs; read back t; check finiteness."""
    from dsvm.kernels import hparams as H

    last, pairs = prox_scratch(args.X, state.coef)
    loss_sum = float(sgd_prox_pass(args.X, args.codes, args.sample_weight,
                                   args.order, state.coef, state.intercept, hp, last, pairs))
    n_rows = int(args.order.shape[0])
    state.t = float(hp[H.T])
    check_finite(state, loss_sum, who, n_rows)
    return PassStats(loss_sum=loss_sum, n_rows=n_rows, weight_sum=args.weight_sum)


def estimator_penalty(est: Any, coef: np.ndarray) -> float:
    """The penalty of an estimator's parameters (alpha, penalty, l1_ratio) at ``coef``."""
    from types import SimpleNamespace

    spec = SimpleNamespace(alpha=float(est.alpha), penalty=getattr(est, "penalty", "l2"),
                           l1_ratio=float(getattr(est, "l1_ratio", 0.15)))
    return penalty_value(spec, coef)
