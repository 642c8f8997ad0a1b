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

from dsvm.estimators.prediction import probabilities, probabilities_of_frame
from dsvm.training.inputs import is_dask_collection, is_dask_frame


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
        scikit-learn's SGDClassifier does). Dask input gives a lazy dask array; a Dask
        DataFrame, a lazy Dask DataFrame with a column per class (its rows' index kept)."""
        return self._probabilities(self._decision(X), log=False)

    @available_if(_check_proba)
    def predict_log_proba(self, X: Any) -> Any:
        """The logarithm of :meth:`predict_proba`."""
        return self._probabilities(self._decision(X), log=True)

    def _probabilities(self, scores: Any, log: bool) -> Any:
        if is_dask_frame(scores):  # (decision values of a Dask DataFrame: a Dask Series/frame)
            return probabilities_of_frame(scores, self.classes_, log)
        if is_dask_collection(scores):
            n = len(self.classes_)
            proba = scores.map_blocks(probabilities, dtype=np.float64,
                                      chunks=(scores.chunks[0], (n,)),
                                      new_axis=1 if scores.ndim == 1 else None)
            return proba.map_blocks(np.log) if log else proba
        proba = probabilities(scores)
        return np.log(proba) if log else proba
