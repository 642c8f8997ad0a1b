"""The 400 x 400 merge lookup tables of papers/001, computed once and cached on disk.

h(m, kappa) and WD(m, kappa)/(A_i + A_j)^2 are computed by golden section search to 1e-10 (the
paper's precision for the precomputation) on the grid m, kappa = i/399, then kept in memory for
the process and in ``$DSVM_CACHE_DIR`` (default ``~/.cache/dsvm``) as ``merge_tables_400.npz``,
so a fit, a worker or a later session never recomputes them (about a second when it has to).
A cache that cannot be written (read-only home) only costs that second once per process.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path

import numpy as np

from dsvm.kernels.bsgd import GSS_PRECISE_EPS, build_merge_tables

logger = logging.getLogger(__name__)

GRID = 400
_VERSION = 1  # bump when the table definition changes: old cache files are then ignored


def cache_path(grid: int = GRID) -> Path:
    root = Path(os.environ.get("DSVM_CACHE_DIR", Path.home() / ".cache" / "dsvm"))
    return root / f"merge_tables_{grid}_v{_VERSION}.npz"


def compute_tables(grid: int = GRID, eps: float = GSS_PRECISE_EPS) -> tuple[np.ndarray, np.ndarray]:
    H = np.empty((grid, grid), dtype=np.float64)
    WD = np.empty((grid, grid), dtype=np.float64)
    build_merge_tables(grid, eps, H, WD)
    return H, WD


@functools.lru_cache(maxsize=4)
def merge_tables(grid: int = GRID) -> tuple[np.ndarray, np.ndarray]:
    """(H, WD), read-only, from the process cache, the disk cache, or computed and stored."""
    path = cache_path(grid)
    try:
        with np.load(path, allow_pickle=False) as z:
            H, WD = z["h"], z["wd"]
        if H.shape == WD.shape == (grid, grid):
            return _readonly(H), _readonly(WD)
    except (OSError, KeyError, ValueError):
        pass
    H, WD = compute_tables(grid)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp.npz")
        np.savez(tmp, h=H, wd=WD)
        os.replace(tmp, path)  # atomic: concurrent workers agree on one file
    except OSError as exc:
        logger.info("merge tables not cached at %s: %s", path, exc)
    return _readonly(H), _readonly(WD)


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a
