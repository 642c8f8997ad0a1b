"""Imported first by the forkserver of dsvm's own LocalCluster (the first module of
:data:`dsvm.distributed.start_method.PRELOAD`): the server, and every worker process forked
from it, ignore SIGINT.

A terminal's Ctrl-C is sent to its whole foreground process group, the workers of dsvm's
embedded cluster included: each printed a KeyboardInterrupt traceback ("Process Dask Worker
process (from Nanny): ... CancelledError"), and the server one from the middle of its
imports, above ``dsvm train: interrupted``. The process the user started is the one to stop:
its KeyboardInterrupt closes the cluster, whose nannies stop their workers. (Python's
forkserver ignores SIGINT itself only once its imports are done, and its children get back
the handler it had before: this one.)
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
