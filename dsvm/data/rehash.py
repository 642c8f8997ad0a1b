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
from dsvm.data.csv_source import (
    _first_lines,
    _split_fields,
    ends_with_delimiters,
    sniff_delimiter,
)
from dsvm.data.dataset import Dataset
from dsvm.data.label_column import named_label
from dsvm.data.location import first_file
from dsvm.data.parquet_source import column_names, is_parquet_path
from dsvm.data.text import is_number
from dsvm.exceptions import DataFormatError


def convert_like(src: str | os.PathLike[str], dst: str | os.PathLike[str],
                 hashing: dict[str, Any], *, format: str | None = None,
                 fill_missing: float | None = None, delimiter: str | None = None,
                 storage_options: dict | None = None, label_column: str | None = None,
                 trained_label: str | None = None) -> Dataset:
    """Convert ``src`` to a dataset at ``dst`` with the hashing spec ``hashing`` (a model's
    ``hashing_``, or a dataset's ``attrs["hashing"]`` with its format under ``"format"``).

    ``format``: the raw layout (default: :func:`_raw_format`).
    ``fill_missing``: the value of a missing numeric field (Criteo: 0 by default), as given to
    the training data's conversion.
    ``label_column`` (CSV/TSV, Parquet): the label's name; default: the one column besides
    the model's, else the model's own (``trained_label``), else the one of those named like a
    label (:func:`_label_of`). The other columns that are not the model's are not read.
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
        used = [*hashing["numeric"], *hashing["categorical"]]
        label, _ = _label_of(src, column_names(src, storage_options), used, label_column,
                             hashing.get("dropped"), trained_label)
        return convert(src, dst, format="parquet", feature_columns=list(hashing["numeric"]),
                       label_column=label, labeled=label is not None, **common)
    names = _by_position(_header(src, delimiter, storage_options), list(hashing["numeric"]))
    used = [*hashing["numeric"], *hashing["categorical"]]
    label, others = _label_of(src, names, used, label_column, hashing.get("dropped"),
                              trained_label)
    _check_order(src, names, list(hashing["numeric"]))
    common["drop"] = others or None
    return convert(src, dst, format="csv", label_column=label, labeled=label is not None,
                   delimiter=delimiter, **common)


def convert_columns(src: str | os.PathLike[str], dst: str | os.PathLike[str],
                    columns: list[str], *, format: str | None = None,
                    fill_missing: float | None = None, delimiter: str | None = None,
                    storage_options: dict | None = None, label_column: str | None = None,
                    trained_label: str | None = None) -> Dataset:
    """Convert raw rows for a model fitted on named columns of numbers (``feature_names_in_``:
    ``columns``, no hashing; a DataFrame's, or a CSV/Parquet header's at conversion): its
    columns taken by name from Parquet, or from a CSV/TSV whose header has them in the
    model's order or another. Whatever else the file holds is not read, but for the label
    (``label_column``, by default as :func:`_label_of` finds it, the model's own label column
    ``trained_label`` first)."""
    fmt = format or ("parquet" if is_parquet_path(src, storage_options) else "csv")
    common: dict[str, Any] = dict(fill_missing=fill_missing, storage_options=storage_options)
    if fmt == "parquet":
        label, _ = _label_of(src, column_names(src, storage_options), columns, label_column,
                             trained=trained_label)
        return convert(src, dst, format="parquet", feature_columns=columns, label_column=label,
                       labeled=label is not None, **common)
    if fmt != "csv":
        raise DataFormatError(f"{os.fspath(src)}: the model was trained on named columns of "
                              f"numbers {columns}; give them as Parquet or a CSV/TSV with a "
                              f"header, not {fmt} rows.")
    names = _header(src, delimiter, storage_options)
    label, others = _label_of(src, names, columns, label_column, trained=trained_label)
    # (columns in another order are read by name: dsvm.data.model_columns.in_model_columns)
    return convert(src, dst, format="csv", label_column=label, labeled=label is not None,
                   delimiter=delimiter, drop=others or None, **common)


def _by_position(first: list[str], numeric: list[str]) -> list[str]:
    """The names of a CSV's columns: its first line, or their positions ("0", "1", ...) when
    the model named its numeric columns so (its training file had no header) and the first
    line holds numbers there, a row like every other (it was taken for a header: "the
    model's columns ['0', '1', '2'] are not in its header ['1374.57', '1958', '3']")."""
    positions = [int(c) for c in numeric if str(c).isdigit()]
    if not numeric or len(positions) != len(numeric) or max(positions) >= len(first) \
            or not all(is_number(first[i]) for i in positions):
        return first
    return [str(i) for i in range(len(first))]


def _label_of(src: str | os.PathLike[str], names: list[str], used: list[str],
              label_column: str | None, dropped: list[str] | None = None,
              trained: str | None = None) -> tuple[str | None, list[str]]:
    """(the label column, the other columns not read) of rows whose header is ``names``, for
    a model that reads the columns ``used`` (and left ``dropped`` out at its conversion). The
    label is ``label_column`` when given, else the model's own (``trained``) when the rows
    have it, else the one other column, else the one of those named like a label
    (dsvm.data.label_column); None when there is none (rows to predict, not evaluate)."""
    missing = [c for c in used if c not in names]
    if missing:
        if len(missing) == len(used) and any(is_number(c) for c in names):  # a row first
            raise DataFormatError(
                f"{os.fspath(src)} has no header (its first line is data: {names[:8]}), but the "
                f"model reads its columns by name ({used[:8]}): put the training data's header "
                "line first")
        raise DataFormatError(f"{os.fspath(src)}: the model's columns {missing[:8]} are not in "
                              f"its header {names[:20]}")
    extra = [c for c in names if c not in set(used)]
    if label_column is not None and label_column not in extra:
        raise DataFormatError(f"{os.fspath(src)}: --label-column {label_column!r} is not a "
                              f"column besides the model's; those are {extra}")
    # (an unnamed column is no label: the index DataFrame.to_csv writes first)
    candidates = [c for c in extra if c not in set(dropped or ()) and c.strip()]
    if label_column is None and trained in candidates:
        label_column = trained
    label = label_column or (candidates[0] if len(candidates) == 1
                             else named_label(candidates))
    return label, [c for c in extra if c != label]


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
    lines = _first_lines(first_file(src, storage_options), storage_options, 2)
    line, number = lines[0] if lines else (b"", 0)
    text = line.decode("utf-8", "replace").rstrip("\r")
    delimiter = delimiter or sniff_delimiter(os.fspath(src), lines)
    names = _split_fields(text, delimiter, f"{os.fspath(src)}, line {number}")
    return names[:-1] if ends_with_delimiters(lines, delimiter) else names  # (not a column)
