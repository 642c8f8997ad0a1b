"""The codes of in-memory chunks are made once a fit (dsvm.solvers.chunk_codes): kept while a
chunk's labels are the same memory, made again from other memory, never kept for copies."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dsvm.data.blocks import DenseBlock
from dsvm.exceptions import DataFormatError
from dsvm.solvers.chunk_codes import ChunkCodes
from dsvm.solvers.passes import pass_over_window
from dsvm.solvers.pegasos import PegasosSolver
from dsvm.solvers.targets import targets_for

CLASSES = np.array([-1.0, 1.0])


def test_codes_of_a_view_are_kept_and_made_again_for_other_memory():
    y = np.where(np.arange(40) % 3 == 0, 1.0, -1.0)
    known = ChunkCodes()
    first = known.codes(2, y[10:20], CLASSES, "chunk 2")
    np.testing.assert_array_equal(first, targets_for(y[10:20], CLASSES, where="x"))
    assert known.codes(2, y[10:20], CLASSES, "chunk 2") is first  # a new view, same memory
    assert known.codes(2, y[10:20], CLASSES.copy(), "chunk 2") is first  # equal classes
    np.testing.assert_array_equal(known.codes(2, y[10:20], np.array([-1.0, 1.0, 2.0]), "c"),
                                  first)  # other classes: made again (here the same codes)
    assert known.codes(2, y[10:20], CLASSES, "chunk 2") is not first
    other = known.codes(2, y[20:30], CLASSES, "chunk 2")  # other memory: made from it
    np.testing.assert_array_equal(other, targets_for(y[20:30], CLASSES, where="x"))
    assert not np.array_equal(other, first)
    copy = -y[10:20].copy()  # a copy made for one read (base None): not kept
    np.testing.assert_array_equal(known.codes(5, copy, CLASSES, "c"), 1 - first)
    assert 5 not in known._kept
    regression = known.codes(3, y[:10], None, "chunk 3")  # classes None: the targets
    np.testing.assert_array_equal(regression, y[:10])
    assert pickle.loads(pickle.dumps(known))._kept == {}  # a copy sent elsewhere: empty


def test_an_unknown_label_is_named_whenever_the_codes_are_made():
    y = np.array([1.0, -1.0, 2.0])
    with pytest.raises(DataFormatError, match="chunk 4.*row 2 has label 2.0"):
        ChunkCodes().codes(4, y[:], CLASSES, "chunk 4")


def test_a_window_trains_the_same_with_kept_codes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5)).astype(np.float32)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=600) > 0, 1.0, -1.0)
    solver, known = PegasosSolver(alpha=1e-3), ChunkCodes()
    window = [(c, DenseBlock(X[c * 100:(c + 1) * 100], y[c * 100:(c + 1) * 100]))
              for c in (4, 0, 2)]
    states = []
    for kept in (None, known, known):  # made here; made and kept; the kept ones
        state = solver.init_state(5, 1, np.float32)
        pass_over_window(solver, state, window, classes=CLASSES, epoch=1, seed=3,
                         where=str, known=kept)
        states.append(state)
    assert sorted(known._kept) == [0, 2, 4]
    for state in states[1:]:
        np.testing.assert_array_equal(state.coef, states[0].coef)
        np.testing.assert_array_equal(state.avg_coef, states[0].avg_coef)


def test_an_in_memory_fit_makes_each_chunks_codes_once(monkeypatch):
    import dsvm
    import dsvm.solvers.chunk_codes as chunk_codes

    made = []

    def counted(y, classes, where):
        made.append(where)
        return targets_for(y, classes, where=where)

    monkeypatch.setattr(chunk_codes, "targets_for", counted)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 4)).astype(np.float32)
    y = np.where(X[:, 1] > 0, 1.0, -1.0)
    dsvm.SVMClassifier(solver="pegasos", max_epochs=4, tol=None, chunk_rows=250,
                       n_streams=2, random_state=0).fit(X, y)
    assert len(made) == 8  # 8 chunks, 4 epochs, 2 streams: each chunk's codes made once
