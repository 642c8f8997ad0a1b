"""``dsvm train``'s flags come from the estimators' parameters (#26 item 5): their defaults are
the estimators', every parameter has a flag and a help text or is listed as not exposed, and a
parameter added to an estimator gets a flag without an edit to the command."""

from __future__ import annotations

import argparse
import numbers
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import dsvm
from dsvm import SVMClassifier, SVMRegressor
from dsvm._validation import AnyOf, InstanceOf, Interval, Options, validate_params
from dsvm.cli import build_parser, main
from dsvm.cli.common import HelpFormatter
from dsvm.cli.estimator_flags import (
    HELP,
    NOT_EXPOSED,
    CommandParser,
    add_estimator_args,
    estimator_kwargs,
    missing_help,
)
from dsvm.cli.train import make_estimator

ESTIMATORS = [("classification", SVMClassifier), ("regression", SVMRegressor)]

# Where the command's default deliberately differs from Python's (the reasons are in HELP).
CLI_DEFAULTS = {"random_state": 0, "verbose": 2}


def _train_args(*flags: str) -> argparse.Namespace:
    return build_parser().parse_args(["train", "d.zarr", "--out", "m.dsvm", *flags])


def _train_parser() -> argparse.ArgumentParser:
    top = build_parser()
    action = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    parser = action.choices["train"]
    parser.format_help()  # adds the deferred estimator flags
    return parser


def test_every_estimator_parameter_has_help_or_a_reason_not_to_be_a_flag():
    """A parameter added to SVMClassifier or SVMRegressor (say ``scale``) gets a flag
    automatically; this fails until dsvm/cli/estimator_flags.py's HELP says what it is for
    (or NOT_EXPOSED says why the command does not take it)."""
    assert missing_help(ESTIMATORS) == []
    params = {*SVMClassifier().get_params(), *SVMRegressor().get_params()}
    assert not (set(HELP) | set(NOT_EXPOSED)) - params, "HELP names a parameter no estimator has"
    assert not set(HELP) & set(NOT_EXPOSED)


def test_every_exposed_parameter_is_a_flag_of_train():
    parser = _train_parser()
    dests = {a.dest: a for a in parser._actions}
    for name in {*SVMClassifier().get_params(), *SVMRegressor().get_params()} - set(NOT_EXPOSED):
        dest = HELP[name].dest or name
        assert dest in dests, f"no flag for the parameter {name!r}"
        assert dests[dest].help, name


@pytest.mark.parametrize("task, cls", ESTIMATORS)
def test_the_commands_defaults_are_the_estimators(task, cls):
    """With no flags, ``dsvm train`` builds the estimator Python's defaults build, except where
    the command deliberately differs (a fixed seed, progress shown)."""
    est = make_estimator(_train_args(), task, client=None)
    expected = {**cls().get_params(), **CLI_DEFAULTS}
    assert est.get_params() == expected


def test_a_default_that_differs_by_task_is_the_tasks():
    """--loss: the classifier's and the regressor's own defaults, both in the help (--solver
    is "auto" for both)."""
    args = _train_args()
    assert not hasattr(args, "loss")
    assert make_estimator(args, "classification", None).loss == SVMClassifier().loss
    assert make_estimator(args, "regression", None).loss == SVMRegressor().loss
    loss = next(a for a in _train_parser()._actions if a.dest == "loss")
    assert f"{SVMClassifier().loss} (classification)" in loss.help
    assert f"{SVMRegressor().loss} (regression)" in loss.help
    assert SVMClassifier().solver == SVMRegressor().solver == args.solver == "auto"
    solver = next(a for a in _train_parser()._actions if a.dest == "solver")
    # the values the estimators' constraints list, from both tasks
    assert set(solver.choices) >= {"pegasos", "cocoa", "nesvm", "sgd"}
    assert "epsilon_insensitive" in next(a for a in _train_parser()._actions
                                         if a.dest == "loss").choices


