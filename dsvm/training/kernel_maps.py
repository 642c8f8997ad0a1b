"""Kernel feature maps in a fit: building the map, fitting it on the workers, saving it.

RFF needs only the number of features; Nystroem's landmarks are a uniform sample drawn in one
pass on the workers (bottom-k sampling, :mod:`dsvm.features.sampling`), each task returning at
most ``n_components`` rows, so the data never comes to the client.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from dsvm.data.sources import Source, map_source
from dsvm.engine.local import Engine, spread
from dsvm.engine.tasks import (
    ChunkMoments,
    MergeSamples,
    SampleRows,
    feature_variance,
    merge_dicts,
)
from dsvm.features.columns import MIN_WIDTH, subset_for
from dsvm.features.input_stage import InputStage
from dsvm.features.maps import RFF, FeatureMap, Nystroem, map_from_arrays
from dsvm.features.scaling import Scaling, choose_scaling
from dsvm.training.progress import fit_note
from dsvm.training.scaling import feature_stats, scale_mode, stored_stats

logger = logging.getLogger(__name__)

KERNELS = ("linear", "rff", "nystroem")


def make_feature_map(kernel: Any, n_components: int, gamma: float,
                     random_state: Any) -> FeatureMap | None:
    """The unfitted map for ``kernel`` ("linear": none); a given RFF/Nystroem is copied."""
    if isinstance(kernel, (RFF, Nystroem)):
        params = {k: v for k, v in vars(kernel).items() if not k.endswith("_") and k in
                  ("n_components", "gamma", "eigen_threshold", "random_state")}
        if params.get("random_state") is None and isinstance(random_state, (int, np.integer)):
            params["random_state"] = int(random_state)  # the fit's seed: resumable
        return type(kernel)(**params)
    seed = int(random_state) if isinstance(random_state, (int, np.integer)) else None
    if kernel == "rff":
        return RFF(int(n_components), float(gamma), random_state=seed)
    if kernel == "nystroem":
        return Nystroem(int(n_components), float(gamma), random_state=seed)
    return None


def check_kernel_solver(kernel: Any, solver: str) -> None:
    if solver in ("bsgd", "nesvm") and not (isinstance(kernel, str) and kernel == "linear"):
        what = ("trains the Gaussian kernel itself" if solver == "bsgd"
                else "trains linear models only")
        raise ValueError(
            f"solver={solver!r} {what}; kernel must be 'linear' with it (got "
            f"kernel={kernel!r}). Use kernel='rff' or 'nystroem' with a stochastic linear "
            "solver (pegasos, sgd, asset) instead."
        )


def sample_landmarks(engine: Engine, source: Source, n: int, seed: int) -> Any:
    """A uniform sample of ``n`` rows drawn in one pass over the chunks, on the workers."""
    groups = spread(source.n_chunks, 2 * engine.n_workers)
    return engine.reduce(SampleRows(n, seed), source, groups, MergeSamples(n), name="sample",
                         what="landmark sampling")


def fit_feature_map(fmap: FeatureMap, engine: Engine, source: Source, seed: int,
                    stage: InputStage | None = None) -> FeatureMap:
    """Fit ``fmap`` to the data behind ``source`` seen through ``stage`` (the rows' scaling, the
    columns they use: :func:`input_stage`) without bringing the data to the client."""
    return _fit(fmap, engine, map_source(source, stage), seed).on_input(stage)


def input_stage(spec: Any, engine: Engine, source: Source) -> InputStage | None:
    """What the rows of a Gaussian-kernel fit go through before its map (None for a linear
    fit, or where nothing applies): the scaling ``scale`` asks for (see
    :mod:`dsvm.features.input_stage`; a linear fit's is folded back into its model instead,
    :mod:`dsvm.training.scaling`), then, on a wide input, the columns the rows use. Both come
    from the columns' statistics: a dataset's writer kept them, other inputs cost one pass."""
    mode = scale_mode(spec.params)
    wide = source.n_features >= MIN_WIDTH
    if not needs_gamma(spec.params) or (mode is False and not wide):
        return None
    stats = stored_stats(_columns_as_stored(source)) or feature_stats(engine, source)
    if stats is None:
        return None
    # standardised as a StandardScaler before an SVC (the centring does not change distances)
    scaling = None if mode is False else choose_scaling(stats, mode, fit_intercept=True,
                                                        regression=False)
    columns = subset_for(stats.max_abs > 0) if wide else None
    if scaling is None and columns is None:
        return None
    stage = InputStage(source.n_features, scaling, columns)
    fit_note(f"kernel map's input: {stage.describe()}", spec.verbose)
    return stage


def _columns_as_stored(source: Source) -> Source:
    """The source whose columns a kernel fit's rows have: a kernel regressor's go through a
    scaling of the target alone (:func:`dsvm.training.scaling.target_only`), which leaves the
    columns as stored, so a dataset's kept statistics still hold for them (only the columns'
    are used here); before, the wrapper hid them and the fit read every chunk for them."""
    fmap = getattr(source, "fmap", None)
    if isinstance(fmap, Scaling) and fmap.kind == "none":
        return getattr(source, "inner", source)
    return source


# What factoring s landmarks takes, in float64 matrices of s x s: the kernel matrix, its
# symmetrised copy, the eigenvectors and the projection (numpy's eigh works beside them).
LANDMARK_MATRICES = 4


def check_landmark_memory(n_components: int, n_rows: int | None,
                          available: int | None = None) -> None:
    """Refuse before any work a Nystroem map whose landmark kernel matrix would not fit in this
    process's memory: ``--components 100000`` on 40,000 rows took 21.9 GB before the kernel's
    OOM killer ended ``dsvm train`` (and with it most of a shared machine's memory)."""
    s = min(int(n_components), int(n_rows)) if n_rows else int(n_components)
    need = LANDMARK_MATRICES * 8 * s * s
    if available is None:
        import psutil

        available = int(psutil.virtual_memory().available)
    if need > available:  # (a parameter too large for the machine: ValueError, exit 2)
        raise ValueError(
            f"kernel='nystroem' with n_components={n_components:,} factors a {s:,} x {s:,} "
            f"landmark kernel matrix: about {need / 2**30:,.1f} GiB in this process, more than "
            f"its {available / 2**30:,.1f} GiB available; take fewer n_components (1,024 to "
            "8,192 approximate most kernels well: benchmarks/bench_kernel_maps.py)")


def _fit(fmap: FeatureMap, engine: Engine, source: Source, seed: int) -> FeatureMap:
    if isinstance(fmap, Nystroem):
        fmap.check_params()
        check_landmark_memory(int(fmap.n_components), source.n_samples)
        sample = sample_landmarks(engine, source, int(fmap.n_components), seed)
        if sample is None:
            raise ValueError(f"Nystroem: {source.describe()} has no rows to sample landmarks from.")
        return fmap.fit_landmarks(sample.rows)
    if not isinstance(fmap, RFF):
        raise TypeError(f"Cannot fit a {type(fmap).__name__} to data.")
    return fmap.fit(n_features=source.n_features, seed=seed if fmap.random_state is None else None)


def map_parts(fmap: FeatureMap | None) -> tuple[dict[str, np.ndarray], dict[str, Any] | None]:
    """The map as model-file arrays and its JSON description (none: ({}, None))."""
    if fmap is None:
        return {}, None
    return fmap.saved_arrays(), fmap.saved_meta()


def map_from_parts(arrays: dict[str, np.ndarray], meta: dict[str, Any] | None) -> FeatureMap | None:
    return None if meta is None else map_from_arrays(meta, arrays)


def needs_gamma(params: Any) -> bool:
    """Whether a fit with these parameters uses the Gaussian kernel's width."""
    kernel = params.get("kernel", "linear")
    return params.get("solver") == "bsgd" or not (isinstance(kernel, str) and kernel == "linear")


def scale_gamma(engine: Engine, source: Source) -> float:
    """``gamma="scale"``: 1 / (n_features * X.var()) as in scikit-learn's SVC, the variance over
    all feature values, summed by tasks on the workers (one read of the data)."""
    groups = spread(source.n_chunks, 2 * engine.n_workers)
    moments = engine.reduce(ChunkMoments(), source, groups, merge_dicts, name="moments",
                            what="feature variance for gamma='scale'")
    variance = feature_variance(moments)
    return 1.0 / (source.n_features * variance) if variance > 0 else 1.0
