"""Input readers: libsvm / CSV / npy / npz parsing, and errors that name the file and line."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data import convert, open_dataset
from dsvm.data.readers import LibSVMSource
from dsvm.exceptions import DataFormatError

from .conftest import collect

GOOD = "+1 1:0.5 3:2\n-1 2:1\n"  # two good lines before the bad one: errors are on line 3+


def _compress(path, text: bytes):
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix, open)
    with opener(path, "wb") as f:
        f.write(text)
    return path


def test_libsvm_syntax(tmp_path):
    text = (
        "# a comment line\n"
        "+1 qid:3 3:1.5 1:-2 # trailing comment, indices unsorted\n"
        "\n"
        "-1\n"  # an empty row
        "1.0\t2:1e-3  4:.25\r\n"
        "0 4:-0 2:7.\n"
        "   -2.5e0 1:1 \n"
    )
    src = tmp_path / "syntax.svm"
    src.write_text(text)
    ds = convert(src, tmp_path / "o.zarr", layout="sparse", dtype="float64")
    X, y, _ = collect(ds)
    expected = np.array([[-2, 0, 1.5, 0], [0, 0, 0, 0], [0, 1e-3, 0, 0.25], [0, 7, 0, -0.0],
                         [1, 0, 0, 0]])
    np.testing.assert_array_equal(X.toarray(), expected)
    np.testing.assert_array_equal(y, [1, -1, 1, 0, -2.5])
    assert ds.n_features == 4 and X.nnz == 7  # "-0" is a stored value, as in the file


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz"])
def test_libsvm_compressed_inputs(tmp_path, suffix):
    src = _compress(tmp_path / f"data.svm{suffix}", (GOOD * 50).encode())
    ds = convert(src, tmp_path / "o.zarr", n_features=5)
    X, y, _ = collect(ds)
    assert ds.layout == "dense"  # auto: 150 / 500 stored entries = density 0.3 >= 0.25
    assert X.shape == (100, 5) and np.count_nonzero(X) == 150
    assert ds.classes.tolist() == [-1.0, 1.0]


@pytest.mark.parametrize(
    "line, match",
    [
        ("1 3:1 2 4:1", "token '2' is not of the form index:value"),
        ("1 1.5:1", "feature index '1.5' is not a positive integer"),
        ("1 -2:1", "feature index '-2' is not a positive integer"),
        ("1 x:1", "feature index 'x' is not a positive integer"),
        ("1 3:1 3:2", "duplicate feature index 3"),
        ("1 3:1 2:4 3:2", "duplicate feature index 3"),
        ("abc 1:1", "label 'abc' is not a number"),
        ("1 2:nan", "value '2:nan' is not finite"),
        ("1 2:-inf", "value '2:-inf' is not finite"),
        ("nan 2:1", "label 'nan' is not finite"),
        ("1 2:x", "feature value 'x' is not a number"),
        ("1 2:", "malformed feature '2:'"),
        ("1 :2", "malformed feature ':2'"),
        ("1 2:3:4", "malformed feature '2:3:4'"),
        ("1 2::4", "malformed feature '2::4'"),
        ("1 2:1 :", "stray ':'"),
        ("3:1 4:1", "expected a numeric label before the features, got '3:1'"),
        ("1 7:1", "feature index 7 is out of range; n_features=5"),
    ],
)
def test_libsvm_errors_name_file_and_line(tmp_path, line, match):
    src = tmp_path / "bad_input.txt"
    src.write_text(GOOD + "# comment\n" + line + "\n-1 1:1\n")
    with pytest.raises(DataFormatError, match=rf"bad_input\.txt, line 4: .*{_re(match)}"):
        convert(src, tmp_path / "o.zarr", n_features=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad_input.txt"]


def _re(text: str) -> str:
    import re

    return re.escape(text)


def test_line_numbers_across_blocks(tmp_path):
    lines = [f"{(-1) ** i} {i % 7 + 1}:{i}.5" for i in range(5000)]
    lines[4321] = "1 0:1"
    src = tmp_path / "long.svm"
    src.write_text("\n".join(lines) + "\n")
    # many blocks, cut mid-line; 1-based (by default an index 0 makes the file 0-based)
    source = LibSVMSource(src, block_bytes=997, zero_based=False)
    with pytest.raises(DataFormatError, match=r"long\.svm, line 4322: feature index 0"):
        source.scan()
    lines[4321] = "1 1:1"
    src.write_text("\n".join(lines))  # no final newline
    stats = LibSVMSource(src, block_bytes=997).scan()
    assert (stats.n_samples, stats.n_features, stats.nnz) == (5000, 7, 5000)


def test_libsvm_one_class_converts_with_a_warning(tmp_path):
    # a test shard can be one class: converted (for eval/predict), with a warning
    src = tmp_path / "one.svm"
    src.write_text("1 1:1\n1 2:1\n1.0 3:1\n")
    with pytest.warns(UserWarning, match=r"one\.svm: all 3 samples have the label 1"):
        ds = convert(src, tmp_path / "one.zarr")
    assert ds.n_samples == 3 and ds.classes.tolist() == [1.0]
    src.write_text("# nothing\n\n")
    with pytest.raises(DataFormatError, match="no feature index:value pairs found"):
        convert(src, tmp_path / "o.zarr")
    with pytest.raises(DataFormatError, match="no samples found"):
        convert(src, tmp_path / "o.zarr", n_features=3, layout="sparse")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.svm", "one.zarr"]


# ---- CSV ---------------------------------------------------------------------------------


def test_csv_with_header_label_by_name_and_compression(tmp_path):
    text = "f1,label,f2\n1.5,1,2\n\n-3,-1,0\n0,1,4e2\n"
    src = _compress(tmp_path / "table.csv.gz", text.encode())
    ds = convert(src, tmp_path / "o.zarr", label_column="label", dtype="float64")
    X, y, _ = collect(ds)
    assert ds.layout == "dense" and ds.n_features == 2
    np.testing.assert_array_equal(X, [[1.5, 2], [-3, 0], [0, 400]])
    np.testing.assert_array_equal(y, [1, -1, 1])


def test_a_zipped_csv_of_one_file_converts_and_an_archive_of_several_is_named(tmp_path):
    """Kaggle's ``train.csv.zip``: read as svmlight before ("token 'f1,label,f2' is not of the
    form index:value"); fsspec alone would have read the first file of any archive."""
    import zipfile

    text = "f1,label,f2\n1.5,1,2\n-3,-1,0\n"
    with zipfile.ZipFile(tmp_path / "train.csv.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("__MACOSX/._train.csv", b"\0\5\26\7")  # (a Mac's zip: not data)
        z.writestr("train.csv", text)
    ds = convert(tmp_path / "train.csv.zip", tmp_path / "o.zarr", dtype="float64")
    X, y, _ = collect(ds)
    np.testing.assert_array_equal(X, [[1.5, 2], [-3, 0]])
    np.testing.assert_array_equal(y, [1, -1])
    with zipfile.ZipFile(tmp_path / "two.csv.zip", "w") as z:
        z.writestr("train.csv", text)
        z.writestr("test.csv", text)
    with pytest.raises(DataFormatError, match=r"two\.csv\.zip: a zip archive of 2 files "
                                              r"\['train\.csv', 'test\.csv'\]"):
        convert(tmp_path / "two.csv.zip", tmp_path / "two.zarr")
    (tmp_path / "not.csv.zip").write_text(text)
    with pytest.raises(DataFormatError, match=r"not\.csv\.zip: not readable as \.zip data"):
        convert(tmp_path / "not.csv.zip", tmp_path / "not.zarr")
    assert not (tmp_path / "two.zarr").exists() and not (tmp_path / "not.zarr").exists()
    import fsspec

    if "zstd" not in fsspec.available_compressions():  # (its bytes were parsed as text)
        (tmp_path / "t.csv.zst").write_bytes(b"\x28\xb5\x2f\xfd garbled\nbytes")
        with pytest.raises(DataFormatError, match=r"t\.csv\.zst: zstd-compressed data needs "
                                                  r"the zstandard package"):
            convert(tmp_path / "t.csv.zst", tmp_path / "t.zarr")


def test_a_european_csv_reads_its_decimal_commas(tmp_path, capsys):
    """Excel's CSV in a European locale: ';' between fields, ',' in numbers. Every number was
    "'17,99' is not a number (a text column is hashed with --categorical...)", and a header
    with a comma in a name was cut at its commas."""
    from dsvm.cli import main

    (tmp_path / "de.csv").write_text("Umsatz;Preis, netto;label\n17,99;3;1\n-0,5;1,25;0\n")
    assert main(["convert", str(tmp_path / "de.csv"), str(tmp_path / "de.zarr"),
                 "--dtype", "float64"]) == 0
    assert capsys.readouterr().out.rstrip().endswith(", numbers with decimal commas")
    X, y, _ = collect(open_dataset(tmp_path / "de.zarr"))
    np.testing.assert_array_equal(X, [[17.99, 3], [-0.5, 1.25]])
    np.testing.assert_array_equal(y, [1, 0])
    (tmp_path / "rows.csv").write_text("1;17,99;3\n0;-0,5;1,25\n")  # no header: rows
    X, y, _ = collect(convert(tmp_path / "rows.csv", tmp_path / "rows.zarr", dtype="float64"))
    np.testing.assert_array_equal(X, [[17.99, 3], [-0.5, 1.25]])
    (tmp_path / "holes.csv").write_text("a;b;label\n17,99;;ja\n-0,5;1,25;nein\n")
    ds = convert(tmp_path / "holes.csv", tmp_path / "holes.zarr", dtype="float64",
                 fill_missing=0)  # (read by pyarrow)
    X, y, _ = collect(ds)
    np.testing.assert_array_equal(X, [[17.99, 0], [-0.5, 1.25]])
    assert ds.label_names == ["ja", "nein"]
    (tmp_path / "us.csv").write_text("a;b;label\n1,5;2.5;1\n")  # a point too: not a decimal comma
    with pytest.raises(DataFormatError, match=r"line 2, column 'a': '1,5' is not a number"):
        convert(tmp_path / "us.csv", tmp_path / "us.zarr")


def test_a_folder_of_csv_files_as_spark_writes_them_is_one_input(tmp_path):
    """``df.write.csv(path, header=True)``: part files that each repeat the header, and a
    _SUCCESS marker. Refused before ("several csv files ... are not converted as one")."""
    folder = tmp_path / "out.csv"
    folder.mkdir()
    (folder / "part-00000.csv").write_text("a,b,label\n1,2,no\n3,,no\n")
    (folder / "part-00001.csv").write_text("a,b,label\n5,6,yes\n7,10,no\n")
    (folder / "_SUCCESS").write_text("")
    with pytest.raises(DataFormatError, match=r"part-00000\.csv, line 3: column 'b' is empty"):
        convert(folder, tmp_path / "o.zarr")
    ds = convert(folder / "part-*.csv", tmp_path / "g.zarr", dtype="float64",
                 fill_missing="mean")  # (a glob, read by pyarrow)
    X, y, _ = collect(ds)
    np.testing.assert_array_equal(X, [[1, 2], [3, 6], [5, 6], [7, 10]])  # b's mean: all files'
    assert ds.label_names == ["no", "yes"]  # coded once: "yes" is not the second file's 0
    np.testing.assert_array_equal(y, [0, 0, 1, 0])
    (folder / "part-00000.csv").write_text("a,b,label\n1,2,no\n3,4,no\n")
    X, y, _ = collect(convert(folder, tmp_path / "o.zarr", dtype="float64"))
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6], [7, 10]])
    np.testing.assert_array_equal(y, [0, 0, 1, 0])
    (folder / "part-00002.csv").write_text("a,c,label\n1,2,no\n")
    with pytest.raises(DataFormatError, match=r"part-00002\.csv: its columns differ from "
                                              r".*part-00000\.csv's \(column 1: 'c' where"):
        convert(folder, tmp_path / "bad.zarr", fill_missing=0)
    assert not (tmp_path / "bad.zarr").exists()


