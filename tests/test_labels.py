"""Labels of any type (strings, objects) are mapped through classes_ and come back in predict."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier


@pytest.fixture(scope="module")
def three_classes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    codes = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5])
    names = np.array(["cat", "dog", "emu"])
    return X, names[codes], codes


def test_string_labels_round_trip(three_classes, tmp_path):
    X, y, codes = three_classes
    kw = dict(alpha=1e-4, max_epochs=5, tol=None, random_state=0)
    text = SVMClassifier(**kw).fit(X, y)
    numeric = SVMClassifier(**kw).fit(X, codes)
    assert text.classes_.tolist() == ["cat", "dog", "emu"]
    # the same problem: index k of classes_ plays the role of label k
    np.testing.assert_array_equal(text.coef_, numeric.coef_)
    pred = text.predict(X)
    assert pred.dtype.kind == "U" and set(pred) <= {"cat", "dog", "emu"}
    assert text.score(X, y) == pytest.approx(numeric.score(X, codes))
    assert text.score(X, y) > 0.85
    assert text.evaluate(X, y)["accuracy"] == pytest.approx(text.score(X, y))
    text.save(tmp_path / "m.dsvm")
    np.testing.assert_array_equal(dsvm.load(tmp_path / "m.dsvm").predict(X), pred)


def test_object_labels_partial_fit_and_unknown_label(three_classes):
    X, y, _ = three_classes
    y_obj = y.astype(object)
    clf = SVMClassifier(alpha=1e-4, random_state=0)
    clf.partial_fit(X[:1000], y_obj[:1000], classes=["emu", "cat", "dog"])
    clf.partial_fit(X[1000:], y_obj[1000:])
    assert clf.classes_.tolist() == ["cat", "dog", "emu"]
    with pytest.raises(ValueError, match="'yak' .* is not one of the classes"):
        clf.evaluate(X[:3], np.array(["cat", "yak", "dog"]))


def test_string_labels_from_dask_arrays(three_classes, local_client):
    X, y, codes = three_classes
    dX, dy = da.from_array(X, chunks=1000), da.from_array(y, chunks=1000)
    clf = SVMClassifier(alpha=1e-4, max_epochs=3, tol=None, random_state=0,
                        client=local_client).fit(dX, dy)
    assert clf.classes_.tolist() == ["cat", "dog", "emu"]
    pred = clf.predict(dX).compute()
    assert (pred == y).mean() > 0.85


@pytest.mark.parametrize("kind", ["bool", "int8"])
def test_bool_and_integer_labels_keep_their_dtype_from_every_input_and_in_the_file(
        three_classes, local_client, tmp_path, kind):
    """A Dask array or DataFrame's bool labels were classes 0.0 and 1.0 (a pandas frame's are
    False and True), and a model of bool labels was saved but not loaded ("array 'classes'
    has dtype bool, not numeric or text")."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, _, codes = three_classes
    y = (codes == 1) if kind == "bool" else (codes == 1).astype(np.int8)
    frame = pd.DataFrame(X, columns=list("abcd")).assign(y=y)
    kw = dict(max_epochs=2, tol=None, random_state=0, client=local_client)
    fits = {
        "numpy": SVMClassifier(**kw).fit(X, y),
        "pandas": SVMClassifier(**kw).fit(frame[list("abcd")], frame.y),
        "dask array": SVMClassifier(**kw).fit(da.from_array(X, chunks=1000),
                                              da.from_array(y, chunks=1000)),
        "dask frame": SVMClassifier(**kw).fit(*_features_and_label(dd.from_pandas(frame, 3))),
    }
    for name, clf in fits.items():
        assert clf.classes_.dtype == y.dtype, name
        assert clf.classes_.tolist() == [0, 1], name
        assert clf.predict(X[:5]).dtype == y.dtype, name
    path = tmp_path / "m.dsvm"
    fits["dask frame"].save(path)
    loaded = dsvm.load(path)
    assert loaded.classes_.dtype == y.dtype
    np.testing.assert_array_equal(loaded.predict(frame[list("abcd")]),
                                  fits["dask frame"].predict(frame[list("abcd")]))


def _features_and_label(ddf):
    return ddf[list("abcd")], ddf["y"]


def test_category_labels_are_their_categories_values_from_pandas_and_dask(three_classes,
                                                                          local_client):
    """A Dask frame's category label of numbers (pd.Categorical([0, 10, 20])) was taken for
    text: classes '0', '10', '20', where pandas' frame of the same labels gives the numbers
    0, 10, 20; a category never used is no class either way."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, names, codes = three_classes
    frame = pd.DataFrame(X, columns=list("abcd"))
    kw = dict(max_epochs=2, tol=None, random_state=0, client=local_client)
    for labels, expected in ((pd.Categorical(codes * 10), [0, 10, 20]),
                             (pd.Categorical(names, categories=["cat", "dog", "emu", "yak"]),
                              ["cat", "dog", "emu"])):
        data = frame.assign(y=labels)
        here = SVMClassifier(**kw).fit(data[list("abcd")], data.y)
        lazy = dd.from_pandas(data, npartitions=3)
        there = SVMClassifier(**kw).fit(lazy[list("abcd")], lazy.y)
        for clf in (here, there):
            assert clf.classes_.tolist() == expected
            assert clf.classes_.dtype == here.classes_.dtype
        assert (there.predict(X) == np.asarray(labels)).mean() > 0.85
