"""``dsvm train``'s estimator flags, read from the estimators' parameters.

Every parameter of :class:`~dsvm.SVMClassifier` and :class:`~dsvm.SVMRegressor` is a flag: its
default is the estimator's (``get_params()``), the values it takes are those its constraint
accepts (``_parameter_constraints``, :mod:`dsvm.estimators.params`), and its help text is in
:data:`HELP`. A parameter added to an estimator gets a flag with no edit here (``--its-name``,
its help the constraint's description), and tests/test_cli_flags.py fails until :data:`HELP`
says what it is for; a parameter the command does not take is in :data:`NOT_EXPOSED`, with why.

Reading the estimators imports numba and scikit-learn (seconds), so these flags are added to
the train parser the first time it parses or prints help (:class:`CommandParser`), not when
``dsvm info`` starts.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from dsvm._validation import AnyOf, InstanceOf, NoneOr, Options

_SAME = object()  # Flag.cli_default: the estimator's default


@dataclass(frozen=True)
class Flag:
    """How one estimator parameter appears on the command line. Only ``help`` is required;
    the rest is derived from the parameter unless given."""

    help: str
    flag: str | None = None  # default: --name-with-dashes (a switch on by default: --no-name)
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None  # default: the reading its constraint accepts
    dest: str | None = None  # default: the parameter's name
    const: Any = None  # a store_const flag's value (with cli_default: the value without it)
    cli_default: Any = _SAME  # a deliberate difference from Python's default (say why)
    # a comma list is a grid axis (kept as typed, read by dsvm.cli.train.axes_of): the flag
    # lists its choices in its help instead of refusing the list as not one of them
    listable: bool = False


def _class_weight(text: str) -> Any:
    """``balanced``, ``none`` or ``LABEL:WEIGHT,LABEL:WEIGHT`` (numeric labels, as datasets
    store them, or the names of text labels: ``fraud:10``); several of them, a grid of class
    weights, as a list: ``none,balanced,1:5`` (consecutive pairs make one dict; ``;``
    separates two dicts: ``1:5,-1:1;1:10``)."""
    items: list[Any] = []
    try:
        for group in text.split(";"):
            pairs: dict[Any, float] | None = None
            for item in group.split(","):
                if item.lower() in ("none", "balanced"):
                    items.append(None if item.lower() == "none" else "balanced")
                    pairs = None
                elif item:
                    label, weight = item.split(":")
                    if pairs is None:
                        pairs = {}
                        items.append(pairs)
                    pairs[_label(label)] = float(weight)
                    if not math.isfinite(pairs[_label(label)]) or pairs[_label(label)] < 0:
                        raise argparse.ArgumentTypeError(
                            f"the weight of {label} is {weight}: class weights are "
                            "non-negative numbers")
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'balanced', 'none' or LABEL:WEIGHT pairs such as '1:5,-1:1' (a comma "
            f"list of them: a grid, e.g. none,balanced), got {text!r}") from None
    if not items:
        raise argparse.ArgumentTypeError(f"expected 'balanced', 'none' or LABEL:WEIGHT pairs, "
                                         f"got {text!r}")
    return items[0] if len(items) == 1 else items


def _label(text: str) -> Any:
    """A class label as typed: a number (1, -1, 0.5), else the name of a text label."""
    try:
        return float(text)
    except ValueError:
        if not text.strip():
            raise
        return text.strip()


class ListableChoices(tuple):
    """A flag's choices, which also admit a comma list (a grid axis) as argparse checks the
    value: argparse tests ``value in choices``, and lists the choices in ``--help``."""

    def __contains__(self, value: object) -> bool:
        return (isinstance(value, str) and "," in value) or super().__contains__(value)


def _or_list(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse``, except that a comma list is kept as typed (a grid axis)."""
    def read(text: str) -> Any:
        return text if "," in text else parse(text)

    return read


def _alpha(text: str) -> float | str:
    """A float, or the text as typed: a comma list (a grid of alphas, read by
    :func:`alpha_grid`, which names the flag in its error) or a value to refuse in one line."""
    try:
        return float(text)
    except ValueError:
        return text


