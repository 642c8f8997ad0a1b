"""The training layer's entry points: ``fit`` and ``partial_fit`` of every estimator.

The estimators translate their parameters into a :class:`~dsvm.training.spec.FitSpec` and call
these; the result is a :class:`~dsvm.training.record.FittedModel` they publish as attributes.
"""

from __future__ import annotations

from typing import Any

from dsvm.io.checkpoints import check_checkpoint_path
from dsvm.training.auto_solver import resolve_solver
from dsvm.training.cocoa import fit_cocoa
from dsvm.training.nesvm import fit_nesvm
from dsvm.training.record import FittedModel
from dsvm.training.scaling import check_scale, unfold_record
from dsvm.training.spec import FitSpec
from dsvm.training.stochastic import fit_stochastic, partial_fit_stochastic


def fit(spec: FitSpec, X: Any, y: Any = None, *, sample_weight: Any = None,
        validation: Any = None, init: Any = None, resume: bool = False,
        warm: Any = None) -> FittedModel:
    """Train for up to ``spec.max_epochs`` epochs (NESVM: data passes).

    ``init``: a fitted model NESVM starts from; ``warm``: the estimator itself when NESVM
    continues its current model (``warm_start=True``); ``resume``: continue from
    ``spec.checkpoint`` when it exists (stochastic solvers).
    """
    if spec.checkpoint is not None:  # before any work: checkpoint=notes.txt is refused now
        check_checkpoint_path(spec.checkpoint)
    spec = resolve_solver(spec, validation=validation, init=init, warm=warm)
    check_scale(spec.params)
    record = _fit(spec, X, y, sample_weight=sample_weight, validation=validation, init=init,
                  resume=resume, warm=warm)
    record.solver = spec.solver
    return unfold_record(record)


def _fit(spec: FitSpec, X: Any, y: Any, *, sample_weight: Any, validation: Any, init: Any,
         resume: bool, warm: Any) -> FittedModel:
    if spec.solver == "nesvm":
        if spec.params.get("early_stopping"):
            raise ValueError("early_stopping covers the stochastic solvers; solver='nesvm' "
                             "stops on tol (its passes are exact: nothing to hold out).")
        if spec.checkpoint is not None or resume:
            raise ValueError(
                "checkpoint= and resume= cover the stochastic solvers; solver='nesvm' is a "
                "deterministic full-gradient method: rerun it, or warm-start it from a model "
                "(warm_start=True or init=).")
        return fit_nesvm(spec, X, y, sample_weight, validation=validation, init=init, warm=warm)
    if spec.solver == "cocoa":
        if init is not None or warm is not None:
            raise ValueError("solver='cocoa' starts from zero duals (w = 0); init= and "
                             "warm_start need solver='nesvm'.")
        return fit_cocoa(spec, X, y, sample_weight, validation=validation, resume=resume)
    if init is not None:
        raise ValueError(f"init= needs solver='nesvm'; solver={spec.solver!r} trains from zero "
                         "(use partial_fit to continue a fit).")
    if spec.solver == "bsgd" and spec.params.get("class_weight") is not None:
        raise ValueError("solver='bsgd' supports neither sample weights nor class_weight; use a "
                         "kernel map (kernel='nystroem') with a linear solver.")
    return fit_stochastic(spec, X, y, sample_weight, validation=validation, resume=resume)


def partial_fit(spec: FitSpec, previous: FittedModel | None, X: Any, y: Any = None, *,
                classes: Any = None, sample_weight: Any = None,
                validation: Any = None) -> FittedModel:
    """One epoch over ``X``, continuing ``previous`` (None: the first call)."""
    spec = resolve_solver(spec, partial=True,
                          previous=None if previous is None else previous.solver or None)
    if spec.solver == "cocoa":
        raise ValueError(
            "solver='cocoa' keeps a dual variable per training row and has no partial_fit; "
            "call fit (resume a long fit from checkpoint=).")
    if spec.solver == "nesvm":
        raise ValueError(
            "solver='nesvm' is a full-gradient method and has no partial_fit; call fit "
            "(with warm_start=True to continue from the current model).")
    if spec.params.get("class_weight") == "balanced":
        raise ValueError(
            "class_weight='balanced' needs the class counts of all the data, which partial_fit "
            "does not see; pass the weights as a dict (e.g. from sklearn.utils.class_weight."
            "compute_class_weight on a large enough sample of the labels).")
    record = partial_fit_stochastic(spec, previous, X, y, sample_weight, classes=classes,
                                    validation=validation)
    record.solver = spec.solver
    return unfold_record(record)
