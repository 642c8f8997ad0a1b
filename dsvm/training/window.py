"""The shuffle window of a training source (the rule and record: :mod:`dsvm.data.window`).

A stream reads its chunks in windows and visits the rows of a window in one random order of
short runs (:func:`dsvm.solvers.passes.pass_over_window`); here the window is sized for what a
pass really holds, including rows a feature map widens.
"""

from __future__ import annotations

import math

from dsvm.data.sources import Source, base_source
from dsvm.data.window import (  # noqa: F401  (re-exported for the training layer and tests)
    DEFAULT_WINDOW,
    MAPPED_ITEMSIZE,
    WINDOW_BYTES,
    Window,
    dataset_window,
    window_of,
)


def chunk_bytes(source: Source) -> float | None:
    """Average bytes of one chunk's rows as a pass holds them (None: not known)."""
    base = base_source(source)
    nbytes = getattr(base, "nbytes", None)
    if not nbytes or not base.n_chunks or math.isnan(float(nbytes)):
        return None
    per_chunk = float(nbytes) / base.n_chunks
    if int(source.n_features) > int(base.n_features):  # rows widened by a feature map
        # (a renumbered store's rows narrowed to the features they use hold what is stored)
        per_row = float(source.n_features) * MAPPED_ITEMSIZE
        per_chunk = max(per_chunk, per_row * base.n_samples / base.n_chunks)
    return max(1.0, per_chunk)


def window_for(requested: int | None, source: Source, default: int = DEFAULT_WINDOW,
               n_streams: int | None = None, *, memory_chunks: int | None = None,
               memory_limit: int | None = None) -> Window:
    """Chunks per window for ``source`` (see :func:`dsvm.data.window.window_of`), read by
    ``n_streams`` streams: a window holds no more than a stream's share of the chunks, which
    the record (and the fit's log line) reports rather than the chunks asked for.
    ``memory_chunks``/``memory_limit``: the cap of the workers' memory limit
    (:func:`dsvm.training.memory.memory_window` works it out)."""
    n_chunks = max(1, int(source.n_chunks))
    limit = -(-n_chunks // n_streams) if n_streams else n_chunks
    return window_of(requested, chunk_bytes(source), float(source.n_samples) / n_chunks,
                     default, limit=limit, streams=n_streams, memory_chunks=memory_chunks,
                     memory_limit=memory_limit)
