"""Losses of a prediction p = w.x + b: margin losses (y in {-1, +1}), regression losses (real y).

Each loss has a scalar ``loss(p, y)`` and ``dloss(p, y)`` = d loss / d p (a subgradient where the
loss is not differentiable). Kernels select one by an int code from :data:`LOSS_CODES` through
:func:`loss_value` / :func:`loss_deriv` (or :func:`loss_value_p` / :func:`loss_deriv_p`, which
also take the loss's one parameter: mu of the smoothed hinge, epsilon of the epsilon-insensitive
loss); the branch is perfectly predictable and costs nothing next to a row's dot product.

=================  ===========================  =====================================  ========
name               loss(p, y), z = y p          dloss(p, y)                            loss(0)
=================  ===========================  =====================================  ========
``hinge``          max(0, 1 - z)                -y if z < 1 else 0                     1
``squared_hinge``  max(0, 1 - z)^2              -2 y (1 - z) if z < 1 else 0           1
``logistic``       log(1 + exp(-z))             -y / (1 + exp(z))                      log 2
=================  ===========================  =====================================  ========

The hinge subgradient at the kink z = 1 is taken as 0 (the Pegasos convention: only rows with
1 - y w.x > 0 contribute). ``loss(0)`` bounds the optimal weight norm (see the solvers).

Losses with a parameter ``a`` (``hp[LOSS_PARAM]`` in the pass kernels), r = y - p:

=========================  ===============================  =====================================
name                       loss(p, y)                       dloss(p, y)
=========================  ===============================  =====================================
``smoothed_hinge`` (a=mu)  0 if z >= 1;                     -y min(1, (1 - z)/mu) if z < 1 else 0
                           (1-z)^2/(2 mu) if 1-mu < z < 1;
                           1 - z - mu/2 if z <= 1 - mu
``epsilon_insensitive``    max(0, |r| - a)                  -sign(r) if |r| > a else 0
(a = epsilon)
``squared``                r^2 (a unused)                   -2 r
=========================  ===============================  =====================================

* ``smoothed_hinge`` is NESVM's smoothed hinge (Zhou, Tao & Wu, Eq. 5-6:
  u = median{(1 - z) / (mu ||x||_inf), 0, 1}, loss = u (1 - z) - (mu ||x||_inf / 2) u^2) with
  ||x||_inf taken as 1, so that it is a function of the margin alone, like every loss here: the
  Huber form of the hinge. It is 0 beyond the margin, quadratic within mu of it, linear further
  out, and mu <= 0 gives the hinge. Its derivative is -y u.
* ``epsilon_insensitive`` is the loss of support vector regression (ASSET's Table 1); at the
  kinks |r| = epsilon the subgradient 0 is taken (ASSET's d_j = 0 unless |r| > epsilon).
* ``squared`` is the least-squares loss (y - p)^2, without a 1/2: for y in {-1, +1} it equals
  (1 - y p)^2, the LS-SVM loss, as ``squared_hinge`` is without its 1/2.

For the regression losses y is the real target; the stochastic pass kernels read it from their
float64 ``codes`` array when ``hp[REGRESSION]`` is set, where they otherwise read class indices
(see :func:`dsvm.kernels.weights.code_target`).
"""

from __future__ import annotations

import math

from dsvm.kernels._jit import njit_inline

LOSS_CODES: dict[str, int] = {
    "hinge": 0,
    "squared_hinge": 1,
    "logistic": 2,
    "smoothed_hinge": 3,
    "epsilon_insensitive": 4,
    "squared": 5,
}
HINGE, SQUARED_HINGE, LOGISTIC = 0, 1, 2
SMOOTHED_HINGE, EPSILON_INSENSITIVE, SQUARED = 3, 4, 5

# Losses of real-valued targets (SVMRegressor); the others are margin losses of y in {-1, +1}.
REGRESSION_LOSSES = ("epsilon_insensitive", "squared")
CLASSIFICATION_LOSSES = ("hinge", "squared_hinge", "logistic", "smoothed_hinge", "squared")

