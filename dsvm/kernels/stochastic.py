"""The one stochastic pass body: Pegasos, SGD, ASSET and FOLOS steps over one row block.

:func:`stochastic_steps` runs the steps of any rule of :mod:`dsvm.kernels.rules` (the rule's
record class picks its leaves at compile time: one class for Pegasos and ASSET, one for SGD,
one for FOLOS) over dense or CSR rows (the row primitives of :mod:`dsvm.kernels.rows`, also
picked at compile time). :func:`run_pass` is what the pass kernels of :mod:`dsvm.kernels.passes`
call: it pairs W with its average for a CSR pass with an average (:mod:`dsvm.kernels.pairs`)
and picks the unit variant for one-output, one-row steps over dense float32 rows. The arguments
come in three records:

rows : :class:`PassRows` (X, codes, sample_weight, order), as documented in
    :mod:`dsvm.kernels.passes`; read only.
model : :class:`PassModel` (W, b, A, ab): the iterate (K, d) and its intercepts (K,), updated in
    place; the running average of the iterates (K, d) float64 and of the intercepts (K,),
    updated when averaging (A may have 0 columns otherwise).
hp : float64 packed hyper-parameters (:mod:`dsvm.kernels.hparams`); T and N_AVG written back.

What every rule gets from the one body (the speed work of issue #12): the scaled
representation w = s u (O(1) shrink and projection, :mod:`dsvm.kernels.weights`), the lazy
average (:mod:`dsvm.kernels.averages`), rows and the weights they touch prefetched a few rows
ahead (:mod:`dsvm.kernels.prefetch`), w paired with its average in one cache line for CSR rows
(:mod:`dsvm.kernels.pairs`), the unit variant, and, for the projecting rules, the young support
of CSR rows (:mod:`dsvm.kernels.support`). Rows with g_i == 0 skip their axpy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types
from numba.extending import overload

from dsvm.kernels import hparams as H
from dsvm.kernels._jit import njit_serial, overload_options
from dsvm.kernels.averages import avg_add, avg_begin, avg_end, avg_flush_needed
from dsvm.kernels.losses import loss_deriv_p, loss_value_p
from dsvm.kernels.pairs import (
    UNIT,
    carry_view,
    jumps_at,
    no_carry,
    pair_up,
    pair_views,
    run_shape,
    unpair,
)
from dsvm.kernels.prefetch import PREFETCH_DISTANCE, WEIGHTS_AHEAD
from dsvm.kernels.rows import (
    prefetch_item,
    prefetch_row,
    prefetch_weights,
    row_axpy,
    row_axpy_comp,
    row_axpy_sq,
    row_axpy_sq_comp,
    row_dot,
)
from dsvm.kernels.rules import (
    averages,
    averaging_weight,
    intercept_step,
    lazy_prox,
    project,
    projects,
    prox_catch_up,
    prox_settle,
    prox_state,
    prox_threshold,
    shrink_factor,
    step_size,
)
from dsvm.kernels.support import (
    SUPPORT_FRACTION,
    mark_row,
    sup_flush,
    sup_scale,
    sup_sqnorm,
    sup_zero,
    track_support,
)
from dsvm.kernels.weights import code_target, vec_sqnorm


class PassRows(NamedTuple):
    """The rows a pass visits (see :mod:`dsvm.kernels.passes` for each array)."""

    X: object
    codes: np.ndarray
    sample_weight: np.ndarray
    order: np.ndarray


class PassModel(NamedTuple):
    """The state a pass updates: the iterate W, b and its running average A, ab."""

    W: np.ndarray
    b: np.ndarray
    A: np.ndarray
    ab: np.ndarray


@njit_serial
def stochastic_steps(rule, rows, model, hp, avg_lines, unit, carry):
    """The pass on W and A as given; returns the summed progressive loss.

    ``avg_lines``: A's entries have cache lines of their own (prefetched separately), or share
    W's (:mod:`dsvm.kernels.pairs`); ``unit``: :data:`UNIT` for the variant with one output and
    one-row steps as constants, else a run-time bool (see :func:`dsvm.kernels.pairs.run_shape`).
    ``carry``: (K, 2, 2) float64, where a pass over pairs kept for the next pass leaves what
    it has not folded yet (:func:`dsvm.kernels.pairs.carry_view`), or (0, 0, 2).
    """
    X, codes, sample_weight, order = rows
    W, b, A, ab = model
    n = order.shape[0]
    K, k_batch = run_shape(W, hp, unit)
    t = hp[H.T]
    code = int(hp[H.LOSS])
    loss_a = hp[H.LOSS_PARAM]
    fit_b = hp[H.FIT_INTERCEPT] != 0.0
    regression = hp[H.REGRESSION] != 0.0  # codes: real targets, or float64 class indices
    scale_min = hp[H.SCALE_MIN]
    average = averages(rule) and hp[H.AVERAGE] != 0.0
    avg_start = hp[H.AVG_START]
    avg_power = hp[H.AVG_POWER]
    n_avg = hp[H.N_AVG]
    has_sw = sample_weight.shape[0] > 0
    sparse = track_support(X)
    keeps_norm = projects(rule)
    prox = lazy_prox(rule)

    # Passes over pairs kept from one to the next (hp[PAIRED_IN], hp[KEEP_PAIRED]) continue
    # each other as one pass over their rows: the scale and the lazy average's coefficient
    # are carried, A stays the average's sum, instead of an O(d) fold at each end and start
    # (kernels.pairs.settle folds them when the pairs are copied back). Not for the
    # projecting rules, whose young support (kernels.support) lives within one pass.
    carried = not keeps_norm and carry.shape[0] == K
    resume = carried and hp[H.PAIRED_IN] != 0.0
    suspend = carried and hp[H.KEEP_PAIRED] != 0.0
    scale = np.ones(K)
    sq = np.zeros(K)  # ||u_k||^2, kept current through every update by the projecting rules
    if keeps_norm:
        for k in range(K):
            sq[k] = vec_sqnorm(W, k)
    csum = np.zeros(K)  # the average's lazy sum is A[k] + csum_k W[k] (kernels.averages)
    if resume:
        for k in range(K):
            scale[k] = carry[k, 0, 0]
            csum[k] = carry[k, 0, 1]
    # The support of W[k] while young (kernels.support): tracked over CSR rows from an all-zero
    # W[k] (a fit's first pass) by the projecting rules; -1 = not tracked
    sup_n = np.full(K, -1, np.int64)
    young = False
    if keeps_norm and sparse and n > 0:
        for k in range(K):
            young = young or sq[k] == 0.0
    n_mark = W.shape[1] if young else 0
    mark = np.zeros((K, n_mark), np.uint8)
    sup_idx = np.empty((K, n_mark // SUPPORT_FRACTION), np.int32)
    for k in range(K):
        if young and sq[k] == 0.0:
            sup_n[k] = 0
    q_prox, last = prox_state(rule, W, A)  # the lazy L1 prox's thresholds (kernels.prox)
    if average and not resume:
        for k in range(K):
            avg_begin(A, ab, k, n_avg)
    G = np.zeros((min(k_batch, n), K))
    loss_sum = 0.0
    start = 0
    while start < n:
        m = min(k_batch, n - start)
        eta, t = step_size(rule, t)
        # Margins of all rows of the batch at the current iterate first, then the update.
        # (Written out here: numba's IR inlining of a helper holding this loop made the whole
        # pass twice as slow.)
        for r in range(m):
            ahead = start + r + PREFETCH_DISTANCE
            if ahead < n and (sparse or jumps_at(order, ahead + WEIGHTS_AHEAD)):
                i_ahead = order[ahead]
                if ahead + WEIGHTS_AHEAD < n:
                    prefetch_row(X, order[ahead + WEIGHTS_AHEAD])
                for k in range(K):
                    prefetch_weights(X, i_ahead, W, k)
                    if average and avg_lines:
                        prefetch_weights(X, i_ahead, A, k)
                prefetch_item(codes, i_ahead)
                if has_sw:
                    prefetch_item(sample_weight, i_ahead)
            i = order[start + r]
            sw = sample_weight[i] if has_sw else 1.0
            c = codes[i]
            for k in range(K):
                if prox:
                    prox_catch_up(rule, X, i, W, k, q_prox, last)
                y = code_target(c, k, K, regression)
                p = scale[k] * row_dot(X, i, W, k) + b[k]
                loss_sum += sw * loss_value_p(code, p, y, loss_a)
                G[r, k] = sw * loss_deriv_p(code, p, y, loss_a)
        # (1 - eta lambda) is exactly 0 at Pegasos' first step: w restarts from the batch's
        # gradient (a scale of 0 could not be divided by)
        factor = shrink_factor(rule, eta)
        a_t = 0.0
        if average:
            a_t = averaging_weight(rule, t, eta, avg_start, avg_power)
            n_avg += a_t
        for k in range(K):
            if avg_flush_needed(csum[k], scale[k], factor, scale_min, n_avg):
                sup_flush(A, k, csum, W, sup_idx, sup_n[k])  # before u is folded or dwarfed
            # kernels.weights.shrink_scale, with the sweeps over the support while tracked
            s, q = scale[k] * factor, sq[k]
            if factor <= 0.0:
                if prox:
                    prox_settle(rule, W, k, q_prox, last)
                sup_zero(W, k, sup_idx, sup_n[k])
                s, q = 1.0, 0.0
            elif s < scale_min:
                if prox:
                    prox_settle(rule, W, k, q_prox, last)  # pending thresholds in old units
                sup_scale(W, k, s, sup_idx, sup_n[k])
                s = 1.0
                if keeps_norm:
                    q = sup_sqnorm(W, k, sup_idx, sup_n[k])
            # w = s u, so adding a x to w adds (a / s) x to u.
            cu = -eta / (m * s)
            comp = csum[k] != 0.0  # u is part of the average's sum: A absorbs its changes
            cv = -csum[k]
            g_sum = 0.0
            for r in range(m):
                g = G[r, k]
                if g != 0.0:
                    i = order[start + r]
                    if keeps_norm:
                        if comp:
                            q += row_axpy_sq_comp(X, i, W, k, cu * g, A, cv)
                        else:
                            q += row_axpy_sq(X, i, W, k, cu * g)
                        if sup_n[k] >= 0:
                            sup_n[k] = mark_row(X, i, mark, sup_idx, k, sup_n[k])
                    elif comp:
                        row_axpy_comp(X, i, W, k, cu * g, A, cv)
                    else:
                        row_axpy(X, i, W, k, cu * g)
                    g_sum += g
            s, moved = project(rule, s, q)
            if moved and s < scale_min:
                sup_flush(A, k, csum, W, sup_idx, sup_n[k])
                sup_scale(W, k, s, sup_idx, sup_n[k])
                s = 1.0
                q = sup_sqnorm(W, k, sup_idx, sup_n[k])
            scale[k] = s
            sq[k] = q
            if prox:
                prox_threshold(rule, k, q_prox, eta, s)
            if fit_b and g_sum != 0.0:
                b[k] = intercept_step(rule, b[k], eta, t, g_sum, m)
            if a_t > 0.0:
                csum[k], ab[k], flush = avg_add(csum[k], ab[k], a_t, s, b[k], n_avg)
                if flush:
                    sup_flush(A, k, csum, W, sup_idx, sup_n[k])
        start += m
    for k in range(K):
        if suspend:
            carry[k, 0, 0] = scale[k]
            carry[k, 0, 1] = csum[k]
            carry[k, 1, 1] = 1.0  # (kernels.pairs.settle: to be folded)
            continue
        if average:
            avg_end(A, ab, k, csum, W, n_avg)
        if prox:
            prox_settle(rule, W, k, q_prox, last)
        if scale[k] != 1.0:
            sup_scale(W, k, scale[k], sup_idx, sup_n[k])
    hp[H.T] = t
    hp[H.N_AVG] = n_avg
    return loss_sum


# -- the runner: the pairing of W and its average, and the unit variant, picked per layout -------
def _paired(rule, rows, model, hp, P):
    # One specialisation of the body serves both branches: W and A go in as (strided) views of
    # the same array types as U and V. Two took each CSR pass variant 9-10 s to compile on a
    # cold cache, paid in every test process and every new worker.
    # ``avg_lines`` and the general ``unit`` go in as run-time bools, never as literals: a
    # Python call of the body (the kernel tests compare its variants) types True and False as
    # bool, and then finds the specialisation the passes use instead of compiling its own.
    W, b, A, ab = model
    # (the prox rule keeps no average: its per-coordinate record of the lazy prox sits in A's
    # slot, read before W[k, j] for every entry, and pairs with W as an average does)
    interleaved = (((averages(rule) and hp[H.AVERAGE] != 0.0) or lazy_prox(rule))
                   and A.shape[1] > 0)
    avg_lines = not interleaved
    general = hp.shape[0] < 0  # a run-time False (hp is never empty)
    if interleaved:
        # (hp[PAIRED_IN]: P holds this state's pairs from the previous pass, of W's shape;
        # hp[KEEP_PAIRED]: the next pass takes them from P, so W and A are not written back)
        Q = P if hp[H.PAIRED_IN] != 0.0 else pair_up(W, A, P)
        U, V = pair_views(Q, W)
        loss = stochastic_steps(rule, rows, PassModel(U, b, V, ab), hp, avg_lines, general,
                                carry_view(Q, W))
        if hp[H.KEEP_PAIRED] == 0.0:
            unpair(Q, W, A)
        return loss
    return stochastic_steps(rule, rows, PassModel(W[:, :], b, A[:, :], ab), hp, avg_lines,
                            general, no_carry(P))


def _plain(rule, rows, model, hp, P):
    avg_lines = hp.shape[0] > 0  # a run-time True: dense rows keep W and A apart
    return stochastic_steps(rule, rows, model, hp, avg_lines, not avg_lines, no_carry(P))


def _dense32(rule, rows, model, hp, P):
    avg_lines = hp.shape[0] > 0  # (as in _plain)
    if model.W.shape[0] == 1 and hp[H.BATCH] <= 1.0:
        return stochastic_steps(rule, rows, model, hp, avg_lines, UNIT, no_carry(P))
    return stochastic_steps(rule, rows, model, hp, avg_lines, not avg_lines, no_carry(P))


def run_pass(rule, rows, model, hp, P):
    """One pass of ``rule`` over ``rows``; returns the summed progressive loss.

    For a CSR block with an average, the body runs on the interleaved views of
    :func:`dsvm.kernels.pairs.pair_up` in the scratch P (see
    :func:`dsvm.kernels.pairs.pair_scratch`; copied back at the end); a dense float32 pass
    with one output and one-row steps runs the unit variant. The layout is chosen at compile
    time (an ``overload``): a dense pass never compiles the paired variant, and only a dense
    float32 pass compiles the unit one (its steps are short enough for the loops over outputs
    and batch rows to show, where a CSR step is bound by its cache misses; float32 is what
    datasets store, and each variant costs about 5 s of compilation on a cold cache).
    (This body runs in Python, e.g. with NUMBA_DISABLE_JIT; compiled callers get the overload.)
    """
    if isinstance(rows.X, tuple):
        return _paired(rule, rows, model, hp, P)
    impl = _dense32 if model.W.dtype == np.float32 else _plain
    return impl(rule, rows, model, hp, P)


@overload(run_pass, **overload_options())
def _ol_run_pass(rule, rows, model, hp, P):
    if isinstance(rows.types[0], types.BaseTuple):  # X: a CSR triple
        return _paired
    return _dense32 if model.types[0].dtype == types.float32 else _plain
