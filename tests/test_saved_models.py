"""Fits give the models they gave before the package was restructured (issue #15).

``tests/fixtures/models/*.dsvm`` were written by ``tests/fixtures/make_models.py`` on the code
before the restructuring; every case is refitted here with the same data and seed and must give
the same model: bit-identical where the arithmetic did not change, otherwise within 1e-6
normwise relative error (kernel rewrites may reorder floating-point sums; fastmath reassociation
makes the order a compiler choice).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dsvm
from tests.fixtures.make_models import cases, problem

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"
RTOL = 1e-6


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


@pytest.mark.parametrize("name", sorted(cases()))
def test_refit_equals_model_saved_before_restructuring(name):
    saved = dsvm.load(MODELS / f"{name}.dsvm")
    est = cases()[name]
    X, y = problem(name)
    est.fit(X, y)
    assert est.coef_.dtype == saved.coef_.dtype
    assert est.coef_.shape == saved.coef_.shape
    assert _rel(est.coef_, saved.coef_) <= RTOL, name
    assert _rel(est.intercept_, saved.intercept_) <= RTOL or np.allclose(
        est.intercept_, saved.intercept_, atol=1e-9), name
    np.testing.assert_array_equal(getattr(est, "classes_", []), getattr(saved, "classes_", []))
    assert est.n_iter_ == saved.n_iter_
    np.testing.assert_array_equal(est.predict(X), saved.predict(X))
