"""Losses of a few fixed models on a strided sample of a block's rows (the extrapolation probe).

See :mod:`dsvm.solvers.extrapolation`. ``X`` is a dense array or a CSR triple (as in
:mod:`dsvm.kernels.passes`); ``M`` is (P * K, n_features) float64, P models of K outputs each,
``m`` their (P * K,) intercepts. Rows 0, stride, 2 * stride, ... are visited; nothing is copied.
"""

from __future__ import annotations

from dsvm.kernels._jit import njit_serial
from dsvm.kernels.losses import loss_value_p
from dsvm.kernels.rows import row_dot
from dsvm.kernels.weights import ovr_target


@njit_serial
def probe_loss_sums(X, n_rows, codes, sample_weight, stride, M, m, n_outputs, loss_code,
                    loss_a, out):
    """Add to ``out[p]`` the sum over sampled rows and outputs of sw * loss of model p;
    return the sum of the sampled rows' weights."""
    weight = 0.0
    for i in range(0, n_rows, stride):
        sw = sample_weight[i] if sample_weight.shape[0] > 0 else 1.0
        weight += sw
        c = codes[i]
        for r in range(M.shape[0]):
            k = r % n_outputs
            p = row_dot(X, i, M, r) + m[r]
            out[r // n_outputs] += sw * loss_value_p(loss_code, p, ovr_target(c, k, n_outputs),
                                                     loss_a)
    return weight
