#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `make slurm-demo`: the demo job rendered as a Slurm job array on a one-node cluster started here as plain
# processes (munged, slurmctld -D, slurmd -D from a generated slurm.conf in a temporary folder; no systemd), with
# the project's own examples/segments/slurm-*.sbatch: N array tasks (default 3), one segment each, sharing one
# cache folder, waited for with squeue and checked with sacct, then joined with lapse concat into
# OUT_DIR/hyperlapse.mp4 (default demo/slurm). The cluster is stopped when the script ends, fails or is interrupted.
#
# usage: scripts/slurm-demo.sh LAPSE_BIN SHARED_DATA [OUT_DIR]    (N=3 by default; run as root or a user who may
#        start daemons: Slurm runs as the calling user)
set -euo pipefail
LAPSE_BIN=$(realpath "${1:?usage: slurm-demo.sh LAPSE_BIN SHARED_DATA [OUT_DIR]}")
SHARED=$(realpath "${2:?usage: slurm-demo.sh LAPSE_BIN SHARED_DATA [OUT_DIR]}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT_DIR=$(realpath -m "${3:-$ROOT/demo/slurm}")
N=${N:-3}
for tool in munged mungekey slurmctld slurmd sbatch squeue sacct scontrol; do
    command -v "$tool" >/dev/null || { echo "slurm-demo: $tool not found (Debian: slurm-wlm, munge)" >&2; exit 1; }
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/lapse-slurm.XXXXXX")
chmod 755 "$TMP"
export SLURM_CONF="$TMP/slurm.conf"
stop() {
    local status=$?
    trap - EXIT INT TERM
    scontrol shutdown >/dev/null 2>&1 || true
    for pidfile in "$TMP/slurmd.pid" "$TMP/slurmctld.pid" "$TMP/munge/munged.pid"; do
        [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    for _ in $(seq 50); do
        pgrep -f "$TMP/" >/dev/null || break
        sleep 0.1
    done
    pkill -9 -f "$TMP/" 2>/dev/null || true
    rm -rf "$TMP"
    exit "$status"
}
trap stop EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
mkdir -p "$TMP/munge" "$TMP/state" "$TMP/spool" "$TMP/log"
chmod 700 "$TMP/munge"
mungekey -c -k "$TMP/munge/munge.key"
munged --force --key-file="$TMP/munge/munge.key" --socket="$TMP/munge/munge.socket" \
    --pid-file="$TMP/munge/munged.pid" --log-file="$TMP/log/munged.log" --seed-file="$TMP/munge/munged.seed"
chmod 711 "$TMP/munge"
cat > "$SLURM_CONF" <<CONF
ClusterName=lapse-demo
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$TMP/munge/munge.socket
CredType=cred/munge
SlurmUser=$(id -un)
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$TMP/log/jobcomp.txt
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 )) State=UNKNOWN
PartitionName=demo Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -f "$SLURM_CONF" > "$TMP/log/slurmctld.out" 2>&1 &
slurmd -D -f "$SLURM_CONF" > "$TMP/log/slurmd.out" 2>&1 &
for _ in $(seq 100); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 0.2
done
sinfo -h -o %t | grep -q idle || { echo "slurm-demo: the node did not come up" >&2; tail "$TMP"/log/*; exit 1; }

# The demo job as a job file (what a user renders on a cluster), the parts and the shared cache in WORK.
mkdir -p "$OUT_DIR"
export WORK="$OUT_DIR/work"
rm -rf "$WORK" && mkdir -p "$WORK"
export JOB="$WORK/demo.job.json" N CACHE="$WORK/cache" OUT="$OUT_DIR/hyperlapse.mp4"
cat > "$JOB" <<JSON
{"source": "video:$SHARED/pano360/valiant360_overpass/overpass-clip.mp4", "panoHeading": 0,
 "keyframes": "$ROOT/examples/overpass-camera.json", "fps": 24, "size": "1280x720"}
JSON
bin=$(mktemp -d "$TMP/bin.XXXXXX")
ln -s "$LAPSE_BIN" "$bin/lapse"
export PATH="$bin:$PATH"
cd "$WORK"
array=$(sbatch --parsable --array=1-"$N" --export=ALL "$ROOT/examples/segments/slurm-segments.sbatch")
join=$(sbatch --parsable --dependency=afterok:"$array" --export=ALL "$ROOT/examples/segments/slurm-concat.sbatch")
echo "slurm-demo: array job $array ($N tasks), join job $join"
while [ -n "$(squeue -h -j "$array,$join" 2>/dev/null)" ]; do sleep 0.5; done
sacct --completion -n -P -o JobID,JobName,State,ExitCode 2>/dev/null | tee "$OUT_DIR/sacct.txt"
cp lapse-segment-*.log lapse-concat.log "$OUT_DIR/"
completed=$(grep -c '|lapse-segments|COMPLETED|' "$OUT_DIR/sacct.txt" || true)
joined=$(grep -c '|lapse-concat|COMPLETED|' "$OUT_DIR/sacct.txt" || true)
if [ "$completed" != "$N" ] || [ "$joined" != 1 ]; then
    echo "slurm-demo: $completed of $N array tasks and $joined join completed (logs in $OUT_DIR)" >&2
    exit 1
fi
echo "slurm-demo: wrote $OUT ($N segments joined)"
