"""A fast, seeded random permutation (Fisher-Yates driven by splitmix64).

The row order of every chunk is re-drawn every epoch; for 2,000,000 rows NumPy's
``Generator.permutation`` took 0.12 s here, a third of a Pegasos epoch. This kernel draws the
same kind of uniform permutation from a 64-bit seed in a fraction of that. splitmix64 (Steele,
Lea & Flood 2014) is a small, well-tested generator whose outputs pass BigCrush; the modulo's
bias is below n / 2**64, far below anything an SGD pass could notice.
"""

from __future__ import annotations

import numpy as np

from dsvm.kernels._jit import njit_serial

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit_serial
def permutation(n, seed):
    """A uniformly random permutation of 0..n-1 (int64) determined by ``seed`` (uint64).

    n : int, the length.
    seed : np.uint64.
    """
    out = np.arange(n, dtype=np.int64)
    state = np.uint64(seed)
    for i in range(n - 1, 0, -1):
        state = state + _GOLDEN
        z = state
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        z = z ^ (z >> np.uint64(31))
        j = np.int64(z % np.uint64(i + 1))
        tmp = out[i]
        out[i] = out[j]
        out[j] = tmp
    return out


@njit_serial
def expand_runs(runs, segment, n_rows, row_map):
    """The rows of runs of ``segment`` consecutive rows, run ``r`` covering rows
    r * segment .. r * segment + segment - 1 (cut at ``n_rows``), in the order of ``runs``;
    each row i mapped to ``row_map[i]`` (an empty ``row_map``: i itself). int64 (n_rows,).

    What NumPy did with a (n_runs, segment) broadcast, a mask and a gather (three 2,000,000-row
    temporaries per epoch), in one sweep.
    """
    out = np.empty(n_rows, np.int64)
    mapped = row_map.shape[0] > 0
    at = 0
    for q in range(runs.shape[0]):
        lo = runs[q] * segment
        hi = min(lo + segment, n_rows)
        for i in range(lo, hi):
            out[at] = row_map[i] if mapped else i
            at += 1
    return out[:at]
