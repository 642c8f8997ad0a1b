"""L1 on a cluster (#13 item 3): the combine keeps a coefficient only where every stream has it
non-zero (dsvm.combine.averaging, intersect_support), so 2 workers are at least as sparse as
one stream, at the accuracy of L2 (a9a, alpha = 64/n)."""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from tests.conftest import load_libsvm

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def test_l1_on_two_workers_is_as_sparse_as_one_stream(local_client, tmp_path):
    X, y = load_libsvm("a9a/a9a.xz", 123)
    Xt, yt = load_libsvm("a9a/a9a.t.xz", 123)
    # the whole training file: on its first 12,000 rows L1 at 64/n lands 1.0-1.1 points below
    # L2 in one stream as on two (the penalty's cost there, not the combine's)
    n = X.shape[0]
    url = dsvm.write_arrays(tmp_path / "a9a.zarr", X, y, chunk_rows=2000).url

    def sgd(penalty, streams, **kw):
        return dsvm.SVMClassifier(solver="sgd", penalty=penalty, max_epochs=10, tol=None,
                                  random_state=0, n_streams=streams, chunk_rows=2000,
                                  alpha=64 / n if penalty == "l1" else 1 / n, **kw)

    one = sgd("l1", 1).fit(X, y)
    two = sgd("l1", 2, client=local_client).fit(url)
    l2 = sgd("l2", 2, client=local_client).fit(url)
    zeros_one, zeros_two = np.mean(one.coef_ == 0), np.mean(two.coef_ == 0)
    assert zeros_two >= zeros_one and zeros_two >= 0.30, (zeros_one, zeros_two)
    assert two.score(Xt, yt) >= l2.score(Xt, yt) - 0.01
