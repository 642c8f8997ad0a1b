"""The end every fit shares, whatever its method family: the model published in the data's
dtype, why the fit stopped, the published model measured on the training rows
(:mod:`dsvm.training.outcome`, one evaluation pass) and reported, and the
``ConvergenceWarning`` of a fit that ran out of epochs (not for a failed one: the estimator
warns ``FitFailedWarning`` for it). The family says only what is its own: the reason, and
the warning's text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dsvm.data.sources import Source
from dsvm.engine.local import Engine
from dsvm.exceptions import ConvergenceWarning, warn
from dsvm.training import outcome
from dsvm.training.record import FittedModel
from dsvm.training.spec import FitSpec

# The text of the warning of a fit that did not converge (None: no warning), read after the
# outcome is measured (CoCoA+ names unscaled features from it).
NotConverged = Callable[[FitSpec, FittedModel], "str | None"]


def publish_model(record: FittedModel, coef: Any, intercept: Any, dtype: Any) -> FittedModel:
    """``record`` predicting with ``coef`` and ``intercept`` in ``dtype`` (a solver may keep
    its model, or its averages, in float64 whatever the data's dtype)."""
    record.coef, record.intercept = np.array(coef, dtype=dtype), np.array(intercept, dtype=dtype)
    return record


def finish_fit(spec: FitSpec, engine: Engine, record: FittedModel, source: Source, *,
               reason: str, not_converged: NotConverged | None = None,
               penalized: bool = True) -> FittedModel:
    """``record`` stopped for ``reason``, measured on ``source`` (the raw training rows) and
    reported; the warning ``not_converged`` words when it has not converged (raised at the
    user's call of fit: :func:`dsvm.exceptions.warn`)."""
    record.stop_reason = reason
    record.outcome = outcome.measure(engine, spec, record, source, reason, penalized=penalized)
    outcome.report(spec, record.outcome)
    if not_converged is not None and not record.converged and not record.outcome.failed:
        message = not_converged(spec, record)
        if message:
            warn(message, ConvergenceWarning)
    return record
