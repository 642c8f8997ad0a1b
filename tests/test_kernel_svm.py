"""Kernel SVMs through the estimator: feature maps, budgeted SGD, saving, the CLI."""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier
from tests.conftest import load_libsvm


@pytest.fixture(scope="module")
def phishing():
    X, y = load_libsvm("phishing/phishing.xz", 68)
    rng = np.random.default_rng(0)
    idx = rng.permutation(X.shape[0])
    X, y = X[idx], y[idx]
    return X[:4000], y[:4000], X[4000:6000], y[4000:6000]


@pytest.fixture(scope="module")
def rings():
    """Two concentric rings: no linear separator, an easy Gaussian-kernel problem."""
    rng = np.random.default_rng(0)
    n = 3000
    radius = np.where(rng.random(n) < 0.5, 1.0, 2.0)
    angle = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[radius * np.cos(angle), radius * np.sin(angle)] + rng.normal(scale=0.15, size=(n, 2))
    y = np.where(radius > 1.5, 1, -1)
    return X[:2000], y[:2000], X[2000:], y[2000:]


@pytest.mark.parametrize("kernel", ["rff", "nystroem"])
def test_kernel_map_separates_what_linear_cannot(rings, kernel):
    Xtr, ytr, Xte, yte = rings
    kw = dict(solver="sgd", alpha=1e-4, max_epochs=5, tol=None, random_state=0, chunk_rows=500)
    linear = SVMClassifier(**kw).fit(Xtr, ytr).score(Xte, yte)
    clf = SVMClassifier(kernel=kernel, n_components=200, gamma=1.0, **kw).fit(Xtr, ytr)
    assert clf.feature_map_.kind == kernel
    assert clf.coef_.shape == (1, clf.feature_map_.n_output_features)
    assert clf.n_features_in_ == 2
    score = clf.score(Xte, yte)
    assert linear < 0.7 and score > 0.97, (score, linear)


def test_kernel_map_dense_and_csr_give_the_same_model(phishing):
    Xtr, ytr, _, _ = phishing
    kw = dict(kernel="nystroem", n_components=100, gamma=8.0, max_epochs=2, tol=None,
              random_state=1, chunk_rows=1000)
    a = SVMClassifier(**kw).fit(Xtr[:2000], ytr[:2000])
    b = SVMClassifier(**kw).fit(np.asarray(Xtr[:2000].todense()), ytr[:2000])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)


def test_bsgd_classifies_phishing_and_keeps_the_budget(phishing):
    Xtr, ytr, Xte, yte = phishing
    clf = SVMClassifier(solver="bsgd", gamma=8.0, budget=100, alpha=1 / (4000 * 8),
                        max_epochs=3, tol=None, random_state=0, chunk_rows=1000).fit(Xtr, ytr)
    assert clf.feature_map_.n_output_features <= 100
    assert clf.score(Xte, yte) > 0.93
    assert clf.state_.extra["merge_stats"][0, 0] > 0  # the budget was hit and merged


def test_bsgd_one_vs_rest_with_three_classes():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    labels = rng.integers(0, 3, 900)
    X = centers[labels] + rng.normal(scale=0.7, size=(900, 2))
    y = np.array([10, 20, 30])[labels]
    clf = SVMClassifier(solver="bsgd", gamma=0.5, budget=30, alpha=1e-3, max_epochs=3,
                        tol=None, random_state=0).fit(X, y)
    assert clf.decision_function(X).shape == (900, 3)
    assert set(np.unique(clf.predict(X))) <= {10, 20, 30}
    assert clf.score(X, y) > 0.9


def test_kernel_models_save_and_load_without_pickle(phishing, tmp_path):
    Xtr, ytr, Xte, _ = phishing
    for kw in (dict(kernel="rff", n_components=50, gamma=8.0),
               dict(kernel=dsvm.Nystroem(40, gamma=8.0)),
               dict(solver="bsgd", budget=20, gamma=8.0)):
        clf = SVMClassifier(max_epochs=1, tol=None, random_state=0, **kw).fit(Xtr, ytr)
        path = tmp_path / "m.dsvm"
        clf.save(path)
        with np.load(path, allow_pickle=False) as z:
            assert any(k.startswith("map.") for k in z.files)
        back = dsvm.load(path)
        np.testing.assert_allclose(back.decision_function(Xte), clf.decision_function(Xte))


def test_kernel_parameters_are_validated():
    X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="'gamma' parameter of SVMClassifier"):
        SVMClassifier(kernel="rff", gamma=0.0).fit(X, y)
    with pytest.raises(ValueError, match="'merge' parameter of SVMClassifier"):
        SVMClassifier(solver="bsgd", merge="fast").fit(X, y)
    with pytest.raises(ValueError, match="kernel must be 'linear'"):
        SVMClassifier(solver="bsgd", kernel="rff").fit(X, y)
    with pytest.raises(ValueError, match="'kernel' parameter"):
        SVMClassifier(kernel="poly").fit(X, y)


def test_cli_trains_a_nystroem_model(phishing, tmp_path, capsys):
    from dsvm.cli import main

    Xtr, ytr, Xte, yte = phishing
    data = dsvm.write_arrays(tmp_path / "p.zarr", Xtr[:2000], ytr[:2000], chunk_rows=500)
    test = dsvm.write_arrays(tmp_path / "t.zarr", Xte, yte, chunk_rows=500)
    model = tmp_path / "m.dsvm"
    assert main(["train", str(data.url), "--out", str(model), "--kernel", "nystroem",
                 "--components", "200", "--gamma", "8", "--epochs", "3", "--solver", "sgd",
                 "--alpha", "1e-5", "--quiet", "--workers", "1"]) == 0
    assert main(["eval", str(model), str(test.url), "--json"]) == 0
    out = capsys.readouterr().out
    import json

    acc = json.loads(out[out.index("{"):])["accuracy"]
    assert acc > 0.85  # wiring check; accuracy targets live in benchmarks/
    assert dsvm.load(model).feature_map_.n_input_features == 68


def test_a_landmark_matrix_larger_than_memory_is_refused_before_any_work(tmp_path, capsys,
                                                                         monkeypatch):
    """``dsvm train --kernel nystroem --components 100000`` on 40,000 rows: the OOM killer ended
    the command at 21.9 GB (on a shared machine: most of its memory). The s x s matrices of the
    landmarks' factorisation are counted against the memory available first."""
    from dsvm.cli import main
    from dsvm.training import kernel_maps

    with pytest.raises(ValueError, match=r"n_components=100,000 factors a 40,000 x 40,000 "
                                         r"landmark kernel matrix: about 47.7 GiB in this "
                                         r"process, more than its 8.0 GiB available"):
        kernel_maps.check_landmark_memory(100_000, 40_000, available=8 << 30)
    kernel_maps.check_landmark_memory(1024, 40_000, available=8 << 30)  # 32 MiB: fine
    X = np.random.default_rng(0).normal(size=(600, 3))
    data = dsvm.write_arrays(tmp_path / "d.zarr", X, np.where(X[:, 0] > 0, 1, -1))
    # the machine's memory made small, for this test: 600 landmarks' matrices do not fit
    monkeypatch.setattr(kernel_maps, "LANDMARK_MATRICES", 1 << 40)
    capsys.readouterr()
    assert main(["train", str(data.url), "--out", str(tmp_path / "m.dsvm"), "--kernel",
                 "nystroem", "--components", "1000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "factors a 600 x 600 landmark kernel matrix" in err[0], err
    assert not (tmp_path / "m.dsvm").exists()
