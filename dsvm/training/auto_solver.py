"""``solver="auto"``: the solver a fit runs, chosen from its loss, penalty, kernel and what it
is asked to do, by measurement.

a9a (lambda = 1/n, 10 epochs, 2 workers), the objective above LIBLINEAR's optimum: ``pegasos``
+3.06% (test accuracy 84.67%), averaged ``sgd`` +0.92%, ``cocoa`` +0.02% in 7 epochs (84.98%,
LIBLINEAR's). So a linear classifier with a hinge or squared hinge loss and an L2 penalty trains
with CoCoA+ (the dual method reaches the optimum in a few epochs, and says how far it is: its
duality gap). Everything CoCoA+ cannot do goes to averaged SGD, the best of the stochastic
solvers on the same runs and the one that takes every loss and penalty:

- other losses (logistic, smoothed hinge, squared; every regression), L1 and elastic-net
  penalties, kernel maps;
- early stopping and a validation set: the stochastic solvers' way of stopping, where CoCoA+
  stops on its duality gap (``solver="cocoa"`` scores validation data and holds out chunks
  too, when asked);
- ``partial_fit`` (CoCoA+ keeps a dual variable per row of one dataset: after a CoCoA+ fit,
  ``partial_fit`` continues with SGD from its model), and a warm start or ``init=`` (CoCoA+
  starts from zero duals).

- more categories used than rows (hashed click logs: ``criteo_sample``, 7,200 training rows
  using 32,294 of 2^18 + 13 features; ``avazu_sample``, 9,000 of 2^18): the optimum at the
  default alpha fits the training rows, and its ranking of held-out clicks is worse than
  averaged SGD's after 10 epochs (test AUC 0.682 against 0.744 on Criteo, 0.672 against 0.735
  on Avazu; scikit-learn's FeatureHasher + SGDClassifier 0.708 and 0.698). The features
  counted are the columns that hold a nonzero value (:func:`used_width`), not the width: a
  DataFrame's text column of three values is hashed into 2^18 features and uses three, and
  its fit (2,000 rows) went to SGD, which stopped at ``max_epochs`` with a ConvergenceWarning
  8% above the optimum that CoCoA+ reaches in 4 epochs. Of sparse rows, only the columns of
  categories count (all their values +-1): text's weighted tokens are not memorised rows.
  IMDB's reviews (25,000 rows using about 75,000 of HashingVectorizer's 2^22 columns) went to
  SGD by the width, which stopped at ``max_epochs`` 4.8% above the optimum (objective 0.4589
  against 0.4380; test accuracy 0.842) with a ConvergenceWarning, where CoCoA+ converges in 2
  epochs (0.865; LinearSVC 0.884 at its C=1). The choice is made once the input's
  shape is known (a dataset's metadata, an array's shape; a DataFrame's after its partitions
  are counted), and where it hinges on the used columns (:func:`width_decides`), from the
  columns' statistics: a dataset's stored ones, else the scaling stage's pass, made first.

A kernel map's fit that CoCoA+ would take but for the map (a hinge loss, an L2 penalty) goes to
Pegasos, not averaged SGD: on the maps' features averaged SGD's steps stalled at the default
alpha, and ijcnn1's model predicted the majority class (test accuracy 0.9041 with RFF and
Nystroem, 512 components), where Pegasos got 0.9534 and 0.9640; on phishing 0.9430/0.9424
against Pegasos' 0.9454/0.9457, on 60,000 rows of skin_nonskin 0.9936/0.9939 against
0.9939/0.9943, in the same time (default settings but ``n_components=512``, side by side in
one process; ijcnn1's training and validation files, the others split 70/30; scikit-learn's
Nystroem + LinearSVC: 0.980 on ijcnn1).

The chosen solver is the fit's ``solver_``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dsvm.kernels.dcd import DCD_LOSSES
from dsvm.training.record import LOADED
from dsvm.training.spec import FitSpec


def why_not_cocoa(spec: FitSpec, *, validation: Any = None, init: Any = None,
                  warm: Any = None, partial: bool = False,
                  shape: tuple[int, int] | None = None) -> str | None:
    """Why ``spec``'s fit should not run CoCoA+ (None: it should). ``shape``: the training
    rows and the features they use (:func:`used_width`), once known."""
    p = spec.params
    kernel = p.get("kernel", "linear")
    rows, features = shape if shape is not None else (1, 0)
    reasons = (
        (not spec.classifies, "a regression"),
        (p.get("loss", "hinge") not in DCD_LOSSES, f"loss={p.get('loss')!r}"),
        (p.get("penalty", "l2") != "l2", f"penalty={p.get('penalty')!r}"),
        (not (isinstance(kernel, str) and kernel == "linear"), f"kernel={kernel!r}"),
        (bool(p.get("early_stopping")), "early_stopping=True"),
        (validation is not None, "a validation set"),
        (init is not None or warm is not None, "a warm start"),
        (partial, "partial_fit"),
        (features > rows, f"more categories used ({features:,}) than rows ({rows:,})"),
    )
    return next((why for cannot, why in reasons if cannot), None)


def width_decides(spec: FitSpec, shape: tuple[int, int], **context: Any) -> bool:
    """Whether ``solver="auto"``'s choice for ``spec`` on ``shape`` (rows, columns) hinges on
    how many of the columns the rows use: everything else allows CoCoA+, and there are more
    columns than rows."""
    rows, features = shape
    return (spec.solver == "auto" and features > rows
            and why_not_cocoa(spec, **context) is None)


def used_width(stats: Any, n_features: int) -> int:
    """The columns that hold a nonzero value by the column statistics ``stats``
    (:class:`dsvm.data.stats.FeatureStats`; None: all ``n_features``); of CSR rows, those of
    categories only: every stored value +-1 (one-hot columns, hashed or not), by their counts
    and sums of squares (a column holding a sum of colliding categories is left out)."""
    if stats is None:
        return n_features
    used = stats.max_abs > 0
    if stats.stored_count is not None and stats.stored_sum_sq is not None:
        used &= (stats.max_abs == 1) & (stats.stored_sum_sq == stats.stored_count)
    return int(np.count_nonzero(used))


def chosen_solver(spec: FitSpec, **context: Any) -> str:
    """The solver ``solver="auto"`` runs for this fit (see the module notes)."""
    why = why_not_cocoa(spec, **context)
    if why is None:
        return "cocoa"
    return "pegasos" if why.startswith("kernel=") and kernel_map_for_pegasos(spec) else "sgd"


def kernel_map_for_pegasos(spec: FitSpec) -> bool:
    """Whether a kernel map's fit is one CoCoA+ would take but for the map: a hinge loss, an
    L2 penalty, nothing else asked of the stochastic solvers (module notes)."""
    p = spec.params
    return (spec.classifies and p.get("loss", "hinge") == "hinge"
            and p.get("penalty", "l2") == "l2" and not p.get("early_stopping"))


def resolve_solver(spec: FitSpec, *, previous: str | None = None, **context: Any) -> FitSpec:
    """``spec`` with ``solver="auto"`` replaced by its choice (``previous``: the solver of the
    fit a ``partial_fit`` continues)."""
    if spec.solver != "auto":
        return spec
    # a partial_fit after a CoCoA+ fit goes on with SGD from its model (CoCoA+'s duals belong to
    # the rows of that fit: training.stochastic.continued_from_dual)
    # (and a loaded model's, which continues as another solver's model does)
    name = previous if previous not in (None, "cocoa", LOADED) else chosen_solver(spec,
                                                                                 **context)
    return replace(spec, solver=name, params={**spec.params, "solver": name})
