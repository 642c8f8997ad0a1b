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
- The features no row uses (count 0: most of a 2^22 hashing space on a sample) end up last,
  so that a fit from scratch keeps only the used prefix in its state (``width``, see
  :meth:`FeatureLayout.compact`): the per-epoch work over the whole state (averaging,
  copies, checks) shrinks with it. Its model is exactly the full one: a feature no row has
  keeps weight 0 under every solver and penalty, and is published as 0.
- Only sparse data is renumbered: a dense pass reads every column of a row in order anyway.
- Everything a user sees stays in the user's ids: a fit trains in stored ids and un-permutes
  its published model (:mod:`dsvm.training.layout`); rows in another layout (raw arrays, a
  validation set, the kernel maps' rows) are seen through :class:`Relabel`.

NumPy and SciPy only; zarr is read and written by dsvm.data.dataset and dsvm.data.writer.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.data.stats import FeatureStats

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
    None where not kept. ``width``: a model in this layout covers stored ids
    ``[0, width)`` only (the others are 0; None: all of them). ``used``: how many stored
    features some row has, where ``counts`` are not read (a store records it: its counts are
    twice its order's bytes, and a fit needs only this of them).
    """

    order: np.ndarray
    counts: np.ndarray | None = None
    kind: str = "frequency"
    width: int | None = None
    used: int | None = None

    @property
    def n_features(self) -> int:
        return int(self.order.shape[0])

    @property
    def n_used(self) -> int:
        """The stored features some row has: ``used`` where recorded, else those with a
        count (all of them where neither is kept)."""
        if self.used is not None:
            return int(self.used)
        return self.n_features if self.counts is None else int(np.count_nonzero(self.counts))

    @property
    def state_width(self) -> int:
        return self.n_features if self.width is None else int(self.width)

    def compact(self) -> FeatureLayout:
        """This layout for a model of the used features only (see the module's notes)."""
        return dataclasses.replace(self, width=self.n_used)

    @functools.cached_property
    def rank(self) -> np.ndarray:
        """``rank[user_id]``: the stored id of each user feature (the inverse of ``order``)."""
        rank = np.empty_like(self.order)
        rank[self.order] = np.arange(self.order.shape[0], dtype=self.order.dtype)
        return rank

    def to_stored(self, coef: np.ndarray) -> np.ndarray:
        """Weights over user ids (last axis) as weights over stored ids ``[0, width)``."""
        return np.ascontiguousarray(np.asarray(coef)[..., self.order[:self.state_width]])

    def to_user(self, coef: np.ndarray) -> np.ndarray:
        """Weights over stored ids ``[0, width)`` (last axis) as weights over user ids (the
        features beyond the width: 0)."""
        coef = np.asarray(coef)
        if self.width is None:
            return np.ascontiguousarray(coef[..., self.rank])
        out = np.zeros(coef.shape[:-1] + (self.n_features,), dtype=coef.dtype)
        out[..., self.order[:self.state_width]] = coef
        return out

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


def narrowed(block: CSRBlock, width: int) -> CSRBlock:
    """``block`` over columns ``[0, width)``: the same arrays where every column is below
    (a renumbered store's own rows for a model of its used features), else without the
    values beyond (their weights are 0)."""
    if block.indices.shape[0] == 0 or int(block.indices.max()) < width:
        return dataclasses.replace(block, n_features=width)
    keep = block.indices < width
    rows = np.repeat(np.arange(block.n_samples), np.diff(block.indptr))
    indptr = np.zeros(block.n_samples + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=block.n_samples), out=indptr[1:])
    return CSRBlock(indptr=indptr, indices=block.indices[keep], data=block.data[keep],
                    y=block.y, n_features=width, sample_weight=block.sample_weight)


@dataclass(frozen=True, eq=False)
class Relabel:
    """Rows stored in one layout seen in another's ids (:func:`relabel`), over its model's
    ``width`` columns: a :class:`~dsvm.data.sources.ChunkMap`. A renumbering costs a
    gather and a per-row sort of each chunk as it is read (a fit uses one only where rows and
    model are in different layouts); narrowing alone (``table`` None) costs nothing for rows
    that have no column beyond the width."""

    table: np.ndarray | None  # table[src_id] = dst_id; None: the same ids
    width: int

    @property
    def n_output_features(self) -> int:
        return self.width

    @property
    def named_in_descriptions(self) -> bool:
        return False  # the rows are named by their origin

    def transform_block(self, block: Block) -> Block:
        if isinstance(block, DenseBlock):  # (a dense store is never renumbered)
            X = np.asarray(block.X)
            X = X if self.table is None else X[:, np.argsort(self.table)]
            return DenseBlock(X=X[:, :self.width], y=block.y, sample_weight=block.sample_weight)
        if self.table is not None:
            block = renumbered(block, self.table)
        return narrowed(block, self.width)

    def stats(self, stats: FeatureStats | None) -> FeatureStats | None:
        """A store's column statistics seen through this map (None: not derivable)."""
        if stats is None or self.table is not None:
            return None
        w = self.width
        return FeatureStats(sparse=stats.sparse, max_abs=stats.max_abs[:w],
                            y_max_abs=stats.y_max_abs,
                            sums={k: (n, None if s is None else s[:w],
                                      None if sq is None else sq[:w], ys, ysq)
                                  for k, (n, s, sq, ys, ysq) in stats.sums.items()},
                            stored_count=None if stats.stored_count is None
                            else stats.stored_count[:w],
                            stored_sum_sq=None if stats.stored_sum_sq is None
                            else stats.stored_sum_sq[:w],
                            stored_sum=None if stats.stored_sum is None
                            else stats.stored_sum[:w])

    def describe(self) -> str:
        return "feature renumbering"


def relabel(src: FeatureLayout | None, dst: FeatureLayout | None) -> Relabel | None:
    """The map from rows stored in layout ``src`` to a model in layout ``dst`` (either None:
    the user's ids), or None where nothing changes."""
    if src is None and dst is None:
        return None
    n = (src or dst).n_features  # type: ignore[union-attr]
    width = n if dst is None else dst.state_width
    if src is not None and src.same_as(dst):
        return None if width >= n else Relabel(None, width)
    user_of = np.arange(n, dtype=np.int32) if src is None else src.order
    table = user_of if dst is None else dst.rank[user_of]
    return Relabel(np.ascontiguousarray(table, dtype=np.int32), width)
