"""convert / write_arrays: equality with references, layout and chunk choices, failure cleanup,
shuffling, bounded memory."""

from __future__ import annotations

import json
import os
import time
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data import convert, open_dataset, shuffle_dataset, write_arrays
from dsvm.data.blocks import block_from_arrays
from dsvm.data.convert import auto_chunk_rows
from dsvm.data.shuffle import shuffle_blocks
from dsvm.exceptions import DataFormatError

from .conftest import collect, write_libsvm


def _sorted_rows(X, y):
    """Rows as a canonical multiset: (label, dense row) sorted lexicographically."""
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    table = np.column_stack([y, dense])
    return table[np.lexsort(table.T[::-1])]


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_libsvm_matches_sklearn(tmp_path, csr_problem, layout, dtype):
    from sklearn.datasets import load_svmlight_file

    X, y = csr_problem
    X = X.copy()
    X.data = np.round(X.data * 1e3) / 7.0  # long decimal expansions, some > 2**53 mantissas
    src = write_libsvm(tmp_path / "p.svm", X, y)
    ds = convert(src, tmp_path / "o.zarr", layout=layout, dtype=dtype, chunk_rows=64)
    Xr, yr, _ = collect(ds)
    Xs, ys = load_svmlight_file(str(src), n_features=40, dtype=np.dtype(dtype))
    assert ds.layout == layout and ds.dtype == np.dtype(dtype) and ds.n_features == 40
    np.testing.assert_array_equal(Xr if layout == "dense" else Xr.toarray(), Xs.toarray())
    np.testing.assert_array_equal(yr, ys)


def test_auto_layout_and_chunk_rows(tmp_path, rng):
    dense = sp.csr_matrix(np.where(rng.random((300, 4)) < 0.6, 1.0, 0.0))
    sparse = sp.random(300, 100, density=0.02, format="csr", random_state=1)
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    a = convert(write_libsvm(tmp_path / "d.svm", dense, y), tmp_path / "d.zarr")
    b = convert(write_libsvm(tmp_path / "s.svm", sparse, y), tmp_path / "s.zarr")
    assert (a.layout, b.layout) == ("dense", "sparse")
    assert a.n_chunks == b.n_chunks == 1 and a.attrs["chunk_rows"] == 300  # capped at n_samples
    assert auto_chunk_rows("dense", 1000, "float32") == (32 << 20) // 4008
    assert auto_chunk_rows("dense", 10**6, "float64") == 1024  # at least 1024 rows
    assert auto_chunk_rows("sparse", 10**6, "float32", nnz_per_row=100) == (32 << 20) // 816
    assert auto_chunk_rows("dense", 10, "float32", n_samples=50) == 50


def test_failed_conversion_leaves_nothing(tmp_path, memory_url):
    import fsspec

    src = tmp_path / "late_error.svm"
    src.write_text("1 1:1\n-1 2:1\n" * 3000 + "1 2:1 1:1 2:5\n")
    dst = tmp_path / "out" / "x.zarr"
    # single pass (n_features and layout given): the error comes after chunks were written
    with pytest.raises(DataFormatError, match=r"late_error\.svm, line 6001: duplicate"):
        convert(src, dst, n_features=2, layout="sparse", chunk_rows=100)
    assert not dst.exists()
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []
    with pytest.raises(DataFormatError, match="line 6001"):
        convert(src, memory_url, n_features=2, layout="dense", chunk_rows=100)
    assert not fsspec.filesystem("memory").exists(memory_url[len("memory://"):])
    with pytest.raises(DataFormatError, match="line 6001"):
        convert(src, dst, shuffle=True, chunk_rows=100)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late_error.svm"]


def test_existing_destination(tmp_path, dense_problem):
    X, y = dense_problem
    write_arrays(tmp_path / "a.zarr", X, y)
    with pytest.raises(FileExistsError, match=r"a\.zarr already exists; pass overwrite=True"):
        convert(tmp_path / "missing-input.svm", tmp_path / "a.zarr")  # checked before reading
    ds = write_arrays(tmp_path / "a.zarr", X[:20], y[:20], overwrite=True)
    assert ds.n_samples == 20


