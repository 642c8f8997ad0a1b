"""Evaluating linear models on blocks, and the block plumbing the local solvers share.

Evaluation (used by the driver for validation and by the tests):

* :func:`decision_block` -- decision values of a block, float64.
* :func:`loss_block` -- summed sample-weighted loss and the weight sum.
* :func:`accuracy_counts` -- correct predictions and rows.
* :func:`primal_objective` -- alpha/2 ||W||_F^2 + mean loss, for in-memory arrays.

Targets follow :func:`dsvm.solvers.base.encode_labels`: with one output (binary) code 1 is the
positive class (+1) and code 0 the negative one (-1); with K outputs, output k sees +1 where
code == k and -1 elsewhere (one-vs-rest), and the loss of a row is summed over its K outputs.

Solver plumbing: :func:`kernel_inputs` turns a block, its codes and a row order into the
arguments of the pass kernels (checked, contiguous, read-only views),
:func:`check_finite` is the once-per-pass divergence check, and :func:`pass_scratch_kept`
lets the passes of one thread (an in-process fit) keep their working array between passes.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from dsvm.data.block_ops import kernel_rows, read_only
from dsvm.data.blocks import Block, CSRBlock, DenseBlock, float64_rows
from dsvm.kernels import hparams
from dsvm.kernels.losses import LOSS_CODES
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.targets import output_targets, pointwise_losses


def margin_losses(name: str, z: np.ndarray) -> np.ndarray:
    """loss as a function of the signed margin z = y * p (vectorised, float64)."""
    if name == "hinge":
        return np.maximum(0.0, 1.0 - z)
    if name == "squared_hinge":
        return np.maximum(0.0, 1.0 - z) ** 2
    if name == "logistic":
        return np.logaddexp(0.0, -z)  # log(1 + exp(-z)) without overflow
    if name == "squared":
        return (1.0 - z) ** 2  # LS-SVM (solver="nesvm")
    raise ValueError(f"Got loss {name!r}; expected one of {sorted(LOSS_CODES)}.")


def ovr_targets(codes: np.ndarray, n_outputs: int) -> np.ndarray:
    """(n_rows, n_outputs) float64 matrix of +-1 targets for class codes (see module doc)."""
    codes = np.asarray(codes)
    if n_outputs == 1:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_outputs)[None, :], 1.0, -1.0)


def _matrix(block: Block) -> np.ndarray | sp.csr_matrix:
    return block.to_matrix()


def decision_block(coef: np.ndarray, intercept: np.ndarray, block: Block) -> np.ndarray:
    """(n_rows, n_outputs) float64 decision values X @ coef.T + intercept."""
    b64 = np.asarray(intercept, dtype=np.float64)
    X = _matrix(block)
    if sp.issparse(X):
        X, coef = touched_columns(sp.csr_matrix(X), coef)
        out = np.asarray(X @ np.asarray(coef, dtype=np.float64).T, dtype=np.float64)
    else:
        # float64 products for float32 data too, so that the sums do not depend on the
        # storage dtype; the copy is made a slice of rows at a time (float64_rows)
        coef64 = np.asarray(coef, dtype=np.float64).T
        out = np.empty((X.shape[0], coef64.shape[1]))
        for start, rows in float64_rows(X):
            out[start:start + rows.shape[0]] = rows @ coef64
    return out + b64



def touched_columns(X: sp.csr_matrix, coef: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """``X`` and ``coef`` cut to the columns ``X``'s rows touch, when they are few.

    A block of a few thousand rows of a 2^22-feature set touches a small share of the
    columns, and ``X @ coef.T`` with the whole (K, d) model cost two O(K d) copies per block
    (the float64 conversion, and scipy's C-order copy of the transposed model): scoring the
    held-out rows of the 8 candidates of a grid made its epochs 7x slower than the training.
    The entries keep their order in each row, so the products are summed exactly as before.
    """
    d = X.shape[1]
    if X.nnz >= d // 4:
        return X, coef
    if X.nnz < d // 16:  # (the marks cost about 3 ns a column, a sort 45 ns an entry)
        cols, inverse = np.unique(X.indices, return_inverse=True)
    else:
        # the same columns and numbering without sorting the entries: a mark per column,
        # O(nnz + d) (65,536 rows of 8 Zipf ids over 2^22 columns: 24.6 ms sorted, 4.8 marked)
        used = np.zeros(d, dtype=bool)
        used[X.indices] = True
        cols = np.flatnonzero(used)
        number = np.empty(d, dtype=np.int32)
        number[cols] = np.arange(cols.size)
        inverse = number[X.indices]
    cut = sp.csr_matrix((X.data, inverse.reshape(-1), X.indptr), shape=(X.shape[0], cols.size))
    return cut, coef[:, cols]


def loss_block(
    coef: np.ndarray, intercept: np.ndarray, block: Block, codes: np.ndarray, loss: str,
    decisions: np.ndarray | None = None,
) -> tuple[float, float]:
    """(sum over rows and outputs of sample_weight * loss, sum of sample weights);
    ``decisions``: the block's :func:`decision_block`, when the caller has it already."""
    P = decision_block(coef, intercept, block) if decisions is None else decisions
    Y = output_targets(codes, P.shape[1])  # +-1, or the real targets (regression)
    per_row = pointwise_losses(loss, P, Y).sum(axis=1)
    if block.sample_weight is None:
        return float(per_row.sum()), float(block.n_samples)
    sw = np.asarray(block.sample_weight, dtype=np.float64)
    return float(sw @ per_row), float(sw.sum())


def accuracy_counts(
    coef: np.ndarray, intercept: np.ndarray, block: Block, codes: np.ndarray,
    decisions: np.ndarray | None = None,
) -> tuple[int, int]:
    """(n_correct, n_rows): binary by the sign of the decision (> 0 is code 1), else argmax;
    ``decisions`` as in :func:`loss_block`."""
    P = decision_block(coef, intercept, block) if decisions is None else decisions
    return int(np.sum(predicted_codes(P) == np.asarray(codes))), int(P.shape[0])


def predicted_codes(P: np.ndarray) -> np.ndarray:
    """The class codes decision values ``P`` (n_rows, n_outputs) predict: binary by the sign
    (> 0 is code 1), else the argmax."""
    if P.shape[1] == 1:
        return (P[:, 0] > 0).astype(np.int64)
    return np.argmax(P, axis=1)


def primal_objective(
    coef: np.ndarray,
    intercept: np.ndarray,
    X: np.ndarray | sp.spmatrix | sp.sparray,
    y_codes: np.ndarray,
    loss: str,
    alpha: float,
) -> float:
    """alpha/2 ||coef||_F^2 + (1/n) sum_i sum_k loss(p_ik, y_ik) (intercept unregularised).

    With ``alpha = 1 / (C n)`` this is LIBLINEAR's / LinearSVC's objective divided by C n.
    """
    coef64 = np.asarray(coef, dtype=np.float64)
    P = X @ coef64.T if sp.issparse(X) else np.asarray(X, dtype=np.float64) @ coef64.T
    P = np.asarray(P, dtype=np.float64) + np.asarray(intercept, dtype=np.float64)
    Y = ovr_targets(y_codes, coef64.shape[0])
    mean_loss = margin_losses(loss, Y * P).sum(axis=1).mean() if P.shape[0] else 0.0
    return float(0.5 * alpha * np.vdot(coef64, coef64) + mean_loss)


# -- plumbing shared by the local solvers ------------------------------------------------------


class KernelInputs(NamedTuple):
    """Arguments of a pass kernel for one block (all read-only views)."""

    X: Any  # (n, d) C-contiguous array, or the CSR triple (indptr, indices, data)
    codes: np.ndarray  # (n,) float64: class codes as integers, or the targets (regression)
    sample_weight: np.ndarray  # (n,) float64, or (0,) for unit weights
    order: np.ndarray  # (m,) int64, every entry in [0, n)
    weight_sum: float  # sum of the sample weights of the rows in ``order``
    regression: bool  # ``codes`` are real targets (hparams.REGRESSION), else class codes


def kernel_inputs(
    block: Block, codes: np.ndarray, order: np.ndarray, state: SolverState, who: str
) -> KernelInputs:
    """Check ``block``, ``codes``, ``order`` and ``state`` against each other; build kernel args.

    ``who`` names the solver in error messages. The state's weights must have the block's dtype
    and feature count (float32 data trains float32 weights). Float ``codes`` are regression
    targets (:func:`dsvm.solvers.targets.targets_for`), integer ones class codes; the kernels
    get both as float64 and the difference as ``regression`` (for ``hp[REGRESSION]``).
    """
    n = block.n_samples
    if block.dtype not in (np.float32, np.float64):
        raise TypeError(f"{who}: block dtype must be float32 or float64; got {block.dtype}.")
    if state.coef.dtype != block.dtype:
        raise TypeError(
            f"{who}: the state's weights are {state.coef.dtype} but the block is "
            f"{block.dtype}; create the state with init_state(..., dtype={block.dtype})."
        )
    if state.n_features != block.n_features:
        raise ValueError(
            f"{who}: the block has {block.n_features} features but the state has "
            f"{state.n_features}."
        )
    codes = np.asarray(codes)
    if codes.shape != (n,):
        raise ValueError(f"{who}: codes has shape {codes.shape}; expected ({n},) for the block.")
    order = np.asarray(order)
    if order.ndim != 1 or (order.size and order.dtype.kind not in "iu"):
        raise ValueError(f"{who}: order must be a 1-D integer array; got {order.dtype} "
                         f"with shape {order.shape}.")
    order = order.astype(np.int64, copy=False)
    if order.size and (int(order.min()) < 0 or int(order.max()) >= n):
        raise ValueError(
            f"{who}: order holds row indices in [{int(order.min())}, {int(order.max())}] "
            f"but the block has {n} rows."
        )
    if not isinstance(block, (DenseBlock, CSRBlock)):
        raise TypeError(f"{who}: expected a DenseBlock or CSRBlock; got {type(block).__name__}.")
    if block.sample_weight is None:
        sw = np.empty(0, dtype=np.float64)
        weight_sum = float(order.size)
    else:
        sw = np.ascontiguousarray(block.sample_weight, dtype=np.float64)
        if sw.shape != (n,):
            raise ValueError(f"{who}: sample_weight has shape {sw.shape}; expected ({n},).")
        weight_sum = float(sw[order].sum())
    return KernelInputs(
        X=kernel_rows(block),  # read-only views: one compiled variant (data.block_ops)
        # One codes dtype for classification and regression, the meaning a run-time flag: a
        # dtype per meaning compiled every pass kernel twice (~9 s a variant on a cold cache).
        # Class codes are small integers, exact in float64.
        codes=read_only(np.ascontiguousarray(codes, dtype=np.float64)),
        sample_weight=read_only(sw),
        order=read_only(np.ascontiguousarray(order)),
        weight_sum=weight_sum,
        regression=codes.dtype.kind == "f",
    )


def writable_weights(state: SolverState) -> None:
    """Make the state's arrays C-contiguous and writable in place (the kernels update them)."""
    for name in ("coef", "intercept"):
        a = getattr(state, name)
        if not (a.flags.c_contiguous and a.flags.writeable):
            setattr(state, name, np.array(a, order="C"))
    for name in ("avg_coef", "avg_intercept"):
        a = getattr(state, name)
        if a is not None and not (
            a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable
        ):
            setattr(state, name, np.array(a, dtype=np.float64, order="C"))


def check_finite(state: SolverState, loss_sum: float, who: str, n_rows: int) -> None:
    """Raise FloatingPointError if the pass produced non-finite weights or loss."""
    arrays = [state.coef, state.intercept]
    arrays += [a for a in (state.avg_coef, state.avg_intercept) if a is not None]
    # A sum is finite only if every term is (an overflow to inf falls through to the exact
    # test): one read of each array instead of an isfinite temporary (2^22 features: 48 MB).
    if np.isfinite(loss_sum) and all(np.isfinite(a.sum()) or np.isfinite(a).all()
                                     for a in arrays):
        return
    raise FloatingPointError(
        f"{who}: non-finite weights after pass over a block of {n_rows} rows "
        f"(step t={state.t:g}); scale the features (e.g. StandardScaler or MaxAbsScaler) "
        "or increase alpha."
    )


def validate_common(solver: Any) -> None:
    """Check the hyper-parameters every linear solver has (loss, alpha, batch_size, ...)."""
    cls = type(solver).__name__
    if solver.loss not in LOSS_CODES:
        raise ValueError(
            f"The 'loss' parameter of {cls} must be a str among {sorted(LOSS_CODES)}. "
            f"Got {solver.loss!r} instead."
        )
    alpha = solver.alpha
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float, np.floating, np.integer))
        or not (0.0 < float(alpha) < math.inf)
    ):
        raise ValueError(
            f"The 'alpha' parameter of {cls} must be a float in the range (0.0, inf). "
            f"Got {alpha!r} instead."
        )
    if not isinstance(solver.fit_intercept, (bool, np.bool_)):
        raise ValueError(
            f"The 'fit_intercept' parameter of {cls} must be an instance of bool. "
            f"Got {solver.fit_intercept!r} instead."
        )
    k = solver.batch_size
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(
            f"The 'batch_size' parameter of {cls} must be an int in the range [1, inf). "
            f"Got {k!r} instead."
        )


