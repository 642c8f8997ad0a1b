"""The codes of a fit's in-memory chunks, made once for the fit instead of once per epoch.

A pass turns every chunk's labels into class codes (:func:`dsvm.solvers.targets.targets_for`:
one pass over the labels, and the check that each is one of the fit's classes) before it
trains on the chunk. Rows read from a store are new arrays every epoch, but the chunks of
in-memory input are views of the arrays the fit was given, the same every epoch, and so are
their codes: 2,000,000 labels cost 5 ms of an epoch of 0.13 s (a 2,000,000 x 100 float32
Pegasos epoch, one stream), every epoch. :class:`ChunkCodes` keeps them for the fit.

It is made only for a fit that runs in this process on in-memory rows, or on a store it
holds (:mod:`dsvm.data.held`: the same blocks every epoch); a task shipped to a cluster
takes it empty (its contents are never pickled). It is shared by the streams' threads: a
chunk is read by one stream an epoch, and a dict's get and set are atomic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dsvm.solvers.targets import targets_for


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are views of the same elements (the kept view ``a`` holds its
    memory, so an address seen again is the same memory, not a reused one)."""
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)


def _same_classes(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return a is b or (a is not None and b is not None and np.array_equal(a, b))


class ChunkCodes:
    """Codes (:func:`targets_for`) of chunks, kept by chunk id with the labels they were made
    from, and made again if a chunk's labels are other memory than those. Only the codes of
    labels that are views are kept: a source that converts its labels for every read (integer
    labels become float64 in :func:`dsvm.data.blocks.block_from_arrays`) hands out new memory
    every epoch, whose codes would be made again anyway."""

    def __init__(self, held: bool = False) -> None:
        # ``held``: the chunks are a held store's (dsvm.data.held.HeldSource), whose labels are
        # the same arrays every epoch though not views of the caller's
        self.held = held
        self._kept: dict[int, tuple[np.ndarray, np.ndarray | None, np.ndarray]] = {}

    def codes(self, chunk: int, y: np.ndarray, classes: np.ndarray | None,
              where: str) -> np.ndarray:
        """The codes of chunk ``chunk``'s labels ``y`` for ``classes`` (None: regression)."""
        kept = self._kept.get(chunk)
        if kept is not None and _same_classes(kept[1], classes) and _same_memory(kept[0], y):
            return kept[2]
        codes = targets_for(y, classes, where=where)  # (the passes never write into codes)
        if y.base is not None or self.held:  # a view of the fit's labels (a copy made for
            self._kept[chunk] = (y, classes, codes)  # one read is never seen again)
        return codes

    def __reduce__(self) -> tuple[Any, ...]:
        return (ChunkCodes, (self.held,))  # (a copy sent elsewhere starts empty)
