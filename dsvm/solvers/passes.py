"""One solver pass over one chunk: the unit of work shared by in-process and worker code."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple, cast

import numpy as np

from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.data.fold import FoldMasks, KFold, OneFold, RowFold
from dsvm.data.order import row_order, window_order
from dsvm.data.readers import concat_blocks, slice_block
from dsvm.kernels.losses import loss_code
from dsvm.kernels.probe import ProbeLoss, probe_loss_sums
from dsvm.solvers.base import LocalSolver, PassStats, SolverState
from dsvm.solvers.chunk_codes import ChunkCodes
from dsvm.solvers.objective import kernel_inputs
from dsvm.solvers.targets import targets_for


def pass_over_chunk(
    solver: LocalSolver,
    state: SolverState,
    block: Block,
    *,
    classes: np.ndarray | None,
    chunk: int,
    epoch: int,
    seed: int,
    where: str,
    class_weight: np.ndarray | None = None,
    fold: RowFold | OneFold | KFold | FoldMasks | None = None,
) -> PassStats:
    """Run ``solver`` over the rows of ``block`` in this epoch's order, mutating ``state``.

    ``class_weight``: a weight per class code, multiplied into the rows' sample weights.
    ``fold``: rows held out of training (:mod:`dsvm.data.fold`), left out of the order; k
    folds: the fold of each step goes to the grid's stacks (:func:`run_order`)."""
    if block.n_samples == 0:
        return PassStats()
    codes = targets_for(block.y, classes, where=where)  # classes None: regression
    block = with_class_weight(block, codes, class_weight)
    order = row_order(seed, epoch, chunk, block.n_samples)
    folds = None
    if fold is not None and fold.n_splits > 1:
        folds = cast(Any, fold).fold_of(chunk, block.n_samples)[order]
    elif fold is not None:
        order = without_held(order, cast(Any, fold).held_mask(chunk, block.n_samples))
    probe = probe_losses(state, block, codes, solver)
    stats = run_order(solver, state, block, codes, order, folds)
    return stats if probe is None else stats + probe


class WindowRows(NamedTuple):
    """A window's pass made ready (:func:`window_rows`): its rows, their codes, the pass's
    order of them and, with k folds, the fold of each step's row; ``probe``: the probe losses
    measured on its chunks. ``rows`` is None for a window of empty chunks."""

    rows: Block | None
    codes: np.ndarray
    order: np.ndarray
    folds: np.ndarray | None
    probe: PassStats
    chunk_bytes: int = -1  # the window's chunks' bytes (-1: those of ``rows``)

    @property
    def nbytes(self) -> int:
        """What holding it costs: its chunks' bytes (not those of a span of in-memory rows
        that reaches over chunks outside the window, :func:`span_of_views`), its order."""
        if self.rows is None:
            return 0
        folds = 0 if self.folds is None else self.folds.nbytes
        rows = self.rows.nbytes if self.chunk_bytes < 0 else self.chunk_bytes
        return int(rows + self.codes.nbytes + self.order.nbytes + folds)


def pass_over_window(
    solver: LocalSolver,
    state: SolverState,
    window: list[tuple[int, Block]],
    *,
    classes: np.ndarray | None,
    epoch: int,
    seed: int,
    where: Callable[[int], str],
    class_weight: np.ndarray | None = None,
    fold: RowFold | OneFold | KFold | FoldMasks | None = None,
    known: ChunkCodes | None = None,
) -> PassStats:
    """One pass over the rows of several chunks, interleaved in one random order
    (:func:`window_rows`, then the solver's pass over them)."""
    ready = window_rows(solver, state, window, classes=classes, epoch=epoch, seed=seed,
                        where=where, class_weight=class_weight, fold=fold, known=known)
    if ready.rows is None:
        return ready.probe
    return run_order(solver, state, ready.rows, ready.codes, ready.order,
                     ready.folds) + ready.probe


