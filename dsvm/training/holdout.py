"""Early stopping on held-out data without splitting files: a set of whole chunks, chosen from
the fit's seed, is held out of training and scored after every epoch (no row moves, the same
chunks on resume and on any cluster)."""

from __future__ import annotations

import math

import numpy as np

from dsvm.data.sources import ArraySource, ChunkSubset, MappedSource, Source

_HOLDOUT = 11  # a SeedSequence stream name no other draw of a fit uses

# In-memory arrays are cut into at least this many chunks when a share of them is held out,
# so that ``validation_fraction`` can be honoured by whole chunks.
MIN_CHUNKS_FOR_HOLDOUT = 20


def holdout_chunks(n_chunks: int, fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """(training chunks, held-out chunks): round(fraction * n_chunks) chunks, at least one, drawn
    from ``seed``."""
    if n_chunks < 2:
        raise ValueError(
            f"early_stopping holds out whole chunks, but the training data has {n_chunks} "
            "chunk; convert it with smaller chunks (dsvm convert --chunk-rows) or pass "
            "validation data.")
    k = min(n_chunks - 1, max(1, round(fraction * n_chunks)))
    rng = np.random.default_rng(np.random.SeedSequence([seed, _HOLDOUT]))
    held = sorted(int(c) for c in rng.choice(n_chunks, size=k, replace=False))
    return [c for c in range(n_chunks) if c not in set(held)], held


def chunked_for_holdout(source: Source) -> Source:
    """In-memory arrays re-cut so that they have enough chunks to hold some out (seen through
    the fit's scaling, if any)."""
    if isinstance(source, MappedSource):
        return MappedSource(chunked_for_holdout(source.inner), source.fmap)
    if isinstance(source, ArraySource) and source.n_chunks < MIN_CHUNKS_FOR_HOLDOUT:
        rows = max(1, math.ceil(source.n_samples / MIN_CHUNKS_FOR_HOLDOUT))
        return ArraySource(source.X, source.y, source.sample_weight, chunk_rows=rows)
    return source


def split_for_early_stopping(source: Source, fraction: float,
                             seed: int) -> tuple[Source, Source]:
    """(training part, held-out part) of ``source``, both as chunk subsets."""
    source = chunked_for_holdout(source)
    train, held = holdout_chunks(source.n_chunks, fraction, seed)
    return ChunkSubset(source, train), ChunkSubset(source, held)
