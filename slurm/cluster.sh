#!/usr/bin/env bash
# slurm/cluster.sh — a real single-node Slurm (slurmctld + slurmd + munge) on
# this machine, for the tests and for trying `rlvr submit` without a cluster.
#
#   bash slurm/cluster.sh start    start munge, slurmctld, slurmd (idempotent);
#                                  waits until the node is idle
#   bash slurm/cluster.sh stop     stop what `start` started (slurmd, slurmctld;
#                                  munge is left running: other users may need it)
#   bash slurm/cluster.sh status   prints sinfo, exit 0 when the node is up
#
# Needs root and Debian's slurm-wlm and munge (scripts/deps.sh). The
# configuration is written to /etc/slurm/slurm.conf only when that file is
# missing or was written by this script (marker line), so a real site
# configuration is never touched. The node advertises 16 CPUs whatever the
# machine has (SlurmdParameters=config_overrides) so multi-rank layouts fit on
# small CI machines; cred_expire=10 lets requeued jobs restart in seconds.
set -euo pipefail

conf=/etc/slurm/slurm.conf
marker="# written by rlvr slurm/cluster.sh"
host=$(hostname -s)

die() {
  echo "slurm/cluster.sh: $*" >&2
  exit 1
}

write_conf() {
  if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    echo "slurm/cluster.sh: $conf exists and was not written by rlvr: using it as it is" >&2
    return
  fi
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
  cat > "$conf.tmp" << EOF
$marker
ClusterName=rlvrlocal
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=cred_expire=10
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmUser=root
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/var/run/slurmctld.pid
SlurmdPidFile=/var/run/slurmd.pid
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=2
MinJobAge=600
KillWait=5
SlurmdParameters=config_overrides
NodeName=$host CPUs=16 Sockets=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=20000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
  mv "$conf.tmp" "$conf"
}

start_munge() {
  if munge -n 2> /dev/null | unmunge > /dev/null 2>&1; then return; fi
  mkdir -p /var/run/munge /var/log/munge /var/lib/munge
  [ -f /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing: reinstall munge (apt-get install --reinstall munge)"
  chown -R munge:munge /etc/munge /var/run/munge /var/log/munge /var/lib/munge
  su -s /bin/sh munge -c munged
  for _ in $(seq 1 50); do
    munge -n 2> /dev/null | unmunge > /dev/null 2>&1 && return
    sleep 0.1
  done
  die "munged did not come up (see /var/log/munge/munged.log)"
}

node_up() {
  local state
  state=$(sinfo -h -n "$host" -o %t 2> /dev/null | head -1) || return 1
  case "$state" in
    idle* | mix* | alloc* | comp*) return 0 ;;
    *) return 1 ;;
  esac
}

start() {
  [ "$(id -u)" -eq 0 ] || die "start needs root (it writes $conf and starts daemons)"
  command -v slurmctld > /dev/null || die "slurmctld not found: run scripts/deps.sh (slurm-wlm)"
  write_conf
  start_munge
  pgrep -x slurmctld > /dev/null || slurmctld
  pgrep -x slurmd > /dev/null || slurmd
  for _ in $(seq 1 300); do
    if node_up; then
      echo "slurm/cluster.sh: node $host is up"
      return 0
    fi
    # a node left down/drained by an earlier run comes back here
    scontrol update nodename="$host" state=resume > /dev/null 2>&1 || true
    sleep 0.2
  done
  sinfo >&2 || true
  tail -20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
  die "the node did not become idle within 60 s (logs above)"
}

stop() {
  if pgrep -x slurmd > /dev/null; then pkill -x slurmd || true; fi
  if pgrep -x slurmctld > /dev/null; then pkill -x slurmctld || true; fi
  for _ in $(seq 1 100); do
    pgrep -x slurmd > /dev/null || pgrep -x slurmctld > /dev/null || return 0
    sleep 0.1
  done
  pkill -9 -x slurmd || true
  pkill -9 -x slurmctld || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    sinfo
    node_up
    ;;
  *)
    echo "usage: slurm/cluster.sh start|stop|status" >&2
    exit 2
    ;;
esac
