"""Fixtures for the data-layer tests: small dense and CSR problems, libsvm text, shared data.

Every test writes real zarr stores under ``tmp_path`` (or fsspec ``memory://``); nothing is
mocked. The real datasets live in ``../shared/data`` beside the repository or in
``$DSVM_SHARED_DATA``; tests that need them skip with the reason when they are absent.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[2]


def shared_data_dir() -> Path:
    """``$DSVM_SHARED_DATA`` or the ``shared/data`` directory beside the repository."""
    env = os.environ.get("DSVM_SHARED_DATA")
    return Path(env) if env else (REPO / ".." / "shared" / "data").resolve()


def shared_file(rel: str) -> Path:
    path = shared_data_dir() / rel
    if not path.exists():
        pytest.skip(f"real dataset {rel} not found under {shared_data_dir()} "
                    "(set DSVM_SHARED_DATA to the folder holding a9a/, w8a/, ...)")
    return path


def collect(ds):  # noqa: ANN001, ANN201 - test helper
    """Every chunk of a dataset, stacked: (X dense ndarray or CSR matrix, y, sample_weight)."""
    blocks = [ds.read_chunk(i) for i in range(ds.n_chunks)]
    if ds.layout == "dense":
        X = np.concatenate([b.X for b in blocks]) if blocks else np.zeros((0, ds.n_features))
    else:
        X = sp.vstack([b.to_matrix() for b in blocks]).tocsr() if blocks else sp.csr_matrix(
            (0, ds.n_features))
    y = np.concatenate([b.y for b in blocks]) if blocks else np.zeros(0)
    sw = None
    if ds.has_sample_weight:
        sw = np.concatenate([b.sample_weight for b in blocks])
    return X, y, sw


def write_libsvm(path: Path, X, y) -> Path:  # noqa: ANN001 - test helper
    """svmlight text with 1-based indices and repr() values (exactly representable)."""
    X = sp.csr_matrix(X)
    lines = []
    for i in range(X.shape[0]):
        row = X.getrow(i)
        order = np.argsort(row.indices)
        feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in
                         zip(row.indices[order], row.data[order]))
        lines.append(f"{float(y[i])!r} {feats}".rstrip())
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def dense_problem(rng):  # noqa: ANN001, ANN201
    """203 x 6 float64 with some exact zeros, labels in {-1, 1}: not a multiple of any chunk."""
    X = rng.standard_normal((203, 6))
    X[rng.random(X.shape) < 0.2] = 0.0
    y = np.where(rng.random(203) < 0.4, 1.0, -1.0)
    return X, y


@pytest.fixture
def csr_problem(rng):  # noqa: ANN001, ANN201
    """250 x 40 CSR (5% dense) with empty rows, and rows 40..119 all empty (a whole empty chunk
    for chunk sizes <= 40), labels in {-1, 1}."""
    X = sp.random(250, 40, density=0.05, format="lil", random_state=7)
    X[40:120] = 0
    X[7] = 0
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    y = np.where(rng.random(250) < 0.5, 1.0, -1.0)
    return X, y


@pytest.fixture
def memory_url() -> str:
    """A fresh fsspec memory:// location, removed afterwards."""
    import fsspec

    url = f"memory://dsvm-tests/{uuid.uuid4().hex}/ds.zarr"
    yield url
    fs = fsspec.filesystem("memory")
    root = url[len("memory://"):].rsplit("/", 1)[0]
    if fs.exists(root):
        fs.rm(root, recursive=True)