_kept = threading.local()


@contextlib.contextmanager
def pass_scratch_kept() -> Iterator[None]:
    """Within the block, the passes that this thread runs keep their pairing scratch
    (:func:`dsvm.kernels.pairs.pair_scratch`: 16 bytes per feature and output, for CSR
    passes with an average) from one pass to the next, instead of allocating it for each.

    An in-process fit holds it for the whole fit (:func:`dsvm.training.engines.engine_for`).
    A fresh 64 MB scratch (2^22 features) costs 7-10 ms of page faults a pass, at times far
    more (0.06 and 0.14 s seen inside a fit's process); kept, the averaged passes over
    400,000 x 2^22 x 40 nnz rows took a median 0.316 s against 0.334 s (Pegasos and SGD, 18
    passes each way, interleaved). In this process it is then also held while the epoch's
    states are combined; a worker keeps it for one stream task
    (:class:`dsvm.engine.tasks.StreamPass`: its windows' passes, a grid's candidate after
    candidate), never between tasks, since holding it between epochs would raise their peak
    at the combine by 1.33 states. Inside a block that keeps it already, the outer one
    serves."""
    outer = getattr(_kept, "scratch", None)
    if outer is not None:
        yield
        return
    _kept.scratch = {}
    try:
        yield
    finally:
        _kept.scratch = outer