def test_shuffle_is_deterministic_and_keeps_rows(tmp_path, csr_problem):
    X, y = csr_problem
    src = write_libsvm(tmp_path / "p.svm", X, y)
    a = convert(src, tmp_path / "a.zarr", shuffle=True, seed=5, chunk_rows=16,
                dtype="float64")
    b = convert(src, tmp_path / "b.zarr", shuffle=True, seed=5, chunk_rows=16,
                dtype="float64")
    c = convert(src, tmp_path / "c.zarr", shuffle=True, seed=6, chunk_rows=16,
                dtype="float64")
    (Xa, ya, _), (Xb, yb, _), (Xc, yc, _) = collect(a), collect(b), collect(c)
    assert a.attrs["shuffled"] is True and a.attrs["shuffle_seed"] == 5
    assert a.n_chunks > 10  # several buckets were used (two chunks per bucket)
    assert (Xa != Xb).nnz == 0 and np.array_equal(ya, yb)
    assert not np.array_equal(ya, yc) or (Xa != Xc).nnz > 0
    assert not np.array_equal(ya, y)
    np.testing.assert_array_equal(_sorted_rows(Xa, ya), _sorted_rows(X, y))
    np.testing.assert_array_equal(_sorted_rows(Xc, yc), _sorted_rows(X, y))
    plain = convert(src, tmp_path / "plain.zarr")
    assert plain.attrs["shuffled"] is False and plain.attrs["shuffle_seed"] is None


def test_shuffle_does_not_depend_on_input_blocking(dense_problem):
    X, y = dense_problem
    whole = [block_from_arrays(X, y)]
    pieces = [block_from_arrays(X[i:i + 17], y[i:i + 17]) for i in range(0, 203, 17)]
    out = []
    for blocks in (whole, pieces):
        shuffled = list(shuffle_blocks(blocks, seed=11, n_buckets=7, layout="dense",
                                       dtype=np.float64))
        out.append(np.concatenate([np.column_stack([b.y, b.X]) for b in shuffled]))
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(_sorted_rows(out[0][:, 1:], out[0][:, 0]), _sorted_rows(X, y))


def test_shuffle_dataset(tmp_path, csr_problem):
    X, y = csr_problem
    ds = write_arrays(tmp_path / "a.zarr", X, y, chunk_rows=32, dtype="float64")
    sh = shuffle_dataset(ds, tmp_path / "b.zarr", seed=1)
    Xs, ys, _ = collect(sh)
    assert sh.attrs["shuffled"] and sh.layout == "sparse" and sh.attrs["chunk_rows"] == 32
    np.testing.assert_array_equal(_sorted_rows(Xs, ys), _sorted_rows(X, y))


def test_write_arrays_inputs(tmp_path, rng):
    Xi = rng.integers(-3, 4, size=(120, 5))
    y = np.arange(120) % 3
    ds = write_arrays(tmp_path / "i.zarr", Xi, y, chunk_rows=50)
    assert ds.dtype == np.float64 and ds.layout == "dense"
    np.testing.assert_array_equal(collect(ds)[0], Xi)
    np.testing.assert_array_equal(ds.classes, [0.0, 1.0, 2.0])
    coo = sp.coo_matrix((np.array([1.0, 2.0, 5.0], np.float32), ([0, 0, 3], [1, 1, 2])),
                        shape=(120, 50))  # a duplicate entry: scipy means the sum
    ds = write_arrays(tmp_path / "c.zarr", coo, y, chunk_rows=50)
    assert ds.layout == "sparse" and ds.dtype == np.float32 and ds.nnz == 2
    assert collect(ds)[0][0, 1] == 3.0 and coo.nnz == 3  # the caller's matrix is untouched
    ds = write_arrays(tmp_path / "l.zarr", Xi, y, layout="sparse", dtype="float32")
    assert ds.layout == "sparse" and ds.nnz == np.count_nonzero(Xi)
    with pytest.raises(DataFormatError, match=r"X has 120 rows but y has shape \(119,\)"):
        write_arrays(tmp_path / "bad.zarr", Xi, y[:-1])
    with pytest.warns(UserWarning, match="all 120 samples have the label 1"):
        write_arrays(tmp_path / "one.zarr", Xi, np.ones(120))  # a one-class test shard
    bad = Xi.astype(float)
    bad[77, 1] = np.nan
    with pytest.raises(DataFormatError, match="write_arrays input, row 77: X has the non-finite"):
        write_arrays(tmp_path / "bad.zarr", bad, y, chunk_rows=10)
    assert not (tmp_path / "bad.zarr").exists()


def test_regression_targets_have_no_classes(tmp_path, rng):
    X = rng.standard_normal((1500, 3))
    ds = write_arrays(tmp_path / "r.zarr", X, X @ [1.0, 2.0, 3.0])
    assert ds.classes is None and ds.attrs["class_counts"] is None


