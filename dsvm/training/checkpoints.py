"""Checkpoints in a fit: the state after every epoch written, and restored on ``resume=True``.

The file format is :mod:`dsvm.io.checkpoints`; this module turns a fit's state into a
checkpoint record and back, and refuses to resume a checkpoint written for another problem.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from dsvm.data.order import epoch_chunk_order
from dsvm.io.checkpoints import Checkpoint
from dsvm.io.checkpoints import load_checkpoint as _load
from dsvm.solvers.base import SolverState, selection_of
from dsvm.solvers.registry import SOLVERS
from dsvm.training.spec import FitSpec

# The parameters a resumed fit must share with the fit that wrote the checkpoint: they define the
# problem and the solver's updates. (max_epochs, tol, verbose, client, ... may change.)
RESUME_MUST_MATCH = ("solver", "loss", "alpha", "fit_intercept", "batch_size", "average",
                     "penalty", "l1_ratio", "mu", "mu0", "class_weight")


def _decode_selection(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
    """Averaged Pegasos' model selection (the only solver with one so far)."""
    selection = selection_of(SOLVERS["pegasos"](average=True))
    assert selection is not None
    return selection.decode(meta, arrays)


def load_checkpoint(path: str | os.PathLike, storage_options: dict | None = None) -> Checkpoint:
    """Read a checkpoint written by a fit with ``checkpoint=path`` (never unpickles).

    Raises :class:`dsvm.exceptions.ModelFormatError` for a file that is not a dsvm checkpoint.
    """
    return _load(path, storage_options, decode_selection=_decode_selection)


def checkpoint_of(spec: FitSpec, state: SolverState, *, history: list[dict[str, Any]],
                  converged: bool, classes: np.ndarray | None, seed: int, n_streams: int,
                  n_features: int, source: Any) -> Checkpoint:
    """The checkpoint of a fit after the epochs in ``history`` (all epochs so far) of the rows
    of ``source`` (a :class:`dsvm.data.sources.Source`)."""
    n_chunks = source.n_chunks
    return Checkpoint(
        epoch=len(history),
        coef=state.coef, intercept=state.intercept,
        avg_coef=state.avg_coef, avg_intercept=state.avg_intercept,
        t=float(state.t), n_avg=float(state.n_avg), eta0=float(state.eta0),
        extra=dict(state.extra),
        classes=np.asarray(classes if classes is not None else np.zeros(0)),
        seed=int(seed), n_streams=int(n_streams), n_features=int(n_features),
        converged=bool(converged), params=spec.jsonable_params(), history=history,
        next_chunk_order=epoch_chunk_order(int(seed), len(history), n_chunks).tolist(),
        source=source.describe(), estimator=spec.estimator,
        selection=None if state.selection is None else state.selection.copy(),
        n_samples=input_rows(source),
    )


def input_rows(source: Any) -> int | None:
    """The rows of the input under ``source``'s wrappers (its chunks held out for early
    stopping, its scaling), which a resume of the same fit sees whole (None: not counted)."""
    while getattr(source, "inner", None) is not None:
        source = source.inner
    return source.n_samples


def check_resumable(spec: FitSpec, ckpt: Checkpoint, source: Any, dtype: np.dtype,
                    path: str) -> None:
    """Refuse to resume a checkpoint written for another problem (its parameters, or the
    rows of ``source``), naming what differs."""
    n_features, rows = source.n_features, input_rows(source)
    if rows is not None and ckpt.n_samples is not None and rows != ckpt.n_samples:
        # (other rows: the model went on silently, trained partly on data it was not for)
        raise ValueError(
            f"Cannot resume from {path}: it was written by a fit on {ckpt.n_samples:,} rows "
            f"({ckpt.source}), but this fit's data ({source.describe()}) has {rows:,}. Resume "
            "on the same data, or start over (without resume, or a new checkpoint).")
    if ckpt.estimator != spec.estimator:
        raise ValueError(f"Checkpoint {path} was written by {ckpt.estimator}, not "
                         f"{spec.estimator}.")
    params = spec.jsonable_params()  # compared as the checkpoint recorded them
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


def state_of(ckpt: Checkpoint) -> SolverState:
    """The solver state a checkpoint holds (copies: the checkpoint stays untouched)."""
    return SolverState(
        coef=ckpt.coef.copy(), intercept=ckpt.intercept.copy(), t=ckpt.t,
        avg_coef=None if ckpt.avg_coef is None else ckpt.avg_coef.copy(),
        avg_intercept=None if ckpt.avg_intercept is None else ckpt.avg_intercept.copy(),
        n_avg=ckpt.n_avg, eta0=ckpt.eta0, extra={k: v.copy() for k, v in ckpt.extra.items()},
        selection=None if ckpt.selection is None else ckpt.selection.copy(),
    )
