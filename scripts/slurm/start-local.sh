#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine (slurmctld + slurmd, with munge) from Debian's
# packages, for the `slurm` tests and for trying `llmprof sweep --launcher slurm` without a cluster.
#
#   scripts/slurm/start-local.sh [STATE_DIR]    # default: a new temp dir
#
# Everything it makes lives in STATE_DIR: slurm.conf (this node's real CPUs and memory, one
# partition `debug`), a munge key and socket, state and spool dirs, logs and pid files. /etc is not
# touched. It waits until `sinfo` shows the node idle and prints, as its last line,
#   SLURM_CONF=STATE_DIR/slurm.conf
# which the Slurm clients (sbatch, squeue, sinfo, scancel) need in their environment.
# scripts/slurm/stop-local.sh STATE_DIR stops the daemons and removes STATE_DIR.
#
# Missing packages are installed with apt-get when run as root; where they cannot be, it exits 77
# (the ctest skip code) with the reason. In a container there are no cgroups for Slurm: the config
# uses proctrack/linuxproc and task/none; select/cons_tres with CR_CPU lets one task per CPU run.
# Ports: LLMPROF_SLURM_PORT (slurmctld, default 16817) and the next one (slurmd).
set -euo pipefail

skip() { echo "start-local: $*; skipping" >&2; exit 77; }
fail() { echo "start-local: $*" >&2; exit 1; }

need=(slurmctld slurmd munged sbatch sinfo)
missing=()
for c in "${need[@]}"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
if ((${#missing[@]})); then
  [[ $(id -u) == 0 ]] || skip "${missing[*]} not installed and not root (apt-get install slurm-wlm munge)"
  command -v apt-get >/dev/null 2>&1 || skip "${missing[*]} not installed and no apt-get"
  echo "start-local: installing slurm-wlm and munge" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge; } \
    >&2 || skip "apt-get install slurm-wlm munge failed"
  for c in "${need[@]}"; do command -v "$c" >/dev/null 2>&1 || skip "$c still missing"; done
fi

dir=${1:-$(mktemp -d /tmp/llmprof-slurm.XXXXXX)}
mkdir -p "$dir"/{ctld,spool,log}
dir=$(cd "$dir" && pwd)
port=${LLMPROF_SLURM_PORT:-16817}
user=$(id -un)
host=$(hostname -s)

# munge: our own key and socket, so a system munged (if any) is left alone.
key="$dir/munge.key"
[[ -f $key ]] || { dd if=/dev/urandom of="$key" bs=1024 count=1 status=none; chmod 600 "$key"; }
munged --force --key-file="$key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge.seed" ||
  fail "munged did not start (see $dir/log/munged.log)"

# The node as slurmd sees it, CPUs limited to those this process may use.
# The sockets/cores layout goes in only when every CPU is ours (else slurmd drains the node).
read -r cpus mem_mb layout < <(slurmd -C | awk -v n="$(nproc)" '
  /^NodeName/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
  END { c = v["CPUs"] + 0; l = "SocketsPerBoard=" v["SocketsPerBoard"] " CoresPerSocket=" \
        v["CoresPerSocket"] " ThreadsPerCore=" v["ThreadsPerCore"]
        if (n + 0 < c) { c = n + 0; l = "" }; print c, v["RealMemory"], l }')
[[ -n $cpus && -n $mem_mb ]] || fail "slurmd -C did not report CPUs and RealMemory"

cat >"$dir/slurm.conf" <<CONF
# One-node Slurm for llmprof's tests (scripts/slurm/start-local.sh); not for production.
ClusterName=llmprof-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SchedulerParameters=sched_interval=1
MinJobAge=300
KillWait=10
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus $layout RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" -i || fail "slurmctld did not start (see $dir/log/slurmctld.log)"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start (see $dir/log/slurmd.log)"

for _ in $(seq 1 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [[ $state == idle ]] && { echo "SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 1
done
echo "start-local: node state '${state:-none}' after 60 s; logs in $dir/log" >&2
tail -n 5 "$dir"/log/*.log >&2 || true
exit 1
