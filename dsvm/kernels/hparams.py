"""The ``hp`` array: scalar hyper-parameters and counters of a pass, packed as float64.

Pass kernels take one small float64 array instead of a dozen positional scalars. Indices are
named here; :func:`make_hp` builds the array from keywords so that callers never depend on the
positions. ``hp[T]`` and ``hp[N_AVG]`` are *in/out*: a kernel reads the counters at the start of
the pass and writes back their values at the end, so chained calls continue the schedule.
"""

from __future__ import annotations

import math

import numpy as np

ALPHA = 0  # lambda, the L2 regularisation strength
T = 1  # steps (mini-batches) taken before this pass; in/out
BATCH = 2  # rows per step (mini-batch size k)
LOSS = 3  # loss code from dsvm.kernels.losses.LOSS_CODES
FIT_INTERCEPT = 4  # 1.0 to learn the unregularised intercept, 0.0 to keep it fixed
RADIUS = 5  # Pegasos: radius of the ball ||w_k|| <= RADIUS (inf: no projection)
BIAS_BOUND = 6  # bound |b_k| <= BIAS_BOUND after each intercept step (inf: unbounded)
INTERCEPT_RATE = 7  # SGD: intercept step = INTERCEPT_RATE * eta_t
INTERCEPT_ETA_MAX = 8  # Pegasos: intercept step = 1 / (lambda t + 1 / INTERCEPT_ETA_MAX)
SCALE_MIN = 9  # rescale the scaled-weight representation below this factor
ETA0 = 10  # SGD: initial step size
POWER = 11  # SGD: eta_t = eta0 / (1 + lambda eta0 t) ** POWER (0: constant eta0)
AVERAGE = 12  # 1.0 to keep a running average of the iterates (SGD: Polyak-Ruppert)
AVG_START = 13  # average the iterates of steps s > AVG_START (s = 1, 2, ...)
N_AVG = 14  # sum of the averaging weights of the iterates averaged so far; in/out
AVG_POWER = 15  # iterate of step s weighs (s - AVG_START) ** AVG_POWER: 0 uniform, 1 t-weighted
LOSS_PARAM = 16  # the loss's parameter: mu (smoothed hinge) or epsilon (epsilon-insensitive)
L1 = 17  # FOLOS: lambda_1 of the L1 prox (dsvm.kernels.prox)
L2 = 18  # FOLOS: lambda_2 of the L2 shrink (ALPHA still sets the step schedule)
# 1.0: ``codes`` holds real targets (regression losses); 0.0: class codes stored as float64
# integers. A run-time flag, not the codes' dtype, so that each pass kernel compiles once per
# (rule, layout, dtype) rather than twice (see dsvm.kernels.weights.code_target).
REGRESSION = 19
# A CSR pass with an average (dsvm.kernels.pairs): 1.0 when P already holds W and A paired (an
# earlier pass of the same state left them there), and 1.0 to leave them in P after the pass
# (W and A are then stale until dsvm.kernels.pairs.unpair). Run-time flags: the passes over
# the windows of one stream pair W once instead of once per window (dsvm.solvers.objective.
# pairs_kept), with no new compiled variant. make_hp sets both to 0.0.
PAIRED_IN = 20
KEEP_PAIRED = 21
SIZE = 22

# Below these factors the scaled representation w = scale * w_raw is folded back into w_raw.
# Rounding of w_raw is relative, so the threshold is not about precision; it keeps the raw
# vector's magnitude (|w| / scale) far from float32's 3.4e38 limit whatever alpha is. A fold
# costs O(n_features) and happens about once per 1/threshold-fold decay of the scale.
SCALE_MIN_BY_DTYPE = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-9}


def make_hp(
    *,
    alpha: float,
    t: float,
    batch_size: int,
    loss: int,
    fit_intercept: bool,
    dtype: np.dtype,
    radius: float = math.inf,
    bias_bound: float = math.inf,
    intercept_rate: float = 1.0,
    intercept_eta_max: float = math.inf,
    eta0: float = math.nan,
    power: float = 0.0,
    average: bool = False,
    avg_start: float = 0.0,
    n_avg: float = 0.0,
    avg_power: float = 0.0,
    loss_param: float = 0.0,
    l1: float = 0.0,
    l2: float = math.nan,
    regression: bool = False,
) -> np.ndarray:
    """Pack keyword hyper-parameters into a fresh ``hp`` array (see the index constants)."""
    hp = np.empty(SIZE, dtype=np.float64)
    hp[ALPHA] = alpha
    hp[T] = t
    hp[BATCH] = batch_size
    hp[LOSS] = loss
    hp[FIT_INTERCEPT] = 1.0 if fit_intercept else 0.0
    hp[RADIUS] = radius
    hp[BIAS_BOUND] = bias_bound
    hp[INTERCEPT_RATE] = intercept_rate
    hp[INTERCEPT_ETA_MAX] = intercept_eta_max
    hp[SCALE_MIN] = SCALE_MIN_BY_DTYPE[np.dtype(dtype)]
    hp[ETA0] = eta0
    hp[POWER] = power
    hp[AVERAGE] = 1.0 if average else 0.0
    hp[AVG_START] = avg_start
    hp[N_AVG] = n_avg
    hp[AVG_POWER] = avg_power
    hp[LOSS_PARAM] = loss_param
    hp[L1] = l1
    hp[L2] = alpha if math.isnan(l2) else l2
    hp[REGRESSION] = 1.0 if regression else 0.0
    hp[PAIRED_IN] = 0.0
    hp[KEEP_PAIRED] = 0.0
    return hp
