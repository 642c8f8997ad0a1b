"""Fits give the models they gave before the package was restructured (issue #15).

``tests/fixtures/models/*.dsvm`` were written by ``tests/fixtures/make_models.py`` on the code
before the restructuring; every case is refitted here with the same data and seed and must give
the same model: bit-identical where the arithmetic did not change, otherwise within 1e-6
normwise relative error (kernel rewrites may reorder floating-point sums; fastmath reassociation
makes the order a compiler choice).
"""

from __future__ import annotations

import json
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


def test_eval_of_a_scaled_model_reports_the_objective_its_fit_published(tmp_path, capsys):
    """A model whose fit scaled the columns: `dsvm eval` on its own training data printed an
    objective of 0.434 where the fit had published 0.162, the penalty taken at the raw-unit
    coef_. The file now keeps the scaling's per-column arrays, and the penalty is the fit's."""
    from sklearn.datasets import load_breast_cancer

    from dsvm.cli import main

    X, y = load_breast_cancer(return_X_y=True)
    dsvm.write_arrays(tmp_path / "cancer.zarr", X.astype(np.float32), y)
    clf = dsvm.SVMClassifier(random_state=0, max_epochs=5).fit(tmp_path / "cancer.zarr")
    assert clf.scaling_ is not None and clf.scaling_.kind == "standard"
    published = clf.outcome_.objective
    clf.save(tmp_path / "m.dsvm")
    loaded = dsvm.load(tmp_path / "m.dsvm")
    np.testing.assert_array_equal(loaded.scaling_.factor, clf.scaling_.factor)
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / "cancer.zarr"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["objective"] == pytest.approx(published, rel=1e-6)
    assert clf.evaluate(tmp_path / "cancer.zarr")["objective"] == pytest.approx(published,
                                                                                rel=1e-6)
