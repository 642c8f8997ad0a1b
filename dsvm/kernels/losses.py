"""Margin losses for binary targets y in {-1, +1} and prediction p = w.x + b.

Each loss has a scalar ``loss(p, y)`` and ``dloss(p, y)`` = d loss / d p (a subgradient where the
loss is not differentiable). Kernels select one by an int code from :data:`LOSS_CODES` through
:func:`loss_value` / :func:`loss_deriv`; the branch is perfectly predictable and costs nothing
next to a row's dot product.

=================  ===========================  =====================================  ========
name               loss(p, y), z = y p          dloss(p, y)                            loss(0)
=================  ===========================  =====================================  ========
``hinge``          max(0, 1 - z)                -y if z < 1 else 0                     1
``squared_hinge``  max(0, 1 - z)^2              -2 y (1 - z) if z < 1 else 0           1
``logistic``       log(1 + exp(-z))             -y / (1 + exp(z))                      log 2
=================  ===========================  =====================================  ========

The hinge subgradient at the kink z = 1 is taken as 0 (the Pegasos convention: only rows with
1 - y w.x > 0 contribute). ``loss(0)`` bounds the optimal weight norm (see the solvers).
"""

from __future__ import annotations

import math

from dsvm.kernels._jit import njit_inline

LOSS_CODES: dict[str, int] = {"hinge": 0, "squared_hinge": 1, "logistic": 2}
HINGE, SQUARED_HINGE, LOGISTIC = 0, 1, 2

# loss(0, y) for each loss: the mean loss of the zero model, used for weight-norm bounds.
LOSS_AT_ZERO: dict[str, float] = {"hinge": 1.0, "squared_hinge": 1.0, "logistic": math.log(2.0)}

_SIG = "float64(float64, float64)"


# The comparisons below are written so that a NaN margin (NaN or inf in the data, or diverged
# weights) yields a NaN loss and a non-zero derivative: the NaN then reaches the weights and the
# solver's finiteness check, instead of the row being silently skipped as "no loss".


@njit_inline(_SIG)
def hinge_loss(p, y):
    z = 1.0 - y * p
    return 0.0 if z <= 0.0 else z


@njit_inline(_SIG)
def hinge_dloss(p, y):
    return 0.0 if y * p >= 1.0 else -y


@njit_inline(_SIG)
def squared_hinge_loss(p, y):
    z = 1.0 - y * p
    return 0.0 if z <= 0.0 else z * z


@njit_inline(_SIG)
def squared_hinge_dloss(p, y):
    z = 1.0 - y * p
    return 0.0 if z <= 0.0 else -2.0 * y * z


@njit_inline(_SIG)
def logistic_loss(p, y):
    # log(1 + exp(-z)) without overflow: for z < 0 write it as -z + log(1 + exp(z)).
    z = y * p
    if z > 0.0:
        return math.log1p(math.exp(-z))
    return -z + math.log1p(math.exp(z))


@njit_inline(_SIG)
def logistic_dloss(p, y):
    # -y * sigmoid(-z); exp of a non-positive argument only.
    z = y * p
    if z > 0.0:
        e = math.exp(-z)
        return -y * e / (1.0 + e)
    return -y / (1.0 + math.exp(z))


@njit_inline("float64(int64, float64, float64)")
def loss_value(code, p, y):
    """loss(p, y) of the loss with int ``code`` (see :data:`LOSS_CODES`)."""
    if code == HINGE:
        return hinge_loss(p, y)
    if code == SQUARED_HINGE:
        return squared_hinge_loss(p, y)
    return logistic_loss(p, y)


@njit_inline("float64(int64, float64, float64)")
def loss_deriv(code, p, y):
    """d loss(p, y) / d p of the loss with int ``code``."""
    if code == HINGE:
        return hinge_dloss(p, y)
    if code == SQUARED_HINGE:
        return squared_hinge_dloss(p, y)
    return logistic_dloss(p, y)


def loss_code(name: str) -> int:
    """The kernel code of loss ``name``; ValueError naming the valid choices otherwise."""
    try:
        return LOSS_CODES[name]
    except KeyError:
        raise ValueError(f"Got loss {name!r}; expected one of {sorted(LOSS_CODES)}.") from None
