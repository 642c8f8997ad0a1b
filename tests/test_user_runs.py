"""A new user's whole run, end to end (issue #25): inputs built as users build them (pandas and
Dask frames from read_parquet / read_csv, pyarrow-backed dtypes), default settings, the
commands typed as in the README. Each test here is a failure met that way, kept small: data of
a few thousand rows, in this process (dask's local scheduler) where a cluster is not the point.
"""

from __future__ import annotations

import numpy as np
import pytest

from dsvm import SVMClassifier
from dsvm.training.inputs import source_of

pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
pytestmark = pytest.mark.timeout(120)


def _people(n: int = 1500, seed: int = 0):
    """Raw columns of a table, the label "yes" when a noisy sum of them is positive."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "score": rng.normal(size=n),
        "city": pd.array(rng.choice(["paris", "oslo", "lima"], n), dtype="string[pyarrow]"),
    })
    logit = (frame.age - 50) / 10 + frame.score + np.where(frame.city == "oslo", 1.5, 0.0)
    frame["label"] = np.where(logit + rng.logistic(size=n) > 0, "yes", "no")
    return frame


def test_a_comparison_of_pyarrow_strings_is_a_bool_label_not_text():
    # Dask reads text as string[pyarrow]; `df.label == "yes"` is then bool[pyarrow], which
    # pandas does not call numeric: it was taken for text, classes_ became the strings
    # 'False'/'True', and score(X, y == "yes") failed on a mix of strings and bools
    frame = dd.from_pandas(_people(), npartitions=3)
    y = frame["label"].astype("string[pyarrow]") == "yes"
    assert str(y.dtype) == "bool[pyarrow]"
    source, text_classes = source_of(frame[["age", "score"]], y)
    assert text_classes is None
    np.testing.assert_array_equal(source.labels, [0.0, 1.0])


def test_a_bool_pyarrow_feature_column_is_a_number():
    # pd.read_parquet(dtype_backend="pyarrow") gives bool[pyarrow] columns: a 0/1 feature,
    # once refused as "neither numbers nor text/category"
    frame = _people()
    X = frame[["age", "score"]].assign(oslo=(frame.city == "oslo").astype("bool[pyarrow]"))
    clf = SVMClassifier(random_state=0, max_epochs=5).fit(X, frame.label)
    assert list(clf.feature_names_in_) == ["age", "score", "oslo"]
    assert clf.coef_[0, 2] > 0  # Oslo raises the odds of "yes"
