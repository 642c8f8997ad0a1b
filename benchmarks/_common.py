"""Shared helpers for the benchmarks: timing, results file sections, worker memory probes.

Every figure a benchmark reports is a ratio of two things measured side by side in the same run
(the machines are shared and noisy); absolute numbers are printed for context only.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("RESULTS.md")
WORK = Path(os.environ.get("DSVM_BENCH_DIR", Path(__file__).with_name("_work")))


def machine() -> str:
    import psutil

    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"{psutil.virtual_memory().total / 2**30:.0f} GiB RAM, "
            f"Python {platform.python_version()}")


def best_of(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` calls (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        tic = time.perf_counter()
        fn()
        times.append(time.perf_counter() - tic)
    return min(times)


def write_section(name: str, body: str, command: str) -> None:
    """Replace (or add) the section ``name`` of RESULTS.md, keeping the others."""
    text = RESULTS.read_text() if RESULTS.exists() else "# dsvm benchmark results\n\n" \
        "Each section is written by the benchmark named in it; ratios are measured side by " \
        "side in one run.\n"
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (f"<!-- begin {name} -->\n## {name}\n\n`{command}` — {stamp}, {machine()}\n\n"
               f"{body.strip()}\n<!-- end {name} -->\n")
    pattern = re.compile(rf"<!-- begin {re.escape(name)} -->.*?<!-- end {re.escape(name)} -->\n",
                         re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text + "\n" + section
    RESULTS.write_text(text)


def worker_peak_rss(client: Any) -> dict[str, int]:
    """Peak resident set size of each worker process since it started (bytes).

    Reads the process's own high-water mark (``VmHWM``), which starts afresh at exec. Linux's
    ``ru_maxrss`` does not: a spawned worker inherits the peak of the process that forked it, so
    a worker started from a large pytest process reported that process's peak."""
    import resource

    def peak() -> int:
        try:
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024  # kB
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux

    return client.run(peak)


def worker_spilled(client: Any) -> dict[str, int]:
    """Bytes each worker has spilled to disk since it started (0 = never spilled)."""

    def spilled(dask_worker: Any) -> int:
        data = dask_worker.data
        total = getattr(data, "spilled_total", None)
        return int(getattr(total, "disk", 0) or 0) if total is not None else 0

    return client.run(spilled)