def window_rows(
    solver: LocalSolver,
    state: SolverState,
    window: list[tuple[int, Block]],
    *,
    classes: np.ndarray | None,
    epoch: int,
    seed: int,
    where: Callable[[int], str],
    class_weight: np.ndarray | None = None,
    fold: RowFold | OneFold | KFold | FoldMasks | None = None,
    known: ChunkCodes | None = None,
) -> WindowRows:
    """The rows of several chunks, their codes and the order of one pass over them, with
    their probe losses (``state``'s probe models, measured here).

    A stream reads its chunks in windows (``shuffle_window`` of them, re-drawn every epoch,
    :mod:`dsvm.training.loop`), so that data stored sorted by label or by time trains like
    shuffled data: the rows of a window are visited in one permutation of all of them,
    drawn from (seed, epoch, the window's first chunk). The probe losses are taken chunk by
    chunk (every s-th row of each chunk: the same rows every epoch, whatever the windows).
    A window of one chunk is exactly :func:`pass_over_chunk`.

    **Row order.** One chunk: a uniform random permutation of its rows. Several
    (:func:`dsvm.data.order.window_order`): each chunk is cut into blocks of 4 runs of R
    consecutive stored rows, each chunk's blocks dealt at random into as many rounds as the
    window has chunks, and the rounds visited in a random order. Inside a round its runs are
    taken in a random order, 4 at a time, each read in stored order, their rows interleaved
    one by one at random; all re-drawn every epoch. R rows make 64 KB at their dense size
    (n_features x itemsize, whatever the layout: dense and CSR copies of the data train
    alike), at least 4, and a chunk keeps at least 512 runs and as many blocks as the window
    has rounds (:func:`dsvm.data.order.run_rows`). Every row is still visited exactly once per
    epoch, and every round mixes every chunk of the window in its share, so a step sees the
    window's classes (or times) as a permutation of the whole window would show them; rows
    stored within 4R of each other land in the same round (about one chunk's worth of steps)
    and consecutive steps come from different runs. What it buys: a round touches about one
    chunk's bytes, and the 4 open runs stream from memory, which the hardware prefetchers
    follow (2,000,000 x 100 float32 in 65,536-row chunks, a plain pass: runs of 128 rows 4 at
    a time 0.67x the speed of stored order, 8 at a time 0.43x; runs of 4 rows one after the
    other about 0.3x). bench_order (label-sorted a9a / w8a as distributed, 2,000-row chunks,
    hence runs of 4, 2 workers, seeds 0/1, pegasos): 84.67% / 98.31% against 84.94% / 98.64%
    shuffled (8 runs open: 84.54% / 98.22%); the drifting stream 81.11% in time order against
    81.01% shuffled; its large-chunk set and the epoch rate against one chunk at a time: see
    bench_order in benchmarks/RESULTS.md (next window read while one trains,
    :func:`dsvm.engine.tasks.iter_chunks`).
    In-memory input is passed as a view of the caller's arrays (:func:`span_of_views`, dense
    and CSR): the same rows in the same order as the concatenated window.

    ``known``: the chunks' codes kept from earlier epochs (in-memory chunks,
    :mod:`dsvm.solvers.chunk_codes`), else made from their labels here.

    ``fold``: the rows it holds out (:mod:`dsvm.data.fold`) are dropped from the order, not
    from the blocks (filtering the order costs one pass over n int64s; copying the kept rows
    of a block would cost its bytes), so the others keep their places in it. k folds
    (``fold.n_splits > 1``, a grid's ``cv=k``): no row is left out of the order, which is the
    order of a fit without folds; the fold of each step's row goes with it to the grid,
    whose stacks each leave out their own fold (:func:`run_order`).
    """
    stats = PassStats()
    blocks, codes, chunks = [], [], []
    for chunk, block in window:
        if block.n_samples == 0:
            continue
        chunks.append(chunk)
        block_codes = (targets_for(block.y, classes, where=where(chunk)) if known is None
                       else known.codes(chunk, block.y, classes, where(chunk)))
        block = with_class_weight(block, block_codes, class_weight)
        probe = probe_losses(state, block, block_codes, solver)
        if probe is not None:
            stats = stats + probe
        blocks.append(block)
        codes.append(block_codes)
    if not blocks:
        return WindowRows(None, np.empty(0), np.empty(0, np.int64), None, stats)
    counts = [block.n_samples for block in blocks]
    split = fold is not None and fold.n_splits > 1
    held = None if fold is None or split else cast(Any, fold).window_mask(chunks, counts)
    labels = cast(Any, fold).window_folds(chunks, counts) if split else None
    spanned = span_of_views(blocks, codes)
    if spanned is not None:  # rows of one in-memory array: no copy, same visits
        rows, all_codes, starts = spanned
        if held is None:  # (drawn in the span's numbering: no map of the window's rows)
            order = window_order(seed, epoch, window[0][0], counts, starts=starts,
                                 row_bytes=dense_row_bytes(rows))
        else:  # (the same order, filtered in window rows, then mapped to the span)
            order = span_rows(starts, counts)[without_held(window_order(
                seed, epoch, window[0][0], counts, row_bytes=dense_row_bytes(rows)), held)]
        folds = None
        if labels is not None:  # each span row's fold (rows outside the window: never visited)
            span_folds = np.zeros(rows.n_samples, np.int8)
            span_folds[span_rows(starts, counts)] = labels
            folds = span_folds[order]
        return WindowRows(rows, all_codes, order, folds, stats,
                          sum(block.nbytes for block in blocks))
    order = (row_order(seed, epoch, window[0][0], counts[0]) if len(blocks) == 1
             else window_order(seed, epoch, window[0][0], counts,
                               row_bytes=dense_row_bytes(blocks[0])))
    if held is not None:
        order = without_held(order, held)
    return WindowRows(concat_blocks(blocks),
                      codes[0] if len(codes) == 1 else np.concatenate(codes), order,
                      None if labels is None else labels[order], stats)


