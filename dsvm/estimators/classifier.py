"""``SVMClassifier``: linear (and kernel) SVM classification by distributed passes over chunks.

Input decides where training runs (dask-ml's rule): NumPy/SciPy arrays train in this process;
a dataset path/URL, a :class:`dsvm.Dataset` or dask arrays train on a Dask cluster (the given
``client``, else the active Client, else an embedded LocalCluster closed afterwards), except
a dataset under 256 MB with no client, none active and no ``n_workers``: it trains in this
process, one thread per core (the streams the embedded cluster would run, the same model).

A fit whose model predicts no better than the majority class while its objective did not come
down from the zero model's (unscaled features, diverging steps) warns ``FitFailedWarning`` (a
``ConvergenceWarning``) naming the cause and the fix, and sets ``outcome_.failed``; a model at
the majority rate whose objective came down warns ``ConvergenceWarning``. See
:mod:`dsvm.training.outcome`.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassifierMixin

from dsvm.estimators import params
from dsvm.estimators.base import SVMBase
from dsvm.estimators.prediction import (
    class_name,
    labels_of,
    labels_of_frame,
    stored_labels,
)
from dsvm.estimators.probabilities import LogisticProbabilities
from dsvm.training.inputs import is_dask_collection, is_dask_frame


class SVMClassifier(ClassifierMixin, LogisticProbabilities, SVMBase):
    """Linear SVM classifier trained by distributed stochastic passes over chunked data.

    Minimises ``alpha/2 * ||w||^2 + mean_i loss(y_i, w.x_i + b)`` (one such problem per class in
    one-vs-rest multiclass, all K trained in the same pass over the data).

    Parameters
    ----------
    solver : {"auto", "pegasos", "sgd", "asset", "asset*", "nesvm", "bsgd", "cocoa"}, \
