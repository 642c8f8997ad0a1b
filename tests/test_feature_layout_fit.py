"""A fit on a dataset renumbered by frequency (dsvm.training.layout): its model, predictions
and scores are in the user's feature ids and equal those of the same fit on the store as given;
the CLI converts with --feature-order, trains, predicts and shows it."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import dsvm
from dsvm.cli import main
from dsvm.data import write_arrays
from tests.data.test_feature_layout import zipf_csr


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The same rows, as given and renumbered, in the same chunks (so the same row order)."""
    tmp = tmp_path_factory.mktemp("layout")
    X, y = zipf_csr(n=2000, n_features=3000, per_row=10)  # (some never used)
    given = write_arrays(tmp / "given.zarr", X, y, chunk_rows=500)
    renumbered = write_arrays(tmp / "freq.zarr", X, y, chunk_rows=500, feature_order="frequency")
    assert renumbered.feature_layout() is not None
    return X, y, given.url, renumbered.url


def fitted(url: str, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (not converged in 3 epochs: not what is tested)
        return dsvm.SVMClassifier(random_state=0, max_epochs=3, **params).fit(url)


@pytest.mark.parametrize("solver", ["sgd", "pegasos", "nesvm", "cocoa"])
def test_fit_on_the_renumbered_store_gives_the_same_model_in_user_ids(stores, solver):
    X, y, given, renumbered = stores
    a, b = fitted(given, solver=solver), fitted(renumbered, solver=solver)
    # renumbering only permutes the state: the same model, up to the order of float sums
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-6 * np.abs(a.coef_).max())
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-5, atol=1e-6)
    assert np.abs(b.coef_).max() > 0
    # raw rows and the renumbered store predict alike
    np.testing.assert_allclose(b.decision_function(renumbered), b.decision_function(X),
                               rtol=1e-4, atol=1e-5)
    assert np.array_equal(b.predict(renumbered), b.predict(X))
    assert b.score(renumbered) == pytest.approx(b.score(X, y))
    # a model trained on the given ids scores the renumbered store as it scores raw rows
    assert np.array_equal(a.predict(renumbered), a.predict(X))


def test_warm_start_partial_fit_and_validation_stay_in_user_ids(stores):
    X, y, given, renumbered = stores

    def run(url: str):
        clf = dsvm.SVMClassifier(solver="sgd", random_state=0, max_epochs=2, warm_start=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(url, validation=(X[:400], y[:400]))  # raw rows score the stored-id state
            clf.fit(url)
            clf.partial_fit(url)
        return clf

    a, b = run(given), run(renumbered)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-6 * np.abs(a.coef_).max())
    assert [h.get("val_accuracy") for h in b.history_] == [h.get("val_accuracy")
                                                          for h in a.history_]
    assert b.coef_.shape == (1, X.shape[1])


def test_a_fit_of_the_used_features_continues_only_on_its_store(stores):
    X, y, given, renumbered = stores
    used = int(np.count_nonzero(np.bincount(X.indices, minlength=X.shape[1])))
    assert used < X.shape[1]  # (the fixture leaves features unused: the compact state)
    clf = fitted(renumbered, solver="sgd")
    assert clf.state_.coef.shape[1] == used  # the state covers the used features only
    assert np.all(clf.coef_[:, np.bincount(X.indices, minlength=X.shape[1]) == 0] == 0)
    with pytest.raises(ValueError, match="partial_fit on .*cannot continue it"):
        clf.partial_fit(X[:100], y[:100])
    # a partial_fit from the first call keeps every feature: raw rows continue it
    pf = dsvm.SVMClassifier(solver="sgd", random_state=0)
    pf.partial_fit(renumbered, classes=[-1, 1])
    pf.partial_fit(X[:300], y[:300])
    assert pf.state_.coef.shape[1] == X.shape[1]
    ref = dsvm.SVMClassifier(solver="sgd", random_state=0)
    ref.partial_fit(given, classes=[-1, 1])
    ref.partial_fit(X[:300], y[:300])
    np.testing.assert_allclose(pf.coef_, ref.coef_, rtol=1e-5,
                               atol=1e-6 * np.abs(ref.coef_).max())


