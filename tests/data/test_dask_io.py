"""Dask views of datasets (one dask chunk per row chunk) and dask inputs to write_arrays."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data import write_arrays
from dsvm.data.dask_io import dataset_to_delayed
from dsvm.exceptions import DataLayoutError

from .conftest import collect


def test_to_dask_dense(tmp_path, dense_problem):
    X, y = dense_problem
    ds = write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=50)
    Xd, yd = ds.to_dask()
    assert Xd.chunks == ((50, 50, 50, 50, 3), (6,)) and yd.chunks == ((50, 50, 50, 50, 3),)
    assert Xd.dtype == np.float64 and yd.dtype == np.float64
    np.testing.assert_array_equal(Xd.compute(), X)
    np.testing.assert_array_equal(yd.compute(), y)
    np.testing.assert_array_equal(Xd.blocks[3].compute(), X[150:200])
    Xd2, _ = ds.to_dask()
    assert Xd2.name == Xd.name  # deterministic tokens for the same dataset


def test_to_dask_blocks_are_tasks_of_their_own(tmp_path, dense_problem):
    """Every block is a task with no input: built on a da.arange of chunk numbers, the same
    block key reached a cluster's scheduler with the arange fused into it by one graph's
    optimisation and not by another's (GridSearchCV's folds of the same arrays), and
    distributed warned of failures and deadlocks."""
    from dask.core import get_dependencies

    X, y = dense_problem
    Xd, yd = write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=50).to_dask()
    for arr in (Xd, yd):
        graph = dict(arr.__dask_graph__())
        assert len(graph) == arr.npartitions
        assert all(not get_dependencies(graph, key) for key in graph), graph
    # an optimised view of some rows reads the same blocks under the same keys
    part = yd[np.r_[0:50, 100:150]]
    (optimised,) = dask.optimize(part)
    assert {k for k in dict(optimised.__dask_graph__()) if k[0] == yd.name} <= set(
        dict(yd.__dask_graph__()))


def test_to_dask_sparse(tmp_path, csr_problem):
    X, y = csr_problem
    ds = write_arrays(tmp_path / "s.zarr", X, y, chunk_rows=64, dtype="float32")
    Xd, yd = ds.to_dask()
    assert isinstance(Xd._meta, sp.csr_matrix) and Xd.numblocks == (4, 1)
    block = Xd.blocks[1].compute()
    assert sp.issparse(block) and (block != X[64:128].astype(np.float32)).nnz == 0
    assert (sp.csr_matrix(Xd.compute()) != X.astype(np.float32)).nnz == 0
    np.testing.assert_array_equal(yd.compute(), y)
    blocks = dask.compute(*dataset_to_delayed(ds))
    np.testing.assert_array_equal(np.concatenate([b.y for b in blocks]), y)


def test_write_arrays_from_dask_computes_block_by_block(tmp_path, dense_problem):
    X, y = dense_problem
    Xd = da.from_array(X, chunks=(37, 4))  # column chunks are merged per row block
    yd = da.from_array(y, chunks=60)  # misaligned with X's rows: rechunked lazily
    ds = write_arrays(tmp_path / "d.zarr", Xd, yd, chunk_rows=50, dtype="float32")
    Xr, yr, _ = collect(ds)
    np.testing.assert_array_equal(Xr, X.astype(np.float32))
    np.testing.assert_array_equal(yr, y)
    # unknown chunk sizes (after boolean filtering) with NumPy labels
    keep = np.arange(203) % 3 != 0
    Xf = Xd[da.from_array(keep, chunks=37)]
    assert np.isnan(Xf.shape[0])
    ds = write_arrays(tmp_path / "f.zarr", Xf, y[keep], chunk_rows=40,
                      sample_weight=np.ones(keep.sum()))
    np.testing.assert_array_equal(collect(ds)[0], X[keep])
    with pytest.raises(DataLayoutError, match="has 202"):
        write_arrays(tmp_path / "bad.zarr", Xf, np.ones(202))
    assert not (tmp_path / "bad.zarr").exists()


def test_write_arrays_from_sparse_dask(tmp_path, csr_problem):
    X, y = csr_problem
    Xd = da.from_array(X, chunks=(100, 40), asarray=False)
    ds = write_arrays(tmp_path / "s.zarr", Xd, da.from_array(y, chunks=100), chunk_rows=64)
    assert ds.layout == "sparse" and ds.dtype == X.dtype
    assert (collect(ds)[0] != X).nnz == 0
