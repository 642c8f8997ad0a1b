"""Dask arrays whose chunk lengths are unknown (from DataFrames) train on the cluster (issue #17:
they failed with "X has nan rows but y has nan"); the lengths are computed on the workers."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm import SVMClassifier

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(240)]


def test_fit_on_arrays_from_a_dask_dataframe_equals_known_lengths(local_client):
    import dask.dataframe as dd
    import pandas as pd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = np.where(X[:, 0] - X[:, 1] > 0, 1, -1)
    frame = pd.DataFrame(X, columns=list("abcd")).assign(y=y)
    ddf = dd.from_pandas(frame, npartitions=3)
    Xd, yd = ddf[list("abcd")].to_dask_array(), ddf["y"].to_dask_array()
    assert np.isnan(Xd.chunks[0][0])  # unknown lengths, as DataFrames give them
    kw = dict(alpha=1e-3, max_epochs=3, tol=None, random_state=0, client=local_client,
              n_streams=2)
    unknown = SVMClassifier(**kw).fit(Xd, yd)
    known = SVMClassifier(**kw).fit(ddf[list("abcd")].to_dask_array(lengths=True),
                                    ddf["y"].to_dask_array(lengths=True))
    np.testing.assert_array_equal(unknown.coef_, known.coef_)
    assert unknown.score(X, y) > 0.95
