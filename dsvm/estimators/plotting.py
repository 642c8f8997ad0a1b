"""Plotting a fit's per-epoch history (matplotlib is an optional extra: ``dsvm[plot]``)."""

from __future__ import annotations

from typing import Any


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
