"""Producing the next block in a background thread while the caller writes the current one."""

from __future__ import annotations

from collections.abc import Generator, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

_END = object()


def read_ahead(items: Iterable[T]) -> Generator[T, None, None]:
    """Yield ``items``, computing the next one in a background thread meanwhile.

    A conversion spends its time in two halves that both release the GIL: reading and decoding
    a block (file reads, NumPy, numba) and writing one (zarr compresses in its own thread, the
    caller waits). In series, one core idles during each half; with the next block read while
    the current one is written, a CSR ``.npz`` of 400,000 x 2**22 rows converts in ~0.3 s
    instead of ~0.5 s (bench_convert). One more block is in memory than without. A worker's
    pass over windows of chunks reads its next window the same way (dsvm.engine.tasks).

    Errors raised while producing an item are re-raised here, at the point the caller asks for
    that item. Close the returned generator (``contextlib.closing`` or ``.close()``) before
    closing ``items``: that waits for a read still in flight, which a generator's ``close``
    from another thread would collide with.
    """
    it = iter(items)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsvm-read-ahead") as pool:
        pending = pool.submit(next, it, _END)
        while True:
            item = pending.result()
            if item is _END:
                return
            pending = pool.submit(next, it, _END)
            yield item  # type: ignore[misc]
            del item  # the caller's reference is the only one while the next block is read
