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

:class:`KFold` cuts the same hashes into k folds instead (``cv=k`` of the grid of alphas,
:mod:`dsvm.training.grid`): row r of chunk c is in fold f iff its hash lies in
[f 2^64 / k, (f+1) 2^64 / k), so every row is in exactly one fold, each fold holds a share
1/k of every chunk (not whole chunks: a sorted store is scored fairly), and the folds are a
pure function of (seed, chunk, row) as the held-out share is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

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


def row_hashes(seed: int, chunk: int, n_rows: int) -> np.ndarray:
    """The uint64 hash of rows 0 .. n_rows-1 of ``chunk``: splitmix64 of the chunk's key
    plus (row + 1) golden-ratio increments, the chunk's key itself splitmix64 of the
    seed's key plus (chunk + 1) increments (splitmix64's own sequence, twice nested)."""
    with np.errstate(over="ignore"):
        seed_key = _mixed(int(seed) ^ _FOLD_STREAM)
        chunk_key = _mixed(int(seed_key) + (int(chunk) + 1) * int(_GOLDEN))
        rows = np.arange(1, int(n_rows) + 1, dtype=np.uint64)
        return splitmix64(chunk_key + rows * _GOLDEN)


class HeldRows:
    """What a set of held-out rows offers besides its ``held_mask``: the rows' positions, and
    the mask of a window of chunks (:class:`RowFold`, :class:`OneFold`)."""

    def held_mask(self, chunk: int, n_rows: int) -> np.ndarray:
        raise NotImplementedError

    def held_rows(self, chunk: int, n_rows: int) -> np.ndarray:
        """The positions (int64, ascending) of ``chunk``'s held-out rows."""
        return np.flatnonzero(self.held_mask(chunk, n_rows)).astype(np.int64)

    def window_mask(self, chunks: list[int], counts: list[int]) -> np.ndarray:
        """The held-out mask of a window of chunks concatenated in the given order (each
        chunk's rows decided on their own: the same as the chunks' masks one by one)."""
        if not chunks:
            return np.zeros(0, bool)
        return np.concatenate([self.held_mask(c, n) for c, n in zip(chunks, counts)])


@dataclass(frozen=True)
class RowFold(HeldRows):
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

    n_splits: ClassVar[int] = 1  # one held-out share (a KFold has k)

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
        """The uint64 hash of rows 0 .. n_rows-1 of ``chunk`` (:func:`row_hashes`)."""
        return row_hashes(self.seed, chunk, n_rows)

    def held_mask(self, chunk: int, n_rows: int) -> np.ndarray:
        """True for the rows of ``chunk`` (``n_rows`` of them) that are held out."""
        return self.hashes(chunk, n_rows) < self.threshold


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


