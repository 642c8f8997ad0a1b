"""The axes of a grid (#27): ``alphas`` x optional ``l1_ratios``, ``losses`` and
``class_weights``, all candidates trained in the same pass.

:class:`GridAxes` is the product: the candidates in order (alpha varies fastest, then
``l1_ratio``, then the loss, then the class weight: each non-alpha combination's path over
alpha is contiguous, which the table and ``plot_path`` read), each candidate's parameters
(what its single fit would be given), and the columns of ``cv_results_`` (``param_alpha``
and, only for the axes given, ``param_l1_ratio``, ``param_loss``, ``param_class_weight``, as
scikit-learn's ``GridSearchCV`` lays them out).

Which combinations share a pass (:mod:`dsvm.solvers.grid`, "Shared counters"): losses and
class weights always (they change a step's gradient, not whether it is taken); ``l1_ratios``
only with ``penalty="elasticnet"`` (as scikit-learn's ``LogisticRegressionCV``: the ratios are
the elastic net's) and ``solver="sgd"`` (the only solver with an L1 part). What cannot is
refused here with the parameter and its value.

The held-out score is accuracy (R^2 for a regressor) for every candidate, whatever its loss
or class weights: the candidates are ranked on one scale, the one ``score`` reports
(scikit-learn's ``LogisticRegressionCV`` and ``GridSearchCV`` score every candidate with the
estimator's ``score``, plain accuracy, including class-weighted ones). A user who wants the
classes to count alike picks ``class_weights`` on a balanced held-out set, not through the
score. Each candidate's held-out *objective* (its early stopping) is its own: its penalty
plus its own loss's mean over the held rows (sample weights, not class weights).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dsvm.combine.averaging import ParameterAveraging
from dsvm.kernels.losses import LOSS_CODES
from dsvm.kernels.losses import REGRESSION_LOSSES as REGRESSION_ONLY
from dsvm.solvers.base import PassStats, SolverState
from dsvm.training.spec import FitSpec

# The non-alpha axes: the estimator's list parameter -> the parameter of one fit it sets.
AXES = {"l1_ratios": "l1_ratio", "losses": "loss", "class_weights": "class_weight"}


@dataclass(frozen=True)
class GridAxes:
    """The grid's axes: the alphas and the values of the other axes given (None: not an
    axis, the fit's one value for every candidate)."""

    alphas: np.ndarray
    l1_ratios: tuple[float, ...] | None = None
    losses: tuple[str, ...] | None = None
    class_weights: tuple[Any, ...] | None = None

    def given(self) -> dict[str, tuple[Any, ...]]:
        """The non-alpha axes given, by the parameter of one fit they set, in the order of
        :data:`AXES`."""
        return {one: values for many, one in AXES.items()
                if (values := getattr(self, many)) is not None}

    @property
    def n_candidates(self) -> int:
        return len(self.alphas) * int(np.prod([len(v) for v in self.given().values()]))

    def candidates(self) -> list[dict[str, Any]]:
        """Each candidate's parameters (``alpha`` and the axes given), alpha fastest, then
        the axes in reverse order of :data:`AXES` (the class weight slowest)."""
        given = self.given()
        names = list(given)[::-1]
        out = []
        for combo in itertools.product(*[given[n] for n in names]):
            for a in self.alphas:
                out.append({"alpha": float(a), **dict(zip(names, combo))})
        return [{k: c[k] for k in ("alpha", *given)} for c in out]

    def columns(self) -> dict[str, np.ndarray]:
        """``param_<name>`` columns of ``cv_results_`` (one entry per candidate): alpha's as
        floats, the others as object arrays (strings, dicts and None side by side)."""
        candidates = self.candidates()
        out = {"param_alpha": np.array([c["alpha"] for c in candidates])}
        for name in self.given():
            column = np.empty(len(candidates), dtype=object)
            column[:] = [c[name] for c in candidates]
            out[f"param_{name}"] = column
        return out

    def describe(self, k: int) -> str:
        """Candidate ``k`` in words (``alpha 0.001, loss 'hinge'``), for the log."""
        return ", ".join(f"{name} {value:.3g}" if name == "alpha" else f"{name} {value!r}"
                         for name, value in self.candidates()[k].items())

    def jsonable(self) -> dict[str, Any]:
        """The axes as a checkpoint records them (JSON values: a dict of class weights as
        [label, weight] pairs, as :meth:`FitSpec.jsonable_params` writes one), only those
        given, so that a grid of alphas alone records what it did before the other axes."""
        out: dict[str, Any] = {}
        for many in AXES:
            values = getattr(self, many)
            if values is not None:
                out[f"grid_{many}"] = [_jsonable(v) for v in values]
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return [[_plain(label), float(w)] for label, w in value.items()]
    return _plain(value)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def resolve_axes(spec: FitSpec, alphas: np.ndarray, *, l1_ratios: Any = None,
                 losses: Any = None, class_weights: Any = None) -> GridAxes:
    """The grid's axes, checked: each a non-empty list of values a fit of this estimator
    takes, in a combination whose candidates can share one pass (see the module notes).
    (Keyword-only: an axis this does not know is a TypeError naming it.)"""
    axes = GridAxes(np.asarray(alphas, np.float64),
                    l1_ratios=_checked_l1_ratios(spec, _listed("l1_ratios", l1_ratios)),
                    losses=_checked_losses(spec, _listed("losses", losses)),
                    class_weights=_checked_class_weights(spec, _listed("class_weights",
                                                                       class_weights)))
    return axes


