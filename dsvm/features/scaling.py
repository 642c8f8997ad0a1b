"""Out-of-core feature (and target) scaling: statistics in one pass, applied on the workers.

Stochastic and dual solvers on raw columns (breast_cancer's areas in the thousands, click-log
counts, a target in large units) take steps sized for the largest column and never settle:
raw ``load_breast_cancer()`` trained to 0.629 accuracy against LinearSVC's 0.944 on
standardised data. scikit-learn leaves this to a ``StandardScaler`` in a pipeline, which an
out-of-core fit cannot hold; here the statistics are gathered in one pass by tasks that read
their own chunks (:func:`block_stats`, added in chunk order so that the result does not depend
on how chunks were grouped), every chunk is scaled right after it is read
(:meth:`Scaling.transform_block`), and the fitted model is folded back into the user's units
(:meth:`Scaling.unfold`), so ``coef_`` and ``predict`` need nothing else.

How each layout is scaled (``scale=True``, or ``"auto"`` when some column is "unscaled":
larger than :data:`AUTO_LIMIT` in magnitude, or for a regression when the rows' mean squared
norm is above ``AUTO_LIMIT**2``: :func:`mean_sq_norm`):

- dense rows with an intercept: centred and divided by the standard deviation (StandardScaler);
- dense rows without an intercept: divided by the root mean square (centring would need one);
- sparse rows: divided by the root mean square of the column's stored (nonzero) values, rounded
  up to a power of two (the scaled nonzero values' RMS in (0.5, 1], as max-abs scaling keeps
  well-behaved columns at most 1: MNIST's pixels are divided by 256 either way): zeros stay
  zeros, binary (and +-1 hashed) columns are left as they are, and a numeric column of a
  hashed frame (present in most rows) is scaled as its typical value, not its largest. With
  an intercept, a column stored in at least half the rows (a hashed frame's numbers) is
  centred and divided by its standard deviation, as a dense one is
  (:func:`centred_where_dense`): it is nearly dense already, so centring at most doubles
  what it stores. scikit-learn's sparse-safe scaler, ``MaxAbsScaler``,
  divides by the largest magnitude instead: one outlier (an income of 4e6 among values near
  2e4) then shrinks the whole column towards zero and the penalty silences it (0.70 test
  accuracy against 0.86 for these columns standardised); ``StandardScaler(with_mean=False)``
  divides by the standard deviation with the zeros counted, which multiplies a feature seen in
  one row in 10^5 by 300. The power of two makes the scale exact in floating point and
  independent of the order in which the chunks' sums were added (the sums are merged as they
  come: one array per statistic, whatever the chunk count). Datasets written before these
  sums were kept fall back to the largest magnitude (MaxAbsScaler);
- a regression target likewise (centred when there is an intercept), and ``epsilon`` with it.

The penalty applies to the scaled model, as it does for a model trained in a pipeline after a
scaler: ``alpha`` means the same on every column whatever its units.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.data.stats import FeatureStats, block_stats, merge_stats

__all__ = ["FeatureStats", "Scaling", "block_stats", "choose_scaling", "merge_stats"]

# "auto" scales when a column (or a regression target) reaches values above this in magnitude.
# Binary and one-hot columns (1), tf-idf and normalised rows (<= 1), standardised columns
# (a few units), pixel intensities 0-16 (digits, where raw columns already train to 0.933 against
# LinearSVC's 0.91) and log-transformed click counts (< 16 up to 8.9e6 events) stay as they
# are; raw measurements (breast_cancer: 4254), counts and ids do not.
AUTO_LIMIT = 16.0

# Columns whose spread is below this (constant columns) are left unscaled, as scikit-learn does.
TINY = 1e-12


@dataclass
class Scaling:
    """``x' = (x - shift) * factor`` per column (shift None: no centring) and, for a regression,
    ``y' = (y - y_shift) / y_scale``. Applied to every chunk as it is read; ``unfold`` turns a
    model of the scaled rows into the same model of the raw rows."""

    kind: str  # "standard", "rms", "stored_rms" or "max_abs"
    factor: np.ndarray  # 1 / the column's scale (1 for constant columns)
    shift: np.ndarray | None = None
    y_shift: float = 0.0
    y_scale: float = 1.0
    largest: tuple[int, float] = (0, 0.0)  # (column, its largest magnitude), for the log

    named_in_descriptions = False  # errors name scaled rows by their origin only

    @property
    def n_input_features(self) -> int:
        return int(self.factor.shape[0])

    @property
    def n_output_features(self) -> int:
        return self.n_input_features

    @property
    def scales_features(self) -> bool:
        return self.kind != "none"

    @property
    def scales_target(self) -> bool:
        return self.y_shift != 0.0 or self.y_scale != 1.0

    def transform_block(self, block: Block) -> Block:
        """The block scaled (a new block; the one read is never written to)."""
        y = block.y if not self.scales_target else (block.y - self.y_shift) / self.y_scale
        if isinstance(block, CSRBlock):
            if not self.scales_features:
                return replace(block, y=y)
            data = block.data * self.factor[block.indices].astype(block.data.dtype)
            scaled = CSRBlock(indptr=block.indptr, indices=block.indices, data=data, y=y,
                              n_features=block.n_features, sample_weight=block.sample_weight)
            return scaled if self.shift is None else self._centred(scaled)
        X = block.X
        if not self.scales_features:
            return DenseBlock(X=X, y=y, sample_weight=block.sample_weight)
        if self.shift is not None:
            X = X - self.shift.astype(X.dtype)
        X = np.ascontiguousarray(X * self.factor.astype(X.dtype))
        return DenseBlock(X=X, y=y, sample_weight=block.sample_weight)

    def _centred(self, block: CSRBlock) -> CSRBlock:
        """A scaled CSR block with ``-shift * factor`` added to the centred columns of every
        row (stored there or not: a row that lacks one has the value 0 in it)."""
        assert self.shift is not None
        columns = np.flatnonzero(self.shift).astype(block.indices.dtype)
        n, k = block.n_samples, columns.shape[0]
        dtype = block.data.dtype  # (a float64 offset would make the sum float64: a copy more)
        offset = sp.csr_matrix(
            (np.tile(-(self.shift * self.factor)[columns].astype(dtype), n),
             np.tile(columns, n), np.arange(0, n * k + 1, k)), shape=(n, block.n_features))
        X = block.to_matrix() + offset  # (scipy adds sorted rows in one merge, in C)
        return CSRBlock(indptr=X.indptr, indices=X.indices, data=X.data, y=block.y,
                        n_features=block.n_features, sample_weight=block.sample_weight)

    def unfold(self, coef: np.ndarray, intercept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(coef, intercept) on raw rows of a model of the scaled rows, in float64 (a scaling of
        the target only leaves the coefficients' columns as they are: a kernel model's)."""
        coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
        if self.scales_features:
            coef = coef * self.factor
        intercept = np.asarray(intercept, dtype=np.float64).copy()
        if self.shift is not None:
            intercept = intercept - coef @ self.shift
        return coef * self.y_scale, intercept * self.y_scale + self.y_shift

    def fold(self, coef: np.ndarray, intercept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The inverse of :meth:`unfold`: a model of raw rows as a model of the scaled rows
        (a warm start)."""
        coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
        intercept = np.asarray(intercept, dtype=np.float64) - self.y_shift
        if self.shift is not None:
            intercept = intercept + coef @ self.shift
        if self.scales_features:
            coef = coef / np.where(self.factor != 0, self.factor, 1.0)
        return coef / self.y_scale, intercept / self.y_scale

    def describe(self, afterwards: str = "the model is folded back into raw units") -> str:
        """What was scaled, then ``afterwards`` (what becomes of the model)."""
        if not self.scales_features:
            return (f"target scaled: centred by {self.y_shift:.4g} and divided by "
                    f"{self.y_scale:.4g}; {afterwards}")
        how = {"standard": "centred and divided by their standard deviations",
               "rms": "divided by their root mean squares",
               "stored_rms": "divided by the root mean squares of their nonzero values "
                             "(rounded up to powers of two; binary columns unchanged)" +
                             ("; those stored in half the rows or more centred and divided "
                              "by their standard deviations" if self.shift is not None else ""),
               "max_abs": "divided by their largest magnitudes"}[self.kind]
        column, value = self.largest
        line = (f"features scaled: {self.n_input_features:,} columns {how} (the largest raw "
                f"value, {value:.4g}, is in column {column}); {afterwards}")
        if self.scales_target:
            line += (f"; the target centred by {self.y_shift:.4g} and divided by "
                     f"{self.y_scale:.4g}")
        return line

    def meta(self) -> dict[str, Any]:
        """A JSON description (model files and ``dsvm info``)."""
        return {"kind": self.kind, "n_features": self.n_input_features,
                "largest_column": int(self.largest[0]), "largest_value": float(self.largest[1]),
                "target_shift": float(self.y_shift), "target_scale": float(self.y_scale)}


def choose_scaling(stats: FeatureStats, mode: Any, *, fit_intercept: bool,
                   regression: bool) -> Scaling | None:
    """The scaling ``scale=mode`` asks for on data with ``stats`` (None: none)."""
    rows, col_sum, col_sq, y_sum, y_sq = stats.totals()
    if mode is False or rows == 0:
        return None
    column = int(np.argmax(stats.max_abs)) if stats.max_abs.size else 0
    largest = float(stats.max_abs[column]) if stats.max_abs.size else 0.0
    scale_x = (mode is True or largest > AUTO_LIMIT
               or (regression and mean_sq_norm(stats, rows, col_sq) > AUTO_LIMIT ** 2))
    scale_y = regression and (mode is True or stats.y_max_abs > AUTO_LIMIT)
    if not (scale_x or scale_y):
        return None
    n = float(rows)
    kind, factor, shift = "none", np.ones_like(stats.max_abs), None
    if scale_x:
        if stats.sparse and stats.stored_count is not None:
            kind, spread = "stored_rms", stored_rms(stats.stored_count, stats.stored_sum_sq)
            if fit_intercept:
                shift, spread = centred_where_dense(stats, rows, spread)
        elif stats.sparse or col_sum is None:
            kind, spread = "max_abs", stats.max_abs
        elif fit_intercept:
            shift = col_sum / n
            kind, spread = "standard", _root(col_sq / n - shift * shift)
        else:
            kind, spread = "rms", _root(col_sq / n)
        factor = np.where(spread > TINY, 1.0 / np.where(spread > TINY, spread, 1.0), 1.0)
    y_shift, y_scale = 0.0, 1.0
    if scale_y:
        y_shift = y_sum / n if fit_intercept else 0.0
        y_spread = float(np.sqrt(max(y_sq / n - y_shift * y_shift, 0.0)))
        y_scale = y_spread if y_spread > TINY else 1.0
    return Scaling(kind=kind, factor=factor, shift=shift, y_shift=y_shift, y_scale=y_scale,
                   largest=(column, largest))


def mean_sq_norm(stats: FeatureStats, rows: int, col_sq: np.ndarray | None) -> float:
    """The rows' mean squared norm (0 where the sums were not gathered).

    ``"auto"`` also scales a regression's columns when this is above ``AUTO_LIMIT**2``, each
    column being within the limit: raw ``load_digits()`` (64 pixels of 0-16, a mean of
    3,844) trained every solver's epsilon-insensitive regression to a training R^2 of -200
    and worse, where standardised columns reach Ridge's 0.4-0.6. A classifier's hinge stops
    pushing once a row's margin is met and trains such rows as they are (0.93 on digits);
    a regression's loss pushes on every row outside the tube, by a step times ``||x||^2``."""
    if rows == 0:
        return 0.0
    if col_sq is not None:
        return float(np.sum(col_sq)) / rows
    if stats.stored_sum_sq is not None:
        return float(np.sum(stats.stored_sum_sq)) / rows
    return 0.0


def centred_where_dense(stats: FeatureStats, rows: int,
                       spread: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """(shift, spread) of sparse rows whose columns stored in at least half the rows (a hashed
    frame's numbers) are centred and divided by their standard deviation, as a dense column
    is (the rows that lack one get a value there: at most as many as it stores); the others
    as ``spread`` has them (shift None: no such column, or the sums were not gathered).

    Raw breast_cancer with one hashed category column trained NESVM to 0.877 with its 30
    numbers divided by their RMS only (0.959 standardised): all positive, they add a
    direction the steps cannot resolve. Both values are rounded to powers of two (the mean to
    1/4096 of the deviation's), as :func:`stored_rms` rounds its scale: the same bits
    whatever the order in which the chunks' sums were added."""
    if stats.stored_sum is None or stats.stored_sum_sq is None or stats.stored_count is None:
        return None, spread
    full = 2 * stats.stored_count >= rows
    # (the zeros a column does not store count in its mean and deviation)
    mean = np.where(full, stats.stored_sum / float(rows), 0.0)
    std = _root(np.where(full, stats.stored_sum_sq / float(rows), 0.0) - mean * mean)
    full &= std > TINY  # (a constant column is left as it is)
    if not full.any():
        return None, spread
    power = np.ceil(np.log2(np.where(full, std, 1.0)))
    step = np.exp2(power - 12)
    shift = np.where(full, np.round(mean / step) * step, 0.0)
    return shift, np.where(full, np.exp2(power), spread)


def stored_rms(count: np.ndarray, sum_sq: Any) -> np.ndarray:
    """Per column, the root mean square of the stored values rounded up to a power of two
    (5000 -> 8192, 1 -> 1), 0 for a column with none. Rounded to the nearest power instead
    (MNIST's pixels, RMS ~180, divided by 128 rather than 256), the model of 10 digits lost a
    point (0.899 against 0.909 with max-abs scaling or this rounding)."""
    seen = count > 0
    rms = np.sqrt(np.divide(sum_sq, count, out=np.zeros(count.shape), where=seen))
    positive = seen & (rms > 0)
    power = np.ceil(np.log2(np.where(positive, rms, 1.0)))
    return np.where(positive, np.exp2(power), 0.0)


def _root(values: np.ndarray) -> np.ndarray:
    return np.sqrt(np.maximum(values, 0.0))
