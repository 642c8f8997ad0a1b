"""History plot and the notebook HTML summary."""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


@pytest.fixture
def fitted(blobs):
    X, y = blobs
    return SVMClassifier(max_epochs=4, tol=None, random_state=0).fit(
        X[:400], y[:400], validation=(X[400:], y[400:]))


def test_plot_history_draws_every_epoch(fitted):
    ax = fitted.plot_history()
    (objective,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("objective")]
    np.testing.assert_array_equal(objective.get_xdata(), [1, 2, 3, 4])
    np.testing.assert_allclose(objective.get_ydata(), [h["objective"] for h in fitted.history_])
    # validation accuracy on the twin axis
    twin = [a for a in ax.figure.axes if a is not ax][0]
    np.testing.assert_allclose(twin.get_lines()[0].get_ydata(),
                               [h["val_accuracy"] for h in fitted.history_])
    ax2 = dsvm.plot_history(fitted.history_)
    np.testing.assert_allclose(ax2.get_lines()[0].get_ydata(), objective.get_ydata())


def test_plot_history_needs_a_history():
    with pytest.raises(ValueError, match="no training history"):
        dsvm.plot_history(SVMClassifier())
    with pytest.raises(ValueError, match="empty"):
        dsvm.plot_history([])


def test_html_summary(fitted):
    html = fitted._repr_html_()
    assert "<b>SVMClassifier</b>(max_epochs=4, random_state=0, tol=None)" in html
    assert "fitted: 2 classes, 8 features, 4 epochs" in html
    assert html.count("<tr>") == 5  # header + the last 4 epochs
    assert f"{fitted.history_[-1]['objective']:.6g}" in html
    assert "not fitted" in SVMClassifier(alpha=0.5)._repr_html_()
    assert "alpha=0.5" in SVMClassifier(alpha=0.5)._repr_html_()


def test_jupyter_shows_the_dsvm_summary(fitted):
    formatters = pytest.importorskip("IPython.core.formatters")
    data, _ = formatters.DisplayFormatter().format(fitted)
    assert "fitted: 2 classes" in data["text/html"]
    assert data["text/plain"].startswith("SVMClassifier(")
