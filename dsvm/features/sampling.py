"""Uniform landmark samples drawn in one pass over the chunks, mergeable in any order.

Bottom-k sampling: every row gets a random key drawn from (seed, chunk), and the sample is the
``n`` rows with the smallest keys. Each chunk keeps its own bottom ``n``; two partial samples
merge by keeping the bottom ``n`` of their union. The result is a uniform sample without
replacement of min(n, n_rows) rows, the same whatever the grouping of chunks into tasks, and only
``n`` rows per task travel back to the client.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dsvm.data.blocks import Block, CSRBlock

_LANDMARK_KEYS = 7  # a SeedSequence stream name no other draw uses


@dataclass
class RowSample:
    keys: np.ndarray  # (k,) float64, the rows' random keys
    rows: np.ndarray  # (k, n_features) float64, dense

    def __sizeof__(self) -> int:
        return 64 + self.keys.nbytes + self.rows.nbytes


def sample_block(block: Block, n: int, seed: int, chunk: int) -> RowSample:
    """The bottom-``n`` rows of one chunk, dense float64."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, _LANDMARK_KEYS, chunk]))
    keys = rng.random(block.n_samples)
    take = np.argsort(keys, kind="stable")[:n]
    if isinstance(block, CSRBlock):
        rows = block.to_matrix()[take].toarray().astype(np.float64)
    else:
        rows = np.asarray(block.X[take], dtype=np.float64)
    return RowSample(keys[take], rows)


def merge_samples(samples: list[RowSample | None], n: int) -> RowSample | None:
    """The bottom ``n`` of the union of partial samples (``None`` entries ignored)."""
    present = [s for s in samples if s is not None and s.keys.size]
    if not present:
        return None
    keys = np.concatenate([s.keys for s in present])
    rows = np.concatenate([s.rows for s in present])
    take = np.argsort(keys, kind="stable")[:n]
    return RowSample(keys[take], rows[take])
