"""The feature space of a fit, and the user's ids outside it (see dsvm.data.feature_layout).

A dataset written with ``feature_order="frequency"`` stores its sparse features renumbered by
descending count. A fit trains in the ids of its rows as stored: that is where the speed is
(the hot weights sit together), and the state, its checkpoints and a ``partial_fit`` or warm
start that continues it stay in that *space* (``FittedModel.layout``; None: the user's ids).
A fit from scratch (no starting model) keeps only the features the store's rows use
(``FeatureLayout.compact``): the others are last in a frequency layout and keep weight 0, so
its state is that much smaller (a 2^22 hashing space over a sample uses a few percent of it)
with the same model. Such a fit continues (warm start, ``partial_fit``) on that store only:
other rows may have features outside its state, which is refused with the reason.

Everything the user sees is in the user's ids:

- the published ``coef`` is un-permuted when the fit returns (:func:`to_user_ids`, after the
  scaling is unfolded, whose column scales are in stored ids like the rows);
- rows in another layout than the fit's space (a validation set, raw arrays given to a
  ``partial_fit`` of a fit on a store, another store) are seen through
  :class:`~dsvm.data.feature_layout.Relabel` (:func:`in_space`);
- predicting and evaluating a renumbered store permutes the model into its ids once
  (:func:`model_for`), the rows are read as stored;
- kernel maps (RFF, Nystroem) and BSGD fit their maps and keep their support vectors on rows
  in the user's ids, so that the fitted map applies to raw rows: their fits see a renumbered
  store through the relabelling (handled, at the cost of a renumbering of every chunk read;
  their epochs are dominated by the map anyway).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dsvm.data.feature_layout import FeatureLayout, Relabel, relabel
from dsvm.data.sources import Source, map_source
from dsvm.data.stats import FeatureStats
from dsvm.training.record import FittedModel
from dsvm.training.spec import FitSpec


def stored_layout(source: Source) -> FeatureLayout | None:
    """The layout the rows of ``source`` are stored in (None: the user's ids)."""
    dataset = getattr(source, "dataset", None)
    if dataset is None or getattr(source, "fmap", None) is not None:
        return None  # not a store, or already seen through a map
    return dataset.feature_layout(counts=False)  # (the order, and how many are used)


def space_for(spec: FitSpec, source: Source, *, fresh: bool = True) -> FeatureLayout | None:
    """The space a new fit trains in: the rows' own (``fresh``: a fit from zero, over the
    features they use only), except for kernel maps and BSGD, whose maps and support vectors
    must apply to rows in the user's ids."""
    kernel = spec.params.get("kernel", "linear")
    if spec.solver == "bsgd" or not (isinstance(kernel, str) and kernel == "linear"):
        return None
    layout = stored_layout(source)
    if layout is None:
        return None
    # (the record keeps the map, not the counts: 12 B a feature less in every pickled model)
    return dataclasses.replace(layout.compact() if fresh else layout, counts=None)


def check_continuable(space: FeatureLayout | None, source: Source, what: str) -> None:
    """A fit of a store's used features continues on rows of that store only."""
    if space is None or space.state_width >= space.n_features:
        return
    layout = stored_layout(source)
    if layout is not None and layout.same_as(space) and layout.n_used <= space.state_width:
        return
    raise ValueError(
        f"This model was trained on the {space.state_width:,} features (of "
        f"{space.n_features:,}) that the rows of its renumbered dataset use "
        f"(feature_order='frequency'); {what} on {source.describe()}, whose rows may have "
        "others, cannot continue it. Continue on that dataset, or fit afresh.")


def stats_in_space(source: Source) -> FeatureStats | None:
    """The column statistics a store's writer kept, for rows seen through ``in_space`` (None:
    not derivable from them; the scaling stage then measures them)."""
    dataset = getattr(source, "dataset", None)
    fmap = getattr(source, "fmap", None)
    if dataset is None:
        return None
    if fmap is None:
        return dataset.feature_stats()
    if isinstance(fmap, Relabel) and getattr(getattr(source, "inner", None), "fmap", None) is None:
        # (a compact space reads only its used columns' statistics)
        width = fmap.width if fmap.table is None else None
        return fmap.stats(dataset.feature_stats(width=width))
    return None


def in_space(source: Source, space: FeatureLayout | None) -> Source:
    """``source`` with its rows in the ids of ``space`` (as it is where they already are)."""
    return map_source(source, relabel(stored_layout(source), space))


def to_user_ids(record: FittedModel) -> FittedModel:
    """The record with its published model in the user's ids (its state stays in its space,
    for a ``partial_fit`` or warm start that continues it)."""
    if record.layout is not None:
        record.coef = record.layout.to_user(record.coef)
    return record


def to_space(space: FeatureLayout | None, coef: Any) -> Any:
    """A model in the user's ids (a starting point) in the ids of ``space``."""
    return coef if space is None else space.to_stored(coef)


def model_for(source: Source, model: Any) -> tuple[Any, Source]:
    """(model, rows) to predict ``source`` with a model in the user's ids (a
    ``LinearModel``): a linear model's weights permuted once into the ids the rows are stored
    in, the rows read as they are; a model with a feature map as it is, the rows seen in the
    user's ids."""
    layout = stored_layout(source)
    if layout is None:
        return model, source
    if model.feature_map is not None:
        return model, in_space(source, None)
    return model._replace(coef=layout.to_stored(model.coef)), source
