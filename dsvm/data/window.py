"""How many chunks a stream interleaves: the shuffle window of order-robust streaming (#13).

The arithmetic and the record live here, in the data layer, so that ``dsvm info`` can show a
dataset's window without importing the training stack (numba, scikit-learn); the training layer
(:mod:`dsvm.training.window`) applies the same rule to any source.

A stream reads its chunks in windows and visits the rows of a window in random rounds that
mix all its chunks (:func:`dsvm.solvers.passes.pass_over_window`), so that data stored
sorted by label or by time trains like shuffled data. The window's rows are held in memory
at once, and the next window is read while it trains (:func:`dsvm.engine.tasks.iter_chunks`),
so the window is capped in bytes whatever the chunking: memory per worker stays bounded (two
windows' rows at most). On a cluster whose workers have a memory limit, the window is also
capped to what fits in a worker beside its process and the model states it holds
(:mod:`dsvm.training.memory` works out ``memory_chunks``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# In 2,000-row chunks, 2 streams, 10 epochs, seeds 0-3, mean test accuracy against the shuffled
# conversion (84.96% a9a, 98.64% w8a): label-sorted a9a 79.5% one chunk at a time, 84.29% with
# windows of 8 chunks, 84.31% with 16; w8a as distributed 98.23% with 8, 98.45% with 16. 16 was
# tried as the default and kept 8: a9a's seeds 0/1 fell to 83.24/84.58% (8: 84.13/84.81%) and a
# window of 16 holds twice the rows (peak RSS 525 vs 493 MiB in bench_order). Those figures
# are from runs of 16 rows over the whole window; the rounds of dsvm.data.order.window_order
# since give 84.57% / 98.32% on seeds 0/1 (84.54% / 98.22% with 8 interleaved runs, 84.67% /
# 98.31% with 4, solver="pegasos").
# benchmarks/bench_order.py has the current figures.
DEFAULT_WINDOW = 8
WINDOW_BYTES = 128 << 20
MAPPED_ITEMSIZE = 8  # a feature map's output rows are dense float64


@dataclass(frozen=True)
class Window:
    """The window a fit uses: ``chunks`` chunks of about ``chunk_bytes`` and ``chunk_rows``."""

    chunks: int
    requested: int | None
    chunk_bytes: float | None
    chunk_rows: float
    default: int = DEFAULT_WINDOW  # the chunks asked for when ``requested`` is None
    # the most chunks a window can hold: a stream's chunks of an epoch (``streams`` given) or
    # the dataset's; None: not known
    limit: int | None = None
    streams: int | None = None
    # the most chunks the workers' memory limit (``memory_limit`` bytes) leaves room for, two
    # windows of them per stream; None: no limit known (in process, or no limit set)
    memory_chunks: int | None = None
    memory_limit: int | None = None

    @property
    def held(self) -> int:
        """Chunks a window really holds: ``chunks``, or fewer where a stream has fewer."""
        return self.chunks if self.limit is None else max(1, min(self.chunks, self.limit))

    @property
    def nbytes(self) -> float | None:
        return None if self.chunk_bytes is None else self.held * self.chunk_bytes

    @property
    def asked(self) -> int:
        """The chunks asked for: ``requested``, or the default."""
        return self.default if self.requested is None else self.requested

    @property
    def capped(self) -> bool:
        """Whether WINDOW_BYTES or the workers' memory limit made the window smaller than
        asked for (or the default)."""
        return self.chunks < self.asked

    @property
    def capped_by_memory(self) -> bool:
        """Whether the workers' memory limit made the window smaller than it would be
        without it (rather than WINDOW_BYTES, or a stream's share of the chunks)."""
        by_bytes = (self.asked if self.chunk_bytes is None
                    else max(1, int(WINDOW_BYTES // self.chunk_bytes)))
        return (self.memory_chunks is not None and self.chunks == self.memory_chunks
                and self.memory_chunks < min(self.asked, by_bytes))

    def as_dict(self) -> dict[str, Any]:
        return {"chunks": self.held, "rows": int(round(self.held * self.chunk_rows)),
                "megabytes": None if self.nbytes is None else round(self.nbytes / 1e6, 2),
                "default": self.requested is None}

    def describe(self) -> str:
        """One line for ``dsvm info`` and the fit's log."""
        held = self.held
        what = ("one chunk at a time" if held == 1 else
                f"{held} chunks ({held * self.chunk_rows:,.0f} rows"
                + ("" if self.nbytes is None else f", {self.nbytes / 1e6:,.1f} MB") + ")")
        why = ("default" if self.requested is None else f"shuffle_window={self.requested}")
        if self.requested is None and (self.default != DEFAULT_WINDOW or held < self.chunks):
            why += f": {self.default} chunks"
        if self.capped_by_memory and self.memory_limit is not None:
            why += (f", capped by the workers' memory limit of "
                    f"{self.memory_limit / 2**20:,.0f} MiB")
        elif self.capped:
            why += f", capped at {WINDOW_BYTES >> 20} MB of rows"
        if held < self.chunks:  # say why the window is smaller than asked for
            chunks = f"{self.limit} chunk{'s' if self.limit != 1 else ''}"
            why += ((f"; each of {self.streams} streams reads at most {chunks} an epoch"
                     if self.streams > 1 else f"; its one stream reads {chunks} an epoch")
                    if self.streams else f"; the dataset has {chunks}")
        return f"{what} ({why})"


def window_of(requested: int | None, per_chunk: float | None, chunk_rows: float,
              default: int = DEFAULT_WINDOW, *, limit: int | None = None,
              streams: int | None = None, memory_chunks: int | None = None,
              memory_limit: int | None = None) -> Window:
    """Chunks per window: ``requested`` (None: ``default``), at most WINDOW_BYTES of rows by
    the average chunk's bytes ``per_chunk`` (None: not known, no cap), and at most
    ``memory_chunks`` (what the workers' memory limit ``memory_limit`` leaves room for; never
    below one chunk). ``limit``: the chunks there are to hold (a stream's, with ``streams``
    streams), which the record reports."""
    window = default if requested is None else int(requested)
    if per_chunk is not None:
        window = min(window, max(1, int(WINDOW_BYTES // per_chunk)))
    # (a cap no smaller than the chunks a stream has to hold changes nothing: not applied,
    # so that the record says why the window is what it is)
    if memory_chunks is not None and (limit is None or memory_chunks < limit):
        window = min(window, max(1, int(memory_chunks)))
    return Window(max(1, window), requested, per_chunk, chunk_rows, default, limit, streams,
                  memory_chunks, memory_limit)


def dataset_window(dataset: Any, requested: int | None = None) -> Window:
    """The window a fit on ``dataset`` (a :class:`dsvm.Dataset`) uses: for ``dsvm info``."""
    n_chunks = max(1, int(dataset.n_chunks))
    per_chunk = max(1.0, float(dataset.nbytes) / n_chunks) if dataset.nbytes else None
    return window_of(requested, per_chunk, float(dataset.n_samples) / n_chunks,
                     limit=n_chunks)
