"""Writes the example notebooks (without outputs): python examples/_make_notebooks.py"""

from pathlib import Path

import nbformat as nbf

CONNECT = '''import os
from distributed import Client, LocalCluster

# A remote cluster when DSVM_SCHEDULER is set (tcp://host:8786, or a scheduler file);
# otherwise a small LocalCluster of worker processes on this machine.
address = os.environ.get("DSVM_SCHEDULER")
if address:
    client = Client(address)
else:
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="2GiB")
    client = Client(cluster)
client'''

DATA_DIR = '''import tempfile
from pathlib import Path

# The workers open datasets by path or URL themselves, so this must be storage they share with
# the notebook: a shared filesystem, or an fsspec URL such as s3://bucket/prefix.
data_dir = os.environ.get("DSVM_DATA_DIR") or tempfile.mkdtemp(prefix="dsvm-example-")
data_dir'''

def nb(cells):
    n = nbf.v4.new_notebook()
    n.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    n.cells = [nbf.v4.new_markdown_cell(c[1]) if c[0] == "md" else nbf.v4.new_code_cell(c[1])
               for c in cells]
    return n

quick = nb([
 ("md", "# dsvm quickstart: a notebook against remote workers\n\n"
        "Connects to the Dask scheduler named by `DSVM_SCHEDULER` (falling back to a local "
        "cluster), converts the bundled a9a (UCI Adult) data to a chunked zarr dataset, trains a "
        "linear SVM on the workers, shows the model and its training history, and runs the same "
        "fit as a *detached job* that would survive this notebook closing."),
 ("code", CONNECT),
 ("code", DATA_DIR),
 ("code", '''import dsvm

bundled = Path(dsvm.__file__).parent / "datasets"
train = dsvm.convert(bundled / "a9a.xz", os.path.join(data_dir, "a9a.zarr"), n_features=123,
                     chunk_rows=4096, overwrite=True)
test = dsvm.convert(bundled / "a9a.t.xz", os.path.join(data_dir, "a9a.t.zarr"), n_features=123,
                    chunk_rows=4096, overwrite=True)
train'''),
 ("md", "Train on the cluster: only chunk ids and the model travel; each worker reads its "
        "chunks from the store. `alpha = 1/n` is LIBLINEAR's `C = 1`. `n_streams=2` fixes the "
        "number of parallel streams, so the model does not depend on how many workers the "
        "cluster has (by default there is one stream per worker)."),
 ("code", '''clf = dsvm.SVMClassifier(alpha=1.0 / train.n_samples, fit_intercept=False, max_epochs=5,
                         tol=None, random_state=0, n_streams=2, client=client)
clf.fit(train, validation=test)
clf  # the HTML summary: parameters, fitted shape, last epochs'''),
 ("code", '''ax = clf.plot_history()'''),
 ("code", '''result = clf.evaluate(test)
print(f"test accuracy {result['accuracy']:.4f}, objective {result['objective']:.5f}")
assert result["accuracy"] > 0.84'''),
 ("md", "## Choosing alpha in one read of the data\n\n`SVMClassifierCV` trains a grid of "
        "alphas side by side: each chunk is read once per epoch and every candidate steps on it; "
        "a fold of held-out data scores them, and the best is published without training it "
        "again. `alphas=\"auto\"` spans 1e-3..1e3 times 1/n (LIBLINEAR's C from 1e3 to 1e-3). "
        "Other axes train in the same read: here two losses, so 2 x 8 candidates "
        "(`l1_ratios` and `class_weights` are axes too)."),
 ("code", '''cv = dsvm.SVMClassifierCV(alphas="auto", n_alphas=8, losses=["hinge", "logistic"],
                         fit_intercept=False, max_epochs=5, random_state=0, n_streams=2,
                         client=client)
cv.fit(train)
print(f"chosen alpha {cv.alpha_:.3g} (1/n = {1.0 / train.n_samples:.3g}), loss {cv.loss_!r}, "
      f"held-out accuracy {cv.best_score_:.4f}, test accuracy {cv.score(test):.4f}")
assert cv.score(test) > 0.84
ax = cv.plot_path()  # held-out score against alpha, one line per loss'''),
 ("md", "## A detached job\n\n`dsvm.submit` runs the fit's driver on the cluster: the notebook "
        "may close, and `dsvm.attach(job_id)` (or `dsvm attach ID` in a shell) reconnects."),
 ("code", '''job = dsvm.submit(dsvm.SVMClassifier(alpha=1.0 / train.n_samples, fit_intercept=False,
                                      max_epochs=2, tol=None, random_state=0),
                  train, client=client)
job_id = job.id
job'''),
 ("code", '''again = dsvm.attach(job_id, client=client)
model = again.result()
print(again, "->", f"{model.score(test):.4f}")
ax = dsvm.plot_history(again)'''),
])