def test_a_trailing_delimiter_on_every_line_is_not_a_column(tmp_path, capsys):
    """"a,b,label," above "1,2,0,": some exporters end every line with the delimiter. Read
    as a last column, each row's empty field was "column '' is empty (a missing value...)"."""
    import dsvm
    from dsvm.cli import main

    (tmp_path / "t.csv").write_text("a,b,label,\r\n1,2,0,\r\n3,,1,\r\n5,6,0,")
    with pytest.raises(DataFormatError, match=r"line 3: column 'b' is empty"):
        convert(tmp_path / "t.csv", tmp_path / "t.zarr")
    (tmp_path / "t.csv").write_text("a,b,label,\r\n1,2,0,\r\n3,4,1,\r\n5,6,0,")
    plain = convert(tmp_path / "t.csv", tmp_path / "t.zarr", dtype="float64")
    holes = convert(tmp_path / "t.csv", tmp_path / "f.zarr", dtype="float64", fill_missing=0)
    for ds in (plain, holes):  # (the plain reader, and pyarrow's)
        X, y, _ = collect(ds)
        np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6]])
        np.testing.assert_array_equal(y, [0, 1, 0])
        assert ds.feature_names == ["a", "b"]
    dsvm.SVMClassifier(max_epochs=2).fit(plain).save(tmp_path / "m.dsvm")
    assert main(["eval", str(tmp_path / "m.dsvm"), str(tmp_path / "t.csv"), "--json"]) == 0
    assert '"n_samples": 3' in capsys.readouterr().out


