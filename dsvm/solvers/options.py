"""From an estimator's parameters to a solver's: which solver takes which of them.

The estimators have one flat set of parameters (scikit-learn style); each solver takes the
ones that mean something to it. Keeping the mapping here keeps the estimators free of
per-solver branches.
"""

from __future__ import annotations

import math
from typing import Any

from dsvm.kernels.losses import loss_param

# Solvers that take FOLOS penalties (penalty, l1_ratio); the others support "l2" only.
PENALTY_SOLVERS = ("sgd",)


def planned_steps(n_samples: int, batch_size: int, max_epochs: int) -> int:
    """N of ASSET: the steps a fit of ``max_epochs`` epochs takes over ``n_samples`` rows."""
    return max(1, int(max_epochs) * math.ceil(max(1, int(n_samples)) / int(batch_size)))


def solver_kwargs(est: Any, n_samples: int | None) -> dict[str, Any]:
    """Keyword arguments for ``make_solver(est.solver, ...)`` beyond the common ones.

    ``n_samples`` (rows of the training data, when known) sets ASSET's N.
    """
    name = est.solver
    penalty = getattr(est, "penalty", "l2")
    if penalty != "l2" and name not in PENALTY_SOLVERS:
        raise ValueError(
            f"penalty={penalty!r} is supported by the solvers {list(PENALTY_SOLVERS)} (FOLOS "
            f"proximal steps); solver={name!r} supports penalty='l2' only."
        )
    out: dict[str, Any] = {}
    if name in ("pegasos", "sgd", "asset", "asset*"):
        out["loss_param"] = loss_param(
            est.loss, mu=getattr(est, "mu", 0.0), epsilon=getattr(est, "epsilon", 0.0)
        )
    if name in PENALTY_SOLVERS:
        out["penalty"] = penalty
        out["l1_ratio"] = float(getattr(est, "l1_ratio", 0.15))
    if name in ("asset", "asset*"):
        out["rho"] = float(getattr(est, "rho", 0.5))
        if n_samples is not None:
            out["n_steps"] = planned_steps(n_samples, est.batch_size, est.max_epochs)
    return out
