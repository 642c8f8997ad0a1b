"""Scaled-weight helpers: w_k = scale_k * u_k with u_k = W[k] the raw stored row.

The L2 shrink w <- (1 - eta lambda) w and the Pegasos projection w <- c w multiply every
coordinate; storing the common factor as a scalar makes both O(1), so a sparse step costs
O(nnz(x)) instead of O(n_features) (Shalev-Shwartz et al.'s and Bottou's trick; scikit-learn's
``wscale``). The factor is folded back into u (O(n_features)) when it falls below ``scale_min``
and at the end of every pass, so that between kernel calls the state holds w itself.

The running average of the iterates is kept lazily in the same spirit (see
:mod:`dsvm.kernels.averages`).

All helpers address row k of a 2-D array directly (no ``W[k]`` views, whose reference counts
numba would update atomically on every step).
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

from dsvm.kernels._jit import njit_inline, njit_serial, overload_options


@njit_serial
def vec_sqnorm(W, k):
    """||W[k]||^2 accumulated in float64."""
    acc = 0.0
    for j in range(W.shape[1]):
        x = np.float64(W[k, j])
        acc += x * x
    return acc


@njit_serial
def vec_scale(W, k, s):
    """W[k] *= s (in W's dtype)."""
    for j in range(W.shape[1]):
        W[k, j] = np.float64(W[k, j]) * s


@njit_serial
def vec_zero(W, k):
    for j in range(W.shape[1]):
        W[k, j] = 0.0


@njit_serial
def vec_combine(A, k, beta, W, gamma):
    """A[k] <- beta * A[k] + gamma * W[k] (in A's dtype, W[k] read as float64)."""
    for j in range(A.shape[1]):
        A[k, j] = beta * A[k, j] + gamma * np.float64(W[k, j])


@njit_inline
def power_of(x, power):
    """x ** power for x > 0: SGD's step schedule per step. The schedule's usual powers (1,
    0.75 when averaging, 0.5) by division and square roots: math.pow cost ~30 ns a step, a
    tenth of a 40-nonzero sparse step."""
    if power == 1.0:
        return x
    if power == 0.75:
        r = math.sqrt(x)
        return r * math.sqrt(r)
    if power == 0.5:
        return math.sqrt(x)
    return math.pow(x, power)


@njit_inline
def shrink_scale(W, k, scale, sq, factor, scale_min):
    """Multiply w_k = scale * W[k] by ``factor`` >= 0; returns the new (scale, ||W[k]||^2).

    ``factor == 0`` happens at Pegasos' first step (1 - eta_1 lambda = 0): w becomes exactly 0,
    which the scalar cannot represent usefully (every later update would divide by 0), so W[k]
    is zeroed and the scale reset to 1. When the scale falls below ``scale_min`` it is folded
    into W[k] and ||W[k]||^2 recomputed exactly, which also clears the drift of its incremental
    updates.
    """
    if factor <= 0.0:
        vec_zero(W, k)
        return 1.0, 0.0
    scale *= factor
    if scale < scale_min:
        vec_scale(W, k, scale)
        return 1.0, vec_sqnorm(W, k)
    return scale, sq


@njit_inline
def code_target(code, k, n_outputs, regression):
    """The target of output k for a row whose entry in the stochastic passes' float64 ``codes``
    array is ``code``; ``regression`` is ``hp[REGRESSION] != 0`` (:mod:`dsvm.kernels.hparams`).

    Regression (``codes`` holds the targets themselves): the target, whatever k. Otherwise
    ``code`` is a class index stored as a float64 integer (exact up to 2^53), one-vs-rest: one
    output (binary) code 1 -> +1, else -1; K outputs: +1 where code == k, else -1.

    Why a run-time flag and not the codes' dtype (as :func:`ovr_target` does): a dtype choice
    compiles every pass kernel twice (int32 class codes, float64 targets), about 9 s a variant
    on a cold cache, paid by every test process, first fit and fresh worker. The flag is one
    well-predicted branch per row and output.
    """
    if regression:
        return code
    if n_outputs == 1:
        return 1.0 if code == 1.0 else -1.0
    return 1.0 if code == k else -1.0


def ovr_target(code, k, n_outputs):
    """The target of output k for a row whose entry in a kernel's ``codes`` array is ``code``,
    the semantics chosen at compile time from the array's dtype (the overload below).

    Int class index (classification, one-vs-rest): one output (binary) code 1 -> +1, code 0 ->
    -1; K outputs: +1 where code == k, else -1. Float (regression: ``codes`` holds the float64
    targets themselves): the target, whatever k. Only NESVM's pass uses it (its codes arrive as
    the labels were encoded); the stochastic passes and the probe take float64 codes always and
    a run-time flag (:func:`code_target`), so that they compile half as many variants.
    """
    if isinstance(code, float):
        return code
    if n_outputs == 1:
        return 1.0 if code == 1 else -1.0
    return 1.0 if code == k else -1.0


@overload(ovr_target, **overload_options())
def _ol_ovr_target(code, k, n_outputs):
    if isinstance(code, types.Float):
        return lambda code, k, n_outputs: np.float64(code)

    def impl(code, k, n_outputs):
        if n_outputs == 1:
            return 1.0 if code == 1 else -1.0
        return 1.0 if code == k else -1.0

    return impl
