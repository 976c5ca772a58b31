#!/usr/bin/env bash
# ci/slurm-check.sh [SCALEPROOF]: srun as a launcher, against a real Slurm.
# Installs Slurm and MUNGE from the Debian archive when missing, starts a
# private one-node cluster (its own key, sockets, ports, state and spool in a
# temporary folder; no systemd, no cgroups), then checks that
#   - plain `srun -n 2` (Slurm's default MpiDefault=none: no PMI server) starts
#     two 1-rank MPI jobs, and scaleproof refuses them (exit 2);
#   - `scaleproof scale --launcher 'srun --mpi=pmi2 -n {n}' --ranks 1,2` runs,
#     and each point's manifest says it ran at 1 and at 2 ranks;
#   - inside an allocation scale's default launcher (srun) forms a 2-rank job;
#   - the main job's multi-rank conformance runs as one 2-rank job under srun;
#   - `scaleproof run --launcher 'srun --mpi=pmi2 -n {n}'` launches its
#     multi-rank techniques through srun, and the launched part ran at 2 ranks.
# Stops exactly the daemons it started and removes its folder, also on
# failure or Ctrl-C. Exit 0: all passed; 1: a check failed; 77 (CTest's
# skip): Slurm cannot be installed here.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/build/default/harness/scaleproof_testing}")
packages=(slurmctld slurmd slurm-client munge)
unset "${!SLURM_@}"  # a surrounding Slurm job must not leak into the private cluster

say() { printf '[slurm-check] %s\n' "$*"; }
failures=0
# check NAME COMMAND...: runs COMMAND, prints NAME and its result.
check() {
  local name=$1; shift
  if "$@"; then say "$name: ok"; else say "$name: FAILED"; failures=$((failures + 1)); fi
}

[[ -x "$bin" ]] || { say "no scaleproof at $bin (build it first)"; exit 1; }

# --- packages --------------------------------------------------------------
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# slurmd needs the control-group filesystem (every booted Linux has it; a
# bare chroot or container may not).
if ! grep -q " /sys/fs/cgroup[/ ]" /proc/mounts; then
  echo "skipped: no control groups mounted at /sys/fs/cgroup (slurmd cannot start)"
  exit 77
