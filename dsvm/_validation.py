"""Declarative parameter constraints with scikit-learn's message template.

scikit-learn's own ``_param_validation`` is private, so dsvm carries the small part it needs:
``Interval`` and ``Options`` constraints, checked in ``fit`` by :func:`validate_params`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Protocol


class Constraint(Protocol):
    def is_satisfied_by(self, value: Any) -> bool: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class Interval:
    """A real or integral interval; ``closed`` is one of "left", "right", "both", "neither"."""

    kind: type  # numbers.Integral or numbers.Real
    left: float | None
    right: float | None
    closed: str = "both"

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        x: Any = value  # a number, whatever isinstance narrowed it to
        if self.kind is numbers.Real and not math.isfinite(float(x)) and not (
            self.right is None and x == math.inf
        ):
            return False
        lo_ok = self.left is None or (
            x >= self.left if self.closed in ("left", "both") else x > self.left
        )
        hi_ok = self.right is None or (
            x <= self.right if self.closed in ("right", "both") else x < self.right
        )
        return bool(lo_ok and hi_ok)

    def describe(self) -> str:
        name = "an int" if self.kind is numbers.Integral else "a float"
        lb = "[" if self.closed in ("left", "both") and self.left is not None else "("
        rb = "]" if self.closed in ("right", "both") and self.right is not None else ")"
        lo = "-inf" if self.left is None else repr(self.left)
        hi = "inf" if self.right is None else repr(self.right)
        return f"{name} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values."""

    values: tuple[Any, ...]

    def is_satisfied_by(self, value: Any) -> bool:
        # (the type first: an array compared with a str is an array, not a bool)
        return any(type(value) is type(v) and value == v for v in self.values)

    def describe(self) -> str:
        return "a str among " + "{" + ", ".join(repr(v) for v in sorted(self.values)) + "}"


@dataclass(frozen=True)
class NoneOr:
    """``None`` or whatever ``inner`` accepts."""

    inner: Constraint

    def is_satisfied_by(self, value: Any) -> bool:
        return value is None or self.inner.is_satisfied_by(value)

    def describe(self) -> str:
        return f"{self.inner.describe()} or None"


@dataclass(frozen=True)
class AnyOf:
    """Any of several constraints (e.g. an int or None, a Client or an address)."""

    inner: tuple[Constraint, ...]
    text: str

    def is_satisfied_by(self, value: Any) -> bool:
        return any(c.is_satisfied_by(value) for c in self.inner)

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class InstanceOf:
    kinds: tuple[type, ...]
    text: str

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.kinds) and not (
            isinstance(value, bool) and bool not in self.kinds
        )

    def describe(self) -> str:
        return self.text


def validate_params(owner: str, params: dict[str, Any], constraints: dict[str, Constraint]) -> None:
    """Raise ``ValueError`` (``TypeError`` for wrong types) naming the first bad parameter.

    The message follows scikit-learn: "The 'alpha' parameter of SVMClassifier must be a float
    in the range (0.0, inf). Got -1 instead."
    """
    for name, constraint in constraints.items():
        value = params[name]
        if not constraint.is_satisfied_by(value):
            hint = _FROM_SCIKIT_LEARN.get((name, value)) if isinstance(value, str) else None
            raise ValueError(
                f"The {name!r} parameter of {owner} must be {constraint.describe()}. "
                f"Got {value!r} instead.{hint or _did_you_mean(value, constraint)}"
            )


# What a scikit-learn user types that is spelt otherwise here (SVC's kernels): the way to it.
_GAUSSIAN = (" dsvm's kernel is the Gaussian (RBF) one, exp(-gamma ||x - x'||^2), through "
             "kernel='rff' (random Fourier features) or kernel='nystroem' (a Nystroem map), "
             "or solver='bsgd' (budgeted kernel SGD), each with gamma=.")
_FROM_SCIKIT_LEARN: dict[tuple[str, str], str] = {
    ("kernel", "rbf"): _GAUSSIAN,
    ("kernel", "poly"): " Polynomial kernels are not provided;" + _GAUSSIAN,
    ("kernel", "sigmoid"): " Sigmoid kernels are not provided;" + _GAUSSIAN,
}


def _did_you_mean(value: Any, constraint: Constraint) -> str:
    """" Did you mean 'logistic'?" for a misspelt option (scikit-learn's ``loss="log_loss"``
    is ``"logistic"`` here), else ""."""
    import difflib

    options = getattr(constraint, "values", None)
    if not isinstance(value, str) or not options:
        return ""
    close = difflib.get_close_matches(value, [v for v in options if isinstance(v, str)], n=1,
                                      cutoff=0.5)
    return f" Did you mean {close[0]!r}?" if close else ""
