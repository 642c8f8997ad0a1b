"""Raw rows converted the way a model's training data was: for ``dsvm predict`` on click logs.

A dataset converted with hashed categorical columns records the spec (attribute ``hashing``:
the numeric columns, the hashed columns and the bits) and its format (``provenance``); a model
trained on it keeps both (``hashing_``). New rows in the same raw layout (a Criteo file, a
CSV/TSV with a header, Parquet) are converted here with that spec, so that every token lands
on the feature it was trained on. The label column may be there or not: Criteo's test files
leave it out, a CSV/TSV may carry one column besides the model's, Parquet's extra columns are
not read.
"""

from __future__ import annotations

import os
from typing import Any

from dsvm.data.convert import convert
from dsvm.data.csv_source import _first_line, _sniff_delimiter, _split_fields
from dsvm.data.dataset import Dataset
from dsvm.data.parquet_source import column_names, is_parquet_path
from dsvm.exceptions import DataFormatError


def convert_like(src: str | os.PathLike[str], dst: str | os.PathLike[str],
                 hashing: dict[str, Any], *, format: str | None = None,
                 fill_missing: float | None = None, delimiter: str | None = None,
                 storage_options: dict | None = None) -> Dataset:
    """Convert ``src`` to a dataset at ``dst`` with the hashing spec ``hashing`` (a model's
    ``hashing_``, or a dataset's ``attrs["hashing"]`` with its format under ``"format"``).

    ``format``: the raw layout (default: :func:`_raw_format`).
    ``fill_missing``: the value of a missing numeric field (Criteo: 0 by default), as given to
    the training data's conversion.
    """
    fmt = format or _raw_format(src, hashing.get("format"), storage_options)
    common: dict[str, Any] = dict(categorical=list(hashing["categorical"]),
                                  hash_bits=int(hashing["hash_bits"]), fill_missing=fill_missing,
                                  storage_options=storage_options)
    if fmt != "parquet":  # Criteo, CSV/TSV; a spec without one: numeric columns as they were
        common["numeric_transform"] = hashing.get("numeric_transform", "none")
        # columns left out at training are left out again (a CSV's, where its header has them)
        common["drop"] = list(hashing.get("dropped") or []) or None
    if fmt == "criteo":  # the label is there or not by the number of fields
        return convert(src, dst, format="criteo", **common)
    if fmt == "parquet":  # named columns: the model's, whatever else the files hold
        if hashing.get("numeric_transform", "none") != "none":
            raise DataFormatError(
                f"{os.fspath(src)}: the model's numeric columns were stored transformed "
                f"({hashing['numeric_transform']}), which Parquet conversion does not do; "
                "give the rows as the training data was given (a CSV/TSV or Criteo file).")
        label = _label_among(column_names(src, storage_options),
                             [*hashing["numeric"], *hashing["categorical"]])
        return convert(src, dst, format="parquet", feature_columns=list(hashing["numeric"]),
                       label_column=label, labeled=label is not None, **common)
    names = _header(src, delimiter, storage_options)
    label = _extra_column(src, names, hashing)
    _check_order(src, names, list(hashing["numeric"]))
    common["drop"] = [c for c in hashing.get("dropped", []) if c in names] or None
    return convert(src, dst, format="csv", label_column=label, labeled=label is not None,
                   delimiter=delimiter, **common)


def convert_columns(src: str | os.PathLike[str], dst: str | os.PathLike[str],
                    columns: list[str], *, format: str | None = None,
                    fill_missing: float | None = None, delimiter: str | None = None,
                    storage_options: dict | None = None) -> Dataset:
    """Convert raw rows for a model fitted on a DataFrame of numbers (``feature_names_in_``:
    ``columns``, no hashing): its columns taken by name from Parquet (whatever else the files
    hold; the one other column, if just one, is the label), or from a CSV/TSV whose header
    has them in the model's order and at most one other column (the label)."""
    fmt = format or ("parquet" if is_parquet_path(src, storage_options) else "csv")
    common: dict[str, Any] = dict(fill_missing=fill_missing, storage_options=storage_options)
    if fmt == "parquet":
        label = _label_among(column_names(src, storage_options), columns)
        return convert(src, dst, format="parquet", feature_columns=columns, label_column=label,
                       labeled=label is not None, **common)
    if fmt != "csv":
        raise DataFormatError(f"{os.fspath(src)}: the model was trained on named columns of "
                              f"numbers {columns}; give them as Parquet or a CSV/TSV with a "
                              f"header, not {fmt} rows.")
    names = _header(src, delimiter, storage_options)
    label = _extra_column(src, names, {"numeric": columns, "categorical": []})
    _check_order(src, names, columns)
    return convert(src, dst, format="csv", label_column=label, labeled=label is not None,
                   delimiter=delimiter, **common)


def _label_among(names: list[str], used: list[str]) -> str | None:
    """The label of Parquet rows: the one column the model does not use (None when there are
    none or several: its rows are then predicted, not evaluated)."""
    extra = [c for c in names if c not in used]
    return extra[0] if len(extra) == 1 else None


def _check_order(src: str | os.PathLike[str], names: list[str], columns: list[str]) -> None:
    """A CSV/TSV's columns are read by position: the model's numeric ones must come in the
    order it was trained on (otherwise every weight would meet another column's values)."""
    given = [c for c in names if c in set(columns)]
    if given != columns:
        raise DataFormatError(f"{os.fspath(src)}: its columns {given} are not in the order the "
                              f"model was trained on {columns}; write them in that order.")


def _raw_format(src: str | os.PathLike[str], trained: str | None,
                storage_options: dict | None) -> str | None:
    """The layout of raw rows ``src``: Parquet when its name says so, else the training data's
    (``trained``: a Criteo file need not say it is one), except that a model trained on Parquet
    reads other files as CSV/TSV with a header. A model trained on a CSV is used on Parquet
    files too, whose bytes the CSV reader cannot split (#25)."""
    if is_parquet_path(src, storage_options):
        return "parquet"
    return None if trained == "parquet" else trained


def _header(src: str | os.PathLike[str], delimiter: str | None,
            storage_options: dict | None) -> list[str]:
    line, number = _first_line(src, storage_options)
    text = line.decode("utf-8", "replace").rstrip("\r")
    return _split_fields(text, delimiter or _sniff_delimiter(os.fspath(src), text),
                         f"{os.fspath(src)}, line {number}")


def _extra_column(src: str | os.PathLike[str], names: list[str],
                  hashing: dict[str, Any]) -> str | None:
    """The one header column of a CSV/TSV that is neither numeric nor hashed for the model nor
    dropped at its conversion: its label (None when there is none)."""
    known = set(hashing["numeric"]) | set(hashing["categorical"]) | set(hashing.get("dropped", []))
    missing = [c for c in [*hashing["numeric"], *hashing["categorical"]] if c not in names]
    extra = [c for c in names if c not in known]
    if missing or len(extra) > 1:
        raise DataFormatError(
            f"{os.fspath(src)}: the header {names} does not match the model's columns "
            f"(numeric {hashing['numeric']}, hashed {hashing['categorical']})"
            + (f"; missing {missing}" if missing else "")
            + (f"; more than one other column: {extra}" if len(extra) > 1 else ""))
    return extra[0] if extra else None