def test_a_utf16_file_as_excel_saves_unicode_text_reads_as_its_utf8_twin(tmp_path):
    """Excel's "Unicode Text" is UTF-16 with a byte order mark, tab-separated: its bytes were
    parsed as they were ("a field holds more than one value: '\\x001\\x007...'")."""
    rng = np.random.default_rng(0)
    lines = ["größe\tpreis\tlabel"] + [f"{a:.4f}\t{b:.3f}\t{int(a > 0)}"
                                        for a, b in rng.normal(size=(40_000, 2))]
    text = "\r\n".join(lines) + "\r\n"  # (over 1 MB as UTF-16: blocks cut mid-character)
    (tmp_path / "u8.tsv").write_text(text, encoding="utf-8")
    X, y, _ = collect(convert(tmp_path / "u8.tsv", tmp_path / "u8.zarr", dtype="float64"))
    (tmp_path / "le.tsv").write_text(text, encoding="utf-16")  # (Python's: a BOM, then LE)
    (tmp_path / "be.tsv").write_bytes(b"\xfe\xff" + text.encode("utf-16-be"))
    for name, options in (("le", {}), ("be", {}), ("le", {"fill_missing": 0})):
        ds = convert(tmp_path / f"{name}.tsv", tmp_path / f"{name}{len(options)}.zarr",
                     dtype="float64", **options)
        X16, y16, _ = collect(ds)
        np.testing.assert_array_equal(X16, X)
        np.testing.assert_array_equal(y16, y)
        assert ds.feature_names == ["größe", "preis"]
        assert ds.attrs["provenance"]["encoding"] == "utf-16"


