"""What a cold cache costs: the first pass of each stochastic solver in a fresh process.

A fresh install (or a new worker on a machine without the disk cache) compiles a pass kernel
the first time a fit uses it. This times, in one fresh Python process with the disk cache off
(``DSVM_NUMBA_CACHE=0``), the first call of ``pegasos_pass``, ``sgd_pass``, ``asset_pass`` and
``sgd_prox_pass`` in turn on tiny inputs of one layout, so each row is what trying that solver
next costs. ``--compare PATH`` runs the same in another checkout (e.g. a worktree of an older
commit) interleaved with this one, so both columns come from the same minutes of the machine.

    python -m benchmarks.bench_compile [--compare PATH] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks._common import write_section

KERNELS = ("pegasos", "sgd", "asset", "sgd_prox")
LAYOUTS = ("dense float32", "csr float32", "dense float64")

# Run in the child: first calls timed one after another (the order a user tries solvers in).
_CHILD = r"""
import json, sys, time
import numpy as np
import scipy.sparse as sp
from dsvm.kernels import hparams as H, passes
from dsvm.kernels.pairs import pair_scratch

layout, dtype = sys.argv[1].split()
dt = np.dtype(dtype).type
rng = np.random.default_rng(0)
n, d = 200, 30
Xd = rng.standard_normal((n, d)).astype(dt)
if layout == "csr":
    c = sp.csr_matrix(Xd * (rng.random(Xd.shape) < 0.3))
    X = (c.indptr.astype(np.int64), c.indices.astype(np.int32), c.data.astype(dt))
else:
    X = Xd
codes = (rng.random(n) > 0.5).astype(np.float64)
order = np.arange(n, dtype=np.int64)
out = {}
for kind in ("pegasos", "sgd", "asset", "sgd_prox"):
    hp = H.make_hp(alpha=1e-3, t=0, batch_size=1, loss=0, fit_intercept=True, dtype=dt,
                   eta0=0.1, power=0.5, average=kind != "sgd_prox", l1=1e-4)
    W, b = np.zeros((1, d), dt), np.zeros(1, dt)
    A = np.zeros((1, d))
    P = pair_scratch(X, W, A, True)
    tic = time.perf_counter()
    if kind == "sgd_prox":
        passes.sgd_prox_pass(X, codes, np.empty(0), order, W, b, hp, A, P)
    else:
        getattr(passes, kind + "_pass")(X, codes, np.empty(0), order, W, b, A, np.zeros(1),
                                        hp, P)
    out[kind] = time.perf_counter() - tic
print(json.dumps(out))
"""


def _first_calls(tree: Path, layout: str) -> dict[str, float]:
    env = dict(os.environ, DSVM_NUMBA_CACHE="0", PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, "-c", _CHILD, layout], env=env, cwd=tree,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", type=Path, help="another checkout, run side by side")
    parser.add_argument("--repeats", type=int, default=2, help="best of this many processes")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    trees = {"this tree": here}
    if args.compare:
        trees["--compare"] = args.compare.resolve()
    best: dict[tuple[str, str], dict[str, float]] = {}
    for _ in range(args.repeats):
        for layout in LAYOUTS:
            for name, tree in trees.items():
                got = _first_calls(tree, layout)
                old = best.setdefault((name, layout), got)
                best[(name, layout)] = {k: min(old[k], got[k]) for k in KERNELS}
    head = "| layout | tree | " + " | ".join(f"{k}_pass" for k in KERNELS) + " | all four |"
    rows = [head, "|" + "---|" * (len(KERNELS) + 3)]
    for layout in LAYOUTS:
        for name in trees:
            got = best[(name, layout)]
            cells = " | ".join(f"{got[k]:.1f}" for k in KERNELS)
            rows.append(f"| {layout} | {name} | {cells} | {sum(got.values()):.1f} |")
    body = "\n".join([
        "Seconds for the first call of each pass kernel, in turn, in one fresh process with "
        f"DSVM_NUMBA_CACHE=0 (best of {args.repeats} processes; tiny inputs, so the time is "
        "the compilation). A later kernel reuses what an earlier one compiled."
        + (f" `--compare`: {args.compare}." if args.compare else ""),
        "", *rows])
    command = "python -m benchmarks.bench_compile" + (
        f" --compare {args.compare}" if args.compare else "")
    write_section("Compilation on a cold cache: the first pass of each solver", body, command)
    print(body)


if __name__ == "__main__":
    main()
