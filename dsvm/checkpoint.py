"""Training checkpoints: the full state of a fit after an epoch, saved without pickle.

A checkpoint is a NumPy ``.npz`` archive like a model file (:mod:`dsvm.model`): the solver's
arrays (``state.coef``, ``state.intercept``, the running averages ``state.avg_*`` and any
solver-specific ``state.extra.*``), the ``classes``, and one JSON document (``meta``) holding the
scalars (step counter ``t``, averaging weight ``n_avg``, ``eta0``), the fit's seed and stream
count, the epoch reached, the history, the estimator's parameters and the chunk order the next
epoch will use. Floats in JSON are written with ``repr`` precision, so a resumed fit continues
from bit-identical state.

Why the seed is the whole RNG state: every random choice of a fit is a pure function of
(seed, epoch, chunk) (see :mod:`dsvm.data.order`), so there is no generator state to capture;
the next epoch's chunk order is stored anyway, for inspection and as a check on resume.

Writes are atomic: a local file is written beside its target and renamed over it (so a crash
leaves the previous checkpoint intact); on an fsspec URL (s3://, gs://, memory://) the whole
archive is uploaded in one put, which object stores make visible all at once.
"""

from __future__ import annotations

import io
import json
import os
import uuid
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.exceptions import ModelFormatError

CHECKPOINT_FORMAT = "dsvm-checkpoint"
CHECKPOINT_VERSION = 1
_STATE_ARRAYS = ("coef", "intercept", "avg_coef", "avg_intercept")


@dataclass
class Checkpoint:
    """The state of a fit after ``epoch`` epochs (what :func:`load_checkpoint` returns)."""

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
    extrapolation: Any = None  # dsvm.solvers.extrapolation.Extrapolation, or None

    def __repr__(self) -> str:
        return (f"Checkpoint(epoch={self.epoch}, t={self.t:g}, n_features={self.n_features}, "
                f"classes={self.classes.tolist()}, seed={self.seed}, n_streams={self.n_streams})")