def _pair_scratch(X: Any, W: np.ndarray, A: Any, average: bool) -> np.ndarray:
    from dsvm.kernels.pairs import pair_scratch

    kept = getattr(_kept, "scratch", None)
    if kept is None:
        return pair_scratch(X, W, A, average)
    kept["pairs"] = pair_scratch(X, W, A, average, reuse=kept.get("pairs"))
    return kept["pairs"]


class _KeptPairs:
    """The pairs of one state's W and A kept in a scratch P across its passes
    (:func:`pairs_kept`). The state is known by the address and shape of its W: a grid hands
    each pass a new view of the same rows (:func:`dsvm.solvers.grid.candidate_view`)."""

    def __init__(self, W: np.ndarray) -> None:
        self.key = _array_key(W)
        self.P: np.ndarray | None = None  # (none yet: made by the state's first pass)
        self.state: SolverState | None = None
        self.n_rows = 0

    def scratch(self, args: Any, W: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, bool]:
        """(P, whether it holds the pairs already). P is this block's own: taken from the
        thread's kept scratch (:func:`pass_scratch_kept`) while the pairs wait in it, so that
        another state's pass in between cannot overwrite them."""
        if self.P is not None:
            return self.P, True
        from dsvm.kernels.pairs import pair_scratch

        shared = getattr(_kept, "scratch", None)
        reuse = None if shared is None else shared.pop("pairs", None)
        self.P = pair_scratch(args.X, W, A, True, reuse=reuse)
        return self.P, False

    def release(self, check: bool = True) -> None:
        """Copy the pairs back into the state's W and A (stale while kept), then check them
        (``check``: not while another error propagates)."""
        if self.P is None or self.state is None:
            return
        from dsvm.kernels.pairs import settle, unpair_finite

        state, P, n_rows = self.state, self.P, self.n_rows
        self.P, self.state, self.n_rows = None, None, 0
        # (what SGD carried folded in as its pass's end would, by the same helpers, then W
        # and A written back, their finiteness summed on the way)
        settle(P, state.coef, state.avg_intercept, float(state.n_avg))
        finite = unpair_finite(P, state.coef, state.avg_coef)
        shared = getattr(_kept, "scratch", None)
        if shared is not None:
            shared["pairs"] = P  # (back to the thread's kept scratch)
        intercepts = [state.intercept] + ([] if state.avg_intercept is None
                                          else [state.avg_intercept])
        if check and not (finite and all(np.isfinite(b).all() for b in intercepts)):
            check_finite(state, math.nan, "the passes kept paired", n_rows)


