#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real single-node SLURM on this machine for the tests: `cluster.sh start DIR` installs
# slurmctld, slurmd, the clients and munge from Debian when missing (root and apt needed),
# writes a private configuration under DIR (its own ports, spool, state, logs and pid
# files: a SLURM already on the machine is left alone), starts munged (unless one runs),
# slurmctld and slurmd, and waits until the node is idle. `cluster.sh stop DIR` cancels
# what is still queued, then stops exactly the daemons `start` started, by their pids.
# Clients need SLURM_CONF=DIR/slurm.conf (`cluster.sh env DIR` prints the export).
# Exit code 77: this machine cannot run it (not root, not Debian, packages missing and no
# apt); the message says why. A daemon that does not start is a failure (exit 1), after
# stopping what did start.
set -euo pipefail
action=${1:?usage: cluster.sh start|stop|env DIR}
dir=${2:?usage: cluster.sh start|stop|env DIR}
conf=$dir/slurm.conf

skip() { echo "cluster.sh: SKIP: $*" >&2; exit 77; }
say() { echo "cluster.sh: $*" >&2; }

# alive PIDFILE: the process it names runs (not a zombie).
alive() {
  [[ -s $1 ]] || return 1
  local pid; pid=$(cat "$1")
  [[ -r /proc/$pid/status ]] && ! grep -q '^State:.*Z' "/proc/$pid/status"
}

install_packages() {
  local missing=()
  for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  [[ $(id -u) -eq 0 ]] || skip "not root, and ${missing[*]} are not installed"
  command -v apt-get >/dev/null || skip "no apt-get to install ${missing[*]}"
  say "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; } ||
    skip "apt-get could not install ${missing[*]}"
}

munge_works() { command -v munge >/dev/null && timeout 5 munge -n </dev/null 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1; }

start_munge() {
  if pgrep -x munged >/dev/null; then
    # One that answers is used; one on its way out (stopped by another cluster.sh) is
    # waited for, and ours started after it.
    for _ in $(seq 50); do munge_works && { say "munged already runs: using it"; return 0; }; pgrep -x munged >/dev/null || break; sleep 0.1; done
    pgrep -x munged >/dev/null && { say "a munged runs but does not answer"; return 1; }
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge /etc/munge
  if [[ ! -s /etc/munge/munge.key ]]; then
    if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key >/dev/null
    else dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none; fi
  fi
  chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key
  runuser -u munge -- munged --pid-file=/run/munge/munged.pid || return 1
  for _ in $(seq 50); do
    [[ -S /run/munge/munge.socket.2 && -s /run/munge/munged.pid ]] && { cp /run/munge/munged.pid "$dir/munged.pid"; return 0; }
    sleep 0.1
  done
  return 1
}

# free_port FROM: the first port from FROM on that nothing on 127.0.0.1 listens to.
free_port() {
  local port=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}

# stop_all: cancel what is queued, then stop the daemons start wrote pid files for, and the
# step daemons of this cluster's jobs (they outlive slurmd; found by the configuration they run under).
stop_all() {
  export SLURM_CONF=$conf
  if alive "$dir/slurmctld.pid"; then
    scancel --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 100); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.2; done
  fi
  local steps=()
  for p in $(pgrep -x slurmstepd 2>/dev/null); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$conf" && steps+=("$p")
  done
  for daemon in slurmd slurmctld munged; do
    # By its pid file, or (a daemon that never got as far as writing it) by the
    # configuration file it was started with: only ever the ones this script started.
    local pids=()
    alive "$dir/$daemon.pid" && pids+=("$(cat "$dir/$daemon.pid")")
    [[ $daemon != munged ]] && pids+=($(pgrep -x "$daemon" 2>/dev/null | while read -r p; do
      tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "-f $conf " && echo "$p"; done))
    ((${#pids[@]} > 0)) || continue
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for _ in $(seq 100); do
      local left=0
      for p in "${pids[@]}"; do [[ -r /proc/$p/status ]] && ! grep -q '^State:.*Z' "/proc/$p/status" && left=1; done
      ((left)) || break
      sleep 0.1
    done
    for p in "${pids[@]}"; do  # only those still alive: a pid that ended may be reused
      [[ -r /proc/$p/status ]] && ! grep -q '^State:.*Z' "/proc/$p/status" && kill -KILL "$p" 2>/dev/null
    done
    true
  done
  ((${#steps[@]} > 0)) && kill -KILL "${steps[@]}" 2>/dev/null || true
}
# failed WHAT: stop what started, say what failed, exit 1.
failed() { say "$*"; stop_all; exit 1; }

write_conf() {
  # The node as slurmd sees it (CPUs, memory), named localhost: hostnames vary on CI runners.
  local node; node=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]*/NodeName=localhost NodeAddr=127.0.0.1/; s/ UpTime=.*//')
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  cat >"$conf" <<EOF
ClusterName=jsmftest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
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
JobCompLoc=$dir/log/jobcomp.log
MailProg=/bin/true
MpiDefault=pmix
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=10
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
EnforcePartLimits=ALL
$node State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
}

case $action in
  env) echo "export SLURM_CONF=$conf" ;;
  start)
    command -v dpkg-query >/dev/null || skip "not a Debian-like system"
    [[ $(id -u) -eq 0 ]] || skip "not root (munged and slurmd are started as root)"
    install_packages
    mkdir -p "$dir"
    ctld_port=$(free_port "${JSMF_SLURMCTLD_PORT:-6917}")
    d_port=$(free_port $((ctld_port + 1)))
    start_munge || failed "munged did not start"
    write_conf
    export SLURM_CONF=$conf
    slurmctld -f "$conf" || failed "slurmctld did not start: $(tail -3 "$dir/log/slurmctld.log" 2>/dev/null)"
    slurmd -f "$conf" -N localhost || failed "slurmd did not start: $(tail -3 "$dir/log/slurmd.log" 2>/dev/null)"
    up_by=$((SECONDS + 60))
    while ((SECONDS < up_by)); do
      state=$(timeout 10 sinfo -h -n localhost -o %t 2>/dev/null || true)
      [[ $state == idle ]] && { say "SLURM up on ports $ctld_port, $d_port (slurmctld $(cat "$dir/slurmctld.pid"), slurmd $(cat "$dir/slurmd.pid"))"; exit 0; }
      sleep 0.2
    done
    failed "the node never became idle (state: ${state:-none}): $(tail -5 "$dir/log/slurmctld.log")"
    ;;
  stop)
    stop_all
    say "stopped"
    ;;
  *) echo "usage: cluster.sh start|stop|env DIR" >&2; exit 2 ;;
esac
