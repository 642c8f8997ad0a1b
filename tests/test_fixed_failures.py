"""Crashes and silent wrong answers found by running scikit-learn's checks and held-out data as a
new user would (issue #17). Each test failed before its fix."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.preprocessing import StandardScaler

from dsvm import SVMClassifier, SVMRegressor
from dsvm.exceptions import ConvergenceWarning


def test_bsgd_partial_fit_after_fit_continues_the_fit_in_a_subprocess(tmp_path):
    """Later partial_fit calls mapped the chunks through the published kernel expansion (30 wide)
    while the support-vector buffer was 3 wide: numba does not check bounds, the process died
    ("malloc(): invalid size"). In a subprocess, so that a crash fails this test, not the suite;
    fit(1 epoch) + 2 partial_fit must equal fit(3 epochs)."""
    code = textwrap.dedent("""
        import numpy as np
        from dsvm import SVMClassifier
        rng = np.random.default_rng(0)
        X = rng.normal(size=(30, 3)); y = np.where(X[:, 0] > 0, 1, -1)
        kw = dict(solver="bsgd", budget=50, random_state=0, tol=None)
        step = SVMClassifier(max_epochs=1, **kw).fit(X, y)
        step.partial_fit(X, y); step.partial_fit(X, y)
        whole = SVMClassifier(max_epochs=3, **kw).fit(X, y)
        assert np.array_equal(step.coef_, whole.coef_), (step.coef_.shape, whole.coef_.shape)
        fresh = SVMClassifier(**kw)
        for _ in range(3):
            fresh.partial_fit(X, y, classes=[-1, 1])
        assert fresh.score(X, y) > 0.8
        print("ok")
    """)
    # with numba's bounds checks on (compiled afresh: a cached unchecked kernel must not load),
    # so that an index out of range is an IndexError here rather than corrupt memory
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_regressor_defaults_reach_the_targets_scale():
    """The intercept started at 0 and moved by about eta per row: on diabetes (mean target 152)
    it was at 3 after 10 epochs, R^2 -4.5. It now starts at the targets' centre."""
    from sklearn.datasets import load_diabetes
    from sklearn.svm import LinearSVR

    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(Xtr)
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    theirs = LinearSVR(C=100, max_iter=100_000, random_state=0).fit(Xtr, ytr).score(Xte, yte)
    ours = SVMRegressor(random_state=0, max_epochs=50).fit(Xtr, ytr)
    assert ours.score(Xte, yte) >= theirs - 0.05, (ours.score(Xte, yte), theirs)
    assert abs(ours.intercept_[0] - np.median(ytr)) < 20


def _standardised_problem():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=3000, n_features=50, n_informative=10, random_state=0)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y, random_state=0)


def test_kernel_gamma_defaults_to_scale():
    """gamma=1.0 gave chance accuracy on standardised data with 13+ features; the default is now
    scikit-learn's "scale", 1 / (n_features * X.var())."""
    from sklearn.svm import SVC

    Xtr, Xte, ytr, yte = _standardised_problem()
    svc = SVC(gamma="scale").fit(Xtr, ytr).score(Xte, yte)
    nys = SVMClassifier(kernel="nystroem", solver="pegasos", random_state=0).fit(Xtr, ytr)
    assert nys.feature_map_.gamma == pytest.approx(1.0 / (Xtr.shape[1] * Xtr.var()))
    assert nys.score(Xte, yte) >= svc - 0.02
    rff = SVMClassifier(kernel="rff", random_state=0).fit(Xtr, ytr)
    assert rff.feature_map_.gamma == nys.feature_map_.gamma
    assert rff.score(Xte, yte) > 0.72  # 1,024 random features: sklearn's RBFSampler gets 0.753
    old = SVMClassifier(kernel="nystroem", solver="pegasos", gamma=1.0,
                        random_state=0).fit(Xtr, ytr)
    assert old.score(Xte, yte) < 0.6  # what the old default gave


def test_nesvm_keeps_text_labels():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] > 0, "spam", "ham")
    clf = SVMClassifier(solver="nesvm", max_epochs=20, alpha=1e-3).fit(X, y)
    assert clf.classes_.tolist() == ["ham", "spam"]
    assert set(clf.predict(X)) <= {"ham", "spam"}
    assert clf.score(X, y) > 0.9


def test_unscaled_features_warn_instead_of_failing_silently():
    """The default classifier on raw breast-cancer features predicted one class with an
    objective 58,000 times the zero model's, silently. (The default now scales them: this is
    Pegasos with scale=False, the old default.)"""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="failed to fit.*not scaled"):
        SVMClassifier(solver="pegasos", scale=False, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        Z = StandardScaler().fit_transform(X)
        scaled = SVMClassifier(solver="pegasos", random_state=0, tol=None).fit(Z, y)
    assert scaled.score(StandardScaler().fit_transform(X), y) > 0.95


def test_convergence_warning_is_scikit_learns():
    import sklearn.exceptions

    assert issubclass(ConvergenceWarning, sklearn.exceptions.ConvergenceWarning)


def test_a_client_parameter_does_not_break_clone_or_cross_validation():
    """clone deep-copied the live Client ("cannot pickle '_asyncio.Task'"), so every search and
    cross-validation with the README's client=client pattern failed."""
    from distributed import Client, LocalCluster

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=400) > 0, 1, -1)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        est = SVMClassifier(alpha=1e-3, tol=None, random_state=0, client=client)
        twin = clone(est)
        assert twin.client is client and twin.get_params()["alpha"] == 1e-3
        scores = cross_val_score(est, X, y, cv=3)
    assert scores.min() > 0.9
