"""The training layer's entry points: ``fit`` and ``partial_fit`` of every estimator.

The estimators translate their parameters into a :class:`~dsvm.training.spec.FitSpec` and call
these; the result is a :class:`~dsvm.training.record.FittedModel` they publish as attributes.
"""

from __future__ import annotations

from typing import Any

from dsvm.io.checkpoints import check_checkpoint_path
from dsvm.training.auto_solver import resolve_solver, used_width, width_decides
from dsvm.training.cocoa import fit_cocoa
from dsvm.training.engines import engine_for
from dsvm.training.fitdata import FitData
from dsvm.training.inputs import source_of
from dsvm.training.layout import check_continuable, in_space, space_for, to_user_ids
from dsvm.training.nesvm import fit_nesvm, text_of
from dsvm.training.prepare import check_memory_up_front
from dsvm.training.record import FittedModel
from dsvm.training.scaling import feature_stats, scale_stage, stored_stats, unfold_record
from dsvm.training.spec import FitSpec
from dsvm.training.stochastic import fit_stochastic, partial_fit_stochastic
from dsvm.training.streams import stream_stage


def fit(spec: FitSpec, X: Any, y: Any = None, *, sample_weight: Any = None,
        validation: Any = None, init: Any = None, resume: bool = False,
        warm: Any = None) -> FittedModel:
    """Train for up to ``spec.max_epochs`` epochs (NESVM: data passes).

    ``init``: a fitted model NESVM starts from; ``warm``: the estimator itself when NESVM
    continues its current model (``warm_start=True``); ``resume``: continue from
    ``spec.checkpoint`` when it exists (stochastic solvers).

    The stages every solver shares run here, once: what the fit may do is checked before any
    work, the input becomes a source, ``solver="auto"`` is resolved on its shape
    (:mod:`dsvm.training.auto_solver`), the streams are chosen (fewer for a store sorted by
    label: :mod:`dsvm.training.streams`), the rows are scaled (:mod:`dsvm.training.scaling`),
    the solver's family trains in the ids the rows are stored in (a renumbered dataset's:
    :mod:`dsvm.training.layout`), and its model is folded back into raw units and the user's
    feature ids.
    """
    if spec.checkpoint is not None:  # before any work: checkpoint=notes.txt is refused now
        check_checkpoint_path(spec.checkpoint)
    context = {"validation": validation, "init": init, "warm": warm}
    asked, spec = spec, resolve_solver(spec, **context)
    check_combination(spec, init=init, warm=warm, resume=resume,
                      weighted=sample_weight is not None)
    with engine_for(X, spec.client, spec.n_workers) as engine:
        source, text = source_of(X, y, sample_weight, classify=spec.classifies,
                                 chunk_rows=spec.chunk_rows, text_classes=text_of(warm))
        stats = _width_stats(asked, engine, source, context)
        spec = resolve_solver(asked, shape=(source.n_samples,
                                            used_width(stats, source.n_features)), **context)
        spec = stream_stage(spec, engine, source)
        continues = warm_record(spec, warm)
        if continues is not None:
            check_continuable(continues.layout, source, "a warm start")
        fresh = init is None and getattr(warm, "coef_", None) is None  # (NESVM's start)
        space = continues.layout if continues is not None else space_for(spec, source,
                                                                          fresh=fresh)
        source = in_space(source, space)
        check_memory_up_front(spec, engine, source)
        spec, source, scaling = scale_stage(spec, engine, source, continues=continues,
                                            stats=stats if space is None else None)
        data = FitData(engine, source, text, scaling, continues, space)
        record = _fit(spec, data, validation=validation, init=init, resume=resume, warm=warm)
    record.solver = spec.solver
    return to_user_ids(unfold_record(record))


def _width_stats(spec: FitSpec, engine: Any, source: Any, context: dict[str, Any]) -> Any:
    """The rows' column statistics where ``solver="auto"`` hinges on the columns they use
    (None elsewhere): a dataset's stored ones, else measured by the scaling stage's pass, made
    first (the stage reuses them: no second pass)."""
    if not width_decides(spec, (source.n_samples, source.n_features), **context):
        return None
    return stored_stats(source) or feature_stats(engine, source)


def warm_record(spec: FitSpec, warm: Any) -> FittedModel | None:
    """The fit a stochastic solver's warm start continues: the estimator's last (NESVM starts
    from its model instead; None without a warm start)."""
    if warm is None or spec.solver == "nesvm":
        return None
    return getattr(warm, "_fit_record", None)


def check_combination(spec: FitSpec, *, init: Any, warm: Any, resume: bool,
                      weighted: bool = False) -> None:
    """What the solver cannot do with this fit, refused before any work, with the reason."""
    if spec.solver == "nesvm":
        if spec.early_stopping:
            raise ValueError("early_stopping covers the stochastic solvers; solver='nesvm' "
                             "stops on tol (its passes are exact: nothing to hold out).")
    elif spec.solver == "cocoa":
        if init is not None or warm is not None:
            raise ValueError("solver='cocoa' starts from zero duals (w = 0); init= and "
                             "warm_start need solver='nesvm'.")
    elif init is not None:
        raise ValueError(f"init= needs solver='nesvm'; solver={spec.solver!r} trains from zero "
                         "(use partial_fit to continue a fit).")
    if spec.solver == "bsgd" and (weighted or spec.class_weight is not None):
        raise ValueError("solver='bsgd' supports neither sample weights nor class_weight (its "
                         "support-vector merging, papers/001, is stated for unweighted rows); "
                         "use a kernel map (kernel='nystroem') with a linear solver.")


def _fit(spec: FitSpec, data: FitData, *, validation: Any, init: Any, resume: bool,
         warm: Any) -> FittedModel:
    """The solver's family trains on the prepared data."""
    if spec.solver == "nesvm":
        return fit_nesvm(spec, data, validation=validation, init=init, warm=warm,
                         resume=resume)
    if spec.solver == "cocoa":
        return fit_cocoa(spec, data, validation=validation, resume=resume)
    return fit_stochastic(spec, data, validation=validation, resume=resume)


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
    if spec.class_weight == "balanced":
        raise ValueError(
            "class_weight='balanced' needs the class counts of all the data, which partial_fit "
            "does not see; pass the weights as a dict (e.g. from sklearn.utils.class_weight."
            "compute_class_weight on a large enough sample of the labels).")
    record = partial_fit_stochastic(spec, previous, X, y, sample_weight, classes=classes,
                                    validation=validation)
    record.solver = spec.solver
    return to_user_ids(unfold_record(record))
