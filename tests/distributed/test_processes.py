"""Real processes: `dask scheduler` and `dask worker` started as separate OS processes on
loopback, training through `dsvm train --scheduler`, on the real a9a and w8a datasets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dsvm
from tests.conftest import liblinear_objective, load_libsvm, shared_file

pytestmark = [pytest.mark.distributed, pytest.mark.slow, pytest.mark.timeout(600)]

A9A_ALPHA = 3.07e-5


def _dsvm(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "dsvm", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def a9a_zarr(tmp_path_factory):
    root = tmp_path_factory.mktemp("a9a")
    train = shared_file("a9a/a9a.xz")
    test = shared_file("a9a/a9a.t.xz")
    out = {}
    for layout in ("sparse", "dense"):
        out[layout] = dsvm.convert(train, root / f"a9a.{layout}.zarr", n_features=123,
                                   layout=layout, chunk_rows=4096)
    out["test"] = dsvm.convert(test, root / "a9a.t.zarr", n_features=123, chunk_rows=4096)
    return out


def _train_eval(cluster, train, test, tmp_path, epochs, solver="pegasos", on="test"):
    """Train through ``dsvm train --scheduler``, then evaluate the saved model on the test set
    (in this process) or on the training set (``on="train"``, on the cluster): only the one
    evaluation the caller asserts on (each is a dataset read)."""
    # one model file per fit: dsvm train never replaces a file without --overwrite (#14)
    model = tmp_path / f"m{epochs}{solver}-{Path(str(train.url)).stem}.dsvm"
    _dsvm("train", str(train.url), "--out", str(model), "--solver", solver,
          "--alpha", str(A9A_ALPHA), "--no-intercept", "--epochs", str(epochs),
          "--scheduler", cluster.address, "--seed", "0", "--quiet")
    # the saved model, scored by the call `dsvm eval` makes (a CLI process would add its start)
    return _evaluate(model, test if on == "test" else train,
                     None if on == "test" else cluster.address)


def _evaluate(model: Path, dataset, address: str | None) -> dict:
    clf = dsvm.load(model)
    clf.client = address
    return clf.evaluate(dataset.url)


def test_a9a_pegasos_on_separate_processes(process_cluster, a9a_zarr, tmp_path):
    test10 = _train_eval(process_cluster, a9a_zarr["sparse"], a9a_zarr["test"], tmp_path, 10)
    assert test10["accuracy"] >= 0.845, test10  # LIBLINEAR's optimum: 0.8498

    X, y = load_libsvm("a9a/a9a.xz", 123)
    optimum = liblinear_objective(X, y, A9A_ALPHA)
    assert optimum == pytest.approx(0.35115, rel=2e-3)
    # Averaged SGD is within 2% of LIBLINEAR's optimum after 20 epochs (measured +0.8%).
    sgd20 = _train_eval(process_cluster, a9a_zarr["sparse"], a9a_zarr["test"], tmp_path, 20,
                        solver="sgd", on="train")
    assert sgd20["objective"] <= 1.02 * optimum, (sgd20["objective"], optimum)
    # The bar for Pegasos: within 2% after 20 epochs. The average alone is +3.0% there;
    # the driver returns its Richardson extrapolation when the probe measures it lower
    # (dsvm/solvers/extrapolation.py; +0.7% measured).
    peg20 = _train_eval(process_cluster, a9a_zarr["sparse"], a9a_zarr["test"], tmp_path, 20,
                        on="train")
    assert peg20["objective"] <= 1.02 * optimum, (peg20["objective"], optimum)


def test_a9a_dense_and_sparse_layouts_agree(process_cluster, a9a_zarr, tmp_path):
    sparse = _train_eval(process_cluster, a9a_zarr["sparse"], a9a_zarr["test"], tmp_path, 5)
    dense = _train_eval(process_cluster, a9a_zarr["dense"], a9a_zarr["test"], tmp_path, 5)
    assert abs(sparse["accuracy"] - dense["accuracy"]) <= 2e-4, (sparse, dense)


def test_w8a_accuracy(process_cluster, tmp_path):
    # w8a is sorted by label (all positives in rows 740-2218): convert warns, and --shuffle is
    # what makes the chunks representative (unshuffled: 97.9% after 10 epochs).
    train = dsvm.convert(shared_file("w8a/w8a.xz"), tmp_path / "w8a.zarr", n_features=300,
                         chunk_rows=4096, shuffle=True, seed=0)
    test = dsvm.convert(shared_file("w8a/w8a.t.xz"), tmp_path / "w8a.t.zarr", n_features=300)
    model = tmp_path / "w8a.dsvm"
    _dsvm("train", str(train.url), "--out", str(model), "--alpha", str(1.0 / train.n_samples),
          "--no-intercept", "--epochs", "10", "--scheduler", process_cluster.address, "--quiet")
    res = _evaluate(model, test, None)
    assert res["accuracy"] >= 0.98, res