def test_a_csv_in_the_windows_code_page_reads_as_its_utf8_twin(tmp_path):
    """Excel's "CSV (Comma delimited)" writes the Windows code page (cp1252): a hashed text
    column failed pyarrow's reader ("invalid UTF8 data"), and "région" was no column."""
    rng = np.random.default_rng(0)
    rows = [f"{r},{x:.3f},{int(x > 0)}" for r, x in
            zip(rng.choice(["Île-de-France", "Rhône", "Bretagne"], 300), rng.normal(size=300))]
    text = "\n".join(["région,x,label", *rows]) + "\n"
    (tmp_path / "u8.csv").write_text(text, encoding="utf-8")
    (tmp_path / "win.csv").write_text(text, encoding="cp1252")
    twin = convert(tmp_path / "u8.csv", tmp_path / "u8.zarr", categorical=["région"])
    win = convert(tmp_path / "win.csv", tmp_path / "win.zarr", categorical=["région"])
    assert (collect(win)[0] != collect(twin)[0]).nnz == 0  # the same tokens, hashed alike
    assert win.attrs["provenance"]["encoding"] == "cp1252"
    assert "encoding" not in twin.attrs["provenance"]
    # past the 64 KiB read to judge it, a line in the code page is named: it was pyarrow's
    # "after line 1: In CSV column #0: CSV conversion error to string: invalid UTF8 data"
    late = "\n".join(["region,x,label", *(["Rhone,0.5,1"] * 8000), "Île,0.5,1"]) + "\n"
    (tmp_path / "late.csv").write_bytes(late.encode("cp1252"))
    with pytest.raises(DataFormatError, match=r"late\.csv, line 8002, column 'region': "
                                              r"'\ufffdle' is not UTF-8 text"):
        convert(tmp_path / "late.csv", tmp_path / "late.zarr", categorical=["region"])


