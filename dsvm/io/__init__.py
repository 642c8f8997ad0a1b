"""Files a fit leaves behind: model files and checkpoints, as npz + JSON (never pickle).

Both go through one envelope (:mod:`dsvm.io.envelope`): named numeric arrays and one JSON
document, written atomically to a local path or an fsspec URL. Loaders return plain records;
this package knows no estimator (:mod:`dsvm.estimators` builds one from a record).
"""

from dsvm.io.checkpoints import Checkpoint, checkpoint_exists, load_checkpoint, save_checkpoint
from dsvm.io.models import ModelRecord, load_model_record, save_model_record

__all__ = [
    "Checkpoint",
    "ModelRecord",
    "checkpoint_exists",
    "load_checkpoint",
    "load_model_record",
    "save_checkpoint",
    "save_model_record",
]
