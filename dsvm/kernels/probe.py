"""Losses of a few fixed models on a strided sample of a block's rows (the extrapolation probe).

See :mod:`dsvm.solvers.extrapolation`. ``X`` is a dense array or a CSR triple and ``codes``
float64 class indices or real targets (both as in :mod:`dsvm.kernels.passes`, so the probe's
codes are the passes' own array; ``ProbeLoss.regression`` tells which); ``M`` is (P * K,
n_features) float64, P models of K outputs each, ``m`` their (P * K,) intercepts. Rows 0,
stride, 2 * stride, ... are visited; nothing is copied.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dsvm.kernels._jit import njit_serial
from dsvm.kernels.losses import loss_value_p
from dsvm.kernels.rows import row_dot
from dsvm.kernels.weights import code_target


class ProbeLoss(NamedTuple):
    """The probes' loss: ``n_outputs`` K, ``code`` (a LOSS_CODES value) and its ``param``;
    ``regression``: ``codes`` holds real targets, else class indices (as ``hp[REGRESSION]``
    of the passes, :mod:`dsvm.kernels.hparams`)."""

    n_outputs: int
    code: int
    param: float
    regression: bool


@njit_serial
def probe_loss_sums(X, codes, sample_weight, n_rows, stride, M, m, loss, sums):
    """Add to ``sums[0, p]`` the sum over sampled rows (0, stride, ... below ``n_rows``) of
    sw * (loss of model p, summed over its K outputs) and to ``sums[1, p]`` the sum of
    sw * (that loss - model 0's loss)^2 (the paired spread, for a standard error); ``loss``
    a :class:`ProbeLoss`. Returns (weight sum, number of sampled rows)."""
    n_outputs, loss_code, loss_a, regression = loss
    n_probes = M.shape[0] // n_outputs
    row_loss = np.empty(n_probes)
    weight = 0.0
    count = 0
    for i in range(0, n_rows, stride):
        sw = sample_weight[i] if sample_weight.shape[0] > 0 else 1.0
        weight += sw
        count += 1
        c = codes[i]
        row_loss[:] = 0.0
        for r in range(M.shape[0]):
            k = r % n_outputs
            p = row_dot(X, i, M, r) + m[r]
            y = code_target(c, k, n_outputs, regression)
            row_loss[r // n_outputs] += loss_value_p(loss_code, p, y, loss_a)
        for q in range(n_probes):
            sums[0, q] += sw * row_loss[q]
            d = row_loss[q] - row_loss[0]
            sums[1, q] += sw * d * d
    return weight, count