kernel = nb([
 ("md", "# A kernel SVM on the cluster\n\n"
        "A Gaussian-kernel SVM three ways. `kernel=\"rff\"` (random Fourier features) and "
        "`kernel=\"nystroem\"` map every chunk inside the worker task that reads it (the mapped "
        "features are never stored nor sent anywhere), then a linear solver trains on them; the "
        "fitted map is kept in the model and applied again at prediction. `solver=\"bsgd\"` "
        "trains the kernel expansion itself with a budget of support vectors."),
 ("code", CONNECT),
 ("code", '''import numpy as np
import dask.array as da
from sklearn.datasets import make_circles

import dsvm

X, y = make_circles(n_samples=20_000, noise=0.08, factor=0.5, random_state=0)
X_train, y_train, X_test, y_test = X[:15_000], y[:15_000], X[15_000:], y[15_000:]
dX, dy = da.from_array(X_train, chunks=(5_000, 2)), da.from_array(y_train, chunks=5_000)
linear = dsvm.SVMClassifier(alpha=1e-4, max_epochs=5, tol=None, random_state=0).fit(X_train, y_train)
print(f"linear SVM on concentric circles: {linear.score(X_test, y_test):.3f} (no linear separator)")'''),
 ("code", '''scores = {}
for kernel in ("rff", "nystroem"):
    model = dsvm.SVMClassifier(kernel=kernel, n_components=200, gamma=2.0, alpha=1e-4,
                               max_epochs=6, tol=None, random_state=0, client=client).fit(dX, dy)
    scores[kernel] = model.score(X_test, y_test)
bsgd = dsvm.SVMClassifier(solver="bsgd", gamma=2.0, budget=100, alpha=1e-4, max_epochs=3,
                          tol=None, random_state=0, client=client).fit(dX, dy)
scores["bsgd"] = bsgd.score(X_test, y_test)
print({k: round(v, 3) for k, v in scores.items()})
assert min(scores.values()) > 0.95
clf = model
clf'''),
 ("code", '''ax = clf.plot_history()'''),
])

ooc = nb([
 ("md", "# Out of core: a dataset bigger than a worker's memory\n\n"
        "Writes a synthetic dataset in bounded memory, trains on it with each worker streaming its "
        "chunks (two in memory at a time), checkpointing after every epoch, then resumes from the "
        "checkpoint as one would after a failure. Set `DSVM_EXAMPLE_ROWS` to scale it (the default "
        "10 million rows x 100 float32 features is 4 GB)."),
 ("code", CONNECT),
 ("code", DATA_DIR),
 ("code", '''import dsvm

n_rows = int(os.environ.get("DSVM_EXAMPLE_ROWS", 10_000_000))
ds = dsvm.write_synthetic(os.path.join(data_dir, "big.zarr"), n_rows, 100, chunk_rows=50_000,
                          seed=0, overwrite=True)
print(ds, f"{ds.n_samples * ds.n_features * 4 / 2**30:.2f} GiB of features")'''),
 ("code", '''checkpoint = os.path.join(data_dir, "big.ckpt")
clf = dsvm.SVMClassifier(solver="sgd", alpha=1e-5, max_epochs=2, tol=None, random_state=0,
                         checkpoint=checkpoint, client=client)
clf.fit(ds)
print(dsvm.load_checkpoint(checkpoint))'''),
 ("md", "Later (another session, another cluster) the fit continues from the checkpoint: "
        "`resume=True` restores the weights, step counter, averages and seed, so the result is "
        "the model an uninterrupted 4-epoch fit would give."),
 ("code", '''resumed = dsvm.SVMClassifier(solver="sgd", alpha=1e-5, max_epochs=4, tol=None,
                             checkpoint=checkpoint, client=client).fit(ds, resume=True)
print(f"epochs {resumed.n_iter_}, train accuracy {resumed.score(ds):.4f}")
assert resumed.n_iter_ == 4
resumed'''),
 ("code", '''import psutil

rss = client.run(lambda: psutil.Process().memory_info().rss / 2**20)
print({w.split(":")[-1]: f"{mb:.0f} MiB" for w, mb in rss.items()}, "worker RSS")
ax = resumed.plot_history()'''),
])

for name, n in [("quickstart", quick), ("kernel_svm", kernel), ("out_of_core", ooc)]:
    nbf.write(n, Path(__file__).with_name(f"{name}.ipynb"))
