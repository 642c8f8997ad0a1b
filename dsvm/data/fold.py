"""Rows held out of training inside every chunk: a fold that no storage order can bias.

A fold of whole chunks inherits the order the rows were stored in: on a label- or time-sorted
store (w8a as distributed keeps every positive in rows 740-2218, one 4096-row chunk) the
held-out chunks can hold one class only, and every candidate scores 100% on them. A
:class:`RowFold` holds out rows instead, a share of every chunk, so the fold samples the data
as a whole whatever its order.

Which rows: row r of chunk c is held out iff ``h(seed, c, r) / 2^64 < fraction``, with h a
splitmix64 hash (Steele, Lea and Flood, OOPSLA 2014: the finaliser of ``SplittableRandom``),
vectorised in NumPy. It depends on nothing else: not on the streams, the workers, which chunks
share a window or a task, nor on a resume, so every task that reads a chunk agrees on its held
rows without being told, and the training pass and the scoring pass see the same rows. The
number held out is binomial (n, fraction), not exactly ``round(fraction n)``: that is the
price of deciding each row on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

# splitmix64's constants: the golden-ratio increment and the two multipliers of its finaliser.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_FOLD_STREAM = 0x5EED_F01D  # keeps the fold's hashes apart from anything else drawn from seed
_MASK64 = (1 << 64) - 1


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 values (wrapping arithmetic, as in its definition)."""
    z = np.asarray(x, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _MIX1
        z ^= z >> np.uint64(27)
        z *= _MIX2
        z ^= z >> np.uint64(31)
    return z


def _mixed(value: int) -> np.uint64:
    """One 64-bit key from a Python int (any size; kept to its low 64 bits)."""
    return splitmix64(np.array([int(value) & _MASK64], dtype=np.uint64))[0]


@dataclass(frozen=True)
class RowFold:
    """The rows held out of every chunk, a pure function of (seed, chunk, row).

    Parameters
    ----------
    seed : int
        The fit's seed (:func:`dsvm.data.order.draw_seed`).
    fraction : float
        The expected share of rows held out. Values must be in the range (0.0, 1.0).
    """

    seed: int
    fraction: float
    cutoff: int | None = None  # the hash below which a row is held out, when not fraction x 2^64

    def __post_init__(self) -> None:
        if not 0.0 < float(self.fraction) < 1.0:
            raise ValueError(f"The held-out fraction must be in the range (0.0, 1.0); got "
                             f"{self.fraction!r}.")

    @property
    def threshold(self) -> np.uint64:
        """A row is held out iff its hash is below this (fraction x 2^64, or ``cutoff``)."""
        if self.cutoff is not None:
            return np.uint64(self.cutoff)
        return np.uint64(min(int(float(self.fraction) * 2.0 ** 64), _MASK64))

    def hashes(self, chunk: int, n_rows: int) -> np.ndarray:
        """The uint64 hash of rows 0 .. n_rows-1 of ``chunk``: splitmix64 of the chunk's key
        plus (row + 1) golden-ratio increments, the chunk's key itself splitmix64 of the
        seed's key plus (chunk + 1) increments (splitmix64's own sequence, twice nested)."""
        with np.errstate(over="ignore"):
            seed_key = _mixed(int(self.seed) ^ _FOLD_STREAM)
            chunk_key = _mixed(int(seed_key) + (int(chunk) + 1) * int(_GOLDEN))
            rows = np.arange(1, int(n_rows) + 1, dtype=np.uint64)
            return splitmix64(chunk_key + rows * _GOLDEN)

    def held_mask(self, chunk: int, n_rows: int) -> np.ndarray:
        """True for the rows of ``chunk`` (``n_rows`` of them) that are held out."""
        return self.hashes(chunk, n_rows) < self.threshold

    def held_rows(self, chunk: int, n_rows: int) -> np.ndarray:
        """The positions (int64, ascending) of ``chunk``'s held-out rows."""
        return np.flatnonzero(self.held_mask(chunk, n_rows)).astype(np.int64)

    def window_mask(self, chunks: list[int], counts: list[int]) -> np.ndarray:
        """The held-out mask of a window of chunks concatenated in the given order (each
        chunk's rows decided on their own: the same as the chunks' masks one by one)."""
        if not chunks:
            return np.zeros(0, bool)
        return np.concatenate([self.held_mask(c, n) for c, n in zip(chunks, counts)])


# Below this many rows a fold holds out exactly round(fraction n) rows (at least one, and one
# row is always left to train on): the hashes of every row are computed once, at the start of
# the fit. A fold decided row by row holds out a binomial number of rows, and on small data
# (scikit-learn's checks fit 10-30 rows) often none at all.
EXACT_BELOW = 100_000


def fold_for(seed: int, fraction: float, source: Any) -> RowFold:
    """The :class:`RowFold` of a fit on ``source`` (a :class:`~dsvm.data.sources.Source`):
    held out by each row's hash alone, and on fewer than :data:`EXACT_BELOW` rows with the
    cutoff that holds out exactly ``max(1, round(fraction n))`` of them (the same rows
    whatever the grouping: still a function of (seed, chunk, row) once the cutoff is set)."""
    fold = RowFold(seed, fraction)
    n = int(source.n_samples)
    if n >= EXACT_BELOW or n < 2:
        return fold
    hashes = np.concatenate([fold.hashes(c, source.chunk_n_rows(c))
                             for c in range(source.n_chunks)])
    k = min(n - 1, max(1, round(float(fraction) * n)))
    kth = int(np.partition(hashes, k - 1)[k - 1])  # the k-th smallest hash: held, as all below
    return replace(fold, cutoff=min(kth + 1, _MASK64))


class FoldMasks:
    """The held-out masks of the chunks a task has in hand, each hashed once: the task
    scores a chunk's held rows when it reads it and leaves them out of the pass over its
    window later (:class:`dsvm.engine.tasks.StreamPass`). :meth:`forget` after each window
    keeps it to a window's rows (a byte a row)."""

    def __init__(self, fold: RowFold) -> None:
        self.fold = fold
        self.masks: dict[tuple[int, int], np.ndarray] = {}

    def held_mask(self, chunk: int, n_rows: int) -> np.ndarray:
        key = (int(chunk), int(n_rows))
        if key not in self.masks:
            self.masks[key] = self.fold.held_mask(chunk, n_rows)
        return self.masks[key]

    def held_rows(self, chunk: int, n_rows: int) -> np.ndarray:
        return np.flatnonzero(self.held_mask(chunk, n_rows)).astype(np.int64)

    def window_mask(self, chunks: list[int], counts: list[int]) -> np.ndarray:
        if not chunks:
            return np.zeros(0, bool)
        return np.concatenate([self.held_mask(c, n) for c, n in zip(chunks, counts)])

    def forget(self) -> None:
        self.masks.clear()
