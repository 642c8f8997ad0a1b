"""The one-pass CSR column statistics (dsvm.kernels.column_stats) against NumPy's
scatters, bit for bit: the writer's and a fit's statistics must agree, and so must a dataset
written before and after the kernel replaced them."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm.kernels.column_stats import add_column_stats


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_column_stats_are_numpys_bit_for_bit(dtype, index_dtype):
    rng = np.random.default_rng(0)
    d = 500
    indices = rng.integers(0, d - 10, 40_000).astype(index_dtype)  # the last columns unseen
    data = (rng.standard_cauchy(40_000) * 100).astype(dtype)  # heavy tails, both signs
    max_abs, count, sum_sq, total = np.zeros(d), np.zeros(d, np.int64), np.zeros(d), np.zeros(d)
    add_column_stats(indices, data, max_abs, count, sum_sq, total)
    add_column_stats(indices[:7], data[:7], max_abs, count, sum_sq, total)  # it adds to them
    values = np.abs(data.astype(np.float64))
    expected_max = np.zeros(d)
    np.maximum.at(expected_max, indices, values)
    both = np.concatenate([indices, indices[:7]])
    both_values = np.concatenate([values, values[:7]])
    np.testing.assert_array_equal(max_abs, expected_max)
    np.testing.assert_array_equal(count, np.bincount(both, minlength=d))
    np.testing.assert_array_equal(sum_sq, np.bincount(both, weights=both_values ** 2,
                                                      minlength=d))
    signed = np.concatenate([data, data[:7]]).astype(np.float64)
    np.testing.assert_array_equal(total, np.bincount(both, weights=signed, minlength=d))
    assert count[-10:].sum() == 0 and sum_sq[-10:].sum() == 0


def test_chunks_added_in_place_are_their_merged_statistics_bit_for_bit():
    """A task's (or a writer's) chunks added into one set of arrays give the bits that
    adding each chunk's own arrays in turn gives: running + (the chunk's own sum), with the
    chunk's values summed in their stored order; a column whose values cancel, explicit
    zeros and columns seen in only some chunks included. The writer and a fit's pass agree."""
    import scipy.sparse as sp

    from dsvm.data.blocks import block_from_arrays
    from dsvm.data.stats import RunningStats, StatsAdder, block_stats, merge_stats

    rng = np.random.default_rng(1)
    d = 3000
    blocks = []
    for n in (400, 250, 1, 600):
        X = sp.random(n, d, density=0.01, format="csr", random_state=rng, dtype=np.float32)
        X.data = (rng.standard_cauchy(X.nnz) * 100).astype(np.float32)
        X = X.tolil()
        X[0, 7], X[0, 8], X[0, 9] = 3.5, -3.5, 0.0  # column 7 and 8 cancel in a sum; 9 stores 0
        X = X.tocsr()
        X[0, 9] = 0.0  # (kept as a stored zero)
        blocks.append(block_from_arrays(X, rng.integers(0, 2, n).astype(np.float64)))
    expected = merge_stats([block_stats(i, b) for i, b in enumerate(blocks)])
    adder, writer = StatsAdder(), RunningStats(d, sparse=True)
    for i, b in enumerate(blocks):
        adder.add(i, b)
        writer.add(i, b)
    got = adder.stats
    for name in ("max_abs", "stored_count", "stored_sum_sq", "stored_sum"):
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name), name)
        np.testing.assert_array_equal(getattr(writer, name), getattr(expected, name), name)
    assert got.sums == expected.sums and got.y_max_abs == expected.y_max_abs
    assert got.totals() == expected.totals()
    assert writer.rows == sum(b.n_samples for b in blocks)
