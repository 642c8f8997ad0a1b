"""What runs after each epoch of any fit (:func:`dsvm.training.driver.drive`'s callbacks): the
checkpoint write and the ``EPOCH_HOOKS`` of code around the fit (a detached job publishes its
progress and checks for cancellation there)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dsvm.engine.hooks import EPOCH_HOOKS
from dsvm.io.checkpoints import save_checkpoint
from dsvm.solvers.base import SolverState
from dsvm.training.checkpoints import checkpoint_of
from dsvm.training.driver import EpochStep, Loop
from dsvm.training.record import FittedModel
from dsvm.training.spec import FitSpec


def write_checkpoint(spec: FitSpec, record: FittedModel, source: Any, state: SolverState,
                     history: list[dict[str, Any]], converged: bool) -> None:
    """``spec.checkpoint`` with ``state`` after the epochs of ``history``."""
    assert spec.checkpoint is not None  # (called only for a fit with one)
    save_checkpoint(spec.checkpoint, checkpoint_of(
        spec, state, history=history, converged=converged, classes=record.classes,
        seed=record.seed, n_streams=record.n_streams, n_features=record.n_features_in,
        source=source))


class CheckpointEachEpoch:
    """Writes the checkpoint after every epoch, with the model the epoch ended with (or the
    one ``model(step, loop)`` gives: NESVM's best point with the run's whole state)."""

    def __init__(self, spec: FitSpec, record: FittedModel, source: Any, *,
                 model: Callable[[EpochStep, Loop], SolverState] | None = None) -> None:
        self.spec, self.record, self.source, self.model = spec, record, source, model

    def __call__(self, step: EpochStep, loop: Loop) -> None:
        state = step.state if self.model is None else self.model(step, loop)
        assert state is not None  # (a strategy brings the model here for it)
        write_checkpoint(self.spec, self.record, self.source, state, loop.history,
                         loop.converged)


class HooksEachEpoch:
    """Calls the ``EPOCH_HOOKS`` set when the fit began with ``(spec, state, history,
    converged)`` (NESVM's hooks are given a copy of the history)."""

    def __init__(self, spec: FitSpec, *, copy_history: bool = False) -> None:
        self.spec, self.hooks, self.copy = spec, EPOCH_HOOKS.get(), copy_history

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def __call__(self, step: EpochStep, loop: Loop) -> None:
        for hook in self.hooks:
            history = list(loop.history) if self.copy else loop.history
            hook(self.spec, step.state, history, loop.converged)
