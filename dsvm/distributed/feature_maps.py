"""Kernel feature maps on the cluster: landmark sampling in one pass, mapped sources.

* :func:`fit_feature_map` fits a map without loading the data on the client: RFF needs only the
  number of features; Nystroem's landmarks are drawn on the workers (bottom-k sampling, see
  :mod:`dsvm.features.sampling`), each task returning at most ``n_components`` rows.
* :func:`map_source` wraps a source so that every chunk is mapped right after it is read, inside
  the task that reads it: one block of features exists at a time and nothing mapped is stored.
  The existing linear solvers then run unchanged on the mapped blocks. Dask-array sources get a
  ``map_blocks`` of the map, computed on the workers chunk by chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from dsvm.data.blocks import Block
from dsvm.distributed.sources import DaskSource, Source
from dsvm.features.maps import RFF, FeatureMap, Nystroem
from dsvm.features.sampling import RowSample, merge_samples, sample_block


@dataclass
class MappedSource:
    """A chunked source (dataset or in-memory arrays) seen through a feature map."""

    inner: Any
    fmap: FeatureMap

    @property
    def n_samples(self) -> int:
        return int(self.inner.n_samples)

    @property
    def n_features(self) -> int:
        return int(self.fmap.n_output_features)

    @property
    def n_input_features(self) -> int:
        return int(self.inner.n_features)

    @property
    def n_chunks(self) -> int:
        return int(self.inner.n_chunks)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.inner.dtype)

    def label_values(self) -> np.ndarray:
        return self.inner.label_values()

    def read_chunk(self, i: int) -> Block:
        return self.fmap.transform_block(self.inner.read_chunk(i))

    def describe(self) -> str:
        return f"{self.inner.describe()} through the {self.fmap.describe()}"


@dataclass
class MappedDaskSource(DaskSource):
    """Dask arrays whose X is mapped lazily chunk by chunk (``n_input_features`` kept)."""

    n_input_features: int = 0


def map_source(source: Source, fmap: FeatureMap | None) -> Any:
    """``source`` with every chunk passed through ``fmap`` when it is read (``None``: as is)."""
    if fmap is None:
        return source
    if isinstance(source, DaskSource):
        X = source.X.map_blocks(
            fmap.transform, dtype=source.dtype,
            chunks=(source.X.chunks[0], (fmap.n_output_features,)),
        )
        return MappedDaskSource(X, source.y, source.sample_weight,
                                n_input_features=source.n_features)
    return MappedSource(source, fmap)


def fit_feature_map(fmap: FeatureMap, engine: Any, source: Source, seed: int) -> FeatureMap:
    """Fit ``fmap`` to the data behind ``source`` without bringing the data to the client."""
    if isinstance(fmap, Nystroem):
        fmap.check_params()
        sample = sample_landmarks(engine, source, int(fmap.n_components), seed)
        if sample is None:
            raise ValueError(f"Nystroem: {source.describe()} has no rows to sample landmarks from.")
        return fmap.fit_landmarks(sample.rows)
    assert isinstance(fmap, RFF), fmap  # data-independent: needs only the number of features
    return fmap.fit(n_features=source.n_features, seed=seed if fmap.random_state is None else None)


def _worker_sample_chunks(source: Any, chunk_ids: Sequence[int], n: int, seed: int) -> Any:
    """The bottom-``n`` rows of some chunks of ``source``, read on this worker."""
    best: RowSample | None = None
    for chunk in chunk_ids:
        best = merge_samples([best, sample_block(source.read_chunk(chunk), n, seed, chunk)], n)
    return best


def _sample_arrays(X: Any, n: int, seed: int, chunk: int) -> RowSample:
    from dsvm.data.blocks import block_from_arrays

    return sample_block(block_from_arrays(X, np.zeros(X.shape[0])), n, seed, chunk)


def sample_landmarks(engine: Any, source: Source, n: int, seed: int) -> RowSample | None:
    """A uniform sample of ``n`` rows drawn in one pass over the chunks, on the workers."""
    client = getattr(engine, "client", None)
    if client is None:
        return _worker_sample_chunks(source, range(source.n_chunks), n, seed)
    if isinstance(source, DaskSource):
        from dask import delayed

        parts = [delayed(_sample_arrays)(X, n, seed, i)
                 for i, X in enumerate(source.X.to_delayed().ravel())]
        futures = client.compute(parts)
    else:
        groups = np.array_split(np.arange(source.n_chunks), max(1, 2 * engine.n_workers))
        futures = [client.submit(_worker_sample_chunks, source, [int(c) for c in g], n, seed,
                                 pure=False) for g in groups if len(g)]
    return merge_samples(client.gather(futures), n)
