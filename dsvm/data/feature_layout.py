"""Feature layouts: sparse features renumbered by how often they occur, so that the hot ones sit
together at the front of the weight vector.

Why: word counts and click logs are Zipf-distributed: a few thousand features carry most of the
nonzeros. With hashing or arbitrary ids those hot features are scattered one per cache line over
a 16-64 MB weight vector, and each gather of a sparse pass's dot product and update misses the
cache. Renumbered by descending frequency, the hot weights share a few hundred KB that stay in
L2 (benchmarks/bench_layout.py measures what that buys).

Choices:

- The map is a permutation fixed when a dataset is written (``feature_order="frequency"``):
  the writer counts the nonzeros of each column as the chunks pass through it (no extra read of
  the input), then rewrites the stored CSR indices once into the new ids, rows kept sorted
  (:class:`dsvm.data.writer.DatasetWriter`). Counting at fit time instead would need a pass
  before the first epoch and a renumbering of every chunk at every read.
- ``new_id = rank by descending count``, ties by the user's id (a stable sort): the same data
  always gets the same map.
- The store keeps ``order`` (the user id of each stored feature) and the counts in stored
  order (group ``feature_layout``; attribute ``feature_order``). A dataset's column statistics
  (``feature_stats``) are kept in stored ids, as its rows are.
- Only sparse data is renumbered: a dense pass reads every column of a row in order anyway.
- Everything a user sees stays in the user's ids: a fit trains in stored ids and un-permutes
  its published model (:mod:`dsvm.training.layout`); rows in another layout (raw arrays, a
  validation set, the kernel maps' rows) are seen through :class:`Relabel`.

NumPy and SciPy only; zarr is read and written by dsvm.data.dataset and dsvm.data.writer.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, DenseBlock

# ``feature_order=``: "given" keeps the ids as they come; "frequency" renumbers by count
FEATURE_ORDERS = ("given", "frequency")
# where a dataset keeps its layout (datasets written without one have none)
LAYOUT_GROUP = "feature_layout"


def check_feature_order(value: Any, name: str = "feature_order") -> str:
    """``value`` if it is one of :data:`FEATURE_ORDERS`, else a ``ValueError`` naming ``name``
    (the CLI passes its flag's name)."""
    if not isinstance(value, str) or value not in FEATURE_ORDERS:
        raise ValueError(f"{name} must be one of {', '.join(repr(o) for o in FEATURE_ORDERS)}; "
                         f"got {value!r}")
    return value


@dataclass(frozen=True, eq=False)
class FeatureLayout:
    """A renumbering of ``n_features`` features: ``order[stored_id]`` is the user's id.

    ``counts``: the nonzeros of each stored feature (descending for a frequency layout), or
    None where not kept.
    """

    order: np.ndarray
    counts: np.ndarray | None = None
    kind: str = "frequency"

    @property
    def n_features(self) -> int:
        return int(self.order.shape[0])

    @functools.cached_property
    def rank(self) -> np.ndarray:
        """``rank[user_id]``: the stored id of each user feature (the inverse of ``order``)."""
        rank = np.empty_like(self.order)
        rank[self.order] = np.arange(self.order.shape[0], dtype=self.order.dtype)
        return rank

    def to_stored(self, coef: np.ndarray) -> np.ndarray:
        """Weights over user ids (last axis) as weights over stored ids (a copy)."""
        return np.ascontiguousarray(np.asarray(coef)[..., self.order])

    def to_user(self, coef: np.ndarray) -> np.ndarray:
        """Weights over stored ids (last axis) as weights over user ids (a copy)."""
        return np.ascontiguousarray(np.asarray(coef)[..., self.rank])

    def same_as(self, other: FeatureLayout | None) -> bool:
        return other is not None and (other is self or np.array_equal(other.order, self.order))

    def hot_share(self, top: int) -> float:
        """The share of all nonzeros in the ``top`` most frequent features (NaN: no counts)."""
        if self.counts is None:
            return float("nan")
        total = int(self.counts.sum())
        return float(np.sort(self.counts)[::-1][:top].sum() / total) if total else 0.0

    def describe(self) -> str:
        share = self.hot_share(max(1, self.n_features // 100))
        hot = "" if np.isnan(share) else f"; the top 1% of features hold {share:.0%} of nonzeros"
        return f"{self.kind} (features renumbered by descending count{hot})"


def count_features(indices: np.ndarray, n_features: int) -> np.ndarray:
    """Nonzeros per feature of a chunk's CSR ``indices`` (int64, length ``n_features``)."""
    return np.bincount(np.asarray(indices), minlength=n_features).astype(np.int64)


def frequency_layout(counts: np.ndarray) -> FeatureLayout:
    """The layout that puts the most frequent features first, ties by id (a stable sort)."""
    counts = np.asarray(counts, dtype=np.int64)
    order = np.argsort(-counts, kind="stable").astype(np.int32)
    return FeatureLayout(order=order, counts=counts[order])


def renumbered(block: CSRBlock, table: np.ndarray) -> CSRBlock:
    """``block`` with every column ``j`` renamed ``table[j]``, each row's columns re-sorted
    (the format keeps them sorted; scipy sorts in C, in place on the copies)."""
    indices = table[block.indices]
    data = np.array(block.data, copy=True)
    m = sp.csr_matrix((data, indices, block.indptr),
                      shape=(block.n_samples, block.n_features), copy=False)
    m.has_sorted_indices = False
    m.sort_indices()
    return CSRBlock(indptr=block.indptr, indices=m.indices.astype(np.int32, copy=False),
                    data=m.data, y=block.y, n_features=block.n_features,
                    sample_weight=block.sample_weight)


@dataclass(frozen=True, eq=False)
class Relabel:
    """Rows stored in layout ``src`` seen in layout ``dst`` (either None: the user's ids): a
    :class:`~dsvm.data.sources.ChunkMap`. Costs a gather and a per-row sort of each chunk
    as it is read; a fit uses it only where rows and model are in different layouts."""

    table: np.ndarray  # table[src_id] = dst_id

    @property
    def n_output_features(self) -> int:
        return int(self.table.shape[0])

    @property
    def named_in_descriptions(self) -> bool:
        return False  # the rows are named by their origin

    def transform_block(self, block: Block) -> Block:
        if isinstance(block, DenseBlock):  # (a dense store is never renumbered)
            return DenseBlock(X=np.asarray(block.X)[:, np.argsort(self.table)], y=block.y,
                              sample_weight=block.sample_weight)
        return renumbered(block, self.table)

    def describe(self) -> str:
        return "feature renumbering"


def relabel(src: FeatureLayout | None, dst: FeatureLayout | None) -> Relabel | None:
    """The map from rows in layout ``src`` to layout ``dst`` (None where they are the same)."""
    if src is None and dst is None or src is not None and src.same_as(dst):
        return None
    n = (src or dst).n_features  # type: ignore[union-attr]
    user_of = np.arange(n, dtype=np.int32) if src is None else src.order
    table = user_of if dst is None else dst.rank[user_of]
    return Relabel(np.ascontiguousarray(table, dtype=np.int32))
