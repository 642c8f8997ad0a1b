"""scikit-learn style estimators: thin shells over the training layer.

Each estimator validates its parameters, turns them into a :class:`dsvm.training.FitSpec`,
calls :func:`dsvm.training.fit`, and publishes the fitted attributes of the record it gets back;
prediction goes through :mod:`dsvm.estimators.prediction`.
"""

from dsvm.estimators.classifier import SVMClassifier
from dsvm.estimators.cv import SVMClassifierCV, SVMRegressorCV
from dsvm.estimators.loading import load
from dsvm.estimators.plotting import plot_history
from dsvm.estimators.regressor import SVMRegressor

__all__ = ["SVMClassifier", "SVMClassifierCV", "SVMRegressor", "SVMRegressorCV", "load",
           "plot_history"]
