"""Plotting a fit's per-epoch history (matplotlib is an optional extra: ``dsvm[plot]``)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _history_of(obj: Any) -> list[dict[str, Any]]:
    """History records from an estimator, a detached job, or a list of records."""
    if isinstance(obj, list):
        return obj
    history = getattr(obj, "history_", None)
    if history is None and callable(getattr(obj, "history", None)):
        history = obj.history()
    if history is None:
        raise ValueError(f"{type(obj).__name__} has no training history to plot; fit it first.")
    return list(history)


def plot_history(obj: Any, ax: Any = None, *, title: str | None = None) -> Any:
    """Plot the objective estimate per epoch (and validation accuracy on a second axis).

    ``obj``: a fitted estimator, a detached :class:`~dsvm.distributed.jobs.Job` or a list of
    history records. Returns the matplotlib Axes.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "plot_history needs matplotlib: pip install 'dsvm[plot]' (or matplotlib)."
        ) from None
    history = _history_of(obj)
    if not history:
        raise ValueError("The training history is empty: nothing to plot.")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    epochs = [h["epoch"] for h in history]
    ax.plot(epochs, [h["objective"] for h in history], marker="o", label="objective (estimate)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("objective")
    val = [h.get("val_accuracy") for h in history]
    if any(v is not None for v in val):
        ax2 = ax.twinx()
        ax2.plot([e for e, v in zip(epochs, val) if v is not None],
                 [v for v in val if v is not None], marker="s", color="tab:orange",
                 label="validation accuracy")
        ax2.set_ylabel("validation accuracy")
        ax2.legend(loc="center right")
    ax.legend(loc="upper right")
    ax.set_title(title or "dsvm training history")
    return ax


def path_groups(results: dict[str, Any]) -> dict[str, np.ndarray]:
    """The candidates of each combination of a grid's non-alpha axes (``param_l1_ratio``,
    ``param_loss``, ``param_class_weight``: those it has), by a label naming it ("" for a
    grid of alphas alone), in the order they first appear."""
    names = [k for k in results if k.startswith("param_") and k != "param_alpha"]
    groups: dict[str, list[int]] = {}
    for i in range(len(results["param_alpha"])):
        label = ", ".join(f"{k[len('param_'):]}={results[k][i]!r}" for k in names)
        groups.setdefault(label, []).append(i)
    return {label: np.array(rows) for label, rows in groups.items()}


def plot_path(est: Any, ax: Any = None, *, title: str | None = None) -> Any:
    """Plot a CV estimator's held-out score against alpha (log scale): the score after the
    candidate's last epoch, the chosen alpha marked, and each epoch's scores faintly (how the
    choice settled). Returns the matplotlib Axes."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "plot_path needs matplotlib: pip install 'dsvm[plot]' (or matplotlib).") from None
    results = getattr(est, "cv_results_", None)
    if results is None:
        raise ValueError(f"{type(est).__name__} has no cv_results_ to plot; fit a CV "
                         "estimator (SVMClassifierCV, SVMRegressorCV) first.")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    alphas, by_epoch = results["param_alpha"], results["test_score_by_epoch"]
    for label, rows in path_groups(results).items():  # one line per non-alpha combination
        for e in range(by_epoch.shape[1] - 1):
            ax.plot(alphas[rows], by_epoch[rows, e], color="0.8", linewidth=0.8)
        ax.plot(alphas[rows], results["mean_test_score"][rows], marker="o",
                label=label or "held-out score")
    ax.axvline(est.alpha_, color="tab:orange", linestyle="--", label=f"alpha_ = {est.alpha_:.3g}")
    ax.set_xscale("log")
    ax.set_xlabel("alpha")
    ax.set_ylabel("held-out R^2" if est._task == "regression" else "held-out accuracy")
    ax.legend(loc="best")
    ax.set_title(title or "dsvm: validation score against alpha")
    return ax
