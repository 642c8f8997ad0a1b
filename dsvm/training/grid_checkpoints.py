"""Checkpoints of a grid of alphas (:mod:`dsvm.training.grid`): the stacked state after every
epoch, and the grid's own bookkeeping replayed from the history on resume.

The stacked state (every candidate's weights, averages, step sizes and the frozen mask) goes
into an ordinary checkpoint; what the :class:`~dsvm.training.grid.GridTracker` knows (each
candidate's held-out scores and objectives, its stopping rule, the epochs it trained, the
counters it froze at) is in the history records it writes (``grid_scores``,
``grid_objectives``, ``grid_frozen``, ``grid_counters``), and :func:`replay` rebuilds it from
them, so that a resumed grid takes the decisions the uninterrupted one took. The alphas (and
the other axes of the grid, only those given: ``grid_l1_ratios``, ``grid_losses``,
``grid_class_weights``), ``cv_fraction`` and ``cv`` (the folds) are recorded with the
parameters and must match on resume: a checkpoint of another grid is refused.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from dsvm.io.checkpoints import save_checkpoint
from dsvm.training.checkpoints import checkpoint_of, state_of
from dsvm.training.grid_axes import AXES, GridAxes
from dsvm.training.prepare import resume_checkpoint
from dsvm.training.spec import FitSpec


def grid_params(spec: FitSpec, axes: Any, cv_fraction: float,
                cv: int | None = None) -> FitSpec:
    """``spec`` with the grid's definition among its parameters (what a checkpoint records;
    ``cv`` only with folds and the other axes only when given, so that a held-out share's
    grid of alphas records what it did before them). ``axes``: a
    :class:`~dsvm.training.grid_axes.GridAxes`, or the alphas alone."""
    if not isinstance(axes, GridAxes):
        axes = GridAxes(np.asarray(axes, np.float64))
    spec = spec.with_params(grid_alphas=[float(a) for a in axes.alphas],
                            cv_fraction=float(cv_fraction), **axes.jsonable())
    return spec if cv is None else spec.with_params(cv=int(cv))


def resumed(spec: FitSpec, source: Any, axes: Any, cv_fraction: float,
            cv: int | None = None) -> Any:
    """The checkpoint a grid resumes from (None: none yet), refused when it was written for
    other alphas, another held-out share or other folds."""
    ckpt = resume_checkpoint(spec, source)
    if ckpt is None:
        return None
    check_same_grid(spec, ckpt, axes, cv_fraction, cv)
    return ckpt


def check_same_grid(spec: FitSpec, ckpt: Any, axes: Any, cv_fraction: float,
                    cv: int | None = None) -> None:
    """Refuse a checkpoint written for other alphas, another held-out share or other folds
    (CoCoA+'s grid, :mod:`dsvm.training.cocoa_grid`, loads its own checkpoint)."""
    asked = {"cv": None, **{f"grid_{many}": None for many in AXES},
             **grid_params(spec, axes, cv_fraction, cv).params}
    for name in ("grid_alphas", *(f"grid_{many}" for many in AXES), "cv_fraction", "cv"):
        if ckpt.params.get(name) != asked[name]:
            path = os.fspath(spec.checkpoint or "")
            raise ValueError(f"Cannot resume from {path}: it was written with "
                             f"{name}={ckpt.params.get(name)!r} but this grid has "
                             f"{name}={asked[name]!r}.")


def restore(record: Any, ckpt: Any) -> None:
    """The fit's record continues from the checkpoint: its state and history."""
    record.state = state_of(ckpt)
    record.history = [dict(h) for h in ckpt.history]
    record.converged = ckpt.converged


def replay(tracker: Any, history: list[dict[str, Any]]) -> None:
    """Rebuild ``tracker``'s bookkeeping from the history its callbacks wrote, epoch by epoch
    as :meth:`GridTracker.__call__` did: the epochs run, the scores recorded one epoch late,
    the stopping rules' observations, the freezes and their counters."""
    report, active = tracker.report, tracker.active
    for i, rec in enumerate(history):
        report.epochs_run[active] += 1
        earlier = history[i - 1] if i > 0 else {}
        if "grid_objectives" in earlier:
            objectives = np.asarray(earlier["grid_objectives"], np.float64)
            report.scores.append(np.asarray(earlier["grid_scores"], np.float64))
            report.objectives.append(objectives)
            if "grid_split_scores" in earlier:
                report.split_scores = np.asarray(earlier["grid_split_scores"], np.float64)
            for k in np.flatnonzero(active):
                tracker.rules[k].observe(float(objectives[k]))
        frozen = [int(k) for k in rec.get("grid_frozen", [])]
        if frozen:
            counters = tuple(float(c) for c in rec["grid_counters"])
            report.counters.update({k: counters for k in frozen})
            active[frozen] = False
    tracker.checked = bool(history)


def save(spec: FitSpec, state: Any, history: list[dict[str, Any]], converged: bool,
         record: Any, source: Any) -> None:
    """The checkpoint of the grid after the epochs in ``history``."""
    assert spec.checkpoint is not None  # (a saver is made only with checkpoint=)
    save_checkpoint(spec.checkpoint, checkpoint_of(
        spec, state, history=history, converged=converged, classes=record.classes,
        seed=record.seed, n_streams=record.n_streams, n_features=record.n_features_in,
        source=source))
