"""Weighted means of the streams' arrays, each element in one pass: the combine's O(d) work.

At the root of an epoch's combine (:mod:`dsvm.combine.averaging`) the next iterate is
sum_j r_j w_j / sum_j r_j and the next average (sum_j n_j abar_j - (S - 1) n_0 abar_0) / n.
Written with NumPy, every term is a fresh model-sized float64 array: at 2^22 features and 2
streams the combine and finalize made seven of them and took 72 ms an epoch, in-process
(54 ms of it making the streams' float64 products). Here each output element is computed from
the inputs in one pass, in float64 and in the order of the NumPy expressions it replaces, and
rounded once into the output's dtype: the same values, bit for bit (compiled without the
fast-math flags that the pass kernels use, :func:`~dsvm.kernels._jit.njit_exact`).
"""

from __future__ import annotations

import numpy as np

from dsvm.kernels._jit import njit_exact


@njit_exact
def weighted_mean(parts, weights, start, start_weight, start_copies, total, out):
    """out[i] = (sum_j parts[j][i] * weights[j] - (start_weight * start[i]) * start_copies)
    / total, in float64, the sum taken in the order of ``parts``, rounded into ``out``'s dtype.

    ``parts``: a tuple of 1-D arrays of one dtype, each as long as ``out``; ``start``: a 1-D
    array as long as ``out``, or an empty one for no subtracted term. A ``total`` of 1.0
    leaves the sum as it is (x / 1.0 is exact): the pooled sums of a non-root combine."""
    subtract = start.shape[0] > 0
    for i in range(out.shape[0]):
        acc = np.float64(parts[0][i]) * weights[0]
        for j in range(1, len(parts)):
            acc += np.float64(parts[j][i]) * weights[j]
        if subtract:
            acc -= (start_weight * np.float64(start[i])) * start_copies
        out[i] = acc / total
