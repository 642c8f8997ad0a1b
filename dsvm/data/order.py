"""Chunk and row orders, and the seeds behind them.

Every random choice of a fit is a pure function of (seed, epoch, chunk): the chunk order of an
epoch, how chunks are dealt to streams, and the row permutation inside each chunk. A task that is
re-run (a lost worker, a retry) therefore redoes exactly the same work, and a fit with the same
seed gives the same model whatever worker runs which task.
"""

from __future__ import annotations

import numpy as np

from dsvm.kernels.shuffle import interleave_rounds, permutation

# Distinct stream names for SeedSequence so the chunk order and the row orders never share draws.
_CHUNK_ORDER = 0
_ROW_ORDER = 1

# A window's rows are dealt into rounds in blocks of this many consecutive rows (see
# dsvm.kernels.shuffle.interleave_rounds): a few KB of neighbouring rows that share cache
# lines and pages, small enough that rows stored together (w8a's positives) are spread over
# the whole pass. Measured in benchmarks/bench_order.py.
ROUND_BLOCK_ROWS = 16
# Inside a round, rows go in runs of this many consecutive stored rows (dividing
# ROUND_BLOCK_ROWS): a run streams from memory, where single rows in a random order cost a
# cache miss each (2,000,000 x 100 float32: 0.19 s an epoch with single rows, 0.14 s with runs
# of 4 over the whole window).
ROUND_RUN_ROWS = 4
# Rows are visited in runs of at least this many bytes of consecutive stored rows, counting a
# row at its dense size (n_features x itemsize), in blocks of ROUND_BLOCK_ROWS // ROUND_RUN_ROWS
# runs. A dense step reads its whole row, so a pass is a stream over the rows, and each jump to
# another run costs DRAM and TLB misses that the hardware prefetchers do not hide. One averaged
# Pegasos pass over a window of 8 chunks of 250,000 x 100 float32 rows (400 bytes): runs of 4
# rows 0.19 s, 16 KB 0.11 s, 64 KB 0.075 s, 256 KB 0.060 s, 1 MB 0.058 s; all rows in stored
# order 0.056 s. The dense size, not the stored one, so that the same data stored dense or CSR
# is visited in the same order and gives the same model; a CSR row of a narrow model is read
# like a dense one (its weights stay in cache), and a wide model (n_features x itemsize above
# RUN_BYTES / ROUND_RUN_ROWS) gets runs of ROUND_RUN_ROWS, where a step's cost is in its
# gathers from the weights wherever its row lies.
RUN_BYTES = 256 * 1024
# ... but a chunk keeps at least this many runs, so that small chunks are still visited in a
# random order of small pieces (2,000 rows of 20 float32 features: runs of 31 rows, not 3,277).
MIN_CHUNK_RUNS = 64


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
    return permutation(n_rows, _row_key(seed, epoch, chunk))


def window_order(seed: int, epoch: int, chunk: int, counts: list[int],
                 row_map: np.ndarray | None = None, row_bytes: int = 0) -> np.ndarray:
    """The order of the rows of a window of chunks holding ``counts`` rows each (concatenated in
    that order), drawn from (seed, epoch, the window's first chunk): rounds of one slice of every
    chunk, the rounds and the runs of stored rows inside each in random orders
    (:func:`dsvm.kernels.shuffle.interleave_rounds`); row i given as ``row_map[i]``. Runs of
    :func:`run_rows` rows (``row_bytes``: a row's dense size, n_features x itemsize, whatever
    the layout; 0: runs of ``ROUND_RUN_ROWS``)."""
    empty = np.empty(0, np.int64)
    run = run_rows(row_bytes, counts)
    block = run * (ROUND_BLOCK_ROWS // ROUND_RUN_ROWS)
    return interleave_rounds(np.asarray(counts, np.int64), block, run,
                             _row_key(seed, epoch, chunk), empty if row_map is None else row_map)


def run_rows(row_bytes: int, counts: list[int]) -> int:
    """Rows per run of a window of chunks holding ``counts`` rows of ``row_bytes`` each at their
    dense size: enough for ``RUN_BYTES`` (at least ``ROUND_RUN_ROWS``), but never so many
    that the largest chunk has fewer than ``MIN_CHUNK_RUNS`` runs, or fewer blocks than the
    window has rounds (one per chunk): every round must still draw from all over every
    chunk."""
    if row_bytes <= 0:
        return ROUND_RUN_ROWS
    runs_per_block = ROUND_BLOCK_ROWS // ROUND_RUN_ROWS
    want = -(-RUN_BYTES // row_bytes)
    cap = max(counts, default=0) // max(MIN_CHUNK_RUNS, runs_per_block * len(counts))
    return max(ROUND_RUN_ROWS, min(want, cap))


def _row_key(seed: int, epoch: int, chunk: int) -> np.uint64:
    return np.random.SeedSequence([seed, _ROW_ORDER, epoch, chunk]).generate_state(1, np.uint64)[0]
