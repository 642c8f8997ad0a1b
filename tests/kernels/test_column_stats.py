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
