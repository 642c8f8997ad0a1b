"""Text labels in converted datasets (#25): ``dsvm convert`` of a CSV/Parquet file whose label
column holds names ("cat"/"dog"/"bird") stores codes and the sorted names (``label_names``);
a fit on it has the names as ``classes_``, predict writes names, eval on a test set converted
alone (a subset of the names, coded in its own order) remaps by name and refuses a name the
model never saw; regression on it is refused. Small data, in this process.
"""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm.cli import main
from dsvm.exceptions import DataFormatError

pd = pytest.importorskip("pandas")
pytestmark = pytest.mark.timeout(60)

CENTRES = {"bird": (-3.0, 0.0), "cat": (3.0, 3.0), "dog": (3.0, -3.0)}


def _animals(names: list[str], seed: int) -> pd.DataFrame:
    """Rows around one centre per animal (well apart: any fit separates them), label last."""
    rng = np.random.default_rng(seed)
    centre = np.array([CENTRES[n] for n in names])
    xy = centre + rng.normal(scale=0.5, size=centre.shape)
    return pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "label": names})


def _csv(path, frame):  # noqa: ANN001, ANN202 - test helper
    frame.to_csv(path, index=False)
    return str(path)


def _train_names(n: int = 300, seed: int = 0) -> list[str]:
    # "dog" first: first appearance is not the sorted order the codes must end in
    rng = np.random.default_rng(seed)
    return ["dog"] + list(rng.choice(sorted(CENTRES), n - 1))


