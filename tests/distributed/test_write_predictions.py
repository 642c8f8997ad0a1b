"""Predictions written by the workers into a zarr store (dsvm.data.predictions): the same
values as predict / decision_function, only row counts through the scheduler, nothing left
behind by a failed prediction."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import dsvm
from dsvm.data.predictions import PredictionStore
from dsvm.exceptions import DataFormatError
from tests.distributed.test_data_stays_on_workers import result_sizes

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    root = tmp_path_factory.mktemp("pred")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 12))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.5, 0.5])  # three classes
    ds = dsvm.write_arrays(root / "d.zarr", X, y, chunk_rows=3000, dtype="float64")
    return root, X, y, ds


def test_labels_and_decision_values_equal_predict(problem, tmp_path, local_client):
    _, X, y, ds = problem
    clf = dsvm.SVMClassifier(max_epochs=3, tol=None, random_state=0, client=local_client).fit(ds)
    with result_sizes(local_client) as recorded:
        url = clf.write_predictions(ds, tmp_path / "labels.zarr")
        assert url == str(tmp_path / "labels.zarr") and os.listdir(tmp_path) == ["labels.zarr"]
        np.testing.assert_array_equal(dsvm.read_predictions(url), clf.predict(ds))
        scores = dsvm.read_predictions(clf.write_predictions(ds, tmp_path / "dec.zarr",
                                                             decision=True))
        sizes = recorded()
    assert scores.shape == (20_000, 3)
    np.testing.assert_allclose(scores, clf.decision_function(ds), rtol=1e-12)
    # the values stayed on the workers: every write task returned a row count
    writes = {k: v for k, v in sizes.items() if "write-predictions" in k}
    assert len(writes) == 2 * ds.n_chunks and max(writes.values()) < 1000, writes
    with pytest.raises(FileExistsError, match="already exists"):
        clf.write_predictions(ds, tmp_path / "labels.zarr")


def test_text_labels_and_in_process(problem, tmp_path):
    root, X, y, _ = problem
    names = np.array(["low", "mid", "high"])[y]
    ds = dsvm.write_arrays(root / "text.zarr", X, y.astype(float), chunk_rows=3000,
                           dtype="float64")
    clf = dsvm.SVMClassifier(max_epochs=2, tol=None, random_state=0).fit(X, names)
    url = clf.write_predictions(ds, tmp_path / "p.zarr")  # no client: in this process
    got = dsvm.read_predictions(url)
    assert got.dtype.kind == "U"
    np.testing.assert_array_equal(got, clf.predict(X))
    # a name of another format: a zarr folder named p.parquet was written, which pandas
    # then could not read; refused before anything is written
    with pytest.raises(ValueError, match=r"writes a zarr store, and .*p\.parquet names a "
                                         r"\.parquet file: give a path ending in \.zarr"):
        clf.write_predictions(ds, tmp_path / "p.parquet")
    assert not (tmp_path / "p.parquet").exists()


def test_regressor_writes_its_predictions(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5000, 4))
    t = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * rng.normal(size=5000)
    ds = dsvm.write_arrays(tmp_path / "r.zarr", X, t, chunk_rows=1000, dtype="float64")
    reg = dsvm.SVMRegressor(max_epochs=3, tol=None, random_state=0).fit(X, t)
    got = dsvm.read_predictions(reg.write_predictions(ds, tmp_path / "p.zarr"))
    np.testing.assert_allclose(got, reg.predict(X), rtol=1e-12)


def test_a_failed_prediction_leaves_nothing(problem, tmp_path, local_client):
    root, X, y, _ = problem
    ds = dsvm.write_arrays(tmp_path / "broken.zarr", X, y, chunk_rows=3000, dtype="float64",
                           codec="blosc-lz4")  # not "auto": the garbage below is no blosc frame
    clf = dsvm.SVMClassifier(max_epochs=1, tol=None, random_state=0, client=local_client).fit(X, y)
    chunk_files = sorted(glob.glob(str(tmp_path / "broken.zarr" / "X" / "c" / "4" / "*")))
    assert chunk_files
    for f in chunk_files:
        with open(f, "wb") as fh:  # chunk 4 of X is garbage: its task fails to decode it
            fh.write(b"not a blosc frame")
    with pytest.raises(RuntimeError, match="blosc decompression"):  # numcodecs, on the worker
        clf.write_predictions(ds, tmp_path / "out.zarr")
    assert not [p for p in os.listdir(tmp_path) if p.startswith("out.zarr")]


def test_an_unfinished_store_is_refused(tmp_path):
    store = PredictionStore(tmp_path / "p.zarr", n_rows=10, chunk_rows=5, kind="labels",
                            classes=np.array([0, 1]), n_outputs=1, source="test")
    store.writer().write(0, np.ones(5, dtype=np.int64))
    with pytest.raises(DataFormatError, match="incomplete"):
        dsvm.read_predictions(store.write_url)
    with pytest.raises(RuntimeError, match="5 of 10 rows"):
        store.finish(5, 10)
    assert os.listdir(tmp_path) == []
    with pytest.raises(DataFormatError, match="not a dsvm prediction store"):
        dsvm.read_predictions(tmp_path)


def test_cli_predict_to_zarr_equals_npy(problem, tmp_path):
    _, X, y, ds = problem
    model = tmp_path / "m.dsvm"
    dsvm.SVMClassifier(max_epochs=2, tol=None, random_state=0).fit(X, y).save(model)

    def run(*args):
        proc = subprocess.run([sys.executable, "-m", "dsvm", *args], capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    out = run("predict", str(model), ds.url, "--out", str(tmp_path / "p.zarr"))
    assert "written by the workers" in out
    run("predict", str(model), ds.url, "--out", str(tmp_path / "p.npy"))
    np.testing.assert_array_equal(dsvm.read_predictions(tmp_path / "p.zarr"),
                                  np.load(tmp_path / "p.npy"))
