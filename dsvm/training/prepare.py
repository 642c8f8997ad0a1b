"""The preparation every fit shares, whatever its method family (stochastic epochs, CoCoA+
rounds, NESVM passes): the checkpoint it resumes from, ``gamma="scale"`` resolved, the seed,
the rows held out for early stopping, the kernel map, the classes and class weights, and the
record the fit starts from (:class:`Prepared`). A family adds only what is its own (the
stochastic solver and combiner, CoCoA+'s dual store, NESVM's homotopy settings); the end of
every fit is :mod:`dsvm.training.finish`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from dsvm.data.fold import RowFold, fold_for
from dsvm.data.order import draw_seed
from dsvm.data.sources import Source, input_features, map_source
from dsvm.engine.local import Engine
from dsvm.engine.tasks import Calibrate, first
from dsvm.io.checkpoints import checkpoint_exists
from dsvm.solvers.base import SolverState, n_outputs_for
from dsvm.solvers.registry import SOLVERS
from dsvm.training import kernel_maps
from dsvm.training.checkpoints import check_resumable, load_checkpoint, state_of
from dsvm.training.class_weights import class_weight_vector
from dsvm.training.fitdata import FitData
from dsvm.training.holdout import split_for_early_stopping
from dsvm.training.memory import FEWER, check_worker_memory
from dsvm.training.record import FittedModel
from dsvm.training.spec import FitSpec

logger = logging.getLogger(__name__)


@dataclass
class Prepared:
    """A fit ready to train: what every family starts from."""

    spec: FitSpec  # with gamma="scale" resolved
    engine: Engine
    source: Source  # the training rows as given (held-out chunks split off): the outcome's rows
    rows: Source  # the same through the kernel map: what the solver reads
    seed: int
    ckpt: Any  # the checkpoint resumed from, or None
    classes: np.ndarray | None  # as shown (None: a regression)
    values: np.ndarray | None  # the float64 values the kernels see
    weights: np.ndarray | None  # the class weights
    fmap: Any = None  # the kernel map (None: linear)
    held: Source | None = None  # chunks held out for early stopping, or None
    fold: RowFold | None = None  # or the rows of every chunk held out for it
    data: FitData | None = None

    @property
    def done(self) -> bool:
        """Whether the checkpoint resumed from had converged (nothing left to run)."""
        return self.ckpt is not None and bool(self.ckpt.converged)

    def model_record(self, state: SolverState, *, n_streams: int, **fields: Any) -> FittedModel:
        """The record of this fit with the model ``state`` (``fields``: history, converged...)."""
        record = FittedModel(
            coef=state.coef, intercept=state.intercept, state=state, classes=self.classes,
            class_values=self.values, n_features_in=input_features(self.rows),
            n_samples=self.rows.n_samples, seed=int(self.seed), n_streams=int(n_streams),
            feature_map=self.fmap, class_weight=self.weights, **fields)
        if self.data is not None:
            record.scaling, record.feature_names = self.data.scaling, self.data.feature_names
            record.layout = self.data.layout
        return record


def prepare_fit(spec: FitSpec, data: FitData, *, resume: bool, held_rows: bool = False,
                state_dtype: np.dtype | None = None, seeded: bool = True,
                preferred: Any = None, announce_missing: bool = True) -> Prepared:
    """The shared stages of a fit, in order. ``held_rows``: the family's passes can leave out
    and score rows of every chunk, which early stopping then holds out for a model that is a
    weight vector (else whole chunks); ``state_dtype``: the dtype the checkpoint's model must
    have (the data's by default); ``seeded=False``: the family draws no seed (0 recorded);
    ``preferred``: the classes a fit that starts from another model keeps."""
    engine, source = data.engine, data.source
    ckpt = (resume_checkpoint(spec, source, state_dtype, announce_missing=announce_missing)
            if resume else None)
    # a kernel fit's scaling and columns, kept in its map (a linear fit's scaling is in
    # data.source already)
    stage = kernel_maps.input_stage(spec, engine, source)
    spec = resolve_gamma(spec, engine, source, ckpt, stage)
    seed = ckpt.seed if ckpt is not None else draw_seed(spec.random_state) if seeded else 0
    held, fold = None, None
    if spec.early_stopping:  # the same rows held out on resume (the seed's)
        if held_rows and predicts_by_weights(spec, source):
            # rows of every chunk (data.fold), left out of and scored by the epochs' passes
            fold = fold_for(seed, spec.validation_fraction, source)
        else:  # (BSGD predicts with its kernel expansion, which a pass does not score)
            source, held = split_for_early_stopping(source, spec.validation_fraction, seed)
    fmap = training_map(spec, engine, source, seed, stage)
    rows = map_source(source, fmap)
    if ckpt is not None:
        shown = ckpt.classes if len(ckpt.classes) else None  # regressors have none
        values = None if shown is None else values_of(shown)
    else:
        shown, values = class_values(spec, rows, None, data.text, preferred=preferred)
    weights = class_weight_vector(spec.class_weight, shown, values, rows)
    return Prepared(spec, engine, source, rows, seed, ckpt, shown, values, weights, fmap,
                    held, fold, data)


def predicts_by_weights(spec: FitSpec, source: Source) -> bool:
    """Whether the solver predicts with its weight vector (BSGD: with a kernel expansion)."""
    return getattr(spec.make_solver(source.n_samples), "predictor", None) is None


def start_record(p: Prepared) -> FittedModel:
    """The record a calibrated solver starts from: the checkpoint's fit when resuming, else
    the solver's first state, calibrated on the first chunk."""
    if p.ckpt is not None:
        return p.model_record(state_of(p.ckpt), n_streams=p.ckpt.n_streams,
                              history=list(p.ckpt.history), converged=p.ckpt.converged)
    return p.model_record(calibrated(p.spec, p.engine, p.rows, p.values, p.weights),
                          n_streams=p.spec.n_streams or p.engine.n_workers)


def calibrated(spec: FitSpec, engine: Engine, source: Source, values: np.ndarray | None,
               weights: np.ndarray | None) -> SolverState:
    """The solver's first state, calibrated on the first chunk (after checking that the
    workers have the memory for the fit: the first task that reads rows)."""
    solver = spec.make_solver(source.n_samples)
    n_outputs = 1 if values is None else n_outputs_for(len(values))
    state = solver.init_state(source.n_features, n_outputs, source.dtype)
    check_worker_memory(source, engine, state_bytes=state.nbytes, n_streams=spec.n_streams)
    return engine.reduce(Calibrate(state, solver, values, weights), source, [[0]], first,
                         name="calibrate", what="calibration")


def values_of(classes: np.ndarray) -> np.ndarray:
    """The float64 values the kernels see for ``classes``: their positions for text labels."""
    if classes.dtype.kind not in "biuf":
        return np.arange(len(classes), dtype=np.float64)
    return np.asarray(classes, dtype=np.float64)


def class_values(spec: FitSpec, source: Source, classes: Any, text: np.ndarray | None, *,
                 preferred: Any = None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(classes as shown, float64 values the kernels see) of a new fit; (None, None) for a
    regression. ``preferred``: the classes of the model a fit starts from, kept once the data
    are known to hold two classes at least."""
    if not spec.classifies:
        dataset = source.dataset
        if dataset is not None and dataset.classes is not None and len(dataset.classes) <= 2:
            stored = list(dataset.classes)
            raise ValueError(
                f"The training data ({source.describe()}) has {len(stored)} distinct target "
                f"values ({stored}): a classification dataset? Use SVMClassifier "
                "(dsvm train --task classification).")
        return None, None
    if text is not None:
        if len(text) < 2:
            raise ValueError(f"The training data ({source.describe()}) has one class only "
                             f"({np.asarray(text).tolist()}); a classifier needs at least two.")
        return text, np.arange(len(text), dtype=np.float64)
    values = np.unique(np.asarray(classes if classes is not None else source.label_values()))
    if values.dtype.kind not in "biuf":
        raise ValueError(f"Labels must be numeric; got dtype {values.dtype}.")
    if len(values) < 2:
        raise ValueError(f"The training data ({source.describe()}) has one class only "
                         f"({values.tolist()}); a classifier needs at least two.")
    if preferred is not None:
        shown = np.asarray(preferred)
        return shown, values_of(shown)
    return values, np.asarray(values, dtype=np.float64)


def resume_checkpoint(spec: FitSpec, source: Source, state_dtype: np.dtype | None = None, *,
                      announce_missing: bool = True) -> Any:
    """The checkpoint to resume from, or None (no file yet: start from scratch). Its model
    must be in ``state_dtype`` (the data's by default; CoCoA+ keeps w in float64 whatever the
    data's dtype: it is the running sum of the dual steps)."""
    if spec.checkpoint is None:
        raise ValueError("resume=True needs the 'checkpoint' parameter (a path or URL).")
    if not checkpoint_exists(spec.checkpoint):
        if announce_missing:
            logger.info("no checkpoint at %s yet: starting from scratch", spec.checkpoint)
        return None
    ckpt = load_checkpoint(spec.checkpoint)
    check_resumable(spec, ckpt, source,
                    source.dtype if state_dtype is None else np.dtype(state_dtype),
                    os.fspath(spec.checkpoint))
    return ckpt


def check_memory_up_front(spec: FitSpec, engine: Engine, source: Source, *,
                          n_states: int = 1, fewer: str = FEWER,
                          row_bytes: float = 0.0) -> None:
    """Refuse, before the first task (the scaling's statistics, ``gamma="scale"``, a kernel
    map's fit, the classes of a Dask input), a fit that cannot fit its workers' memory even
    with its smallest state: ``n_states`` of one output on the rows' features (a kernel map,
    BSGD or NESVM, whose state is not a local solver's: the process and the chunks alone).
    The exact check follows when the classes and the map are known; this one only moves the
    common refusals (chunks too large, a model too wide) ahead of passes that would be
    wasted. ``row_bytes``: per-row state a window holds besides the rows (CoCoA+'s duals)."""
    if getattr(engine, "worker_memory", None) is None:  # in process: nothing to check here
        return
    state_bytes = 0
    if spec.kernel == "linear" and spec.solver in SOLVERS and spec.solver != "bsgd":
        one = spec.make_solver(source.n_samples).init_state(source.n_features, 1, source.dtype)
        state_bytes = int(one.nbytes) * int(n_states)
    check_worker_memory(source, engine, state_bytes=state_bytes, n_streams=spec.n_streams,
                        fewer=fewer, row_bytes=row_bytes)


def training_map(spec: FitSpec, engine: Engine, source: Source, seed: int,
                 stage: Any = None) -> Any:
    """What the training rows go through: the kernel map of a fit with ``kernel=...``, fitted
    on ``source`` through its input ``stage`` (:func:`kernel_maps.input_stage`; None for a
    ``partial_fit``, whose batches are not the data and whose later rows may use other
    columns); for BSGD that stage alone, its support vectors' space; None: the rows as they
    are (a linear fit)."""
    if not kernel_maps.needs_gamma(spec.params):
        return None
    if spec.solver == "bsgd":
        return stage
    fmap = kernel_maps.make_feature_map(spec.kernel, spec.n_components,
                                        spec.params.get("gamma", 1.0), seed)
    assert fmap is not None  # (needs_gamma: a kernel map)
    return kernel_maps.fit_feature_map(fmap, engine, source, seed, stage)


def resolve_gamma(spec: FitSpec, engine: Engine, source: Source, ckpt: Any = None,
                  stage: Any = None) -> FitSpec:
    """The spec with ``gamma="scale"`` replaced by its value: the checkpoint's when resuming
    (so that a resumed fit rebuilds the same map), else measured on the data as the map sees
    it (scaled by the input ``stage``, on all the input's columns)."""
    if spec.params.get("gamma") != "scale" or not kernel_maps.needs_gamma(spec.params):
        return spec
    recorded = None if ckpt is None else ckpt.params.get("gamma")
    if isinstance(recorded, (int, float)):
        return spec.with_params(gamma=float(recorded))
    scaled = map_source(source, None if stage is None else stage.scaling)
    return spec.with_params(gamma=kernel_maps.scale_gamma(engine, scaled))
