"""scikit-learn style estimators: ``SVMClassifier``.

Input decides where training runs (dask-ml's rule): NumPy/SciPy arrays train in this process;
a dataset path/URL, a :class:`dsvm.Dataset` or dask arrays train on a Dask cluster (the given
``client``, else the active Client, else an embedded LocalCluster closed afterwards).
"""

from __future__ import annotations

import contextlib
import logging
import numbers
import os
import warnings
from typing import Any, Iterator

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from dsvm import _kernel_estimator as kern
from dsvm._validation import AnyOf, InstanceOf, Interval, NoneOr, Options, validate_params
from dsvm.combine.averaging import make_combiner
from dsvm.data.order import draw_seed
from dsvm.data.zarr_store import Dataset, open_dataset
from dsvm.distributed.driver import FitPlan, run_epochs
from dsvm.distributed.engine import LocalEngine
from dsvm.distributed.feature_maps import fit_feature_map, map_source
from dsvm.distributed.sources import ArraySource, DaskSource, DatasetSource, Source
from dsvm.exceptions import ConvergenceWarning
from dsvm.features.maps import RFF, Nystroem
from dsvm.kernels.bsgd import MERGE_CODES
from dsvm.model import save_model
from dsvm.solvers.base import SolverState, n_outputs_for
from dsvm.solvers.objective import decision_block
from dsvm.kernels.losses import loss_param
from dsvm.solvers.options import solver_kwargs
from dsvm.solvers.penalties import estimator_penalty
from dsvm.solvers.targets import LossSpec
from dsvm.solvers.registry import SOLVERS, make_solver

logger = logging.getLogger(__name__)

_LOSSES = ("hinge", "squared_hinge", "logistic", "smoothed_hinge", "squared")


def _is_dask_collection(x: Any) -> bool:
    return hasattr(x, "__dask_graph__") and hasattr(x, "to_delayed")


def _is_dataset_ref(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike, Dataset))


