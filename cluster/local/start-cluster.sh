#!/usr/bin/env bash
# Start a Dask scheduler and N workers as separate processes on this machine, for dsvm.
#
#   cluster/local/start-cluster.sh [DIR] [N_WORKERS] [MEMORY_LIMIT]
#
# DIR (default ./dsvm-cluster) receives scheduler.json (the address; pass it to
# `dsvm train --scheduler DIR/scheduler.json` or `Client(scheduler_file=...)`), the processes'
# logs and pids. One thread per worker: a dsvm stream is one task running a serial numba pass.
# Stop with cluster/local/stop-cluster.sh DIR. Environment: DSVM_HOST (default 127.0.0.1),
# DSVM_PORT (default 0 = any free port), DASK (the dask command, default `dask`).
set -euo pipefail

DIR="${1:-./dsvm-cluster}"
N_WORKERS="${2:-2}"
MEMORY_LIMIT="${3:-2GiB}"
HOST="${DSVM_HOST:-127.0.0.1}"
PORT="${DSVM_PORT:-0}"
DASK="${DASK:-dask}"

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
rm -f "$DIR/scheduler.json" "$DIR/pids"

$DASK scheduler --host "$HOST" --port "$PORT" --no-dashboard \
    --scheduler-file "$DIR/scheduler.json" >"$DIR/scheduler.log" 2>&1 &
echo $! >>"$DIR/pids"

for _ in $(seq 1 100); do   # wait up to 20 s for the scheduler to write its address
    [ -s "$DIR/scheduler.json" ] && break
    sleep 0.2
done
[ -s "$DIR/scheduler.json" ] || { echo "scheduler did not start; see $DIR/scheduler.log" >&2; exit 1; }

for i in $(seq 1 "$N_WORKERS"); do
    $DASK worker --scheduler-file "$DIR/scheduler.json" --nthreads 1 --nworkers 1 \
        --memory-limit "$MEMORY_LIMIT" --host "$HOST" --no-dashboard \
        >"$DIR/worker-$i.log" 2>&1 &
    echo $! >>"$DIR/pids"
done

python3 - "$DIR/scheduler.json" "$N_WORKERS" <<'PY'
import sys
from distributed import Client
with Client(scheduler_file=sys.argv[1], timeout=30) as c:
    c.wait_for_workers(int(sys.argv[2]), timeout=60)
    print(c.scheduler.address)
PY
echo "scheduler file: $DIR/scheduler.json" >&2
