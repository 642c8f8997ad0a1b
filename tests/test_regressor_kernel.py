"""SVMRegressor with a Gaussian-kernel feature map: trained, saved, loaded, predicting."""

from __future__ import annotations

import numpy as np

import dsvm
from dsvm import SVMRegressor


def _nonlinear(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.5, 1.5, size=(n, 2))
    y = np.sin(2.0 * X[:, 0]) + X[:, 1] ** 2
    return X, y


def test_rff_regressor_fits_what_a_linear_one_cannot(tmp_path):
    X, y = _nonlinear(4000, 0)
    X_test, y_test = _nonlinear(1000, 1)
    kw = dict(solver="sgd", loss="squared", alpha=1e-6, max_epochs=15, tol=None, random_state=0)
    linear = SVMRegressor(**kw).fit(X, y)
    rff = SVMRegressor(kernel="rff", n_components=256, gamma=0.5, **kw).fit(X, y)
    assert linear.score(X_test, y_test) < 0.5  # a plane cannot follow sin and x^2
    r2 = rff.score(X_test, y_test)
    assert r2 > 0.9, r2
    assert rff.coef_.shape == (1, 256) and rff.n_features_in_ == 2

    rff.save(tmp_path / "rff.dsvm")
    back = dsvm.load(tmp_path / "rff.dsvm")
    assert isinstance(back, SVMRegressor)
    np.testing.assert_allclose(back.predict(X_test), rff.predict(X_test), rtol=1e-6, atol=1e-6)


def test_a_kernel_regressor_on_a_dataset_reads_no_chunk_for_its_statistics(tmp_path,
                                                                           monkeypatch):
    """Its target is scaled on its own (large units) and its map's input by the columns'
    statistics: a dataset's writer kept both, so the fit reads no chunk for them (the
    target's scaling hid the kept ones from the map's stage, which read every chunk)."""
    import warnings

    from dsvm.training import kernel_maps, scaling

    X, y = _nonlinear(3000, 2)
    X = X * np.array([1.0, 500.0])  # a column in large units: the map's stage scales it
    ds = dsvm.write_arrays(tmp_path / "r.zarr", X, 1000.0 * y, chunk_rows=500)
    kw = dict(kernel="rff", n_components=128, max_epochs=8, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read = SVMRegressor(**kw).fit(ds)

    def no_pass(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the statistics were read from the chunks")

    monkeypatch.setattr(scaling, "feature_stats", no_pass)
    monkeypatch.setattr(kernel_maps, "feature_stats", no_pass)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = SVMRegressor(**kw).fit(ds)
    np.testing.assert_array_equal(kept.coef_, read.coef_)  # (the same fit, none read)
    assert kept.score(X, 1000.0 * y) > 0.5
