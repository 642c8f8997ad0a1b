"""The estimator's HTML summary in a notebook: parameters that differ from the defaults, the
fitted shape, and the last epochs of the history."""

from __future__ import annotations

import html
from typing import Any

_SHOWN_EPOCHS = 5


def _row(cells: list[str], tag: str = "td") -> str:
    return "<tr>" + "".join(f"<{tag} style='text-align:right;padding:0 6px'>{c}</{tag}>"
                            for c in cells) + "</tr>"


def _fmt(value: Any) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, float):
        return f"{value:.6g}"
    return html.escape(str(value))


def _changed_params(est: Any) -> dict[str, Any]:
    defaults = type(est)().get_params(deep=False)
    return {k: v for k, v in est.get_params(deep=False).items()
            if k != "client" and repr(v) != repr(defaults.get(k))}


def estimator_html(est: Any) -> str:
    name = type(est).__name__
    params = ", ".join(f"{k}={html.escape(repr(v))}" for k, v in _changed_params(est).items())
    parts = [f"<div class='dsvm-estimator'><b>{name}</b>({params})"]
    if not hasattr(est, "coef_"):
        parts.append("<br><i>not fitted</i></div>")
        return "".join(parts)
    parts.append(
        f"<br>fitted: {len(est.classes_)} classes, {est.n_features_in_} features, "
        f"{est.n_iter_} epochs, {est.t_:,.0f} steps"
    )
    history = getattr(est, "history_", [])
    if history:
        cols = ["epoch", "objective", "train_loss", "val_accuracy", "seconds", "rows_per_s"]
        rows = [_row(cols, "th")]
        rows += [_row([_fmt(h.get(c)) for c in cols]) for h in history[-_SHOWN_EPOCHS:]]
        parts.append("<table>" + "".join(rows) + "</table>")
    parts.append("</div>")
    return "".join(parts)
