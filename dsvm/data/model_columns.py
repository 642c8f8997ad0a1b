"""How a model's columns read a dataset whose own are numbered or ordered otherwise.

Two kinds of test data hold a model's features under other column numbers, with nothing in
doubt: a dataset converted from an svmlight test file whose rows stop short of the model's
last features (its width is its largest index), and a table exported with its named columns
in another order. Each is seen through a :class:`~dsvm.data.sources.ChunkMap` in the model's
columns, at every read (on the workers too); anything else is left for the checks of width and
names to refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dsvm.data.blocks import Block, CSRBlock
from dsvm.data.feature_layout import renumbered
from dsvm.data.sources import DatasetSource, MappedSource, Source
from dsvm.data.zarr_store import Dataset


@dataclass(frozen=True)
class ZeroColumns:
    """Rows seen over ``n_output_features`` columns, the ones beyond their own all zero (a
    chunk map, see :func:`as_wide_as`). CSR rows keep their arrays; dense ones are copied
    with the zero columns appended."""

    n_output_features: int

    @property
    def named_in_descriptions(self) -> bool:
        return False  # (the rows are the file's own)

    def transform_block(self, block: Block) -> Block:
        if isinstance(block, CSRBlock):
            return replace(block, n_features=self.n_output_features)
        X = np.zeros((block.n_samples, self.n_output_features), dtype=block.X.dtype)
        X[:, :block.n_features] = block.X
        return replace(block, X=X)

    def describe(self) -> str:
        return f"{self.n_output_features} columns"


def as_wide_as(source: Source, n_features: int) -> Source:
    """``source`` over a model's ``n_features`` columns where it is a dataset converted from
    svmlight/libsvm text whose rows reach fewer; any other source as it is.

    Such a file says no width: its dataset's is the largest index found, so a test file whose
    rows never use the last features is narrower than its training file (LIBSVM's a9a.t:
    122 features, a9a: 123), and the features it lacks are zeros, as the format says of every
    feature a row does not list (stored sparse or dense alike). Columns of any other data are
    not numbered so."""
    dataset = source.dataset
    if (dataset is None or source.n_features >= n_features or dataset.feature_order != "given"
            or (dataset.attrs.get("provenance") or {}).get("format") != "libsvm"):
        return source
    return MappedSource(source, ZeroColumns(n_features))


@dataclass(frozen=True, eq=False)
class ColumnOrder:
    """Rows seen with their columns in another order: column ``j`` is the stored column
    ``order[j]``, named ``names[j]`` (a chunk map, see :func:`in_model_columns`)."""

    order: np.ndarray
    names: tuple[str, ...]

    @property
    def n_output_features(self) -> int:
        return int(self.order.shape[0])

    @property
    def named_in_descriptions(self) -> bool:
        return False  # (the rows are the file's own)

    @property
    def feature_names(self) -> list[str]:
        return list(self.names)

    def transform_block(self, block: Block) -> Block:
        if isinstance(block, CSRBlock):
            new_ids = np.empty_like(self.order)
            new_ids[self.order] = np.arange(self.order.shape[0], dtype=self.order.dtype)
            return renumbered(block, new_ids)
        return replace(block, X=np.ascontiguousarray(block.X[:, self.order]))

    def describe(self) -> str:
        return "the model's column order"


def in_model_columns(source: Source, names: Any) -> Source:
    """``source`` with its named columns in the order of a model's (``names``) where they are
    the same columns in another order: a CSV's header names its columns, so a file written
    with them in another order (another query, another export) is read by name. Any other
    source as it is (a width or a name that differs is refused by the checks of those)."""
    got = source.feature_names
    dataset = source.dataset
    if (names is None or got is None or dataset is None or dataset.attrs.get("hashing")
            or len(got) != len(names) or list(got) == [str(n) for n in names]):
        return source
    position = {name: i for i, name in enumerate(got)}
    if len(position) != len(got) or set(position) != {str(n) for n in names}:
        return source
    order = np.array([position[str(n)] for n in names], dtype=np.int64)
    return MappedSource(source, ColumnOrder(order, tuple(str(n) for n in names)))


def width_for(dataset: Dataset, n_features: int) -> int:
    """The number of features ``dataset`` is read with by a model of ``n_features``
    (:func:`as_wide_as`), from its metadata."""
    return int(as_wide_as(DatasetSource(dataset), n_features).n_features)
