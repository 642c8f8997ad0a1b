"""Training checkpoints: the full state of a fit after an epoch, in the npz + JSON envelope.

A checkpoint holds the solver's arrays (``state.coef``, ``state.intercept``, the running
averages ``state.avg_*`` and any solver-specific ``state.extra.*``), the ``classes``, the
solver's model-selection state (``state.extrapolation.*``: averaged Pegasos' snapshots, see
:mod:`dsvm.solvers.extrapolation`), and one JSON document with the scalars (step counter ``t``,
averaging weight ``n_avg``, ``eta0``), the fit's seed and stream count, the epoch reached, the
history, the estimator's parameters and the chunk order the next epoch will use. Floats in JSON
are written with ``repr`` precision, so a resumed fit continues from bit-identical state.

Why the seed is the whole RNG state: every random choice of a fit is a pure function of
(seed, epoch, chunk) (see :mod:`dsvm.data.order`), so there is no generator state to capture;
the next epoch's chunk order is stored anyway, for inspection and as a check on resume.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.data.location import CHECKPOINT, check_replaceable
from dsvm.io.envelope import decode, encode, exists, read_bytes, write_bytes

CHECKPOINT_FORMAT = "dsvm-checkpoint"
CHECKPOINT_VERSION = 1
_STATE_ARRAYS = ("coef", "intercept", "avg_coef", "avg_intercept")
_SELECTION = "state.extrapolation."  # the key kept from format version 1

SelectionDecoder = Callable[[dict[str, Any], dict[str, np.ndarray]], Any]


@dataclass
class Checkpoint:
    """The state of a fit after ``epoch`` epochs (what :func:`load_checkpoint` returns).

    ``selection`` is the solver's model-selection state (an object with ``to_arrays()`` and
    ``to_meta()``, e.g. :class:`dsvm.solvers.extrapolation.Extrapolation`), or None.
    """

    epoch: int
    coef: np.ndarray
    intercept: np.ndarray
    avg_coef: np.ndarray | None
    avg_intercept: np.ndarray | None
    t: float
    n_avg: float
    eta0: float
    extra: dict[str, np.ndarray]
    classes: np.ndarray
    seed: int
    n_streams: int
    n_features: int
    converged: bool
    params: dict[str, Any]
    history: list[dict[str, Any]] = field(default_factory=list)
    next_chunk_order: list[int] = field(default_factory=list)
    source: str = ""
    estimator: str = "SVMClassifier"
    selection: Any = None
    n_samples: int | None = None  # the training rows (None: not counted, or an older file)

    @property
    def extrapolation(self) -> Any:
        """Averaged Pegasos' snapshots and verdict (the ``selection`` of that solver)."""
        return self.selection

    def __repr__(self) -> str:
        return (f"Checkpoint(epoch={self.epoch}, t={self.t:g}, n_features={self.n_features}, "
                f"classes={self.classes.tolist()}, seed={self.seed}, n_streams={self.n_streams})")


def _encode(ckpt: Checkpoint) -> bytes:
    arrays: dict[str, np.ndarray] = {"classes": np.asarray(ckpt.classes)}
    for name in _STATE_ARRAYS:
        value = getattr(ckpt, name)
        if value is not None:
            arrays[f"state.{name}"] = np.asarray(value)
    for name, value in ckpt.extra.items():
        arrays[f"state.extra.{name}"] = np.asarray(value)
    meta: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "estimator": ckpt.estimator,
        "epoch": int(ckpt.epoch),
        "t": float(ckpt.t),
        "n_avg": float(ckpt.n_avg),
        "eta0": float(ckpt.eta0),
        "seed": int(ckpt.seed),
        "n_streams": int(ckpt.n_streams),
        "n_features": int(ckpt.n_features),
        "converged": bool(ckpt.converged),
        "params": ckpt.params,
        "history": ckpt.history,
        "next_chunk_order": [int(c) for c in ckpt.next_chunk_order],
        "source": ckpt.source,
        "n_samples": None if ckpt.n_samples is None else int(ckpt.n_samples),
    }
    if ckpt.selection is not None:
        for name, value in ckpt.selection.to_arrays().items():
            arrays[_SELECTION + name] = value
        meta["extrapolation"] = ckpt.selection.to_meta()
    return encode(arrays, meta)


def save_checkpoint(path: str | os.PathLike, ckpt: Checkpoint,
                    storage_options: dict | None = None) -> None:
    """Write ``ckpt`` to a local path or fsspec URL atomically. It replaces the previous
    checkpoint, never anything else (FileExistsError: a fit's ``checkpoint=notes.txt`` stops
    before the user's notes are lost)."""
    check_checkpoint_path(path, storage_options)
    write_bytes(path, _encode(ckpt), storage_options)


def check_checkpoint_path(path: str | os.PathLike, storage_options: dict | None = None) -> None:
    """Raise unless a checkpoint may be written at ``path``: nothing there, or a checkpoint
    (FileExistsError naming what is there). A fit checks before its first epoch."""
    check_replaceable(os.fspath(path), CHECKPOINT, overwrite=True,
                      storage_options=storage_options)


def checkpoint_exists(path: str | os.PathLike, storage_options: dict | None = None) -> bool:
    return exists(path, storage_options)


def load_checkpoint(path: str | os.PathLike, storage_options: dict | None = None, *,
                    decode_selection: SelectionDecoder | None = None) -> Checkpoint:
    """Read a checkpoint written by a fit with ``checkpoint=path``; never unpickles.

    ``decode_selection(meta, arrays)`` rebuilds the solver's model-selection state (the
    training layer passes the solver's decoder); without it that state is left out.
    Raises :class:`dsvm.exceptions.ModelFormatError` for a file that is not a dsvm checkpoint.
    """
    path = os.fspath(path)
    arrays, meta = decode(read_bytes(path, "checkpoint", storage_options), path=path,
                          fmt=CHECKPOINT_FORMAT, version=CHECKPOINT_VERSION,
                          what="checkpoint", required=("classes",))
    extra = {k[len("state.extra."):]: v for k, v in arrays.items() if k.startswith("state.extra.")}
    selection = None
    if "extrapolation" in meta and decode_selection is not None:
        selection = decode_selection(
            meta["extrapolation"],
            {k[len(_SELECTION):]: v for k, v in arrays.items() if k.startswith(_SELECTION)})
    return Checkpoint(
        epoch=int(meta["epoch"]),
        coef=arrays["state.coef"],
        intercept=arrays["state.intercept"],
        avg_coef=arrays.get("state.avg_coef"),
        avg_intercept=arrays.get("state.avg_intercept"),
        t=float(meta["t"]),
        n_avg=float(meta["n_avg"]),
        eta0=float(meta["eta0"]),
        extra=extra,
        classes=arrays["classes"],
        seed=int(meta["seed"]),
        n_streams=int(meta["n_streams"]),
        n_features=int(meta["n_features"]),
        converged=bool(meta.get("converged", False)),
        params=dict(meta.get("params", {})),
        history=list(meta.get("history", [])),
        next_chunk_order=list(meta.get("next_chunk_order", [])),
        source=str(meta.get("source", "")),
        estimator=str(meta.get("estimator", "SVMClassifier")),
        selection=selection,
        n_samples=None if meta.get("n_samples") is None else int(meta["n_samples"]),
    )