default="auto"
        ``"auto"``: ``"cocoa"`` for a linear model with the hinge or squared hinge loss and an
        L2 penalty, ``"pegasos"`` for the hinge loss and an L2 penalty on a kernel map,
        ``"sgd"`` otherwise (other losses or penalties, early stopping, a validation set,
        ``partial_fit``, a warm start): chosen by measurement, see
        :mod:`dsvm.training.auto_solver`; the choice is ``solver_``.
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
        merging the union back to ``budget``. ``"cocoa"``: CoCoA+ (dual coordinate descent
        on each stream's rows, the streams' changes added, sigma' = n_streams; hinge or squared
        hinge, L2; the intercept is LIBLINEAR's regularised bias feature; ``tol`` on the
        relative duality gap; see :mod:`dsvm.solvers.cocoa` and ``local_iters``).
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
        Continue the last fit: ``solver="nesvm"`` starts from this estimator's current
        ``coef_`` / ``intercept_`` (e.g. after a fit with ``solver="sgd"``) instead of zeros;
        the stochastic solvers run ``max_epochs`` more epochs of its state and schedule (from
        its model after a fit by another solver, e.g. the CoCoA+ that ``"auto"`` chose);
        ``solver="cocoa"`` refuses it (its duals start at zero).
    fit_intercept : bool, default=True
        Learn an unregularised bias (``solver="cocoa"``: LIBLINEAR's bias feature).
    scale : "auto" or bool, default="auto"
        Scale the columns in the fit: statistics in one pass on the workers, every chunk scaled
        as it is read, the model folded back into raw units (``coef_`` predicts raw rows).
        Dense columns are standardised (divided by their RMS without an intercept), sparse ones
        divided by the RMS of their nonzero values, rounded up to a power of two (binary
        columns unchanged; centred only where stored in half the rows or more). ``"auto"``:
        when a column exceeds 16 in magnitude (raw measurements, counts). ``scaling_`` says
        what was done (see :mod:`dsvm.features.scaling`). A kernel model (``kernel``, BSGD)
        cannot be folded back: its map keeps the scaling as its first stage
        (``feature_map_.input_stage_``; :mod:`dsvm.features.input_stage`).
    max_epochs : int, default=10
        Passes over the data in ``fit``. Values must be in the range [1, inf).
    tol : float or None, default=1e-3
        Relative tolerance, the same meaning for every solver: stop when the objective has
        not improved on its best by more than ``tol`` times its size for ``n_iter_no_change``
        epochs (scikit-learn's rule, made scale-free). The objective followed is the returned
        model's: for averaged solvers measured exactly on a fixed sample of the training rows
        (``history_[i]["sample_objective"]``), for last iterates (``"asset*"``,
        ``average=False``, ``"bsgd"``: they converge like 1/t) the epoch's progressive
        objective, with a margin of ``tol`` / t and a patience of at least t / 5 after t epochs
        (:class:`dsvm.training.loop.StoppingRule`). Reaching ``max_epochs`` while still
        improving warns (``ConvergenceWarning``). ``solver="nesvm"``: the exact objective of its
        best point, in the last homotopy stage, with at least 10 passes of patience (its step
        factor can take that long to recover after a step taken back). ``solver="cocoa"``:
        stop once the relative duality gap (gap / primal objective) is at most ``tol``.
        ``None`` always runs ``max_epochs``.
    n_iter_no_change : int, default=3
        Epochs without improvement (see ``tol``) before a stochastic fit stops.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows of every chunk (chosen by a hash of the
        fit's seed, the chunk and the row: no row moves, and a label- or time-sorted store is
        sampled as a whole) and stop when their objective (the penalty plus their mean loss:
        smoother than accuracy, and what the fit minimises) has not fallen by more than
        ``tol`` (relative) for ``n_iter_no_change`` epochs; recorded in
        ``history_[i]["holdout_objective"]``. Each epoch's pass scores the model it starts
        from on the held rows it reads anyway, so the objective is known one epoch late (the
        fit stops one epoch after the rule's last epoch) and one pass scores the last model.
        ``"bsgd"`` and ``"cocoa"`` hold out whole chunks instead (drawn from the seed;
        in-memory arrays are cut into at least 20 chunks), scored after every epoch.
        ``fit`` only (not ``partial_fit``), stochastic solvers only.
    validation_fraction : float, default=0.1
        The share of rows (``"bsgd"``, ``"cocoa"``: of chunks) held out by
        ``early_stopping``. Values must be in the range (0, 1).
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
        ``feature_map_``, saved with the model and applied at prediction (§2.4). On a wide,
        mostly empty input (a hashed category or text column) the map, and BSGD's support
        vectors, span the columns the training rows use plus one for the norm of the others
        (:mod:`dsvm.features.columns`; exact for the kernel against training rows).
    n_components : int, default=1024
        Size of the ``kernel`` map. Values must be in the range [1, inf).
    gamma : float or "scale", default="scale"
        Width of the Gaussian kernel exp(-gamma ||s - t||^2), for ``kernel`` and for
        ``solver="bsgd"``. ``"scale"``: 1 / (n_features * X.var()) as in scikit-learn's SVC,
        the variance of all feature values summed on the workers in one read of the data.
        Values must be in the range (0, inf).
    budget : int, default=500
        ``solver="bsgd"``: support vectors kept per output (B). Values must be in the range
        [1, inf).
    merge : {"gss", "gss-precise", "lookup-h", "lookup-wd"}, default="lookup-wd"
        ``solver="bsgd"``: how the merge coefficient is found (papers/001): golden section search
        to 0.01 or 1e-10, or the precomputed 400 x 400 lookup of h or of the weight degradation.
    local_iters : float, default=50.0
        ``solver="cocoa"``: passes of dual coordinate steps per round over the rows of each
        window of ``shuffle_window`` chunks while the window is in memory (CoCoA+'s H =
        local_iters x the round's rows; fractions allowed; more local work costs no extra
        reads). The default is measured: epochs to 0.1% of LIBLINEAR's optimum on a9a / w8a
        fell from over 10 with 1 pass to 3 / 5 with 50 (see :mod:`dsvm.solvers.cocoa`). With
        a ``tol``, a window's passes stop early once one gains far less than that tol asks
        (:data:`dsvm.solvers.cocoa.LOCAL_GAIN_SHARE`).
        Values must be in the range (0, inf).
    rounds_per_epoch : int, default=1
        ``solver="cocoa"``: communication rounds per epoch; each reads 1/rounds_per_epoch of
        every stream's chunks. Values must be in the range [1, inf).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into the rows' sample weights: ``{label: weight}``
        (missing labels weigh 1) or ``"balanced"``, n_samples / (n_classes * count_c), with
        the counts a dataset records (no extra pass). Not with ``solver="bsgd"``, nor
        ``"balanced"`` with ``partial_fit`` (give the weights as a dict).
    n_streams : int or None, default=None
        Parallel streams per epoch. ``None``: the number of workers when the fit starts (1 for
        in-memory input). Fixed for the fit, so losing a worker does not change the model.
        For in-memory input several streams run in threads of this process (one per core at
        most), which gives the same model as running them one after another.
    shuffle_window : int or None, default=None
        A stream interleaves the rows of this many chunks at a time (short runs of stored rows
        taken in a random order, several at once, their rows interleaved; re-drawn every epoch
        from the seed; see :func:`dsvm.solvers.passes.pass_over_window`), so that data stored
        sorted by label or by time trains like shuffled data without converting it again.
        ``None``: 8, fewer when 8 chunks would hold more than 128 MB of rows (with
        ``solver="cocoa"``: all of a stream's chunks up to 128 MB of rows, since its local
        solver solves one window's duals at a time); 1: each chunk on its own, its rows in a
        random order (dsvm before 0.2).
    chunk_rows : int, default=65536
        Rows per chunk when cutting in-memory arrays (datasets keep their own chunks).
    n_workers : int or None, default=None
        Worker processes of the embedded LocalCluster (``None``: one per core). A dataset
        under 256 MB given with no ``client``, no active Client and no ``n_workers`` trains in
        this process instead (one thread per core, the same model). In-memory arrays always
        train in this process: there ``n_workers`` streams (the default ``n_streams``) run in
        threads, the model a cluster of ``n_workers`` would train.
    random_state : int, numpy Generator or None, default=None
        Seeds the chunk orders and row orders; the same seed gives the same model.
    verbose : int, default=0
        0: silent; 1: a progress bar; 2: also one line per epoch.
    client : distributed.Client, str or None, default=None
        The Dask client or a scheduler address. ``None``: the active Client, else an embedded
        LocalCluster.
    checkpoint : str, path or None, default=None
        A file path or fsspec URL where the full training state is written, atomically, after
        every epoch (see :mod:`dsvm.io.checkpoints`); ``fit(..., resume=True)`` continues from it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels. Labels of any type are accepted in arrays (strings, objects: compared
        as text); the kernels see their indices, and ``predict`` returns the labels themselves.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features), in the data's dtype
        The weights: one row for two classes, one per class (one-vs-rest) for more. With a
        feature map (``kernel``, or ``solver="bsgd"``'s support vectors), over its outputs.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The biases, one per row of ``coef_``.
    n_features_in_ : int
        Features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names of a DataFrame given to ``fit``, or of a dataset converted from a
        CSV/Parquet header; absent for other input.
    fill_values_ : dict
        The column means a dataset converted with ``fill_missing="mean"`` filled its missing
        values with (``dsvm eval``/``predict`` fill raw rows alike); absent otherwise.
    label_column_ : str
        The name of the training data's label column (``fit(df, "label")``, a named Series, a
        dataset converted from a header): ``dsvm eval`` takes it from raw rows that have it;
        absent otherwise.
    feature_map_ : RFF, Nystroem, KernelExpansion or None
        The fitted map applied before the weights: the ``kernel`` map, or ``solver="bsgd"``'s
        kernel expansion over its support vectors (None: the features as they are).
    n_iter_ : int
        Epochs run so far (for ``solver="nesvm"``: data passes, one per iteration).
    t_ : float
        Solver steps so far (the schedule's counter).
    history_ : list of dict
        Per epoch: epoch, objective, train_loss, val_accuracy, seconds, rows_per_s, n_rows, t,
        extrapolated (averaged Pegasos: whether the model after that epoch is its average's
        Richardson extrapolation, see :mod:`dsvm.solvers.extrapolation`; None for the others).
        ``train_loss`` and ``objective`` (alpha/2 ||w||^2 + train_loss) are progressive (the
        iterates' losses during the pass); ``sample_objective`` is the returned model's at the
        epoch's start, on ``sample_rows`` rows. ``solver="nesvm"``: per pass, ``objective`` is
        the exact true (unsmoothed) objective of the model the fit returns at that point,
        ``smoothed_objective`` / ``iterate_objective`` the smoothed / true objective at the
        iterate w^k, ``smoothed_objective_y`` the smoothed objective at y^(k-1) (Eq. 33), plus
        ``stage``, ``mu`` and ``lipschitz_factor``. ``solver="cocoa"``: the primal and dual
        objectives and the (relative) duality gap of the model each epoch started from.
    outcome_ : FitOutcome
        The published model measured once after ``fit`` (one evaluation pass): its exact
        objective, training accuracy, the majority-class rate and the zero model's objective;
        ``outcome_.failed`` when it predicts no better than a constant
        (:mod:`dsvm.training.outcome`). ``partial_fit`` keeps the last ``fit``'s.
    stop_reason_ : str
        Why the last ``fit`` or ``partial_fit`` stopped, in words (``max_epochs`` reached,
        ``tol`` met on what, early stopping).

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

    _task: ClassVar[str] = "classification"
    _parameter_constraints: ClassVar[dict[str, Any]] = params.CLASSIFIER

    def __init__(
        self,
        *,
        solver: str = "auto",
        loss: str = "hinge",
        alpha: float = 1e-4,
        penalty: str = "l2",
        l1_ratio: float = 0.15,
        mu: float = 0.03,
        mu0: float | None = None,
        warm_start: bool = False,
        fit_intercept: bool = True,
        scale: str | bool = "auto",
        max_epochs: int = 10,
        tol: float | None = 1e-3,
        n_iter_no_change: int = 3,
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        batch_size: int = 1,
        average: bool = True,
        rho: float = 0.5,
        kernel: Any = "linear",
        n_components: int = 1024,
        gamma: float | str = "scale",
        budget: int = 500,
        merge: str = "lookup-wd",
        local_iters: float = 50.0,
        rounds_per_epoch: int = 1,
        class_weight: dict | str | None = None,
        n_streams: int | None = None,
        chunk_rows: int = 65536,
        shuffle_window: int | None = None,
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
        self.scale = scale
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.batch_size = batch_size
        self.average = average
        self.rho = rho
        self.kernel = kernel
        self.n_components = n_components
        self.gamma = gamma
        self.budget = budget
        self.local_iters = local_iters
        self.rounds_per_epoch = rounds_per_epoch
        self.merge = merge
        self.class_weight = class_weight
        self.n_streams = n_streams
        self.chunk_rows = chunk_rows
        self.shuffle_window = shuffle_window
        self.n_workers = n_workers
        self.random_state = random_state
        self.verbose = verbose
        self.client = client
        self.checkpoint = checkpoint

    def fit(self, X: Any, y: Any = None, *, sample_weight: Any = None, validation: Any = None,
            init: Any = None, resume: bool = False) -> SVMClassifier:
        """Train from scratch for up to ``max_epochs`` epochs.

        ``X``: a dataset path or URL (or :class:`dsvm.Dataset`; then ``y`` is None), dask arrays,
        or NumPy/SciPy arrays, or a pandas or Dask DataFrame (``y`` and ``sample_weight`` may
        name its columns: ``fit(df, "label", sample_weight="w")``). ``validation``: a dataset
        path/Dataset or an ``(X, y)`` pair, scored after every epoch into
        ``history_[i]["val_accuracy"]``. ``init``: a fitted
        model (anything with ``coef_`` / ``intercept_``, e.g. an SGD fit) that
        ``solver="nesvm"`` starts from. ``resume=True``: continue from the ``checkpoint`` file
        when it exists (up to ``max_epochs`` epochs in all), else start from scratch; the
        result equals the uninterrupted fit's.
        """
        self._fit(X, y, sample_weight, validation, init, resume)
        return self

    def partial_fit(self, X: Any, y: Any = None, classes: Any = None, *,
                    sample_weight: Any = None, validation: Any = None) -> SVMClassifier:
        """One epoch over the data, continuing the schedule and state of earlier calls.

        ``classes``: every label of the problem, required on the first call as in scikit-learn
        (the first chunk of a stream may not hold them all); a label outside them is an error.
        """
        self._partial_fit(X, y, classes, sample_weight, validation)
        return self

    def decision_function(self, X: Any) -> Any:
        """Signed distances (n_samples,) for binary, (n_samples, n_classes) for multiclass.

        Dask input gives a lazy dask array; a dataset path gives a NumPy array.
        """
        return self._decision(X)

    def predict(self, X: Any) -> Any:
        """Class labels; dask input gives a lazy dask array."""
        scores = self._decision(X)
        if is_dask_frame(scores):
            return labels_of_frame(scores, self.classes_)
        if is_dask_collection(scores):
            return scores.map_blocks(labels_of, self.classes_, dtype=self.classes_.dtype,
                                     drop_axis=1 if scores.ndim == 2 else None)
        return labels_of(scores, self.classes_)

    def _stored_labels(self) -> np.ndarray:
        return stored_labels(self.classes_)

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """Mean accuracy; ``X`` may be a dataset path (then ``y`` is None) or arrays."""
        from sklearn.metrics import accuracy_score

        return self._score_with(accuracy_score, "accuracy", X, y, sample_weight)

    def evaluate(self, X: Any, y: Any = None) -> dict[str, float]:
        """Accuracy, mean loss and primal objective (this model's loss and alpha) on data,
        and what tells a model from a constant where the classes are not balanced: the
        majority class's rate, the balanced accuracy and, for two classes, the precision,
        recall and F1 of the second (``classes_[1]``, scikit-learn's positive class), else
        the macro-averaged F1 (:meth:`dsvm.solvers.evaluation.EvalCounts.class_rates`). One
        pass over the data, whatever its size."""
        c = self._eval_counts(X, y)
        rates = c.class_rates()
        if "per_class" in rates:  # by the classes' names (1, not 1.0; "fraud")
            rates["per_class"] = {class_name(k): v
                                  for k, v in zip(self.classes_, rates["per_class"])}
        return {"accuracy": c.accuracy, "loss": c.mean_loss,
                "objective": self._penalty() + c.mean_loss, "n_samples": c.n_rows, **rates}