def _array_key(W: np.ndarray) -> tuple[int, tuple[int, ...]]:
    return int(W.__array_interface__["data"][0]), tuple(W.shape)


@contextlib.contextmanager
def pairs_kept(state: SolverState) -> Iterator[None]:
    """Within the block, the CSR passes with an average over ``state`` (its rows: a view of
    them counts) keep its W and A paired in a scratch P (:mod:`dsvm.kernels.pairs`) from one
    pass to the next: the O(d) copies in and out (pair_up, unpair) are paid once for the
    block instead of once per pass. W and A are stale inside the block: nothing but these
    passes may read them (the passes of other states run as usual, with a scratch of their
    own). The end of the block copies them back and checks that they are finite (each pass
    still checks its loss).

    What it saves: at 2^22 features pair_up + unpair cost 11 ms per model and pass, a quarter
    of a one-model pass over a window of 8 chunks of 4,096 rows x 40 nonzeros (44 ms): a
    stream keeps its state paired over its windows (:class:`dsvm.engine.tasks.StreamPass`),
    and the grid runs each candidate over several windows in a row
    (:meth:`dsvm.solvers.grid.CandidateGrid.run_windows`). Exact: the pairs are copies."""
    outer = getattr(_kept, "pairs", None)
    kept = _kept.pairs = _KeptPairs(state.coef)
    try:
        yield
    except BaseException:
        kept.release(check=False)
        raise
    else:
        kept.release()
    finally:
        _kept.pairs = outer


