"""No path destroys an input (issue #25): an output is never one of the inputs, and
``--overwrite`` / ``overwrite=True`` replaces only a thing of the same kind, decided for every
command and API by one helper (dsvm.data.location.kind_at / check_replaceable)."""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm.cli import main
from dsvm.data import location
from dsvm.data.location import check_replaceable, kind_at
from dsvm.data.shuffle import shuffle_dataset

NOTES = "my notes: do not lose them\n"


def _one_line(capsys, argv, *needles):
    """Run ``dsvm ARGV`` here: exit 2 and one line on stderr holding ``needles``."""
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.fixture
def things(tmp_path, blobs):
    """One thing of each kind dsvm writes, plus a user's text file, in ``tmp_path``."""
    X, y = blobs
    ds = dsvm.write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=200)
    clf = dsvm.SVMClassifier(max_epochs=2, tol=None, random_state=0,
                             checkpoint=str(tmp_path / "run.ckpt")).fit(X, y)
    clf.save(tmp_path / "m.dsvm")
    clf.write_predictions(ds, tmp_path / "p.zarr")  # no client: in this process
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES)
    return ds, clf, notes


def test_kind_at_tells_every_kind_apart(things, tmp_path):
    ds, clf, notes = things
    np.save(tmp_path / "p.npy", np.zeros(3))
    np.savetxt(tmp_path / "p.csv", np.array([1.0, -1.0]), delimiter=",")
    (tmp_path / "empty").mkdir()
    (tmp_path / "svm.txt").write_text("+1 1:0.5 3:1\n-1 2:1\n")
    expect = {"d.zarr": location.DATASET, "p.zarr": location.PREDICTIONS,
              "m.dsvm": location.MODEL, "run.ckpt": location.CHECKPOINT,
              "p.npy": location.NPY, "p.csv": location.PREDICTIONS_TEXT,
              "notes.txt": location.FILE, "svm.txt": location.FILE,
              "empty": location.EMPTY_FOLDER, "missing": location.NOTHING}
    assert {name: kind_at(tmp_path / name) for name in expect} == expect
    # a kind replaces only itself, even with overwrite=True
    for path, kind in [("d.zarr", location.PREDICTIONS), ("p.zarr", location.DATASET),
                       ("m.dsvm", location.CHECKPOINT), ("run.ckpt", location.MODEL),
                       ("notes.txt", location.PREDICTIONS_TEXT)]:
        with pytest.raises(FileExistsError, match="overwrite=True replaces only"):
            check_replaceable(tmp_path / path, kind, overwrite=True)
    check_replaceable(tmp_path / "m.dsvm", location.MODEL, overwrite=True)


def test_api_writes_never_replace_an_input_or_another_kind(things, tmp_path):
    ds, clf, notes = things
    # the issue: write_predictions deleted the dataset it was asked to predict
    with pytest.raises(FileExistsError, match="is a dsvm dataset, not a dsvm prediction"):
        clf.write_predictions(ds, ds.url, overwrite=True)
    with pytest.raises(ValueError, match="is the input"):
        shuffle_dataset(ds, ds.url, overwrite=True)
    with pytest.raises(FileExistsError, match="none of dsvm's outputs"):
        dsvm.convert(notes, notes, overwrite=True)
    with pytest.raises(FileExistsError, match="not a dsvm model file"):
        clf.save(notes)
    with pytest.raises(FileExistsError, match="not a dsvm checkpoint"):
        dsvm.SVMClassifier(max_epochs=1, checkpoint=str(notes)).fit(*_tiny())
    assert notes.read_text() == NOTES and dsvm.open_dataset(ds.url).n_samples == 600
    clf.save(tmp_path / "m.dsvm")  # a model replaces a model


def _tiny():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
    return X, np.array([1, -1, 1, -1])


def test_commands_never_replace_an_input_or_another_kind(things, tmp_path, capsys):
    ds, clf, notes = things
    svm = tmp_path / "small.txt"
    svm.write_text("+1 1:0.5 3:1\n-1 2:1\n")
    before = svm.read_bytes()
    # the issue: this replaced the svmlight input by a zarr folder, exit 0
    _one_line(capsys, ["convert", svm, svm, "--overwrite"], "dst", "is the input")
    # without --overwrite the error does not steer the user into --overwrite
    err = _one_line(capsys, ["convert", svm, svm], "is the input")
    assert "pass --overwrite" not in err
    _one_line(capsys, ["convert", svm, notes, "--overwrite"], "dst", "none of dsvm's outputs")
    _one_line(capsys, ["convert", svm, tmp_path, "--overwrite"], "dst", "holds the input")
    # the issue: a checkpoint replaced an unrelated text file
    _one_line(capsys, ["train", ds.url, "--out", tmp_path / "n.dsvm", "--checkpoint", notes,
                       "--overwrite"], "--checkpoint", "not a dsvm checkpoint")
    _one_line(capsys, ["train", ds.url, "--out", notes, "--overwrite"], "--out",
              "not a dsvm model file", "--overwrite replaces only")
    prose = tmp_path / "notes.csv"
    prose.write_text(NOTES)
    _one_line(capsys, ["predict", tmp_path / "m.dsvm", ds.url, "--out", prose, "--overwrite"],
              "--out", "none of dsvm's outputs")
    _one_line(capsys, ["predict", tmp_path / "m.dsvm", ds.url, "--out", tmp_path / "d.zarr",
                       "--overwrite"], "--out", "is the input")
    (tmp_path / "a9a.xz").write_text(NOTES)
    _one_line(capsys, ["demo", "--data", tmp_path, "--overwrite"], "--data",
              "not an xz-compressed file")
    assert svm.read_bytes() == before and notes.read_text() == prose.read_text() == NOTES
    assert (tmp_path / "a9a.xz").read_text() == NOTES
    assert dsvm.open_dataset(ds.url).n_samples == 600


