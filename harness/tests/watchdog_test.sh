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

case $case_ in
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
