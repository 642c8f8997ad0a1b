"""Resume == uninterrupted also for kernel maps, ASSET, BSGD and the regressor.

The kernel map is drawn from the fit's seed, which the checkpoint keeps, so a resumed fit with
``random_state=None`` rebuilds the same map; ASSET's N comes from the data again; BSGD's
support vectors travel in the state's named arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier, SVMRegressor
from dsvm.engine.hooks import epoch_hook


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 5))
    y = np.where(X[:, 0] ** 2 + X[:, 1] - 1.0 + 0.2 * rng.normal(size=2000) > 0, 1, -1)
    return X, y


CASES = {
    "rff": dict(kernel="rff", n_components=64, gamma=0.5),
    "nystroem": dict(kernel="nystroem", n_components=64, gamma=0.5),
    "asset": dict(solver="asset", alpha=1e-3),
    "bsgd": dict(solver="bsgd", gamma=0.5, budget=40, alpha=1e-3),
}


class _Crash(Exception):
    pass


def _crash_after(epochs: int):
    """A hook that kills the fit after ``epochs`` epochs (their checkpoint is written first)."""
    def hook(est, state, history, converged):
        if len(history) == epochs:
            raise _Crash

    return epoch_hook(hook)


def _interrupted(est_cls, X, y, ckpt, **kw):
    with _crash_after(2), pytest.raises(_Crash):
        _fit(est_cls, X, y, checkpoint=ckpt, **kw)
    assert dsvm.load_checkpoint(ckpt).epoch == 2


def _fit(est_cls, X, y, **kw):
    params = dict(max_epochs=4, tol=None, random_state=7, chunk_rows=500, n_streams=2)
    params.update(kw)
    return est_cls(**params).fit(X, y, resume="checkpoint" in kw)


@pytest.mark.parametrize("case", sorted(CASES))
def test_classifier_resume_equals_uninterrupted(problem, tmp_path, case):
    X, y = problem
    ckpt = tmp_path / f"{case}.ckpt"
    full = _fit(SVMClassifier, X, y, **CASES[case])
    _interrupted(SVMClassifier, X, y, ckpt, **CASES[case])
    resumed = _fit(SVMClassifier, X, y, random_state=None, checkpoint=ckpt, **CASES[case])
    assert resumed.n_iter_ == 4
    np.testing.assert_array_equal(resumed.decision_function(X), full.decision_function(X))
    assert resumed.score(X, y) > 0.7


def test_regressor_resume_equals_uninterrupted(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2000, 4))
    y = X @ [1.0, -0.5, 0.0, 2.0] + 0.1 * rng.normal(size=2000)
    ckpt = tmp_path / "reg.ckpt"
    full = _fit(SVMRegressor, X, y)
    _interrupted(SVMRegressor, X, y, ckpt)
    resumed = _fit(SVMRegressor, X, y, random_state=None, checkpoint=ckpt)
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    assert resumed.score(X, y) > 0.95


def test_nesvm_refuses_early_stopping(problem):
    """(NESVM takes checkpoints now: tests/test_nesvm_checkpoint.py)"""
    X, y = problem
    with pytest.raises(ValueError, match="solver='nesvm' stops on tol"):
        SVMClassifier(solver="nesvm", early_stopping=True).fit(X, y)
