"""Progress of a fit: a progress bar in a terminal or a notebook, one line per epoch elsewhere.

In a terminal (stderr is a TTY) or a Jupyter notebook, ``verbose=1`` shows a tqdm bar and
``verbose=2`` also one line per epoch above it. Written to a log or a batch job's output file
(no TTY), a bar would be a flood of carriage returns: there ``verbose >= 1`` prints one plain
line per epoch instead. Every epoch is also logged at INFO on this module's logger.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

logger = logging.getLogger(__name__)


def _objectives(record: dict[str, Any]) -> list[str]:
    """The objectives an epoch's line shows, each named for the model it measures: none of
    them is the published model's (that is measured once, after the last epoch:
    :mod:`dsvm.training.outcome`)."""
    if "iterate_objective" in record:  # NESVM: exact passes; the best point is returned
        return [f"objective {record['objective']:.6f} (exact, the best point so far: the "
                "returned model)",
                f"iterate objective {record['iterate_objective']:.6f}",
                f"iterate loss {record['train_loss']:.6f}"]
    if "grid_relative_gaps" in record:  # a CoCoA+ grid: K candidates, summed up
        k = len(record["grid_relative_gaps"])
        return [f"mean objective {record['objective']:.6f} (of the {k} candidates' models this "
                "epoch started from)",
                f"largest relative duality gap {record['relative_gap']:.3g}"]
    if "relative_gap" in record:  # CoCoA+: measured while the epoch read its rows
        return [f"objective {record['objective']:.6f} (the model this epoch started from)",
                f"relative duality gap {record['relative_gap']:.3g}"]
    parts = []
    sampled = record.get("sample_objective")
    if sampled is not None:
        rows = record.get("sample_rows")
        sample = f"{rows:,}-row sample" if rows else "row sample"
        before = f"after epoch {record['epoch'] - 1}" if record["epoch"] > 1 else "at the start"
        parts.append(f"objective {sampled:.6f} (the model {before}, {sample})")
    parts.append(f"progressive objective {record['objective']:.6f} (iterates during the pass)")
    return parts


def format_epoch(record: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    """One epoch's line; ``before``: the previous epoch's record when this epoch's pass has
    just measured its held-out objective (a row fold scores the model an epoch starts from)."""
    parts = [f"epoch {record['epoch']:>3}", *_objectives(record)]
    if record.get("val_accuracy") is not None:
        parts.append(f"val acc {record['val_accuracy']:.4f}")
    if record.get("holdout_objective") is not None:
        parts.append(f"held-out objective {record['holdout_objective']:.6f}")
    elif before is not None and before.get("holdout_objective") is not None:
        parts.append(f"held-out objective {before['holdout_objective']:.6f} (the model "
                     f"after epoch {before['epoch']})")
    parts.append(f"{record['seconds']:.2f}s")
    parts.append(f"{record['rows_per_s']:,.0f} rows/s")
    compile_seconds = record.get("compile_seconds") or 0.0
    if compile_seconds >= 0.05:
        parts.append(f"(+{compile_seconds:.1f}s compiling kernels, cached for the next run)")
    return "  ".join(parts)


def interactive() -> bool:
    """Whether progress goes to a terminal or a notebook (where a bar redraws in place)."""
    if "ipykernel" in sys.modules:
        try:
            from IPython import get_ipython

            shell = get_ipython()
            if shell is not None and "IPKernelApp" in getattr(shell, "config", {}):
                return True
        except ImportError:
            pass
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())


def fit_note(line: str, verbose: int) -> None:
    """A line about the fit before its progress starts (stderr with ``verbose >= 1``; always
    logged at INFO)."""
    logger.info(line)
    if verbose >= 1:
        print(line, file=sys.stderr, flush=True)


class EpochProgress:
    """A progress bar over epochs (``verbose >= 1``, interactive) or one line per epoch."""

    def __init__(self, total: int, verbose: int, desc: str = "dsvm") -> None:
        self.verbose = verbose
        self.bar = None
        if verbose >= 1 and interactive():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="epoch", leave=True)

    def update(self, record: dict[str, Any], before: dict[str, Any] | None = None) -> None:
        line = format_epoch(record, before)
        logger.info(line)
        if self.bar is None:
            if self.verbose >= 1:
                print(line, file=sys.stderr, flush=True)
            return
        sampled = record.get("sample_objective")  # (the returned model's, lagging an epoch)
        postfix = {"obj": f"{record['objective'] if sampled is None else sampled:.5f}"}
        if record.get("val_accuracy") is not None:
            postfix["val_acc"] = f"{record['val_accuracy']:.4f}"
        self.bar.set_postfix(postfix)
        if self.verbose >= 2:
            self.bar.write(line)
        self.bar.update(1)

    def note(self, line: str) -> None:
        """A line about the fit before its epochs (verbose >= 1; always logged at INFO)."""
        logger.info(line)
        if self.verbose < 1:
            return
        if self.bar is None:
            print(line, file=sys.stderr, flush=True)
        else:
            self.bar.write(line)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def format_grid(rows: Sequence[dict[str, Any]]) -> str:
    """A grid of alphas' candidates (:mod:`dsvm.training.grid`) as text, one line each
    (the log of ``dsvm train``, ``dsvm info``)."""
    if not rows:
        return ""
    score = next(k for k in rows[0] if k.startswith("held_out_"))
    # k folds (cv=k): the score is their mean, each fold's after it
    n_folds = len(rows[0].get("folds", []))
    folds = "".join(f"  {f'fold{f}':>7}" for f in range(n_folds))
    # the grid's other axes (l1_ratio, loss, class_weight), those it has, after alpha
    axes = [k for k in ("l1_ratio", "loss", "class_weight") if k in rows[0]]
    shown = {k: [_axis_text(row[k]) for row in rows] for k in axes}
    widths = {k: max(len(k), *map(len, shown[k])) for k in axes}
    heads = "".join(f"  {k:>{widths[k]}}" for k in axes)
    lines = [f"{'alpha':>12}{heads}  {score:>18}{folds}  {'epochs':>6}"]
    for i, row in enumerate(rows):
        mark = "  <- best" if row.get("best") else ""
        each = "".join(f"  {v:>7.4f}" for v in row.get("folds", []))
        values = "".join(f"  {shown[k][i]:>{widths[k]}}" for k in axes)
        lines.append(f"{row['alpha']:>12.4g}{values}  {row[score]:>18.4f}{each}  "
                     f"{row['epochs']:>6d}{mark}")
    return "\n".join(lines)


def _axis_text(value: Any) -> str:
    """A value of a grid axis in a table cell: none, a number, a name, or a dict of class
    weights as label:weight pairs."""
    if value is None:
        return "none"
    if isinstance(value, dict):
        return ",".join(f"{label}:{weight:g}" for label, weight in value.items())
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
