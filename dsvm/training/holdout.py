"""Early stopping on held-out data without splitting files.

The stochastic solvers (and the grid of alphas, :mod:`dsvm.training.grid`) hold out rows of
every chunk (:class:`dsvm.data.fold.RowFold`), scored by the epochs' own passes
(:mod:`dsvm.solvers.held_out`); :func:`score_held_rows` is the one pass that scores a fit's
final models. CoCoA+ (its duals are per row) and BSGD (its kernel expansion is not scored by
a pass) hold out a set of whole chunks chosen from the fit's seed instead
(:func:`split_for_early_stopping`), scored after every epoch (no row moves, the same chunks on
resume and on any cluster)."""

from __future__ import annotations

import math

import numpy as np

from dsvm.data.sources import ArraySource, ChunkSubset, MappedSource, Source
from dsvm.engine.local import Engine, spread
from dsvm.engine.tasks import ScoreHeldRows
from dsvm.solvers.base import SolverState
from dsvm.solvers.evaluation import GridCounts, add_grid_counts
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training.epoch import Outcome

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


def score_held_rows(engine: Engine, held_out: HeldOutRows, source: Source,
                    state: SolverState) -> GridCounts | None:
    """The held-out sums of the models ``state`` predicts with, with their penalties: one
    pass over the held rows of every chunk of ``source`` (the fit's rows, through its map)."""
    held = engine.hold(Outcome(state), name="final-model")
    n_groups = 2 * engine.n_workers if engine.runs_ahead else 1
    try:
        return engine.reduce(  # type: ignore[no-any-return]
            ScoreHeldRows(held_out), source, spread(source.n_chunks, n_groups),
            add_grid_counts, name="score-held-rows", inputs=[held],
            what="scoring the final model(s) on the held-out rows")
    finally:
        engine.release(held)