def _is_url(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def _encode(ckpt: Checkpoint) -> bytes:
    arrays: dict[str, np.ndarray] = {"classes": np.asarray(ckpt.classes)}
    for name in _STATE_ARRAYS:
        value = getattr(ckpt, name)
        if value is not None:
            arrays[f"state.{name}"] = np.asarray(value)
    for name, value in ckpt.extra.items():
        arrays[f"state.extra.{name}"] = np.asarray(value)
    if ckpt.extrapolation is not None:
        for name, value in ckpt.extrapolation.to_arrays().items():
            arrays[f"state.extrapolation.{name}"] = value
    meta = {
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
    }
    if ckpt.extrapolation is not None:
        meta["extrapolation"] = ckpt.extrapolation.to_meta()
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def save_checkpoint(path: str | os.PathLike, ckpt: Checkpoint,
                    storage_options: dict | None = None) -> None:
    """Write ``ckpt`` to a local path or fsspec URL atomically."""
    path = os.fspath(path)
    payload = _encode(ckpt)
    if _is_url(path):
        import fsspec

        fs, fpath = fsspec.core.url_to_fs(path, **(storage_options or {}))
        fs.pipe_file(fpath, payload)
        return
    path = _local(path)
    tmp = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    try:
        with open(tmp, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def checkpoint_exists(path: str | os.PathLike, storage_options: dict | None = None) -> bool:
    path = os.fspath(path)
    if _is_url(path):
        import fsspec

        fs, fpath = fsspec.core.url_to_fs(path, **(storage_options or {}))
        return bool(fs.exists(fpath))
    return os.path.isfile(_local(path))


def _read_bytes(path: str, storage_options: dict | None) -> bytes:
    if _is_url(path):
        import fsspec

        fs, fpath = fsspec.core.url_to_fs(path, **(storage_options or {}))
        if not fs.exists(fpath):
            raise FileNotFoundError(f"No checkpoint at {path!r}.")
        return bytes(fs.cat_file(fpath))
    local = _local(path)
    if not os.path.isfile(local):
        raise FileNotFoundError(f"No checkpoint at {path!r}.")
    with open(local, "rb") as f:
        return f.read()


def load_checkpoint(path: str | os.PathLike, storage_options: dict | None = None) -> Checkpoint:
    """Read a checkpoint written by a fit with ``checkpoint=path``; never unpickles.

    Raises :class:`dsvm.exceptions.ModelFormatError` for a file that is not a dsvm checkpoint.
    """
    path = os.fspath(path)
    data = _read_bytes(path, storage_options)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            if "meta" not in z.files or "classes" not in z.files:
                raise ModelFormatError(f"{path} is not a dsvm checkpoint: it lacks 'meta'.")
            arrays = {k: z[k] for k in z.files if k != "meta"}
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
    except (zipfile.BadZipFile, ValueError, OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(
            f"{path} is not a dsvm checkpoint (a NumPy .npz with a JSON 'meta' entry): {exc}"
        ) from None
    if meta.get("format") != CHECKPOINT_FORMAT:
        raise ModelFormatError(f"{path} is not a dsvm checkpoint (format {meta.get('format')!r}).")
    if int(meta.get("version", -1)) > CHECKPOINT_VERSION:
        raise ModelFormatError(
            f"{path} was written by a newer dsvm (checkpoint version {meta['version']}; this "
            f"dsvm reads up to {CHECKPOINT_VERSION}). Upgrade dsvm."
        )
    for name, arr in arrays.items():
        if arr.dtype.kind not in "fiuU":  # numbers, or fixed-width text labels
            raise ModelFormatError(f"{path}: array {name!r} has dtype {arr.dtype}, not numeric or text.")
    extra = {k[len("state.extra."):]: v for k, v in arrays.items() if k.startswith("state.extra.")}
    extrapolation = None
    if "extrapolation" in meta:
        from dsvm.solvers.extrapolation import Extrapolation

        prefix = "state.extrapolation."
        extrapolation = Extrapolation.from_parts(
            meta["extrapolation"],
            {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)})
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
        extrapolation=extrapolation,
    )


# -- between an estimator's fit and a checkpoint ---------------------------------------------------
# The parameters a resumed fit must share with the fit that wrote the checkpoint: they define the
# problem and the solver's updates. (max_epochs, tol, verbose, client, ... may change.)
RESUME_MUST_MATCH = ("solver", "loss", "alpha", "fit_intercept", "batch_size", "average",
                     "penalty", "l1_ratio", "mu")


def checkpoint_of(est: Any, state: Any, history: list[dict[str, Any]], converged: bool,
                  n_chunks: int, source: str) -> Checkpoint:
    """The checkpoint of ``est``'s fit after the epochs in ``history`` (all epochs so far)."""
    from dsvm.data.order import epoch_chunk_order

    params = {k: v for k, v in est.get_params(deep=False).items()
              if k != "client" and not isinstance(v, np.random.Generator)}
    return Checkpoint(
        epoch=len(history),
        coef=state.coef, intercept=state.intercept,
        avg_coef=state.avg_coef, avg_intercept=state.avg_intercept,
        t=float(state.t), n_avg=float(state.n_avg), eta0=float(state.eta0),
        extra=dict(state.extra),
        classes=np.asarray(getattr(est, "classes_", np.zeros(0))),  # none for regressors
        seed=int(est.seed_), n_streams=int(est.n_streams_),
        n_features=int(est.n_features_in_), converged=bool(converged),
        params=_jsonable(params), history=history,
        next_chunk_order=epoch_chunk_order(int(est.seed_), len(history), n_chunks).tolist(),
        source=source, estimator=type(est).__name__,
        extrapolation=None if state.extrapolation is None else state.extrapolation.copy(),
    )


def _jsonable(params: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in params.items():
        if isinstance(v, (np.integer, np.floating)):
            v = v.item()
        if isinstance(v, os.PathLike):
            v = os.fspath(v)
        out[k] = v
    return out


def check_resumable(est: Any, ckpt: Checkpoint, n_features: int, dtype: np.dtype,
                    path: str) -> None:
    """Refuse to resume a checkpoint written for another problem, naming what differs."""
    if ckpt.estimator != type(est).__name__:
        raise ValueError(f"Checkpoint {path} was written by {ckpt.estimator}, not "
                         f"{type(est).__name__}.")
    params = est.get_params(deep=False)
    for name in RESUME_MUST_MATCH:
        if name in params and name in ckpt.params and params[name] != ckpt.params[name]:
            raise ValueError(
                f"Cannot resume from {path}: it was written with {name}={ckpt.params[name]!r} "
                f"but this estimator has {name}={params[name]!r}."
            )
    if n_features != ckpt.n_features:
        raise ValueError(f"Cannot resume from {path}: it was written for {ckpt.n_features} "
                         f"features but the data has {n_features}.")
    if np.dtype(ckpt.coef.dtype) != np.dtype(dtype):
        raise ValueError(f"Cannot resume from {path}: its weights are {ckpt.coef.dtype} but the "
                         f"data is {np.dtype(dtype).name}.")


def solver_state_of(ckpt: Checkpoint) -> Any:
    from dsvm.solvers.base import SolverState

    return SolverState(
        coef=ckpt.coef.copy(), intercept=ckpt.intercept.copy(), t=ckpt.t,
        avg_coef=None if ckpt.avg_coef is None else ckpt.avg_coef.copy(),
        avg_intercept=None if ckpt.avg_intercept is None else ckpt.avg_intercept.copy(),
        n_avg=ckpt.n_avg, eta0=ckpt.eta0, extra={k: v.copy() for k, v in ckpt.extra.items()},
        extrapolation=None if ckpt.extrapolation is None else ckpt.extrapolation.copy(),
    )
