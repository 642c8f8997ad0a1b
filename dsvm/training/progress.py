"""Progress reporting for the epoch loop: a tqdm bar, and one line per epoch when verbose > 1."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


def format_epoch(record: dict[str, Any]) -> str:
    parts = [
        f"epoch {record['epoch']:>3}",
        f"objective {record['objective']:.6f}",
        f"train loss {record['train_loss']:.6f}",
    ]
    if record.get("val_accuracy") is not None:
        parts.append(f"val acc {record['val_accuracy']:.4f}")
    parts.append(f"{record['seconds']:.2f}s")
    parts.append(f"{record['rows_per_s']:,.0f} rows/s")
    return "  ".join(parts)


class EpochProgress:
    """A progress bar over epochs (``verbose >= 1``) that also logs each epoch."""

    def __init__(self, total: int, verbose: int, desc: str = "dsvm") -> None:
        self.verbose = verbose
        self.bar = None
        if verbose >= 1:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="epoch", leave=True)

    def update(self, record: dict[str, Any]) -> None:
        logger.info(format_epoch(record))
        if self.bar is None:
            return
        postfix = {"obj": f"{record['objective']:.5f}"}
        if record.get("val_accuracy") is not None:
            postfix["val_acc"] = f"{record['val_accuracy']:.4f}"
        self.bar.set_postfix(postfix)
        if self.verbose >= 2:
            self.bar.write(format_epoch(record))
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
