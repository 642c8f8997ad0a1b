"""Conversion speed and peak memory, side by side in one run (#11 item 6).

Inputs, generated with a fixed seed: ``--rows`` (100,000) rows x 2**22 features with 40 stored
values per row, as svmlight text and as a CSR ``.npz`` (scipy.sparse.save_npz, uncompressed)
plus labels; and a Parquet file of ``--parquet-rows`` rows x 20 float32 columns and a label.
Each measured step runs in its own Python process, so its peak resident memory (ru_maxrss) is
its own; the table also gives a process that only imports dsvm, the floor under every figure.

Ratios (the targets of issue #11):
- dsvm.convert(svmlight) / sklearn.datasets.load_svmlight_file on the same file: <= 1.
- dsvm.convert(.npz CSR) / dsvm.convert(svmlight) of the same rows: <= 0.1 (10x faster).
- dsvm.convert(Parquet) / (pyarrow.parquet.read_table + dsvm.write_arrays of the same
  arrays with the same chunks): <= 1.5.

    python -m benchmarks.bench_convert [--rows 100000] [--parquet-rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time

from benchmarks._common import WORK, write_section

N_FEATURES = 2**22
NNZ_PER_ROW = 40


def _generate(rows: int, parquet_rows: int) -> dict[str, str]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file

    d = WORK / f"convert_{rows}_{parquet_rows}"
    paths = {"svm": d / "x.svm", "npz": d / "x.npz", "y": d / "y.npy", "pq": d / "t.parquet"}
    if all(p.exists() for p in paths.values()):
        return {k: str(v) for k, v in paths.items()}
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    cols = np.sort(rng.integers(0, N_FEATURES, size=(rows, NNZ_PER_ROW)), axis=1)
    m = sp.csr_matrix((np.round(rng.random(rows * NNZ_PER_ROW), 4).astype(np.float32),
                       cols.ravel().astype(np.int32),
                       np.arange(rows + 1, dtype=np.int64) * NNZ_PER_ROW),
                      shape=(rows, N_FEATURES))
    m.sum_duplicates()
    y = np.where(rng.random(rows) < 0.5, -1.0, 1.0)
    dump_svmlight_file(m, y, str(paths["svm"]), zero_based=False)
    sp.save_npz(paths["npz"], m, compressed=False)
    np.save(paths["y"], y)
    X = rng.normal(size=(parquet_rows, 20)).astype(np.float32)
    table = {f"f{j}": X[:, j] for j in range(20)}
    table["label"] = np.where(X[:, 0] > 0, 1.0, -1.0)
    pq.write_table(pa.table(table), paths["pq"], row_group_size=65536)
    return {k: str(v) for k, v in paths.items()}


_STEPS = {
    "import only": "import dsvm, numpy, scipy.sparse, zarr, pyarrow.parquet, sklearn.datasets",
    "sklearn load_svmlight_file": (
        "from sklearn.datasets import load_svmlight_file\n"
        "X, y = load_svmlight_file(P['svm'], n_features=2**22, dtype='float32')"),
    "dsvm convert svmlight (n_features given, 1 pass)": (
        "dsvm.convert(P['svm'], OUT, n_features=2**22, layout='sparse')"),
    "dsvm convert svmlight (default: scan + parse)": "dsvm.convert(P['svm'], OUT)",
    "dsvm convert .npz CSR": "dsvm.convert(P['npz'], OUT, labels=P['y'])",
    "dsvm convert Parquet": "dsvm.convert(P['pq'], OUT, label_column='label')",
    "pyarrow read_table + write_arrays": (
        "import numpy as np, pyarrow.parquet as pq\n"
        "t = pq.read_table(P['pq'])\n"
        "X = np.column_stack([t.column(f'f{j}').to_numpy() for j in range(20)])\n"
        "y = t.column('label').to_numpy()\n"
        "rows = dsvm.open_dataset(P['ref']).attrs['chunk_rows']\n"
        "dsvm.write_arrays(OUT, X, y, chunk_rows=rows)"),
}

_RUNNER = """
import json, re, shutil, sys, time
import dsvm, numpy, scipy.sparse, zarr, pyarrow.parquet, sklearn.datasets
P, OUT = json.loads(sys.argv[1]), sys.argv[2]