def test_typed_text_becomes_the_value_the_constraint_accepts():
    args = _train_args("--tol", "none", "--gamma", "2", "--epochs", "3", "--alpha", "1",
                       "--shuffle-window", "1", "--local-iters", "20", "--seed", "7",
                       "--class-weight", "1:5,-1:1", "--no-intercept", "--quiet")
    est = make_estimator(args, "classification", None)
    got = {k: (v, type(v)) for k, v in est.get_params().items()
           if k in ("tol", "gamma", "max_epochs", "alpha", "shuffle_window", "local_iters",
                    "random_state", "fit_intercept", "verbose")}
    assert got == {"tol": (None, type(None)), "gamma": (2.0, float), "max_epochs": (3, int),
                   "alpha": (1.0, float), "shuffle_window": (1, int),
                   "local_iters": (20.0, float), "random_state": (7, int),
                   "fit_intercept": (False, bool), "verbose": (0, int)}
    assert est.class_weight == {1.0: 5.0, -1.0: 1.0}
    assert make_estimator(_train_args("--gamma", "scale"), "regression", None).gamma == "scale"
    # a flag of the other task is left out: the regressor has no mu, the classifier no epsilon
    both = _train_args("--mu", "0.1", "--epsilon", "0.5")
    assert "mu" not in make_estimator(both, "regression", None).get_params()
    assert "epsilon" not in make_estimator(both, "classification", None).get_params()


@pytest.mark.parametrize("flag, value, words", [("--alpha", "abc", "--alpha must be a float"),
                                                ("--epochs", "0", "Got 0 instead"),
                                                ("--tol", "-1", "--tol must be"),
                                                ("--gamma", "inf", "--gamma must be a finite")])
