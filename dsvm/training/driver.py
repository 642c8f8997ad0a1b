"""The one epoch loop of every fit: a strategy runs the epochs, the loop does the rest.

A method family (stochastic epochs and the CV grid: :mod:`dsvm.training.loop`; CoCoA+ rounds:
:mod:`dsvm.training.cocoa`; NESVM passes: :mod:`dsvm.training.nesvm`) is an
:class:`EpochStrategy`: a generator of :class:`EpochStep` s, one per epoch (or pass), that
reads :attr:`Loop.converged` after each step it yields and ends when it is set. The loop
(:func:`drive`) owns what every family repeated: scoring on validation data or held-out chunks
where the family does not score itself, the history, the progress line, the stopping decision
and its reason, and the callbacks after each epoch (checkpoint writes, the ``EPOCH_HOOKS`` of a
detached job, the CV grid's tracker), in the order the family lists them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dsvm.solvers.base import SolverState
from dsvm.training.progress import EpochProgress


@dataclass
class EpochStep:
    """What one epoch hands the loop."""

    epoch: int  # 0-based
    record: dict[str, Any]  # its history record (appended by the loop)
    state: SolverState | None = None  # the model after it, where it is here (else None)
    held: Any = None  # the model where the engine holds it (on a cluster a future)
    scored: dict[str, Any] | None = None  # an earlier record this epoch scored (one epoch late)
    stop: str = ""  # the family's own reason to stop after this epoch ("": none)
    extra: dict[str, Any] = field(default_factory=dict)  # what a family's callbacks also get


@dataclass
class EpochDecision:
    """What a callback may change: the held outcome the next epoch starts from (None: keep it),
    and a reason to stop after this epoch ("": go on)."""

    held: Any = None  # what replaces the held outcome (made by engine.apply from it)
    stop: str = ""


@dataclass
class Loop:
    """The loop's state, which the strategy reads between its steps."""

    history: list[dict[str, Any]]
    converged: bool = False
    reason: str = ""


class Stopping(Protocol):
    """The stopping decision of a family: a reason to stop after ``step`` ("": go on), read
    after ``step``'s record joined the history; and the line that says so."""

    def decide(self, step: EpochStep, loop: Loop) -> str: ...

    def announce(self, epoch: int, reason: str) -> None: ...


class EpochStrategy(Protocol):
    """One method family's epochs: yields a step per epoch until ``loop.converged`` (or its
    epochs run out); ``adopt(held)`` makes the next epoch start from a callback's model."""

    def epochs(self, loop: Loop) -> Generator[EpochStep, None, None]: ...

    def adopt(self, held: Any) -> None: ...


# after an epoch: (step, loop) -> a decision or None
EpochCallback = Callable[[EpochStep, Loop], "EpochDecision | None"]


@dataclass
class Scoring:
    """What the loop measures of each epoch's model when the family does not: the accuracy
    (R^2) on validation data into ``val_accuracy``, the objective on chunks held out for early
    stopping into ``holdout_objective``."""

    validate: Callable[[SolverState], float] | None = None
    holdout: Callable[[SolverState], float] | None = None

    def __call__(self, step: EpochStep) -> None:
        if self.validate is None and self.holdout is None:
            return
        assert step.state is not None  # (a strategy brings the model here when scored)
        if self.validate is not None:
            step.record["val_accuracy"] = self.validate(step.state)
        if self.holdout is not None:
            step.record["holdout_objective"] = self.holdout(step.state)


def drive(strategy: EpochStrategy, *, history: list[dict[str, Any]], progress: EpochProgress,
          stopping: Stopping, callbacks: Sequence[EpochCallback] = (),
          scoring: Scoring | None = None, reason: str = "") -> Loop:
    """Run ``strategy``'s epochs: score each, record it, show it, decide whether to stop, call
    ``callbacks`` in order. Returns the loop (history, whether it converged and why; ``reason``
    when it ran out of epochs)."""
    loop = Loop(history, reason=reason)
    try:
        with contextlib.closing(strategy.epochs(loop)) as steps:
            for step in steps:
                after_epoch(step, loop, strategy, progress, stopping, callbacks, scoring)
    finally:
        progress.close()
    return loop


def after_epoch(step: EpochStep, loop: Loop, strategy: EpochStrategy, progress: EpochProgress,
                stopping: Stopping, callbacks: Sequence[EpochCallback],
                scoring: Scoring | None) -> None:
    """Everything the loop does with one epoch's step, in order."""
    if scoring is not None:
        scoring(step)
    loop.history.append(step.record)
    progress.update(step.record, step.scored)
    reason = stopping.decide(step, loop) or step.stop
    if reason:
        stop(loop, stopping, step.epoch, reason)
    for callback in callbacks:
        decision = callback(step, loop)
        if decision is None:
            continue
        if decision.held is not None:
            strategy.adopt(decision.held)
        if decision.stop and not loop.converged:
            stop(loop, stopping, step.epoch, decision.stop)


def stop(loop: Loop, stopping: Stopping, epoch: int, reason: str) -> None:
    loop.converged, loop.reason = True, reason
    stopping.announce(epoch + 1, reason)
