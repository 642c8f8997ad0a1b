"""Evaluation sums over row blocks: loss, accuracy and the sums behind R^2, additive over chunks.

Every quantity is a sum over rows, so the sums of any grouping of chunks add up to those of the
whole data set: tasks sum their chunks and the sums are added in any order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dsvm.data.block_ops import kernel_rows, read_only
from dsvm.data.blocks import Block, CSRBlock
from dsvm.solvers.base import encode_labels
from dsvm.solvers.objective import decision_block, loss_block, predicted_codes
from dsvm.solvers.targets import output_targets, pointwise_losses, targets_for


@dataclass
class EvalCounts:
    """Additive evaluation sums over chunks."""

    loss_sum: float = 0.0
    weight_sum: float = 0.0
    n_correct: int = 0
    n_rows: int = 0
    # regression (classes None): sums for R^2 = 1 - sq_err / (y_sq_sum - y_sum^2 / n_rows)
    sq_err: float = 0.0
    y_sum: float = 0.0
    y_sq_sum: float = 0.0
    # classification: rows of true class i predicted as class j (codes), None before any
    confusion: np.ndarray | None = None
    # regression, when asked: the loss sum of predicting a given constant for every row
    constant_loss_sum: float = 0.0

    def __add__(self, other: EvalCounts) -> EvalCounts:
        return EvalCounts(
            self.loss_sum + other.loss_sum,
            self.weight_sum + other.weight_sum,
            self.n_correct + other.n_correct,
            self.n_rows + other.n_rows,
            self.sq_err + other.sq_err,
            self.y_sum + other.y_sum,
            self.y_sq_sum + other.y_sq_sum,
            _added(self.confusion, other.confusion),
            self.constant_loss_sum + other.constant_loss_sum,
        )

    @property
    def accuracy(self) -> float:
        return self.n_correct / max(self.n_rows, 1)

    @property
    def mean_loss(self) -> float:
        return self.loss_sum / max(self.weight_sum, 1e-300)

    @property
    def constant_mean_loss(self) -> float:
        """The mean loss of the constant :func:`evaluate_block` was given."""
        return self.constant_loss_sum / max(self.weight_sum, 1e-300)

    @property
    def r2(self) -> float:
        """R^2 = 1 - SS_res / SS_tot (NaN for constant targets)."""
        n = max(self.n_rows, 1)
        ss_tot = self.y_sq_sum - self.y_sum * self.y_sum / n
        if ss_tot <= 0.0:
            return float("nan")
        return 1.0 - self.sq_err / ss_tot

    def class_rates(self) -> dict[str, Any]:
        """What the confusion counts say beyond accuracy, for data whose classes are not
        balanced (click logs, rare topics), where accuracy alone misleads:
        ``majority_rate`` (the accuracy of always predicting the most frequent class),
        ``balanced_accuracy`` (the mean recall of the classes present, scikit-learn's),
        for two classes ``precision``, ``recall`` and ``f1`` of the second (scikit-learn's
        positive class), else ``macro_f1``; and ``per_class``, each class's (by code)
        precision, recall, F1 and rows. Empty without counts."""
        if self.confusion is None or not self.n_rows:
            return {}
        c = self.confusion.astype(np.float64)
        true, predicted, hits = c.sum(axis=1), c.sum(axis=0), np.diag(c)
        recall = np.divide(hits, true, out=np.zeros_like(hits), where=true > 0)
        precision = np.divide(hits, predicted, out=np.zeros_like(hits), where=predicted > 0)
        both = precision + recall
        f1 = np.divide(2 * precision * recall, both, out=np.zeros_like(hits), where=both > 0)
        rates: dict[str, Any] = {"majority_rate": float(true.max() / self.n_rows),
                                 "balanced_accuracy": float(recall[true > 0].mean())}
        if len(c) == 2:
            rates.update(precision=float(precision[1]), recall=float(recall[1]),
                         f1=float(f1[1]))
        else:
            rates["macro_f1"] = float(f1[(true > 0) | (predicted > 0)].mean())
        rates["per_class"] = [{"precision": float(p), "recall": float(r), "f1": float(f),
                               "support": int(n)}
                              for p, r, f, n in zip(precision, recall, f1, true)]
        return rates


def _added(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    return b if a is None else a if b is None else a + b


def add_counts(parts: list[EvalCounts | None]) -> EvalCounts:
    """The sum of evaluation sums (``None`` entries: tasks without rows)."""
    total = EvalCounts()
    for part in parts:
        if part is not None:
            total = total + part
    return total


def regression_counts(decisions: np.ndarray, block: Block) -> tuple[float, float, float]:
    """(sum (y - p)^2, sum y, sum y^2) over a block, float64: additive sums for R^2."""
    p = decisions[:, 0]
    y = np.asarray(block.y, dtype=np.float64)
    return float(np.sum((y - p) ** 2)), float(y.sum()), float(y @ y)


def evaluate_block(block: Block, coef: np.ndarray, intercept: np.ndarray,
                   classes: np.ndarray | None, loss: Any, where: str, *,
                   constant: float | None = None) -> EvalCounts:
    """Loss, accuracy (or regression sums when ``classes`` is None) of one block, from one
    product of the block with the model (each sum used to make its own). ``constant`` (a
    regression): also the loss sum of predicting it for every row."""
    if block.n_samples == 0:
        return EvalCounts()
    P = decision_block(coef, intercept, block)
    if classes is None:  # regression
        y = targets_for(block.y, None, where)
        loss_sum, weight_sum = loss_block(coef, intercept, block, y, loss, decisions=P)
        counts = EvalCounts(float(loss_sum), float(weight_sum), 0, block.n_samples,
                            *regression_counts(P, block))
        if constant is not None:
            counts.constant_loss_sum = constant_loss(y, block.sample_weight, constant, loss)
        return counts
    codes = encode_labels(block.y, classes, where=where)
    loss_sum, weight_sum = loss_block(coef, intercept, block, codes, loss, decisions=P)
    k = max(len(classes), 2)
    cells = np.asarray(codes, dtype=np.int64) * k + predicted_codes(P)  # (bincount: no add.at)
    confusion = np.bincount(cells, minlength=k * k).reshape(k, k)
    return EvalCounts(float(loss_sum), float(weight_sum), int(np.trace(confusion)),
                      block.n_samples, confusion=confusion)



def constant_loss(y: np.ndarray, sample_weight: np.ndarray | None, constant: float,
                  loss: Any) -> float:
    """The (weighted) loss sum of predicting ``constant`` for targets ``y``."""
    per_row = pointwise_losses(loss, np.full(y.shape, constant), y)
    return float(per_row.sum() if sample_weight is None
                 else np.asarray(sample_weight, np.float64) @ per_row)


@dataclass
class GridCounts:
    """Evaluation sums of K candidate models over the same rows (:func:`grid_counts`), and the
    rows of each class among them (empty for a regression): additive over chunks."""

    candidates: list[EvalCounts]
    class_rows: np.ndarray
    penalties: np.ndarray | None = None  # each candidate's penalty (the same in every part)

    def __add__(self, other: GridCounts) -> GridCounts:
        return GridCounts([a + b for a, b in zip(self.candidates, other.candidates)],
                          self.class_rows + other.class_rows,
                          self.penalties if self.penalties is not None else other.penalties)


def grid_counts(block: Block, coef: np.ndarray, intercept: np.ndarray, n_candidates: int,
                classes: np.ndarray | None, loss: Any, where: str) -> GridCounts:
    """:func:`evaluate_block` of each of ``n_candidates`` models stacked along the outputs
    (candidate k owns rows k*m .. (k+1)*m of ``coef``, see :mod:`dsvm.solvers.grid`), from
    one product of the block with all of them. ``loss``: one loss for all, or a list or
    tuple of one per candidate (a grid of losses)."""
    losses = list(loss) if isinstance(loss, (list, tuple)) else [loss] * n_candidates
    if len(losses) != n_candidates:
        raise ValueError(f"grid_counts: {len(losses)} losses for {n_candidates} candidates.")
    n_classes = 0 if classes is None else len(classes)
    if block.n_samples == 0:
        return GridCounts([EvalCounts() for _ in range(n_candidates)], np.zeros(n_classes))
    codes = targets_for(block.y, None, where) if classes is None \
        else encode_labels(block.y, classes, where=where)
    P = grid_decisions(coef, intercept, block)
    m = P.shape[1] // n_candidates
    Y = output_targets(codes, m)
    sw = None if block.sample_weight is None else np.asarray(block.sample_weight, np.float64)
    weight_sum = float(block.n_samples) if sw is None else float(sw.sum())
    y = np.asarray(block.y, dtype=np.float64)
    out = []
    for k in range(n_candidates):
        Pk = P[:, k * m:(k + 1) * m]
        per_row = pointwise_losses(losses[k], Pk, Y).sum(axis=1)
        loss_sum = float(per_row.sum()) if sw is None else float(sw @ per_row)
        if classes is None:
            out.append(EvalCounts(loss_sum, weight_sum, 0, block.n_samples,
                                  float(np.sum((y - Pk[:, 0]) ** 2)), float(y.sum()),
                                  float(y @ y)))
            continue
        pred = (Pk[:, 0] > 0).astype(np.int64) if m == 1 else np.argmax(Pk, axis=1)
        out.append(EvalCounts(loss_sum, weight_sum, int(np.sum(pred == codes)),
                              block.n_samples))
    rows = np.zeros(0) if classes is None else \
        np.bincount(codes, minlength=n_classes).astype(np.float64)
    return GridCounts(out, rows)


def grid_decisions(coef: np.ndarray, intercept: np.ndarray, block: Block) -> np.ndarray:
    """:func:`~dsvm.solvers.objective.decision_block` of K stacked models; for CSR rows by
    :func:`dsvm.kernels.scoring.csr_decisions`, which overlaps the K cache misses of each
    stored entry: 2^22 features x 40 nonzeros a row, 8 candidates, the 410 held rows of a
    4,096-row chunk: grid_counts 7.4 ms (4.7 of them gathering the models' touched columns)
    -> 2.0-2.9 ms. The same sums in the same order, to rounding: the kernel may fuse a
    multiply and an add (fastmath ``contract``), 4e-15 apart on these decision values. One
    compiled variant (float64 values, read-only inputs), compiled by grids on CSR rows only."""
    if not isinstance(block, CSRBlock) or block.n_samples == 0:
        return decision_block(coef, intercept, block)
    from dsvm.kernels.scoring import csr_decisions

    X = kernel_rows(block, np.float64)
    out = np.empty((block.n_samples, coef.shape[0]))
    csr_decisions(X, read_only(np.ascontiguousarray(coef, dtype=np.float64)), out)
    return out + np.asarray(intercept, dtype=np.float64)


def add_grid_counts(parts: list[GridCounts | None]) -> GridCounts | None:
    """The sum of per-candidate evaluation sums (``None``: tasks without rows)."""
    present = [p for p in parts if p is not None]
    if not present:
        return None
    total = present[0]
    for part in present[1:]:
        total = total + part
    return total