def test_a_csv_with_hashed_columns_or_holes_shuffles_as_it_converts(tmp_path):
    """shuffle=True / --shuffle was refused with categorical=, fill_missing= and drop= ("not
    available ... yet"): a time-sorted click log (Criteo's layout too) could not be shuffled
    on its way in. The rows are those of the plain conversion, in another order."""
    rng = np.random.default_rng(0)
    lines = ["id,city,x,label"] + [
        f"{i},{rng.choice(['paris', 'oslo', 'lima'])},{'' if i % 7 == 0 else i / 10},"
        f"{'yes' if i > 150 else 'no'}" for i in range(300)]  # (sorted by label)
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    options = dict(categorical=["city"], fill_missing="mean", drop=["id"], hash_bits=8,
                   dtype="float64")
    plain = convert(tmp_path / "t.csv", tmp_path / "p.zarr", **options)
    mixed = convert(tmp_path / "t.csv", tmp_path / "s.zarr", shuffle=True, seed=3, **options)
    assert mixed.attrs["shuffled"] and mixed.label_names == plain.label_names == ["no", "yes"]
    Xp, yp, _ = collect(plain)
    Xs, ys, _ = collect(mixed)
    Xp, Xs = Xp.toarray(), Xs.toarray()
    assert not np.array_equal(ys, yp)
    key = np.column_stack([Xp, yp])
    shuffled = np.column_stack([Xs, ys])
    np.testing.assert_array_equal(key[np.lexsort(key.T)], shuffled[np.lexsort(shuffled.T)])


@pytest.mark.parametrize("name, said", [
    ("book.xlsx", "is a spreadsheet: save it as CSV"),
    ("rows.jsonl.gz", "is JSON: read it with pandas.read_json"),
    ("table.feather", "is not a format dsvm reads: save it as Parquet or CSV"),
    ("frame.pkl", "is a pickle, which dsvm never loads"),
])
def test_a_format_dsvm_does_not_read_is_named_with_what_to_do(tmp_path, name, said):
    """Read as svmlight (the default for other names), a workbook said "token
    'PK\\x03\\x04...' is not of the form index:value"."""
    (tmp_path / name).write_bytes(b"PK\x03\x04 not text")
    with pytest.raises(DataFormatError, match=re.escape(f"{name} {said}")):
        convert(tmp_path / name, tmp_path / "d.zarr")
    assert not (tmp_path / "d.zarr").exists()


def test_tsv_without_header_label_last(tmp_path):
    src = tmp_path / "t.tsv"
    src.write_text("0.5\t1\t0\n2\t3\t1\n")
    ds = convert(src, tmp_path / "o.zarr", label_column=-1)
    X, y, _ = collect(ds)
    np.testing.assert_array_equal(X, np.array([[0.5, 1], [2, 3]], np.float32))
    np.testing.assert_array_equal(y, [0, 1])


@pytest.mark.parametrize(
    "bad, match",
    [
        ("1,2", "line 4: found 2 columns, expected 3 (as on line 1)"),
        ("1,2,3,4", "line 4: found 4 columns, expected 3"),
        ("1,,3", "line 4: column 'a' is empty"),
        ("1,abc,3", "line 4, column 'a': 'abc' is not a number (a text column is hashed "
                    "with --categorical"),
        ("yes,1,3", "line 4: label 'yes' is not a number (the first row's label is a number, "
                    "so the labels are read as numbers; a label column holds numbers or text"),
        ("1,nan,3", "line 4: column 'a' is nan, not a finite number"),
        ('1,"1,234.5",3', "line 4, column 'a': '1,234.5' holds the delimiter ',' inside "
                          "quotes: a number with thousands separators?"),
    ],
)
def test_csv_errors_name_file_and_line(tmp_path, bad, match):
    src = tmp_path / "bad.csv"
    src.write_text("y,a,b\n1,0.5,2\n-1,1,1\n" + bad + "\n1,1,1\n")
    with pytest.raises(DataFormatError, match=r"bad\.csv, " + _re(match)):
        convert(src, tmp_path / "o.zarr")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_csv_without_a_header_names_columns_by_position(tmp_path):
    src = tmp_path / "bad.csv"
    src.write_text("1,0.5,2\n-1,1,1\n1,,3\n")
    with pytest.raises(DataFormatError, match=r"bad\.csv, line 3: column 1 is empty"):
        convert(src, tmp_path / "o.zarr")


@pytest.mark.parametrize("first", ["1,0.5,", "1,,2"])
def test_a_csv_without_a_header_whose_first_row_misses_a_value_keeps_that_row(tmp_path, first):
    """An empty field is a missing value on line 1 as on every other: the first row is not
    taken for a header (which lost the row and named the columns by its values)."""
    src = tmp_path / "t.csv"
    src.write_text(first + "\n-1,1,1\n1,0.25,3\n")
    with pytest.raises(DataFormatError, match=r"t\.csv, line 1: column \d is empty"):
        convert(src, tmp_path / "o.zarr")
    ds = convert(src, tmp_path / "o.zarr", fill_missing=0)
    X, y, _ = collect(ds)
    assert ds.n_samples == 3
    np.testing.assert_array_equal(y, [1, -1, 1])
    expected = [float(v) if v else 0.0 for v in first.split(",")[1:]]
    np.testing.assert_array_equal(X, np.array([expected, [1, 1], [0.25, 3]], np.float32))


