"""Exceptions raised by dsvm.

Each subclasses the built-in a caller would already catch, so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from typing import Any


class DataFormatError(ValueError):
    """Input data is malformed: the message names the file, line or chunk and the bad value."""


class DataLayoutError(ValueError):
    """A dataset's arrays disagree with each other (lengths, chunking, incomplete writes)."""


class ModelFormatError(ValueError):
    """A file is not a dsvm model (or was written by an incompatible version)."""


class WorkerLostError(RuntimeError):
    """The cluster lost the workers a fit needed and could not recover in time."""


class DataOrderWarning(UserWarning):
    """Labels are clustered across chunks (a sorted file): a fit mixes rows over a window of
    chunks but may train on fewer streams than workers; ``shuffle=True`` (``dsvm convert
    --shuffle``) spreads the classes over every chunk."""


class DataTypeWarning(UserWarning):
    """A DataFrame column of text holds numbers but for a few values (a missing-value marker
    such as ``"?"``): it is hashed as categories, not used as a number."""


class SchedulerLostError(RuntimeError):
    """The connection to the Dask scheduler was lost during a fit."""


class ClusterConnectionError(ConnectionError):
    """No Dask scheduler answered at the given address (or scheduler file) in time."""


class UnguardedScriptError(RuntimeError):
    """A script asked dsvm to start its own cluster from top-level code outside
    ``if __name__ == "__main__":``, which the cluster's worker processes would run again."""


def __getattr__(name: str) -> Any:
    # ConvergenceWarning subclasses scikit-learn's (so that its filters and
    # ``warnings.simplefilter("ignore", sklearn.exceptions.ConvergenceWarning)`` cover dsvm's), but
    # importing scikit-learn costs over a second: it is made on first use, not when the command
    # line imports this module for its error classes.
    if name in globals():  # (made by an earlier call)
        return globals()[name]
    if name == "ConvergenceWarning":
        from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

        cls = type("ConvergenceWarning", (SklearnConvergenceWarning,), {
            "__module__": __name__,
            "__doc__": "A fit ended without converging: it stopped at ``max_epochs`` while "
                       "still improving by more than ``tol``, or its model is worse than "
                       "predicting a constant (unscaled features, diverging steps).",
        })
        globals()[name] = cls
        return cls
    if name == "FitFailedWarning":
        cls = type("FitFailedWarning", (__getattr__("ConvergenceWarning"),), {
            "__module__": __name__,
            "__doc__": "A fit failed: its model predicts no better than a constant and its "
                       "objective did not come down from the zero model's (unscaled features, "
                       "targets in large units, diverging steps); see dsvm.training.outcome. "
                       "The model is published with ``outcome_.failed`` True; "
                       "``warnings.simplefilter('error', FitFailedWarning)`` makes it an "
                       "error; ``dsvm train`` exits 2 and saves nothing without --keep-failed.",
        })
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` naming the first frame outside dsvm and scikit-learn: the user's call
    of ``fit``, ``convert`` or ``predict`` (or of ``cross_val_score``), however deep in dsvm
    the warning is raised, as pandas' ``find_stack_level`` does. A fixed ``stacklevel`` named
    dsvm's own lines once a solver's path changed depth (the in-process CoCoA+ warning pointed
    at estimators/base.py), and scikit-learn's ``fit`` wrapper is one frame more."""
    import os
    import sys
    import warnings

    import sklearn

    skipped = tuple(os.path.dirname(os.path.abspath(m.__file__ or "")) + os.sep
                    for m in (sys.modules[__name__.split(".")[0]], sklearn))
    frame, level = sys._getframe(1), 2  # the caller of warn(): stacklevel 2 from here
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            skipped):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
