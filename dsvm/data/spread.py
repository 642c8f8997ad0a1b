"""Are the labels spread over the chunks, or clustered (a file sorted by label)?

dsvm never moves a row to another chunk: a file sorted by label (w8a puts all of its 1,479
positives in rows 740-2218) keeps a class in one or two chunks. Training copes: each stream
visits the rows of a window of chunks interleaved (dsvm.data.window), and a fit trains on fewer
streams when a class sits in too few chunks for one per worker (dsvm.training.streams); UCI's
skin file as distributed (4 chunks, sorted by label) trains to the objective of its shuffled
copy. So conversion says so, and what ``shuffle=True`` still buys: a stream per worker.
"""

from __future__ import annotations

import numpy as np

from dsvm.data.dataset import Dataset

# A chunk is "clustered" when one class's count is this many binomial standard deviations off
# what the class's overall share predicts, and off by at least this share of the chunk.
_SIGMAS = 6.0
_MIN_SHARE_GAP = 0.1


def clustered_labels(dataset: Dataset) -> str | None:
    """A sentence describing the worst clustered chunk, or None when labels look well spread."""
    classes = dataset.classes
    if classes is None or dataset.n_chunks < 2:
        return None
    counts = np.zeros((dataset.n_chunks, len(classes)))
    for i in range(dataset.n_chunks):
        y, _ = dataset.read_chunk_labels(i)
        counts[i] = np.bincount(np.searchsorted(classes, y), minlength=len(classes))
    rows = counts.sum(axis=1, keepdims=True)
    share = counts.sum(axis=0) / counts.sum()
    expected = rows * share
    sigma = np.sqrt(rows * share * (1 - share)) + 1.0
    gap = np.abs(counts - expected) / np.maximum(rows, 1)
    bad = (np.abs(counts - expected) > _SIGMAS * sigma) & (gap > _MIN_SHARE_GAP)
    if not bad.any():
        return None
    c, k = np.unravel_index(np.argmax(np.where(bad, gap, -1)), bad.shape)
    return (
        f"labels are clustered across chunks: chunk {c} has {100 * counts[c, k] / rows[c, 0]:.0f}% "
        f"of class {float(classes[k])!r} against {100 * share[k]:.1f}% overall "
        f"({int(bad.any(axis=1).sum())} of {dataset.n_chunks} chunks are off): the source looks "
        "sorted. Training mixes the rows of several chunks and takes fewer streams where a "
        "class sits in too few chunks; shuffle=True (dsvm convert --shuffle) keeps a stream "
        "per worker."
    )


