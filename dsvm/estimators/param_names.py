"""What to say for a parameter an estimator does not take: a user arriving from scikit-learn's
LinearSVC or SGDClassifier types ``C=``, ``max_iter=`` or ``n_jobs=``, and Python's own
"unexpected keyword argument 'C'" says nothing of what dsvm calls it."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterable

# scikit-learn's (and LIBLINEAR's, Spark's) names, and what dsvm takes instead
OTHER_NAMES = {
    "C": "dsvm's regularisation is alpha, per sample as SGDClassifier's: alpha = 1 / (C * "
         "n_samples) for LinearSVC's or LinearSVR's C (C=1 on 100,000 rows: alpha=1e-5)",
    "max_iter": "dsvm's is max_epochs, the passes over the data",
    "n_jobs": "dsvm's are n_workers (local worker processes) or client= (a Dask cluster)",
    "dual": "solver='cocoa' is the dual (LIBLINEAR's coordinate ascent, distributed); 'sgd', "
            "'pegasos', 'asset' and 'nesvm' the primal",
    "seed": "dsvm's is random_state",
    "random_seed": "dsvm's is random_state",
    "reg_param": "dsvm's regularisation is alpha (per sample)",
    "regParam": "dsvm's regularisation is alpha (per sample)",
    "maxIter": "dsvm's is max_epochs, the passes over the data",
}


def unknown_parameter_error(cls_name: str, given: Iterable[str], accepted: Iterable[str]
                            ) -> TypeError | None:
    """The TypeError for the first of ``given`` not in ``accepted`` (None if all are): its
    counterpart in dsvm, or the closest of the accepted names."""
    accepted = [name for name in accepted if name != "self"]
    unknown = [name for name in given if name not in accepted]
    if not unknown:
        return None
    name = unknown[0]
    if name in OTHER_NAMES:
        hint = OTHER_NAMES[name]
    else:
        close = difflib.get_close_matches(name, accepted, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else \
            f"its parameters are {', '.join(sorted(accepted))}"
    end = "" if hint.endswith("?") else "."
    return TypeError(f"{cls_name} has no parameter {name!r}: {hint}{end}")


def accepted_parameters(cls: type) -> list[str]:
    """The keyword parameters of ``cls.__init__`` (as scikit-learn's get_params reads them)."""
    return list(inspect.signature(cls.__init__).parameters)  # type: ignore[misc]