@pytest.mark.parametrize("labels, categorical", [(["1", "-1"], []), (["yes", "no"], []),
                                                  (["yes", "no"], ["city"])])
def test_files_joined_with_their_headers_are_named_as_such(tmp_path, labels, categorical):
    """``cat a.csv b.csv > all.csv`` repeats the header inside the file: the error was about
    its names as values ("label 'label' is not a number", "'income' is not a number")."""
    part = "label,income,city\n" + "".join(f"{lab},{i}.5,oslo\n" for i, lab in enumerate(labels))
    src = tmp_path / "all.csv"
    src.write_text(part + part)
    drop = [] if categorical else ["city"]
    with pytest.raises(DataFormatError, match=r"all\.csv, line 4 repeats the header of line 1: "
                                              "files joined with their headers"):
        convert(src, tmp_path / "o.zarr", categorical=categorical, drop=drop)
    assert not (tmp_path / "o.zarr").exists()


def test_a_header_among_rows_of_text_only_is_not_a_class(tmp_path):
    """Joined files whose features are all hashed text: nothing in the repeated header fails
    to parse, and it was a row whose label, 'churn', became a third class."""
    part = "churn,city\nyes,oslo\nno,rome\n"
    (tmp_path / "all.csv").write_text(part + part)
    with pytest.raises(DataFormatError, match=r"all\.csv, line 4, column 'churn': the label "
                                              r"'churn' is the column's own name: a header "
                                              r"line among the rows"):
        convert(tmp_path / "all.csv", tmp_path / "o.zarr", label_column="churn",
                categorical=["city"])
    assert not (tmp_path / "o.zarr").exists()


