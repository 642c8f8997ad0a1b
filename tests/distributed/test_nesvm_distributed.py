"""NESVM on real separate processes: the gradient reduction over zarr chunks read by the workers
equals the in-process fit, dense and CSR, dask arrays too; the tree sum is associative."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp

import dsvm
from dsvm import SVMClassifier
from dsvm.combine.gradient import add_shares
from dsvm.data.blocks import block_from_arrays
from dsvm.solvers.nesvm import Points, block_share

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(5000, 15))
    X[rng.random(X.shape) < 0.6] = 0.0
    y = np.where(X @ rng.normal(size=15) + 0.3 + 0.5 * rng.normal(size=5000) > 0, 1.0, -1.0)
    return X, y


KW = {"solver": "nesvm", "alpha": 1e-4, "mu": 0.05, "max_epochs": 12, "tol": None}


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_zarr_on_two_worker_processes_equals_in_process(problem, tmp_path, process_cluster,
                                                        layout):
    X, y = problem
    ds = dsvm.write_arrays(tmp_path / f"{layout}.zarr", X, y, chunk_rows=700, layout=layout,
                           dtype="float64")
    assert ds.n_chunks == 8
    from distributed import Client

    with Client(process_cluster.address) as client:
        remote = SVMClassifier(client=client, **KW).fit(ds)
        remote_obj = remote.evaluate(ds)["objective"]
    local = SVMClassifier(**KW).fit(sp.csr_matrix(X) if layout == "sparse" else X, y)
    local_obj = local.evaluate(X, y)["objective"]
    assert remote.n_iter_ == local.n_iter_ == 12
    assert remote_obj == pytest.approx(local_obj, rel=1e-6)
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-6, atol=1e-9)
    for r, loc in zip(remote.history_, local.history_):
        assert r["objective"] == pytest.approx(loc["objective"], rel=1e-9)
        assert r["n_rows"] == 5000


def test_dask_arrays_equal_in_process(problem, local_client):
    X, y = problem
    dX, dy = da.from_array(X, chunks=(900, 15)), da.from_array(y, chunks=900)
    remote = SVMClassifier(client=local_client, **KW).fit(dX, dy)
    local = SVMClassifier(**KW).fit(X, y)
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-6, atol=1e-9)


def test_shares_add_in_any_grouping(problem):
    X, y = problem
    codes = (y > 0).astype(np.int32)
    pts = Points(np.full((1, 15), 0.1), np.zeros(1), 1, collect_scaling=True)
    shares = [block_share(block_from_arrays(X[i:i + 600], y[i:i + 600]), codes[i:i + 600], pts,
                          "hinge", 0.2, True) for i in range(0, 5000, 600)]
    whole = block_share(block_from_arrays(X, y), codes, pts, "hinge", 0.2, True)
    flat = add_shares(shares)
    tree = add_shares([add_shares(shares[:3]), None, add_shares(shares[3:])])
    for a in (flat, tree):
        for name in ("grad", "grad_b", "sums", "stats", "colstats"):
            np.testing.assert_allclose(getattr(a, name), getattr(whole, name), rtol=1e-12,
                                       atol=1e-12)
    assert add_shares([None, None]) is None


def test_only_model_sized_sums_travel(tmp_path, local_client):
    """A pass's task results (shares and their tree sums) are sized by n_features, not data."""
    from tests.distributed.test_data_stays_on_workers import result_sizes

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40_000, 30))
    y = np.where(X[:, 0] + 0.2 * rng.normal(size=40_000) > 0, 1.0, -1.0)
    ds = dsvm.write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=5000, dtype="float64")
    with result_sizes(local_client, name="nesvm-sizes") as recorded:
        clf = SVMClassifier(solver="nesvm", max_epochs=3, tol=None, n_streams=4,
                            client=local_client).fit(ds)
        sizes = recorded()
    keys = {k: v for k, v in sizes.items() if k.startswith("dsvm-nesvm-")}
    assert any("-pass-" in k for k in keys) and any("-add-" in k for k in keys), sizes
    assert max(keys.values()) < 5000 * 30 * 8 / 50, keys  # one chunk of X is 1.2 MB
    assert clf.score(ds) > 0.9