fi
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo -n"
  export DEBIAN_FRONTEND=noninteractive
  apt=($sudo apt-get -q -o DPkg::Lock::Timeout=120)
  if ! { "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
         { "${apt[@]}" update >/dev/null 2>&1 &&
           "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1; }; }; then
    echo "skipped: cannot install ${missing[*]} from the package archive"
    exit 77
  fi
fi
say "packages: $(dpkg-query -W -f='${Package} ${Version}  ' "${packages[@]}")"

# --- a private one-node cluster ----------------------------------------------
dir=$(mktemp -d /tmp/slurm-check.XXXXXX)
chmod 711 "$dir"  # munged requires its socket's folders to be searchable by all
mkdir -p "$dir"/{key,run,state,spool,log,work}
chmod 700 "$dir/key"
chmod 755 "$dir/run"
pids=()      # munged, slurmctld, slurmd, in the order started
current=""   # the check command running now
gone() { local st; st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null); [[ -z $st || $st == Z ]]; }
stop() {     # stop PID: SIGTERM, SIGKILL after 10 s, reaped
  kill "$1" 2>/dev/null
  for _ in $(seq 40); do gone "$1" && break; sleep 0.25; done
  gone "$1" || kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
# Processes this cluster started that outlive its daemons (slurmstepd, a
# rank): those with a file open in the private folder or working in it.
leftovers() {
  find /proc/[0-9]*/cwd /proc/[0-9]*/fd -maxdepth 1 -lname "$dir/*" 2>/dev/null | cut -d/ -f3 | sort -u | grep -vx "$$"
}
cleanup() {
  local i pid left
  cd /
  if ((${#pids[@]} == 3)); then
    # Steps report their end to the controller through munged: cancel what
    # still runs (after an interrupt) and let them, then stop the daemons.
    scancel --quiet --user="$(id -un)" 2>/dev/null
    for _ in $(seq 40); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.25; done
  fi
  [[ -n $current ]] && stop "$current"
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop "${pids[i]}"; done
  ((${#pids[@]})) && say "stopped daemons ${pids[*]}"
  left=$(leftovers)
  if [[ -n $left ]]; then
    kill -9 $left 2>/dev/null
    say "killed leftover processes of this cluster: $(echo $left)"
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Two free TCP ports, so that several checks (or a real Slurm) can run beside this one.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
node=$(slurmd -C | head -n 1)  # NodeName=<host> CPUs=... RealMemory=..., as slurmd sees this machine
cat >"$dir/slurm.conf" <<EOF
ClusterName=scaleproof-check
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$dir/run/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
$node State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF=$dir/slurm.conf
say "cluster: $node; ports $ctld_port, $slurmd_port; folder $dir"

mungekey -c -k "$dir/key/munge.key"
# Own sessions: a Ctrl-C at the terminal reaches only this script, which stops them in order.
setsid munged -F --key-file="$dir/key/munge.key" --socket="$dir/run/munge.sock" --pid-file="$dir/run/munged.pid" \
  --seed-file="$dir/key/seed" --log-file="$dir/log/munged.log" >"$dir/log/munged.out" 2>&1 &
pids+=($!)
setsid slurmctld -D -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
pids+=($!)
setsid slurmd -D -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 &
pids+=($!)
say "started munged, slurmctld, slurmd: pids ${pids[*]}"

state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
  [[ $state == idle ]] && break
  sleep 0.5
done
if [[ $state != idle ]]; then
  say "node $host never became idle (state '$state'); daemon logs:"
  tail -n 5 "$dir"/log/*
  exit 1
fi
say "node $host idle"

# --- checks ----------------------------------------------------------------
work=$dir/work
cd "$work"
out=$work/out
# ran LOG COMMAND...: runs COMMAND under a time limit, output to LOG; its exit
# code. In the background, so that a signal to this script is handled at once.
ran() {
  local log=$1 rc; shift
  timeout 60 "$@" >"$log" 2>&1 &
  current=$!
  wait "$current"; rc=$?
  current=""
  return $rc
}
say "srun --mpi=list: $(srun --mpi=list 2>&1 | sed -n 's/^\t//p' | tr '\n' ' ')"

singletons_refused() {
  ran "$out" srun -n 2 "$bin" check -t split_work
  local rc=$?
  say "  exit $rc: $(grep -m1 'scaleproof: error' "$out")"
  [[ $rc -eq 2 ]] && grep -q "scaleproof: error: the launcher started 2 processes but MPI sees 1 rank" "$out"
}
check "srun -n 2 with Slurm's default MpiDefault=none: two 1-rank jobs, refused" singletons_refused

scale_srun() {
  ran "$out" "$bin" scale -t split_work --launcher 'srun --mpi=pmi2 -n {n}' --ranks 1,2 --set work=400,serial=40 \
    --timeout 60 --min-time 0.01 -r 1 --out "$work/results" --name scale
  local rc=$?
  grep -E '^\[scale|^results:' "$out" | sed 's/^/  | /'  # its timings are not the point here
  [[ $rc -eq 0 && -d $work/results/scale ]] || { say "  exit $rc"; return 1; }
  python3 - "$work/results/scale" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/sweep.json"))
assert s["launcher"] == "srun --mpi=pmi2 -n {n}", s["launcher"]
assert [l["status"] for l in s["launches"]] == ["ok", "ok"], s["launches"]
seen = [json.load(open(d + "/" + l["results"] + "/manifest.json"))["ranks"] for l in s["launches"]]
assert seen == [1, 2], "manifests' ranks %s, expected [1, 2]" % seen
print("  manifests' ranks:", seen)
PY
}
check "scaleproof scale --launcher 'srun --mpi=pmi2 -n {n}' --ranks 1,2 -t split_work" scale_srun

default_in_allocation() {
  ran "$out" salloc -n 2 "$bin" scale -t split_work --ranks 2 --set work=400,serial=40 \
    --timeout 60 --min-time 0.01 -r 1 --out "$work/results" --name alloc
  local rc=$?
  [[ $rc -eq 0 ]] || { cat "$out"; return 1; }
  python3 - "$work/results/alloc" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/sweep.json"))
l = s["launches"][0]
ranks = json.load(open(d + "/" + l["results"] + "/manifest.json"))["ranks"]
print("  launcher:", s["launcher"], "; manifest's ranks:", ranks)
assert s["launcher"].startswith("srun "), s["launcher"]
assert ranks == 2, ranks
PY
}
check "salloc: scale's default launcher inside an allocation forms a 2-rank job" default_in_allocation

# One 2-rank job prints one table (rank 0's); two 1-rank jobs would print two
# and skip the techniques that need 2 ranks.
main_job_multi_rank() {
  ran "$out" srun --mpi=pmi2 -n 2 "$bin" check -F collectives -s conformance
  local rc=$?
  tail -n 1 "$out" | sed 's/^/  | /'
  [[ $rc -eq 0 ]] || { say "  exit $rc"; cat "$out"; return 1; }
  [[ $(grep -cE '^[0-9]+ passed, 0 failed$' "$out") -eq 1 ]] || { say "  not one table of passes"; cat "$out"; return 1; }
  ! grep -q "cannot use" "$out" || { say "  techniques skipped: $(grep 'cannot use' "$out")"; return 1; }
}
check "srun --mpi=pmi2 -n 2 scaleproof check -F collectives -s conformance" main_job_multi_rank

# The main job launches its multi-rank techniques itself through the launcher
# and merges them into its results folder; job.json records the launch and
# the launched part's own manifest.
main_job_launch() {
  ran "$out" "$bin" run --launcher 'srun --mpi=pmi2 -n {n}' --ranks 2 -t all_gather --size small \
    --min-time 0.01 -r 1 --out "$work/results" --name run
  local rc=$?
  grep -E "^Multi-rank|^\| collectives" "$out" | sed 's/^/  | /'
  [[ $rc -eq 0 && -d $work/results/run ]] || { say "  exit $rc"; cat "$out"; return 1; }
  python3 - "$work/results/run" <<'PY'
import json, sys
d = sys.argv[1]
launches = json.load(open(d + "/job.json"))["launches"]
assert len(launches) == 1, launches
l = launches[0]
print("  launch:", l["status"], "through", l["launcher"], "at", l["ranks"], "ranks; the part's manifest says ranks =", l["manifest"]["ranks"])
assert l["status"] == "ok" and l["launcher"] == "srun --mpi=pmi2 -n {n}", l
assert l["ranks"] == 2 and l["manifest"]["ranks"] == 2, l
rows = [r for r in json.load(open(d + "/check.json")) if r["technique"] == "all_gather"]
assert rows and all(r["passed"] for r in rows), rows
PY
}
check "scaleproof run --launcher 'srun --mpi=pmi2 -n {n}' --ranks 2 -t all_gather --size small" main_job_launch

cd "$root"
if ((failures)); then say "$failures check(s) FAILED"; exit 1; fi
say "all checks passed"
