"""CSV/TSV in several files, read one after another as one input: a folder (Spark's
``df.write.csv(path, header=True)`` writes ``part-*.csv`` files and a ``_SUCCESS`` marker;
:func:`dsvm.data.location.files_of` leaves the markers out) or a glob (``logs/2026-11-*.csv``).

Each file is read by its own source (:class:`dsvm.data.csv_source.CSVSource`, or
:class:`dsvm.data.table_csv_source.TableCSVSource` for hashed columns and missing values), so
an error names the file and its line. The files must agree on their columns (each repeats the
header, as Spark writes them); text labels are coded once for all of them, and the means of
``fill_missing="mean"`` are those of all the files' values, in one pass before the rows'.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from dsvm.data.fill import column_means
from dsvm.exceptions import DataFormatError


class CSVFiles:
    """The rows of ``sources`` (one per file, opened with the same options) in file order;
    what describes the input (features, label column, hashing) is the first file's."""

    kind = "csv"

    def __init__(self, sources: list[Any], *, means: bool = False) -> None:
        """``means``: fill the missing values with each column's mean over all the files
        (the sources opened without a fill, as the means are not known yet)."""
        self.sources = sources
        self.first = first = sources[0]
        for source in sources[1:]:
            _check_alike(first, source)
            if first.label_names is not None:  # one coding of the text labels for all files
                source.label_names = first.label_names
                if hasattr(source, "converter"):
                    source.converter.names = first.label_names
        if means:
            values = column_means(first.converter.numeric, itertools.chain.from_iterable(
                s.present_values() for s in sources))
            for source in sources:
                source.fill_with(values)
        self.n_samples: int | None = None

    def __getattr__(self, attr: str) -> Any:  # n_features, label_name, spec, sparse...
        if attr == "first":  # (not set yet: no recursion)
            raise AttributeError(attr)
        return getattr(self.first, attr)

    def count_rows(self) -> int:
        self.n_samples = sum(s.count_rows() for s in self.sources)
        return self.n_samples

    def blocks(self, n_features: int | None = None) -> Iterator[Any]:
        for source in self.sources:
            yield from source.blocks(n_features)


def _columns(source: Any) -> list[str] | None:
    """A source's header (None: a file without one)."""
    if hasattr(source, "names"):  # (TableCSVSource: positions as names without a header)
        return list(source.names) if source.has_header else None
    return None if source.columns is None else list(source.columns)


def _check_alike(first: Any, other: Any) -> None:
    """``other`` has ``first``'s columns, and labels of the same kind (text or numbers)."""
    mine, theirs = _columns(first), _columns(other)
    if (mine is None) != (theirs is None):
        which, has = (other, first) if theirs is None else (first, other)
        raise DataFormatError(f"{which.name} has no header where {has.name} has one; the "
                              "files of one input share their columns")
    if mine != theirs or first.n_features != other.n_features:
        diff = next((i for i, (a, b) in enumerate(zip(mine or [], theirs or [])) if a != b),
                    None)
        said = (f"column {diff}: {theirs[diff]!r} where {first.name} has {mine[diff]!r}"
                if diff is not None and mine and theirs
                else f"{other.n_features} feature columns, not {first.n_features}")
        raise DataFormatError(f"{other.name}: its columns differ from {first.name}'s ({said}); "
                              "the files of one input share their columns")
    if (first.label_names is None) != (other.label_names is None):
        kinds = ("numbers", "text") if first.label_names is None else ("text", "numbers")
        raise DataFormatError(f"{other.name}: its labels are {kinds[1]} where {first.name}'s "
                              f"are {kinds[0]}")
