"""A fast, seeded random permutation (Fisher-Yates driven by splitmix64).

The row order of every chunk is re-drawn every epoch; for 2,000,000 rows NumPy's
``Generator.permutation`` took 0.12 s here, a third of a Pegasos epoch. This kernel draws the
same kind of uniform permutation from a 64-bit seed in a fraction of that. splitmix64 (Steele,
Lea & Flood 2014) is a small, well-tested generator whose outputs pass BigCrush; the modulo's
bias is below n / 2**64, far below anything an SGD pass could notice.
"""

from __future__ import annotations

import numpy as np

from dsvm.kernels._jit import njit_inline, njit_serial

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
    shuffle_range(out, 0, n, np.uint64(seed))
    return out


@njit_inline
def next_draw(state):
    """One step of splitmix64: (the new state, a uniform 64-bit draw)."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return state, z ^ (z >> np.uint64(31))


@njit_serial
def shuffle_range(out, lo, hi, state):
    """Fisher-Yates over ``out[lo:hi]`` in place, drawing from splitmix64 started at ``state``
    (np.uint64); returns the generator's state after the draws."""
    for i in range(hi - 1, lo, -1):
        state, z = next_draw(state)
        j = lo + np.int64(z % np.uint64(i - lo + 1))
        tmp = out[i]
        out[i] = out[j]
        out[j] = tmp
    return state


@njit_serial
def interleave_rounds(counts, block_rows, run_rows, streams, seed, starts):
    """The rows of a window of chunks (chunk j holding ``counts[j]`` consecutive rows of the
    concatenated window) in rounds, row r of chunk j given as ``starts[j] + r`` (an empty
    ``starts``: the concatenated window's numbering). int64 (sum(counts),).

    Every chunk is cut into blocks of ``block_rows`` consecutive rows, and its blocks, in a
    random order, are dealt into ``len(counts)`` rounds of (nearly) equal shares; the rounds
    are visited in a random order. Inside a round, its blocks' runs of ``run_rows`` consecutive
    rows are taken in a uniform random order, ``streams`` of them at a time, and their rows
    interleaved one by one at random: each step draws one of the open runs and takes its next
    row, and a run that ends is replaced by the next one. A round thus holds about one chunk's
    rows, drawn from every chunk of the window and from all over each chunk; each run is read
    in stored order, so a pass streams ``streams`` sequences of rows from memory (which the
    hardware prefetches), while consecutive steps come from different places. Determined by
    ``seed`` (np.uint64).
    """
    n_chunks = counts.shape[0]
    row_starts = np.zeros(n_chunks + 1, np.int64)
    block_starts = np.zeros(n_chunks + 1, np.int64)
    for j in range(n_chunks):
        row_starts[j + 1] = row_starts[j] + counts[j]
        block_starts[j + 1] = block_starts[j] + (counts[j] + block_rows - 1) // block_rows
    rounds = np.arange(n_chunks, dtype=np.int64)
    state = shuffle_range(rounds, 0, n_chunks, np.uint64(seed))
    blocks = np.empty(block_starts[n_chunks], np.int64)
    for j in range(n_chunks):  # each chunk's blocks in a random order
        for b in range(block_starts[j], block_starts[j + 1]):
            blocks[b] = b - block_starts[j]
        state = shuffle_range(blocks, block_starts[j], block_starts[j + 1], state)
    n_rows = row_starts[n_chunks]
    mapped = starts.shape[0] > 0
    out = np.empty(n_rows, np.int64)
    runs = np.empty(n_rows, np.int64)  # a round's runs, by their first row
    ends = np.empty(n_rows, np.int64)
    at = 0
    for q in range(n_chunks):
        r = rounds[q]
        n_runs = 0
        for j in range(n_chunks):
            n_blocks = block_starts[j + 1] - block_starts[j]
            for b in range(n_blocks * r // n_chunks, n_blocks * (r + 1) // n_chunks):
                lo = row_starts[j] + blocks[block_starts[j] + b] * block_rows
                for first in range(lo, min(lo + block_rows, row_starts[j + 1]), run_rows):
                    runs[n_runs] = first
                    n_runs += 1
        state = shuffle_range(runs, 0, n_runs, state)
        for k in range(n_runs):
            # a run ends at its block's end (blocks start at multiples of block_rows in their
            # chunk, which run_rows divides) or at its chunk's end
            j = np.searchsorted(row_starts, runs[k], side="right") - 1
            ends[k] = min(runs[k] + run_rows, row_starts[j + 1])
            if mapped:  # a run lies in one chunk: moved whole, its rows need no map each
                shift = starts[j] - row_starts[j]
                runs[k] += shift
                ends[k] += shift
        state, at = _merge_runs(runs, ends, n_runs, streams, state, out, at)
    return out


@njit_serial
def _merge_runs(runs, ends, n_runs, streams, state, out, at):
    """Write the rows of runs ``[runs[k], ends[k])`` (k < n_runs) to ``out`` from ``at``:
    ``streams`` runs open at a time, in the order given, each step taking the next row of an
    open run drawn uniformly. Returns (the generator's state, the new ``at``)."""
    cur = np.empty(streams, np.int64)
    end = np.empty(streams, np.int64)
    n_open = 0
    taken = 0
    while n_open < streams and taken < n_runs:
        cur[n_open], end[n_open] = runs[taken], ends[taken]
        n_open += 1
        taken += 1
    while n_open > 0:
        state, z = next_draw(state)
        # the high 32 bits scaled to [0, n_open): no division, and a bias below 2^-28
        c = np.int64(((z >> np.uint64(32)) * np.uint64(n_open)) >> np.uint64(32))
        i = cur[c]
        out[at] = i
        at += 1
        cur[c] = i + 1
        if cur[c] == end[c]:
            if taken < n_runs:
                cur[c], end[c] = runs[taken], ends[taken]
                taken += 1
            else:
                n_open -= 1
                cur[c], end[c] = cur[n_open], end[n_open]
    return state, at
