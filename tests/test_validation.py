"""Parameter validation messages follow scikit-learn's template and name the value."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from dsvm import SVMClassifier, SVMClassifierCV, SVMRegressor, SVMRegressorCV


@pytest.mark.parametrize(
    "params, message",
    [
        ({"alpha": -1}, r"The 'alpha' parameter of SVMClassifier must be a float in the range "
                        r"\(0.0, inf\). Got -1 instead."),
        ({"alpha": 0.0}, r"'alpha' parameter .* Got 0.0 instead"),
        ({"solver": "adam"}, r"'solver' parameter of SVMClassifier must be a str among "
                             r"\{.*'pegasos', 'sgd'.*\}. Got 'adam' instead."),
        ({"loss": "log"}, r"'loss' parameter .* Got 'log' instead"),
        ({"max_epochs": 0}, r"'max_epochs' parameter .* range \[1, inf\). Got 0 instead"),
        ({"batch_size": 2.5}, r"'batch_size' parameter .* Got 2.5 instead"),
        ({"tol": -1e-3}, r"'tol' parameter .* or None. Got -0.001 instead"),
        ({"fit_intercept": 1}, r"'fit_intercept' parameter .* a bool. Got 1 instead"),
        ({"random_state": -3}, r"'random_state' parameter .* Got -3 instead"),
        # gamma=inf made the kernel map's values 0 and the fit's weights non-finite (a
        # FloatingPointError traceback from dsvm train --gamma inf); a budget of one vector
        # leaves BSGD nothing to merge (a model worse than a constant, saved)
        ({"kernel": "rff", "gamma": float("inf")}, r"'gamma' parameter .* finite float above "
                                                   r"0.0, or 'scale'. Got inf instead"),
        ({"solver": "bsgd", "budget": 1}, r"'budget' parameter .* range \[2, inf\). Got 1"),
        ({"class_weight": {0: -1.0}}, r"class_weight gives label 0 the weight -1.0: class "
                                      r"weights are non-negative numbers"),
    ],
)
def test_bad_parameters_are_named(params, message, blobs):
    X, y = blobs
    with pytest.raises(ValueError, match=message):
        SVMClassifier(**params).fit(X, y)


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_an_svc_kernel_name_says_how_to_get_the_gaussian_kernel(kernel, blobs):
    """SVC's ``kernel="rbf"`` (what a scikit-learn user types first) was refused with the list
    of choices only: the message now says which of them give the Gaussian kernel."""
    X, y = blobs
    with pytest.raises(ValueError, match=rf"Got '{kernel}' instead\..* kernel='rff' \(random "
                                         r"Fourier features\) or kernel='nystroem'.*"
                                         r"solver='bsgd'"):
        SVMClassifier(kernel=kernel).fit(X, y)


@pytest.mark.parametrize("params, close", [({"loss": "log_loss"}, "logistic"),
                                           ({"penalty": "L2"}, "l2"),
                                           ({"solver": "pegasus"}, "pegasos")])
def test_a_misspelt_option_gets_the_closest_one(params, close, blobs):
    """scikit-learn's name (``loss="log_loss"``), a case slip or a typo: the closest option."""
    X, y = blobs
    with pytest.raises(ValueError, match=rf"instead\. Did you mean '{close}'\?$"):
        SVMClassifier(**params).fit(X, y)
    with pytest.raises(ValueError) as far:
        SVMClassifier(loss="xyz").fit(X, y)
    assert "Did you mean" not in str(far.value)


@pytest.mark.parametrize("cls, params, told", [
    (SVMClassifier, {"C": 1.0}, r"no parameter 'C': dsvm's regularisation is alpha.*"
                                r"alpha = 1 / \(C \* n_samples\)"),
    (SVMRegressor, {"max_iter": 5}, r"no parameter 'max_iter': dsvm's is max_epochs"),
    (SVMClassifier, {"n_jobs": 2}, r"no parameter 'n_jobs': dsvm's are n_workers"),
    (SVMClassifier, {"epochs": 3}, r"no parameter 'epochs': did you mean 'max_epochs'\?$"),
    (SVMClassifierCV, {"alpha": 1e-3}, r"no parameter 'alpha': did you mean 'alphas'\?$"),
    (SVMRegressorCV, {"class_weights": [None]}, r"no parameter 'class_weights': its "
                                                r"parameters are alphas, average"),
])
def test_a_parameter_of_another_library_is_told_dsvms_name(cls, params, told):
    """scikit-learn's names (LinearSVC's C, max_iter, n_jobs) or a typo: Python's own
    "unexpected keyword argument 'C'" said nothing of alpha."""
    with pytest.raises(TypeError, match=told):
        cls(**params)
    clone(cls(verbose=0))  # the accepted names still construct, clone and pickle
    pickle.loads(pickle.dumps(cls(tol=1e-4)))


def test_one_class_is_refused(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match=r"one class only \(\[1\]\)"):
        SVMClassifier().fit(X, np.ones(len(X), dtype=int))


def test_feature_count_mismatch_names_both(blobs):
    X, y = blobs
    clf = SVMClassifier(max_epochs=1, tol=None).fit(X, y)
    # scikit-learn's wording (its estimator checks match it)
    with pytest.raises(ValueError, match="X has 3 features, but SVMClassifier is expecting 8"):
        clf.predict(X[:, :3])


def test_string_targets_are_refused_by_the_regressor(blobs):
    # classifiers take labels of any type (tests/test_labels.py); a regressor needs numbers
    from dsvm import SVMRegressor

    X, y = blobs
    with pytest.raises(ValueError, match="numeric labels"):
        SVMRegressor().fit(X, np.where(y > 0, "a", "b"))


def test_a_non_finite_value_is_named_by_row_and_column_and_huge_finite_values_pass():
    """The finiteness check sums first (one pass, no memory) and searches only when the sum
    is not finite: a NaN or an infinity is still named by row and column, in dense and CSR
    input, and values whose sum overflows float32 are still accepted."""
    import scipy.sparse as sp

    import dsvm
    from dsvm.estimators.validation import check_finite

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5)).astype(np.float32)
    y = np.where(X[:, 0] > 0, 1, -1)
    huge = X.copy()
    huge[:, 1] = 3e38  # finite, but their sum is not
    check_finite(huge)
    check_finite(sp.csr_matrix(huge))
    for value, kind in ((np.nan, "NaN"), (np.inf, "infinity")):
        bad = X.copy()
        bad[123, 4] = value
        for data in (bad, sp.csr_matrix(bad)):
            with pytest.raises(ValueError, match=f"{kind} at row 123, column 4"):
                dsvm.SVMClassifier(max_epochs=1).fit(data, y)
