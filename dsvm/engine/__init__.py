"""What runs over a source's chunks without knowing the Dask client: the engine protocol and the
engine of this process (:mod:`dsvm.engine.local`), the task objects that both it and the
cluster's engine (:mod:`dsvm.distributed.engine`) run (:mod:`dsvm.engine.tasks`,
:mod:`dsvm.engine.cocoa_tasks`), and the per-epoch hooks (:mod:`dsvm.engine.hooks`).
"""
