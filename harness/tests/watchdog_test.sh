#!/usr/bin/env bash
# watchdog_test.sh SCALEPROOF MPIEXEC CASE: the watchdog of commands run
# directly under mpiexec (no parent process). A test-only technique hangs or
# exits on one rank; the job must end non-zero within its --timeout with one
# `scaleproof: watchdog:` line naming the rank, the technique call and the MPI
# call the others wait in, and keep what was written, marked PARTIAL.
set -u
bin=$1; mpiexec=$2; case_=$3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; echo "--- output"; cat "$work/out" 2>/dev/null; exit 1; }
run() { "$@" >"$work/out" 2>"$work/err"; local rc=$?; cat "$work/err" >>"$work/out"; echo $rc; }
# expect_line PATTERN...: exactly one watchdog line on stderr, matching every PATTERN.
expect_line() {
  [[ $(grep -c '^scaleproof: watchdog:' "$work/err") -eq 1 ]] || fail "not exactly one watchdog line on stderr"
  local line; line=$(grep '^scaleproof: watchdog:' "$work/err")
  for p in "$@"; do [[ $line == *$p* ]] || fail "the watchdog line does not say '$p': $line"; done
}
fast=(--min-time 0.01 -r 1)

# hb_folders PID: the heartbeat folders a job of process PID owns.
hb_folders() { ls -d /dev/shm/scaleproof-hb-"$1"-* "${TMPDIR:-/tmp}"/scaleproof-hb-"$1"-* /tmp/scaleproof-hb-"$1"-* 2>/dev/null; }
# start_hang: a one-rank job hanging in its technique call; sets pid once its heartbeat folder exists.
start_hang() {
  "$bin" bench -t hang --set on_rank=0 --timeout 120 "${fast[@]}" --out "$work/results" --name "h$1" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do [[ -n $(hb_folders $pid) ]] && return; sleep 0.1; done
  fail "no heartbeat folder for process $pid"
}

case $case_ in
heartbeat_cleanup)  # the heartbeat folder goes with SIGTERM/SIGINT; after SIGKILL the next job removes it
  set -m  # job control: a background job keeps SIGINT (a script's background jobs otherwise ignore it)
  for sig in TERM INT; do
    start_hang $sig; kill -$sig $pid; wait $pid
    [[ -z $(hb_folders $pid) ]] || fail "SIG$sig left $(hb_folders $pid)"
  done
  start_hang KILL; kill -KILL $pid; wait $pid
  [[ -n $(hb_folders $pid) ]] || fail "SIGKILL removed the folder: the next check cannot fail"
  rc=$(run "$bin" bench -t stream_copy -s conformance "${fast[@]}" --out "$work/results" --name next)
  [[ $rc -eq 0 ]] || fail "the next job: exit $rc"
  [[ -z $(hb_folders $pid) ]] || fail "the next job left the killed job's $(hb_folders $pid)" ;;
bench_np2)  # rank 1 hangs inside run(); rank 0 waits in MPI_Allreduce; partial results kept and marked
  rc=$(run "$mpiexec" -n 2 "$bin" bench -t hang --set on_rank=1 --timeout 3 "${fast[@]}" --out "$work/results" --name t)
  [[ $rc -ne 0 ]] || fail "exit 0 after a hang"
  expect_line "culprit: rank 1 inside hang run (call " ", not in MPI" "rank 0 waiting in MPI_Allreduce inside hang run" \
              "--timeout 3" "partial results: $work/results/t"
  [[ -d results/t ]] || fail "no results folder kept"
  grep -q "culprit: rank 1 inside hang run" results/t/PARTIAL || fail "the kept folder is not marked PARTIAL with the diagnosis"
  [[ -s results/t/manifest.json ]] || fail "the kept folder has no manifest"
  [[ -z $(find results -maxdepth 1 -name '.*') ]] || fail "a hidden temporary folder was left behind" ;;
check_np2)  # rank 0 itself hangs (its watchdog thread still fires); rank 1 waits
  rc=$(run "$mpiexec" -n 2 "$bin" check -t hang --set on_rank=0 --timeout 3)
  [[ $rc -ne 0 ]] || fail "exit 0 after a hang"
  expect_line "culprit: rank 0 inside hang check (call 1), not in MPI" "rank 1 waiting in MPI_Allreduce inside hang check" ;;
check_np1)  # a single rank that hangs, started without mpiexec
  rc=$(run "$bin" check -t hang --set on_rank=0 --timeout 2)
  [[ $rc -ne 0 ]] || fail "exit 0 after a hang"
  expect_line "culprit: rank 0 inside hang check (call 1), not in MPI" ;;
exit_early_np2)  # rank 1 exits inside run(): the job ends non-zero, long before the timeout
  rc=$(run "$mpiexec" -n 2 "$bin" check -t exit_early --set on_rank=1 --timeout 60)
  [[ $rc -ne 0 ]] || fail "exit 0 after a rank died" ;;
quiet_np2)  # no fault: the job passes and the watchdog says nothing
  rc=$(run "$mpiexec" -n 2 "$bin" check -t hang --timeout 30)
  [[ $rc -eq 0 ]] || fail "exit $rc without a fault"
  ! grep -q 'watchdog' "$work/err" || fail "the watchdog spoke without a fault" ;;
*) fail "unknown case $case_" ;;
esac
echo "PASS $case_"
