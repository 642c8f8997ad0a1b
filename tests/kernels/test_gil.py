"""A stream's pass releases the GIL while its kernels run (#28 item 3).

On a worker the next window of chunks is read and decoded by the read-ahead thread
(:func:`dsvm.engine.tasks.iter_chunks`) while the task's thread runs the pass; zarr's reads
go through its event-loop thread and need the GIL between the decodes. A pass kernel that
held the GIL would stop all of that for as long as it runs, and the read would wait for the
pass: the epoch would cost read + pass even with a spare core.

How it is seen: another thread wakes every millisecond and needs the GIL for a moment each
time, while the switch interval is one second, so a thread that holds the GIL is not made to
give it up for as long as a pass lasts. The other thread then keeps ticking only if the pass
gives up the GIL itself.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numba
import numpy as np
import pytest

from dsvm.combine import combiner_for
from dsvm.data.blocks import CSRBlock, DenseBlock
from dsvm.engine.tasks import EpochStart, StreamPass
from dsvm.kernels._jit import jit_options
from dsvm.solvers.registry import make_solver

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT,
                                reason="plain Python functions with NUMBA_DISABLE_JIT=1")

ROWS, DENSE_FEATURES, SPARSE_FEATURES, NNZ = 65_536, 100, 2 ** 16, 20
BUSY_SECONDS = 0.5  # how long the pass runs, repeated, while the ticks are counted
# Ticks that a GIL-free half second gives at the least: ~400 on an idle machine, 70 seen at a
# load of 40 on 2 cores (each wake-up waits for a core); a held GIL gives 0-1
MIN_TICKS = 10


class _Chunks:
    """A source of blocks in memory (what the pass sees after a read)."""

    def __init__(self, blocks: list) -> None:
        self.blocks = blocks
        self.n_features = blocks[0].n_features if hasattr(blocks[0], "indptr") \
            else blocks[0].X.shape[1]

    def read_chunk(self, i: int):
        return self.blocks[i]

    def describe(self) -> str:
        return "in memory"


def _blocks(layout: str) -> list:
    rng = np.random.default_rng(0)
    y = np.where(rng.random(ROWS) < 0.5, 1.0, -1.0)
    if layout == "dense":
        X = rng.standard_normal((ROWS, DENSE_FEATURES), dtype=np.float32)
        return [DenseBlock(X=X, y=y)]
    # NNZ distinct sorted columns a row (hashed features), signed ones
    indices = np.sort(rng.choice(SPARSE_FEATURES, size=(ROWS, NNZ)), axis=1).astype(np.int32)
    indices[:, 1:] += np.cumsum(indices[:, 1:] == indices[:, :-1], axis=1, dtype=np.int32)
    indices = np.minimum(indices, SPARSE_FEATURES - 1)
    keep = np.ones_like(indices, dtype=bool)
    keep[:, 1:] = indices[:, 1:] > indices[:, :-1]
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int64)
    data = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=int(indptr[-1]))
    return [CSRBlock(indptr=indptr, indices=indices[keep], data=data, y=y,
                     n_features=SPARSE_FEATURES)]


@contextmanager
def _ticker() -> Iterator[list[int]]:
    """Count, in another thread, wake-ups that each need the GIL, one a millisecond, with
    a switch interval of one second (no thread is made to give the GIL up meanwhile)."""
    count, stop = [0], threading.Event()

    def tick() -> None:
        while not stop.is_set():
            time.sleep(0.001)
            count[0] += 1

    interval = sys.getswitchinterval()
    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    time.sleep(0.01)  # (running)
    sys.setswitchinterval(1.0)
    try:
        yield count
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        thread.join()


def _ticks_while(run: Callable[[], object]) -> tuple[int, float]:
    """(ticks of the other thread while ``run`` is called again and again for
    BUSY_SECONDS, the seconds that took)."""
    with _ticker() as count:
        before, tic = count[0], time.perf_counter()
        while time.perf_counter() - tic < BUSY_SECONDS:
            run()
        return count[0] - before, time.perf_counter() - tic


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("solver_name", ["sgd", "pegasos"])
def test_a_stream_pass_lets_another_thread_run(layout, solver_name):
    blocks = _blocks(layout)
    source = _Chunks(blocks)
    solver = make_solver(solver_name, alpha=1e-5)
    start = EpochStart(solver.init_state(source.n_features, 1, np.float32), None, "iterate")
    task = StreamPass(solver, combiner_for(solver), np.array([-1.0, 1.0]), epoch=0, seed=0)
    task(source, [0], start)  # compiled (or loaded) before anything is counted

    ticks, seconds = _ticks_while(lambda: task(source, [0], start))

    # released: about one tick a millisecond of the pass (fewer on a loaded machine);
    # held: none, the pass's Python between its kernels is not made to let go either
    assert ticks >= MIN_TICKS, (ticks, seconds)


def test_a_kernel_that_holds_the_gil_stops_the_other_thread():
    """The check above can fail: the same ticker stalls behind a kernel compiled without
    ``nogil`` (and runs behind the same kernel with it)."""
    def spin(n):
        total = 0.0
        for i in range(n):
            total += (i % 7) * 0.5
        return total

    holding = numba.njit(**jit_options(nogil=False, cache=False))(spin)
    releasing = numba.njit(**jit_options(cache=False))(spin)
    n = 1
    holding(n), releasing(n)
    while True:  # one call of 0.2 s or more
        tic = time.perf_counter()
        holding(n)
        if time.perf_counter() - tic > 0.2 or n > 1 << 40:
            break
        n *= 4
    held, held_s = _ticks_while(lambda: holding(n))
    released, released_s = _ticks_while(lambda: releasing(n))
    assert held < MIN_TICKS <= released, (held, held_s, released, released_s)
