"""scikit-learn's own estimator checks (issue #16), for both estimators, the kernel variants and
the CV grids (#27).

The only checks declared as expected failures are in
``dsvm.estimators.base.EXPECTED_FAILED_CHECKS``, each with its reason.
"""

from __future__ import annotations

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from dsvm import SVMClassifier, SVMClassifierCV, SVMRegressor, SVMRegressorCV
from dsvm.estimators.base import expected_failed_checks

# small and fast: the checks fit hundreds of times on tiny data
FAST = dict(max_epochs=5, n_components=64)


@parametrize_with_checks(
    [SVMClassifier(**FAST), SVMRegressor(**FAST), SVMClassifier(kernel="rff", **FAST),
     SVMClassifier(kernel="nystroem", **FAST), SVMRegressor(kernel="nystroem", **FAST),
     # the grids of #27 on a few alphas (their fold holds out exactly round(0.1 n) rows of the
     # checks' tiny data, at least one)
     SVMClassifierCV(max_epochs=5, n_alphas=3), SVMRegressorCV(max_epochs=5, n_alphas=3)],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning on the checks' tiny problems
        check(estimator)
