"""Chunk sizes from the bytes actually stored (#11 item 5), and the CSR .npz path that reads
blocks sized by nnz rather than n_features."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dsvm
from dsvm.cli import main
from dsvm.data.planning import MIN_CHUNK_ROWS, chunk_plan, default_workers

from .conftest import collect, shared_file


def test_chunk_plan_follows_stored_bytes_not_n_features():
    # 2**22 columns but 40 values a row: ~500 B a row, so tens of thousands of rows a chunk
    rows, reason = chunk_plan("sparse", 2**22, "float32", nnz_per_row=40)
    assert rows == (32 << 20) // (40 * 8 + 16) and "336 stored bytes per row" in reason
    # with a known row count: at least 2 chunks per worker, chunks of >= 1024 rows
    rows, reason = chunk_plan("sparse", 123, "float32", nnz_per_row=14, n_samples=32561,
                              workers=2)
    assert rows == -(-32561 // 4) and "2 default workers" in reason
    rows, _ = chunk_plan("sparse", 123, "float32", nnz_per_row=14, n_samples=32561, workers=64)
    assert rows == MIN_CHUNK_ROWS
    rows, reason = chunk_plan("dense", 10, "float32", n_samples=900)
    assert rows == 900 and "one chunk" in reason


@pytest.mark.parametrize("rel", ["a9a/a9a.xz", "w8a/w8a.xz"])
def test_small_real_sets_split_across_the_default_workers(rel, tmp_path, capsys):
    ds = dsvm.convert(shared_file(rel), tmp_path / "d.zarr")
    assert ds.n_chunks >= min(2 * default_workers(), ds.n_samples // MIN_CHUNK_ROWS)
    assert ds.n_chunks >= 2
    capsys.readouterr()
    assert main(["info", str(tmp_path / "d.zarr")]) == 0
    out = capsys.readouterr().out
    assert "chunk_reason" in out and "default workers" in out and "chunk_bytes" in out


def test_csr_npz_with_many_columns_reads_large_blocks(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    n, f, k = 5000, 2**22, 40
    indices = np.sort(rng.choice(f, size=(n, k), replace=True), axis=1).astype(np.int32)
    m = sp.csr_matrix((rng.random(n * k).astype(np.float32), indices.ravel(),
                       np.arange(n + 1) * k), shape=(n, f))
    m.sum_duplicates()
    y = np.where(rng.random(n) > 0.5, 1.0, -1.0)
    sp.save_npz(tmp_path / "m.npz", m)
    np.save(tmp_path / "y.npy", y)
    from dsvm.data import numpy_source

    calls = []
    original = numpy_source.NumpySource._block

    def counting(self, start, stop):
        calls.append(stop - start)
        return original(self, start, stop)

    monkeypatch.setattr(numpy_source.NumpySource, "_block", counting)
    ds = dsvm.convert(tmp_path / "m.npz", tmp_path / "m.zarr", labels=tmp_path / "y.npy")
    # a block per chunk (read at the chunk size the conversion chose), not one per row
    assert len(calls) == ds.n_chunks and sum(calls) == n and ds.n_chunks < 10
    X, yd, _ = collect(ds)
    assert (X != m).nnz == 0
    np.testing.assert_array_equal(yd, y)


def _split_enough(ds) -> bool:
    return ds.n_chunks >= max(2, min(2 * default_workers(), ds.n_samples // MIN_CHUNK_ROWS))


@pytest.mark.parametrize("fmt", ["criteo", "libsvm-read-once", "csv", "parquet", "npy"])
def test_every_format_splits_small_data_across_the_default_workers(fmt, tmp_path):
    # CSV, Criteo and svmlight read once (--n-features and a layout given) are not counted
    # before they are read: they gave one chunk, although the README promises >= 2 per worker
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6000, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    kwargs = {}
    if fmt == "criteo":
        src = shared_file("criteo_sample/criteo_kaggle_head8000_train.txt.xz")
        kwargs = {"format": "criteo"}
    elif fmt == "libsvm-read-once":
        src, kwargs = shared_file("a9a/a9a.xz"), {"n_features": 123, "layout": "sparse"}
    elif fmt == "csv":
        src = tmp_path / "rows.csv"
        np.savetxt(src, np.column_stack([y, X]), delimiter=",", fmt="%.6g")
    elif fmt == "parquet":
        import pandas as pd

        src = tmp_path / "rows.parquet"
        pd.DataFrame(X, columns=list("abcde")).assign(label=y).to_parquet(src)
        kwargs = {"label_column": "label"}
    else:
        src = tmp_path / "rows.npy"
        np.save(src, X)
        np.save(tmp_path / "y.npy", y)
        kwargs = {"labels": tmp_path / "y.npy"}
    ds = dsvm.convert(src, tmp_path / "d.zarr", **kwargs)
    assert _split_enough(ds), (ds.n_samples, ds.n_chunks, ds.attrs["chunk_reason"])
    assert "default workers" in ds.attrs["chunk_reason"]
    if fmt == "csv":  # chunk_rows= given is kept, even where it makes one chunk
        one = dsvm.convert(src, tmp_path / "one.zarr", chunk_rows=ds.n_samples)
        assert one.n_chunks == 1 and one.attrs["chunk_reason"].startswith("given")


def test_the_window_line_reports_the_chunks_a_window_holds(tmp_path):
    # a9a as the README converts it: 4 chunks, 32,561 rows, 4.1 MB. The line said "8 chunks
    # (65,122 rows, 8.3 MB)": the default window of 8 times the average chunk
    from dsvm.data.sources import DatasetSource
    from dsvm.data.window import dataset_window
    from dsvm.training.window import window_for

    ds = dsvm.convert(shared_file("a9a/a9a.xz"), tmp_path / "a9a.zarr", n_features=123,
                      chunk_rows=8141)
    assert dataset_window(ds).describe().startswith("4 chunks (32,561 rows, 4.1 MB)")
    window = window_for(None, DatasetSource(ds), n_streams=2)
    assert window.describe().startswith("2 chunks (16,280 rows, 2.1 MB)")
    assert "each of 2 streams reads at most 2 chunks" in window.describe()
    one_each = window_for(None, DatasetSource(ds), n_streams=4).describe()
    assert "each of 4 streams reads at most 1 chunk an epoch" in one_each, one_each  # ("1 chunks")
    assert window.chunks == 8  # what the passes are given is unchanged: same models