def status(key):
    return int(re.search(key + r":\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) / 1024

# Warm up (zarr's I/O thread and event loop, codec setup) the same way for every step, then
# reset the peak-RSS mark so that the step's own peak above this floor is what is reported.
dsvm.write_arrays(OUT + "-warm", numpy.ones((8, 2)), numpy.arange(8) % 2, overwrite=True)
shutil.rmtree(OUT + "-warm")
shutil.rmtree(OUT, ignore_errors=True)
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
floor = status("VmRSS")
tic = time.perf_counter()
exec(sys.argv[3])
secs = time.perf_counter() - tic
info = {}
try:
    ds = dsvm.open_dataset(OUT)
    info = {"chunks": ds.n_chunks, "chunk_rows": ds.attrs["chunk_rows"],
            "chunk_mib": ds.info()["chunk_bytes"] / 2**20}
except Exception:
    pass
print(json.dumps({"seconds": secs, "floor_mib": floor, "peak_mib": status("VmHWM") - floor,
                  **info}))
"""


def _run(step: str, paths: dict[str, str]) -> dict:
    out = str(WORK / "convert_out.zarr")
    proc = subprocess.run([sys.executable, "-c", _RUNNER, json.dumps(paths), out, _STEPS[step]],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--parquet-rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per step; the fastest counts")
    args = ap.parse_args()
    tic = time.perf_counter()
    paths = _generate(args.rows, args.parquet_rows)
    print(f"inputs ready in {time.perf_counter() - tic:.1f} s")
    ref = WORK / "convert_parquet_ref.zarr"
    shutil.rmtree(ref, ignore_errors=True)
    import dsvm

    dsvm.convert(paths["pq"], ref, label_column="label")  # the chunking to copy
    paths["ref"] = str(ref)
    res = {}
    for step in _STEPS:
        runs = [_run(step, paths) for _ in range(args.repeat)]  # a shared, noisy machine
        res[step] = {**min(runs, key=lambda r: r["seconds"]),
                     "peak_mib": max(r["peak_mib"] for r in runs)}
        print(f"{step:55s} {res[step]}")
    _report(res, args)


def _report(res: dict, args: argparse.Namespace) -> None:
    s = {k: v["seconds"] for k, v in res.items()}
    svm1 = s["dsvm convert svmlight (n_features given, 1 pass)"]
    svm2 = s["dsvm convert svmlight (default: scan + parse)"]
    ratios = [
        ("svmlight (1 pass) / sklearn load_svmlight_file", svm1 / s["sklearn load_svmlight_file"],
         "<= 1"),
        ("svmlight (default, 2 passes) / sklearn load_svmlight_file",
         svm2 / s["sklearn load_svmlight_file"], "(context)"),
        (".npz CSR / svmlight (1 pass)", s["dsvm convert .npz CSR"] / svm1, "<= 0.1"),
        ("Parquet / (read_table + write_arrays)",
         s["dsvm convert Parquet"] / s["pyarrow read_table + write_arrays"], "<= 1.5"),
    ]
    lines = [
        f"Inputs: {args.rows:,} rows x 2^22 features x {NNZ_PER_ROW} nnz (svmlight text and "
        f"CSR .npz, seed 0); Parquet {args.parquet_rows:,} rows x 20 float32 + label. Each "
        f"step in its own process (fastest of {args.repeat}), after the same small warm-up "
        "write; peak RSS is the step's "
        "peak (VmHWM, reset after the warm-up) above the process's resident size before it.",
        "", "| ratio | measured | target |", "|---|---|---|",
    ]
    for name, value, target in ratios:
        met = "" if not target.startswith("<=") else (
            " (met)" if value <= float(target[2:]) else " (NOT met)")
        lines.append(f"| {name} | {value:.2f} | {target}{met} |")
    lines += ["", "| step | seconds | peak RSS MiB above the floor (floor) | chunks x rows "
              "(MiB uncompressed each) |", "|---|---|---|---|"]
    for step, r in res.items():
        chunks = (f"{r['chunks']} x {r['chunk_rows']} ({r['chunk_mib']:.0f})"
                  if "chunks" in r else "-")
        lines.append(f"| {step} | {r['seconds']:.2f} | {r['peak_mib']:.0f} "
                     f"({r['floor_mib']:.0f}) | {chunks} |")
    body = "\n".join(lines)
    print(body)
    write_section("Conversion speed and memory (#11)", body,
                  f"python -m benchmarks.bench_convert --rows {args.rows} "
                  f"--parquet-rows {args.parquet_rows}")


if __name__ == "__main__":
    main()