def test_cli_convert_train_predict_eval_with_text_labels(tmp_path, capsys):
    train = _animals(_train_names(), seed=1)
    # a test file converted alone: no "bird", "dog" before "cat" -> its own codes dog=1, cat=0
    test = _animals(["dog"] * 30 + ["cat"] * 20, seed=2)
    tr, te = tmp_path / "train.zarr", tmp_path / "test.zarr"
    model, out = tmp_path / "m.dsvm", tmp_path / "pred.csv"
    assert main(["convert", _csv(tmp_path / "train.csv", train), str(tr), "--label-column",
                 "label", "--chunk-rows", "64"]) == 0
    assert main(["convert", _csv(tmp_path / "test.csv", test), str(te), "--label-column",
                 "label"]) == 0
    assert dsvm.open_dataset(tr).label_names == ["bird", "cat", "dog"]
    assert dsvm.open_dataset(te).label_names == ["cat", "dog"]
    assert main(["train", str(tr), "--out", str(model), "--epochs", "5"]) == 0
    assert list(dsvm.load(model).classes_) == ["bird", "cat", "dog"]
    capsys.readouterr()
    assert main(["eval", str(model), str(te), "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["accuracy"] >= 0.95  # chance: 1/3
    assert main(["predict", str(model), str(te), "--out", str(out)]) == 0
    header, *predicted = out.read_text().split()  # (pandas.read_csv reads it as written)
    assert header == "label" and len(predicted) == len(test)
    scores = tmp_path / "scores.csv"  # one column of decision values per class, by its name
    for _ in range(2):  # (and recognised as predictions for --overwrite)
        assert main(["predict", str(model), str(te), "--out", str(scores), "--decision",
                     "--overwrite"]) == 0
    assert scores.read_text().splitlines()[0] == "decision_bird,decision_cat,decision_dog"
    assert np.mean(np.array(predicted) == test.label.to_numpy()) >= 0.95


def test_stored_codes_are_the_sorted_names_in_every_chunk(tmp_path):
    frame = _animals(_train_names(200), seed=3)
    ds = dsvm.convert(_csv(tmp_path / "t.csv", frame), tmp_path / "t.zarr",
                      label_column="label", chunk_rows=16)
    assert ds.n_chunks > 5
    y = np.concatenate([ds.read_chunk(i).y for i in range(ds.n_chunks)])
    names = np.array(ds.label_names)
    np.testing.assert_array_equal(names[y.astype(int)], frame.label.to_numpy())
    assert ds.classes.tolist() == [0.0, 1.0, 2.0]
    assert ds.attrs["class_counts"] == [int((frame.label == n).sum()) for n in names]
    X = np.concatenate([ds.read_chunk(i).X for i in range(ds.n_chunks)])
    np.testing.assert_allclose(X, frame[["x", "y"]].to_numpy(), rtol=1e-6)


def test_a_csv_without_header_whose_first_field_is_a_name_is_rows(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("yes,1.5,2\nno,0.5,1\nyes,3,4\n")
    ds = dsvm.convert(src, tmp_path / "t.zarr")
    assert ds.n_samples == 3 and ds.label_names == ["no", "yes"]
    # a header whose feature names are numbers, above numeric labels, is still a header
    src.write_text("label,1,2\n1,1.5,2\n0,0.5,1\n")
    ds = dsvm.convert(src, tmp_path / "n.zarr")
    assert ds.n_samples == 2 and ds.label_names is None and "label_names" not in ds.attrs


def test_parquet_string_and_category_labels_train_with_their_names(tmp_path):
    frame = _animals(_train_names(150), seed=4)
    frame.to_parquet(tmp_path / "s.parquet")
    frame.astype({"label": "category"}).to_parquet(tmp_path / "c.parquet")
    frame.assign(label=frame.label == "cat").to_parquet(tmp_path / "b.parquet")
    for name in ("s", "c"):
        ds = dsvm.convert(tmp_path / f"{name}.parquet", tmp_path / f"{name}.zarr",
                          label_column="label")
        assert ds.label_names == ["bird", "cat", "dog"], name
        clf = dsvm.SVMClassifier(max_epochs=3, random_state=0).fit(dsvm.open_dataset(ds.url))
        assert list(clf.classes_) == ["bird", "cat", "dog"]
        assert np.mean(clf.predict(ds.url) == frame.label.to_numpy()) >= 0.95
    booleans = dsvm.convert(tmp_path / "b.parquet", tmp_path / "b.zarr", label_column="label")
    assert booleans.label_names is None and booleans.classes.tolist() == [0.0, 1.0]


def test_a_label_the_model_never_saw_is_refused_by_file_and_name(tmp_path, capsys):
    train = _animals(["cat", "dog"] * 40, seed=5)
    test = _animals(["dog", "bird", "cat"], seed=6)
    tr, te = tmp_path / "train.zarr", tmp_path / "test.zarr"
    dsvm.convert(_csv(tmp_path / "train.csv", train), tr, label_column="label")
    dsvm.convert(_csv(tmp_path / "test.csv", test), te, label_column="label")
    clf = dsvm.SVMClassifier(max_epochs=2, random_state=0).fit(str(tr))
    clf.save(tmp_path / "m.dsvm")
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "m.dsvm"), str(te)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "test.zarr" in err[0] and "'bird'" in err[0], err
    assert len(clf.predict(str(te))) == 3  # predicting reads no labels: no refusal


def test_numeric_labels_are_not_scored_against_a_models_names(tmp_path, capsys):
    """Codes 0/1 of a hand-made mapping cannot be matched to names: refused, not compared to
    the names' positions (a silent right or wrong score)."""
    train = _animals(["cat", "dog"] * 40, seed=5)
    tr = tmp_path / "train.zarr"
    dsvm.convert(_csv(tmp_path / "train.csv", train), tr, label_column="label")
    clf = dsvm.SVMClassifier(max_epochs=2, random_state=0).fit(str(tr))
    clf.save(tmp_path / "m.dsvm")
    test = _animals(["dog", "cat"] * 10, seed=6)
    numeric = dsvm.write_arrays(tmp_path / "numeric.zarr", test[["x", "y"]].to_numpy(),
                                (test.label == "dog").to_numpy(np.float64))
    with pytest.raises(ValueError, match=r"numeric labels \[0.0, 1.0\].*text \['cat', 'dog'\]"):
        clf.score(str(numeric.url))
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "m.dsvm"), str(numeric.url)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "numeric.zarr" in err[0], err
    assert len(clf.predict(str(numeric.url))) == 20  # predicting reads no labels
    # and the other way: the names as written ("[np.str_('cat'), ...]" from a CSV's rows)
    numbers = dsvm.SVMClassifier(max_epochs=2, random_state=0).fit(
        test[["x", "y"]], (test.label == "dog").astype(int))  # (named columns: reads a CSV)
    numbers.save(tmp_path / "numbers.dsvm")
    assert main(["eval", str(tmp_path / "numbers.dsvm"), str(tmp_path / "train.csv")]) == 2
    assert "has text labels ['cat', 'dog'], but this model's classes are numbers [0, 1]" \
        in capsys.readouterr().err


def test_regression_on_label_names_is_refused(tmp_path, capsys):
    frame = _animals(["cat", "dog"] * 20, seed=7)
    ds = dsvm.convert(_csv(tmp_path / "t.csv", frame), tmp_path / "t.zarr",
                      label_column="label")
    with pytest.raises(ValueError, match=r"t\.zarr has text labels \['cat', 'dog'\].*classes"):
        dsvm.SVMRegressor(max_epochs=1).fit(ds.url)
    capsys.readouterr()
    assert main(["train", ds.url, "--task", "regression", "--out",
                 str(tmp_path / "r.dsvm")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "t.zarr" in err[0] and "classes" in err[0], err
    assert not (tmp_path / "r.dsvm").exists()


def test_dsvm_info_shows_the_label_names(tmp_path, capsys):
    frame = _animals(["cat", "dog", "bird"] * 5, seed=8)
    ds = dsvm.convert(_csv(tmp_path / "t.csv", frame), tmp_path / "t.zarr",
                      label_column="label")
    capsys.readouterr()
    assert main(["info", ds.url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split(":", 1) == ["     label_names", " ['bird', 'cat', 'dog']"]
               for line in lines), lines


def test_more_names_than_classes_is_an_error_and_leaves_nothing(tmp_path):
    src = tmp_path / "ids.csv"
    src.write_text("".join(f"id{i},{i % 7}\n" for i in range(1200)))
    with pytest.raises(DataFormatError, match=r"ids\.csv: the label column holds more than "
                                              r"1000 distinct texts"):
        dsvm.convert(src, tmp_path / "o.zarr")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.csv"]


def test_task_auto_trains_a_classifier_on_many_label_names(tmp_path):
    # --task auto takes more than 100 distinct numeric labels for regression targets; names
    # are classes however many there are (a regression on them is refused)
    from dsvm.cli.train import MAX_CLASSES_FOR_AUTO, resolve_task

    src = tmp_path / "t.csv"
    n = MAX_CLASSES_FOR_AUTO + 1
    src.write_text("".join(f"c{i:03d},{i},{i % 2}\n" for i in range(n)))
    ds = dsvm.convert(src, tmp_path / "t.zarr")
    assert len(ds.label_names) == n
    assert resolve_task("auto", ds) == "classification"


def test_cli_class_weights_name_text_labels(tmp_path, capsys):
    """``--class-weight cat:3`` on a dataset of text labels was refused by the flag's parser
    ("expected ... LABEL:WEIGHT pairs such as '1:5,-1:1'"), where ``class_weight={"cat": 3}``
    trains from Python."""
    train = _animals(_train_names(), seed=1)
    data, model = tmp_path / "train.zarr", tmp_path / "m.dsvm"
    assert main(["convert", _csv(tmp_path / "train.csv", train), str(data)]) == 0
    assert main(["train", str(data), "--out", str(model), "--epochs", "3",
                 "--class-weight", "cat:3,dog:0.5", "--quiet"]) == 0
    assert dsvm.load(model).class_weight == {"cat": 3.0, "dog": 0.5}
    capsys.readouterr()
    assert main(["train", str(data), "--out", str(tmp_path / "x.dsvm"),
                 "--class-weight", "horse:3"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "['horse']" in lines[0] and "['bird', 'cat', 'dog']" in lines[0]
