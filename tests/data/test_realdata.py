"""The real a9a (UCI Adult, LIBSVM preprocessing) converts to the same matrix as scikit-learn."""

from __future__ import annotations

import lzma

import numpy as np
import pytest

from dsvm.data import convert

from .conftest import collect, shared_file

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def a9a_reference():
    from sklearn.datasets import load_svmlight_file

    path = shared_file("a9a/a9a.xz")
    with lzma.open(path) as f:
        X, y = load_svmlight_file(f, n_features=123)
    return path, X.tocsr(), y


@pytest.mark.parametrize("layout", ["dense", "sparse", "auto"])
def test_a9a_matches_sklearn(tmp_path, a9a_reference, layout):
    path, X, y = a9a_reference
    # (its speed is measured in benchmarks/bench_convert.py, side by side with the peers': a
    # wall-time bound here failed under load, 6.1 s against 5 on the shared 2-core machine)
    ds = convert(path, tmp_path / "a9a.zarr", layout=layout)
    assert (ds.n_samples, ds.n_features) == (32_561, 123)
    assert ds.layout == ("sparse" if layout == "auto" else layout)  # density 0.113 < 0.25
    assert ds.classes.tolist() == [-1.0, 1.0] and ds.attrs["class_counts"] == [24_720, 7_841]
    Xr, yr, _ = collect(ds)
    if ds.layout == "sparse":
        assert ds.nnz == Xr.nnz == 451_592
        Xr = Xr.toarray()
    np.testing.assert_array_equal(Xr, X.toarray().astype(np.float32))
    np.testing.assert_array_equal(yr, y)
