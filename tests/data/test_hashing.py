"""Categorical columns through the hashing trick (#11 item 3): the hashed features equal
scikit-learn's FeatureHasher on the rows' "column=value" tokens, for TSV, Criteo and Parquet."""

from __future__ import annotations

import lzma

import numpy as np
import pytest
from sklearn.feature_extraction import FeatureHasher

import dsvm
from dsvm.cli import main
from dsvm.exceptions import DataFormatError

from .conftest import collect, shared_file


def _rows(n=800, seed=0):
    rng = np.random.default_rng(seed)
    label = (rng.random(n) < 0.4).astype(int)
    num = np.round(rng.normal(size=n), 3)
    city = np.array(["paris", "oslo", "lima", "", "rome"])[rng.integers(0, 5, n)]
    dev = np.array([f"d{int(v)}" for v in rng.zipf(1.6, n) % 300])
    return label, num, city, dev


def _reference(city, dev, bits):
    tokens = [[f"city={c}"] * bool(c) + [f"dev={d}"] for c, d in zip(city, dev)]
    return FeatureHasher(n_features=2**bits, input_type="string").transform(tokens)


def test_tsv_with_categorical_columns_equals_feature_hasher(tmp_path, capsys):
    label, num, city, dev = _rows()
    with open(tmp_path / "t.tsv", "w") as f:
        f.write("y\tx\tcity\tdev\n")
        for row in zip(label, num, city, dev):
            f.write("\t".join(map(str, row)) + "\n")
    capsys.readouterr()
    code = main(["convert", str(tmp_path / "t.tsv"), str(tmp_path / "t.zarr"),
                 "--label-column", "y", "--categorical", "city,dev", "--hash-bits", "10"])
    assert code == 0, capsys.readouterr().err
    ds = dsvm.open_dataset(tmp_path / "t.zarr")
    assert ds.n_features == 1 + 2**10 and ds.layout == "sparse"
    spec = ds.attrs["hashing"]
    assert spec["hash_bits"] == 10 and spec["categorical"] == ["city", "dev"]
    assert spec["numeric"] == ["x"] and "FeatureHasher" in spec["scheme"]
    X, y, _ = collect(ds)
    np.testing.assert_array_equal(y, label)
    np.testing.assert_allclose(X[:, 0].toarray().ravel(), num, rtol=1e-6)
    assert abs(X[:, 1:] - _reference(city, dev, 10)).max() == 0


