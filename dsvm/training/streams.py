"""How many streams a fit trains on by default: one per worker, unless the labels are
clustered over the chunks too few to give every stream every class.

Each epoch deals the chunks to the streams like cards (:func:`dsvm.data.order.deal_chunks`),
and the streams' models are averaged (CoCoA+: added) at its end. A store sorted by label keeps
a class in a few chunks: when it is in fewer chunks than the streams, some stream never sees
it in an epoch, trains to predict the other classes only, and pulls the average with it.
Measured on UCI's skin segmentation file as distributed (195,057 rows sorted by label, 4 chunks,
the skin class in chunk 0 only; test accuracy of default fits on 2 workers, LinearSVC on
standardised rows 0.923): 2 streams gave 0.868 (``cocoa``, duality gap 0.33 after 10 epochs),
0.783 (``sgd``, below the majority rate 0.792) and 0.832 (``pegasos``); one stream 0.929, 0.925
and 0.930, as the shuffled copy on 2 streams (0.929, 0.933, 0.929). The window order inside a
stream (:mod:`dsvm.data.order`) mixes the rows of its chunks; nothing mixes rows across
streams.

So by default (``n_streams=None``) a fit on a dataset that records its chunks' class counts
(the writer keeps them, ``Dataset.chunk_class_counts``) takes no more streams than the chunks
that effectively hold its least spread class (rounded to whole chunks), halved
(:data:`CHUNKS_PER_STREAM`), when that class is clearly clustered (spread over the chunks
unlike the rows: :data:`CLUSTERED`), and says so. A
Dask collection's partitions are its chunks (one Parquet file per class reads as one partition
per class): their counts come from one reduction of the labels, whose distinct values the fit
then reuses. A ``n_streams`` given is kept; NESVM's full-gradient passes see every row in every
pass and keep one task per worker.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dsvm.training.progress import fit_note
from dsvm.training.spec import FitSpec

# Streams each need this many of the chunks a clustered class fills: with fewer, the random
# deal of an epoch often gives one stream none of it (2 of 8 chunks: 43% of epochs; 2 of 4:
# 33%), and the averaged model of such an epoch is off. Measured: a DataFrame of 4 Parquet
# files sorted by label (classes 54/46, each in about 2) trained to 0.815 on 2 streams, 0.871
# on one (0.860 shuffled); bench_order's large store (its rarer class in 2 of 8 chunks) to
# 86.95% on 2 and 87.15% on one, at 1.4x the time per fit.
CHUNKS_PER_STREAM = 2

# A class is clustered when its rows' spread over the chunks differs from all rows' spread by
# more than this (total variation distance: about 0 for a shuffled store, 0.12 for
# bench_order's drifting stream, 0.5 for two equal classes sorted over 4 chunks, 0.75 for a
# class held by one of 4 equal chunks, 0.79 for skin read as one Parquet file per class).
CLUSTERED = 0.4


def effective_chunks(counts: np.ndarray) -> np.ndarray:
    """For each column of ``counts`` (rows of chunks), the number of chunks its rows fill
    evenly to the same concentration: (sum n_c)^2 / sum n_c^2 (1 for a class held by one
    chunk, n for a class spread evenly over n)."""
    counts = np.asarray(counts, dtype=np.float64)
    totals = counts.sum(axis=0)
    squares = (counts ** 2).sum(axis=0)
    return np.where(squares > 0, totals ** 2 / np.maximum(squares, 1.0), 0.0)


def streams_for_labels(counts: np.ndarray | None, n_streams: int) -> tuple[int, int | None]:
    """(the streams to train on, the clustered class's column or None) for chunks holding
    ``counts`` (n_chunks, n_classes) rows of each class."""
    if counts is None or n_streams <= 1 or counts.ndim != 2 or counts.shape[0] < 1:
        return n_streams, None
    counts = np.asarray(counts, dtype=np.float64)
    totals, rows = counts.sum(axis=0), counts.sum(axis=1)
    if not (totals > 0).any():
        return n_streams, None
    # how far each class's spread over the chunks is from the rows' (total variation)
    share = counts / np.maximum(totals, 1.0)
    off = 0.5 * np.abs(share - (rows / rows.sum())[:, None]).sum(axis=0)
    spread = np.where((totals > 0) & (off > CLUSTERED), effective_chunks(counts), np.inf)
    k = int(np.argmin(spread))
    if not np.isfinite(spread[k]):
        return n_streams, None
    held = int(spread[k] + 0.5)  # whole chunks
    if held >= CHUNKS_PER_STREAM * n_streams:
        return n_streams, None
    return max(1, held // CHUNKS_PER_STREAM), k


def stream_stage(spec: FitSpec, engine: Any, source: Any) -> FitSpec:
    """``spec`` with ``n_streams`` set when the default would deal a clustered class to too
    few streams (see the module docstring), with a line saying so; else ``spec`` as given."""
    if spec.n_streams is not None or spec.solver == "nesvm" or not spec.classifies:
        return spec
    workers = int(getattr(engine, "n_workers", 1) or 1)
    if workers <= 1 or getattr(source, "n_chunks", 0) < 2:
        return spec
    counts = chunk_class_counts(source)
    n, k = streams_for_labels(counts, workers)
    if k is None:
        return spec
    assert counts is not None
    label = _label_of(source, k)
    share = 100.0 * counts[:, k].max() / max(1, counts[:, k].sum())
    fit_note(f"streams: {n} (not one per worker, {workers}): the labels are clustered over "
             f"the chunks (class {label} is held by about "
             f"{effective_chunks(counts[:, [k]])[0]:.1f} of {counts.shape[0]} chunks, "
             f"{share:.0f}% of it in one), and every stream must see every class; convert "
             "with --shuffle (dsvm.convert(..., shuffle=True)) to train on one stream per "
             "worker", spec.verbose)
    return replace(spec, n_streams=n)


def chunk_class_counts(source: Any) -> np.ndarray | None:
    """A source's (n_chunks, n_classes) class counts: a dataset's as its writer kept them; a
    Dask collection's from one reduction of its labels (its partitions, e.g. one Parquet file
    per class, are chunks too); None for other sources."""
    dataset = getattr(source, "dataset", None)
    if dataset is not None:
        return dataset.chunk_class_counts()
    counting = getattr(source, "chunk_class_counts", None)
    return counting() if callable(counting) else None


def _label_of(source: Any, k: int) -> str:
    dataset = getattr(source, "dataset", None)
    names = None if dataset is None else dataset.label_names
    if names:
        return repr(names[k])
    if dataset is not None:
        return repr(float(dataset.classes[k]))
    labels = getattr(source, "labels", None)
    if labels is None:
        return f"#{k}"
    names = getattr(source, "label_names", None)  # (a Dask collection's text labels: codes)
    return repr(str(names[int(labels[k])])) if names is not None else repr(float(labels[k]))
