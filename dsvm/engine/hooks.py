"""Per-epoch callbacks that code around a fit (a detached job) adds without new parameters.

A detached job (:mod:`dsvm.distributed.jobs`) runs ``estimator.fit`` inside a task and needs to
publish progress after every epoch and to stop when cancelled. It sets :data:`EPOCH_HOOKS` for
the duration of the fit; the training loop calls each hook after each epoch with
``(spec, state, history, converged)`` (the fit's :class:`dsvm.training.spec.FitSpec`). A
context variable keeps concurrent fits in one process (threads of a worker) apart.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

EpochHook = Callable[[Any, Any, list, bool], None]

EPOCH_HOOKS: ContextVar[tuple[EpochHook, ...]] = ContextVar("dsvm_epoch_hooks", default=())


@contextlib.contextmanager
def epoch_hook(hook: EpochHook) -> Iterator[None]:
    """Call ``hook`` after every epoch of fits run inside this block (in this context)."""
    token = EPOCH_HOOKS.set(EPOCH_HOOKS.get() + (hook,))
    try:
        yield
    finally:
        EPOCH_HOOKS.reset(token)
