"""Chunk and row orders, and the seeds behind them.

Every random choice of a fit is a pure function of (seed, epoch, chunk): the chunk order of an
epoch, how chunks are dealt to streams, and the row permutation inside each chunk. A task that is
re-run (a lost worker, a retry) therefore redoes exactly the same work, and a fit with the same
seed gives the same model whatever worker runs which task.
"""

from __future__ import annotations

import numpy as np

from dsvm.kernels.shuffle import permutation

# Distinct stream names for SeedSequence so the chunk order and the row orders never share draws.
_CHUNK_ORDER = 0
_ROW_ORDER = 1


def draw_seed(random_state: int | np.random.Generator | None) -> int:
    """One 63-bit seed for a whole fit (drawn once, on the client)."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if random_state is None:
        return int(np.random.default_rng().integers(0, 2**63 - 1))
    return int(random_state)


def epoch_chunk_order(seed: int, epoch: int, n_chunks: int) -> np.ndarray:
    """The order in which an epoch visits the chunks (re-drawn every epoch)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, _CHUNK_ORDER, epoch]))
    return rng.permutation(n_chunks)


def deal_chunks(order: np.ndarray, n_streams: int) -> list[list[int]]:
    """Deal chunks to ``n_streams`` streams like cards, so every stream gets a similar share."""
    return [[int(c) for c in order[s::n_streams]] for s in range(n_streams)]


def row_order(seed: int, epoch: int, chunk: int, n_rows: int) -> np.ndarray:
    """The permutation of rows inside one chunk for one epoch (int64).

    Drawn by a numba Fisher-Yates (:func:`dsvm.kernels.shuffle.permutation`) from a 64-bit seed
    that SeedSequence derives from (seed, epoch, chunk): NumPy's permutation cost a third of a
    Pegasos epoch.
    """
    key = np.random.SeedSequence([seed, _ROW_ORDER, epoch, chunk]).generate_state(1, np.uint64)[0]
    return permutation(n_rows, key)