def test_nothing_is_written_inside_a_dataset_or_a_prediction_store(things, tmp_path, capsys):
    """A dataset converted to d.zarr/sub, or predictions to p.zarr/more.npy, went into the
    store beside its arrays (exit 0): a later overwrite of the store took it along, and the
    store held what it had not written. Refused, as an input is; a path under a file is named
    as such, not as a folder that "does not exist"."""
    ds, clf, notes = things
    svm = tmp_path / "small.txt"
    svm.write_text("+1 1:0.5 3:1\n-1 2:1\n")
    _one_line(capsys, ["convert", svm, tmp_path / "d.zarr" / "sub", "--overwrite"], "dst",
              "lies inside a dsvm dataset", str(tmp_path / "d.zarr"))
    _one_line(capsys, ["predict", tmp_path / "m.dsvm", ds.url, "--out",
                       tmp_path / "p.zarr" / "more.npy"], "--out",
              "lies inside a dsvm prediction store")
    _one_line(capsys, ["train", ds.url, "--out", tmp_path / "p.zarr" / "m.dsvm"],
              "--out", "lies inside a dsvm prediction store")
    with pytest.raises(ValueError, match="lies inside a dsvm dataset"):
        dsvm.convert(svm, tmp_path / "d.zarr" / "sub")
    _one_line(capsys, ["convert", svm, notes / "d.zarr"], "dst", f"{notes} is a file, not a "
              "folder")
    assert not (tmp_path / "d.zarr" / "sub").exists()
    assert not (tmp_path / "p.zarr" / "more.npy").exists()
    assert dsvm.open_dataset(ds.url).n_samples == 600
    # beside a store, not in it: written
    assert main(["convert", str(svm), str(tmp_path / "d2.zarr")]) == 0


def test_overwrite_replaces_predictions_of_the_same_format(things, tmp_path, capsys):
    ds, clf, notes = things
    model = tmp_path / "m.dsvm"
    for out in ("labels.csv", "labels.npy", "labels.parquet", "labels.zarr"):
        assert main(["predict", str(model), ds.url, "--out", str(tmp_path / out)]) == 0
        assert main(["predict", str(model), ds.url, "--out", str(tmp_path / out),
                     "--overwrite"]) == 0
    # one format's predictions are not another's: .csv does not replace .parquet's file
    (tmp_path / "labels.parquet").rename(tmp_path / "other.csv")
    _one_line(capsys, ["predict", model, ds.url, "--out", tmp_path / "other.csv",
                       "--overwrite"], "Parquet file of predictions")


def test_cocoa_keeps_a_users_folder_named_like_its_duals(tmp_path, blobs):
    X, y = blobs
    ckpt = tmp_path / "run.ckpt"
    clf = dsvm.SVMClassifier(solver="cocoa", max_epochs=1, tol=None, checkpoint=str(ckpt))
    clf.fit(X, y)
    duals = tmp_path / "run.ckpt.duals"
    assert duals.is_dir()  # a fresh fit replaces this store of an earlier fit, but not ...
    (duals / "thesis.tex").write_text(NOTES)  # ... a folder with anything else in it
    with pytest.raises(FileExistsError, match="is not a dsvm dual store"):
        clf.fit(X, y)
    assert (duals / "thesis.tex").read_text() == NOTES


def test_a_fit_refuses_a_checkpoint_path_before_it_trains(tmp_path, monkeypatch):
    """checkpoint=notes.txt is refused before the first epoch (it was refused at the first
    checkpoint write, after an epoch's work), for every solver."""
    from dsvm.training import trainer

    def no_training(*args, **kwargs):
        raise AssertionError("training started")

    for name in ("fit_stochastic", "fit_cocoa"):
        monkeypatch.setattr(trainer, name, no_training)
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES)
    for solver in ("pegasos", "cocoa"):
        with pytest.raises(FileExistsError, match="not a dsvm checkpoint"):
            dsvm.SVMClassifier(solver=solver, checkpoint=str(notes)).fit(*_tiny())
    assert notes.read_text() == NOTES
