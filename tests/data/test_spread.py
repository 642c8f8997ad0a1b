"""convert warns when a source sorted by label would leave classes clustered in chunks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dsvm
from dsvm.data.spread import clustered_labels
from dsvm.exceptions import DataOrderWarning


def _labels_file(tmp_path, y):
    rng = np.random.default_rng(0)
    path = tmp_path / "d.svm"
    with open(path, "w") as f:
        for label in y:
            f.write(f"{label:+d} 1:{rng.random():.4f} 2:{rng.random():.4f}\n")
    return path


def test_sorted_labels_warn_and_shuffle_fixes_it(tmp_path):
    y = np.array([1] * 300 + [-1] * 2700)
    src = _labels_file(tmp_path, y)
    with pytest.warns(DataOrderWarning,
                      match=r"d.svm: labels are clustered .* chunk 0 has 40% of class -1.0"):
        dsvm.convert(src, tmp_path / "sorted.zarr", chunk_rows=500)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataOrderWarning)
        ds = dsvm.convert(src, tmp_path / "shuffled.zarr", chunk_rows=500, shuffle=True, seed=1)
    assert clustered_labels(ds) is None


def test_well_mixed_labels_do_not_warn(tmp_path):
    y = np.random.default_rng(3).choice([-1, 1], size=3000, p=[0.9, 0.1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataOrderWarning)
        ds = dsvm.convert(_labels_file(tmp_path, y), tmp_path / "mixed.zarr", chunk_rows=250)
    assert ds.n_chunks == 12 and clustered_labels(ds) is None
