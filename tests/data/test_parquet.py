"""Parquet conversion (#11 item 2): real Parquet files written with pyarrow in tmp_path."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dsvm
from dsvm.cli import main
from dsvm.exceptions import DataFormatError, DataLayoutError

from .conftest import collect

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _table(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    return pa.table({"a": X[:, 0], "b": X[:, 1].astype(np.float32),
                     "label": y, "c": (X[:, 2] * 10).astype(np.int64),
                     "flag": X[:, 2] > 0}), X, y


def _expected(X):
    return np.column_stack([X[:, 0], X[:, 1].astype(np.float32), (X[:, 2] * 10).astype(np.int64),
                            X[:, 2] > 0])


def test_file_directory_and_glob_convert_the_same_rows(tmp_path):
    table, X, y = _table()
    pq.write_table(table, tmp_path / "one.parquet", row_group_size=128)
    os.mkdir(tmp_path / "dir")
    pq.write_table(table.slice(0, 200), tmp_path / "dir" / "part-0.parquet", row_group_size=64)
    pq.write_table(table.slice(200), tmp_path / "dir" / "part-1.parquet", row_group_size=64)
    for name, src in (("file", tmp_path / "one.parquet"), ("dir", tmp_path / "dir"),
                      ("glob", f"file://{tmp_path}/dir/part-*.parquet")):
        ds = dsvm.convert(src, tmp_path / f"{name}.zarr", label_column="label", chunk_rows=100)
        Xd, yd, _ = collect(ds)
        assert ds.n_features == 4 and ds.n_samples == 500 and ds.labeled, name
        np.testing.assert_allclose(Xd, _expected(X), rtol=1e-6, err_msg=name)
        np.testing.assert_array_equal(yd, y)
    only = dsvm.convert(tmp_path / "one.parquet", tmp_path / "fc.zarr", label_column="label",
                        feature_columns=["c", "a"])
    np.testing.assert_allclose(collect(only)[0], _expected(X)[:, [2, 0]], rtol=1e-6)
    unlabeled = dsvm.convert(tmp_path / "one.parquet", tmp_path / "u.zarr", labeled=False,
                             feature_columns=["a", "b"])
    assert not unlabeled.labeled and np.isnan(collect(unlabeled)[1]).all()


def test_the_index_pandas_stored_is_no_feature_unless_named(tmp_path):
    """A filtered pandas frame keeps its row labels, which to_parquet stores as a column
    (``__index_level_0__``): converted, the row numbers became a feature."""
    pd = pytest.importorskip("pandas")
    _, X, y = _table()
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": y})
    kept = frame[frame.b > 0]
    kept.to_parquet(tmp_path / "kept.parquet")
    assert "__index_level_0__" in pq.read_schema(tmp_path / "kept.parquet").names
    ds = dsvm.convert(tmp_path / "kept.parquet", tmp_path / "k.zarr", label_column="label")
    np.testing.assert_allclose(collect(ds)[0], kept[["a", "b"]].to_numpy(), rtol=1e-6)
    named = dsvm.convert(tmp_path / "kept.parquet", tmp_path / "n.zarr", label_column="label",
                         feature_columns=["a", "__index_level_0__"])
    np.testing.assert_array_equal(collect(named)[0][:, 1], kept.index.to_numpy())


def test_missing_values_name_file_row_group_column_and_row(tmp_path):
    a = np.arange(300, dtype=np.float64)
    mask = np.zeros(300, dtype=bool)
    mask[237] = True
    table = pa.table({"y": np.arange(300) % 2, "a": pa.array(a, mask=mask), "b": a})
    pq.write_table(table, tmp_path / "m.parquet", row_group_size=100)
    with pytest.raises(DataFormatError) as err:
        dsvm.convert(tmp_path / "m.parquet", tmp_path / "m.zarr", label_column="y")
    msg = str(err.value)
    assert "m.parquet, row group 2, column 'a', row 37" in msg and "fill" in msg, msg
    assert not os.path.exists(tmp_path / "m.zarr")
    ds = dsvm.convert(tmp_path / "m.parquet", tmp_path / "m.zarr", label_column="y",
                      fill_missing=-1.0)
    X, _, _ = collect(ds)
    assert X[237, 0] == -1.0 and X[236, 0] == 236.0


def _no_complete_dataset(path):
    if os.path.exists(path):
        with pytest.raises((DataLayoutError, FileNotFoundError)):
            dsvm.open_dataset(path)


@pytest.mark.parametrize("case", ["text column", "no label column", "corrupt", "bad fill"])
def test_bad_parquet_is_one_line_and_exit_2(tmp_path, capsys, case):
    table, _, _ = _table(50)
    src = tmp_path / "t.parquet"
    args = [src, tmp_path / "o.zarr", "--label-column", "label"]
    if case == "text column":
        pq.write_table(table.append_column("city", pa.array(["x"] * 50)), src)
        needle = "column 'city' has type string"
    elif case == "no label column":
        pq.write_table(table, src)
        args[3] = "target"
        needle = "label_column 'target' is not a column"
    elif case == "corrupt":
        pq.write_table(table, src)
        data = src.read_bytes()
        src.write_bytes(data[: len(data) // 2] + b"\0" * 64 + data[-200:])
        needle = "t.parquet"
    else:
        pq.write_table(table, src)
        args += ["--fill-missing", "nan"]
        needle = "--fill-missing"
    capsys.readouterr()
    try:
        code = main(["convert", *map(str, args)])
    except SystemExit as exc:  # (a flag's value argparse refuses: --fill-missing nan)
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and needle in err[0], err
    _no_complete_dataset(tmp_path / "o.zarr")