class SVMClassifier(ClassifierMixin, BaseEstimator):
    """Linear SVM classifier trained by distributed stochastic passes over chunked data.

    Minimises ``alpha/2 * ||w||^2 + mean_i loss(y_i, w.x_i + b)`` (one such problem per class in
    one-vs-rest multiclass, all K trained in the same pass over the data).

    Parameters
    ----------
    solver : {"pegasos", "sgd", "asset", "asset*", "nesvm", "bsgd"}, default="pegasos"
        ``"pegasos"``: Pegasos (step 1/(alpha t), mini-batches of ``batch_size``, projection on
        the ball of radius 1/sqrt(alpha)). ``"sgd"``: averaged SGD (Bottou's schedule,
        Polyak-Ruppert averaging). ``"asset"``: ASSET (step D_X/(D_G sqrt(j)), projection,
        eta-weighted averaging from rho N); ``"asset*"``: ASSET* (no intercept, step
        1/(alpha j), last iterate). See :mod:`dsvm.solvers.asset`. ``"nesvm"``: NESVM,
        Nesterov's optimal gradient method on the smoothed objective, one exact full-gradient
        data pass per iteration (see :mod:`dsvm.solvers.nesvm`); C-SVM (``loss="hinge"``),
        LP-SVM (``penalty="l1"``), LS-SVM (``loss="squared"``). ``"bsgd"``: budgeted SGD for
        the Gaussian kernel (papers/001; hinge loss, no intercept, see ``gamma``, ``budget``,
        ``merge``); parallel streams are combined by averaging their kernel expansions and
        merging the union back to ``budget``.
    loss : {"hinge", "squared_hinge", "logistic", "smoothed_hinge", "squared"}, default="hinge"
        ``"smoothed_hinge"``: NESVM's smoothed hinge in its Huber form, smoothing ``mu``;
        ``"squared"``: (y - p)^2 = (1 - y p)^2, the LS-SVM loss.
    alpha : float, default=1e-4
        Regularisation strength, the papers' lambda. Values must be in the range (0, inf).
        For users of ``LinearSVC(C=...)`` on n samples: ``alpha = 1 / (n * C)``; the NESVM
        paper's C is the same C = 1/(alpha n).
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
        ``"l1"``/``"elasticnet"`` with the stochastic solvers (``"sgd"``): FOLOS proximal steps
        for alpha * (l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2), with exact zeros in
        ``coef_`` (see :mod:`dsvm.kernels.prox`); ``"l1"`` is l1_ratio = 1. With
        ``solver="nesvm"``, ``"l1"`` is the LP-SVM (alpha ||w||_1, smoothed).
    l1_ratio : float, default=0.15
        The L1 share of the elastic net. Values must be in the range [0, 1].
    mu : float, default=0.03
        Smoothing of the smoothed hinge. With ``loss="smoothed_hinge"`` (stochastic solvers)
        the hinge becomes quadratic on margins in (1 - mu, 1). With ``solver="nesvm"`` the
        paper's form: quadratic on (1 - mu ||x||_inf, 1) (and the L1 norm smoothed alike); the
        objective minimised is within mu/2 * mean ||x_i||_inf of the true one (its Theorem 1),
        and ``mu`` is the target mu* of homotopy. Values must be in the range (0, inf).
    mu0 : float or None, default=None
        Homotopy NESVM (the paper's Algorithm 2): start at ``mu0`` and solve a sequence of
        problems with mu_t = mu0 / (t + 1) down to ``mu``, each warm-started from the last,
        as one continued run of Nesterov's iterations; a stage ends on ``tol`` or once a pass
        gains less than 0.3 x its smoothing error, the last on ``tol`` (see
        :mod:`dsvm.solvers.nesvm`). ``None``: plain NESVM at ``mu``.
    warm_start : bool, default=False
        ``solver="nesvm"`` only: start from this estimator's current ``coef_`` /
        ``intercept_`` (e.g. after a fit with ``solver="sgd"``) instead of zeros.
    fit_intercept : bool, default=True
        Learn an unregularised bias.
    max_epochs : int, default=10
        Passes over the data in ``fit``. Values must be in the range [1, inf).
    tol : float or None, default=1e-3
        Stop when the epoch's objective estimate has not improved on the best by more than
        ``tol`` for ``n_iter_no_change`` epochs. ``None`` always runs ``max_epochs``.
        ``solver="nesvm"``: the epsilon of Algorithm 1 on the paper's scale: a stage (the
        whole fit without homotopy) stops when |F_mu(w^k+1) - F_mu(w^k)| < tol with F_mu the
        paper's smoothed objective 1/2 ||w||^2 + C sum_i loss, which is the objective above
        divided by alpha (the paper's experiments use 1e-3).
    n_iter_no_change : int, default=3
    batch_size : int, default=1
        Rows per stochastic step (Pegasos' k).
    average : bool, default=True
        Predict with the average of the iterates rather than the last one. For ``"pegasos"``
        this is the t-weighted average (Algorithm 2 of the papers returns the last iterate,
        which ``average=False`` gives exactly); for ``"sgd"`` the Polyak-Ruppert average.
    rho : float, default=0.5
        ASSET averages the iterates from step rho N on (N: the steps of ``max_epochs`` epochs).
        Values must be in the range [0, 1).
    kernel : {"linear", "rff", "nystroem"}, RFF or Nystroem, default="linear"
        Train the linear solver on a Gaussian-kernel feature map applied to each chunk on the
        worker that reads it (papers/000 §2.3): random Fourier features or a Nystroem map with
        ``n_components`` landmarks sampled in one pass over the data. The fitted map is kept in
        ``feature_map_``, saved with the model and applied at prediction (§2.4).
    n_components : int, default=1024
        Size of the ``kernel`` map. Values must be in the range [1, inf).
    gamma : float, default=1.0
        Width of the Gaussian kernel exp(-gamma ||s - t||^2), for ``kernel`` and for
        ``solver="bsgd"``. Values must be in the range (0, inf).
    budget : int, default=500
        ``solver="bsgd"``: support vectors kept per output (B). Values must be in the range [1, inf).
    merge : {"gss", "gss-precise", "lookup-h", "lookup-wd"}, default="lookup-wd"
        ``solver="bsgd"``: how the merge coefficient is found (papers/001): golden section search
        to 0.01 or 1e-10, or the precomputed 400 x 400 lookup of h or of the weight degradation.
    n_streams : int or None, default=None
        Parallel streams per epoch. ``None``: the number of workers when the fit starts (1 for
        in-memory input). Fixed for the fit, so losing a worker does not change the model.
        For in-memory input several streams run in threads of this process (one per core at
        most), which gives the same model as running them one after another.
    chunk_rows : int, default=65536
        Rows per chunk when cutting in-memory arrays (datasets keep their own chunks).
    n_workers : int or None, default=None
        Worker processes of the embedded LocalCluster (``None``: one per core).
    random_state : int, numpy Generator or None, default=None
        Seeds the chunk orders and row orders; the same seed gives the same model.
    verbose : int, default=0
        0: silent; 1: a progress bar; 2: also one line per epoch.
    client : distributed.Client, str or None, default=None
        The Dask client or a scheduler address. ``None``: the active Client, else an embedded
        LocalCluster.
    checkpoint : str, path or None, default=None
        A file path or fsspec URL where the full training state is written, atomically, after
        every epoch (see :mod:`dsvm.checkpoint`); ``fit(..., resume=True)`` continues from it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels. Labels of any type are accepted in arrays (strings, objects: compared
        as text); the kernels see their indices, and ``predict`` returns the labels themselves.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features), in the data's dtype
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_features_in_ : int
    n_iter_ : int
        Epochs run so far (for ``solver="nesvm"``: data passes, one per iteration).
    t_ : float
        Solver steps so far (the schedule's counter).
    history_ : list of dict
        Per epoch: epoch, objective, train_loss, val_accuracy, seconds, rows_per_s, n_rows, t,
        extrapolated (averaged Pegasos: whether the model after that epoch is its average's
        Richardson extrapolation, see :mod:`dsvm.solvers.extrapolation`; None for the others).
        ``train_loss`` is progressive (each row's loss at the iterate before its step, free to
        compute during the pass) and ``objective`` = alpha/2 ||w||^2 + train_loss: an estimate
        that runs above the objective of the returned (averaged) model, which
        :meth:`evaluate` computes exactly with one more pass.
        ``solver="nesvm"``: per pass, ``objective`` is the exact true (unsmoothed) objective of
        the model the fit returns at that point, ``smoothed_objective`` / ``iterate_objective``
        the smoothed / true objective at the iterate w^k, ``smoothed_objective_y`` the smoothed
        objective at y^(k-1) (Eq. 33), plus ``stage``, ``mu`` and ``lipschitz_factor``.

    Examples
    --------
    >>> import numpy as np
    >>> from dsvm import SVMClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> clf = SVMClassifier(alpha=1e-3, random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    _parameter_constraints: dict[str, Any] = {
        "solver": Options((*SOLVERS, "nesvm")),
        "loss": Options(_LOSSES),
        "alpha": Interval(numbers.Real, 0.0, None, "neither"),
        "penalty": Options(("l2", "l1", "elasticnet")),
        "l1_ratio": Interval(numbers.Real, 0.0, 1.0, "both"),
        "mu": Interval(numbers.Real, 0.0, None, "neither"),
        "mu0": NoneOr(Interval(numbers.Real, 0.0, None, "neither")),
        "warm_start": InstanceOf((bool,), "a bool"),
        "fit_intercept": InstanceOf((bool,), "a bool"),
        "max_epochs": Interval(numbers.Integral, 1, None, "left"),
        "tol": NoneOr(Interval(numbers.Real, 0.0, None, "left")),
        "n_iter_no_change": Interval(numbers.Integral, 1, None, "left"),
        "batch_size": Interval(numbers.Integral, 1, None, "left"),
        "average": InstanceOf((bool,), "a bool"),
        "rho": Interval(numbers.Real, 0.0, 1.0, "left"),
        "kernel": AnyOf((Options(kern.KERNELS), InstanceOf((RFF, Nystroem), "")),
                        "a str among {'linear', 'nystroem', 'rff'} or an RFF or Nystroem"),
        "n_components": Interval(numbers.Integral, 1, None, "left"),
        "gamma": Interval(numbers.Real, 0.0, None, "neither"),
        "budget": Interval(numbers.Integral, 1, None, "left"),
        "merge": Options(tuple(MERGE_CODES)),
        "n_streams": NoneOr(Interval(numbers.Integral, 1, None, "left")),
        "chunk_rows": Interval(numbers.Integral, 1, None, "left"),
        "n_workers": NoneOr(Interval(numbers.Integral, 1, None, "left")),
        "random_state": AnyOf(
            (NoneOr(Interval(numbers.Integral, 0, None, "left")),
             InstanceOf((np.random.Generator,), "a Generator")),
            "an int in the range [0, inf), a numpy Generator or None",
        ),
        "verbose": Interval(numbers.Integral, 0, None, "left"),
        "checkpoint": NoneOr(InstanceOf((str, os.PathLike), "a path or URL string")),
    }

    def __init__(
        self,
        *,
        solver: str = "pegasos",
        loss: str = "hinge",
        alpha: float = 1e-4,
        penalty: str = "l2",
        l1_ratio: float = 0.15,
        mu: float = 0.03,
        mu0: float | None = None,
        warm_start: bool = False,
        fit_intercept: bool = True,
        max_epochs: int = 10,
        tol: float | None = 1e-3,
        n_iter_no_change: int = 3,
        batch_size: int = 1,
        average: bool = True,
        rho: float = 0.5,
        kernel: Any = "linear",
        n_components: int = 1024,
        gamma: float = 1.0,
        budget: int = 500,
        merge: str = "lookup-wd",
        n_streams: int | None = None,
        chunk_rows: int = 65536,
        n_workers: int | None = None,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
        client: Any = None,
        checkpoint: str | os.PathLike | None = None,
    ) -> None:
        self.solver = solver
        self.loss = loss
        self.alpha = alpha
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.mu = mu
        self.mu0 = mu0
        self.warm_start = warm_start
        self.fit_intercept = fit_intercept
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.batch_size = batch_size
        self.average = average
        self.rho = rho
        self.kernel = kernel
        self.n_components = n_components
        self.gamma = gamma
        self.budget = budget
        self.merge = merge
        self.n_streams = n_streams
        self.chunk_rows = chunk_rows
        self.n_workers = n_workers
        self.random_state = random_state
        self.verbose = verbose
        self.client = client
        self.checkpoint = checkpoint

    # -- parameters and inputs -----------------------------------------------------------------
    def _validate(self) -> None:
        params = self.get_params(deep=False)
        validate_params(type(self).__name__, params, self._parameter_constraints)
        kern.check_kernel_solver(self.kernel, self.solver)

    def _make_solver(self) -> Any:
        return make_solver(
            self.solver,
            loss=self.loss,
            alpha=float(self.alpha),
            fit_intercept=self.fit_intercept,
            batch_size=int(self.batch_size),
            average=self.average,
            **solver_kwargs(self, getattr(self, "n_samples_fit_", None)),
            **(dict(gamma=float(self.gamma), budget=int(self.budget), merge=self.merge)
               if self.solver == "bsgd" else {}),
        )

    def _make_combiner(self) -> Any:
        if self.solver == "bsgd":
            return kern.bsgd_combiner(self.budget, self.gamma, self.merge)
        return make_combiner("average")

    def _kernel_source(self, engine: Any, source: Source, fit: bool, seed: int | None = None) -> Any:
        """``source`` seen through the kernel map, fitted first when ``fit``.

        The map is drawn from the fit's ``seed`` (kept in checkpoints), so a resumed fit
        rebuilds the same map.
        """
        if fit:
            seed = draw_seed(self.random_state) if seed is None else seed
            self.feature_map_ = kern.make_feature_map(
                self.kernel, self.n_components, self.gamma, seed)
            if self.feature_map_ is not None:
                fit_feature_map(self.feature_map_, engine, source, seed)
        return map_source(source, getattr(self, "feature_map_", None))

    def _predictor(self, state: SolverState) -> tuple[np.ndarray, np.ndarray, Any]:
        """(coef, intercept, feature map or None) that predict for ``state``."""
        if self.solver == "bsgd":
            return kern.expansion_model(state, float(self.gamma))
        coef, intercept = state.model()
        return coef, intercept, getattr(self, "feature_map_", None)

    def _source(self, X: Any, y: Any, sample_weight: Any = None) -> Source:
        if _is_dataset_ref(X):
            if y is not None:
                raise ValueError(
                    "y must be None when X is a dataset path or Dataset: the labels are stored in it."
                )
            if sample_weight is not None:
                raise ValueError("sample_weight must be stored in the dataset when X is a dataset.")
            ds = X if isinstance(X, Dataset) else open_dataset(X)
            return DatasetSource(ds)
        if y is None:
            raise ValueError("y is required when X is an array (it is stored in datasets only).")
        if _is_dask_collection(X):
            import dask.array as da

            if not _is_dask_collection(y):
                y = da.from_array(np.asarray(y), chunks=(X.chunks[0],))
            if y.dtype.kind not in "biuf" and hasattr(self, "_label_codes"):
                known = self._label_set(lambda: da.unique(y).compute())
                y = y.map_blocks(_codes_of, known, dtype=np.float64)
            if sample_weight is not None and not _is_dask_collection(sample_weight):
                sample_weight = da.from_array(np.asarray(sample_weight), chunks=(X.chunks[0],))
            return DaskSource(X, y, sample_weight)
        X = X if sp.issparse(X) else np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
        y_arr = np.asarray(y)
        if y_arr.dtype.kind not in "biuf" and hasattr(self, "_label_codes"):
            y_arr = self._label_codes(y_arr)
        if y_arr.dtype.kind not in "biuf":
            raise ValueError(f"y must hold numeric labels; got dtype {y_arr.dtype}.")
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        return ArraySource(X, y_arr, sw, chunk_rows=int(self.chunk_rows))

    # -- labels of any type ----------------------------------------------------------------------
    # Kernels and datasets see numeric labels. Other labels (strings, objects) given as arrays are
    # replaced on the way in by their index in the sorted label set, which becomes ``classes_``;
    # predict maps the winning index back through ``classes_``.
    def _label_set(self, distinct: Any) -> np.ndarray:
        """The sorted label set of a fit: the fitted one, else ``distinct()`` (kept for _start)."""
        known = getattr(self, "classes_", None)
        if known is not None and known.dtype.kind not in "biuf":
            return known
        if getattr(self, "_text_classes", None) is None:
            self._text_classes = np.unique(np.asarray(distinct()).astype(str))
        return self._text_classes

    def _label_codes(self, y: np.ndarray, classes: Any = None) -> np.ndarray:
        known = self._label_set(lambda: y if classes is None else np.asarray(classes))
        return _codes_of(y, known)

    @contextlib.contextmanager
    def _engine(self, source: Source) -> Iterator[Any]:
        if isinstance(source, ArraySource):
            yield LocalEngine()
            return
        from dsvm.distributed.client import cluster_client
        from dsvm.distributed.engine import DaskEngine

        with cluster_client(self.client, n_workers=self.n_workers) as client:
            yield DaskEngine(client)

    @contextlib.contextmanager
    def _predict_engine(self, source: Source) -> Iterator[Any]:
        """Prediction on a dataset runs in-process unless a client was given or is active."""
        from dsvm.distributed.client import active_client

        if isinstance(source, ArraySource) or (self.client is None and active_client() is None
                                               and isinstance(source, DatasetSource)):
            yield LocalEngine()
            return
        with self._engine(source) as engine:
            yield engine

    # -- fitting ---------------------------------------------------------------------------------
    def fit(
        self, X: Any, y: Any = None, *, sample_weight: Any = None, validation: Any = None,
        init: Any = None,
        resume: bool = False,
    ) -> SVMClassifier:
        """Train from scratch for up to ``max_epochs`` epochs.

        ``X``: a dataset path or URL (or :class:`dsvm.Dataset`; then ``y`` is None), dask arrays,
        or NumPy/SciPy arrays. ``validation``: a dataset path/Dataset or an ``(X, y)`` pair,
        scored after every epoch into ``history_[i]["val_accuracy"]``. ``init``: a fitted
        model (anything with ``coef_`` / ``intercept_``, e.g. an SGD fit) that
        ``solver="nesvm"`` starts from. ``resume=True``: continue
        from the ``checkpoint`` file when it exists (up to ``max_epochs`` epochs in all), else
        start from scratch; the result equals the uninterrupted fit's.
        """
        self._validate()
        if self.solver == "nesvm":
            if not (isinstance(self.kernel, str) and self.kernel == "linear"):
                raise ValueError(
                    f"solver='nesvm' trains linear models only; got kernel={self.kernel!r}. "
                    "Use a stochastic solver (pegasos, sgd, asset) with a kernel map."
                )
            if self.checkpoint is not None or resume:
                raise ValueError(
                    "checkpoint= and resume= cover the stochastic solvers; solver='nesvm' is a "
                    "deterministic full-gradient method: rerun it, or warm-start it from a model "
                    "(warm_start=True or init=)."
                )
            return self._fit_nesvm(X, y, sample_weight, validation, init)
        if init is not None:
            raise ValueError(
                f"init= needs solver='nesvm'; solver={self.solver!r} trains from zero "
                "(use partial_fit to continue a fit)."
            )
        for attr in ("coef_", "intercept_", "classes_", "state_", "history_", "n_iter_",
                     "_text_classes",
                     "feature_map_"):
            self.__dict__.pop(attr, None)
        source = self._source(X, y, sample_weight)
        ckpt = self._resume_checkpoint(source) if resume else None
        with self._engine(source) as engine:
            seed = ckpt.seed if ckpt is not None else draw_seed(self.random_state)
            source = self._kernel_source(engine, source, fit=True, seed=seed)
            if ckpt is None:
                self._start(engine, source, classes=None, seed=seed)
            else:
                self._restore(ckpt)
                self.n_samples_fit_ = source.n_samples  # ASSET's N, as in _start
            remaining = self.max_epochs - self.n_iter_
            if remaining > 0 and not (ckpt is not None and ckpt.converged):
                self._run(engine, source, remaining, validation, warn=self.tol is not None)
            else:
                self._publish()
        return self

    def _resume_checkpoint(self, source: Source) -> Any:
        from dsvm.checkpoint import check_resumable, checkpoint_exists, load_checkpoint

        if self.checkpoint is None:
            raise ValueError("resume=True needs the 'checkpoint' parameter (a path or URL).")
        if not checkpoint_exists(self.checkpoint):
            logger.info("no checkpoint at %s yet: starting from scratch", self.checkpoint)
            return None
        ckpt = load_checkpoint(self.checkpoint)
        check_resumable(self, ckpt, source.n_features, source.dtype, os.fspath(self.checkpoint))
        return ckpt

    def _restore(self, ckpt: Any) -> None:
        from dsvm.checkpoint import solver_state_of

        if len(ckpt.classes):  # regressors have none
            self.classes_ = ckpt.classes
        self.n_features_in_ = ckpt.n_features
        self.seed_ = ckpt.seed
        self.n_streams_ = ckpt.n_streams
        self.state_ = solver_state_of(ckpt)
        self.n_iter_ = ckpt.epoch
        self.history_ = list(ckpt.history)

    def _epoch_callback(self, source: Source) -> Any:
        """What runs after each epoch: the checkpoint write and any hooks (detached jobs)."""
        from dsvm.distributed.hooks import EPOCH_HOOKS

        hooks = EPOCH_HOOKS.get()
        if self.checkpoint is None and not hooks:
            return None

        def on_epoch(state: SolverState, history: list, converged: bool) -> None:
            if self.checkpoint is not None:
                from dsvm.checkpoint import checkpoint_of, save_checkpoint

                save_checkpoint(self.checkpoint, checkpoint_of(
                    self, state, history, converged, source.n_chunks, source.describe()))
            for hook in hooks:
                hook(self, state, history, converged)

        return on_epoch

    def partial_fit(
        self,
        X: Any,
        y: Any = None,
        classes: Any = None,
        *,
        sample_weight: Any = None,
        validation: Any = None,
    ) -> SVMClassifier:
        """One epoch over the data, continuing the schedule and state of earlier calls."""
        self._validate()
        if self.solver == "nesvm":
            raise ValueError(
                "solver='nesvm' is a full-gradient method and has no partial_fit; call fit "
                "(with warm_start=True to continue from the current model)."
            )
        if not hasattr(self, "state_") and classes is not None:
            given = np.asarray(classes)
            if given.dtype.kind not in "biuf":  # labels of any type: the full set, up front
                self._text_classes = np.unique(given.astype(str))
        source = self._source(X, y, sample_weight)
        with self._engine(source) as engine:
            first = not hasattr(self, "state_")
            seed = draw_seed(self.random_state) if first else None
            source = self._kernel_source(engine, source, fit=first, seed=seed)
            if first:
                self._start(engine, source, classes=classes, seed=seed)
            self._check_features(getattr(source, "n_input_features", source.n_features))
            self._run(engine, source, 1, validation, warn=False)
        return self

    def _fit_nesvm(self, X: Any, y: Any, sample_weight: Any, validation: Any,
                   init: Any) -> SVMClassifier:
        from dsvm._nesvm_fit import fit_nesvm

        if not self.warm_start:
            for attr in ("coef_", "intercept_", "classes_", "state_", "history_", "n_iter_"):
                self.__dict__.pop(attr, None)
        source = self._source(X, y, sample_weight)
        with self._engine(source) as engine:
            fit_nesvm(self, engine, source, init=init, validation=validation)
        return self

    def _start(self, engine: Any, source: Source, classes: Any, seed: int | None = None) -> None:
        # classes_ keeps the labels' own dtype (ints stay ints); the kernels see float64 codes.
        text = getattr(self, "_text_classes", None)
        if text is not None and classes is not None:
            text = self._text_classes = np.unique(np.asarray(classes).astype(str))
        values = (np.arange(len(text), dtype=np.float64) if text is not None else
                  np.unique(np.asarray(classes if classes is not None else source.label_values())))
        if values.dtype.kind not in "biuf":
            raise ValueError(f"Labels must be numeric; got dtype {values.dtype}.")
        if len(values) < 2:
            raise ValueError(
                f"The training data ({source.describe()}) has one class only "
                f"({values.tolist()}); a classifier needs at least two."
            )
        self.classes_ = text if text is not None else values
        self.n_features_in_ = getattr(source, "n_input_features", source.n_features)
        self.n_samples_fit_ = source.n_samples  # ASSET's N (solvers.options.planned_steps)
        self.seed_ = draw_seed(self.random_state) if seed is None else int(seed)
        self.n_streams_ = int(self.n_streams or engine.n_workers)
        solver = self._make_solver()
        state = solver.init_state(source.n_features, n_outputs_for(len(values)), source.dtype)
        self.state_ = engine.calibrate(solver, state, source, self._classes64, chunk=0)
        self.n_iter_ = 0
        self.history_: list[dict[str, Any]] = []

    def _check_features(self, n_features: int) -> None:
        if n_features != self.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} was fitted with "
                f"{self.n_features_in_} features."
            )

    def _run(self, engine: Any, source: Source, n_epochs: int, validation: Any, warn: bool) -> None:
        solver = self._make_solver()
        plan = FitPlan(
            seed=self.seed_,
            n_streams=self.n_streams_,
            tol=self.tol,
            n_iter_no_change=int(self.n_iter_no_change),
            verbose=int(self.verbose),
        )
        validate = None
        if validation is not None:
            val_source = self._validation_source(validation)

            def validate(state: SolverState) -> float:
                return self._validation_score(engine, val_source, state)

        result = run_epochs(
            engine=engine,
            solver=solver,
            combiner=self._make_combiner(),
            source=source,
            classes=self._classes64,
            state=self.state_,
            plan=plan,
            first_epoch=self.n_iter_,
            n_epochs=n_epochs,
            validate=validate,
            history=self.history_,
            on_epoch=self._epoch_callback(source),
        )
        self.state_ = result.state
        self.history_ = result.history
        self.n_iter_ = len(self.history_)
        self._publish()
        if warn and not result.converged and n_epochs > 1:
            warnings.warn(
                f"{type(self).__name__} stopped at max_epochs={n_epochs} before the objective "
                f"changed by less than tol={self.tol}; consider more epochs.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _validation_score(self, engine: Any, source: Source, state: SolverState) -> float:
        """What ``history_[i]["val_accuracy"]`` records: accuracy (R^2 for regressors)."""
        coef, intercept, fmap = self._predictor(state)
        counts = engine.evaluate(coef, intercept, map_source(source, fmap), self._classes64,
                                 self._loss_spec())
        return counts.n_correct / max(counts.n_rows, 1)

    def _loss_spec(self) -> LossSpec:
        """The loss with its parameter (mu, epsilon), as evaluation needs it."""
        return LossSpec(self.loss, loss_param(self.loss, mu=getattr(self, "mu", 0.0),
                                              epsilon=getattr(self, "epsilon", 0.0)))

    def _penalty(self) -> float:
        """The regulariser's value at ``coef_`` (L2, L1 or elastic net)."""
        return estimator_penalty(self, self.coef_)

    def _validation_source(self, validation: Any) -> Source:
        if isinstance(validation, tuple) and len(validation) == 2:
            return self._source(validation[0], validation[1])
        return self._source(validation, None)

    def _publish(self) -> None:
        coef, intercept = self.state_.model()
        # averages are kept in float64; the model is published in the data's dtype
        dtype = self.state_.coef.dtype
        if self.solver == "bsgd":
            coef, intercept, self.feature_map_ = kern.expansion_model(self.state_, self.gamma)
        self.coef_ = np.array(coef, dtype=dtype)
        self.intercept_ = np.array(intercept, dtype=dtype)
        self.t_ = float(self.state_.t)

    @property
    def _classes64(self) -> np.ndarray:
        if self.classes_.dtype.kind not in "biuf":  # labels of any type: their indices
            return np.arange(len(self.classes_), dtype=np.float64)
        return np.asarray(self.classes_, dtype=np.float64)

    # -- prediction ------------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' first."
            )

    def decision_function(self, X: Any) -> Any:
        """Signed distances (n_samples,) for binary, (n_samples, n_classes) for multiclass.

        Dask input gives a lazy dask array; a dataset path gives a NumPy array.
        """
        self._check_fitted()
        coef, intercept = self.coef_, self.intercept_
        if _is_dask_collection(X):
            self._check_features(X.shape[1])
            X = self._map_input(X)
            n_out = coef.shape[0]
            out = X.map_blocks(
                _decision_numpy, coef, intercept, dtype=np.float64,
                chunks=(X.chunks[0], (n_out,)) if n_out > 1 else (X.chunks[0],),
                drop_axis=None if n_out > 1 else 1,
            )
            return out
        if _is_dataset_ref(X):
            source = self._source(X, None)
            self._check_features(source.n_features)
            source = map_source(source, getattr(self, "feature_map_", None))
            with self._predict_engine(source) as engine:
                parts = list(engine.decision_chunks(coef, intercept, source))
            scores = np.concatenate(parts) if parts else np.zeros((0, coef.shape[0]))
        else:
            X = X if sp.issparse(X) else np.asarray(X)
            self._check_features(X.shape[1])
            scores = _decision_numpy(self._map_input(X), coef, intercept, keep_2d=True)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def _map_input(self, X: Any) -> Any:
        """Arrays (or a lazy dask array) through the fitted feature map, if any."""
        fmap = getattr(self, "feature_map_", None)
        if fmap is None:
            return X
        if _is_dask_collection(X):
            return X.map_blocks(fmap.transform, dtype=X.dtype,
                                chunks=(X.chunks[0], (fmap.n_output_features,)))
        return fmap.transform(X)

    def predict(self, X: Any) -> Any:
        """Class labels; dask input gives a lazy dask array."""
        scores = self.decision_function(X)
        if _is_dask_collection(scores):
            return scores.map_blocks(self._labels_of, dtype=self.classes_.dtype, drop_axis=(
                1 if scores.ndim == 2 else None))
        return self._labels_of(scores)

    def write_predictions(self, X: Any, path: str | os.PathLike, *, decision: bool = False,
                          overwrite: bool = False, storage_options: dict | None = None) -> str:
        """Predict a dataset into a zarr prediction store at ``path``, written by the workers.

        Each chunk of the dataset ``X`` (a path, URL or :class:`dsvm.Dataset`) is read,
        predicted and written into ``path`` by one task: the predictions never pass through
        this process, so a dataset of any size can be predicted (``predict`` returns them in
        memory instead). ``decision=True`` writes decision values instead of labels. Read the
        result with :func:`dsvm.read_predictions` or zarr (layout: :mod:`dsvm.data.predictions`).
        Returns the store's URL; a failed prediction leaves nothing at ``path``.
        """
        from dsvm.data.predictions import PredictionStore

        self._check_fitted()
        if not _is_dataset_ref(X):
            raise TypeError("write_predictions needs a dataset path, URL or dsvm.Dataset; for "
                            f"arrays use predict() or decision_function() (got {type(X).__name__}).")
        source = self._source(X, None)
        self._check_features(source.n_features)
        labels = None if decision else self._prediction_labels()
        store = PredictionStore(
            path, n_rows=source.n_samples, chunk_rows=source.dataset.chunk_n_rows(0),
            kind="decision" if labels is None else "labels",
            classes=np.asarray(getattr(self, "classes_", np.zeros(0))),
            n_outputs=self.coef_.shape[0], source=source.describe(), overwrite=overwrite,
            storage_options=storage_options)
        mapped = map_source(source, getattr(self, "feature_map_", None))
        try:
            with self._predict_engine(mapped) as engine:
                written = engine.write_predictions(self.coef_, self.intercept_, mapped, labels,
                                                   store.writer())
        except BaseException:
            store.abort()
            raise
        return store.finish(written, source.n_samples)

    def _prediction_labels(self) -> np.ndarray | None:
        """What a predicted index is written as: the class values, or their indices when they
        are text (see dsvm.data.predictions)."""
        if self.classes_.dtype.kind not in "biuf":
            return np.arange(len(self.classes_), dtype=np.int32)
        return np.asarray(self.classes_)

    def _labels_of(self, scores: np.ndarray) -> np.ndarray:
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """Mean accuracy; ``X`` may be a dataset path (then ``y`` is None) or arrays."""
        from sklearn.metrics import accuracy_score

        return self._score_with(accuracy_score, "accuracy", X, y, sample_weight)

    def _score_with(self, metric: Any, key: str, X: Any, y: Any, sample_weight: Any) -> float:
        """``metric(y, predict(X))``; on a dataset, ``evaluate(X)[key]`` (summed on workers)."""
        self._check_fitted()
        if _is_dataset_ref(X):
            return float(self.evaluate(X)[key])
        pred = self.predict(X)
        if _is_dask_collection(pred):
            pred = pred.compute()
            y = y.compute() if _is_dask_collection(y) else y
        return float(metric(np.asarray(y), pred, sample_weight=sample_weight))

    def _eval_counts(self, X: Any, y: Any) -> tuple[Any, float]:
        """Evaluation sums over data (through the fitted map) and the mean loss."""
        self._check_fitted()
        source = self._source(X, y)
        self._check_features(source.n_features)
        source = map_source(source, getattr(self, "feature_map_", None))
        with self._predict_engine(source) as engine:
            c = engine.evaluate(self.coef_, self.intercept_, source, self._classes64,
                                self._loss_spec())
        return c, c.loss_sum / max(c.weight_sum, 1e-300)

    def evaluate(self, X: Any, y: Any = None) -> dict[str, float]:
        """Accuracy, mean loss and primal objective (this model's loss and alpha) on data."""
        c, mean_loss = self._eval_counts(X, y)
        return {
            "accuracy": c.n_correct / max(c.n_rows, 1),
            "loss": mean_loss,
            "objective": self._penalty() + mean_loss,
            "n_samples": c.n_rows,
        }

    # -- persistence -----------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Save the fitted model (no pickle); load it back with :func:`dsvm.load`."""
        self._check_fitted()
        params = {k: v for k, v in self.get_params(deep=False).items() if k != "client"}
        if isinstance(params.get("random_state"), np.random.Generator):
            params["random_state"] = None
        if isinstance(params.get("kernel"), (RFF, Nystroem)):
            params["kernel"] = params["kernel"].kind
        map_arrays, map_meta = kern.map_arrays(getattr(self, "feature_map_", None))
        if isinstance(params.get("checkpoint"), os.PathLike):
            params["checkpoint"] = os.fspath(params["checkpoint"])
        meta = {
            "estimator": type(self).__name__,
            "params": params,
            "n_features_in": int(self.n_features_in_),
            "n_iter": int(self.n_iter_),
            "t": float(self.t_),
            "dtype": str(self.coef_.dtype),
            "history": self.history_,
            "feature_map": map_meta,
        }
        classes = getattr(self, "classes_", np.zeros(0, dtype=np.float64))  # none: a regressor
        arrays = {"coef": self.coef_, "intercept": self.intercept_, "classes": classes}
        arrays.update(map_arrays)
        save_model(path, arrays, meta)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if state.get("client") is not None and not isinstance(state["client"], str):
            state["client"] = None  # a live Client does not travel
        return state

    def _repr_html_(self) -> str:
        from dsvm._html import estimator_html

        return estimator_html(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        # scikit-learn's bundle (its parameter diagram) would take precedence in Jupyter
        return {"text/plain": repr(self), "text/html": self._repr_html_()}

    def plot_history(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the per-epoch history (objective, and validation accuracy when recorded).

        Needs matplotlib (``pip install dsvm[plot]``); returns the matplotlib Axes.
        """
        from dsvm.plotting import plot_history

        return plot_history(self, ax=ax, **kwargs)

    def _more_tags(self) -> dict[str, Any]:
        return {"preserves_dtype": [np.float64, np.float32]}


def _codes_of(y: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Float64 indices of labels ``y`` in the sorted label set ``known`` (compared as text)."""
    text = np.asarray(y).astype(str)
    idx = np.clip(np.searchsorted(known, text), 0, max(len(known) - 1, 0))
    bad = known[idx] != text
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"Label {np.asarray(y)[i].item()!r} (row {i}) is not one of the classes "
                         f"{known.tolist()} of this fit.")
    return idx.astype(np.float64)


def _decision_numpy(
    X: Any, coef: np.ndarray, intercept: np.ndarray, keep_2d: bool = False
) -> np.ndarray:
    from dsvm.data.blocks import block_from_arrays

    scores = decision_block(coef, intercept, block_from_arrays(X, np.zeros(X.shape[0])))
    if keep_2d or scores.shape[1] > 1:
        return scores
    return scores[:, 0]


def estimator_from_saved(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> SVMClassifier:
    """Rebuild a fitted estimator from :func:`dsvm.model.load_model_arrays` output."""
    from dsvm.exceptions import ModelFormatError

    if meta.get("estimator") == "SVMRegressor":
        from dsvm.regressor import regressor_from_saved

        return regressor_from_saved(arrays, meta)  # type: ignore[return-value]
    if meta.get("estimator") != "SVMClassifier":
        raise ModelFormatError(f"Unknown estimator {meta.get('estimator')!r} in model file.")
    est = SVMClassifier(**meta["params"])
    est.coef_ = arrays["coef"]
    est.intercept_ = arrays["intercept"]
    est.classes_ = arrays["classes"]
    est.n_features_in_ = int(meta["n_features_in"])
    est.n_iter_ = int(meta["n_iter"])
    est.t_ = float(meta["t"])
    est.history_ = list(meta.get("history", []))
    est.feature_map_ = kern.map_from_saved(arrays, meta.get("feature_map"))
    n_inputs = est.n_features_in_ if est.feature_map_ is None else est.feature_map_.n_output_features
    if est.coef_.ndim != 2 or est.coef_.shape[1] != n_inputs:
        raise ModelFormatError(
            f"Model file is inconsistent: coef has shape {est.coef_.shape} but n_features_in "
            f"is {est.n_features_in_}."
        )
    return est
