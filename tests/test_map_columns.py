"""Kernel maps over a wide, mostly empty input span the columns the training rows use
(dsvm.features.columns): exactly the Gaussian kernel of the whole rows, a map the size of what
is used, and a frame with a hashed category column trained in seconds, not minutes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

import dsvm
from dsvm import SVMClassifier
from dsvm.data.blocks import block_from_arrays
from dsvm.features import RFF, KernelExpansion
from dsvm.features.columns import ColumnSubset, subset_for
from dsvm.features.input_stage import InputStage
from dsvm.training.kernel_maps import map_from_parts, map_parts

WIDTH = 10_000


@pytest.fixture
def wide():
    """Training rows on 40 of 10,000 columns, and new rows that also use 60 others."""
    rng = np.random.default_rng(0)
    used = np.sort(rng.choice(WIDTH, 40, replace=False))
    train = np.zeros((30, WIDTH))
    train[:, used] = rng.normal(size=(30, 40)) * (rng.random((30, 40)) < 0.5)
    new = np.zeros((20, WIDTH))
    new[:, used] = rng.normal(size=(20, 40))
    new[:, rng.choice(np.setdiff1d(np.arange(WIDTH), used), 60, replace=False)] = \
        rng.normal(size=(20, 60))
    mask = np.zeros(WIDTH, dtype=bool)
    mask[used] = True
    return train, new, subset_for(mask)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_an_expansion_on_the_used_columns_is_the_kernel_of_the_whole_rows(wide, layout):
    train, new, subset = wide
    assert subset is not None and subset.n_output_features == 41
    gamma = 0.3
    landmarks = subset.transform_block(block_from_arrays(train, np.zeros(30))).X
    expansion = KernelExpansion(landmarks, gamma).on_input(InputStage(WIDTH, columns=subset))
    rows = sp.csr_matrix(new) if layout == "csr" else new
    got = expansion.transform(rows)
    # NumPy reference on all 10,000 columns: exp(-gamma ||s - t||^2)
    want = np.exp(-gamma * ((new[:, None, :] - train[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert expansion.n_input_features == WIDTH


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_rff_on_the_used_columns_projects_the_rest_by_its_norm(wide, layout):
    train, new, subset = wide
    rff = RFF(64, gamma=0.3).fit(n_features=subset.n_output_features, seed=2).on_input(
        InputStage(WIDTH, columns=subset))
    # the same map as an RFF over every column whose weights are zero outside the used ones,
    # plus the rest column's weights times the norm of each row's other values
    full = np.zeros((WIDTH, 64))
    full[subset.columns] = rff.weights_[:-1]
    rest = new.copy()
    rest[:, subset.columns] = 0
    projection = new @ full + np.linalg.norm(rest, axis=1)[:, None] * rff.weights_[-1]
    want = np.sqrt(2 / 64) * np.cos(projection + rff.offset_)
    rows = sp.csr_matrix(new) if layout == "csr" else new
    np.testing.assert_allclose(rff.transform(rows), want, rtol=1e-10, atol=1e-12)
    # a training row has nothing outside the used columns: its rest value is 0
    np.testing.assert_allclose(rff.transform(train),
                               np.sqrt(2 / 64) * np.cos(train @ full + rff.offset_),
                               rtol=1e-10, atol=1e-12)


def test_a_narrow_or_mostly_used_input_is_taken_whole():
    assert subset_for(np.ones(WIDTH, dtype=bool)) is None
    assert subset_for(np.arange(100) < 3) is None  # under MIN_WIDTH: the map is cheap anyway
    assert isinstance(subset_for(np.arange(WIDTH) < 3), ColumnSubset)


@pytest.fixture(scope="module")
def cancer_with_a_category():
    """Raw breast_cancer with a pandas ``category`` column: hashed into 2^18 columns."""
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.rename(columns=lambda c: c.replace(" ", "_"))
    site = np.random.default_rng(0).choice(["north", "south", "east"], len(X))
    X = X.assign(site=pd.Categorical(site))
    return train_test_split(X, y, test_size=0.3, random_state=0)


@pytest.mark.parametrize("kw", [dict(kernel="rff"), dict(kernel="nystroem"),
                                dict(solver="bsgd")], ids=["rff", "nystroem", "bsgd"])
def test_a_kernel_fit_on_a_frame_with_a_category_keeps_a_map_of_what_it_uses(
        cancer_with_a_category, kw, tmp_path):
    Xtr, Xte, ytr, yte = cancer_with_a_category
    clf = SVMClassifier(random_state=0, max_epochs=5, tol=None, **kw).fit(Xtr, ytr)
    fmap = clf.feature_map_
    assert fmap.n_input_features == 30 + 2 ** 18
    # 30 numbers, the 3 buckets of the category, the rest column (was 262,174 columns: 2 GiB
    # of RFF weights shipped with every task, 100 s for 398 rows)
    assert fmap.input_stage_.columns.n_output_features == 34
    params = fmap.weights_ if kw.get("kernel") == "rff" else fmap.landmarks_
    assert params.shape[-1 if kw.get("kernel") != "rff" else 0] == 34
    assert clf.score(Xte, yte) > 0.9
    # a category the fit never saw is a new column: it predicts, through the rest column
    unseen = Xte.assign(site=pd.Categorical(["west"] * len(Xte)))
    assert np.isfinite(clf.decision_function(unseen)).all()
    # the model file keeps the subset: the same scores after loading
    clf.save(tmp_path / "m.dsvm")
    loaded = dsvm.load(tmp_path / "m.dsvm")
    np.testing.assert_array_equal(loaded.decision_function(Xte), clf.decision_function(Xte))
    arrays, meta = map_parts(fmap)
    np.testing.assert_array_equal(map_from_parts(arrays, meta).input_stage_.columns.columns,
                                  fmap.input_stage_.columns.columns)


@pytest.mark.parametrize("kw", [dict(kernel="rff", n_components=64),
                                dict(solver="bsgd", budget=40, alpha=1e-3)],
                         ids=["rff", "bsgd"])
def test_a_fit_on_the_used_columns_resumes_as_it_would_have_run(kw, tmp_path):
    """The columns are found again from the data on resume: the same map, the same model."""
    from tests.test_checkpoint_solvers import _fit, _interrupted

    rng = np.random.default_rng(1)
    dense = rng.normal(size=(2000, 5))
    y = np.where(dense[:, 0] ** 2 + dense[:, 1] - 1.0 > 0, 1, -1)
    X = sp.hstack([dense, sp.csr_matrix((2000, WIDTH))], format="csr")
    kw = dict(gamma=0.5, **kw)
    full = _fit(SVMClassifier, X, y, **kw)
    assert full.feature_map_.input_stage_.columns.n_output_features == 6
    ckpt = tmp_path / "wide.ckpt"
    _interrupted(SVMClassifier, X, y, ckpt, **kw)
    resumed = _fit(SVMClassifier, X, y, random_state=None, checkpoint=ckpt, **kw)
    np.testing.assert_array_equal(resumed.decision_function(X), full.decision_function(X))
    assert full.score(X, y) > 0.8
