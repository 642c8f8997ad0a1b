"""The writer's ``codec=`` option: every codec round-trips, is recorded in zarr's metadata (so
reading needs no option), and a bad name is refused before anything is written."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.cli import main
from dsvm.data import convert, open_dataset, write_arrays, write_synthetic
from dsvm.data.attrs import CODECS, DEFAULT_CODEC

# what each codec leaves in an array's zarr.json (after the "bytes" codec)
STORED = {"blosc-lz4": ["blosc"], "zstd": ["zstd"], "none": []}


def _codec_names(path, array: str) -> list[str]:
    meta = json.loads((path / array / "zarr.json").read_text())
    return [c["name"] for c in meta["codecs"] if c["name"] not in ("bytes", "transpose")]


def _same_chunks(ds, X, y) -> None:
    for i in range(ds.n_chunks):
        s, e = ds.chunk_starts[i], ds.chunk_starts[i + 1]
        block = ds.read_chunk(i)
        got = block.X if ds.layout == "dense" else sp.csr_matrix(
            (block.data, block.indices, block.indptr), shape=(e - s, ds.n_features)).toarray()
        want = X[s:e].toarray() if sp.issparse(X) else X[s:e]
        np.testing.assert_array_equal(got, want.astype(ds.dtype))
        np.testing.assert_array_equal(block.y, y[s:e])


@pytest.mark.parametrize("codec", CODECS)
def test_every_codec_round_trips_dense_and_sparse(tmp_path, codec, dense_problem, csr_problem):
    for name, (X, y) in (("dense", dense_problem), ("sparse", csr_problem)):
        path = tmp_path / f"{name}.zarr"
        ds = write_arrays(path, X, y, chunk_rows=37, layout=name, codec=codec)
        _same_chunks(open_dataset(path), X, y)
        arrays = ["X"] if name == "dense" else ["X/indptr", "X/indices", "X/data"]
        for array in arrays + ["y", "chunk_starts"]:
            assert _codec_names(path, array) == STORED[codec], (name, array)
        assert ds.n_chunks == -(-X.shape[0] // 37)


def test_default_codec_is_blosc_lz4(tmp_path, dense_problem):
    assert DEFAULT_CODEC == "blosc-lz4"
    write_arrays(tmp_path / "d.zarr", *dense_problem)
    assert _codec_names(tmp_path / "d.zarr", "X") == ["blosc"]


def test_convert_and_synthetic_take_a_codec(tmp_path, dense_problem):
    X, y = dense_problem
    np.savez(tmp_path / "a.npz", X=X, y=y)
    convert(tmp_path / "a.npz", tmp_path / "a.zarr", codec="none")
    assert _codec_names(tmp_path / "a.zarr", "X") == []
    _same_chunks(open_dataset(tmp_path / "a.zarr"), X, y)
    write_synthetic(tmp_path / "s.zarr", 50, 3, codec="zstd")
    assert _codec_names(tmp_path / "s.zarr", "X") == ["zstd"]


@pytest.mark.parametrize("bad", ["lz4", "ZSTD", "", None, 3])
def test_bad_codec_is_refused_before_writing(tmp_path, dense_problem, bad):
    X, y = dense_problem
    np.savez(tmp_path / "a.npz", X=X, y=y)
    with pytest.raises(ValueError, match="codec must be one of 'blosc-lz4', 'zstd', 'none'"):
        write_arrays(tmp_path / "w.zarr", X, y, codec=bad)
    with pytest.raises(ValueError, match="codec must be one of"):
        convert(tmp_path / "a.npz", tmp_path / "c.zarr", codec=bad)
    with pytest.raises(ValueError, match="codec must be one of"):
        write_synthetic(tmp_path / "s.zarr", 10, 2, codec=bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npz"]


def test_cli_codec(tmp_path, dense_problem, capsys):
    X, y = dense_problem
    np.savez(tmp_path / "a.npz", X=X, y=y)
    assert main(["convert", str(tmp_path / "a.npz"), str(tmp_path / "z.zarr"),
                 "--codec", "zstd"]) == 0
    assert _codec_names(tmp_path / "z.zarr", "X") == ["zstd"]
    capsys.readouterr()
    assert main(["convert", str(tmp_path / "a.npz"), str(tmp_path / "b.zarr"),
                 "--codec", "gzip"]) == 2
    err = capsys.readouterr().err
    assert "codec must be one of 'blosc-lz4', 'zstd', 'none'; got 'gzip'" in err
    assert not (tmp_path / "b.zarr").exists()