def test_parquet_with_categorical_columns_equals_feature_hasher(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    label, num, city, dev = _rows(seed=1)
    city_col = pa.array([c or None for c in city]).dictionary_encode()  # null: no token
    pq.write_table(pa.table({"x": num, "city": city_col, "dev": dev, "y": label}),
                   tmp_path / "t.parquet", row_group_size=300)
    ds = dsvm.convert(tmp_path / "t.parquet", tmp_path / "t.zarr", label_column="y",
                      categorical=["city", "dev"], hash_bits=12)
    X, y, _ = collect(ds)
    np.testing.assert_array_equal(y, label)
    assert abs(X[:, 1:] - _reference(city, dev, 12)).max() == 0


def test_criteo_layout_out_of_the_box(tmp_path):
    path = shared_file("criteo_sample/criteo_kaggle_head8000_dev.txt.xz")
    ds = dsvm.convert(path, tmp_path / "c.zarr", format="criteo", hash_bits=16)
    X, y, _ = collect(ds)
    lines = lzma.open(path, "rt").read().splitlines()
    assert ds.n_samples == len(lines) == 409 and set(np.unique(y)) == {0.0, 1.0}
    fields = [ln.split("\t") for ln in lines]
    tokens = [[f"C{j - 13}={v}" for j, v in enumerate(f) if j > 13 and v] for f in fields]
    ref = FeatureHasher(n_features=2**16, input_type="string").transform(tokens)
    assert abs(X[:, 13:] - ref).max() == 0
    # the integer columns are counts with heavy tails: stored as sign(x) log(1 + |x|)
    ints = np.array([[float(v or 0) for v in f[1:14]] for f in fields])
    assert ints.max() > 1000 and ints.min() < 0  # the sample has large counts and I2's -1..-3
    logged = (np.sign(ints) * np.log1p(np.abs(ints))).astype(np.float32)
    np.testing.assert_array_equal(X[:, :13].toarray(), logged)
    assert ds.attrs["hashing"]["numeric_transform"] == "log1p"
    raw = dsvm.convert(path, tmp_path / "raw.zarr", format="criteo", hash_bits=16,
                       numeric_transform="none")
    np.testing.assert_array_equal(collect(raw)[0][:, :13].toarray(), ints)
    assert "numeric_transform" not in raw.attrs["hashing"]  # as specs written before it


def test_bad_categorical_input_is_one_clear_line(tmp_path):
    with open(tmp_path / "t.csv", "w") as f:
        f.write("y,x,city\n1,0.5,paris\n0,abc,oslo\n")
    with pytest.raises(DataFormatError, match="t.csv.*'town' is not a column"):
        dsvm.convert(tmp_path / "t.csv", tmp_path / "a.zarr", categorical=["town"])
    with pytest.raises(DataFormatError, match="t.csv.*abc"):
        dsvm.convert(tmp_path / "t.csv", tmp_path / "b.zarr", categorical=["city"])
    with pytest.raises(ValueError, match="hash_bits"):
        dsvm.convert(tmp_path / "t.csv", tmp_path / "c.zarr", categorical=["city"], hash_bits=0)


def _write_tsv(path, header, rows):
    with open(path, "w") as f:
        f.write("\t".join(header) + "\n")
        for row in rows:
            f.write("\t".join(map(str, row)) + "\n")


def test_the_model_keeps_the_hashing_and_refuses_data_hashed_otherwise(tmp_path, capsys):
    """The training data's hashing spec goes into the model (and its file); a dataset of the
    same width whose columns were hashed otherwise is refused with one line instead of
    predicting nonsense, while data converted with the same flags, unlabeled included,
    predicts as the training data."""
    label, num, city, dev = _rows(n=600, seed=2)
    _write_tsv(tmp_path / "t.tsv", ["y", "x", "city", "dev"], zip(label, num, city, dev))
    _write_tsv(tmp_path / "new.tsv", ["x", "city", "dev"], zip(num, city, dev))
    _write_tsv(tmp_path / "renamed.tsv", ["x", "city", "device"], zip(num, city, dev))
    for src, more in (("t", ["--label-column", "y", "--categorical", "city,dev"]),
                      ("new", ["--no-labels", "--categorical", "dev,city"]),
                      ("renamed", ["--no-labels", "--categorical", "city,device"])):
        code = main(["convert", str(tmp_path / f"{src}.tsv"), str(tmp_path / f"{src}.zarr"),
                     "--hash-bits", "10", *more])
        assert code == 0, capsys.readouterr().err
    clf = dsvm.SVMClassifier(max_epochs=3, random_state=0).fit(str(tmp_path / "t.zarr"))
    assert clf.hashing_["hash_bits"] == 10 and clf.hashing_["categorical"] == ["city", "dev"]
    clf.save(tmp_path / "m.dsvm")
    loaded = dsvm.load(tmp_path / "m.dsvm")
    assert loaded.hashing_ == clf.hashing_
    # the columns listed in another order hash the same tokens: accepted, same predictions
    np.testing.assert_array_equal(loaded.predict(str(tmp_path / "new.zarr")),
                                  clf.predict(str(tmp_path / "t.zarr")))
    with pytest.raises(ValueError, match=r"hashed differently.*'device'"):
        loaded.predict(str(tmp_path / "renamed.zarr"))
    capsys.readouterr()
    code = main(["predict", str(tmp_path / "m.dsvm"), str(tmp_path / "renamed.zarr"),
                 "--out", str(tmp_path / "p.npy")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "renamed.zarr" in err
    assert not (tmp_path / "p.npy").exists()


def test_criteo_test_files_without_the_label_convert_unlabeled(tmp_path):
    """Criteo's test files have the 39 fields after the label: they convert unlabeled, to the
    same features as the labeled rows; asking for labels from them is one clear error."""
    path = shared_file("criteo_sample/criteo_kaggle_head8000_dev.txt.xz")
    lines = lzma.open(path, "rt").read().splitlines()
    (tmp_path / "test.txt").write_text("".join(ln.split("\t", 1)[1] + "\n" for ln in lines))
    labeled = dsvm.convert(path, tmp_path / "a.zarr", format="criteo", hash_bits=16)
    unlabeled = dsvm.convert(tmp_path / "test.txt", tmp_path / "b.zarr", format="criteo",
                             hash_bits=16)
    assert labeled.labeled and not unlabeled.labeled
    assert unlabeled.attrs["hashing"] == labeled.attrs["hashing"]
    assert abs(collect(unlabeled)[0] - collect(labeled)[0]).max() == 0
    with pytest.raises(DataFormatError, match="39 tab-separated fields"):
        dsvm.convert(tmp_path / "test.txt", tmp_path / "c.zarr", format="criteo",
                     hash_bits=16, labeled=True)


def test_predict_on_raw_rows_converts_them_with_the_models_hashing(tmp_path, capsys):
    """``dsvm predict MODEL rows.tsv``: raw rows (with or without the label column, columns in
    any order) are converted with the model's hashing first and predicted exactly as the
    converted training rows; Criteo's label-less test layout likewise; a model that was not
    trained on hashed data refuses raw rows in one line."""
    label, num, city, dev = _rows(n=500, seed=3)
    _write_tsv(tmp_path / "t.tsv", ["y", "x", "city", "dev"], zip(label, num, city, dev))
    _write_tsv(tmp_path / "new.tsv", ["dev", "x", "city"], zip(dev, num, city))
    assert main(["convert", str(tmp_path / "t.tsv"), str(tmp_path / "t.zarr"), "--label-column",
                 "y", "--categorical", "city,dev", "--hash-bits", "10"]) == 0
    clf = dsvm.SVMClassifier(max_epochs=3, random_state=0).fit(str(tmp_path / "t.zarr"))
    clf.save(tmp_path / "m.dsvm")
    expected = clf.predict(str(tmp_path / "t.zarr"))
    for src in ("t.tsv", "new.tsv"):
        out = tmp_path / f"p-{src}.npy"
        capsys.readouterr()
        code = main(["predict", str(tmp_path / "m.dsvm"), str(tmp_path / src), "--out",
                     str(out)])
        assert code == 0, capsys.readouterr().err
        np.testing.assert_array_equal(np.load(out), expected)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".dsvm-predict-")]

    path = shared_file("criteo_sample/criteo_kaggle_head8000_dev.txt.xz")
    lines = lzma.open(path, "rt").read().splitlines()
    (tmp_path / "test.txt").write_text("".join(ln.split("\t", 1)[1] + "\n" for ln in lines))
    dsvm.convert(path, tmp_path / "c.zarr", format="criteo", hash_bits=12)
    criteo = dsvm.SVMClassifier(max_epochs=2, random_state=0).fit(str(tmp_path / "c.zarr"))
    assert criteo.hashing_["format"] == "criteo"
    criteo.save(tmp_path / "c.dsvm")
    assert main(["predict", str(tmp_path / "c.dsvm"), str(tmp_path / "test.txt"), "--out",
                 str(tmp_path / "c.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "c.npy"),
                                  criteo.predict(str(tmp_path / "c.zarr")))

    plain = dsvm.SVMClassifier(max_epochs=1, random_state=0).fit(
        np.random.default_rng(0).normal(size=(50, 3)), np.arange(50) % 2)
    plain.save(tmp_path / "plain.dsvm")
    capsys.readouterr()
    code = main(["predict", str(tmp_path / "plain.dsvm"), str(tmp_path / "t.tsv"), "--out",
                 str(tmp_path / "q.npy")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "convert it first" in err


def test_predict_on_raw_parquet_rows_reads_the_models_columns(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    label, num, city, dev = _rows(n=400, seed=4)
    pq.write_table(pa.table({"x": num, "city": city, "dev": dev, "y": label}),
                   tmp_path / "t.parquet")
    pq.write_table(pa.table({"note": ["n/a"] * 400, "dev": dev, "x": num, "city": city}),
                   tmp_path / "new.parquet")  # no label, another column, another order
    dsvm.convert(tmp_path / "t.parquet", tmp_path / "t.zarr", label_column="y",
                 categorical=["city", "dev"], hash_bits=10)
    clf = dsvm.SVMClassifier(max_epochs=2, random_state=0).fit(str(tmp_path / "t.zarr"))
    clf.save(tmp_path / "m.dsvm")
    assert main(["predict", str(tmp_path / "m.dsvm"), str(tmp_path / "new.parquet"), "--out",
                 str(tmp_path / "p.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"),
                                  clf.predict(str(tmp_path / "t.zarr")))


def test_the_numeric_transform_travels_with_the_hashing(tmp_path):
    """Raw rows predicted by a model are converted with its training data's numeric transform
    (log1p for Criteo now, none for datasets converted before it): the same features exactly;
    data converted with the other transform is refused, not silently mis-scaled."""
    from dsvm.data.rehash import convert_like

    path = shared_file("criteo_sample/criteo_kaggle_head8000_dev.txt.xz")
    lines = lzma.open(path, "rt").read().splitlines()
    (tmp_path / "test.txt").write_text("".join(ln.split("\t", 1)[1] + "\n" for ln in lines))
    trained = {}
    for transform in ("log1p", "none"):
        ds = dsvm.convert(path, tmp_path / f"{transform}.zarr", format="criteo", hash_bits=12,
                          numeric_transform=transform)
        clf = dsvm.SVMClassifier(max_epochs=1, random_state=0).fit(str(ds.url))
        again = convert_like(tmp_path / "test.txt", tmp_path / f"again-{transform}.zarr",
                             clf.hashing_)
        assert abs(collect(again)[0] - collect(ds)[0]).max() == 0
        trained[transform] = clf
    with pytest.raises(ValueError, match="hashed differently.*numeric_transform"):
        trained["log1p"].predict(str(tmp_path / "none.zarr"))
    with pytest.raises(ValueError, match="numeric_transform"):
        dsvm.convert(path, tmp_path / "bad.zarr", format="criteo", numeric_transform="log")


def test_raw_rows_that_still_carry_a_dropped_column_predict_as_converted(tmp_path, capsys):
    """A column dropped at conversion (an id) is recorded with the hashing, so raw rows that
    still carry it, besides their label, are converted alike (it was taken for a second extra
    column and refused)."""
    label, num, city, dev = _rows(n=300, seed=6)
    ids = np.arange(300) * 7919 + 10**12
    _write_tsv(tmp_path / "t.tsv", ["id", "y", "x", "city", "dev"], zip(ids, label, num, city, dev))
    assert main(["convert", str(tmp_path / "t.tsv"), str(tmp_path / "t.zarr"), "--label-column",
                 "y", "--categorical", "city,dev", "--hash-bits", "10", "--drop", "id"]) == 0
    clf = dsvm.SVMClassifier(max_epochs=2, random_state=0).fit(str(tmp_path / "t.zarr"))
    assert clf.hashing_["dropped"] == ["id"]
    clf.save(tmp_path / "m.dsvm")
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m.dsvm"), str(tmp_path / "t.tsv"), "--out",
                 str(tmp_path / "p.npy")]) == 0, capsys.readouterr().err
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"),
                                  clf.predict(str(tmp_path / "t.zarr")))


def test_a_dataframe_of_raw_criteo_rows_predicts_as_the_converted_rows(tmp_path):
    """A model trained on a Criteo conversion (counts stored as log1p) predicts a pandas
    DataFrame of the same raw rows through its hashing, the transform included: the same
    decision values as the converted dataset's (the counts went in raw, silently)."""
    import pandas as pd

    path = shared_file("criteo_sample/criteo_kaggle_head8000_dev.txt.xz")
    ds = dsvm.convert(path, tmp_path / "c.zarr", format="criteo", hash_bits=12)
    clf = dsvm.SVMClassifier(max_epochs=2, alpha=1e-2, random_state=0).fit(str(ds.url))
    fields = [ln.split("\t") for ln in lzma.open(path, "rt").read().splitlines()]
    frame = pd.DataFrame({f"I{j}": [float(f[j] or 0) for f in fields] for j in range(1, 14)})
    for j in range(1, 27):
        frame[f"C{j}"] = [f[13 + j] or None for f in fields]
    np.testing.assert_allclose(clf.decision_function(frame),
                               clf.decision_function(str(ds.url)), rtol=1e-5, atol=1e-6)