def test_a_value_the_estimator_refuses_is_one_line_naming_the_flag(tmp_path, capsys, flag,
                                                                    value, words):
    X = np.random.default_rng(0).normal(size=(40, 3))
    ds = dsvm.write_arrays(tmp_path / "d.zarr", X, np.where(X[:, 0] > 0, 1, -1))
    capsys.readouterr()
    assert main(["train", str(ds.url), "--out", str(tmp_path / "m.dsvm"), flag, value]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and value in err, err
    assert not (tmp_path / "m.dsvm").exists()


@pytest.mark.parametrize("flags, said", [
    (["--alphas", "auto", "--alpha", "1e-5,1e-4"],
     "--alphas auto and --alpha 1e-5,1e-4 both give the grid's alphas: give one of them"),
    (["--alpha", "1e-5,1e-5"], "--alpha 1e-5,1e-5: 1e-05 is given twice"),
    (["--alphas", "1e-4,1e-5,1e-4"], "--alphas 1e-4,1e-5,1e-4: 0.0001 is given twice")])
def test_a_grid_given_twice_or_with_a_candidate_twice_is_named(tmp_path, capsys, flags, said):
    """The --alpha list beside --alphas auto was dropped without a word (the auto grid of 8
    trained), and a candidate given twice was trained twice."""
    data = str(dsvm.write_synthetic(tmp_path / "d.zarr", 200, 3, chunk_rows=100).url)
    assert main(["train", data, "--out", str(tmp_path / "m.dsvm"), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err, err


def test_a_negative_class_weight_is_refused_by_its_flag(tmp_path, capsys):
    """``--class-weight bag:-1`` trained and saved a model (exit 0)."""
    with pytest.raises(SystemExit) as code:
        main(["train", str(tmp_path / "d.zarr"), "--out", str(tmp_path / "m.dsvm"),
              "--class-weight", "bag:-1"])
    err = capsys.readouterr().err.strip()
    assert code.value.code == 2 and len(err.splitlines()) == 1, err
    assert "argument --class-weight: the weight of bag is -1: class weights are " \
           "non-negative numbers" in err


def test_a_mistyped_choice_gets_the_closest_one(tmp_path, capsys):
    """argparse's "invalid choice" (Python 3.11 has no suggest_on_error): scikit-learn's
    ``log_loss`` is ``logistic`` here; a choice nothing is close to gets no guess."""
    args = ["train", str(tmp_path / "d.zarr"), "--out", str(tmp_path / "m.dsvm")]
    with pytest.raises(SystemExit) as code:
        main([*args, "--loss", "log_loss"])
    err = capsys.readouterr().err.strip()
    assert code.value.code == 2 and len(err.splitlines()) == 1, err
    assert "invalid choice: 'log_loss'" in err and "did you mean 'logistic'?" in err, err
    with pytest.raises(SystemExit):
        main([*args, "--penalty", "zz"])
    assert "did you mean" not in capsys.readouterr().err
    with pytest.raises(SystemExit):  # scikit-learn's names in capitals, as papers write them
        main([*args, "--solver", "SGD"])
    assert "did you mean 'sgd'?" in capsys.readouterr().err


def test_a_required_flag_typed_otherwise_is_named_with_what_was_typed(tmp_path, capsys):
    """``--output`` for ``--out``: argparse reports the missing flag first and never gets to
    the unknown one, so the line said only "required: --out"."""
    with pytest.raises(SystemExit) as code:
        main(["train", str(tmp_path / "d.zarr"), "--output", str(tmp_path / "m.dsvm")])
    err = capsys.readouterr().err.strip()
    assert code.value.code == 2 and len(err.splitlines()) == 1, err
    assert "required: --out; --output is not a flag of dsvm train: did you mean --out?" in err
    with pytest.raises(SystemExit):
        main(["train", str(tmp_path / "d.zarr")])
    assert "did you mean" not in capsys.readouterr().err


def test_flags_that_contradict_or_say_nothing_are_named(tmp_path, capsys):
    """``--workers 2 --scheduler ADDR`` trained on the scheduler's cluster without a word of
    --workers; ``--scheduler ""`` trained in this process; ``dsvm info`` of a missing model
    file said "no dsvm dataset at"."""
    data = str(dsvm.write_synthetic(tmp_path / "d.zarr", 200, 3, chunk_rows=100).url)
    for flags, said in [
            (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
             "--workers 2 starts dsvm's own LocalCluster, and --scheduler tcp://127.0.0.1:1 "
             "names a running one: give one of them"),
            (["--scheduler", ""], "--scheduler is empty: give the scheduler's address")]:
        assert main(["train", data, "--out", str(tmp_path / "m.dsvm"), *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err, err
    assert not (tmp_path / "m.dsvm").exists()
    assert main(["info", str(tmp_path / "m.dsvm")]) == 2
    assert "m.dsvm does not exist (dsvm info reads a dataset, a model file or a checkpoint)" \
        in capsys.readouterr().err


@pytest.mark.parametrize(("typed", "meant"), [
    ("--max-epochs", "--epochs"),  # the parameter's name, as in Python
    ("--max_epochs", "--epochs"),
    ("--random-state", "--seed"),
    ("--n-streams", "--streams"),
    ("--alpah", "--alpha"),  # a typo
    ("--foo", None),
])
def test_an_unknown_flag_is_named_by_its_command_with_the_flag_meant(tmp_path, capsys, typed,
                                                                     meant):
    """An argument no parser takes is reported by the command typed (argparse's top-level
    parser said ``dsvm: error: ...`` and pointed to ``dsvm --help``), one line, exit 2, with
    the flag meant when a user typed the Python parameter (``max_epochs=`` is ``--epochs``)
    or a near miss; nothing is trained."""
    with pytest.raises(SystemExit) as code:
        main(["train", str(tmp_path / "d.zarr"), "--out", str(tmp_path / "m.dsvm"), typed, "3"])
    err = capsys.readouterr().err.strip()
    assert code.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"dsvm train: error: unrecognized arguments: {typed} 3"), err
    assert err.endswith("(see dsvm train --help)"), err
    assert (f"did you mean {meant}?" in err) if meant else ("did you mean" not in err), err
    assert not (tmp_path / "m.dsvm").exists()


def test_an_unknown_flag_of_another_command_names_that_command(tmp_path, capsys):
    with pytest.raises(SystemExit) as code:
        main(["info", str(tmp_path / "m.dsvm"), "--jsn"])
    err = capsys.readouterr().err.strip()
    assert code.value.code == 2
    assert err == ("dsvm info: error: unrecognized arguments: --jsn; did you mean --json? "
                   "(see dsvm info --help)"), err


class _WithScale(BaseEstimator):
    """An estimator with parameters the table does not know: ``rescale`` ("auto" or a bool, shaped
    as SVMClassifier's ``scale``), a switch on by default, and a count
    that may be None. A real scikit-learn estimator, read by the same code as SVMClassifier."""

    _parameter_constraints = {
        "alpha": Interval(numbers.Real, 0.0, None, "neither"),
        "rescale": AnyOf((Options(("auto",)), InstanceOf((bool,), "a bool")),
                       "'auto' or a bool"),
        "shrink": InstanceOf((bool,), "a bool"),
        "n_rounds": AnyOf((Options((None,)), Interval(numbers.Integral, 1, None, "left")),
                          "an int in the range [1, inf) or None"),
    }

    def __init__(self, *, alpha: float = 1e-4, rescale: object = "auto", shrink: bool = True,
                 n_rounds: int | None = None) -> None:
        self.alpha = alpha
        self.rescale = rescale
        self.shrink = shrink
        self.n_rounds = n_rounds


def test_a_new_parameter_gets_a_flag_and_the_help_check_names_it():
    parser = CommandParser(prog="dsvm train", formatter_class=HelpFormatter)
    parser.defer(lambda p: add_estimator_args(p, [("classification", _WithScale)]))
    flags = {a.dest: a for a in parser._actions}
    assert "rescale" not in flags  # deferred: added when the parser is used
    assert parser.parse_args([]).rescale == "auto"
    flags = {a.dest: a for a in parser._actions}
    assert flags["rescale"].option_strings == ["--rescale"]
    assert flags["shrink"].option_strings == ["--no-shrink"]
    assert flags["n_rounds"].option_strings == ["--n-rounds"]
    for argv, expected in [([], {"rescale": "auto", "shrink": True, "n_rounds": None}),
                           (["--rescale", "false", "--no-shrink", "--n-rounds", "4"],
                            {"rescale": False, "shrink": False, "n_rounds": 4}),
                           (["--rescale", "true"], {"rescale": True}), (["--rescale", "auto"], {})]:
        args = parser.parse_args(argv)
        params = {**_WithScale().get_params(), **estimator_kwargs(args, _WithScale)}
        assert params == {**_WithScale().get_params(), **expected}, argv
        validate_params("_WithScale", params, _WithScale._parameter_constraints)
    text = parser.format_help()
    assert "(default: auto)" in text and "'auto' or a bool" in text and "(default: none)" in text
    # every argument a default: the same rule as tests/test_cli_first_contact.py's walk
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.option_strings and action.nargs != 0 and action.dest != "help":
            assert "default" in formatter._expand_help(action), action.dest
    # the help check fails on them until the table says what they are for
    missing = sorted(missing_help([("classification", _WithScale)]))
    assert missing == ["n_rounds", "rescale", "shrink"]


def test_the_estimator_flags_are_read_only_by_the_commands_that_use_them():
    """Reading the estimators imports numba and scikit-learn (seconds): `dsvm info`,
    `dsvm convert` and `dsvm --help` do not pay for it, `dsvm train` does."""
    code = ("import sys; from dsvm.cli import build_parser; p = build_parser(); "
            "p.parse_args(sys.argv[1:]); print('dsvm.estimators' in sys.modules)")
    for argv, imported in ((["info", "x.zarr"], "False"),
                           (["train", "x.zarr", "--out", "m"], "True")):
        proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, timeout=120)
        assert proc.stdout.strip() == imported, (argv, proc.stderr[-2000:])
