"""Exceptions raised by dsvm.

Each subclasses the built-in a caller would already catch, so ``except ValueError`` keeps working.
"""

from __future__ import annotations


class DataFormatError(ValueError):
    """Input data is malformed: the message names the file, line or chunk and the bad value."""


class DataLayoutError(ValueError):
    """A dataset's arrays disagree with each other (lengths, chunking, incomplete writes)."""


class ModelFormatError(ValueError):
    """A file is not a dsvm model (or was written by an incompatible version)."""


class WorkerLostError(RuntimeError):
    """The cluster lost the workers a fit needed and could not recover in time."""


class ConvergenceWarning(UserWarning):
    """The solver stopped at ``max_epochs`` before meeting its tolerance."""


class DataOrderWarning(UserWarning):
    """Labels are clustered across chunks (a sorted file): stochastic passes will see classes in
    runs. Convert with ``shuffle=True`` (``dsvm convert --shuffle``)."""


class SchedulerLostError(RuntimeError):
    """The connection to the Dask scheduler was lost during a fit."""