# loss(0, y) for each margin loss: the mean loss of the zero model, used for weight-norm bounds
# (the smoothed hinge's is 1 - mu/2 <= 1; 1 is kept as the bound). Regression losses depend on
# the targets: see :func:`regression_loss_at_zero`.
LOSS_AT_ZERO: dict[str, float] = {
    "hinge": 1.0,
    "squared_hinge": 1.0,
    "logistic": math.log(2.0),
    "smoothed_hinge": 1.0,
    "squared": 1.0,  # (1 - y p)^2 at p = 0, for y in {-1, +1} (LS-SVM)
}

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


_SIG3 = "float64(float64, float64, float64)"


@njit_inline(_SIG3)
def smoothed_hinge_loss(p, y, mu):
    z = 1.0 - y * p
    if z <= 0.0:
        return 0.0
    if z < mu:
        return z * z / (2.0 * mu)
    return z - 0.5 * mu if mu > 0.0 else z


@njit_inline(_SIG3)
def smoothed_hinge_dloss(p, y, mu):
    z = 1.0 - y * p
    if z <= 0.0:
        return 0.0
    if z < mu:
        return -y * z / mu
    return -y


@njit_inline(_SIG3)
def epsilon_insensitive_loss(p, y, eps):
    r = abs(y - p) - eps
    return 0.0 if r <= 0.0 else r


@njit_inline(_SIG3)
def epsilon_insensitive_dloss(p, y, eps):
    r = y - p
    if r > eps:
        return -1.0
    if r < -eps:
        return 1.0
    # NaN reaches here: hand it on (see the note above the margin losses)
    return 0.0 if r == r else r


@njit_inline(_SIG)
def squared_loss(p, y):
    r = y - p
    return r * r


@njit_inline(_SIG)
def squared_dloss(p, y):
    return -2.0 * (y - p)


@njit_inline("float64(int64, float64, float64, float64)")
def loss_value_p(code, p, y, a):
    """loss(p, y) of the loss with int ``code`` and parameter ``a`` (mu or epsilon)."""
    if code == HINGE:
        return hinge_loss(p, y)
    if code == SQUARED_HINGE:
        return squared_hinge_loss(p, y)
    if code == LOGISTIC:
        return logistic_loss(p, y)
    if code == SMOOTHED_HINGE:
        return smoothed_hinge_loss(p, y, a)
    if code == EPSILON_INSENSITIVE:
        return epsilon_insensitive_loss(p, y, a)
    return squared_loss(p, y)


@njit_inline("float64(int64, float64, float64, float64)")
def loss_deriv_p(code, p, y, a):
    """d loss(p, y) / d p of the loss with int ``code`` and parameter ``a``."""
    if code == HINGE:
        return hinge_dloss(p, y)
    if code == SQUARED_HINGE:
        return squared_hinge_dloss(p, y)
    if code == LOGISTIC:
        return logistic_dloss(p, y)
    if code == SMOOTHED_HINGE:
        return smoothed_hinge_dloss(p, y, a)
    if code == EPSILON_INSENSITIVE:
        return epsilon_insensitive_dloss(p, y, a)
    return squared_dloss(p, y)


@njit_inline("float64(int64, float64, float64)")
def loss_value(code, p, y):
    """loss(p, y) of the loss with int ``code`` (see :data:`LOSS_CODES`); parameter 0."""
    return loss_value_p(code, p, y, 0.0)


@njit_inline("float64(int64, float64, float64)")
def loss_deriv(code, p, y):
    """d loss(p, y) / d p of the loss with int ``code``; parameter 0."""
    return loss_deriv_p(code, p, y, 0.0)


def loss_param(name: str, *, mu: float = 0.0, epsilon: float = 0.0) -> float:
    """The kernels' loss parameter ``a`` for loss ``name``: mu, epsilon or 0."""
    if name == "smoothed_hinge":
        return float(mu)
    if name == "epsilon_insensitive":
        return float(epsilon)
    return 0.0


def regression_loss_at_zero(name: str, y_abs_max: float, epsilon: float) -> float:
    """A bound on the mean loss of the zero model for targets with |y| <= ``y_abs_max``."""
    if name == "epsilon_insensitive":
        return max(0.0, y_abs_max - epsilon)
    return y_abs_max * y_abs_max


def loss_code(name: str) -> int:
    """The kernel code of loss ``name``; ValueError naming the valid choices otherwise."""
    try:
        return LOSS_CODES[name]
    except KeyError:
        raise ValueError(f"Got loss {name!r}; expected one of {sorted(LOSS_CODES)}.") from None
