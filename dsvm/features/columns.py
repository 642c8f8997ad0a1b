"""The input columns a Gaussian-kernel map is fitted on: the ones the training rows use.

A kernel map's parameters span its input's width: RFF draws a weight row for every input
column, Nystroem's landmarks and BSGD's support vectors are rows of that width, dense. A
hashed input is wide and almost empty: a pandas ``category`` column hashed into 2^18 buckets
next to 30 numbers made a 262,174-wide input of which 33 columns hold values, and RFF's
weights for it were 2 GiB, drawn on the client and shipped in every task (a fit on 398 rows
took 100 s; BSGD's support vectors 354 MB, 338 s). So a map over a wide input is fitted on
the columns the training rows use, plus one more, the *rest* column: a row's values in the
other columns enter as one value, their Euclidean norm.

That is exact for the Gaussian kernel between any row and a training row (landmarks and
support vectors are training rows, zero in the other columns): ``||s - t||^2`` is the same
whether s's other columns come one by one or as their norm. For RFF it is exact in
distribution: a row's projection on the other columns, sum_j w_j s_j with w_j ~ N(0, 2 gamma),
has the law of one such weight times their norm, and a training row has nothing there. A row
whose values in the other columns are 0, every training row, maps as it would without the
subset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, DenseBlock

# Fitted on a subset only where the input is at least this wide and the subset (with the rest
# column) at most half of it: a map over a few thousand columns costs little either way, and
# a narrow input that a sample leaves partly empty keeps the map a user built for it.
MIN_WIDTH = 4096


@dataclass(frozen=True)
class ColumnSubset:
    """Input columns ``columns`` (sorted) of ``n_input_features``, and the rest column last."""

    columns: np.ndarray
    n_input_features: int

    named_in_descriptions = False  # errors name the rows by their origin

    @property
    def n_output_features(self) -> int:
        return int(self.columns.shape[0]) + 1

    def describe(self) -> str:
        return (f"the {self.columns.shape[0]:,} of {self.n_input_features:,} input columns "
                "the training rows use")

    def transform_block(self, block: Block) -> CSRBlock | DenseBlock:
        """``block`` over the subset's columns and the rest column (CSR stays CSR)."""
        if isinstance(block, CSRBlock):
            return self._select_csr(block)
        X = np.asarray(block.X)
        out = np.empty((X.shape[0], self.n_output_features), dtype=X.dtype)
        out[:, :-1] = X[:, self.columns]
        rest = X.copy()
        rest[:, self.columns] = 0
        out[:, -1] = np.sqrt(np.einsum("ij,ij->i", rest, rest))
        return DenseBlock(X=out, y=block.y, sample_weight=block.sample_weight)

    def _select_csr(self, block: CSRBlock) -> CSRBlock:
        where = np.full(self.n_input_features, -1, dtype=np.int64)
        where[self.columns] = np.arange(self.columns.shape[0])
        indices = where[block.indices]
        kept = indices >= 0
        rows = np.repeat(np.arange(block.n_samples), np.diff(block.indptr))
        values = np.asarray(block.data)
        rest_sq = np.bincount(rows[~kept], weights=np.square(values[~kept], dtype=np.float64),
                              minlength=block.n_samples)
        # the kept values in their rows' order (indices rise within a row: they still do), then
        # each row's rest value in the last column
        X = sp.csr_matrix((values[kept], indices[kept], _kept_indptr(block.indptr, kept)),
                          shape=(block.n_samples, self.columns.shape[0]))
        rest = sp.csr_matrix(np.sqrt(rest_sq).astype(values.dtype)[:, None])
        Xr = sp.hstack([X, rest], format="csr", dtype=values.dtype)
        Xr.eliminate_zeros()
        return CSRBlock(indptr=Xr.indptr, indices=Xr.indices, data=Xr.data, y=block.y,
                        n_features=self.n_output_features, sample_weight=block.sample_weight)


def _kept_indptr(indptr: np.ndarray, kept: np.ndarray) -> np.ndarray:
    counts = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])
    return counts[np.asarray(indptr, dtype=np.int64)]


def subset_for(used: np.ndarray) -> ColumnSubset | None:
    """The subset a map is fitted on given which input columns the training rows use (a bool
    mask), or None where the whole input is the better choice (see :data:`MIN_WIDTH`)."""
    width = int(used.shape[0])
    columns = np.flatnonzero(used).astype(np.int64)
    if width < MIN_WIDTH or 2 * (columns.shape[0] + 1) > width:
        return None
    return ColumnSubset(columns, width)