def test_a_kernel_map_fit_on_the_renumbered_store_predicts_raw_rows(stores):
    X, y, given, renumbered = stores
    a = fitted(given, solver="sgd", kernel="rff", n_components=32)
    b = fitted(renumbered, solver="sgd", kernel="rff", n_components=32)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-6)
    assert np.array_equal(b.predict(X), a.predict(X))
    assert np.array_equal(b.predict(renumbered), b.predict(X))


def test_cli_convert_train_predict_info_with_feature_order(tmp_path, capsys, stores):
    X, y, _, _ = stores
    src = tmp_path / "d.svm"
    with open(src, "w") as f:
        for row, label in zip(X.toarray(), y):
            f.write(f"{int(label):+d} " + " ".join(f"{j + 1}:{v:.6g}" for j in np.flatnonzero(row)
                                                 for v in [row[j]]) + "\n")
    store = tmp_path / "d.zarr"
    assert main(["convert", str(src), str(store), "--feature-order", "frequency",
                 "--n-features", str(X.shape[1])]) == 0
    assert "renumbered by frequency" in capsys.readouterr().out
    assert main(["info", str(store), "--json"]) == 0
    out = capsys.readouterr().out
    info = json.loads(out[out.index("{"):])
    assert info["feature_order"].startswith("frequency")
    model = tmp_path / "m.dsvm"
    assert main(["train", str(store), "--out", str(model), "--solver", "sgd", "--epochs", "2"]) == 0
    out_store, out_text = tmp_path / "p.zarr", tmp_path / "p.txt"
    assert main(["predict", str(model), str(store), "--out", str(out_store)]) == 0
    assert main(["predict", str(model), str(src), "--out", str(out_text)]) == 0
    capsys.readouterr()
    from_store = dsvm.read_predictions(out_store)
    from_text = np.loadtxt(out_text)
    assert np.array_equal(np.asarray(from_store, dtype=float), from_text)
    # the saved model is in the user's ids: it predicts raw arrays as the store
    clf = dsvm.load(model)
    assert np.array_equal(clf.predict(X), from_text)


def test_cli_bad_feature_order_exits_2_with_one_line(tmp_path, capsys, stores):
    X, y, given, _ = stores
    src = tmp_path / "d.npz"
    import scipy.sparse as sp

    sp.save_npz(src, X)
    assert main(["convert", str(src), str(tmp_path / "o.zarr"), "--feature-order", "hot"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--feature-order" in err[0] and "'hot'" in err[0]
    assert not (tmp_path / "o.zarr").exists()


def test_the_narrowed_store_plans_the_windows_of_the_store(stores):
    """A fit of the used features reads the store's rows as stored: its shuffle window (sized
    from the chunks' bytes) is the given store's, so that both fits see the rows in one
    order (a narrowing taken for a widening feature map once made the windows differ)."""
    from dsvm.training.inputs import source_of
    from dsvm.training.layout import in_space, space_for, stored_layout
    from dsvm.training.spec import FitSpec
    from dsvm.training.window import chunk_bytes

    _, _, given, renumbered = stores
    source, _ = source_of(renumbered, None, None, classify=True, chunk_rows=None)
    spec = FitSpec.from_params("SVMClassifier", "classification",
                               dsvm.SVMClassifier(solver="sgd").get_params(deep=False))
    narrowed = in_space(source, space_for(spec, source))
    assert narrowed.n_features < source.n_features == stored_layout(source).n_features
    assert chunk_bytes(narrowed) == chunk_bytes(source)
    plain, _ = source_of(given, None, None, classify=True, chunk_rows=None)
    assert chunk_bytes(narrowed) == chunk_bytes(plain)
