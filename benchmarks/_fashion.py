"""Fashion-MNIST from ../shared/data/fashion_mnist (IDX, gzip): pixels / 255 as float32."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np

DATA = Path(os.environ.get("DSVM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared/data"))


def _idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_fashion(split: str) -> tuple[np.ndarray, np.ndarray]:
    """(X (n, 784) float32 in [0, 1], y (n,) int labels 0..9) for split "train" or "t10k"."""
    base = DATA / "fashion_mnist"
    X = _idx(base / f"{split}-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255.0
    y = _idx(base / f"{split}-labels-idx1-ubyte.gz").astype(np.int64)
    return X, y
