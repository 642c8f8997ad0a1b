"""How quickly the command answers (#14): ``dsvm --help`` and ``dsvm info`` against the start of
a Python process that only imports NumPy, measured side by side in one run (best of 7 each).

Target: both under 0.5 s on this machine; the ratio to ``python -c "import numpy"`` is the figure
that travels between machines. ``dsvm info`` reads a dataset's metadata only, so it must not
import scikit-learn, numba or distributed (the lazy imports this benchmark guards).

    python -m benchmarks.bench_startup
"""

from __future__ import annotations

import subprocess
import sys

from benchmarks._common import WORK, best_of, write_section


def _dataset() -> str:
    import numpy as np

    import dsvm

    path = WORK / "startup.zarr"
    if not path.exists():
        rng = np.random.default_rng(0)
        X = rng.normal(size=(1000, 10)).astype(np.float32)
        dsvm.write_arrays(path, X, np.where(X[:, 0] > 0, 1, -1))
    return str(path)


def _runner(*args: str):
    def run() -> None:
        subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    return run


def _imported_by_info(dataset: str) -> list[str]:
    code = (f"import sys; from dsvm.cli import main; main(['info', {dataset!r}]); "
            "print([m for m in ('sklearn', 'numba', 'distributed') if m in sys.modules], "
            "file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return eval(done.stderr.strip().splitlines()[-1])  # a list literal printed above


def main() -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    dataset = _dataset()
    cases = {
        'python -c "import numpy"': _runner("-c", "import numpy"),
        "dsvm --help": _runner("-m", "dsvm", "--help"),
        "dsvm info DATASET": _runner("-m", "dsvm", "info", dataset),
    }
    seconds = {name: best_of(run, repeat=7) for name, run in cases.items()}
    base = seconds['python -c "import numpy"']
    rows = [f"| `{name}` | {s:.3f} | {s / base:.2f}x | {'PASS' if s < 0.5 else 'FAIL'} |"
            for name, s in seconds.items()]
    body = "\n".join([
        "Best of 7 wall-clock runs, each a fresh Python process:", "",
        "| command | seconds | / import numpy | under 0.5 s |", "|---|---|---|---|", *rows, "",
        f"Heavy modules `dsvm info` imported: {_imported_by_info(dataset) or 'none'}.",
    ])
    print(body)
    write_section("Start-up: dsvm --help and dsvm info", body, "python -m benchmarks.bench_startup")


if __name__ == "__main__":
    main()