@pytest.mark.parametrize("categorical", [[], ["city"]])
def test_a_true_false_column_as_pandas_writes_it_reads_as_one_and_zero(tmp_path, categorical):
    """``df.to_csv`` writes a bool column as True/False: it was "'False' is not a number",
    where the same column of a DataFrame trains as 1/0. Both CSV readers (the plain one, and
    pyarrow's where a column is hashed) read it so; a word that is not a truth value is still
    refused."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"y": [1, -1, 1, -1], "vip": [False, True, True, False],
                          "x": [0.5, 1.0, 2.0, 3.0], "city": ["oslo", "rome", "oslo", "lima"]})
    src = tmp_path / "t.csv"
    frame.to_csv(src, index=False)
    text = src.read_text()
    assert "False" in text and "True" in text
    src.write_text(text.replace("True\n", "TRUE\n", 1))  # (spelt in capitals on a line)
    drop = [] if categorical else ["city"]
    ds = convert(src, tmp_path / "o.zarr", categorical=categorical, drop=drop)
    X, y, _ = collect(ds)
    X = X.toarray() if sp.issparse(X) else X
    np.testing.assert_array_equal(y, frame.y)
    np.testing.assert_array_equal(X[:, :2], frame[["vip", "x"]].to_numpy(dtype=np.float32))
    src.write_text(src.read_text().replace("False", "maybe", 1))
    with pytest.raises(DataFormatError, match="line 2.*'maybe'"):
        convert(src, tmp_path / "p.zarr", categorical=categorical, drop=drop)


@pytest.mark.parametrize("bad, match", [
    ("yes,1,b", "column 'y': 'yes' is not a number (the first row's label is a number"),
    ("1,old,b", "column 'a': 'old' is not a number (a text column is hashed with --categorical"),
])
def test_csv_with_categorical_columns_names_the_column_of_text_in_numbers(tmp_path, bad, match):
    """pyarrow's reader says "In CSV column #2: CSV conversion error to double"; the error
    names the column and what to do, and nothing is left behind."""
    src = tmp_path / "bad.csv"
    src.write_text("y,a,city\n1,0.5,a\n0,1,b\n" + bad + "\n")
    with pytest.raises(DataFormatError, match=r"bad\.csv, line 4, " + _re(match)):
        convert(src, tmp_path / "o.zarr", categorical=["city"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_csv_shuffle(tmp_path, rng):
    X = rng.integers(0, 100, size=(500, 3)).astype(float)
    y = np.arange(500.0) % 2
    src = tmp_path / "t.csv"
    np.savetxt(src, np.column_stack([y, X]), delimiter=",", header="y,a,b,c", comments="")
    ds = convert(src, tmp_path / "o.zarr", shuffle=True, seed=3, chunk_rows=50, dtype="float64")
    Xr, yr, _ = collect(ds)
    assert ds.attrs["shuffled"] and not np.array_equal(yr, y)
    order = np.lexsort(np.column_stack([yr, Xr]).T[::-1])
    ref = np.lexsort(np.column_stack([y, X]).T[::-1])
    np.testing.assert_array_equal(np.column_stack([yr, Xr])[order], np.column_stack([y, X])[ref])
    with pytest.raises(ValueError, match="labels= is for .npy/.npz inputs"):
        convert(src, tmp_path / "p.zarr", labels=y)


def test_csv_label_column_checks(tmp_path):
    src = tmp_path / "c.csv"
    src.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="--label-column 'z' is not a column name"):
        convert(src, tmp_path / "o.zarr", label_column="z")
    with pytest.raises(ValueError, match="--label-column 5 is out of range for 2 columns"):
        convert(src, tmp_path / "o.zarr", label_column=5)


# ---- NumPy -------------------------------------------------------------------------------


def test_npy_with_labels_file(tmp_path, dense_problem):
    X, y = dense_problem
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    ds = convert(tmp_path / "X.npy", tmp_path / "o.zarr", labels=tmp_path / "y.npy",
                 chunk_rows=64)
    Xr, yr, _ = collect(ds)
    np.testing.assert_array_equal(Xr, X.astype(np.float32))
    np.testing.assert_array_equal(yr, y)
    assert ds.attrs["provenance"]["source"] == [str(tmp_path / "X.npy"), str(tmp_path / "y.npy")]


def test_npy_errors(tmp_path, dense_problem):
    X, y = dense_problem
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "short.npy", y[:-1])
    with pytest.raises(DataFormatError, match=r"X\.npy has 203 rows but .*short\.npy has shape"):
        convert(tmp_path / "X.npy", tmp_path / "o.zarr", labels=tmp_path / "short.npy")
    with pytest.raises(DataFormatError, match="holds no labels; pass labels="):
        convert(tmp_path / "X.npy", tmp_path / "o.zarr", labeled=True)  # without: unlabeled
    Xbad = X.copy()
    Xbad[150, 2] = np.inf
    np.save(tmp_path / "Xbad.npy", Xbad)
    with pytest.raises(DataFormatError,
                       match=r"Xbad\.npy, row 150: X has the non-finite value inf"):
        convert(tmp_path / "Xbad.npy", tmp_path / "o.zarr", labels=y)
    np.save(tmp_path / "ystr.npy", np.array(["a"] * 203))
    with pytest.raises(DataFormatError, match=r"ystr\.npy, row 0: label .* is not a number"):
        convert(tmp_path / "X.npy", tmp_path / "o.zarr", labels=tmp_path / "ystr.npy")
    assert not (tmp_path / "o.zarr").exists()


def test_npz_dense_with_weights(tmp_path, dense_problem):
    X, y = dense_problem
    sw = np.arange(203.0)
    np.savez_compressed(tmp_path / "d.npz", X=X, y=y, sample_weight=sw)
    ds = convert(tmp_path / "d.npz", tmp_path / "o.zarr", dtype="float64", chunk_rows=50)
    Xr, yr, swr = collect(ds)
    np.testing.assert_array_equal(Xr, X)
    np.testing.assert_array_equal(yr, y)
    np.testing.assert_array_equal(swr, sw)


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_csr_mapped_or_streamed(tmp_path, csr_problem, compressed):
    """An uncompressed member of a local .npz is memory-mapped, a compressed one streamed
    through zipfile: the same dataset either way, and from a file:// URL."""
    X, y = csr_problem
    sp.save_npz(tmp_path / "X.npz", X, compressed=compressed)
    np.savez(tmp_path / "d.npz", X=X.toarray(), y=y, sample_weight=np.arange(X.shape[0] * 1.0))
    ds = convert(f"file://{tmp_path / 'X.npz'}", tmp_path / "o.zarr", labels=y, chunk_rows=64,
                 dtype="float64")
    Xr, yr, _ = collect(ds)
    assert (Xr != X).nnz == 0
    np.testing.assert_array_equal(yr, y)
    Xd, yd, swd = collect(convert(tmp_path / "d.npz", tmp_path / "d.zarr", dtype="float64"))
    np.testing.assert_array_equal(Xd, X.toarray())
    np.testing.assert_array_equal(swd, np.arange(X.shape[0] * 1.0))


