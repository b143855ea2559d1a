#!/usr/bin/env bash
# A private single-node SLURM cluster on this machine, for the sweep tests: its own munge key and
# socket, slurm.conf, state and spool folders under DIR, daemons on free ports; nothing of the
# machine's own /etc/slurm or /etc/munge is used or changed. As root (CI runs as root).
#   scripts/slurm-cluster.sh start DIR    prints "export SLURM_CONF=DIR/slurm.conf" once the node is idle
#   scripts/slurm-cluster.sh stop DIR
# Needs Debian's slurm-wlm and munge (scripts/setup-debian.sh installs them).
set -euo pipefail
cmd=${1:?start|stop}
dir=$(mkdir -p "${2:?DIR}" && cd "$2" && pwd)
stop() {
  for pid in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [ -s "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
  done
  sleep 1
  for pid in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [ -s "$pid" ] && kill -9 "$(cat "$pid")" 2>/dev/null || true
    rm -f "$pid"
  done
}
if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
for tool in slurmctld slurmd munged sbatch; do
  command -v "$tool" > /dev/null || { echo "slurm-cluster.sh: $tool not found (apt-get install slurm-wlm munge)" >&2; exit 1; }
done
stop
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
# munged wants its key readable by its user only, and refuses to run as root without --force.
head -c 1024 /dev/urandom > "$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
munged --force --key-file "$dir/munge/munge.key" --socket "$dir/munge/munge.socket" \
  --pid-file "$dir/munged.pid" --log-file "$dir/munged.log" --seed-file "$dir/munge/munge.seed"
# Free ports for the controller and the node daemon.
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
read -r ctld_port d_port <<< "$ports"
host=$(hostname -s)
cpus=$(nproc)
# MinJobAge: ended jobs are forgotten (purged) 10 s or so after they end, as a busy site's are
# within minutes: the sweep tests see a job SLURM no longer lists, and the others, which follow
# their jobs every second or less, see each job end before it is forgotten.
cat > "$dir/slurm.conf" <<CONF
ClusterName=scalelens-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=10
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  if sinfo -h -o %T 2>/dev/null | grep -qE '^idle'; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 1
done
echo "slurm-cluster.sh: the node did not come up; logs in $dir" >&2
tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
exit 1
