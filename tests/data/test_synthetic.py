"""write_synthetic: the stored generating model explains the data; bounded, chunk-independent."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm.data import write_synthetic

from .conftest import collect


def test_binary_classification_generator(tmp_path):
    ds = write_synthetic(tmp_path / "c.zarr", 20_000, 10, seed=3, chunk_rows=3000)
    X, y, _ = collect(ds)
    g = ds.attrs["generator"]
    assert g["task"] == "classification" and g["noise"] == 0.1 and g["seed"] == 3
    assert ds.dtype == np.float32 and ds.n_chunks == 7 and ds.classes.tolist() == [-1.0, 1.0]
    pred = np.where(X @ np.asarray(g["w"]) + g["b"] >= 0, 1.0, -1.0)
    assert 0.9 < (pred == y).mean() < 1.0  # label noise flips a few percent
    assert 0.35 < (y == 1).mean() < 0.65


def test_regression_and_multiclass_generators(tmp_path):
    reg = write_synthetic(tmp_path / "r.zarr", 5000, 8, task="regression", noise=0.5,
                          dtype="float64")
    X, y, _ = collect(reg)
    g = reg.attrs["generator"]
    resid = y - (X @ np.asarray(g["w"]) + g["b"])
    assert abs(resid.std() - 0.5) < 0.05 and reg.classes is None
    r2 = 1 - resid.var() / y.var()
    assert 0.5 < r2 < 1.0
    mc = write_synthetic(tmp_path / "m.zarr", 6000, 12, n_classes=4, noise=0.0)
    X, y, _ = collect(mc)
    g = mc.attrs["generator"]
    assert mc.classes.tolist() == [0.0, 1.0, 2.0, 3.0]
    scores = X.astype(np.float64) @ np.asarray(g["w"]) + np.asarray(g["b"])
    assert (np.argmax(scores, axis=1) == y).mean() > 0.999


def test_deterministic_and_independent_of_chunk_rows(tmp_path):
    a = write_synthetic(tmp_path / "a.zarr", 10_000, 5, seed=1, chunk_rows=1000)
    b = write_synthetic(tmp_path / "b.zarr", 10_000, 5, seed=1, chunk_rows=4096)
    c = write_synthetic(tmp_path / "c.zarr", 10_000, 5, seed=2, chunk_rows=1000)
    (Xa, ya, _), (Xb, yb, _), (Xc, _, _) = collect(a), collect(b), collect(c)
    np.testing.assert_array_equal(Xa, Xb)
    np.testing.assert_array_equal(ya, yb)
    assert not np.array_equal(Xa, Xc)


def test_parameter_checks(tmp_path):
    with pytest.raises(ValueError, match="task must be one of"):
        write_synthetic(tmp_path / "x.zarr", 10, 2, task="ranking")
    with pytest.raises(ValueError, match="n_classes must be an int >= 2"):
        write_synthetic(tmp_path / "x.zarr", 10, 2, n_classes=1)
    with pytest.raises(ValueError, match="n_samples must be a positive int"):
        write_synthetic(tmp_path / "x.zarr", 0, 2)
    assert list(tmp_path.iterdir()) == []
