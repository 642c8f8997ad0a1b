"""The scaling stage of a fit: statistics in one pass, a scaled view of the source, the model
folded back into raw units at the end (see :mod:`dsvm.features.scaling`).

``scale="auto"`` (the default) scales linear models whose rows have a column (or, for a
regression, a target) larger than :data:`~dsvm.features.scaling.AUTO_LIMIT` in magnitude;
``True`` always, ``False`` never. Kernel maps and BSGD's expansion live in a mapped space that
cannot be folded back: they keep the scaling as the first stage of their map instead
(:mod:`dsvm.features.input_stage`, :func:`dsvm.training.kernel_maps.input_stage`).
``partial_fit`` scales only as the ``fit`` it continues did: a single batch's
statistics are not the data's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dsvm.data.sources import Source, map_source
from dsvm.engine.local import Engine, spread
from dsvm.engine.tasks import ChunkStats
from dsvm.exceptions import warn
from dsvm.features.scaling import (
    AUTO_LIMIT,
    Scaling,
    choose_scaling,
    mean_sq_norm,
    merge_stats,
)
from dsvm.training.layout import stats_in_space
from dsvm.training.progress import fit_note
from dsvm.training.record import FittedModel
from dsvm.training.spec import FitSpec

SCALE_MODES = ("auto", True, False)


def scale_mode(params: Any) -> Any:
    """``scale`` as True, False or "auto" (text from the CLI or a model file accepted)."""
    mode = params.get("scale", "auto")
    if isinstance(mode, str) and mode.lower() in ("true", "false"):
        return mode.lower() == "true"
    return mode


def scalable(params: Any) -> bool:
    """Whether a model of scaled rows can be folded back: a linear model on the rows."""
    kernel = params.get("kernel", "linear")
    return params.get("solver") != "bsgd" and isinstance(kernel, str) and kernel == "linear"


def target_only(scaling: Scaling) -> Scaling | None:
    """``scaling`` without its columns' part (None: it scaled no target)."""
    if not scaling.scales_target:
        return None
    return Scaling(kind="none", factor=np.ones_like(scaling.factor), y_shift=scaling.y_shift,
                   y_scale=scaling.y_scale, largest=scaling.largest)


def feature_stats(engine: Engine, source: Source) -> Any:
    """The per-column statistics of ``source``, gathered by tasks that read their chunks."""
    groups = spread(source.n_chunks, 2 * engine.n_workers)
    return engine.reduce(ChunkStats(), source, groups, merge_stats, name="feature-stats",
                         what="feature statistics for scaling")


def stored_stats(source: Source) -> Any:
    """The statistics a whole dataset's writer kept (None: none kept, or not a whole
    dataset)."""
    return stats_in_space(source)  # (a renumbered store's in the fit's ids: training.layout)


def scale_stage(spec: FitSpec, engine: Engine, source: Source, *,
                continues: FittedModel | None = None,
                stats: Any = None) -> tuple[FitSpec, Any, Scaling | None]:
    """(spec, source, scaling): the source seen through the scaling and, for a scaled target,
    the spec with ``epsilon`` in scaled units. ``continues``: the fit a ``partial_fit`` or a
    warm start continues, whose scaling (or none) the rows go through (no new statistics:
    its state is in its units). ``stats``: the source's column statistics where the fit has
    them already (the choice of its solver took them), else None."""
    mode = scale_mode(spec.params)
    scaling = None if continues is None else continues.scaling
    linear = scalable(spec.params)
    if continues is None and mode is not False and (linear or not spec.classifies):
        stats = stats or stored_stats(source) or feature_stats(engine, source)
        scaling = None if stats is None else choose_scaling(
            stats, mode, fit_intercept=spec.fit_intercept,
            regression=not spec.classifies)
        if scaling is not None and not linear:
            # a kernel regressor: its map keeps the columns' scaling (training.kernel_maps);
            # the target's is folded back here as a linear model's is
            scaling = target_only(scaling)
        if scaling is not None:
            fit_note(scaling.describe(), spec.verbose)
    if scaling is None:
        return spec, source, None
    if scaling.scales_target and spec.params.get("epsilon"):
        spec = spec.with_params(epsilon=float(spec.params["epsilon"]) / scaling.y_scale)
    return spec, map_source(source, scaling), scaling


def warn_unscaled_batch(spec: FitSpec, engine: Engine, source: Source) -> None:
    """Warn on the first ``partial_fit`` of rows in memory with a column that ``fit`` would
    scale: ``partial_fit`` trains on them as given, and a raw column (incomes in the
    millions) left its model at chance (0.51 on a table where ``fit`` reaches 0.87), silently.
    A batch's statistics are not the data's, so it is not scaled; the warning says what to do.
    """
    if not source.in_memory or scale_mode(spec.params) is False or not scalable(spec.params):
        return
    stats = feature_stats(engine, source)
    if stats is None or choose_scaling(stats, "auto", fit_intercept=spec.fit_intercept,
                                       regression=not spec.classifies) is None:
        return
    column = int(np.argmax(stats.max_abs)) if stats.max_abs.size else 0
    largest = float(stats.max_abs[column]) if stats.max_abs.size else 0.0
    if largest > AUTO_LIMIT:
        what = f"column {column} holds values up to {largest:.4g}, above the {AUTO_LIMIT:g}"
    elif stats.y_max_abs > AUTO_LIMIT:
        what = f"the targets reach {stats.y_max_abs:.4g}, above the {AUTO_LIMIT:g}"
    else:
        rows, _, col_sq, _, _ = stats.totals()
        what = (f"the rows' mean squared norm is {mean_sq_norm(stats, rows, col_sq):.4g}, "
                f"above the {AUTO_LIMIT ** 2:g}")
    warn(
        f"{spec.estimator}.partial_fit trains on the rows as given (a batch's statistics are "
        f"not the data's: it does not scale them), and {what} at "
        "which fit scales: they train poorly. Call fit once on a representative sample first "
        "(partial_fit then scales as that fit did), or scale them before (StandardScaler, "
        "MaxAbsScaler).", UserWarning)


def fold_init(scaling: Scaling | None, coef: np.ndarray,
              intercept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A raw-units starting model (warm start) in the scaled units of the fit."""
    return (coef, intercept) if scaling is None else scaling.fold(coef, intercept)


def unfold_record(record: FittedModel) -> FittedModel:
    """The record with its published model in raw units (its state stays in scaled units, for
    a ``partial_fit`` that continues it through the same scaling)."""
    scaling = record.scaling
    if scaling is None:
        return record
    dtype = record.coef.dtype
    coef, intercept = scaling.unfold(record.coef, record.intercept)
    record.coef, record.intercept = coef.astype(dtype), intercept.astype(dtype)
    return record


def scaling_of(meta: dict[str, Any] | None, arrays: dict[str, np.ndarray]) -> Scaling | None:
    """A fit's scaling from a model file: its description (``Scaling.meta``) and per-column
    arrays (None: none, or a file written before the arrays were kept; ``coef_`` is in raw
    units either way, only the objective's penalty is measured in the scaled ones)."""
    if not meta or "factor" not in arrays:
        return None
    return Scaling(kind=str(meta["kind"]), factor=arrays["factor"], shift=arrays.get("shift"),
                   y_shift=float(meta["target_shift"]), y_scale=float(meta["target_scale"]),
                   largest=(int(meta["largest_column"]), float(meta["largest_value"])))
