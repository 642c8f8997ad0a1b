"""The conversion's read-ahead: items in order, errors where they belong, clean closing."""

from __future__ import annotations

import threading
import time

import pytest

from dsvm.data.read_ahead import read_ahead


def _blocks(n, fail_at=None, log=None):
    try:
        for i in range(n):
            if i == fail_at:
                raise ValueError(f"bad block {i}")
            time.sleep(0.01)
            yield i
    finally:
        if log is not None:
            log.append(("closed", threading.current_thread().name))


def test_items_arrive_in_order_and_are_produced_off_the_callers_thread():
    seen = []

    def produce():
        for i in range(5):
            seen.append(threading.current_thread().name)
            yield i

    assert list(read_ahead(produce())) == [0, 1, 2, 3, 4]
    assert all(name.startswith("dsvm-read-ahead") for name in seen)


def test_an_error_reaches_the_caller_after_the_items_before_it():
    got = []
    with pytest.raises(ValueError, match="bad block 3"):
        for item in read_ahead(_blocks(6, fail_at=3)):
            got.append(item)
    assert got == [0, 1, 2]


def test_closing_waits_for_the_read_in_flight_so_the_source_can_be_closed():
    log: list = []
    src = _blocks(100, log=log)
    ahead = read_ahead(src)
    assert next(ahead) == 0  # block 1 is now being read in the background
    ahead.close()
    src.close()  # would raise "generator already executing" had the read still been running
    assert log == [("closed", threading.current_thread().name)]