def test_npz_truncated_is_refused(tmp_path, csr_problem):
    """A cut file, and a stored member whose .npy header promises more values than it holds,
    are refused with the file's name; nothing is left at the destination."""
    import io
    import zipfile

    X, y = csr_problem
    sp.save_npz(tmp_path / "X.npz", X, compressed=False)
    raw = (tmp_path / "X.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DataFormatError, match=r"cut\.npz: not a \.npz file"):
        convert(tmp_path / "cut.npz", tmp_path / "o.zarr", labels=y)
    with zipfile.ZipFile(tmp_path / "X.npz") as z, \
            zipfile.ZipFile(tmp_path / "short.npz", "w") as out:
        for info in z.infolist():
            member = z.read(info.filename)
            if info.filename == "data.npy":
                buf = io.BytesIO()
                np.lib.format.write_array_header_1_0(
                    buf, {"descr": "<f8", "fortran_order": False, "shape": (2 * X.nnz,)})
                member = buf.getvalue() + X.data.astype("<f8").tobytes()
            out.writestr(info, member)
    with pytest.raises(DataFormatError, match=r"short\.npz\[data\]: the file is truncated"):
        convert(tmp_path / "short.npz", tmp_path / "o.zarr", labels=y)
    assert not (tmp_path / "o.zarr").exists()


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_npz_sparse_with_labels(tmp_path, csr_problem, fmt):
    X, y = csr_problem
    M = X.asformat(fmt)
    sp.save_npz(tmp_path / "X.npz", M)
    np.save(tmp_path / "y.npy", y)
    ds = convert(tmp_path / "X.npz", tmp_path / "o.zarr", labels=tmp_path / "y.npy",
                 chunk_rows=64, dtype="float64")
    assert ds.layout == "sparse"
    Xr, yr, _ = collect(ds)
    assert (Xr != X).nnz == 0
    np.testing.assert_array_equal(yr, y)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_truncated_compressed_file_is_named(tmp_path, suffix):
    # a9a-like rows, cut in the middle of the compressed stream (an interrupted download)
    rows = "".join(f"{'+1' if i % 3 else '-1'} 1:{i % 7} {2 + i % 5}:1 9:0.25\n"
                   for i in range(20_000)).encode()
    whole = _compress(tmp_path / f"whole{suffix}", rows).read_bytes()
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(whole[:len(whole) // 2])
    with pytest.raises(DataFormatError, match=rf"cut\{suffix}: the \{suffix} data ends early"):
        convert(cut, tmp_path / "d.zarr")
    assert not (tmp_path / "d.zarr").exists()


def test_text_named_gz_is_named(tmp_path):
    fake = tmp_path / "plain.gz"
    fake.write_text(GOOD)
    with pytest.raises(DataFormatError, match=r"plain\.gz: not readable as \.gz data"):
        convert(fake, tmp_path / "d.zarr")


def test_criteos_click_logs_read_as_svmlight_point_to_their_format(tmp_path):
    """Its .txt name reads as svmlight; the hint was --format csv, which fails on its hex
    columns."""
    rng = np.random.default_rng(0)
    lines = ["\t".join([str(i % 2), *[str(v) for v in rng.integers(0, 9, 12)], "",
                         *[f"{v:08x}" for v in rng.integers(0, 2**32, 26)]])
             for i in range(3)]
    (tmp_path / "day_0.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFormatError, match=r"day_0\.txt, line 1: token '\d' is not of the "
                                              r"form index:value \(Criteo's click logs, "
                                              r"tab-separated: pass --format criteo"):
        convert(tmp_path / "day_0.txt", tmp_path / "d.zarr")
    (tmp_path / "t.txt").write_text("1 2 3\n")  # a table of numbers: the CSV reader's
    with pytest.raises(DataFormatError, match=r"a table of numbers\? pass --format csv"):
        convert(tmp_path / "t.txt", tmp_path / "t.zarr")


def test_truncated_criteo_file_is_named(tmp_path):
    from ..conftest import shared_file

    whole = shared_file("criteo_sample/criteo_kaggle_head8000_train.txt.xz").read_bytes()
    cut = tmp_path / "day.txt.xz"
    cut.write_bytes(whole[:len(whole) // 3])
    with pytest.raises(DataFormatError, match=r"day\.txt\.xz: the \.xz data ends early"):
        convert(cut, tmp_path / "d.zarr", format="criteo")
