"""Explicit feature maps for the Gaussian kernel k(s, t) = exp(-gamma ||s - t||^2).

A map turns a row block into a dense block of ``n_output_features`` columns, one block at a time
(papers/000 §2.3); a linear SVM trained on the mapped rows predicts with f(t) = w . phi(t) + b
directly (§2.4), with no support vectors recovered.

* :class:`RFF`: random Fourier features (Eq. 8): phi(t) = sqrt(2/D) cos(W^T t + omega), the
  columns of W drawn from N(0, 2 gamma I) (the Fourier transform of k) and omega from U[0, 2 pi].
* :class:`Nystroem`: s landmarks S sampled uniformly from the data; with the eigen-decomposition
  K_SS = Q D Q^T, the eigenvalues kept are those >= ``eigen_threshold`` (the paper's epsilon_d,
  absolute, as in §2.3.1), and V = Psi_{.S} Q_{.,1..d} D^{-1/2} (Eq. 7): phi(t) = k(t, S) P with
  P = Q_{.,1..d} D^{-1/2}. ``n_output_features`` is the number d of eigenvalues kept (<= s).
* :class:`KernelExpansion`: phi(t) = k(t, S) for a fixed set S (the support vectors of a budgeted
  SGD model, whose coefficients become the linear weights).

Maps are saved inside a model file as plain arrays (:meth:`FeatureMap.to_arrays`) plus a small
JSON-able description (:meth:`FeatureMap.meta`), never pickled.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dsvm.data.block_ops import kernel_rows, read_only, slice_block
from dsvm.data.blocks import Block, DenseBlock, block_from_arrays
from dsvm.features.input_stage import InputStage, stage_from_arrays
from dsvm.kernels import feature_maps as fk

# Rows mapped per kernel call for the kernel-row maps: bounds the float64 (rows x landmarks)
# intermediate to ~16 MiB at 2048 landmarks whatever the chunk size.
_SUB_ROWS = 1024


def _check_positive(owner: str, name: str, value: Any, kind: type) -> None:
    ok = isinstance(value, kind) and isinstance(value, numbers.Real) and float(value) > 0
    if isinstance(value, bool) or not ok:
        what = "an int in the range [1, inf)" if kind is numbers.Integral else \
            "a float in the range (0, inf)"
        raise ValueError(f"The {name!r} parameter of {owner} must be {what}. "
                         f"Got {value!r} instead.")


class FeatureMap:
    """Common interface: ``transform_block`` (the worker's hook) and ``transform`` (arrays)."""

    kind = ""
    named_in_descriptions = True  # errors name mapped rows "... through the <map>"
    n_input_features: int = 0
    # what the rows go through before the map: their scaling, the columns the training rows
    # use (dsvm.features.input_stage); None: the rows as given
    input_stage_: InputStage | None = None

    @property
    def n_output_features(self) -> int:
        raise NotImplementedError

    def transform_block(self, block: Block) -> DenseBlock:
        """The mapped block (dense, in the block's float dtype), labels and weights kept."""
        if block.n_features != self.n_input_features:
            raise ValueError(
                f"{type(self).__name__} was fitted on {self.n_input_features} features; the block "
                f"has {block.n_features}."
            )
        out = np.empty((block.n_samples, self.n_output_features), dtype=block.dtype)
        self._fill(block if self.input_stage_ is None else
                   self.input_stage_.transform_block(block), out)
        return DenseBlock(X=out, y=block.y, sample_weight=block.sample_weight)

    def transform(self, X: Any) -> np.ndarray:
        """Map a NumPy array or SciPy sparse matrix (rows) to a dense array."""
        X = X if sp.issparse(X) else np.asarray(X)
        return self.transform_block(block_from_arrays(X, np.zeros(X.shape[0]))).X

    def _fill(self, block: Block, out: np.ndarray) -> None:
        raise NotImplementedError

    def meta(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_arrays(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def on_input(self, stage: InputStage | None) -> FeatureMap:
        """This map, fitted on the rows through ``stage``, as a map of the raw rows."""
        if stage is not None:
            self.input_stage_ = stage
            self.n_input_features = stage.n_input_features
        return self

    def saved_arrays(self) -> dict[str, np.ndarray]:
        """What a model file keeps of the map (:meth:`to_arrays`, and its input stage's)."""
        stage = {} if self.input_stage_ is None else self.input_stage_.arrays()
        return {**self.to_arrays(), **stage}

    def saved_meta(self) -> dict[str, Any]:
        """The map's description in a model file (:meth:`meta`, and its input stage's)."""
        return {**self.meta(), **({} if self.input_stage_ is None else self.input_stage_.meta())}

    def describe(self) -> str:
        return f"{self.kind} map ({self.n_output_features} components)"


class _Transformer(TransformerMixin, BaseEstimator):
    """scikit-learn's transformer API for the maps a user can build (``dsvm.RFF``,
    ``dsvm.Nystroem``): ``fit(X)`` on in-memory rows, ``transform``, ``fit_transform``,
    ``get_feature_names_out``, ``get_params``, so they sit in a ``Pipeline``. ``transform`` is
    the code the workers run on every chunk (:meth:`FeatureMap.transform_block`)."""

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """``rff0``, ``rff1``, ... (``nystroem0``, ...): one name per output feature."""
        check_is_fitted(self)
        return np.asarray([f"{self.kind}{i}" for i in range(self.n_output_features)],
                          dtype=object)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class RFF(_Transformer, FeatureMap):
    """Random Fourier features for the Gaussian kernel exp(-gamma ||s - t||^2).

    Parameters
    ----------
    n_components : int, default=1024
        D, the number of features. The kernel estimate phi(s).phi(t) has variance O(1/D).
    gamma : float, default=1.0
    random_state : int or None, default=None
        Seeds W and omega (the map depends on nothing else, so it needs no pass over the data).
    """

    kind = "rff"

    def __init__(self, n_components: int = 1024, gamma: float = 1.0,
                 random_state: int | None = None) -> None:
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state

    @property
    def n_output_features(self) -> int:
        return int(self.n_components)

    def fit(self, X: Any = None, y: Any = None, *, n_features: int | None = None,
            seed: int | None = None) -> RFF:
        """Draw W and omega for ``n_features`` inputs (or ``X.shape[1]``)."""
        _check_positive("RFF", "n_components", self.n_components, numbers.Integral)
        _check_positive("RFF", "gamma", self.gamma, numbers.Real)
        d = int(n_features if n_features is not None else X.shape[1])
        rng = np.random.default_rng(self.random_state if seed is None else seed)
        self.n_input_features = d
        self.weights_ = rng.normal(0.0, np.sqrt(2.0 * self.gamma), size=(d, self.n_components))
        self.offset_ = rng.uniform(0.0, 2.0 * np.pi, size=self.n_components)
        return self

    def _fill(self, block: Block, out: np.ndarray) -> None:
        scale = float(np.sqrt(2.0 / self.n_components))
        # read-only views of what the kernels read: one compiled variant (data.block_ops)
        X, weights, offset = kernel_rows(block), read_only(self.weights_), read_only(self.offset_)
        if isinstance(X, tuple):
            fk.rff_csr(*X, weights, offset, scale, out)
        else:
            fk.rff_dense(X, weights, offset, scale, out)

    def meta(self) -> dict[str, Any]:
        return {"kind": self.kind, "n_components": int(self.n_components),
                "gamma": float(self.gamma), "n_input_features": int(self.n_input_features)}

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"weights": self.weights_, "offset": self.offset_}


class _KernelRows(FeatureMap):
    """Maps through the kernel rows k(t, L) against landmarks L, optionally projected by P."""

    gamma: float
    landmarks_: np.ndarray
    projection_: np.ndarray | None = None

    def _set_landmarks(self, landmarks: np.ndarray) -> None:
        self.landmarks_ = np.ascontiguousarray(landmarks, dtype=np.float64)
        self.landmarks_sq_ = np.einsum("ij,ij->i", self.landmarks_, self.landmarks_)
        self.n_input_features = int(self.landmarks_.shape[1])

    def kernel_rows(self, block: Block, lo: int, hi: int) -> np.ndarray:
        """(hi - lo, n_landmarks) float64 kernel values of rows lo..hi of ``block``."""
        rows = np.empty((hi - lo, self.landmarks_.shape[0]), dtype=np.float64)
        X = kernel_rows(slice_block(block, lo, hi))  # read-only views (data.block_ops)
        if isinstance(X, tuple):
            fk.rbf_csr(*X, self.landmarks_, self.landmarks_sq_, float(self.gamma), rows)
        else:
            fk.rbf_dense(X, self.landmarks_, self.landmarks_sq_, float(self.gamma), rows)
        return rows

    def _fill(self, block: Block, out: np.ndarray) -> None:
        # float32 blocks project in float32 (half the BLAS time of the map's main cost); the
        # kernel values are in [0, 1] and P is well scaled, so nothing is lost that the float32
        # output would keep.
        P = None if self.projection_ is None else self.projection_.astype(out.dtype, copy=False)
        for lo in range(0, block.n_samples, _SUB_ROWS):
            hi = min(block.n_samples, lo + _SUB_ROWS)
            rows = self.kernel_rows(block, lo, hi)
            if P is None:
                out[lo:hi] = rows
            else:
                np.matmul(rows.astype(out.dtype, copy=False), P, out=out[lo:hi])


class Nystroem(_Transformer, _KernelRows):
    """Nystroem approximation of the Gaussian kernel from ``n_components`` sampled landmarks.

    Parameters
    ----------
    n_components : int, default=1024
        s, the number of landmarks (rows sampled uniformly without replacement).
    gamma : float, default=1.0
    eigen_threshold : float, default=1e-8
        epsilon_d: eigenvalues of K_SS below it are dropped (papers/000 §2.3.1), so the map has
        d <= s features. Absolute, as in the paper (k(t, t) = 1, so K_SS's eigenvalues sum to s).
    random_state : int or None, default=None
        Seeds the landmark sample.

    Notes
    -----
    On a cluster the landmarks are drawn on the workers in one pass over the chunks
    (:mod:`dsvm.features.sampling`); :meth:`fit` here samples an in-memory array.
    """

    kind = "nystroem"

    def __init__(self, n_components: int = 1024, gamma: float = 1.0,
                 eigen_threshold: float = 1e-8, random_state: int | None = None) -> None:
        self.n_components = n_components
        self.gamma = gamma
        self.eigen_threshold = eigen_threshold
        self.random_state = random_state

    @property
    def n_output_features(self) -> int:
        assert self.projection_ is not None, "Nystroem is not fitted"
        return int(self.projection_.shape[1])

    def check_params(self) -> None:
        _check_positive("Nystroem", "n_components", self.n_components, numbers.Integral)
        _check_positive("Nystroem", "gamma", self.gamma, numbers.Real)
        _check_positive("Nystroem", "eigen_threshold", self.eigen_threshold, numbers.Real)

    def fit(self, X: Any, y: Any = None) -> Nystroem:
        """Sample the landmarks from in-memory rows ``X`` and factor K_SS."""
        from dsvm.features.sampling import sample_block

        self.check_params()
        seed = 0 if self.random_state is None else int(self.random_state)
        X = X if sp.issparse(X) else np.asarray(X)
        sample = sample_block(block_from_arrays(X, np.zeros(X.shape[0])), self.n_components,
                              seed, 0)
        return self.fit_landmarks(sample.rows)

    def fit_landmarks(self, landmarks: np.ndarray) -> Nystroem:
        """Eq. 7 from given landmarks: P = Q_{.,1..d} D_{1..d}^{-1/2}, eigenvalues descending."""
        self.check_params()
        self._set_landmarks(landmarks)
        K = np.empty((self.landmarks_.shape[0],) * 2, dtype=np.float64)
        # (the rows read-only, as the blocks' rows are: the same compiled variant)
        fk.rbf_dense(read_only(self.landmarks_), self.landmarks_, self.landmarks_sq_,
                     float(self.gamma), K)
        eigvals, Q = np.linalg.eigh(0.5 * (K + K.T))
        keep = np.flatnonzero(eigvals >= self.eigen_threshold)[::-1]
        if keep.size == 0:
            raise ValueError(
                f"Nystroem: no eigenvalue of the landmark kernel matrix reaches eigen_threshold="
                f"{self.eigen_threshold}; lower it."
            )
        self.eigenvalues_ = eigvals[keep]
        self.projection_ = Q[:, keep] / np.sqrt(eigvals[keep])
        return self

    def meta(self) -> dict[str, Any]:
        return {"kind": self.kind, "n_components": int(self.n_components),
                "gamma": float(self.gamma), "eigen_threshold": float(self.eigen_threshold),
                "n_input_features": int(self.n_input_features)}

    def to_arrays(self) -> dict[str, np.ndarray]:
        assert self.projection_ is not None
        return {"landmarks": self.landmarks_, "projection": self.projection_}


class KernelExpansion(_KernelRows):
    """phi(t) = (k(t, s_1), ..., k(t, s_n)): a kernel model sum_j a_j k(t, s_j) as a linear one."""

    kind = "expansion"

    def __init__(self, support_vectors: np.ndarray, gamma: float) -> None:
        self.gamma = gamma
        self._set_landmarks(support_vectors)

    @property
    def n_output_features(self) -> int:
        return int(self.landmarks_.shape[0])

    def meta(self) -> dict[str, Any]:
        return {"kind": self.kind, "gamma": float(self.gamma),
                "n_input_features": int(self.n_input_features)}

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"landmarks": self.landmarks_}


def map_from_arrays(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> FeatureMap:
    """Rebuild a fitted map from :meth:`FeatureMap.meta` and :meth:`FeatureMap.to_arrays`."""
    kind = meta.get("kind")
    fmap: FeatureMap
    if kind == "rff":
        rff = RFF(int(meta["n_components"]), float(meta["gamma"]))
        rff.weights_ = np.asarray(arrays["weights"], dtype=np.float64)
        rff.offset_ = np.asarray(arrays["offset"], dtype=np.float64)
        rff.n_input_features = int(meta["n_input_features"])
        fmap = rff
    elif kind == "nystroem":
        nys = Nystroem(int(meta["n_components"]), float(meta["gamma"]),
                       float(meta["eigen_threshold"]))
        nys._set_landmarks(arrays["landmarks"])
        nys.projection_ = np.asarray(arrays["projection"], dtype=np.float64)
        fmap = nys
    elif kind == "expansion":
        fmap = KernelExpansion(arrays["landmarks"], float(meta["gamma"]))
    else:
        raise ValueError(f"Unknown feature map kind {kind!r}; expected rff, nystroem or expansion.")
    return fmap.on_input(stage_from_arrays(meta, arrays))
