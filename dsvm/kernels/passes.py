"""One pass of Pegasos, (averaged) SGD, ASSET or FOLOS over one row block: the unit of work of
every stochastic solver.

Each kernel builds its step rule (:mod:`dsvm.kernels.rules`) from ``hp`` and runs the one pass
body, :func:`dsvm.kernels.stochastic.stochastic_steps`, compiled once per layout and dtype for
Pegasos and ASSET together, once for SGD and once for FOLOS (:mod:`dsvm.kernels.rules`).
They take the same leading arguments (:func:`sgd_prox_pass` keeps no average and no scratch):

X : (n_rows, n_features) C-contiguous float32/float64 array, or a CSR triple
    ``(indptr int64 (n_rows + 1,), indices int32 (nnz,), data float32/float64 (nnz,))``.
    Compiled once per layout and dtype (see :mod:`dsvm.kernels.rows`); may be read-only.
codes : (n_rows,) float64: class indices stored as integers (one output: 1 -> +1, 0 -> -1;
    K outputs: one-vs-rest), or, with ``hp[REGRESSION]`` set, the real targets of the
    regression losses (see :func:`dsvm.kernels.weights.code_target`). Always float64, the
    meaning a run-time flag: a dtype that picked the meaning at compile time made numba compile
    every kernel twice (int32 and float64 codes, ~9 s each on a cold cache).
sample_weight : (n_rows,) float64, or an empty array for unit weights.
order : (n_steps_rows,) int64 row indices into X, visited in this order (a permutation, a
    subset or with repeats: the kernel does not care). Consecutive runs of ``hp[BATCH]``
    entries form the mini-batches; the last one may be shorter.
W : (K, n_features) float array of X's dtype, the current weights w_t, updated in place.
b : (K,) float array of X's dtype, the current intercepts, updated in place.
A : (K, n_features) float64, the running average of the iterates, updated in place when
    ``hp[AVERAGE]`` is set (any (K, 0) array otherwise).
ab : (K,) float64, the running average of the intercepts (likewise).
hp : float64 (hparams.SIZE,) packed hyper-parameters (see :mod:`dsvm.kernels.hparams`);
    ``hp[T]`` (and ``hp[N_AVG]``) are written back at the end.
P : float64 scratch where a CSR pass with an average keeps each w_j beside its average's
    entry (:mod:`dsvm.kernels.pairs`): ``pairs.pair_scratch(X, W, A, average)``, (K,
    n_features, 2); contents ignored. Any other shape makes the kernel allocate its own.

Each returns the progressive training loss: the sum over visited rows and outputs of
``sample_weight * loss(p)`` where p is computed at the iterate *before* the step that uses the
row. Neither kernel checks finiteness: the solver does that once per pass.

A step over the mini-batch M (|M| = m rows), for each output k, with g_i = sw_i * dloss(p_i, y_i)
computed for all rows of M at w_t first:

    w_k <- (1 - eta_t lambda) w_k - (eta_t / m) sum_{i in M} g_i x_i
    b_k <- b_k - eta_b,t / m * sum_{i in M} g_i                        (when FIT_INTERCEPT)

with eta_t, eta_b,t and the projection of each rule in :mod:`dsvm.kernels.rules`.

The shrink and projections multiply a per-output scale (see :mod:`dsvm.kernels.weights`), so a
sparse step costs O(nnz of the batch); rows with g_i == 0 (hinge rows outside the margin) skip
their axpy entirely. With an average, a CSR pass works on w and the average's sum interleaved
in ``P`` (:mod:`dsvm.kernels.pairs`), so that a stored entry costs one cache line, not two:
400,000 x 2^22 x 40 nnz float32, averaged SGD 0.38-0.41 -> 0.26 s a pass, averaged Pegasos
0.35-0.49 -> 0.27-0.28 s (the plain passes: 0.13-0.17 s), bit for bit the same results.
"""

from __future__ import annotations

import numpy as np

from dsvm.kernels._jit import njit_serial
from dsvm.kernels.rules import asset_rule, pegasos_rule, prox_rule, sgd_rule
from dsvm.kernels.stochastic import PassModel, PassRows, run_pass


@njit_serial
def pegasos_pass(X, codes, sample_weight, order, W, b, A, ab, hp, P):
    """One Pegasos pass (Shalev-Shwartz et al. 2007; survey Alg. 2) over ``order``.

    Step t (1-based, continuing from ``hp[T]``) uses eta_t = 1 / (lambda t), then projects each
    w_k onto the ball of radius ``hp[RADIUS]``; ||u_k||^2 is tracked incrementally so that the
    projection is O(1). The intercept steps with 1 / (lambda t + 1 / hp[INTERCEPT_ETA_MAX]) and
    is clipped to [-hp[BIAS_BOUND], hp[BIAS_BOUND]]. Returns the summed progressive loss.

    With ``hp[AVERAGE]`` the weighted average of the iterates (w and b after step t,
    projection and clip included) is kept in ``A`` (K, d) float64 and ``ab`` (K,) float64:
    the iterate of step t weighs a_t = (t - hp[AVG_START]) ** hp[AVG_POWER] (0 for
    t <= AVG_START) and ``hp[N_AVG]`` accumulates the a_t. Power 1 from start 0 is the
    t-weighted average (abar_t = (1 - mu) abar_{t-1} + mu w_t with mu = 2 / (t + 1)).
    It is kept lazily (see :mod:`dsvm.kernels.averages`), so a sparse step stays O(nnz);
    without ``hp[AVERAGE]``, ``A`` may have 0 columns and is not touched.
    """
    return run_pass(pegasos_rule(hp), PassRows(X, codes, sample_weight, order),
                    PassModel(W, b, A, ab), hp, P)


