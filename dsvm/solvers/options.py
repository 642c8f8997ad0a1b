"""From an estimator's parameters to a solver's: which solver takes which of them.

The estimators have one flat set of parameters (scikit-learn style); each solver is a
dataclass whose fields are the parameters that mean something to it. :func:`solver_params`
picks them from the flat set (a plain mapping, not an estimator), so that one typed path leads
from the estimator's parameters to the solver and nothing above this layer branches on the
solver's name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from dsvm.kernels.losses import loss_param

# Solvers that take FOLOS penalties (penalty, l1_ratio); the others support "l2" only.
PENALTY_SOLVERS = ("sgd",)


def planned_steps(n_samples: int, batch_size: int, max_epochs: int) -> int:
    """N of ASSET: the steps a fit of ``max_epochs`` epochs takes over ``n_samples`` rows."""
    return max(1, int(max_epochs) * math.ceil(max(1, int(n_samples)) / int(batch_size)))


def check_penalty(name: str, penalty: str) -> None:
    if penalty != "l2" and name not in PENALTY_SOLVERS:
        raise ValueError(
            f"penalty={penalty!r} is supported by the solvers {list(PENALTY_SOLVERS)} (FOLOS "
            f"proximal steps); solver={name!r} supports penalty='l2' only."
        )


def solver_params(cls: type, params: Mapping[str, Any], n_samples: int | None) -> dict[str, Any]:
    """Keyword arguments for ``cls`` (a solver dataclass) from the flat ``params``.

    Derived values: ``loss_param`` (mu for the smoothed hinge, epsilon for the
    epsilon-insensitive loss) and ASSET's ``n_steps`` (from ``n_samples``, the rows of the
    training data, when known).
    """
    names = {f.name for f in fields(cls)}
    out = {k: params[k] for k in names if k in params}
    for key, kind in (("alpha", float), ("batch_size", int), ("gamma", float), ("budget", int),
                      ("rho", float), ("l1_ratio", float),
                      ("local_iters", float), ("rounds_per_epoch", int)):
        if key in out:
            out[key] = kind(out[key])
    if "loss_param" in names:
        out["loss_param"] = loss_param(params.get("loss", "hinge"), mu=params.get("mu", 0.0),
                                       epsilon=params.get("epsilon", 0.0))
    if "n_steps" in names and n_samples is not None:
        out["n_steps"] = planned_steps(n_samples, int(params.get("batch_size", 1)),
                                       int(params.get("max_epochs", 1)))
    return out
