"""Feature-map kernels against the NumPy reference, and the approximations' convergence."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data.block_ops import kernel_rows, read_only
from dsvm.data.blocks import block_from_arrays
from dsvm.features import RFF, Nystroem
from dsvm.features.sampling import merge_samples, sample_block
from dsvm.kernels import feature_maps as fk
from tests import reference_kernel_maps as ref


@pytest.fixture
def rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 7))
    X[rng.random(X.shape) < 0.4] = 0.0  # some zeros, and one all-zero row
    X[3] = 0.0
    return X


def _csr_block(csr):
    return block_from_arrays(csr, np.zeros(csr.shape[0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rff_kernels_match_reference_dense_and_csr(rows, dtype):
    rng = np.random.default_rng(1)
    W = rng.normal(size=(7, 33))
    b = rng.uniform(0, 2 * np.pi, 33)
    X = rows.astype(dtype)
    expected = ref.rff(X.astype(np.float64), W, b)
    out = np.empty((40, 33), dtype=dtype)
    # read-only inputs, as the maps hand them (dsvm.data.block_ops.kernel_rows)
    W, b = read_only(W), read_only(b)
    fk.rff_dense(read_only(X), W, b, np.sqrt(2 / 33), out)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-6 if dtype == np.float32 else 1e-12)
    csr = sp.csr_matrix(X)
    out2 = np.empty_like(out)
    fk.rff_csr(*kernel_rows(_csr_block(csr)), W, b, np.sqrt(2 / 33), out2)
    np.testing.assert_allclose(out2, out, rtol=0, atol=1e-6)


def test_rbf_kernels_match_reference_dense_and_csr(rows):
    L = np.random.default_rng(2).normal(size=(9, 7))
    expected = ref.rbf(rows, L, 0.3)
    out = np.empty((40, 9))
    fk.rbf_dense(read_only(rows), L, (L ** 2).sum(1), 0.3, out)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-14)
    csr = sp.csr_matrix(rows)
    out2 = np.empty((40, 9))
    fk.rbf_csr(*kernel_rows(_csr_block(csr)), L, (L ** 2).sum(1), 0.3, out2)
    np.testing.assert_allclose(out2, expected, rtol=1e-12, atol=1e-14)


def test_maps_give_the_same_features_for_dense_and_csr_blocks(rows):
    for fmap in (RFF(64, 0.5, random_state=0).fit(rows),
                 Nystroem(20, 0.5, random_state=0).fit(rows)):
        dense = fmap.transform(rows)
        sparse = fmap.transform(sp.csr_matrix(rows))
        np.testing.assert_allclose(dense, sparse, atol=1e-12)


def test_nystroem_is_exact_on_its_landmarks_and_matches_eq7(rows):
    nys = Nystroem(40, 0.2, eigen_threshold=1e-10, random_state=0).fit(rows)
    V = nys.transform(rows)
    # with every row a landmark, VV^T reproduces K up to the dropped tiny eigenvalues
    np.testing.assert_allclose(V @ V.T, ref.rbf(rows, rows, 0.2), atol=1e-6)
    K_SS = ref.rbf(nys.landmarks_, nys.landmarks_, 0.2)
    D, Q = np.linalg.eigh(K_SS)
    keep = D >= 1e-10
    V_ref = ref.rbf(rows, nys.landmarks_, 0.2) @ Q[:, keep] @ np.diag(D[keep] ** -0.5)
    np.testing.assert_allclose(V @ V.T, V_ref @ V_ref.T, atol=1e-8)


def test_nystroem_error_falls_with_n_components():
    from tests.conftest import load_libsvm

    X, _ = load_libsvm("phishing/phishing.xz", 68)
    X = np.asarray(X[:1500].todense())
    K = ref.rbf(X, X, 8.0)
    errors = []
    for s in (50, 200, 800):
        V = Nystroem(s, 8.0, random_state=0).fit(X).transform(X)
        errors.append(np.linalg.norm(K - V @ V.T) / np.linalg.norm(K))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.5 * errors[0]


def test_rff_error_shrinks_like_one_over_sqrt_components(rows):
    K = ref.rbf(rows, rows, 0.5)
    def err(D: int) -> float:
        # mean squared error of the kernel estimate, averaged over independent maps
        maps = [RFF(D, 0.5, random_state=s).fit(rows).transform(rows) for s in range(20)]
        return float(np.mean([(Z @ Z.T - K) ** 2 for Z in maps]))
    ratio = err(64) / err(1024)  # variance ~ 1/D: the ratio should be about 16
    assert 10 < ratio < 25


def test_bottom_k_samples_merge_to_the_single_pass_sample(rows):
    block = block_from_arrays(rows, np.zeros(40))
    whole = sample_block(block, 10, seed=3, chunk=0)
    assert whole.rows.shape == (10, 7)
    parts = [sample_block(block_from_arrays(rows[a:a + 8], np.zeros(8)), 10, 3, c)
             for c, a in enumerate(range(0, 40, 8))]
    merged_ab = merge_samples([merge_samples(parts[:2], 10), merge_samples(parts[2:], 10)], 10)
    merged_all = merge_samples(parts, 10)
    np.testing.assert_array_equal(merged_ab.rows, merged_all.rows)
    assert len({tuple(r) for r in merged_all.rows}) == 10


def test_bad_map_parameters_name_the_parameter():
    with pytest.raises(ValueError, match="'n_components' parameter of RFF"):
        RFF(0).fit(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="'gamma' parameter of Nystroem"):
        Nystroem(5, gamma=-1.0).fit(np.zeros((6, 2)))