def _paired_args(args: Any, state: SolverState, A: Any, average: bool,
                 hp: np.ndarray) -> tuple[np.ndarray]:
    """The scratch argument of a paired kernel; for the state of :func:`pairs_kept`, its
    kept scratch, with the flags of ``hp`` that take the pairs from it and leave them there."""
    kept = getattr(_kept, "pairs", None)
    W = state.coef
    if (kept is None or not (isinstance(args.X, tuple) and average and A.shape[1] > 0)
            or kept.key != _array_key(W)):
        return (_pair_scratch(args.X, W, A, average),)
    P, paired = kept.scratch(args, W, A)
    hp[hparams.PAIRED_IN] = 1.0 if paired else 0.0
    hp[hparams.KEEP_PAIRED] = 1.0
    kept.state = state
    kept.n_rows += int(args.order.shape[0])
    return (P,)


def run_pass_kernel(
    kernel: Any, state: SolverState, args: Any, hp: np.ndarray, *, average: bool, who: str,
    paired: bool = False,
) -> PassStats:
    """Call a pass kernel (``pegasos_pass`` / ``sgd_pass``) on prepared inputs and read back
    the counters it wrote into ``hp``; check finiteness once for the pass. ``paired``: the
    kernel takes the scratch of :func:`dsvm.kernels.pairs.pair_scratch` as a last argument."""
    from dsvm.kernels import hparams as H

    K = state.coef.shape[0]
    A = state.avg_coef if average else np.zeros((K, 0))
    ab = state.avg_intercept if average else np.zeros(K)
    extra = _paired_args(args, state, A, average, hp) if paired else ()
    loss_sum = float(
        kernel(args.X, args.codes, args.sample_weight, args.order,
               state.coef, state.intercept, A, ab, hp, *extra)
    )
    n_rows = int(args.order.shape[0])
    state.t = float(hp[H.T])
    if average:
        state.n_avg = float(hp[H.N_AVG])
    if hp[hparams.KEEP_PAIRED] != 0.0:  # (W and A wait in the scratch: checked when copied back)
        if not np.isfinite(loss_sum):
            _kept.pairs.release(check=False)
            check_finite(state, loss_sum, who, n_rows)
    else:
        check_finite(state, loss_sum, who, n_rows)
    return PassStats(loss_sum=loss_sum, n_rows=n_rows, weight_sum=args.weight_sum)
