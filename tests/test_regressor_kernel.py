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
