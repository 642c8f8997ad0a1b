"""Unlabeled datasets (#11 item 4): data converted without labels can be scored, not trained on.

Real files in tmp_path, real zarr stores, the real command line (in this process).
"""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm.cli import main
from dsvm.exceptions import DataFormatError

from .conftest import collect


@pytest.fixture(scope="module")
def model_and_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("unlabeled")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 6)).astype(np.float32)
    y = np.where(X[:, 0] - 0.5 * X[:, 1] > 0, 1, -1)
    model = root / "m.dsvm"
    dsvm.SVMClassifier(max_epochs=3, tol=None, random_state=0).fit(X, y).save(model)
    return root, X, y, model


def _cli(capsys, *args):
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_npy_without_labels_then_predict_equals_model_predict(model_and_data, tmp_path, capsys):
    root, X, _, model = model_and_data
    np.save(tmp_path / "new.npy", X)
    code, out, _ = _cli(capsys, "convert", tmp_path / "new.npy", tmp_path / "new.zarr")
    assert code == 0 and "unlabeled" in out
    code, out, _ = _cli(capsys, "info", tmp_path / "new.zarr")
    assert code == 0 and "unlabeled" in out
    code, _, err = _cli(capsys, "predict", model, tmp_path / "new.zarr", "--out",
                        tmp_path / "p.npy")
    assert code == 0, err
    expected = dsvm.load(model).predict(X)
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), expected)
    # write_predictions (chunks predicted and written by the workers) agrees too
    url = dsvm.load(model).write_predictions(str(tmp_path / "new.zarr"),
                                             str(tmp_path / "p.zarr"))
    np.testing.assert_array_equal(dsvm.read_predictions(url), expected)


def test_train_and_eval_refuse_an_unlabeled_dataset(model_and_data, tmp_path, capsys):
    _, X, _, model = model_and_data
    ds = dsvm.write_arrays(tmp_path / "l.zarr", X, np.zeros(len(X)) + np.arange(len(X)) % 2)
    assert ds.labeled
    np.save(tmp_path / "new.npy", X)
    dsvm.convert(tmp_path / "new.npy", tmp_path / "new.zarr")
    for args in (("train", tmp_path / "new.zarr", "--out", tmp_path / "m2.dsvm"),
                 ("eval", model, tmp_path / "new.zarr")):
        code, _, err = _cli(capsys, *args)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "unlabeled" in lines[0], err
        assert "Traceback" not in err
    with pytest.raises(DataFormatError, match="unlabeled"):
        dsvm.SVMClassifier(max_epochs=1).fit(str(tmp_path / "new.zarr"))


def test_the_python_api_refuses_to_learn_or_score_from_an_unlabeled_dataset(model_and_data,
                                                                             tmp_path):
    """The regressor would otherwise train on the stored NaN labels, evaluate would average
    them: every use that reads labels names the dataset and says it is unlabeled."""
    _, X, y, model = model_and_data
    np.save(tmp_path / "new.npy", X)
    new = str(dsvm.convert(tmp_path / "new.npy", tmp_path / "new.zarr").url)
    clf = dsvm.load(model)
    labeled = dsvm.write_arrays(tmp_path / "l.zarr", X, y.astype(np.float64))
    uses = {
        "train": lambda: dsvm.SVMRegressor(max_epochs=1).fit(new),
        "evaluate a model": lambda: clf.evaluate(new),
        "evaluate a model ": lambda: clf.score(new),
        "validate a fit": lambda: dsvm.SVMClassifier(max_epochs=1).fit(labeled, validation=new),
    }
    for purpose, use in uses.items():
        with pytest.raises(DataFormatError, match=f"new.zarr is unlabeled.*{purpose.strip()}"):
            use()
    assert np.array_equal(clf.predict(new), clf.predict(X))  # scoring it still works


def test_every_format_converts_without_labels(tmp_path):
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(50, 4)), 3)
    X[X < 0] = 0
    X[:, 0] += 1.0  # no empty row: in svmlight without labels a blank line is no row
    np.savez(tmp_path / "a.npz", X=X)  # no y member: unlabeled without asking
    np.savetxt(tmp_path / "a.csv", X, delimiter=",", fmt="%.3f")
    with open(tmp_path / "a.svm", "w") as f:
        f.write("# no labels\n\n")
        for row in X:
            f.write(" ".join(f"{j + 1}:{v:g}" for j, v in enumerate(row) if v) + "\n")
    np.savez(tmp_path / "l.npz", X=X, y=np.arange(50) % 2)
    made = {
        "npz": dsvm.convert(tmp_path / "a.npz", tmp_path / "npz.zarr"),
        "csv": dsvm.convert(tmp_path / "a.csv", tmp_path / "csv.zarr", label_column=None),
        "svm": dsvm.convert(tmp_path / "a.svm", tmp_path / "svm.zarr", labeled=False,
                            n_features=4, layout="dense"),
        "npz-y-ignored": dsvm.convert(tmp_path / "l.npz", tmp_path / "l.zarr", labeled=False),
    }
    for name, ds in made.items():
        assert not ds.labeled and ds.info()["labels"] == "unlabeled", name
        Xd, y, _ = collect(ds)
        np.testing.assert_allclose(np.asarray(Xd), X, rtol=1e-6, err_msg=name)
        assert np.isnan(y).all(), name
    # a shuffled copy stays unlabeled
    shuffled = dsvm.data.shuffle_dataset(made["csv"].url, tmp_path / "sh.zarr", seed=1)
    assert not shuffled.labeled


def test_labels_are_still_required_where_the_format_has_them(tmp_path):
    with open(tmp_path / "a.svm", "w") as f:
        f.write("1:0.5 3:1\n")
    with pytest.raises(DataFormatError, match="line 1"):
        dsvm.convert(tmp_path / "a.svm", tmp_path / "a.zarr")
    np.save(tmp_path / "x.npy", np.ones((4, 2)))
    with pytest.raises(DataFormatError, match="no labels"):
        dsvm.convert(tmp_path / "x.npy", tmp_path / "x.zarr", labeled=True)
    with open(tmp_path / "l.svm", "w") as f:  # labels present although --no-labels was said
        f.write("+1 1:0.5\n-1 2:1\n")
    with pytest.raises(DataFormatError, match="line 1"):
        dsvm.convert(tmp_path / "l.svm", tmp_path / "l.zarr", labeled=False)
