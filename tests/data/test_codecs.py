"""The writer's ``codec=`` option: every codec round-trips, is recorded in zarr's metadata (so
reading needs no option), and a bad name is refused before anything is written."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.cli import main
from dsvm.data import DatasetWriter, convert, open_dataset, write_arrays, write_synthetic
from dsvm.data.attrs import AUTO_MIN_RATIO, CODECS, DEFAULT_CODEC

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


@pytest.mark.parametrize("codec", [c for c in CODECS if c != "auto"])
def test_every_codec_round_trips_dense_and_sparse(tmp_path, codec, dense_problem, csr_problem):
    for name, (X, y) in (("dense", dense_problem), ("sparse", csr_problem)):
        path = tmp_path / f"{name}.zarr"
        ds = write_arrays(path, X, y, chunk_rows=37, layout=name, codec=codec)
        _same_chunks(open_dataset(path), X, y)
        arrays = ["X"] if name == "dense" else ["X/indptr", "X/indices", "X/data"]
        for array in arrays + ["y", "chunk_starts"]:
            assert _codec_names(path, array) == STORED[codec], (name, array)
        assert ds.attrs["codec"] == codec and ds.info()["codec"] == codec
        assert ds.n_chunks == -(-X.shape[0] // 37)


def test_auto_codec_compresses_only_what_shrinks(tmp_path, rng):
    """The default, "auto": LZ4 where it shrinks the first chunk's values >= 1.5x (0/1 values,
    a sparse set's data and indices), none for float noise, which LZ4 shrinks ~1.1x."""
    assert DEFAULT_CODEC == "auto" and AUTO_MIN_RATIO == 1.5
    y = np.where(rng.random(2000) < 0.5, 1.0, -1.0)
    noise = rng.standard_normal((2000, 30)).astype(np.float32)
    binary = (rng.random((2000, 30)) < 0.1).astype(np.float32)
    cases = {"noise": (noise, "none"), "binary": (binary, "blosc-lz4"),
             "sparse": (sp.csr_matrix(binary), "blosc-lz4")}
    for name, (X, chosen) in cases.items():
        ds = write_arrays(tmp_path / f"{name}.zarr", X, y, chunk_rows=500,
                          layout="sparse" if sp.issparse(X) else "dense")
        assert ds.attrs["codec"] == chosen, name
        assert _codec_names(tmp_path / f"{name}.zarr", "y") == STORED[chosen]
        _same_chunks(open_dataset(tmp_path / f"{name}.zarr"), X, y)
    with DatasetWriter(tmp_path / "empty.zarr", n_features=3, layout="dense", dtype="float32",
                       chunk_rows=10) as writer:
        pass
    assert writer.dataset is not None and writer.dataset.attrs["codec"] == "blosc-lz4"


def test_datasets_without_the_codec_attribute_read_as_before(tmp_path, dense_problem):
    ds = write_arrays(tmp_path / "d.zarr", *dense_problem, codec="blosc-lz4")
    del ds.attrs["codec"]  # as written before the attribute existed
    assert ds.info()["codec"] == "blosc-lz4"
    _same_chunks(ds, *dense_problem)


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
    with pytest.raises(ValueError,
                       match="codec must be one of 'auto', 'blosc-lz4', 'zstd', 'none'"):
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
    assert "codec must be one of 'auto', 'blosc-lz4', 'zstd', 'none'; got 'gzip'" in err
    assert not (tmp_path / "b.zarr").exists()
