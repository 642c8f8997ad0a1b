"""SGD's eta0 search on imbalanced data: the step must be one that learns w, not the bias alone."""

from __future__ import annotations

import pytest

from dsvm import SVMClassifier
from tests.conftest import load_libsvm


@pytest.mark.realdata
def test_eta0_search_learns_w_on_imbalanced_kernel_features():
    # ijcnn1: 9.7% positives. One pass over 1,000 rows that only moves the bias scores better
    # than any step that starts learning w, and a search settling for it (eta0 ~ 1e-3 here)
    # gave a model predicting -1 everywhere.
    X, y = load_libsvm("ijcnn1/ijcnn1.tr.xz", 22)
    X_val, y_val = load_libsvm("ijcnn1/ijcnn1.val.xz", 22)
    X, y, X_val, y_val = X[:12000].toarray(), y[:12000], X_val[:5000].toarray(), y_val[:5000]
    majority = (y_val == -1).mean()
    clf = SVMClassifier(solver="sgd", kernel="nystroem", n_components=256, gamma=2.0,
                        alpha=1 / (10 * len(y)), max_epochs=3, tol=None, random_state=0).fit(X, y)
    assert clf.state_.eta0 > 1e-2, clf.state_.eta0
    assert clf.score(X_val, y_val) > majority, (clf.score(X_val, y_val), majority)  # 0.919 vs 0.908
