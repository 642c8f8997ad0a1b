"""A new user's whole run, end to end (issue #25): inputs built as users build them (pandas and
Dask frames from read_parquet / read_csv, pyarrow-backed dtypes), default settings, the
commands typed as in the README. Each test here is a failure met that way, kept small: data of
a few thousand rows, in this process (dask's local scheduler) where a cluster is not the point.
"""

from __future__ import annotations

import json
import logging.handlers
import lzma
import re
import warnings

import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier
from dsvm.exceptions import DataFormatError
from dsvm.training.inputs import source_of

pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
pytestmark = pytest.mark.timeout(120)


def _people(n: int = 1500, seed: int = 0):
    """Raw columns of a table, the label "yes" when a noisy sum of them is positive."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "score": rng.normal(size=n),
        "city": pd.array(rng.choice(["paris", "oslo", "lima"], n), dtype="string[pyarrow]"),
    })
    logit = (frame.age - 50) / 10 + frame.score + np.where(frame.city == "oslo", 1.5, 0.0)
    frame["label"] = np.where(logit + rng.logistic(size=n) > 0, "yes", "no")
    return frame


def test_a_comparison_of_pyarrow_strings_is_a_bool_label_not_text():
    # Dask reads text as string[pyarrow]; `df.label == "yes"` is then bool[pyarrow], which
    # pandas does not call numeric: it was taken for text, classes_ became the strings
    # 'False'/'True', and score(X, y == "yes") failed on a mix of strings and bools
    frame = dd.from_pandas(_people(), npartitions=3)
    y = frame["label"].astype("string[pyarrow]") == "yes"
    assert str(y.dtype) == "bool[pyarrow]"
    source, text_classes = source_of(frame[["age", "score"]], y)
    assert text_classes is None
    np.testing.assert_array_equal(source.labels, [0.0, 1.0])


def test_labels_of_a_frames_column_as_a_dask_array_of_objects_are_bools_not_text(local_client):
    # `(df.label == "yes").to_dask_array()` is an array of Python bools (dtype object: dask
    # converts bool[pyarrow] so); they were read as text, classes_ became ['False', 'True'],
    # predict returned those strings and score(X, y) raised on the mix
    frame = dd.from_pandas(_people(), npartitions=3)
    X = frame[["age", "score"]].to_dask_array()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # dask's, on converting bool[pyarrow]
        y = (frame["label"].astype("string[pyarrow]") == "yes").to_dask_array()
    assert y.dtype == object
    clf = SVMClassifier(random_state=0, max_epochs=5).fit(X, y)
    assert clf.classes_.dtype == bool and clf.classes_.tolist() == [False, True]
    assert clf.score(X, y) > 0.75
    in_memory = np.asarray(y.compute(), dtype=object)  # and a NumPy array of them
    fitted = SVMClassifier(random_state=0, max_epochs=5).fit(X.compute(), in_memory)
    assert fitted.classes_.tolist() == [False, True] and fitted.predict(X.compute()).dtype == bool


@pytest.mark.parametrize("dask", [False, True])
def test_text_labels_of_one_class_are_refused_as_numbers_of_one_class_are(dask):
    # a filter that keeps one class (one day's clicks): a model of one class was fitted,
    # warned about imbalance and saved; numeric labels were refused already
    frame = _people()
    frame = frame[frame.label == "yes"]
    X = frame[["age", "score"]]
    X = dd.from_pandas(X, npartitions=2) if dask else X
    with pytest.raises(ValueError, match=r"one class only \(\['yes'\]\); a classifier needs"):
        SVMClassifier().fit(X, frame.label.to_numpy())


def test_a_bool_pyarrow_feature_column_is_a_number():
    # pd.read_parquet(dtype_backend="pyarrow") gives bool[pyarrow] columns: a 0/1 feature,
    # once refused as "neither numbers nor text/category"
    frame = _people()
    X = frame[["age", "score"]].assign(oslo=(frame.city == "oslo").astype("bool[pyarrow]"))
    clf = SVMClassifier(random_state=0, max_epochs=5).fit(X, frame.label)
    assert list(clf.feature_names_in_) == ["age", "score", "oslo"]
    assert clf.coef_[0, 2] > 0  # Oslo raises the odds of "yes"


def test_dsvm_predict_reads_parquet_rows_for_a_model_trained_on_a_csv(tmp_path, capsys):
    # the model keeps the CSV's hashing and format; `dsvm predict model test.parquet` read the
    # Parquet bytes as CSV text and ended in a traceback (_csv.Error, exit 1)
    from dsvm.cli import main

    frame = _people(600)
    frame["label"] = (frame.label == "yes").astype(int)
    frame.iloc[:400].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[400:].to_parquet(tmp_path / "test.parquet")
    frame.iloc[400:].to_csv(tmp_path / "test.csv", index=False)
    assert main(["convert", str(tmp_path / "train.csv"), str(tmp_path / "train.zarr"),
                 "--label-column", "label", "--categorical", "city"]) == 0
    model = tmp_path / "m.dsvm"
    SVMClassifier(random_state=0, max_epochs=3).fit(str(tmp_path / "train.zarr")).save(model)
    for name in ("test.csv", "test.parquet"):
        out = tmp_path / f"{name}.npy"
        assert main(["predict", str(model), str(tmp_path / name), "--out", str(out)]) == 0
    from_csv = np.load(tmp_path / "test.csv.npy")
    from_parquet = np.load(tmp_path / "test.parquet.npy")
    np.testing.assert_array_equal(from_parquet, from_csv)
    assert (from_csv == frame.label.iloc[400:].to_numpy()).mean() > 0.7
    # its label, the one column the model does not use, evaluates the Parquet rows too (they
    # were converted without labels: "rows.zarr is unlabeled", naming a scratch folder)
    for name in ("test.csv", "test.parquet"):
        assert main(["eval", str(model), str(tmp_path / name), "--json"]) == 0
    csv_eval, parquet_eval = (json.loads(out) for out in _documents(capsys.readouterr().out))
    assert parquet_eval["accuracy"] == csv_eval["accuracy"] > 0.7


def _documents(text):
    """The JSON documents printed one after another (``--json``), after any other lines."""
    decoder, found, i = json.JSONDecoder(), [], text.find("{")
    while i >= 0:
        doc, end = decoder.raw_decode(text, i)
        found.append(json.dumps(doc))
        i = text.find("{", end)
    return found


def test_a_model_fitted_on_a_frame_reads_raw_rows_by_its_column_names(tmp_path, capsys):
    """Trained in Python on a DataFrame of numbers, used from the command line on Parquet and
    CSV rows: ``dsvm predict`` refused a Parquet folder ("read it as a Dask DataFrame") and
    a CSV ("not a dsvm dataset"), and the model file did not keep the column names."""
    import dsvm
    from dsvm.cli import main

    frame = _people(800)[["age", "score", "label"]]
    frame["height"] = np.random.default_rng(1).normal(170, 10, len(frame))
    features = ["age", "score", "height"]
    clf = SVMClassifier(random_state=0, max_epochs=3).fit(frame[features].iloc[:600],
                                                          frame.label.iloc[:600])
    clf.save(tmp_path / "m.dsvm")
    assert list(dsvm.load(tmp_path / "m.dsvm").feature_names_in_) == features
    assert main(["info", str(tmp_path / "m.dsvm")]) == 0
    assert "   feature_names: age, score, height\n" in capsys.readouterr().out
    test = frame.iloc[600:].reset_index(drop=True)
    expected = clf.predict(test[features])
    folder = tmp_path / "rows.parquet"
    folder.mkdir()
    shuffled = test.assign(id=np.arange(len(test)))[["id", "height", "label", "age", "score"]]
    shuffled.iloc[:100].to_parquet(folder / "a.parquet")
    shuffled.iloc[100:].to_parquet(folder / "b.parquet")
    out = tmp_path / "p.npy"
    assert main(["predict", str(tmp_path / "m.dsvm"), str(folder), "--out", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out, allow_pickle=True), expected)
    test[["score", "label", "height", "age"]].to_parquet(tmp_path / "one.parquet")
    test[features + ["label"]].to_csv(tmp_path / "rows.csv", index=False)
    capsys.readouterr()
    for name in ("one.parquet", "rows.csv"):
        assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / name), "--json"]) == 0
    accuracies = [json.loads(d)["accuracy"] for d in _documents(capsys.readouterr().out)]
    assert accuracies == [pytest.approx(clf.score(test[features], test.label))] * 2
    # two columns besides the features: the one named like a label is the label (the id is
    # not read); with another name, --label-column says which
    assert main(["eval", str(tmp_path / "m.dsvm"), str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == accuracies[0]
    renamed = shuffled.rename(columns={"label": "bought"})
    renamed.to_parquet(tmp_path / "renamed.parquet")
    assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / "renamed.parquet"),
                 "--label-column", "bought", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == accuracies[0]
    # a CSV's columns in another order are read by name, as its header names them; without
    # a label named, rows with two other columns have none to evaluate
    test[["score", "age", "height", "label"]].to_csv(tmp_path / "swapped.csv", index=False)
    assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / "swapped.csv"),
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == accuracies[0]
    assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / "renamed.parquet")]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert errors == [
        f"dsvm eval: error: {tmp_path / 'renamed.parquet'}: no label column found beside the "
        "model's features (the one other column, or one named label, target or class), so it "
        "cannot evaluate a model: name it with --label-column, or use predict"]


def test_predict_proba_of_a_dask_dataframe_is_a_frame_of_the_classes():
    # predict and decision_function took Dask DataFrames; predict_proba called map_blocks on
    # the Series of decision values (AttributeError)
    frame = _people(900)
    clf = SVMClassifier(loss="logistic", random_state=0, max_epochs=5).fit(
        frame[["age", "score"]], frame.label)
    ddf = dd.from_pandas(frame, npartitions=3)
    proba = clf.predict_proba(ddf[["age", "score"]])
    log_proba = clf.predict_log_proba(ddf[["age", "score"]])
    assert list(proba.columns) == ["no", "yes"]
    expected = clf.predict_proba(frame[["age", "score"]])
    np.testing.assert_allclose(proba.compute().to_numpy(), expected)
    np.testing.assert_allclose(log_proba.compute().to_numpy(), np.log(expected))


def test_save_takes_the_overwrite_the_readme_names(tmp_path):
    # the README lists save among the calls that take overwrite=; save(path, overwrite=True)
    # was a TypeError
    import dsvm

    frame = _people(300)
    clf = SVMClassifier(random_state=0, max_epochs=2).fit(frame[["age", "score"]], frame.label)
    path = tmp_path / "m.dsvm"
    clf.save(path, overwrite=True)
    clf.save(path)  # a model replaces a model, as it always did
    with pytest.raises(FileExistsError, match="overwrite=True"):
        clf.save(path, overwrite=False)
    np.testing.assert_array_equal(dsvm.load(path).coef_, clf.coef_)


def test_a_missing_value_is_named_by_its_column_and_a_missing_label_by_its_row():
    # a pandas frame's NaN was "at row 4, column 1" (which column is 1?), a None among text
    # labels a TypeError from NumPy's sort ("'<' not supported between 'NoneType' and 'str'")
    frame = _people(300)
    X = frame[["age", "score"]].astype({"score": "Float64"})
    X.loc[4, "score"] = pd.NA
    with pytest.raises(ValueError, match=r"row 4, column 1 'score'"):
        SVMClassifier(max_epochs=1).fit(X, frame.label)
    for missing in (None, np.nan, pd.NA):
        labels = frame.label.astype(object)
        labels.iloc[7] = missing
        with pytest.raises(ValueError, match=r"missing label .* at row 7 \(1 in all\)"):
            SVMClassifier(max_epochs=1).fit(frame[["age", "score"]], labels)


def test_a_line_with_too_many_or_too_few_fields_is_named_by_its_number(tmp_path):
    # with --categorical (pyarrow's reader) it was "after line 1: CSV parse error: Expected 4
    # columns, got 5: <the row>": the block's first line, not the row's
    import dsvm
    from dsvm.exceptions import DataFormatError

    lines = _people(3000).to_csv(index=False).splitlines()
    for name, number, edit, found in (("long.csv", 2501, lambda t: t + ",x", 5),
                                      ("short.csv", 8, lambda t: t.split(",")[0], 1)):
        changed = list(lines)
        changed[number - 1] = edit(changed[number - 1])
        (tmp_path / name).write_text("\n".join(changed) + "\n")
        with pytest.raises(DataFormatError, match=rf"{name}, line {number}: {found} fields "
                                                  r"where line 1 has 4$"):
            dsvm.convert(tmp_path / name, tmp_path / f"{name}.zarr", label_column="label",
                         categorical=["city"])


def test_train_on_a_parquet_or_csv_file_says_to_convert_it(tmp_path, capsys):
    # it was "is not a zarr group, so not a dsvm dataset (No group found in store
    # LocalStore('file://...') at path '')"
    from dsvm.cli import main

    frame = _people(50)
    frame.to_parquet(tmp_path / "t.parquet")
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "days").mkdir()  # (a folder of CSVs: "is not a zarr group" too)
    frame.to_csv(tmp_path / "days" / "d1.csv", index=False)
    for name in ("t.parquet", "t.csv", "days"):
        assert main(["train", str(tmp_path / name), "--out", str(tmp_path / "m.dsvm")]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert errors == [
        f"dsvm train: error: {tmp_path / 't.parquet'} is Parquet, not a dsvm dataset: convert "
        f"it first (dsvm convert {tmp_path / 't.parquet'} DATA.zarr --label-column NAME), or "
        "pass it to fit() with its label column",
        f"dsvm train: error: {tmp_path / 't.csv'} is a file, not a dsvm dataset (a folder): "
        f"convert it first (dsvm convert {tmp_path / 't.csv'} DATA.zarr)",
        f"dsvm train: error: {tmp_path / 'days'} is a folder of files, not a dsvm dataset: "
        f"convert it first (dsvm convert {tmp_path / 'days'} DATA.zarr)"]


def test_convert_names_the_line_and_column_of_a_field_that_is_not_a_number(tmp_path):
    # with --categorical, a bad value on line 1234 was "after line 1: In CSV column #2: CSV
    # conversion error to double: invalid value 'abc'" (pyarrow's block, its column number);
    # a text label among numeric ones the same, and a Parquet file given as CSV a _csv.Error
    # traceback
    import dsvm

    frame = _people(1500)
    frame["label"] = (frame.label == "yes").astype(int)
    frame.to_parquet(tmp_path / "rows.parquet")
    mixed = frame.astype({"label": object})
    mixed.iloc[5, mixed.columns.get_loc("label")] = "yes"  # line 7 of the file
    mixed.to_csv(tmp_path / "mixed_labels.csv", index=False)
    frame = frame.astype({"score": object})
    frame.iloc[1232, 1] = "abc"  # line 1234 of the file: a header, then row 0 on line 2
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=r"bad\.csv, line 1234, column 'score': 'abc' is not "
                                         r"a number \(a text column is hashed with "):
        dsvm.convert(tmp_path / "bad.csv", tmp_path / "a.zarr", label_column="label",
                     categorical=["city"])
    with pytest.raises(ValueError, match=r"line 7, column 'label': 'yes' is not a number "
                                         r"\(the first row's label is a number"):
        dsvm.convert(tmp_path / "mixed_labels.csv", tmp_path / "b.zarr", label_column="label",
                     categorical=["city"])
    with pytest.raises(ValueError, match=r"rows\.parquet, line 1: not delimited text"):
        dsvm.convert(tmp_path / "rows.parquet", tmp_path / "c.zarr", format="csv",
                     label_column="label", categorical=["city"])
    assert not any(p.suffix == ".zarr" for p in tmp_path.iterdir())


def test_a_parquet_folder_fits_on_its_column_named_label_as_convert_takes_it(tmp_path,
                                                                           local_client):
    """``dsvm convert out.parquet`` finds the column named ``label``; ``fit("out.parquet")``
    said "y is required with a DataFrame", though a path has no other way to give y than a
    name. A folder as Spark writes it (part files, ``_SUCCESS``, ``.crc`` files)."""
    folder = tmp_path / "out.parquet"
    folder.mkdir()
    frame = _people()
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 3)):
        name = f"part-0000{i}-abc.snappy.parquet"
        frame.iloc[part].to_parquet(folder / name, index=False)
        (folder / f".{name}.crc").write_bytes(b"crc")
    (folder / "_SUCCESS").write_bytes(b"")
    clf = SVMClassifier(random_state=0, max_epochs=5).fit(folder)
    named = SVMClassifier(random_state=0, max_epochs=5).fit(folder, "label")
    assert list(clf.feature_names_in_) == ["age", "score", "city"]
    assert clf.score(folder) == named.score(folder, "label") > 0.75
    frame.rename(columns={"label": "outcome"}).to_parquet(tmp_path / "o.parquet")
    with pytest.raises(ValueError, match=r"o\.parquet: no column is named like a label .* "
                                         r"'outcome'\]: pass the label column's name as y, e\.g\. "
                                         r"fit\('.*o\.parquet', 'outcome'\)"):
        SVMClassifier().fit(tmp_path / "o.parquet")


def test_a_parquet_part_whose_numeric_column_holds_text_is_named(tmp_path):
    # one file of a folder wrote "age" as text: pyarrow's "Failed to parse string: 'forty' as
    # a scalar of type double" named neither the file, the column nor the row
    import dsvm

    frame = _people(400)
    frame["label"] = (frame.label == "yes").astype(int)
    folder = tmp_path / "rows"
    folder.mkdir()
    frame.iloc[:200].to_parquet(folder / "a.parquet")
    other = frame.iloc[200:].astype({"age": str})
    other.iloc[5, 0] = "forty"
    other.to_parquet(folder / "b.parquet")
    with pytest.raises(ValueError, match=r"b\.parquet, row group 0, column 'age', row 5 of the "
                                         r"row group: 'forty' is not a number"):
        dsvm.convert(folder, tmp_path / "rows.zarr", label_column="label", categorical=["city"])
    assert not (tmp_path / "rows.zarr").exists()


def _sst2_rows(n: int):
    """The first ``n`` rows of SST-2's training file as pandas reads it: a 'sentence' column
    of free text, a 0/1 'label'."""
    import lzma

    from tests.conftest import shared_file

    with lzma.open(shared_file("sst2/sst2_glue_train.tsv.xz"), "rt") as f:
        return pd.read_csv(f, sep="\t", nrows=n)


def test_a_column_of_free_text_is_refused_not_hashed_into_a_useless_model(tmp_path, capsys):
    """A frame read from SST-2's TSV, fitted with defaults: the 'sentence' column was hashed
    as one category per distinct sentence, and the fit ended at the majority rate (0.51
    held-out accuracy) with exit 0. A hashed column of free text is now refused by name,
    in Python and in `dsvm convert --categorical`; a category with spaces in its values, or
    with many values, still trains."""
    from dsvm.cli import main

    rows = _sst2_rows(2000)
    for frame in (rows, dd.from_pandas(rows, npartitions=2)):
        with pytest.raises(ValueError, match=r"column 'sentence', row 0: .*the column holds "
                                             r"free text .*HashingVectorizer"):
            SVMClassifier(max_epochs=2).fit(frame[["sentence"]], frame["label"])
    rows.to_csv(tmp_path / "sst.tsv", sep="\t", index=False)
    for flags in ([], ["--categorical", "sentence"]):
        code = main(["convert", str(tmp_path / "sst.tsv"), str(tmp_path / "sst.zarr"),
                     "--label-column", "label", *flags])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1, err
        assert "sst.tsv, line 2, column 'sentence': 'hide new secretions" in err, err
        assert ("free text" in err) == bool(flags), err
    assert not (tmp_path / "sst.zarr").exists()

    # categories, not text: a city's name has a space; 300 distinct values among 2,000 rows
    rng = np.random.default_rng(0)
    frame = _people(2000)
    frame["city"] = rng.choice(["new york", "san jose", "oslo"], 2000)
    frame["shop"] = [f"shop {i}" for i in rng.integers(0, 300, 2000)]
    clf = SVMClassifier(random_state=0, max_epochs=5).fit(frame.drop(columns="label"),
                                                          frame.label)
    assert clf.score(frame.drop(columns="label"), frame.label) > 0.75


def test_a_column_of_dates_is_refused_with_how_to_make_numbers_of_it(tmp_path, capsys):
    """A CSV's timestamps, as read_csv gives them (text), were refused as free text with a
    vectoriser for words as the fix; parsed (datetime64) or as durations, the advice was
    "convert it to text, to hash it", which then met that refusal. Each now says how to make
    numbers of it, and the numbers it names train."""
    from dsvm.cli import main

    frame = _people(600)
    stamps = pd.Series(pd.date_range("2024-01-01", periods=600, freq="h"))
    X = frame.drop(columns="label")
    with pytest.raises(ValueError, match=r"column 'seen', row 0: '2024-01-01 00:00:00': the "
                                         r"column holds dates or times as text .*"
                                         r"parse_dates=\['seen'\]"):
        SVMClassifier(max_epochs=2).fit(X.assign(seen=stamps.astype(str).to_numpy()),
                                        frame.label)
    for values, hint in ((stamps, r"df\['seen'\]\.dt\.hour"),
                         (stamps - stamps[0], r"df\['seen'\]\.dt\.total_seconds\(\)")):
        with pytest.raises(ValueError, match=r"column 'seen' has dtype \w+64\[\w+\]: .*" + hint):
            SVMClassifier(max_epochs=2).fit(X.assign(seen=values.to_numpy()), frame.label)
    hours = X.assign(hour=stamps.dt.hour.to_numpy(),
                     seconds=(stamps - stamps[0]).dt.total_seconds().to_numpy())
    clf = SVMClassifier(random_state=0).fit(hours, frame.label)
    assert clf.score(hours, frame.label) > 0.75
    frame.assign(seen=stamps.astype(str).to_numpy()).to_csv(tmp_path / "t.csv", index=False)
    code = main(["convert", str(tmp_path / "t.csv"), str(tmp_path / "t.zarr"),
                 "--categorical", "city,seen"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "line 2, column 'seen'" in err and "dates or times" in err, err


@pytest.mark.parametrize("written", ["%Y-%m-%d", "%d.%m.%Y", "%m/%d/%Y"])
def test_a_column_of_days_is_refused_as_dates_and_words_that_read_as_dates_are_not(written):
    """A date without a time is one token: 60 days over 600 rows hashed as 60 categories,
    silently, none of which a later day has. Months and codes that pandas would also parse
    as dates ('Jan', '1-2') stay categories."""
    frame = _people(600)
    days = pd.Series(pd.date_range("2024-01-01", periods=60)).dt.strftime(written)
    X = frame.drop(columns="label").assign(
        signup=np.resize(days.to_numpy(), 600),
        month=np.resize(["Jan", "Feb", "Mar"], 600), code=np.resize(["1-2", "A-12"], 600))
    with pytest.raises(ValueError, match=r"column 'signup', row 0: .*dates or times as text "
                                         r"\(60 distinct in 600 values here\)"):
        SVMClassifier(max_epochs=2).fit(X, frame.label)
    clf = SVMClassifier(max_epochs=2).fit(X.drop(columns="signup"), frame.label)
    assert clf.hashing_["categorical"] == ["city", "month", "code"]


def test_a_number_column_read_as_text_because_of_a_marker_is_named(tmp_path, local_client):
    """UCI's files mark a missing number with '?': read_csv then gives the column as text,
    and fit hashed it as one category per distinct number, silently. Such a column is now
    named in a DataTypeWarning, with the marker and where it is; a column of text that is
    all numbers (zip codes) or given the 'category' dtype is not."""
    import warnings

    from dsvm.exceptions import DataTypeWarning

    frame = _people(600)
    frame["income"] = (frame.age * 1000.0).astype(object)
    frame.loc[[7, 300], "income"] = "?"
    frame["zip"] = [f"{z:05d}" for z in np.random.default_rng(0).integers(0, 99999, 600)]
    frame["grade"] = pd.Categorical(np.where(frame.age > 50, "3", "1"))
    frame.to_csv(tmp_path / "people.csv", index=False)
    read = [pd.read_csv(tmp_path / "people.csv", dtype={"zip": str, "grade": "category"}),
            dd.read_csv(tmp_path / "people.csv", dtype={"zip": str, "grade": "category"})]
    for X, where in zip(read, ("DataFrame, row 7", "Dask DataFrame partition 0, row 7")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            SVMClassifier(random_state=0, max_epochs=1).fit(X.drop(columns="label"), X.label)
        found = [str(w.message) for w in caught if w.category is DataTypeWarning]
        assert len(found) == 1, found
        assert found[0].startswith("Feature column 'income' is text, so it is hashed as "
                                   "categories, yet 598 of the 600 values sampled are "
                                   f"numbers; {where} holds '?'."), found[0]
        assert "na_values=['?']" in found[0]


def test_a_header_line_read_as_a_row_is_refused(tmp_path):
    """Two CSV files joined with cat, read by pandas: the second header is a row, every
    column becomes text, and fit hashed 'income' as categories with the label 'label' as a
    third class (a warning of a missing-value marker, and a model). Refused, by its row."""
    frame = _people(300)[["age", "score", "label"]]
    frame.to_csv(tmp_path / "part.csv", index=False)
    (tmp_path / "all.csv").write_text((tmp_path / "part.csv").read_text() * 2)
    joined = pd.read_csv(tmp_path / "all.csv")
    with pytest.raises(ValueError, match=r"DataFrame, row 300: column 'age' holds its own "
                                         r"name among 600 numbers: a header line read as a "
                                         r"row \(files joined with their headers\?\)"):
        SVMClassifier(max_epochs=1).fit(joined.drop(columns="label"), joined.label)


def test_decimal_columns_are_numbers(tmp_path, local_client):
    """A database's NUMERIC columns exported to Parquet: read by dd.read_parquet they are
    decimal128[pyarrow] and were refused ("neither numbers nor text/category"); read by
    pd.read_parquet they are objects holding Decimals and were hashed as one category per
    number (training accuracy 1.0, exit 0). Both now train as the same numbers as floats do.
    Decimals that dask.dataframe.from_pandas turned into strings are named in a warning."""
    import decimal
    import warnings

    import pyarrow as pa
    import pyarrow.parquet as pq

    from dsvm.exceptions import DataTypeWarning

    frame = _people(800)
    floats = frame[["age", "score"]].astype(np.float64).round(4)
    y = (frame.label == "yes").astype(int)
    pq.write_table(pa.table({
        **{c: pa.array([decimal.Decimal(f"{v:.4f}") for v in floats[c]], pa.decimal128(12, 4))
           for c in floats.columns},
        "label": pa.array(y)}), tmp_path / "export.parquet")
    kw = dict(random_state=0, max_epochs=3, solver="sgd", tol=None)
    want = SVMClassifier(**kw).fit(floats, y)
    lazy = dd.read_parquet(tmp_path / "export.parquet")
    eager = pd.read_parquet(tmp_path / "export.parquet")
    assert str(lazy.dtypes["age"]).startswith("decimal128") and eager.dtypes["age"].kind == "O"
    for read in (lazy, eager):
        clf = SVMClassifier(**kw).fit(read.drop(columns="label"), read["label"])
        assert getattr(clf, "hashing_", None) is None and clf.coef_.shape == (1, 2)
        np.testing.assert_allclose(clf.coef_, want.coef_, rtol=1e-5)

    strings = dd.from_pandas(eager, npartitions=2)  # dask's strings of the Decimals
    assert str(strings.dtypes["age"]) != "object"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SVMClassifier(**kw).fit(strings.drop(columns="label"), strings.label)
    found = [str(w.message) for w in caught if w.category is DataTypeWarning]
    assert len(found) == 1 and found[0].startswith(
        "Feature columns 'age', 'score' are text, so hashed as categories, yet every value "
        "sampled is a number ('age': "), found


def test_a_value_beyond_float32_is_named_where_it_is(tmp_path, capsys):
    """A value above float32's range (1e39) in a file converted to float32 (the default) was
    "big.csv, row 0: X has the non-finite value inf in column 0", after a warning line of
    NumPy's ("overflow encountered in cast"): the chunk's row and column, not the file's line,
    and an inf the file does not hold. It is now refused where it is read, in one line that
    names the file's line (or row group) and column and says to convert to float64."""
    import dsvm
    from dsvm.cli import main

    frame = pd.DataFrame({"label": [1, 0, 1], "a": [3.0, 1e39, 2.0], "b": [2.0, 4.0, 1.0]})
    frame.to_csv(tmp_path / "big.csv", index=False)
    frame.to_parquet(tmp_path / "big.parquet")
    (tmp_path / "big.svm").write_text("1 1:3 2:2\n0 1:1e39 2:4\n1 1:2 2:1\n")
    expected = {"big.csv": "big.csv, line 3, column 'a': 1e+39 is above float32's range",
                "big.parquet": "big.parquet, row group 0, column 'a', row 1 of the row group: "
                               "1e+39 is above float32's range",
                "big.svm": "big.svm, line 2: value '1:1e39' is above float32's range"}
    for name, message in expected.items():
        flags = [] if name == "big.svm" else ["--label-column", "label"]
        assert main(["convert", str(tmp_path / name), str(tmp_path / "out.zarr"), *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err and "--dtype float64" in err, err
        assert not (tmp_path / "out.zarr").exists()
        wide = dsvm.convert(tmp_path / name, tmp_path / f"{name}.zarr", dtype="float64",
                            layout="dense",
                            **({} if name == "big.svm" else {"label_column": "label"}))
        assert wide.read_chunk(0).X.max() == 1e39


def test_a_csv_as_pandas_writes_it_trains_on_its_named_label_and_reads_new_rows(tmp_path,
                                                                               capsys):
    """``frame.to_csv`` puts the label last, named ``target``: ``dsvm convert`` took the first
    column (a feature of 399 values) as the labels without a word, ``dsvm train`` made a
    regressor of it, and ``dsvm eval``/``predict`` refused the next CSV ("not a dsvm
    dataset; convert it first")."""
    from sklearn.datasets import load_breast_cancer

    import dsvm
    from dsvm.cli import main

    frame = load_breast_cancer(as_frame=True).frame
    frame.insert(0, "id", np.arange(len(frame)) * 7 + 1000)
    train, test = frame.iloc[:450], frame.iloc[450:]
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    test.drop(columns="target").to_csv(tmp_path / "new.csv", index=False)
    zarr, model = str(tmp_path / "train.zarr"), str(tmp_path / "m.dsvm")
    assert main(["convert", str(tmp_path / "train.csv"), zarr, "--drop", "id"]) == 0
    assert "labels: column 'target' (by its name; --label-column to choose another)" in \
        capsys.readouterr().out
    dataset = dsvm.open_dataset(zarr)
    np.testing.assert_array_equal(dataset.classes, [0.0, 1.0])
    features = [c for c in frame.columns if c not in ("id", "target")]
    assert dataset.feature_names == features
    assert main(["train", zarr, "--out", model]) == 0
    assert "regressor" not in capsys.readouterr().out
    clf = dsvm.load(model)
    assert list(clf.feature_names_in_) == features
    expected = clf.score(test[features], test.target)
    assert expected > 0.9

    # new rows as a CSV like the training one (the id besides, not read), and as Parquet
    test.to_parquet(tmp_path / "test.parquet")
    for rows in ("test.csv", "test.parquet"):
        assert main(["eval", model, str(tmp_path / rows), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(expected)
    out = tmp_path / "p.npy"
    assert main(["predict", model, str(tmp_path / "new.csv"), "--out", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), clf.predict(test[features]))
    # predictions as CSV have a header, so that read_csv does not take the first for one;
    # written again with --overwrite (a header of dsvm's is still its predictions file)
    for _ in range(2):
        assert main(["predict", model, str(tmp_path / "new.csv"), "--out",
                     str(tmp_path / "p.csv"), "--decision", "--overwrite"]) == 0
    written = pd.read_csv(tmp_path / "p.csv")
    assert list(written.columns) == ["decision"] and len(written) == len(test)
    np.testing.assert_allclose(written.decision, clf.decision_function(test[features]),
                               rtol=1e-6, atol=1e-6)
    assert main(["eval", model, str(tmp_path / "new.csv")]) == 2  # no label to score
    assert "--label-column" in capsys.readouterr().err

    # a test set converted with its columns in another order is read by name (its header's)
    swapped = test[["target", "mean texture", "mean radius", *features[2:]]]
    swapped.to_csv(tmp_path / "swapped.csv", index=False)
    assert main(["convert", str(tmp_path / "swapped.csv"), str(tmp_path / "s.zarr")]) == 0
    capsys.readouterr()
    assert main(["eval", model, str(tmp_path / "s.zarr"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(expected)
    # and as validation data from the command line; a frame's keeps scikit-learn's rule
    assert main(["train", zarr, "--out", str(tmp_path / "v.dsvm"),
                 "--validation", str(tmp_path / "s.zarr")]) == 0
    validated = dsvm.load(tmp_path / "v.dsvm")
    assert validated.history_[-1]["val_accuracy"] > 0.9  # (the last epoch's, not published)
    assert validated.score(str(tmp_path / "s.zarr")) == pytest.approx(
        validated.score(test[features], test.target))
    with pytest.raises(ValueError, match="column 0 is 'mean texture'"):
        SVMClassifier(max_epochs=2).fit(train[features], train.target,
                                        validation=(swapped.drop(columns="target"),
                                                    swapped.target))


@pytest.mark.parametrize("header, label", [
    (["x", "y", "label"], "label"),  # "y" only when no stronger name is there
    (["Target", "a", "b"], "Target"),
    (["a", "y", "b"], "y"),
    (["a", "class", "label"], "several columns are named like a label (['class', 'label'])"),
    (["a", "b", "c"], "no column is named like a label"),
    (["id", "click", "hour"], "click"),  # Avazu's header
])
def test_the_label_column_of_a_table_is_the_one_named_so(tmp_path, capsys, header, label):
    """A header naming no label column (or several) is refused, naming the columns: the first
    column was taken, and a house-price CSV (sqft, bedrooms, age, price) trained a model of
    the floor area, "training R^2 0.9757"."""
    from dsvm.cli import main

    rng = np.random.default_rng(0)
    values = rng.integers(0, 2, (40, 3)).astype(float)
    table = pd.DataFrame(values, columns=header)
    table.to_csv(tmp_path / "t.csv", index=False)
    table.to_parquet(tmp_path / "t.parquet")
    if label not in header:
        for name in ("t.csv", "t.parquet"):
            with pytest.raises(DataFormatError, match=re.escape(
                    f"t{name[1:]}: {label}") + r".*the columns are \['a', .*--label-column"):
                __import__("dsvm").convert(tmp_path / name, tmp_path / f"{name}.zarr")
        assert main(["convert", str(tmp_path / "t.csv"), str(tmp_path / "cli.zarr")]) == 2
        assert "--label-column" in capsys.readouterr().err
        return
    for name in ("t.csv", "t.parquet"):
        ds = __import__("dsvm").convert(tmp_path / name, tmp_path / f"{name}.zarr")
        np.testing.assert_array_equal(ds.read_chunk_labels(0)[0], table[label])
        assert ds.attrs["provenance"]["label_column"] == label
    assert main(["convert", str(tmp_path / "t.csv"), str(tmp_path / "cli.zarr")]) == 0
    assert f"labels: column {label!r} (by its name;" in capsys.readouterr().out


def test_a_csv_saved_by_excel_reads_its_header_without_the_byte_order_mark(tmp_path):
    """Excel's "CSV UTF-8" starts with a byte order mark (and ends lines with CRLF): it became
    part of the first column's name ('\\ufeffTarget'), which was then not found as the label by
    name, and a quoted first name kept its quotes."""
    import dsvm

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"Target": rng.integers(0, 2, 300), "a": rng.normal(size=300),
                          "b": rng.normal(size=300)})
    table.to_csv(tmp_path / "t.csv", index=False, encoding="utf-8-sig", lineterminator="\r\n")
    table[["a", "b", "Target"]].to_csv(tmp_path / "q.csv", index=False, encoding="utf-8-sig",
                                       lineterminator="\r\n", quoting=1)  # all quoted
    assert (tmp_path / "t.csv").read_bytes().startswith(b"\xef\xbb\xbfTarget,")
    for name in ("t.csv", "q.csv"):
        ds = dsvm.convert(tmp_path / name, tmp_path / f"{name}.zarr")
        assert ds.attrs["provenance"]["label_column"] == "Target"
        assert ds.feature_names == ["a", "b"]
        np.testing.assert_array_equal(ds.read_chunk_labels(0)[0], table.Target)
    # a headerless file of numbers with the mark: its first field is the number
    (tmp_path / "n.csv").write_bytes(b"\xef\xbb\xbf1,0.5,2\r\n0,0.25,3\r\n")
    ds = dsvm.convert(tmp_path / "n.csv", tmp_path / "n.zarr")
    np.testing.assert_array_equal(ds.read_chunk_labels(0)[0], [1.0, 0.0])


def test_a_frame_and_its_label_column_name_fit_and_score_alike(tmp_path):
    """``fit(df, "label")`` worked for a Dask DataFrame only (our own error message suggests
    it): a pandas frame failed in scikit-learn's checks ("y should be a 1d array"), and
    ``score(df, "label")`` refused the label column as an unseen feature."""
    frame = _people(800)[["age", "score", "label"]]
    expected = SVMClassifier(random_state=0, max_epochs=3).fit(frame[["age", "score"]],
                                                               frame.label)
    clf = SVMClassifier(random_state=0, max_epochs=3).fit(frame, "label")
    np.testing.assert_array_equal(clf.coef_, expected.coef_)
    assert list(clf.feature_names_in_) == ["age", "score"]
    assert clf.score(frame, "label") == expected.score(frame[["age", "score"]], frame.label)
    assert clf.evaluate(frame, "label")["accuracy"] == pytest.approx(clf.score(frame, "label"))
    lazy = dd.from_pandas(frame, npartitions=2)
    assert clf.score(lazy, "label") == pytest.approx(clf.score(frame, "label"))
    with pytest.raises(ValueError, match="The label column 'y' is not one of the columns"):
        clf.score(frame, "y")
    # a Parquet file's path and its label column's name: score() dropped the name
    frame.to_parquet(tmp_path / "rows.parquet")
    assert clf.score(str(tmp_path / "rows.parquet"), "label") == pytest.approx(
        clf.score(frame, "label"))


def test_a_weight_column_is_named_as_the_label_column_is(local_client):
    """``fit(df, "label", sample_weight="w")``: the label could be named, the weights not (a
    pandas frame: "could not convert string to float: 'w'"; a Dask frame: IndexError). The
    weights named are the column's, taken out of the features, in fit and score alike."""
    frame = _people(800)[["age", "score", "label"]]
    frame["w"] = np.random.default_rng(1).uniform(0.2, 3.0, len(frame))
    features = frame[["age", "score"]]
    kw = dict(random_state=0, max_epochs=3, client=local_client)
    for data in (frame, dd.from_pandas(frame, npartitions=2)):
        expected = SVMClassifier(**kw).fit(data[["age", "score"]], data.label,
                                           sample_weight=data.w)
        clf = SVMClassifier(**kw).fit(data, "label", sample_weight="w")
        np.testing.assert_array_equal(clf.coef_, expected.coef_)
        assert list(clf.feature_names_in_) == ["age", "score"]
        assert clf.score(data, "label", sample_weight="w") == pytest.approx(
            expected.score(features, frame.label, sample_weight=frame.w))
    unweighted = SVMClassifier(**kw).fit(features, frame.label)
    assert not np.array_equal(unweighted.coef_, clf.coef_)
    with pytest.raises(ValueError, match="The sample_weight column 'weight' is not one of"):
        clf.fit(frame, "label", sample_weight="weight")
    with pytest.raises(ValueError, match="sample_weight='w' names a column, but X is a "
                                         "ndarray, not a DataFrame"):
        clf.fit(features.to_numpy(), frame.label, sample_weight="w")


def test_a_csv_with_missing_values_converts_with_fill_missing(tmp_path, capsys):
    """A CSV with holes (pandas writes NaN as an empty field; R and databases write NA or
    null): convert refused it ("column 'a' is empty") and refused --fill-missing for a CSV
    ("fill_missing= is for Parquet, CSV/TSV with categorical= columns..."), so no flag could
    convert it, nor could eval/predict read such test rows."""
    import dsvm
    from dsvm.cli import main

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200) * 50})
    table["label"] = (table.a + table.b / 50 > 0).astype(int)
    holes = table.copy()
    holes.loc[[3, 40], "a"] = np.nan
    holes.to_csv(tmp_path / "holes.csv", index=False)  # empty fields
    text = (tmp_path / "holes.csv").read_text().splitlines()
    text[60] = "NA," + text[60].split(",", 1)[1]  # and R's marker, line 61
    (tmp_path / "holes.csv").write_text("\n".join(text) + "\n")
    assert main(["convert", str(tmp_path / "holes.csv"), str(tmp_path / "h.zarr")]) == 2
    assert capsys.readouterr().err == (
        f"dsvm convert: error: {tmp_path / 'holes.csv'}, line 5: column 'a' is empty (a missing "
        "value: pass fill_missing= / --fill-missing VALUE to use a value instead)\n")
    assert main(["convert", str(tmp_path / "holes.csv"), str(tmp_path / "h.zarr"),
                 "--fill-missing", "-7"]) == 0
    ds = dsvm.open_dataset(tmp_path / "h.zarr")
    X = ds.read_chunk(0).X
    assert ds.layout == "dense" and ds.feature_names == ["a", "b"]
    np.testing.assert_array_equal(np.flatnonzero(X[:, 0] == -7), [3, 40, 59])
    np.testing.assert_allclose(np.delete(X, [3, 40, 59], axis=0),
                               np.delete(table[["a", "b"]].to_numpy(), [3, 40, 59], axis=0),
                               rtol=1e-6)
    np.testing.assert_array_equal(ds.read_chunk_labels(0)[0], table.label)
    # the model reads such test rows with the same flag
    model = str(tmp_path / "m.dsvm")
    assert main(["train", str(tmp_path / "h.zarr"), "--out", model]) == 0
    capsys.readouterr()
    assert main(["eval", model, str(tmp_path / "holes.csv"), "--fill-missing", "-7",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(
        dsvm.load(model).score(X, table.label))


def test_an_id_taken_as_the_label_by_default_is_named(tmp_path):
    """Without a header, the first column is the label: a table that starts with its row id
    trained a "regression" of the id (exit 0). Conversion now warns. (With a header naming
    no label, conversion refuses: test_the_label_column_of_a_table_is_the_one_named_so.)"""
    import dsvm

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"id": rng.permutation(100) + 10_000, "a": rng.normal(size=100),
                          "outcome": rng.integers(0, 2, 100)})
    table.to_csv(tmp_path / "t.csv", index=False)
    # (the last column is the label where the first cannot be classes and the last can:
    # test_a_table_without_a_header_whose_class_is_last_trains_on_its_class)
    table.assign(outcome=rng.normal(size=100)).to_csv(tmp_path / "rows.csv", index=False,
                                                      header=False)
    with pytest.warns(UserWarning, match=r"rows.csv: the labels, its first column 0 .* are "
                                         r"100 distinct whole numbers .* a row id\?"):
        dsvm.convert(tmp_path / "rows.csv", tmp_path / "t.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # named, nothing to say
        dsvm.convert(tmp_path / "t.csv", tmp_path / "u.zarr", label_column="outcome",
                     drop=["id"])
        # nor of a target found by its name whose values are distinct whole numbers (counts)
        table.rename(columns={"id": "target"}).to_csv(tmp_path / "r.csv", index=False)
        dsvm.convert(tmp_path / "r.csv", tmp_path / "r.zarr")


def test_a_table_without_a_header_whose_class_is_last_trains_on_its_class(tmp_path, capsys):
    """UCI's Skin_NonSkin.txt: B, G, R (0-255) and the class (1/2) last, tab-separated, no
    header. Its first column was taken as the label (the LIBSVM habit), and ``dsvm train``
    fitted a regressor of the blue channel, exit 0. Now the last column is the label where
    the first rows say the first cannot be classes and the last can; where both can (or
    neither), the first, as before."""
    from dsvm.cli import main
    from tests.conftest import shared_file

    with lzma.open(shared_file("skin_nonskin/Skin_NonSkin.txt.xz"), "rt") as f:
        lines = f.readlines()  # sorted by class: 50,859 skin, then non-skin
    src = tmp_path / "skin.txt"
    src.write_text("".join(lines[::40]))
    assert main(["convert", str(src), str(tmp_path / "s.zarr"), "--format", "csv"]) == 0
    said = capsys.readouterr().out
    assert re.search(r"6127 rows x 3 features.*labels: column 3 \(the last column: the first "
                     r"holds \d+ distinct values in the first 500 rows", said), said
    model = str(tmp_path / "m.dsvm")
    assert main(["train", str(tmp_path / "s.zarr"), "--out", model]) == 0
    clf = dsvm.load(model)
    assert clf.classes_.tolist() == [1, 2]
    table = np.loadtxt(src, dtype=np.float64)
    assert clf.score(table[:, :3], table[:, 3]) > 0.9  # LinearSVC: 0.92 on the whole file

    rng = np.random.default_rng(0)
    binary_last = np.column_stack([rng.integers(0, 2, 200), rng.normal(size=200),
                                   rng.integers(0, 2, 200)])
    np.savetxt(tmp_path / "b.csv", binary_last, delimiter=",", fmt="%g")
    assert dsvm.convert(tmp_path / "b.csv", tmp_path / "b.zarr").attrs["provenance"][
        "label_column"] == 0  # both can be classes: the first
    both_continuous = rng.normal(size=(200, 3))
    np.savetxt(tmp_path / "c.csv", both_continuous, delimiter=",")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        stored = dsvm.convert(tmp_path / "c.csv", tmp_path / "c.zarr")
    assert stored.attrs["provenance"]["label_column"] == 0  # neither: the first
    iris_like = "".join(f"{5 + i % 7 / 10},{3 + i % 5 / 10},{['setosa', 'virginica'][i % 2]}\n"
                        for i in range(60))
    (tmp_path / "iris.data").write_text(iris_like)  # a text class last
    named = dsvm.convert(tmp_path / "iris.data", tmp_path / "i.zarr", format="csv")
    assert named.label_names == ["setosa", "virginica"] and named.n_features == 2


def test_a_count_taken_for_classes_is_said_and_a_regressor_predicts_with_decision(tmp_path,
                                                                                   capsys):
    """Bike rentals per hour, 0-62: ``dsvm train`` took the 63 whole numbers for classes
    without a word, saved a classifier at chance level (exit 0), and its advice named class
    weights and alpha, never regression. And ``dsvm predict`` of a regressor with
    ``--decision`` to .npy or .csv failed with a traceback (its zarr output worked)."""
    from dsvm.cli import main

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"temp": rng.uniform(-5, 35, 3000), "workday": rng.integers(0, 2, 3000)})
    table["rentals"] = np.minimum(rng.poisson(np.exp(1 + 0.06 * table.temp
                                                     + 0.8 * table.workday)), 62)
    assert table.rentals.nunique() > 30
    table.to_csv(tmp_path / "bike.csv", index=False)
    data, model = str(tmp_path / "bike.zarr"), str(tmp_path / "bike.dsvm")
    assert main(["convert", str(tmp_path / "bike.csv"), data, "--label-column", "rentals"]) == 0
    capsys.readouterr()
    assert main(["train", data, "--out", model]) == 0
    err = capsys.readouterr().err
    n = table.rentals.nunique()
    assert f"are {n} distinct whole numbers (0 to {table.rentals.max()}): training a " \
           f"classifier of {n} classes (pass --task regression if they are a count" in err
    assert f"its {n} classes are numbers: if they are a count or an amount, not classes, " \
           "--task regression regresses them" in err
    assert main(["train", data, "--out", model, "--task", "regression", "--overwrite"]) == 0
    for out in ("y.npy", "y.csv"):
        assert main(["predict", model, data, "--out", str(tmp_path / out), "--decision"]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"),
                               dsvm.load(model).predict(data), rtol=1e-6)


def test_the_index_to_csv_writes_is_not_a_feature(tmp_path, capsys):
    """``DataFrame.to_csv`` writes the index first, unnamed: ``dsvm convert`` trained it as a
    feature (a row counter: on rows in time order, their time), and the model then refused
    the same rows as Parquet, which has no such column ("the model's columns [''] are not in
    its header"). pandas reads it back as 'Unnamed: 0', a feature there too."""
    from dsvm.cli import main

    people = _people()
    table = people[["age", "score"]].assign(label=people.label)
    table.to_csv(tmp_path / "t.csv")  # (index=True, the default)
    table.to_parquet(tmp_path / "t.parquet", index=False)
    data, model = str(tmp_path / "t.zarr"), str(tmp_path / "m.dsvm")
    assert main(["convert", str(tmp_path / "t.csv"), data]) == 0
    err = capsys.readouterr().err
    assert "t.csv: its first column has no name and counts the rows (0, 1, 2, ...): the " \
           "index DataFrame.to_csv writes" in err
    assert dsvm.open_dataset(data).attrs["feature_names"] == ["age", "score"]
    assert main(["train", data, "--out", model]) == 0
    capsys.readouterr()
    for rows in ("t.parquet", "t.csv"):  # read by name, the index left out
        assert main(["eval", model, str(tmp_path / rows), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["accuracy"] > 0.75
    read_back = pd.read_csv(tmp_path / "t.csv")
    with pytest.warns(UserWarning, match="The column 'Unnamed: 0' counts the rows: the index "
                                         r"to_csv wrote.*index_col=0"):
        SVMClassifier(max_epochs=2).fit(read_back.drop(columns="label"), read_back.label)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # read with its index: nothing to say
        frame = pd.read_csv(tmp_path / "t.csv", index_col=0)
        SVMClassifier(max_epochs=2, tol=None).fit(frame.drop(columns="label"), frame.label)


def test_raw_rows_without_a_header_score_with_a_model_of_rows_without_one(tmp_path, capsys):
    """A table without a header, its text column hashed by position (``--categorical 2``):
    ``dsvm eval`` of raw test rows in the same layout took their first row for a header and
    said "the model's columns ['0', '1'] are not in its header ['61', '0.42', ...]" (or
    matched a column by a chance value). They are now read by position, as the model's
    columns were named."""
    from dsvm.cli import main

    people = _people(2000)
    rows = people[["age", "score", "city"]].assign(label=people.label)
    rows.iloc[:1500].to_csv(tmp_path / "train.csv", index=False, header=False)
    rows.iloc[1500:].to_csv(tmp_path / "test.csv", index=False, header=False)
    model = str(tmp_path / "m.dsvm")
    for name in ("train", "test"):
        assert main(["convert", str(tmp_path / f"{name}.csv"), str(tmp_path / f"{name}.zarr"),
                     "--categorical", "2", "--label-column", "3"]) == 0
    assert main(["train", str(tmp_path / "train.zarr"), "--out", model]) == 0
    capsys.readouterr()
    scores = []
    for rows_given in ("test.csv", "test.zarr"):
        assert main(["eval", model, str(tmp_path / rows_given), "--json"]) == 0
        scores.append(json.loads(capsys.readouterr().out)["accuracy"])
    assert scores[0] == scores[1] > 0.75


def test_a_model_scores_raw_rows_by_the_label_column_it_was_trained_on(tmp_path, capsys):
    """House prices converted with ``--label-column price --drop zip``: ``dsvm eval`` of the
    test rows (price and zip beside the model's columns) said "no label column found beside
    the model's features" until ``--label-column price`` was typed again. The model now
    keeps its training data's label column (``label_column_``, in its file and ``dsvm info``)
    and takes it from raw rows that have it."""
    from dsvm.cli import main

    rng = np.random.default_rng(0)
    houses = pd.DataFrame({"sqft": rng.uniform(500, 4000, 1200),
                           "year": rng.integers(1950, 2020, 1200),
                           "zip": rng.choice(["a", "b"], 1200)})
    houses["price"] = 150 * houses.sqft + 900 * (houses.year - 1950) + rng.normal(0, 2e4, 1200)
    houses.iloc[:900].to_csv(tmp_path / "train.csv", index=False)
    houses.iloc[900:].to_parquet(tmp_path / "test.parquet", index=False)
    data, model = str(tmp_path / "h.zarr"), str(tmp_path / "h.dsvm")
    assert main(["convert", str(tmp_path / "train.csv"), data, "--label-column", "price",
                 "--drop", "zip"]) == 0
    assert main(["train", data, "--out", model]) == 0
    capsys.readouterr()
    assert main(["eval", model, str(tmp_path / "test.parquet"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["r2"] > 0.8
    assert main(["info", model]) == 0
    assert "label_column: price" in capsys.readouterr().out
    # in Python: fit(frame, "price") and a named Series alike, kept through save and load
    X = houses.drop(columns=["price", "zip"])
    for y in ("price", houses.price):
        clf = dsvm.SVMRegressor(max_epochs=3).fit(houses.drop(columns="zip") if
                                                  isinstance(y, str) else X, y)
        clf.save(tmp_path / "p.dsvm")
        assert clf.label_column_ == dsvm.load(tmp_path / "p.dsvm").label_column_ == "price"


@pytest.mark.slow
@pytest.mark.distributed
def test_a_task_error_on_dsvms_own_cluster_is_said_once(capfd):
    """A Dask DataFrame with a missing value, fitted without a client (dsvm starts its own
    LocalCluster): the worker logged "Compute Failed" with the task's traceback above the
    fit's one-line error. The frame is a merge of two, as users build them: that cluster's
    scheduler (in this process) logged each of the merge's shuffles as it started and ended,
    4 WARNING lines of shuffle ids and task keys."""
    frame = _people(600)[["age", "score", "label"]]
    frame.loc[450, "score"] = np.nan
    lookup = pd.DataFrame({"age": np.unique(frame["age"]), "decade": 0.0})
    lookup["decade"] = lookup["age"] // 10
    merged = dd.from_pandas(frame, npartitions=2).merge(dd.from_pandas(lookup, npartitions=2),
                                                       on="age")
    # (distributed's handler writes to the stderr of its import, not this test's: the
    # scheduler's records are caught at their logger, after its filters)
    said = logging.handlers.BufferingHandler(capacity=1000)
    shuffles = logging.getLogger("distributed.shuffle._scheduler_plugin")
    shuffles.addHandler(said)
    try:
        with pytest.raises(ValueError, match=r"partition \d, column 'score', row \d+: a miss"):
            SVMClassifier(max_epochs=2, n_workers=1).fit(merged, "label")
    finally:
        shuffles.removeHandler(said)
    err = capfd.readouterr().err
    assert "Compute Failed" not in err and "Traceback" not in err, err[-2000:]
    assert [r.getMessage() for r in said.buffer] == []


def test_scoring_raw_rows_sorted_by_label_says_nothing_about_training(tmp_path, capsys):
    """``dsvm eval model test.svm`` converts the raw rows into a scratch dataset, and printed
    that conversion's warning about labels clustered across chunks (advice for training: 'keeps
    a stream per worker') for rows it only scores."""
    from sklearn.datasets import dump_svmlight_file

    from dsvm.cli import main

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    order = np.argsort(y, kind="stable")  # sorted by label
    dump_svmlight_file(X[order], y[order], str(tmp_path / "test.svm"), zero_based=False)
    model = str(tmp_path / "m.dsvm")
    SVMClassifier(max_epochs=3).fit(X, y).save(model)
    assert main(["eval", model, str(tmp_path / "test.svm")]) == 0
    assert capsys.readouterr().err == ""


def test_a_hashed_csv_model_reads_rows_with_other_columns_and_names_a_missing_header(tmp_path,
                                                                                    capsys):
    """A model trained on a CSV with a hashed column refused new rows with one more column
    than its own and the label ("more than one other column"), and rows without a header were
    "not in its header ['53', '0.12', ...]"."""
    import dsvm
    from dsvm.cli import main

    frame = _people(600)
    frame.iloc[:500].to_csv(tmp_path / "train.csv", index=False)
    model = str(tmp_path / "m.dsvm")
    assert main(["convert", str(tmp_path / "train.csv"), str(tmp_path / "t.zarr"),
                 "--categorical", "city"]) == 0
    assert main(["train", str(tmp_path / "t.zarr"), "--out", model]) == 0
    test = frame.iloc[500:]
    test.assign(note="checked").to_csv(tmp_path / "more.csv", index=False)
    test.to_csv(tmp_path / "bare.csv", index=False, header=False)
    capsys.readouterr()
    assert main(["eval", model, str(tmp_path / "more.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(
        dsvm.load(model).score(test[["age", "score", "city"]], test.label))
    assert main(["eval", model, str(tmp_path / "bare.csv")]) == 2
    assert capsys.readouterr().err.startswith(
        f"dsvm eval: error: {tmp_path / 'bare.csv'} has no header (its first line is data: ")


def test_missing_values_filled_with_the_columns_means_and_so_at_prediction(tmp_path, capsys):
    """``--fill-missing mean``: each column's mean over its present values, as SimpleImputer
    fills them (0 in raw units is an outlier: see dsvm.data.fill); the means are kept with the
    dataset and by its model, and eval/predict of raw rows fill their holes with them."""
    import dsvm
    from dsvm.cli import main

    rng = np.random.default_rng(1)
    table = pd.DataFrame({"a": rng.normal(5, 1, 300), "b": rng.normal(600, 50, 300)})
    table["label"] = (table.a - 5 + (table.b - 600) / 50 > 0).astype(int)
    holes = table.copy()
    holes.loc[rng.random(300) < 0.1, "a"] = np.nan
    holes.loc[rng.random(300) < 0.1, "b"] = np.nan
    train, test = holes.iloc[:200], holes.iloc[200:]
    train.to_csv(tmp_path / "train.csv", index=False)
    train.to_parquet(tmp_path / "train.parquet")
    test.to_csv(tmp_path / "test.csv", index=False)
    means = train[["a", "b"]].mean()
    expected = train[["a", "b"]].fillna(means).to_numpy()
    for name in ("train.csv", "train.parquet"):
        ds = dsvm.convert(tmp_path / name, tmp_path / f"{name}.zarr", fill_missing="mean")
        np.testing.assert_allclose(ds.read_chunk(0).X, expected, rtol=1e-6)
        assert ds.attrs["fill_values"] == pytest.approx(means.to_dict())
    model = str(tmp_path / "m.dsvm")
    assert main(["train", str(tmp_path / "train.csv.zarr"), "--out", model]) == 0
    clf = dsvm.load(model)
    assert clf.fill_values_ == pytest.approx(means.to_dict())
    capsys.readouterr()
    assert main(["info", model]) == 0
    assert f"     fill_values: a={means.a:.6g}, b={means.b:.6g}\n" in capsys.readouterr().out
    assert main(["eval", model, str(tmp_path / "test.csv"), "--json"]) == 0  # no flag needed
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(
        clf.score(test[["a", "b"]].fillna(means).to_numpy(), test.label))
    with pytest.raises(SystemExit) as code:
        main(["convert", str(tmp_path / "train.csv"), str(tmp_path / "x.zarr"),
              "--fill-missing", "average"])
    assert code.value.code == 2
    assert capsys.readouterr().err == ("dsvm convert: error: argument --fill-missing: a finite "
                                       "number or 'mean', not 'average' (see dsvm convert "
                                       "--help)\n")


def test_a_dropped_or_hashed_column_is_never_the_default_label(tmp_path):
    """Titanic's CSV (PassengerId, Survived, Pclass, ...) converted with ``--drop PassengerId``
    and no --label-column took the dropped id as its label (a warning, then a regression of
    it). A dropped or hashed column is never the label: here a column named so is, or, as
    "Survived" is not named like one, the conversion asks for it by name, never listing
    the dropped and hashed columns among the candidates."""
    import dsvm

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"PassengerId": np.arange(1, 61), "Survived": rng.integers(0, 2, 60),
                          "Sex": rng.choice(["male", "female"], 60), "Age": rng.normal(30, 9, 60)})
    named = table.rename(columns={"Survived": "label"})
    for frame, prefix in ((table, ""), (named, "n")):
        frame.to_csv(tmp_path / f"{prefix}t.csv", index=False)
        frame.to_parquet(tmp_path / f"{prefix}t.parquet")
    cases = [("t.csv", dict(drop=["PassengerId", "Sex"])),  # numbers only: the plain reader
             ("t.csv", dict(drop=["PassengerId"], categorical=["Sex"])),
             ("t.csv", dict(drop=["0"], categorical=["Sex"])),  # by position
             ("t.parquet", dict(drop=["PassengerId"], categorical=["Sex"]))]
    for k, (name, options) in enumerate(cases):
        with pytest.raises(DataFormatError, match=r"the columns are \['Survived', 'Age'\]"):
            dsvm.convert(tmp_path / name, tmp_path / f"{k}.zarr", **options)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (no row-id warning: the id is not the label)
            ds = dsvm.convert(tmp_path / f"n{name}", tmp_path / f"{k}.zarr", **options)
        assert ds.attrs["provenance"]["label_column"] == "label", options
        np.testing.assert_array_equal(ds.read_chunk_labels(0)[0], table.Survived)


def test_eval_tells_a_model_from_always_predicting_the_most_frequent_class(tmp_path, capsys):
    """On rare positives (click logs, a topic), ``dsvm eval`` said only "accuracy: 0.97": a
    model that always says no scores about as much. It now gives the majority class's rate,
    the balanced accuracy and the positive class's precision, recall and F1 (several classes:
    the macro F1), from counts added over the chunks: scikit-learn's figures."""
    from sklearn.metrics import balanced_accuracy_score, f1_score, precision_score, recall_score

    import dsvm
    from dsvm.cli import main

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=3000) > 1.6, 1, -1)  # about 7% positives
    data = dsvm.write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=500)
    SVMClassifier(random_state=0).fit(data).save(tmp_path / "m.dsvm")
    predicted = dsvm.load(tmp_path / "m.dsvm").predict(X)
    assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / "d.zarr"), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["majority_rate"] == pytest.approx(np.mean(y == -1))
    assert said["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, predicted))
    for name, metric in (("precision", precision_score), ("recall", recall_score),
                         ("f1", f1_score)):
        assert said[name] == pytest.approx(metric(y, predicted, pos_label=1)), name
    assert 0 < said["recall"] < 1 and said["f1"] > 0.5
    assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / "d.zarr")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(f"(3000 rows; always predicting the most frequent class: "
                             f"{said['majority_rate']:.6f})")
    ones = said["per_class"]["1"]  # (by the name: 1, not 1.0)
    assert lines[3] == (f"class 1   precision {ones['precision']:.4f}  recall "
                        f"{ones['recall']:.4f}  f1 {ones['f1']:.4f}  ({np.sum(y == 1):,} rows)")
    assert ones["f1"] == said["f1"] and said["per_class"]["-1"]["support"] == np.sum(y == -1)
    assert said["per_class"]["-1"]["recall"] == pytest.approx(
        recall_score(y, predicted, pos_label=-1))
    names = np.array(["cat", "dog", "yak"])[np.digitize(X[:, 1], [-0.5, 0.8])]
    three = SVMClassifier(random_state=0).fit(X, names)
    rates = three.evaluate(pd.DataFrame(X).assign(y=names), "y")
    assert rates["macro_f1"] == pytest.approx(f1_score(names, three.predict(X),
                                                       average="macro"))
    assert rates["majority_rate"] == pytest.approx(max(np.mean(names == n) for n in names))


def test_rows_with_text_in_an_array_are_named_and_a_hashing_model_asks_for_its_frame():
    """``fit(df.values, y)`` of a table with a text column, or ``predict`` of a frame-trained
    model on ``df.to_numpy()`` / one row ``df.iloc[i]``, said only NumPy's "could not convert
    string to float: 'oslo'": no row, no column, nothing about the frame the model hashes."""
    people = _people(300)
    X, y = people.drop(columns="label"), people.label
    with pytest.raises(ValueError, match=r"X holds text: '(paris|oslo|lima)' at row 0, "
                                         r"column 2 .*DataFrame, whose text columns"):
        SVMClassifier().fit(X.to_numpy(dtype=object), y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hashing = SVMClassifier(random_state=0).fit(X, y)
        numeric = SVMClassifier(random_state=0).fit(X[["age", "score"]], y)
    for rows in (X.to_numpy(), X.iloc[0]):
        with pytest.raises(ValueError, match=r"hashes the text column\(s\) \['city'\] of a "
                                             r"DataFrame: predict a DataFrame with the columns "
                                             r"\['age', 'score', 'city'\] \(got a (numpy|pandas)"):
            hashing.predict(rows)
    assert (hashing.predict(X.iloc[[0]]) == hashing.predict(X)[:1]).all()
    with pytest.raises(ValueError, match=r"X holds text: 'n/a' at row 1, column 1 \('score'\)"):
        numeric.predict(X[["age", "score"]].astype(object).assign(
            score=["1.5", "n/a"] + ["0"] * 298))


def test_a_validation_frame_and_evaluate_hash_a_text_column_as_the_fit_did():
    """``fit(frame, y, validation=(val_frame, val_y))`` with a text column: "The validation
    data (array) has 3 features but the training data has 262146"; ``evaluate(frame, y)``:
    "X has 3 features, but SVMClassifier is expecting 262146"."""
    people = _people(1500)
    train, held = people.iloc[:1200], people.iloc[1200:]
    X, y = train.drop(columns="label"), train.label
    Xv, yv = held.drop(columns="label"), held.label
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SVMClassifier(random_state=0, solver="sgd").fit(X, y, validation=(Xv, yv))
    assert clf.hashing_["categorical"] == ["city"]
    score = clf.score(Xv, yv)
    assert score > 0.7
    assert clf.history_[-1]["val_accuracy"] == pytest.approx(score, abs=0.02)
    measured = clf.evaluate(Xv, yv)
    assert measured["accuracy"] == pytest.approx(score) and measured["n_samples"] == 300


def test_partial_fit_of_a_frame_after_a_dask_frame_fit_warns_nothing():
    """A model of a Dask frame with a text column knows the frame's column names; a later
    ``partial_fit`` of a pandas frame checked its hashed rows (no names) against them:
    scikit-learn's "X does not have valid feature names" on every call."""
    people = _people(1200)
    X = people.drop(columns="label")
    clf = SVMClassifier(random_state=0, max_epochs=3).fit(dd.from_pandas(X, npartitions=2),
                                                          dd.from_pandas(people.label,
                                                                         npartitions=2))
    assert list(clf.feature_names_in_) == ["age", "score", "city"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.partial_fit(X.iloc[:200], people.label.iloc[:200])
    assert clf.score(X, people.label) > 0.7


def test_partial_fit_of_dask_frames_keeps_their_columns_and_refuses_another_order(
        local_client):
    """``partial_fit`` of Dask batches kept no ``feature_names_in_``: a later batch with its
    columns in another order trained silently (each weight met another column's values),
    and scoring a pandas frame warned that the model had no feature names. Pandas batches
    follow scikit-learn's rule; Dask batches now do too."""
    people = _people(1200)
    X = people[["age", "score"]].assign(oslo=(people.city == "oslo").astype(float))
    batch = dd.from_pandas(X.iloc[:600], npartitions=2)
    clf = SVMClassifier(random_state=0)
    clf.partial_fit(batch, dd.from_pandas(people.label.iloc[:600], npartitions=2),
                    classes=["no", "yes"])
    assert list(clf.feature_names_in_) == ["age", "score", "oslo"]
    turned = dd.from_pandas(X.iloc[600:, ::-1], npartitions=2)
    with pytest.raises(ValueError, match=r"got \['oslo', 'score', 'age'\], expected "
                                         r"\['age', 'score', 'oslo'\]"):
        clf.partial_fit(turned, dd.from_pandas(people.label.iloc[600:], npartitions=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a pandas frame of those columns: nothing to say
        assert clf.score(X, people.label) > 0.5  # (one pass over raw ages)


@pytest.mark.parametrize("sparse", [False, True])
def test_a_table_with_the_models_columns_in_another_order_is_read_by_name(tmp_path, capsys,
                                                                          sparse):
    """A CSV's header names its columns. Another export of the same table with its columns
    in another order was refused ("write them in that order"), and so was its converted
    dataset; both are read by name now, and score as the original. A column missing is
    still named, and a pandas frame keeps scikit-learn's rule (the order of the fit)."""
    import dsvm
    from dsvm.cli import main

    frame = _people(900).drop(columns="city")
    frame["days"] = np.arange(900) % 7 * (np.arange(900) % 3 == 0)  # zeros: sparse rows
    features = ["age", "score", "days"]
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame[["days", "label", "score", "age"]].to_csv(tmp_path / "r.csv", index=False)
    layout = ["--sparse"] if sparse else ["--dense"]
    for name in ("t", "r"):
        assert main(["convert", str(tmp_path / f"{name}.csv"), str(tmp_path / f"{name}.zarr"),
                     "--label-column", "label", *layout]) == 0
    model = str(tmp_path / "m.dsvm")
    assert main(["train", str(tmp_path / "t.zarr"), "--out", model, "--validation",
                 str(tmp_path / "r.zarr")]) == 0, capsys.readouterr().err
    clf = dsvm.load(model)
    assert list(clf.feature_names_in_) == features
    expected = clf.predict(frame[features])
    for rows in ("r.csv", "r.zarr"):
        capsys.readouterr()
        assert main(["eval", model, str(tmp_path / rows), "--json"]) == 0, \
            capsys.readouterr().err
        measured = json.loads(capsys.readouterr().out)
        assert measured["accuracy"] == pytest.approx(np.mean(expected == frame.label))
    np.testing.assert_array_equal(clf.predict(str(tmp_path / "r.zarr")), expected)
    assert clf.history_[-1]["val_accuracy"] == pytest.approx(clf.score(str(tmp_path / "t.zarr")))
    frame[["label", "score", "age"]].to_csv(tmp_path / "short.csv", index=False)
    assert main(["eval", model, str(tmp_path / "short.csv")]) == 2
    assert "the model's columns ['days'] are not in its header" in capsys.readouterr().err
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(frame[["days", "score", "age"]])
