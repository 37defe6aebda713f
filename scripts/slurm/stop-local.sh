#!/usr/bin/env bash
# Stops the one-node Slurm cluster scripts/slurm/start-local.sh STATE_DIR started (its slurmd,
# slurmctld and munged, by their pid files) and removes STATE_DIR. Jobs still queued are lost.
set -uo pipefail
dir=${1:?usage: stop-local.sh STATE_DIR}
[[ -f $dir/slurm.conf ]] || { echo "stop-local: $dir holds no slurm.conf" >&2; exit 1; }
for daemon in slurmd slurmctld munged; do
  pid_file="$dir/$daemon.pid"
  [[ -f $pid_file ]] || continue
  pid=$(cat "$pid_file")
  kill "$pid" 2>/dev/null || continue
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
done
rm -rf "$dir"
