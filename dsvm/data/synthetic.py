"""Synthetic datasets from a known random linear model, generated chunk by chunk.

Used for tests (the generating model's accuracy / R^2 is a reference) and for the out-of-core
benchmarks (any size, bounded memory). Features are i.i.d. standard normal.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from dsvm.data.attrs import DEFAULT_CODEC
from dsvm.data.blocks import DenseBlock
from dsvm.data.dataset import Dataset
from dsvm.data.writer import DatasetWriter

GENERATION_ROWS = 8192  # rows drawn per random stream; the data do not depend on chunk_rows
TASKS = ("classification", "regression")


def _model(seed: int, n_features: int, task: str, n_classes: int) -> tuple[np.ndarray, Any]:
    """The generating model: w with unit expected norm, and a small intercept b."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
    k = n_classes if task == "classification" and n_classes > 2 else 1
    w = rng.standard_normal((n_features, k)) / math.sqrt(n_features)
    b = 0.1 * rng.standard_normal(k)
    if k == 1:
        return w[:, 0], float(b[0])
    return w, b


def synthetic_block(
    g: int, n_rows: int, n_features: int, *, task: str, dtype: np.dtype, seed: int,
    noise: float, w: np.ndarray, b: Any,
) -> DenseBlock:
    """Generation block ``g`` (rows g*GENERATION_ROWS ...), from its own random stream."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, g)))
    X = rng.standard_normal((n_rows, n_features), dtype=dtype)
    scores = X @ w.astype(dtype) + np.asarray(b, dtype=dtype)
    scores = scores.astype(np.float64) + noise * rng.standard_normal(scores.shape)
    if task == "regression":
        y = scores
    elif scores.ndim == 1:
        y = np.where(scores >= 0.0, 1.0, -1.0)
    else:
        y = np.argmax(scores, axis=1).astype(np.float64)
    return DenseBlock(X=X, y=y)


def write_synthetic(
    dst: str | os.PathLike[str],
    n_samples: int,
    n_features: int,
    *,
    task: str = "classification",
    chunk_rows: int | None = None,
    dtype: Any = "float32",
    seed: int = 0,
    noise: float = 0.1,
    n_classes: int = 2,
    overwrite: bool = False,
    storage_options: dict | None = None,
    codec: str = DEFAULT_CODEC,
) -> Dataset:
    """Write a dense dataset drawn from a random linear model, in bounded memory.

    Classification: y = sign(X w + b + noise * e) in {-1, 1}, or for ``n_classes > 2``
    y = argmax(X W + b + noise * e) in {0, ..., n_classes - 1}. Regression: y = X w + b + noise * e.
    X and e are standard normal; w has entries N(0, 1/n_features). The model is stored in the
    ``generator`` attribute (``w``, ``b``, ``task``, ``noise``, ``seed``, ``n_classes``), so a
    test can score the generating model. The data depend on ``seed`` but not on ``chunk_rows``.
    """
    from dsvm.data.planning import _check_dtype, _check_positive_int, auto_chunk_rows

    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; got {task!r}")
    n_samples = int(_check_positive_int("n_samples", n_samples, allow_none=False) or 0)
    n_features = int(_check_positive_int("n_features", n_features, allow_none=False) or 0)
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise ValueError(f"n_classes must be an int >= 2; got {n_classes!r}")
    if not (isinstance(noise, (int, float)) and math.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a finite float >= 0; got {noise!r}")
    dt = _check_dtype(dtype)
    rows = _check_positive_int("chunk_rows", chunk_rows) or auto_chunk_rows(
        "dense", n_features, dt, n_samples=n_samples)
    w, b = _model(seed, n_features, task, n_classes)
    generator = {"task": task, "seed": int(seed), "noise": float(noise),
                 "n_classes": int(n_classes) if task == "classification" else None,
                 "x_distribution": "standard normal", "w": w, "b": b}
    provenance = {"source": ["synthetic"], "converter": "dsvm.data.write_synthetic"}
    with DatasetWriter(dst, n_features=n_features, layout="dense", dtype=dt, chunk_rows=rows,
                       provenance=provenance, overwrite=overwrite,
                       storage_options=storage_options, codec=codec) as writer:
        writer.update_attrs({"generator": generator})
        for g, start in enumerate(range(0, n_samples, GENERATION_ROWS)):
            m = min(GENERATION_ROWS, n_samples - start)
            writer.append(synthetic_block(g, m, n_features, task=task, dtype=dt, seed=seed,
                                          noise=float(noise), w=w, b=b))
    assert writer.dataset is not None
    return writer.dataset
