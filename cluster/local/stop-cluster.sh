#!/usr/bin/env bash
# Stop the processes started by start-cluster.sh DIR (workers first, then the scheduler).
set -euo pipefail
DIR="${1:-./dsvm-cluster}"
[ -f "$DIR/pids" ] || { echo "no $DIR/pids: nothing to stop" >&2; exit 0; }
tac "$DIR/pids" | while read -r pid; do kill "$pid" 2>/dev/null || true; done
for _ in $(seq 1 50); do
    alive=0
    while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=1; done <"$DIR/pids"
    [ "$alive" = 0 ] && break
    sleep 0.2
done
while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$DIR/pids"
rm -f "$DIR/pids" "$DIR/scheduler.json"
