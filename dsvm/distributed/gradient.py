"""One NESVM data pass on the workers: each task reads its own chunks, sums its gradient share,
and the shares are added in a tree on the workers; only the sum (model-sized) reaches the client.

In-process (NumPy/SciPy input, :class:`~dsvm.distributed.engine.LocalEngine`) the same worker
function runs over all chunks in this process. Memory: a task holds one chunk (plus the one
prefetched) and model-sized sums, whatever the dataset's size.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from dsvm.combine.gradient import add_shares
from dsvm.data.blocks import Block, block_from_arrays
from dsvm.distributed.malloc import tune_malloc_for_chunks
from dsvm.distributed.sources import DaskSource, Source
from dsvm.distributed.worker import iter_chunks
from dsvm.solvers.base import encode_labels
from dsvm.solvers.nesvm import GradientShare, NesvmProblem, Points, block_share

SPLIT_EVERY = 4


def _share_of_block(block: Block, points: Points, problem: NesvmProblem, mu: float,
                    classes: np.ndarray, where: str) -> GradientShare:
    codes = encode_labels(block.y, classes, where=where)
    return block_share(block, codes, points, problem.loss, mu, problem.fit_intercept)


def _worker_gradient(source: Any, chunk_ids: Sequence[int], points: Points,
                     problem: NesvmProblem, mu: float, classes: np.ndarray) -> GradientShare | None:
    """The summed share of some chunks of a source, read on this worker one at a time."""
    tune_malloc_for_chunks()
    total: GradientShare | None = None
    for chunk, block in iter_chunks(source, list(chunk_ids)):
        where = f"{source.describe()}, chunk {chunk}"
        share = _share_of_block(block, points, problem, mu, classes, where)
        total = share if total is None else total + share
    return total


def _worker_gradient_arrays(X: Any, y: np.ndarray, sample_weight: Any, points: Points,
                            problem: NesvmProblem, mu: float, classes: np.ndarray,
                            chunk: int) -> GradientShare:
    block = block_from_arrays(X, y, sample_weight)
    return _share_of_block(block, points, problem, mu, classes, f"dask array, chunk {chunk}")


def _worker_add(*shares: GradientShare | None) -> GradientShare | None:
    return add_shares(shares)


class GradientOracle:
    """``oracle(points, mu)`` -> the full :class:`GradientShare` of one pass over ``source``.

    ``engine`` is the fit's engine: a ``LocalEngine`` runs in this process; a ``DaskEngine``
    (anything with a ``client``) gets one task per group of chunks (``n_tasks`` groups, the
    worker count by default) and a tree sum ``split_every`` shares at a time.
    """

    def __init__(self, engine: Any, source: Source, problem: NesvmProblem, classes: np.ndarray,
                 *, n_tasks: int | None = None, split_every: int = SPLIT_EVERY) -> None:
        self.client: Any = getattr(engine, "client", None)
        self.source = source
        self.problem = problem
        self.classes = np.asarray(classes, dtype=np.float64)
        n_workers = int(getattr(engine, "n_workers", 1) or 1)
        self.n_tasks = max(1, int(n_tasks or n_workers))
        self.split_every = max(2, int(split_every))
        self._token = uuid.uuid4().hex[:8]
        self._pass = 0

    def __call__(self, points: Points, mu: float) -> GradientShare:
        self._pass += 1
        if self.client is None:
            total = _worker_gradient(self.source, range(self.source.n_chunks), points,
                                     self.problem, mu, self.classes)
        else:
            total = self._on_cluster(points, mu)
        if total is None:
            raise ValueError(f"The training data ({self.source.describe()}) has no rows.")
        return total

    def _key(self, *parts: Any) -> str:
        return "-".join(["dsvm-nesvm", *map(str, parts), self._token])

    def _on_cluster(self, points: Points, mu: float) -> GradientShare | None:
        client = self.client
        if isinstance(self.source, DaskSource):
            futures = self._dask_array_tasks(points, mu)
        else:
            groups = np.array_split(np.arange(self.source.n_chunks), self.n_tasks)
            futures = [
                client.submit(
                    _worker_gradient, self.source, [int(c) for c in g], points, self.problem, mu,
                    self.classes, key=self._key("pass", self._pass, i), pure=False,
                )
                for i, g in enumerate(groups) if len(g)
            ]
        level = 0
        while len(futures) > 1:
            futures = [
                client.submit(_worker_add, *futures[i:i + self.split_every],
                              key=self._key("add", self._pass, level, i), pure=False)
                for i in range(0, len(futures), self.split_every)
            ]
            level += 1
        return futures[0].result()

    def _dask_array_tasks(self, points: Points, mu: float) -> list[Any]:
        """One task per dask-array chunk; the chunks are computed on the workers."""
        from dask import delayed

        src: Any = self.source  # a DaskSource (checked by the caller)
        Xs, ys = src.X.to_delayed().ravel(), src.y.to_delayed().ravel()
        sws = None if src.sample_weight is None else src.sample_weight.to_delayed().ravel()
        parts = [
            delayed(_worker_gradient_arrays, pure=False)(
                Xs[i], ys[i], None if sws is None else sws[i], points, self.problem, mu,
                self.classes, i)
            for i in range(src.n_chunks)
        ]
        return list(self.client.compute(parts))
