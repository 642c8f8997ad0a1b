"""The on-disk format: DatasetWriter / open_dataset / Dataset round trips and layout errors."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data import CSRBlock, DatasetWriter, DenseBlock, block_from_arrays, open_dataset
from dsvm.exceptions import DataFormatError, DataLayoutError

from .conftest import collect


def _write(dst, X, y, *, chunk_rows, layout, dtype, pieces=(None,), sample_weight=None, **kw):
    """Write through DatasetWriter, appending in the given piece sizes (None: all at once)."""
    n = X.shape[0]
    with DatasetWriter(dst, n_features=X.shape[1], layout=layout, dtype=dtype,
                       chunk_rows=chunk_rows, **kw) as w:
        start = 0
        sizes = list(pieces)
        while start < n:
            size = sizes.pop(0) if sizes else None
            stop = n if size is None else min(n, start + size)
            sw = None if sample_weight is None else sample_weight[start:stop]
            w.append(block_from_arrays(X[start:stop], y[start:stop], sw))
            start = stop
    return w.dataset


@pytest.mark.parametrize(
    "chunk_rows, dtype", [(1, np.float64), (7, np.float32), (64, np.float64), (1000, np.float32)]
)
def test_dense_round_trip(tmp_path, dense_problem, dtype, chunk_rows):
    X, y = dense_problem
    ds = _write(tmp_path / "d.zarr", X, y, chunk_rows=chunk_rows, layout="dense", dtype=dtype,
                pieces=(5, 50, 1, 100))
    n = X.shape[0]
    assert (ds.n_samples, ds.n_features, ds.layout, ds.dtype) == (n, 6, "dense", np.dtype(dtype))
    rows = min(chunk_rows, n)
    assert ds.n_chunks == -(-n // rows)
    np.testing.assert_array_equal(ds.chunk_starts, list(range(0, n, rows)) + [n])
    for i in range(ds.n_chunks):
        s, e = ds.chunk_starts[i], ds.chunk_starts[i + 1]
        block = ds.read_chunk(i)
        assert isinstance(block, DenseBlock) and block.X.dtype == dtype
        assert ds.chunk_n_rows(i) == e - s == block.n_samples
        np.testing.assert_array_equal(block.X, X[s:e].astype(dtype))
        np.testing.assert_array_equal(block.y, y[s:e])
        assert block.y.dtype == np.float64 and block.sample_weight is None
    np.testing.assert_array_equal(ds.classes, [-1.0, 1.0])
    assert ds.attrs["class_counts"] == [int((y == -1).sum()), int((y == 1).sum())]
    assert ds.nbytes == n * 6 * np.dtype(dtype).itemsize + 8 * n


@pytest.mark.parametrize(
    "chunk_rows, dtype", [(3, np.float64), (40, np.float32), (97, np.float64), (250, np.float32)]
)
def test_csr_round_trip_with_empty_rows_and_chunks(tmp_path, csr_problem, dtype, chunk_rows):
    X, y = csr_problem
    ds = _write(tmp_path / "s.zarr", X, y, chunk_rows=chunk_rows, layout="sparse", dtype=dtype,
                pieces=(1, 33, 2, 70))
    assert ds.layout == "sparse" and ds.nnz == X.nnz == ds.attrs["nnz"]
    np.testing.assert_array_equal(ds.chunk_nnz_starts, X.indptr[ds.chunk_starts])
    empty_chunks = 0
    for i in range(ds.n_chunks):
        s, e = ds.chunk_starts[i], ds.chunk_starts[i + 1]
        block = ds.read_chunk(i)
        assert isinstance(block, CSRBlock)
        assert block.indptr.dtype == np.int64 and block.indices.dtype == np.int32
        assert block.data.dtype == dtype and block.indptr[0] == 0
        expected = X[s:e]
        np.testing.assert_array_equal(block.indptr, expected.indptr)
        np.testing.assert_array_equal(block.indices, expected.indices)
        np.testing.assert_array_equal(block.data, expected.data.astype(dtype))
        np.testing.assert_array_equal(block.y, y[s:e])
        empty_chunks += block.indptr[-1] == 0
    if chunk_rows <= 40:
        assert empty_chunks >= 1  # rows 40..119 are empty: the round trip covered empty chunks
    Xr, yr, _ = collect(ds)
    assert (Xr != X.astype(dtype)).nnz == 0


def test_layout_conversion_in_writer(tmp_path, csr_problem, dense_problem):
    X, y = csr_problem
    dense = _write(tmp_path / "d.zarr", X, y, chunk_rows=64, layout="dense", dtype=np.float64)
    np.testing.assert_array_equal(collect(dense)[0], X.toarray())
    Xd, yd = dense_problem
    sparse = _write(tmp_path / "s.zarr", Xd, yd, chunk_rows=64, layout="sparse", dtype=np.float64)
    np.testing.assert_array_equal(collect(sparse)[0].toarray(), Xd)
    assert sparse.nnz == np.count_nonzero(Xd)


def test_append_sizes_do_not_change_the_result(tmp_path, csr_problem):
    X, y = csr_problem
    a = _write(tmp_path / "a.zarr", X, y, chunk_rows=30, layout="sparse", dtype=np.float32)
    b = _write(tmp_path / "b.zarr", X, y, chunk_rows=30, layout="sparse", dtype=np.float32,
               pieces=[1] * 61 + [29, 30, 31])
    for i in range(a.n_chunks):
        ca, cb = a.read_chunk(i), b.read_chunk(i)
        for name in ("indptr", "indices", "data", "y"):
            np.testing.assert_array_equal(getattr(ca, name), getattr(cb, name))


def test_read_only_inputs_and_outputs(tmp_path, dense_problem):
    X, y = dense_problem
    X, y = X.copy(), y.copy()
    X.setflags(write=False)
    y.setflags(write=False)
    ds = _write(tmp_path / "d.zarr", X, y, chunk_rows=50, layout="dense", dtype=np.float64)
    block = ds.read_chunk(0)
    np.testing.assert_array_equal(block.X, X[:50])


def test_sample_weight_round_trip(tmp_path, dense_problem):
    X, y = dense_problem
    sw = np.linspace(0.0, 2.0, X.shape[0])
    ds = _write(tmp_path / "w.zarr", X, y, chunk_rows=64, layout="dense", dtype=np.float32,
                sample_weight=sw, pieces=(10, 100))
    assert ds.has_sample_weight
    np.testing.assert_array_equal(collect(ds)[2], sw)
    np.testing.assert_array_equal(ds.read_chunk_labels(1)[1], sw[64:128])


def test_dataset_smaller_than_one_chunk_and_empty(tmp_path):
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10.0) % 2
    ds = _write(tmp_path / "small.zarr", X, y, chunk_rows=1000, layout="dense", dtype=np.float64)
    assert ds.n_chunks == 1 and ds.attrs["chunk_rows"] == 10
    with DatasetWriter(tmp_path / "empty.zarr", n_features=3, layout="sparse", dtype="float32",
                       chunk_rows=100) as w:
        pass
    empty = w.dataset
    assert (empty.n_samples, empty.n_chunks, empty.nnz) == (0, 0, 0)
    assert list(empty.iter_chunks()) == []
    X, y = empty.to_dask()
    assert X.shape == (0, 3) and y.shape == (0,)


def test_metadata_pickle_info_repr(tmp_path, csr_problem):
    X, y = csr_problem
    ds = _write(tmp_path / "s.zarr", X, y, chunk_rows=64, layout="sparse", dtype=np.float32,
                provenance={"source": ["unit-test"]})
    ds.read_chunk(0)  # opens zarr handles; pickling must drop them
    clone = pickle.loads(pickle.dumps(ds))
    np.testing.assert_array_equal(clone.read_chunk(2).indices, ds.read_chunk(2).indices)
    info = ds.info()
    json.dumps(info)
    assert info["n_samples"] == 250 and info["nnz"] == X.nnz and info["n_chunks"] == 4
    assert info["provenance"]["source"] == ["unit-test"] and "date" in info["provenance"]
    assert info["nbytes_on_disk"] > 0 and info["shuffled"] is False
    assert "layout='sparse'" in repr(ds) and "n_samples=250" in repr(ds)
    assert os.path.isabs(ds.url)
    with pytest.raises(IndexError, match="chunk 4 is out of range"):
        ds.read_chunk(4)
    with pytest.raises(IndexError):
        ds.read_chunk(-1)


def test_fsspec_memory_and_file_urls(tmp_path, memory_url, dense_problem):
    X, y = dense_problem
    ds = _write(memory_url, X, y, chunk_rows=50, layout="dense", dtype=np.float64)
    assert ds.url == memory_url
    again = open_dataset(memory_url)
    np.testing.assert_array_equal(collect(again)[0], X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(again)).read_chunk(4).X, X[200:])
    url = "file://" + str(tmp_path / "f.zarr")
    ds = _write(url, X, y, chunk_rows=50, layout="dense", dtype=np.float64)
    assert ds.url == str(tmp_path / "f.zarr")
    np.testing.assert_array_equal(collect(open_dataset(url))[0], X)


def test_exception_inside_with_leaves_nothing(tmp_path, memory_url, dense_problem):
    import fsspec

    X, y = dense_problem
    dst = tmp_path / "gone.zarr"
    with pytest.raises(RuntimeError, match="boom"):
        with DatasetWriter(dst, n_features=6, layout="dense", dtype="float32", chunk_rows=10) as w:
            w.append(block_from_arrays(X, y))
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []
    with pytest.raises(RuntimeError, match="boom"):
        with DatasetWriter(memory_url, n_features=6, layout="dense", dtype="float32",
                           chunk_rows=10) as w:
            w.append(block_from_arrays(X, y))
            raise RuntimeError("boom")
    assert not fsspec.filesystem("memory").exists(memory_url[len("memory://"):])


def test_unfinished_write_is_refused(tmp_path, memory_url, dense_problem):
    X, y = dense_problem
    # fsspec stores are written in place: a writer that never closes leaves complete=False
    w = DatasetWriter(memory_url, n_features=6, layout="dense", dtype="float32", chunk_rows=10)
    w.append(block_from_arrays(X, y))
    with pytest.raises(DataLayoutError, match="the write did not finish"):
        open_dataset(memory_url)
    w.abort()
    # a local writer's partial data lives in a tmp sibling that is not a complete dataset
    w = DatasetWriter(tmp_path / "x.zarr", n_features=6, layout="dense", dtype="float32",
                      chunk_rows=10)
    w.append(block_from_arrays(X, y))
    assert not (tmp_path / "x.zarr").exists()
    (partial,) = tmp_path.iterdir()
    assert partial.name.startswith("x.zarr.tmp-")
    with pytest.raises(DataLayoutError, match="the write did not finish"):
        open_dataset(partial)
    w.abort()
    assert list(tmp_path.iterdir()) == []


def test_complete_flag_and_format_checked(tmp_path, dense_problem):
    X, y = dense_problem
    ds = _write(tmp_path / "d.zarr", X, y, chunk_rows=50, layout="dense", dtype=np.float64)
    meta_path = tmp_path / "d.zarr" / "zarr.json"
    meta = json.loads(meta_path.read_text())
    meta["attributes"]["complete"] = False
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DataLayoutError, match=r"d\.zarr is incomplete: the write did not finish"):
        open_dataset(ds.url)
    meta["attributes"]["complete"] = True
    meta["attributes"]["dsvm_format"] = 99
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DataLayoutError, match="dsvm_format=99"):
        open_dataset(ds.url)
    with pytest.raises(FileNotFoundError, match="no dsvm dataset"):
        open_dataset(tmp_path / "missing.zarr")


def _set_shape(array_dir, shape):
    meta_path = array_dir / "zarr.json"
    meta = json.loads(meta_path.read_text())
    meta["shape"] = list(shape)
    meta_path.write_text(json.dumps(meta))


def test_x_and_y_length_mismatch_is_named(tmp_path, dense_problem):
    X, y = dense_problem
    ds = _write(tmp_path / "d.zarr", X, y, chunk_rows=50, layout="dense", dtype=np.float64)
    _set_shape(tmp_path / "d.zarr" / "y", (200,))  # 3 labels short
    with pytest.raises(DataLayoutError, match=r"y has shape \(200,\).*\(203,\)"):
        open_dataset(ds.url)
    # a handle opened before the damage (e.g. on a worker) sees it when reading the chunk
    stale = pickle.loads(pickle.dumps(ds))
    np.testing.assert_array_equal(stale.read_chunk(0).y, y[:50])
    with pytest.raises(DataLayoutError, match="chunk 4: X has 3 rows but y has 0"):
        stale.read_chunk(4)


def test_sparse_length_mismatch_is_named(tmp_path, csr_problem):
    X, y = csr_problem
    ds = _write(tmp_path / "s.zarr", X, y, chunk_rows=100, layout="sparse", dtype=np.float64)
    _set_shape(tmp_path / "s.zarr" / "y", (240,))
    with pytest.raises(DataLayoutError, match="chunk 2: X has 50 rows but y has 40"):
        ds.read_chunk(2)


def test_read_chunk_reads_only_its_chunk(tmp_path, dense_problem, csr_problem):
    X, y = dense_problem
    ds = _write(tmp_path / "d.zarr", X, y, chunk_rows=50, layout="dense", dtype=np.float64)
    # Replace every other chunk file of X and y by garbage: reading them would fail to decode.
    for name in ("X/c/0/0", "X/c/2/0", "y/c/0", "y/c/2"):
        (tmp_path / "d.zarr" / name).write_bytes(b"not zstd")
    np.testing.assert_array_equal(ds.read_chunk(1).X, X[50:100])
    np.testing.assert_array_equal(ds.read_chunk(3).y, y[150:200])
    with pytest.raises(Exception):  # noqa: B017 - whatever the codec raises on garbage
        ds.read_chunk(2)


def test_overwrite_rules(tmp_path, dense_problem):
    X, y = dense_problem
    dst = tmp_path / "d.zarr"
    _write(dst, X, y, chunk_rows=50, layout="dense", dtype=np.float64)
    with pytest.raises(FileExistsError, match=r"d\.zarr already exists; pass overwrite=True"):
        DatasetWriter(dst, n_features=6, layout="dense", dtype="float64", chunk_rows=5)
    ds = _write(dst, X[:10], y[:10], chunk_rows=5, layout="dense", dtype=np.float64,
                overwrite=True)
    assert open_dataset(dst).n_samples == 10 and ds.n_chunks == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.zarr"]
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("...")
    with pytest.raises(FileExistsError, match="is not a zarr store"):
        DatasetWriter(precious, n_features=6, layout="dense", dtype="float64", chunk_rows=5,
                      overwrite=True)
    assert (precious / "thesis.tex").exists()


@pytest.mark.parametrize(
    "block, match",
    [
        (DenseBlock(X=np.array([[1.0, np.nan, 0.0]]), y=np.array([1.0])),
         r"row 0: X has the non-finite value nan in column 1"),
        (DenseBlock(X=np.ones((2, 3)), y=np.array([1.0, np.inf])), r"row 1: y is inf"),
        (DenseBlock(X=np.ones((2, 3)), y=np.ones(2), sample_weight=np.array([1.0, -2.0])),
         r"row 1: sample_weight is -2.0"),
        (CSRBlock(indptr=np.array([0, 2]), indices=np.array([2, 1], np.int32),
                  data=np.ones(2), y=np.ones(1), n_features=3), "row 0: unsorted column index 1"),
        (CSRBlock(indptr=np.array([0, 1, 3]), indices=np.array([0, 1, 1], np.int32),
                  data=np.ones(3), y=np.ones(2), n_features=3), "row 1: duplicate column index 1"),
        (CSRBlock(indptr=np.array([0, 1]), indices=np.array([3], np.int32),
                  data=np.ones(1), y=np.ones(1), n_features=3), r"column index 3 is out of range"),
    ],
)
def test_writer_rejects_bad_values(tmp_path, block, match):
    layout = "dense" if isinstance(block, DenseBlock) else "sparse"
    with pytest.raises(DataFormatError, match=match):
        with DatasetWriter(tmp_path / "bad.zarr", n_features=3, layout=layout, dtype="float64",
                           chunk_rows=4, source_name="input") as w:
            w.append(block)
    assert list(tmp_path.iterdir()) == []


def test_writer_rejects_inconsistent_blocks(tmp_path):
    with DatasetWriter(tmp_path / "a.zarr", n_features=3, layout="dense", dtype="float32",
                       chunk_rows=4) as w:
        with pytest.raises(DataLayoutError, match="the block has 2 features but the dataset has 3"):
            w.append(DenseBlock(X=np.ones((2, 2)), y=np.ones(2)))
        with pytest.raises(DataLayoutError, match=r"X has 2 rows but y has shape \(3,\)"):
            w.append(DenseBlock(X=np.ones((2, 3)), y=np.ones(3)))
        w.append(DenseBlock(X=np.ones((2, 3)), y=np.array([1.0, -1.0])))
        with pytest.raises(DataLayoutError, match="some blocks have sample_weight"):
            w.append(DenseBlock(X=np.ones((2, 3)), y=np.ones(2), sample_weight=np.ones(2)))
    assert w.dataset.n_samples == 2
    with pytest.raises(ValueError, match="layout must be one of"):
        DatasetWriter(tmp_path / "b.zarr", n_features=3, layout="csr", dtype="float32",
                      chunk_rows=4)
    with pytest.raises(ValueError, match="chunk_rows must be a positive int"):
        DatasetWriter(tmp_path / "b.zarr", n_features=3, layout="dense", dtype="float32",
                      chunk_rows=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zarr"]


def test_sparse_zarr_chunking_follows_row_chunks(tmp_path, rng):
    X = sp.random(4000, 100, density=0.1, format="csr", random_state=3)
    y = np.where(rng.random(4000) < 0.5, 1.0, -1.0)
    ds = _write(tmp_path / "s.zarr", X, y, chunk_rows=1000, layout="sparse", dtype=np.float32)
    handles = ds._open()
    nnz_chunk = handles["X/data"].chunks[0]
    per_row_chunk = np.diff(ds.chunk_nnz_starts).mean()
    # a quarter of a row chunk's nnz (rounded up to 1024): a row chunk reads ~4-5 zarr chunks
    assert per_row_chunk / 4 <= nnz_chunk <= per_row_chunk / 4 + 1024
    assert handles["X/indptr"].chunks == (1000,) and handles["y"].chunks == (1000,)


def test_write_arrays_takes_text_labels_and_names_what_it_cannot_take(tmp_path):
    """``write_arrays`` of a frame's text labels ("basic"/"mid"/"luxury") said "labels must be
    numbers", where ``convert`` of the same table stores them as named codes; a frame with a
    text column said "dtype object"; arrays or a frame given where the path goes said
    "expected str, bytes or os.PathLike object, not ndarray"."""
    import pandas as pd

    import dsvm

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"sqft": rng.integers(400, 5000, 300), "rooms": rng.integers(1, 8, 300),
                          "district": rng.choice(["north", "south"], 300)})
    kind = np.where(frame.sqft > 3000, "luxury", np.where(frame.sqft > 1500, "mid", "basic"))
    ds = dsvm.write_arrays(tmp_path / "t.zarr", frame[["sqft", "rooms"]], kind)
    assert ds.label_names == ["basic", "luxury", "mid"]
    y = np.concatenate([ds.read_chunk(i).y for i in range(ds.n_chunks)])
    np.testing.assert_array_equal(np.asarray(ds.label_names)[y.astype(int)], kind)
    clf = dsvm.SVMClassifier(random_state=0).fit(tmp_path / "t.zarr")
    assert list(clf.classes_) == ["basic", "luxury", "mid"]
    with pytest.raises(DataFormatError, match=r"missing label at row 7 \(1 in all\)"):
        dsvm.write_arrays(tmp_path / "m.zarr", frame[["sqft"]], pd.Series(kind).where(
            frame.index != 7))
    with pytest.raises(DataFormatError, match=r"dtype object \(the columns \['district'\]\)"):
        dsvm.write_arrays(tmp_path / "d.zarr", frame, kind)
    with pytest.raises(TypeError, match=r"dst, the dataset to write, is a path or URL; got a "
                                        r"numpy.ndarray"):
        dsvm.write_arrays(frame.to_numpy(), kind, tmp_path / "w.zarr")
    with pytest.raises(TypeError, match=r"convert's src .* got a pandas.DataFrame.*"
                                        r"write_arrays\(path, X, y\)"):
        dsvm.convert(frame, tmp_path / "c.zarr")
    assert not any((tmp_path / n).exists() for n in ("m.zarr", "d.zarr", "c.zarr"))