@njit_serial
def sgd_pass(X, codes, sample_weight, order, W, b, A, ab, hp, P):
    """One pass of (averaged) SGD (Bottou's svmsgd / svmasgd) over ``order``.

    Step t (0-based count of earlier steps, from ``hp[T]``) uses
    eta_t = eta0 / (1 + lambda eta0 t) ** power. With ``hp[AVERAGE]`` the Polyak-Ruppert
    average abar of the iterates of the steps s > ``hp[AVG_START]`` is kept in ``A`` (K, d)
    float64 and ``ab`` (K,) float64, each iterate weighing a_s = (s - AVG_START) **
    hp[AVG_POWER] (power 0, the default: uniform, abar <- abar + (w - abar) / n_avg).

    The average is kept lazily so that a sparse step stays O(nnz): Bottou's svmasgd
    bookkeeping, written for an arbitrary start, weights and mini-batches, and shared with
    :func:`pegasos_pass` (see :mod:`dsvm.kernels.averages`).
    """
    return run_pass(sgd_rule(hp), PassRows(X, codes, sample_weight, order),
                    PassModel(W, b, A, ab), hp, P)


@njit_serial
def asset_pass(X, codes, sample_weight, order, W, b, A, ab, hp, P):
    """One ASSET (or ASSET*) pass over ``order`` (Lee & Wright, papers/000, Algorithm 1; see
    :class:`dsvm.kernels.rules.BallRule`); returns the summed progressive loss.

    Step j (1-based, continuing from ``hp[T]``) over a mini-batch M of m rows (m = 1 in the
    paper): eta_j = ETA0 / j ** POWER; G_w = lambda w + (1/m) sum_i g_i x_i,
    G_b = (1/m) sum_i g_i; (w, b) <- Pi_X((w, b) - eta_j (G_w, G_b)) with
    X = {||w|| <= RADIUS} x {|b| <= BIAS_BOUND} (the projection onto a product of a ball and
    an interval is the two projections). With ``hp[AVERAGE]`` the iterates of the steps
    j > ``hp[AVG_START]`` (= N-bar) are averaged with weights eta_j (step 9 of Algorithm 1:
    x~ <- (eta~ x~ + eta_j x_j) / (eta~ + eta_j)), kept lazily as in
    :mod:`dsvm.kernels.averages`; ``hp[N_AVG]`` is eta~. Reads ALPHA, T, BATCH, LOSS,
    LOSS_PARAM, FIT_INTERCEPT, RADIUS, BIAS_BOUND, SCALE_MIN, ETA0, POWER, AVERAGE, AVG_START
    and N_AVG; writes back T and N_AVG.
    """
    return run_pass(asset_rule(hp), PassRows(X, codes, sample_weight, order),
                    PassModel(W, b, A, ab), hp, P)


@njit_serial
def sgd_prox_pass(X, codes, sample_weight, order, W, b, hp, last, P):
    """One FOLOS pass over ``order`` (SGD with the L1 or elastic-net prox applied lazily, see
    :mod:`dsvm.kernels.prox`); returns the progressive loss sum.

    Reads ALPHA (schedule), L1, L2, T, BATCH, LOSS, LOSS_PARAM, FIT_INTERCEPT, INTERCEPT_RATE,
    SCALE_MIN, ETA0, POWER; writes back T. No average is kept (``hp[AVERAGE]`` is ignored).
    ``last`` : (K, d) float64 scratch for the lazy prox's per-coordinate record (its contents
    on entry do not matter); ``P`` : the scratch that pairs W with it for CSR rows
    (:func:`dsvm.kernels.pairs.pair_scratch` of W and ``last``), as an average is paired:
    every entry's catch-up reads ``last[k, j]`` just before ``W[k, j]``, at random over a
    large model, and paired they are one cache line instead of two misses (200,000 rows x 40
    nnz, 2^20 features, one output: 0.62 s -> 0.28 s a pass with l1 = 0, 0.68 s -> 0.34 s
    with l1 = 1e-6; plain SGD 0.09 s). Both are allocated by the caller (NumPy).
    """
    K = W.shape[0]
    no_avg = PassModel(W, b, last, np.zeros(K))
    return run_pass(prox_rule(hp), PassRows(X, codes, sample_weight, order), no_avg, hp, P)
