"""Label encoding kernel against a NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm.kernels.labels import encode_classes
from dsvm.solvers.base import encode_labels


@pytest.mark.parametrize("n_classes", [2, 3, 10, 40])
def test_codes_match_searchsorted(n_classes):
    rng = np.random.default_rng(n_classes)
    classes = np.sort(rng.choice(np.arange(-50, 50, dtype=float), n_classes, replace=False))
    y = rng.choice(classes, size=5000)
    codes = np.empty(5000, dtype=np.int32)
    assert encode_classes(y, classes, codes) == -1
    np.testing.assert_array_equal(codes, np.searchsorted(classes, y))


def test_first_unknown_label_is_reported():
    y = np.array([1.0, -1.0, 1.0, 3.0, 7.0, np.nan])
    codes = np.empty(6, dtype=np.int32)
    assert encode_classes(y, np.array([-1.0, 1.0]), codes) == 3
    with pytest.raises(ValueError, match=r"chunk 9: row 3 has label 3.0"):
        encode_labels(y, np.array([-1.0, 1.0]), where="data, chunk 9")
    with pytest.raises(ValueError, match="row 5 has label nan"):
        encode_labels(np.array([1.0, -1.0, 1.0, 1.0, 1.0, np.nan]), np.array([-1.0, 1.0]), "x")
