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

# A window's rows are dealt into rounds in blocks of ROUND_BLOCK_ROWS // ROUND_RUN_ROWS runs
# of consecutive rows (see dsvm.kernels.shuffle.interleave_rounds): small enough that rows
# stored together (w8a's positives) are spread over the whole pass.
ROUND_BLOCK_ROWS = 16
# A run holds at least this many consecutive stored rows (dividing ROUND_BLOCK_ROWS)...
ROUND_RUN_ROWS = 4
# ... and as many as make this many bytes, counting a row at its dense size (n_features x
# itemsize). A dense step reads its whole row, so a pass is a stream over the rows, and a jump
# to another place costs DRAM and TLB misses that the hardware prefetchers do not hide unless
# the rows after it are read in order. The size is the dense one, not the stored one, so that
# the same data stored dense or CSR is visited in the same order and gives the same model; a
# CSR row of a narrow model is read like a dense one (its weights stay in cache), and a wide
# model (n_features x itemsize above RUN_BYTES / ROUND_RUN_ROWS) gets runs of ROUND_RUN_ROWS,
# where a step's cost is in its gathers from the weights wherever its row lies.
RUN_BYTES = 64 * 1024
# ... but a chunk keeps at least this many runs, so that its rows still come from many places
# of it in any stretch of steps: label-sorted a9a in 2,000-row chunks (bench_order, 10 epochs,
# seeds 0/1) lost 1.35 points against its shuffled copy with runs of 31 rows read one after
# the other, 0.73-0.76 with runs of 31 read 8, 32 or 64 at a time, and 0.43 with runs of 4
# (this cap), as before runs were sized by bytes; 0.71 with runs of 15 read 4 at a time (a cap
# of 128 runs a chunk), 0.27 with runs of 4. 65,536-row chunks of 400-byte rows get runs of 128 rows
# (51 KB). Longer runs in large chunks trained as well where measured (runs of 512, 4 open:
# a9a tiled 32 times and sorted, 65,536-row chunks, 0.28 points; a generated dense set, 0.06),
# but no rule on a chunk's rows gives them to those and keeps a9a's 2,000-row chunks at 4.
MIN_CHUNK_RUNS = 512
# Runs are read this many at a time, their rows interleaved one by one at random: consecutive
# steps come from different places while each run still streams from memory. This machine's
# hardware prefetchers follow 4 interleaved streams of rows but not 8. A plain numba Pegasos
# pass over 2,000,000 x 100 float32 rows in 65,536-row chunks (one window, best of 9, under
# load): all rows in stored order 1.00x; runs of 128 rows 2 open 0.62x, 4 open 0.67x, 8 open
# 0.43x; runs of 512, 4 open 0.87x, 8 open 0.53x (earlier, quieter: runs of 4 rows one after
# the other 0.18 s against 0.055 s in stored order). bench_order with 4 open against 8: a9a
# sorted 0.27 points from its shuffled copy (8: 0.43), w8a 0.32 (0.42), the drifting stream
# -0.10 (-0.08). dsvm's own averaged Pegasos pass, which prefetches each row 8 steps ahead
# (dsvm.kernels.prefetch), gained only 1-3% (0.080 -> 0.078 s; 0.064 s in stored order): the
# misses were mostly hidden from it already (benchmarks/RESULTS.md, "Kernels: what the
# numbers above say").
ROUND_STREAMS = 4


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
                 starts: np.ndarray | list[int] | None = None, row_bytes: int = 0) -> np.ndarray:
    """The order of the rows of a window of chunks holding ``counts`` rows each (concatenated in
    that order), drawn from (seed, epoch, the window's first chunk): rounds of one slice of every
    chunk, the rounds in a random order, inside each its runs of stored rows in a random order,
    ``ROUND_STREAMS`` at a time with their rows interleaved at random
    (:func:`dsvm.kernels.shuffle.interleave_rounds`). Row r of chunk j is given as
    ``starts[j] + r`` (None: as its row in the concatenated window): where each chunk's rows
    lie in an array that holds them all, in any order and with gaps (a span of in-memory
    views, :func:`dsvm.solvers.passes.span_of_views`), whose numbering the order is then in,
    without a map of one int64 per row. Runs of :func:`run_rows` rows (``row_bytes``: a row's
    dense size, n_features x itemsize, whatever the layout; 0: runs of ``ROUND_RUN_ROWS``)."""
    run = run_rows(row_bytes, counts)
    block = run * (ROUND_BLOCK_ROWS // ROUND_RUN_ROWS)
    at = np.empty(0, np.int64) if starts is None else np.asarray(starts, np.int64)
    if at.size and at.shape != (len(counts),):
        raise ValueError(f"starts has shape {at.shape}; expected one per chunk "
                         f"({len(counts)},).")
    return interleave_rounds(np.asarray(counts, np.int64), block, run, ROUND_STREAMS,
                             _row_key(seed, epoch, chunk), at)


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
