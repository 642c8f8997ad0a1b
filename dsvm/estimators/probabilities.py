"""``predict_proba`` for classifiers trained with the logistic loss.

A mixin, so that the methods exist only where they mean something: scikit-learn's
``available_if`` hides them for the other losses (``hasattr(clf, "predict_proba")`` is False),
as SGDClassifier does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils.metaestimators import available_if

from dsvm.estimators.prediction import probabilities
from dsvm.training.inputs import is_dask_collection


class LogisticProbabilities:
    """Probability estimates from the decision values of a ``loss="logistic"`` classifier."""

    # provided by the estimator this is mixed into (annotations only: no attribute is made)
    loss: str
    classes_: np.ndarray
    _decision: Callable[[Any], Any]

    def _check_proba(self) -> bool:
        if self.loss != "logistic":
            raise AttributeError(
                f"probability estimates are not available for loss={self.loss!r}: they need "
                "loss='logistic' (for other losses, calibrate the decision values with "
                "sklearn.calibration.CalibratedClassifierCV).")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X: Any) -> Any:
        """Class probabilities (n_samples, n_classes), for ``loss="logistic"``: the logistic
        function of the decision values (one-vs-rest: normalised over the classes, as
        scikit-learn's SGDClassifier does). Dask input gives a lazy dask array."""
        scores = self._decision(X)
        if is_dask_collection(scores):
            n = len(self.classes_)
            return scores.map_blocks(probabilities, dtype=np.float64,
                                     chunks=(scores.chunks[0], (n,)),
                                     new_axis=1 if scores.ndim == 1 else None)
        return probabilities(scores)

    @available_if(_check_proba)
    def predict_log_proba(self, X: Any) -> Any:
        """The logarithm of :meth:`predict_proba`."""
        proba = self.predict_proba(X)
        return np.log(proba) if not is_dask_collection(proba) else proba.map_blocks(np.log)