def alpha_grid(text: str, flag: str = "--alpha") -> list[float]:
    """``--alpha 1e-7,1e-6,1e-5``: the grid's alphas (positive floats), or a ValueError naming
    the flag and the value."""
    try:
        values = [float(item) for item in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(0.0 < v < float("inf") for v in values):
        raise ValueError(f"{flag}: expected a positive float or a comma-separated list of "
                         f"them (a grid, e.g. 1e-6,1e-5,1e-4), got {text!r}")
    if len(set(values)) < len(values):  # (a candidate trained twice)
        raise ValueError(f"{flag} {text}: {next(v for v in values if values.count(v) > 1):g} "
                         "is given twice")
    return values


# The help of every parameter the command takes, in the order --help lists them. A text that
# says its default in words uses argparse's %(default)s, so that the estimator's value shows.
HELP: dict[str, Flag] = {
    "solver": Flag("the training method; auto: cocoa for a linear hinge or squared-hinge "
                   "classifier, pegasos for a hinge classifier on a --kernel map, sgd "
                   "otherwise (see the README's table of solvers)"),
    "loss": Flag("the loss minimised; a comma list (hinge,logistic) trains each in one grid",
                 listable=True),
    "epsilon": Flag("regression: half-width of the epsilon-insensitive tube"),
    "penalty": Flag("l1/elasticnet: FOLOS prox steps (solver sgd); l1: LP-SVM (solver nesvm)"),
    "l1_ratio": Flag("--penalty elasticnet: the share of L1 in the penalty; a comma list "
                     "(0,0.5) trains each in one grid", metavar="R", listable=True),
    "mu": Flag("smoothing of the smoothed hinge (loss smoothed_hinge, solver nesvm)"),
    "rho": Flag("ASSET: average the iterates from step rho*N on"),
    "alpha": Flag("regularisation lambda = 1/(n C); a comma list (1e-6,1e-5,1e-4) trains "
                  "them all in one read of the data and saves the best on held-out rows "
                  "(see --alphas)", parse=_alpha),
    "mu0": Flag("nesvm: homotopy from mu0 down to mu (default: no homotopy)"),
    "max_epochs": Flag("passes over the data at most (NESVM: gradient passes)", flag="--epochs"),
    "tol": Flag("stop when the objective improved by less than this (relative) for "
                "--n-iter-no-change epochs (default %(default)s, as in Python; 'none': run all "
                "--epochs)"),
    "n_iter_no_change": Flag("epochs without improvement before --tol or --early-stopping "
                             "stops", metavar="N"),
    "early_stopping": Flag("hold out --validation-fraction of every chunk's rows (cocoa, bsgd: "
                           "of the chunks) and stop when their objective stops improving (by "
                           "more than --tol)"),
    "validation_fraction": Flag("share of the rows (cocoa, bsgd: chunks) held out by "
                                "--early-stopping",
                                metavar="F"),
    "class_weight": Flag("'balanced' or LABEL:WEIGHT pairs, e.g. '1:5,-1:1' or 'fraud:10' "
                         "(classification; "
                         "default: every class weighs 1); several (none,balanced; ';' between "
                         "two sets of pairs) train each in one grid", metavar="WEIGHTS",
                         parse=_class_weight),
    "batch_size": Flag("rows per stochastic step (Pegasos' mini-batch k)"),
    "n_streams": Flag("parallel streams per epoch (default: number of workers)",
                      flag="--streams", metavar="K"),
    "shuffle_window": Flag("chunks whose rows a stream interleaves, so that data stored sorted "
                           "(by label, by time) trains like shuffled data; 1: one chunk at a "
                           "time (default: 8, fewer above 128 MB of rows; `dsvm info` shows "
                           "it)", metavar="N"),
    "scale": Flag("scale the columns in the fit and fold the model back into raw units: "
                  "'auto' when a column (or a regression target) exceeds 16 in magnitude; "
                  "dense columns standardised, sparse ones divided by their largest value "
                  "(`dsvm info` on the model says what was done)"),
    "fit_intercept": Flag("fit no intercept (default: an unregularised intercept)",
                          flag="--no-intercept"),
    "average": Flag("predict with the last iterate (Pegasos' Algorithm 2 exactly)",
                    flag="--no-average"),
    # Python's default is None (a fresh seed per fit); a command run twice gives the same
    # model, so that a script's result can be reproduced and compared.
    "random_state": Flag("random_state: chunk order, dealing to streams and row order",
                         flag="--seed", cli_default=0),
    # Python is silent by default (scikit-learn's habit); a command shows its progress and
    # one line per epoch unless told not to.
    "verbose": Flag("no progress output", flag="--quiet", dest="verbosity", const=0,
                    cli_default=2),
    "kernel": Flag("Gaussian-kernel feature map applied to each chunk on the workers"),
    "n_components": Flag("size of the --kernel map", flag="--components"),
    "gamma": Flag("Gaussian kernel width exp(-gamma ||s-t||^2) (--kernel, --solver bsgd); "
                  "'scale': 1 / (n_features * variance of the features)"),
    "budget": Flag("--solver bsgd: support vectors kept"),
    "local_iters": Flag("--solver cocoa: passes of dual coordinate steps over each window of "
                        "chunks in memory per epoch", metavar="PASSES"),
    "rounds_per_epoch": Flag("--solver cocoa: CoCoA+ rounds per epoch", metavar="N"),
    "merge": Flag("--solver bsgd: merge coefficient by golden section search or lookup"),
    "checkpoint": Flag("write the training state here after every epoch (atomically; "
                       "default: none)", metavar="PATH_OR_URL"),
    "n_workers": Flag("worker processes of an embedded LocalCluster, also for a small dataset "
                      "(default: one per core, when the dataset is over 256 MB)",
                      flag="--workers", metavar="N"),
}

# Parameters the command does not take, and why.
NOT_EXPOSED: dict[str, str] = {
    "client": "--scheduler ADDRESS (and the --tls-* flags) give it",
    "warm_start": "it starts from a fitted estimator in memory; the command starts from "
                  "scratch or from --resume's checkpoint",
    "chunk_rows": "it cuts in-memory arrays; a dataset keeps the chunks `dsvm convert "
                  "--chunk-rows` gave it",
}


@dataclass(frozen=True)
class EstimatorParam:
    """One parameter as the estimators declare it: its default for each task that has it, and
    the constraints its value must meet (one per estimator)."""

    name: str
    defaults: dict[str, Any]
    constraints: tuple[Any, ...]

    def flag(self) -> Flag:
        return HELP.get(self.name) or Flag(self.constraints[0].describe())


def estimator_params(estimators: Sequence[tuple[str, type]]) -> list[EstimatorParam]:
    """The parameters of ``estimators`` ((task, class) pairs), those in :data:`HELP` first in
    its order, then the others (in get_params order: by name)."""
    found: dict[str, EstimatorParam] = {}
    for task, cls in estimators:
        constraints = cls._parameter_constraints  # type: ignore[attr-defined]
        for name, default in cls().get_params(deep=False).items():
            known = found.get(name)
            extra = (constraints[name],) if name in constraints else ()
            found[name] = EstimatorParam(
                name, {**(known.defaults if known else {}), task: default},
                (known.constraints if known else ()) + extra)
    order = {name: i for i, name in enumerate(dict.fromkeys([*HELP, *found]))}
    return sorted(found.values(), key=lambda p: order[p.name])


# The types a command line can write a value of.
_WRITABLE = (str, int, float, dict, os.PathLike)


def cli_values(constraint: Any) -> tuple[Any, ...] | None:
    """The values of ``constraint`` a command line can give, when there are finitely many
    (options, a bool, None); None when there are infinitely many (numbers, paths)."""
    if isinstance(constraint, Options):
        return tuple(constraint.values)
    if isinstance(constraint, NoneOr):
        inner = cli_values(constraint.inner)
        return None if inner is None else (*inner, None)
    if isinstance(constraint, InstanceOf):
        if constraint.kinds == (bool,):
            return (True, False)
        # text, numbers, paths, dicts: infinitely many; an object a command line cannot
        # write (a feature map, a numpy Generator): none
        return None if any(issubclass(k, _WRITABLE) for k in constraint.kinds) else ()
    if isinstance(constraint, AnyOf):
        parts = [cli_values(c) for c in constraint.inner]
        if any(p is None for p in parts):
            return None
        return tuple(dict.fromkeys(v for p in parts for v in p))  # type: ignore[union-attr]
    return None


_TRUE, _FALSE = ("true", "yes", "on"), ("false", "no", "off")


def _readings(text: str) -> list[Any]:
    """What ``text`` may mean, most specific first: None, a bool, a float, an int, the text."""
    readings: list[Any] = []
    if text.lower() == "none":
        readings.append(None)
    if text.lower() in _TRUE + _FALSE:
        readings.append(text.lower() in _TRUE)
    for kind in (float, int):
        try:
            readings.append(kind(text))
        except ValueError:
            pass
    return [*readings, text]


def value_parser(param: EstimatorParam) -> Callable[[str], Any]:
    """The ``type=`` of a flag: the first reading of its text that a constraint of ``param``
    accepts. A text none accepts is passed on as read (an int, a float or the text), so that
    the estimator's check rejects it naming the flag and the value, in one line (argparse's
    own error is a usage message and a second line)."""
    def parse(text: str) -> Any:
        readings = _readings(text)
        for value in readings:
            if any(c.is_satisfied_by(value) for c in param.constraints):
                return value
        numbers = [v for v in readings if type(v) in (int, float)]
        return numbers[-1] if numbers else text  # an int when it reads as one

    return parse


def _default_words(value: Any) -> str:
    return "none" if value is None else str(value)


def add_estimator_args(parser: argparse.ArgumentParser,
                       estimators: Sequence[tuple[str, type]],
                       title: str = "the estimator's parameters") -> None:
    """One flag per parameter of ``estimators`` ((task, class) pairs) on ``parser``, except
    those in :data:`NOT_EXPOSED`."""
    group = parser.add_argument_group(title)
    taken = {a.dest for a in parser._actions}
    for param in estimator_params(estimators):
        if param.name in NOT_EXPOSED:
            continue
        spec = param.flag()
        dest = spec.dest or param.name
        if dest in taken:  # a parameter named like one of the command's own flags
            raise RuntimeError(f"dsvm train: the estimator parameter {param.name!r} has the "
                               f"same dest as a flag of the command; give it a dest in HELP")
        names = _flag_names(param, spec)
        group.add_argument(*names, dest=dest, **_flag_kwargs(param, spec, names[0]))


def _flag_names(param: EstimatorParam, spec: Flag) -> list[str]:
    if spec.flag:
        return [spec.flag]
    dashed = param.name.replace("_", "-")
    on_by_default = _is_switch(param) and next(iter(param.defaults.values())) is True
    return [f"--no-{dashed}" if on_by_default else f"--{dashed}"]


def _is_switch(param: EstimatorParam) -> bool:
    """A bool parameter with one bool default: a flag with no value that turns it over."""
    defaults = set(map(repr, param.defaults.values()))
    return (all(cli_values(c) == (True, False) for c in param.constraints)
            and defaults in ({"True"}, {"False"}))


def _flag_kwargs(param: EstimatorParam, spec: Flag, flag: str) -> dict[str, Any]:
    defaults = list(param.defaults.values())
    if spec.const is not None:
        return {"action": "store_const", "const": spec.const, "default": spec.cli_default,
                "help": spec.help}
    if _is_switch(param):
        return {"action": "store_false" if defaults[0] else "store_true",
                "default": defaults[0], "help": spec.help}
    parse = spec.parse or value_parser(param)
    kwargs: dict[str, Any] = {"type": _or_list(parse) if spec.listable else parse,
                              "help": spec.help}
    values = _choices(param)
    if values and spec.parse is None and (spec.metavar is None or spec.listable):
        # --help lists them; a comma list passes argparse's check, and each of its values is
        # checked where the list is read (dsvm.cli.train.axes_of)
        kwargs["choices"] = ListableChoices(values) if spec.listable else values
    else:  # named after the flag (--epochs EPOCHS), not the parameter
        kwargs["metavar"] = spec.metavar or flag.lstrip("-").replace("-", "_").upper()
    if spec.cli_default is not _SAME:
        kwargs["default"] = spec.cli_default
    elif len(set(map(repr, defaults))) > 1:
        # the tasks' defaults differ (a classifier's solver is not a regressor's): the flag
        # passes only what was typed, and the estimator of the task keeps its own default
        kwargs["default"] = argparse.SUPPRESS
        kwargs["help"] = f"{spec.help} (default: " + ", ".join(
            f"{_default_words(v)} ({task})" for task, v in param.defaults.items()) + ")"
    else:
        kwargs["default"] = defaults[0]
        if defaults[0] is None and "default" not in spec.help:
            kwargs["help"] = f"{spec.help} (default: none)"
    return kwargs


def _choices(param: EstimatorParam) -> tuple[Any, ...] | None:
    """The values every estimator's constraint lists together, when they are finitely many."""
    parts = [cli_values(c) for c in param.constraints]
    if not parts or any(p is None for p in parts):
        return None
    return tuple(dict.fromkeys(v for p in parts for v in p)) or None  # type: ignore[union-attr]


def estimator_kwargs(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The parameters of ``cls`` that ``args`` holds (flags parsed by
    :func:`add_estimator_args`): those of the other task, and those not typed whose default
    differs by task, are left to the estimator."""
    given = vars(args)
    kwargs = {}
    for name in cls().get_params(deep=False):
        spec = HELP.get(name)
        dest = (spec.dest if spec else None) or name
        if name not in NOT_EXPOSED and dest in given:
            kwargs[name] = given[dest]
    return kwargs


def flag_of(name: str) -> str:
    """The flag a user types for the estimator parameter ``name``."""
    spec = HELP.get(name)
    return (spec.flag if spec else None) or "--" + name.replace("_", "-")


def missing_help(estimators: Sequence[tuple[str, type]]) -> list[str]:
    """Parameters of ``estimators`` with no help text and not in :data:`NOT_EXPOSED`: each
    has an automatic flag whose help is only its constraint (tests/test_cli_flags.py)."""
    return [p.name for p in estimator_params(estimators)
            if p.name not in HELP and p.name not in NOT_EXPOSED]


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser some of whose arguments are added the first time it parses or prints
    its help or usage: :func:`defer` them when adding them costs (the estimator flags import
    the estimators: seconds), so that the other commands and ``dsvm --help`` start at once.
    Its subcommands' parsers are CommandParsers too (argparse makes them of the parent's
    class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deferred: list[Callable[[argparse.ArgumentParser], None]] = []

    def defer(self, add: Callable[[argparse.ArgumentParser], None]) -> None:
        self._deferred.append(add)

    def add_deferred(self) -> None:
        while self._deferred:
            self._deferred.pop(0)(self)

    def parse_known_args(self, args: Iterable[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> Any:
        self.add_deferred()
        args = sys.argv[1:] if args is None else list(args)
        self._typed = args  # what error() looks through for a flag mistyped
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Iterable[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> Any:
        """argparse's, but arguments no parser took are reported by the subcommand's parser
        (``dsvm train: error: ...``, not ``dsvm: error: ...``), with the flag meant where one
        is close (:func:`closest_flag`)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self._subcommand(parsed)
            command.error(f"unrecognized arguments: {' '.join(extras)}"
                          f"{closest_flag(command, extras)}")
        return parsed

    def _subcommand(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest or "", None) or "")
                if isinstance(chosen, CommandParser):
                    return chosen._subcommand(parsed)
        return self

    def format_help(self) -> str:
        self.add_deferred()
        return super().format_help()

    def format_usage(self) -> str:
        self.add_deferred()
        return super().format_usage()

    def error(self, message: str) -> NoReturn:
        """A mistyped command line is one line on stderr, exit 2: argparse's message names
        the flag or value (``unrecognized arguments: --epoch 5``), and the usage it would
        print first (25 lines for ``dsvm train``) hid it; ``--help`` shows the usage. A
        mistyped choice gets the closest one (``--loss log_loss``: 'logistic'), a required
        flag missing the flag typed for it (``--output``: --out)."""
        hint = closest_choice(message)
        meant = flag_meant(self, getattr(self, "_typed", []))
        if message.startswith("the following arguments are required") and meant:
            hint = f"; {meant[0]} is not a flag of {self.prog}: did you mean {meant[1]}?"
        self.exit(2, f"{self.prog}: error: {message}{hint} (see {self.prog} --help)\n")


def closest_flag(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """"; did you mean --epochs?" for the first unknown flag of ``extras`` that is close to
    one of ``parser``'s flags (:func:`flag_meant`), else ""."""
    meant = flag_meant(parser, extras)
    return f"; did you mean {meant[1]}?" if meant else ""


def flag_meant(parser: argparse.ArgumentParser,
               extras: Sequence[str]) -> tuple[str, str] | None:
    """(typed, meant) for the first unknown flag of ``extras`` that is close to one of
    ``parser``'s flags, or that names its parameter as in Python (``--max-epochs`` or
    ``--max_epochs`` for ``max_epochs=``, whose flag is ``--epochs``), else None."""
    import difflib

    flags: dict[str, str] = {}  # what a user may type -> the flag it means
    for action in parser._actions:
        long = [o for o in action.option_strings if o.startswith("--")]
        if not long or action.help == argparse.SUPPRESS:
            continue
        for name in (*long, f"--{action.dest}", f"--{action.dest.replace('_', '-')}"):
            flags.setdefault(name, long[0])
    for typed in (e.split("=", 1)[0] for e in extras if e.startswith("--")):
        meant = flags.get(typed) or flags.get(typed.replace("_", "-"))
        if meant is None:
            close = difflib.get_close_matches(typed, list(flags), n=1, cutoff=0.75)
            meant = flags[close[0]] if close else None
        if meant is not None and meant != typed:
            return typed, meant
    return None


def closest_choice(message: str) -> str:
    """"; did you mean 'logistic'?" for argparse's "invalid choice: 'log_loss' (choose from
    'hinge', 'logistic', ...)", else "" (Python 3.12 argparse's ``suggest_on_error``)."""
    import difflib
    import re

    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if found is None:
        return ""
    choices = re.findall(r"'([^']*)'", found[2])
    by_case = {c.lower(): c for c in choices}  # ('SGD': 'sgd')
    close = difflib.get_close_matches(found[1].lower(), list(by_case), n=1, cutoff=0.5)
    return f"; did you mean {by_case[close[0]]!r}?" if close else ""