def run_order(solver: LocalSolver, state: SolverState, rows: Block, codes: np.ndarray,
              order: np.ndarray, folds: np.ndarray | None) -> PassStats:
    """``solver``'s pass over ``rows`` in ``order``; with k folds (``folds``: the fold of the
    row of each step) the grid's pass of every stack, each without its own fold's steps
    (:meth:`dsvm.solvers.grid.CandidateGrid.run_folds`)."""
    if folds is None:
        return solver.run_block(state, rows, codes, order)
    return cast(Any, solver).run_folds(state, rows, codes, order, folds)  # type: ignore[no-any-return]


def without_held(order: np.ndarray, held: np.ndarray) -> np.ndarray:
    """``order`` without the rows ``held`` marks (the rest keep their relative order)."""
    return order[~held[order]]


def dense_row_bytes(block: Block) -> int:
    """The bytes of one of ``block``'s rows stored densely, whatever its layout: they set the
    runs of its row order (:func:`dsvm.data.order.run_rows`), the same for both layouts."""
    return int(block.n_features * block.dtype.itemsize)


def span_of_views(blocks: list[Block], codes: list[np.ndarray]
                  ) -> tuple[Block, np.ndarray, np.ndarray] | None:
    """The rows of a window of dense blocks that are row ranges of one C-contiguous array
    (in-memory input: ``ArraySource`` hands out views; CSR: :func:`csr_span_of_views`), as
    one view spanning them all, with
    codes (and sample weights) placed at the blocks' rows and the span row where each block's
    rows start (int64, one per block; :func:`span_rows` maps the concatenated window's rows
    to the span's). None when the blocks are not such views.

    Concatenating a window copied every row once more per epoch: 0.17 s of a 0.28 s epoch on
    2,000,000 x 100 float32 rows, twice the pass itself. The span may include rows of chunks
    outside the window; the order never visits them. Only for a pass over the window's rows
    in ``order``: the state must be calibrated already (as the training loop ships it), since
    a solver calibrating on the block would look at the span's first rows.
    """
    if len(blocks) >= 2 and all(isinstance(b, CSRBlock) for b in blocks):
        return csr_span_of_views(blocks, codes)  # type: ignore[arg-type]
    if len(blocks) < 2 or not all(isinstance(b, DenseBlock) for b in blocks):
        return None
    dense = cast("list[DenseBlock]", blocks)  # checked just above
    first = dense[0].X
    base = first.base
    if not isinstance(base, np.ndarray) or not base.flags.c_contiguous:
        return None
    row_bytes = first.shape[1] * first.itemsize
    base_ptr = base.__array_interface__["data"][0]
    starts = []
    for b in dense:
        X = b.X
        if (X.base is not base or X.dtype != first.dtype or X.shape[1] != first.shape[1]
                or not X.flags.c_contiguous or row_bytes == 0):
            return None
        offset = X.__array_interface__["data"][0] - base_ptr
        if offset < 0 or offset % row_bytes:
            return None
        starts.append(offset // row_bytes)
    lo = min(starts)
    hi = max(s + b.n_samples for s, b in zip(starts, blocks))
    if hi * row_bytes > base.nbytes:
        return None
    span = np.ndarray((hi - lo, first.shape[1]), first.dtype, buffer=base, offset=lo * row_bytes)
    at = np.array(starts, np.int64) - lo
    span_codes, sw = _span_values(blocks, codes, at, hi - lo)
    return DenseBlock(X=span, y=np.empty(hi - lo), sample_weight=sw), span_codes, at


def span_rows(starts: np.ndarray, counts: list[int]) -> np.ndarray:
    """The span row of each row of the concatenated window (block j: ``counts[j]`` rows from
    span row ``starts[j]``), int64: for the passes that filter or label the window's rows."""
    return np.concatenate([np.arange(s, s + c, dtype=np.int64) for s, c in zip(starts, counts)])


def _span_values(blocks: list[Block], codes: list[np.ndarray], starts: np.ndarray, n_span: int
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """Codes and sample weights of a span of ``n_span`` rows where block j's rows start at
    span row ``starts[j]``.

    Rows of the span outside the window get code 0 and weight 0 (np.zeros: untouched pages
    cost nothing): the order never visits them, and a zero weight leaves what is computed
    from all weights (Pegasos' radius from the largest) as for the window alone."""
    span_codes = np.zeros(n_span, codes[0].dtype)
    weighted = any(b.sample_weight is not None for b in blocks)
    sw = np.zeros(n_span) if weighted else None
    for start, b, c in zip(starts, blocks, codes):
        rows = slice(int(start), int(start) + b.n_samples)
        span_codes[rows] = c
        if sw is not None:
            sw[rows] = 1.0 if b.sample_weight is None else b.sample_weight
    return span_codes, sw


def _flat(base: np.ndarray) -> np.ndarray | None:
    """A 1-D view of all of ``base`` (the array a CSR matrix's indices or data are a view of),
    or None when there is no such view. The base may have more dimensions than the view:
    indices made as an (n_rows, nnz) array and raveled into the matrix are a view of it, and
    slicing that base by entry offsets would slice its rows instead (a typing error in the
    pass kernel)."""
    if not base.flags.c_contiguous:
        return None
    return base if base.ndim == 1 else base.reshape(-1)


def _offset_in(view: np.ndarray, base: np.ndarray) -> int:
    """Element offset of a 1-D contiguous view inside ``base`` (-1 if it is not one)."""
    if (view.base is not base or view.dtype != base.dtype or view.ndim != 1
            or not view.flags.c_contiguous):
        return -1
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if offset < 0 or offset % view.itemsize or offset + view.nbytes > base.nbytes:
        return -1
    return offset // view.itemsize


def csr_span_of_views(blocks: list[CSRBlock], codes: list[np.ndarray]
                      ) -> tuple[CSRBlock, np.ndarray, np.ndarray] | None:
    """:func:`span_of_views` for CSR blocks whose indices and data are views of the same two
    arrays (in-memory sparse input: ``ArraySource`` hands out such views).

    The span's indices and data are views from the first block's entries to the last's (in
    storage order); its indptr (the only new array: 8 bytes a row) lists the blocks' rows in
    storage order, with one extra row covering the entries between two blocks that are not
    adjacent, which the order never visits. Concatenating a window copied every stored entry:
    0.08-0.16 s of a 0.5-0.9 s epoch at 400,000 rows x 40 nonzeros.
    """
    first = blocks[0]
    idx_base, dat_base = first.indices.base, first.data.base
    if not isinstance(idx_base, np.ndarray) or not isinstance(dat_base, np.ndarray):
        return None
    idx_flat, dat_flat = _flat(idx_base), _flat(dat_base)
    if idx_flat is None or dat_flat is None:
        return None
    offsets = []
    for b in blocks:
        off = _offset_in(b.indices, idx_base)
        if (off < 0 or _offset_in(b.data, dat_base) != off or b.n_features != first.n_features
                or int(b.indptr[0]) != 0):
            return None
        offsets.append(off)
    placed = sorted(range(len(blocks)), key=offsets.__getitem__)
    pieces, starts, end, n_span = [], [0] * len(blocks), offsets[placed[0]], 0
    for j in placed:
        b, off = blocks[j], offsets[j]
        if off < end:  # overlapping views: not rows of one matrix in storage order
            return None
        if off > end:  # entries of chunks outside the window: one row never visited
            pieces.append(np.array([end], np.int64))
            n_span += 1
        starts[j] = n_span
        pieces.append(np.asarray(b.indptr[:-1], np.int64) + off)
        n_span += b.n_samples
        end = off + int(b.indptr[-1])
    lo = offsets[placed[0]]
    pieces.append(np.array([end], np.int64))
    indptr = np.concatenate(pieces) - lo
    at = np.array(starts, np.int64)
    span_codes, sw = _span_values(blocks, codes, at, n_span)  # type: ignore[arg-type]
    span = CSRBlock(indptr=indptr, indices=idx_flat[lo:end], data=dat_flat[lo:end],
                    y=np.empty(n_span), n_features=first.n_features, sample_weight=sw)
    return span, span_codes, at


def with_class_weight(block: Block, codes: np.ndarray,
                      class_weight: np.ndarray | None) -> Block:
    """``block`` with each row's sample weight multiplied by its class's weight."""
    if class_weight is None:
        return block
    weights = np.asarray(class_weight, dtype=np.float64)[codes]
    if block.sample_weight is not None:
        weights = weights * np.asarray(block.sample_weight, dtype=np.float64)
    return replace(block, sample_weight=weights)


def probe_losses(state: SolverState, block: Block, codes: np.ndarray,
                 solver: LocalSolver) -> PassStats | None:
    """The loss sums of the state's probe models on every ``state.probe_stride``-th row of
    ``block`` (see :mod:`dsvm.solvers.extrapolation`), as PassStats with only probe fields."""
    if state.probe_coef is None:
        return None
    args = kernel_inputs(block, codes, np.empty(0, np.int64), state, "probe")
    n_probes = state.probe_coef.shape[0] // state.n_outputs
    sums = np.zeros((2, n_probes))
    loss = ProbeLoss(state.n_outputs, loss_code(solver.loss),
                     float(getattr(solver, "loss_param", 0.0)), args.regression)
    weight, count = probe_loss_sums(
        args.X, args.codes, args.sample_weight, block.n_samples,
        int(state.probe_stride),
        np.ascontiguousarray(state.probe_coef, np.float64),
        np.ascontiguousarray(state.probe_intercept, np.float64), loss, sums)
    return PassStats(probe_sums=sums, probe_weight=float(weight), probe_rows=int(count))


def calibration_sample(block: Block, max_rows: int = 1000) -> Block:
    """The first ``max_rows`` rows of a block: what SGD's eta0 calibration looks at."""
    return slice_block(block, 0, min(block.n_samples, max_rows))