def _listed(name: str, values: Any) -> tuple[Any, ...] | None:
    if values is None:
        return None
    if isinstance(values, (str, Mapping)) or not isinstance(values, (list, tuple, np.ndarray)):
        raise ValueError(f"{name} must be a list of values (a grid axis) or None; got "
                         f"{values!r}.")
    listed = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
    if not listed:
        raise ValueError(f"{name} must list at least one value; got {values!r}.")
    return listed


def _checked_l1_ratios(spec: FitSpec, values: tuple[Any, ...] | None
                       ) -> tuple[float, ...] | None:
    if values is None:
        return None
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, (int, float))
           or not 0.0 <= float(v) <= 1.0]
    if bad:
        raise ValueError(f"l1_ratios must be floats in the range [0.0, 1.0]; got "
                         f"{list(values)!r}.")
    if spec.penalty != "elasticnet":
        raise ValueError(f"l1_ratios={list(values)!r} are shares of L1 in the elastic net: "
                         f"they need penalty='elasticnet' (got penalty={spec.penalty!r}), as "
                         "scikit-learn's LogisticRegressionCV.")
    if spec.solver != "sgd":
        raise ValueError(f"l1_ratios={list(values)!r}: solver={spec.solver!r} has no L1 part "
                         "(its step 1/(alpha t) needs the L2 term's strong convexity); use "
                         "solver='sgd' or 'auto' (FOLOS prox steps).")
    return tuple(float(v) for v in values)


def _checked_losses(spec: FitSpec, values: tuple[Any, ...] | None) -> tuple[str, ...] | None:
    if values is None:
        return None
    if spec.classifies:
        known = [n for n in LOSS_CODES if n == "squared" or n not in REGRESSION_ONLY]
    else:
        known = list(REGRESSION_ONLY)
    bad = [v for v in values if not isinstance(v, str) or v not in known]
    if bad:
        what = "classifier" if spec.classifies else "regressor"
        raise ValueError(f"losses must be losses of a {what} among {known}; got {bad[0]!r} "
                         f"in {list(values)!r}.")
    return tuple(str(v) for v in values)


def _checked_class_weights(spec: FitSpec, values: tuple[Any, ...] | None
                           ) -> tuple[Any, ...] | None:
    if values is None:
        return None
    if not spec.classifies:
        raise ValueError(f"class_weights={list(values)!r}: a regression has no classes to "
                         "weigh.")
    bad = [v for v in values if not (v is None or v == "balanced" or isinstance(v, Mapping))]
    if bad:
        raise ValueError(f"class_weights must list None, 'balanced' or dicts {{label: weight}}; "
                         f"got {bad[0]!r} in {list(values)!r}.")
    return tuple(dict(v) if isinstance(v, Mapping) else v for v in values)


def candidate_spec(spec: FitSpec, params: Mapping[str, Any]) -> FitSpec:
    """The spec of the single fit a candidate stands for (``params``: its alpha and the values
    of the axes given)."""
    return spec.with_params(**params)


class SomeSupportsIntersected(ParameterAveraging):
    """Parameter averaging of a grid whose candidates differ in whether they have an L1 part:
    the intersection of the streams' supports (:mod:`dsvm.combine.averaging`, "L1 / elastic
    net") only on the rows of the candidates that have one (``l1``, one bool per candidate of
    a stack), the plain average on the others: each candidate combined as its single fit's
    combiner would (:func:`dsvm.combine.combiner_for`)."""

    def __init__(self, l1: Sequence[bool]) -> None:
        super().__init__(intersect_support=True)
        self.l1 = np.asarray(l1, bool)

    def finalize(self, partial: Any, previous: SolverState) -> tuple[SolverState, PassStats]:
        support = None if partial is None else partial.iterate.get("support")
        if support is None:  # (a lone stream: nothing is intersected)
            return super().finalize(partial, previous)
        plain = replace(partial, iterate={k: v for k, v in partial.iterate.items()
                                          if k != "support"})
        state, stats = super().finalize(plain, previous)
        m = state.coef.shape[0] // len(self.l1)
        dropped = support < partial.n_streams  # zero in some stream
        dropped[~np.repeat(self.l1, m)] = False
        state.coef[dropped] = 0
        return state, stats