@dataclass(frozen=True)
class KFold:
    """Every row in exactly one of ``n_splits`` folds, a pure function of (seed, chunk, row).

    Parameters
    ----------
    seed : int
        The fit's seed (:func:`dsvm.data.order.draw_seed`).
    n_splits : int
        The number of folds k. Values must be in the range [2, inf).

    Row r of chunk c is in fold f iff ``bounds[f-1] <= h(seed, c, r) < bounds[f]`` (h the
    hash of :class:`RowFold`, the same hash: ``KFold(s, k)``'s fold 0 is about
    ``RowFold(s, 1/k)``'s held rows). The bounds are f 2^64 / k, or, on small data
    (:func:`kfold_for`), the hashes' own quantiles so that the folds have exactly
    round(f n / k) - round((f-1) n / k) rows.
    """

    seed: int
    n_splits: int
    bounds: tuple[int, ...] | None = None  # the k-1 inner bounds, when not f 2^64 / k

    def __post_init__(self) -> None:
        if isinstance(self.n_splits, bool) or not isinstance(self.n_splits, (int, np.integer)) \
                or self.n_splits < 2:
            raise ValueError(f"cv must be an int >= 2 (the number of folds) or None; got "
                             f"{self.n_splits!r}.")

    @property
    def inner_bounds(self) -> np.ndarray:
        """The k-1 hashes where a fold ends and the next begins (uint64, ascending)."""
        if self.bounds is not None:
            return np.array(self.bounds, dtype=np.uint64)
        k = int(self.n_splits)
        return np.array([(f << 64) // k for f in range(1, k)], dtype=np.uint64)

    def fold_of(self, chunk: int, n_rows: int) -> np.ndarray:
        """The fold (int8, 0 .. k-1) of each of rows 0 .. n_rows-1 of ``chunk``."""
        hashes = row_hashes(self.seed, chunk, n_rows)
        return np.searchsorted(self.inner_bounds, hashes, side="right").astype(np.int8)

    def window_folds(self, chunks: list[int], counts: list[int]) -> np.ndarray:
        """The folds of a window of chunks concatenated in the given order."""
        if not chunks:
            return np.zeros(0, np.int8)
        return np.concatenate([self.fold_of(c, n) for c, n in zip(chunks, counts)])

    def only(self, f: int) -> OneFold:
        """Fold ``f`` as a set of held-out rows (what a fit on the other folds leaves out)."""
        if not 0 <= int(f) < int(self.n_splits):
            raise ValueError(f"fold must be in the range [0, {self.n_splits}); got {f!r}.")
        return OneFold(self, int(f))


@dataclass(frozen=True)
class OneFold(HeldRows):
    """The rows of fold ``f`` of a :class:`KFold`, with :class:`RowFold`'s interface (a fit
    that holds them out trains on the other k-1 folds: a fold stack of the grid)."""

    kfold: KFold
    f: int

    n_splits: ClassVar[int] = 1

    @property
    def fraction(self) -> float:
        return 1.0 / int(self.kfold.n_splits)

    def held_mask(self, chunk: int, n_rows: int) -> np.ndarray:
        return self.kfold.fold_of(chunk, n_rows) == self.f


def kfold_for(seed: int, n_splits: int, source: Any) -> KFold:
    """The :class:`KFold` of a fit on ``source``: by each row's hash alone, and on fewer than
    :data:`EXACT_BELOW` rows with the bounds that give the folds exactly round(f n / k) -
    round((f-1) n / k) rows each (the k-quantiles of the rows' hashes: still a function of
    (seed, chunk, row) once the bounds are set). Refused with fewer rows than folds."""
    folds = KFold(seed, n_splits)
    n = int(source.n_samples)
    k = int(n_splits)
    if n < k:
        raise ValueError(f"cv={k}: {k} folds need at least {k} rows; the data has {n}.")
    if n >= EXACT_BELOW:
        return folds
    hashes = np.sort(np.concatenate([row_hashes(seed, c, source.chunk_n_rows(c))
                                     for c in range(source.n_chunks)]))
    # fold f starts at the row of rank round(f n / k): its hash is the bound
    return replace(folds, bounds=tuple(int(hashes[round(f * n / k)]) for f in range(1, k)))


class FoldMasks:
    """The fold labels of the chunks a task has in hand, each hashed once: the task scores a
    chunk's held rows when it reads it and leaves them out of the pass over its window later
    (:class:`dsvm.engine.tasks.StreamPass`). :meth:`forget` after each window keeps it to a
    window's rows (a byte a row). For a :class:`RowFold` (or :class:`OneFold`) the labels are
    the held-out masks; for a :class:`KFold` each row's fold."""

    def __init__(self, fold: RowFold | OneFold | KFold) -> None:
        self.fold = fold
        self.masks: dict[tuple[int, int], np.ndarray] = {}

    @property
    def n_splits(self) -> int:
        return int(self.fold.n_splits)

    def _labels(self, chunk: int, n_rows: int) -> np.ndarray:
        key = (int(chunk), int(n_rows))
        if key not in self.masks:
            fold = self.fold
            self.masks[key] = fold.fold_of(chunk, n_rows) if isinstance(fold, KFold) \
                else fold.held_mask(chunk, n_rows)
        return self.masks[key]

    def held_mask(self, chunk: int, n_rows: int) -> np.ndarray:
        if isinstance(self.fold, KFold):
            raise TypeError("A KFold holds no row out of every model; ask for fold_of.")
        return self._labels(chunk, n_rows)

    def held_rows(self, chunk: int, n_rows: int) -> np.ndarray:
        return np.flatnonzero(self.held_mask(chunk, n_rows)).astype(np.int64)

    def window_mask(self, chunks: list[int], counts: list[int]) -> np.ndarray:
        if not chunks:
            return np.zeros(0, bool)
        return np.concatenate([self.held_mask(c, n) for c, n in zip(chunks, counts)])

    def fold_of(self, chunk: int, n_rows: int) -> np.ndarray:
        if not isinstance(self.fold, KFold):
            raise TypeError("A held-out share has no folds; ask for held_mask.")
        return self._labels(chunk, n_rows)

    def window_folds(self, chunks: list[int], counts: list[int]) -> np.ndarray:
        if not chunks:
            return np.zeros(0, np.int8)
        return np.concatenate([self.fold_of(c, n) for c, n in zip(chunks, counts)])

    def forget(self) -> None:
        self.masks.clear()
