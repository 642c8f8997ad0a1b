"""FitSpec's typed reads of the parameters (#26 item 5): the estimator's values, typed."""

from __future__ import annotations

import numpy as np

from dsvm import SVMClassifier, SVMRegressor
from dsvm.training.spec import FitSpec

READ = ("penalty", "alpha", "l1_ratio", "fit_intercept", "class_weight", "kernel", "gamma",
        "n_components", "early_stopping", "validation_fraction", "shuffle_window")


def _spec(est) -> FitSpec:
    return FitSpec.from_params(type(est).__name__, est._task, est.get_params(deep=False))


def test_typed_reads_are_the_estimators_parameters():
    clf = SVMClassifier(loss="logistic", penalty="elasticnet", alpha=np.float32(0.5),
                        l1_ratio=0.3, fit_intercept=False, class_weight={1: 2.0},
                        kernel="rff", gamma=2, n_components=np.int64(64), early_stopping=True,
                        validation_fraction=0.2, shuffle_window=3)
    spec = _spec(clf)
    assert {name: getattr(spec, name) for name in READ} == {
        name: getattr(clf, name) for name in READ}
    assert spec.loss_name == "logistic" == spec.loss.name
    assert type(spec.alpha) is float and type(spec.gamma) is float
    assert type(spec.n_components) is int
    assert spec.with_params(gamma="scale").gamma == "scale"
    reg = _spec(SVMRegressor())
    assert reg.class_weight is None and reg.shuffle_window is None
    assert (reg.loss_name, reg.penalty, reg.alpha) == ("epsilon_insensitive", "l2", 1e-4)