def test_bounded_memory_conversion(tmp_path, rng):
    """A ~100 MB libsvm file converts with a traced peak well below its size."""
    n, k = 20000, 20
    idx = np.sort(np.argsort(rng.random((n, 500)), axis=1)[:, :k] + 1, axis=1)
    vals = rng.random((n, k))
    labels = np.where(rng.random(n) < 0.5, "+1", "-1")
    lines = [labels[i] + " " + " ".join(f"{a}:{b:.6f}" for a, b in zip(idx[i], vals[i]))
             for i in range(n)]
    block = ("\n".join(lines) + "\n").encode()
    src = tmp_path / "big.svm"
    with open(src, "wb") as f:
        for _ in range(-(-100_000_000 // len(block))):
            f.write(block)
    size = src.stat().st_size
    # a small conversion first: the imports and kernels it loads (numba's compiler allocates
    # tens of MB on a cold cache) are the process's, not this conversion's
    small = tmp_path / "small.svm"
    small.write_bytes(block[:block.index(b"\n", 4096) + 1])
    convert(small, tmp_path / "small.zarr", n_features=500, layout="sparse", chunk_rows=50)
    tracemalloc.start()
    try:
        start = time.perf_counter()
        # the converter's peak is about 8 chunks' arrays (text blocks pending, the chunk joined,
        # the appenders' and codecs' buffers) plus ~20 MB that does not grow with the chunk:
        # 51 MB at 50,000 rows, too near the bound; 35 MB at 25,000 (4 MB of values a chunk)
        ds = convert(src, tmp_path / "big.zarr", n_features=500, layout="sparse",
                     chunk_rows=25_000)
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ds.n_samples == n * -(-100_000_000 // len(block)) and ds.nnz == ds.n_samples * k
    print(f"converted {size / 1e6:.0f} MB in {elapsed:.1f} s, traced peak {peak / 1e6:.0f} MB")
    assert peak < size / 2
    last = ds.read_chunk(ds.n_chunks - 1)
    np.testing.assert_array_equal(last.indices[-k:], idx[-1] - 1)


def test_memory_url_source_and_destination(tmp_path, memory_url, csr_problem):
    import fsspec

    X, y = csr_problem
    local = write_libsvm(tmp_path / "p.svm", X, y)
    fs = fsspec.filesystem("memory")
    src_url = memory_url.replace("ds.zarr", "p.svm")
    fs.pipe(src_url[len("memory://"):], local.read_bytes())
    ds = convert(src_url, memory_url, chunk_rows=64, dtype="float64")
    assert ds.url == memory_url and open_dataset(memory_url).n_samples == 250
    assert (collect(ds)[0] != X).nnz == 0


def test_leftovers_of_a_killed_conversion_are_named(tmp_path):
    """A conversion killed mid-way leaves its ``<dst>.tmp-*`` folder; the next conversion to the
    same path says so (with the folder's name) instead of leaving it unmentioned forever."""
    import warnings

    leftover = tmp_path / "d.zarr.tmp-dead1234"
    (leftover / "X").mkdir(parents=True)
    (leftover / "X" / "c0").write_bytes(b"\0" * 1024)
    X = np.ones((10, 2), dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write_arrays(tmp_path / "d.zarr", X, np.arange(10) % 2)
    messages = [str(w.message) for w in caught if "unfinished conversion" in str(w.message)]
    assert len(messages) == 1 and str(leftover) in messages[0], messages
    assert leftover.exists()  # named, not removed: another conversion may own it


def test_drop_leaves_columns_out_of_every_tabular_format(tmp_path, capsys):
    """``drop=`` / ``--drop``: an id or timestamp column is not a feature, in a numeric CSV, a
    CSV with hashed columns and Parquet; a dropped name that is not a column is named."""
    import pandas as pd

    from dsvm.cli import main

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": np.arange(10**9, 10**9 + 50), "x": rng.normal(size=50),
                          "ts": np.arange(50) * 3600, "y": rng.integers(0, 2, 50)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.assign(city=np.where(frame.x > 0, "a", "b")).to_parquet(tmp_path / "t.parquet")
    csv = convert(tmp_path / "t.csv", tmp_path / "csv.zarr", label_column="y", drop=["id", "ts"])
    np.testing.assert_allclose(collect(csv)[0][:, 0], frame.x, rtol=1e-6)
    assert csv.n_features == 1
    pq = convert(tmp_path / "t.parquet", tmp_path / "pq.zarr", label_column="y",
                 drop=["id", "ts"], categorical=["city"], hash_bits=4)
    assert pq.n_features == 1 + 2**4 and pq.attrs["hashing"]["numeric"] == ["x"]
    capsys.readouterr()
    code = main(["convert", str(tmp_path / "t.csv"), str(tmp_path / "c.zarr"), "--label-column",
                 "y", "--categorical", "ts", "--drop", "id"])
    assert code == 0 and open_dataset(tmp_path / "c.zarr").attrs["hashing"]["numeric"] == ["x"]
    for src in ("t.csv", "t.parquet"):
        code = main(["convert", str(tmp_path / src), str(tmp_path / "bad.zarr"),
                     "--label-column", "y", "--drop", "id,idd"])
        err = capsys.readouterr().err.strip()
        assert code == 2 and "--drop 'idd' is not a column" in err and "\n" not in err
        assert not os.path.exists(tmp_path / "bad.zarr")
    with pytest.raises(ValueError, match="drop= is for CSV/TSV and Parquet"):
        convert(write_libsvm(tmp_path / "p.svm", sp.csr_matrix(np.eye(3)), np.array([0, 1, 0])),
                tmp_path / "l.zarr", drop=["id"])


def test_a_zero_based_file_of_scikit_learn_converts_as_it_loads(tmp_path, capsys):
    """scikit-learn's dump_svmlight_file writes 0-based indices by default: such a file was
    refused ("feature index 0 is out of range; indices are 1-based"). It now converts as
    load_svmlight_file(zero_based="auto") reads it, is recorded as 0-based, and `dsvm eval`
    of its test file gives the model's score on the matrix; zero_based=False still refuses
    it, naming the line and the flag."""
    from sklearn.datasets import dump_svmlight_file

    from dsvm import SVMClassifier
    from dsvm.cli import main
    from tests.conftest import load_libsvm

    X, y = load_libsvm("a9a/a9a.xz", 123)
    X, y = X[:3000], y[:3000]
    dump_svmlight_file(X[:2000], y[:2000], str(tmp_path / "train.svm"))  # (zero_based=True)
    dump_svmlight_file(X[2000:], y[2000:], str(tmp_path / "test.svm"))
    ds = convert(tmp_path / "train.svm", tmp_path / "train.zarr", n_features=123)
    assert ds.n_features == 123 and ds.attrs["provenance"]["zero_based"] is True
    stored, labels, _ = collect(ds)
    assert (abs(stored - X[:2000]) > 0).nnz == 0
    np.testing.assert_array_equal(labels, y[:2000])
    with pytest.raises(DataFormatError, match=r"train\.svm, line \d+: feature index 0 is out "
                                              r"of range; .*--zero-based true"):
        convert(tmp_path / "train.svm", tmp_path / "no.zarr", zero_based=False)

    clf = SVMClassifier(random_state=0, max_epochs=3).fit(ds)
    clf.save(tmp_path / "m.dsvm")
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / "test.svm"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["accuracy"] == pytest.approx(clf.score(X[2000:], y[2000:]), abs=1e-12)

    # a 0-based file without index 0 reads as 1-based under "auto"; zero_based=True says
    rows = X[:50].tolil()
    rows[:, 0] = 0
    rows = rows.tocsr()
    rows.eliminate_zeros()
    dump_svmlight_file(rows, y[:50], str(tmp_path / "no_zero.svm"))
    auto = convert(tmp_path / "no_zero.svm", tmp_path / "auto.zarr", n_features=123)
    told = convert(tmp_path / "no_zero.svm", tmp_path / "told.zarr", n_features=123,
                   zero_based=True)
    assert auto.attrs["provenance"]["zero_based"] is False
    assert told.attrs["provenance"]["zero_based"] is True
    assert (abs(collect(told)[0] - rows) > 0).nnz == 0
    assert (abs(collect(auto)[0][:, :122] - rows[:, 1:]) > 0).nnz == 0  # shifted by one


def test_a_folder_or_glob_of_svmlight_parts_converts_as_one_file(tmp_path, capsys):
    """Spark's saveAsLibSVMFile writes a folder of part-* files and a _SUCCESS marker:
    `dsvm convert folder` said "[Errno 21] Is a directory" and a glob a multi-line fsspec
    message. Both now read the parts in order as one input (markers and checksums skipped),
    0-based together when one part has an index 0; `dsvm eval` takes the folder as raw rows.
    A folder of CSV files is refused in one line that says what to do instead."""
    from sklearn.datasets import dump_svmlight_file

    from dsvm import SVMClassifier
    from dsvm.cli import main
    from tests.conftest import load_libsvm

    X, y = load_libsvm("a9a/a9a.xz", 123)
    X, y = X[:3000], y[:3000]
    whole = tmp_path / "whole.svm"
    dump_svmlight_file(X, y, str(whole), zero_based=False)
    folder = tmp_path / "spark"
    folder.mkdir()
    lines = whole.read_text().splitlines(keepends=True)
    for i, start in enumerate(range(0, 3000, 1100)):
        (folder / f"part-{i:05d}").write_text("".join(lines[start:start + 1100]))
        (folder / f".part-{i:05d}.crc").write_bytes(b"\x00crc")
    (folder / "_SUCCESS").write_text("")
    one = convert(whole, tmp_path / "one.zarr")
    for src, name in ((folder, "folder.zarr"), (str(folder / "part-*"), "glob.zarr")):
        many = convert(src, tmp_path / name)
        assert (many.n_samples, many.n_features) == (one.n_samples, one.n_features)
        (Xm, ym, _), (Xo, yo, _) = collect(many), collect(one)
        assert (abs(Xm - Xo) > 0).nnz == 0
        np.testing.assert_array_equal(ym, yo)

    # 0-based parts: only the first holds an index 0; all are read 0-based
    zero = tmp_path / "zero"
    zero.mkdir()
    dump_svmlight_file(X[:100], y[:100], str(zero / "part-0"))  # (zero_based=True)
    rows = X[100:200].tolil()
    rows[:, 0] = 0
    dump_svmlight_file(rows.tocsr(), y[100:200], str(zero / "part-1"))
    assert b" 0:" in (zero / "part-0").read_bytes() and b" 0:" not in (zero / "part-1").read_bytes()
    both = convert(zero, tmp_path / "zero.zarr", n_features=123)
    assert both.attrs["provenance"]["zero_based"] is True
    assert (abs(collect(both)[0] - sp.vstack([X[:100], rows.tocsr()])) > 0).nnz == 0

    clf = SVMClassifier(random_state=0, max_epochs=2).fit(one)
    clf.save(tmp_path / "m.dsvm")
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "m.dsvm"), str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == clf.evaluate(one)["accuracy"]

    # a folder of CSV files is one input too (tests/data/test_readers.py), and so are its
    # raw rows for a model trained on them: read by the first file's header
    csvs = tmp_path / "csvs"
    csvs.mkdir()
    for i in range(2):
        (csvs / f"p{i}.csv").write_text("label,a\n1,2\n0,-3\n")
    assert main(["convert", str(csvs), str(tmp_path / "c.zarr")]) == 0
    table = open_dataset(tmp_path / "c.zarr")
    assert table.n_samples == 4 and table.feature_names == ["a"]
    SVMClassifier(random_state=0, max_epochs=2).fit(table).save(tmp_path / "c.dsvm")
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "c.dsvm"), str(csvs), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_samples"] == 4


def test_a_dataset_given_to_convert_is_named_or_shuffled(tmp_path, capsys):
    """``dsvm convert data.zarr new.zarr`` read the dataset's chunk files as svmlight text
    ("token '?i\\x05...' is not of the form index:value"), and a model file likewise."""
    from dsvm import SVMClassifier
    from dsvm.cli import main

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    X = X[np.argsort(X[:, 0] > 0, kind="stable")]  # sorted by label
    y = (X[:, 0] > 0).astype(np.float64)
    ds = write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=100)
    SVMClassifier(max_epochs=1).fit(ds).save(tmp_path / "m.dsvm")
    for src, said in (("d.zarr", "d.zarr is already a dsvm dataset (300 rows x 4 features): "
                                 "train on it as it is, or pass shuffle=True / --shuffle"),
                      ("m.dsvm", "m.dsvm is a dsvm model file, not data to convert")):
        assert main(["convert", str(tmp_path / src), str(tmp_path / "new.zarr")]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and said in err, err
    assert not (tmp_path / "new.zarr").exists()
    assert main(["convert", str(tmp_path / "d.zarr"), str(tmp_path / "new.zarr"),
                 "--shuffle"]) == 0
    Xs, ys, _ = collect(open_dataset(tmp_path / "new.zarr"))
    assert not np.array_equal(ys, y)  # (sorted by label before)
    order = np.lexsort(Xs.T)
    np.testing.assert_array_equal(Xs[order], X[np.lexsort(X.T)])
    np.testing.assert_array_equal(ys[order], y[np.lexsort(X.T)])
