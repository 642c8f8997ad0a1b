"""dsvm.RFF and dsvm.Nystroem as scikit-learn transformers (issue #16): in a Pipeline on
in-memory data, with feature names, and mapping rows with the code the workers run."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

import dsvm
from dsvm.data.blocks import block_from_arrays


@pytest.fixture
def ring():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    return X, np.where((X ** 2).sum(axis=1) > 5, 1, -1)


@pytest.mark.parametrize("make", [lambda: dsvm.RFF(200, gamma=0.2, random_state=0),
                                  lambda: dsvm.Nystroem(100, gamma=0.2, random_state=0)])
def test_map_in_a_pipeline(ring, make):
    X, y = ring
    linear = LinearSVC().fit(X, y).score(X, y)
    pipe = make_pipeline(make(), LinearSVC()).fit(X, y)
    assert pipe.score(X, y) > linear + 0.2  # the ring is not linearly separable
    names = pipe[0].get_feature_names_out()
    assert len(names) == pipe[0].n_output_features and names[0].endswith("0")
    twin = clone(pipe[0])
    assert twin.get_params() == pipe[0].get_params()
    assert not [k for k in vars(twin) if k.endswith("_")]  # an unfitted copy
    # transform is what a worker applies to each chunk
    mapped = pipe[0].transform_block(block_from_arrays(X, y)).X
    np.testing.assert_array_equal(pipe[0].transform(X), mapped)
