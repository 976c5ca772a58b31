#!/usr/bin/env bash
# main_job_test.sh SCALEPROOF CASE: `scaleproof run` started outside any MPI
# launcher runs the single-rank techniques itself, launches the multi-rank
# ones at 2 ranks and merges both into one results folder; a launch that
# hangs is reported with the watchdog's diagnosis and the rest is kept; at
# one rank a multi-rank technique is listed as skipped, never measured,
# unless --one-rank asks for it to run here at one rank.
# Asserts on exit codes and the JSON written; no timing is asserted.
set -u
bin=$1; case_=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
py=/usr/bin/python3
fast=(--min-time 0.01 -r 1 --out "$work/results" --name t)
shapes=(--set M=64,N=64,K=64,count=4096)  # small shapes: the test is about the job, not the figures
fail() { echo "FAIL: $*"; cat "$work/out" 2>/dev/null; exit 1; }
run() { "$bin" "$@" >"$work/out" 2>&1; echo $?; }
# check PYTHON_EXPR...: assertions over j = job.json, c = check.json, b = bench.json, v = verdicts.json.
check() { for e in "$@"; do
  $py -c "import json; L=lambda f: json.load(open('results/t/' + f)); j=L('job.json'); c=L('check.json'); b=L('bench.json')['benchmarks']; v=L('verdicts.json'); assert $e" ||
    fail "assertion: $e"; done; }

case $case_ in
launch)  # gemm in this process, all_reduce's ring launched at 2 ranks, one folder
  rc=$(run run -t gemm -t all_reduce "${shapes[@]}" --ranks 2 "${fast[@]}")
  [[ $rc -eq 0 ]] || fail "exit $rc"
  check "len(j['launches']) == 1" "j['launches'][0]['status'] == 'ok'" "j['launches'][0]['ranks'] == 2" \
        "j['launches'][0]['manifest']['ranks'] == 2" "j['skipped'] == []" \
        "{r['ranks'] for r in c if r['technique'] == 'all_reduce'} == {2}" \
        "{r['ranks'] for r in c if r['technique'] == 'gemm'} == {1}" \
        "any(x['name'].startswith('collectives/all_reduce/ring/') and x['ranks'] == 2 for x in b)" \
        "any(x['name'].startswith('gemm/gemm/kokkos/') and x['ranks'] == 1 for x in b)" \
        "not any(x['name'].startswith('collectives/') and x['ranks'] == 1 for x in b)" \
        "any(x['technique'] == 'all_reduce' and x['quantity'] == 'throughput vs mpi' for x in v)"
  grep -q "^## Summary" results/t/report.md || fail "the report does not open with the summary"
  [[ $(grep -n "^## " results/t/report.md | head -1) == *Summary* ]] || fail "summary is not the first section"
  grep -q "launched at 2 ranks" results/t/report.md || fail "the summary does not name the launch"
  grep -q "\[check .*/.*elapsed" "$work/out" || fail "no progress lines" ;;
one_rank)  # --ranks 1: the multi-rank technique is listed once as skipped and not measured
  rc=$(run run -t gemm -t all_reduce "${shapes[@]}" --ranks 1 "${fast[@]}")
  [[ $rc -eq 0 ]] || fail "exit $rc"
  check "j['launches'] == []" "[s['technique'] for s in j['skipped']] == ['all_reduce']" \
        "'needs >= 2 ranks' in j['skipped'][0]['reason']" \
        "not any(r['technique'] == 'all_reduce' for r in c)" "not any(x['name'].startswith('collectives/') for x in b)"
  grep -q "Skipped: all_reduce: needs >= 2 ranks" results/t/report.md || fail "skip not in the summary" ;;
hang)  # the launched part hangs: diagnosis in job.json and the report, gemm kept, exit 1
  rc=$(run run -t gemm -t hang --set M=64,N=64,K=64,on_rank=1 --ranks 2 --timeout 8 "${fast[@]}")
  [[ $rc -eq 1 ]] || fail "exit $rc, expected 1"
  check "j['launches'][0]['status'] in ('timed_out', 'failed')" "'rank 1 inside hang' in j['launches'][0]['diagnosis']" \
        "any(x['name'].startswith('gemm/gemm/kokkos/') for x in b)" "any(r['technique'] == 'gemm' for r in c)"
  grep -Eq "launch at 2 ranks (timed_out|failed)" results/t/report.md || fail "the failure is not in the summary" ;;
one_rank_all)  # --one-rank: the multi-rank technique runs here at one rank, nothing is launched or skipped
  rc=$(run run -t gemm -t all_reduce "${shapes[@]}" --one-rank "${fast[@]}")
  [[ $rc -eq 0 ]] || fail "exit $rc"
  check "j['launches'] == []" "j['skipped'] == []" \
        "{r['ranks'] for r in c if r['technique'] == 'all_reduce'} == {1}" \
        "any(x['name'].startswith('collectives/all_reduce/ring/') and x['ranks'] == 1 for x in b)" ;;
bad_input)  # each: one line naming the problem, exit 2, nothing written
  refused() {  # refused PATTERN ARGS...
    local pattern=$1; shift
    rc=$(run run -t all_reduce "$@" --out "$work/results")
    [[ $rc -eq 2 ]] || fail "run $*: exit $rc, expected 2"
    [[ $(wc -l <"$work/out") -eq 1 ]] || fail "run $*: not one line"
    grep -q -- "$pattern" "$work/out" || fail "run $*: the message does not say '$pattern'"
    [[ ! -e $work/results ]] || fail "run $*: something was written"
  }
  refused "--ranks" --ranks 0
  refused "not found on PATH" --launcher "nosuch-launcher -n {n}"
  refused "no {n}" --launcher "mpiexec -n 2"
  refused "--timeout" --timeout 0
  refused "--one-rank launches nothing" --one-rank --ranks 2
  refused "--timeout" --timeout nan
  refused "cannot start 2 ranks" --launcher "false {n}" --ranks 2
  # Inside a launcher, the main job's launch options do not apply.
  MPI_LOCALNRANKS=1 refused "outside an MPI launcher" --ranks 2 ;;
*) fail "unknown case $case_" ;;
esac
echo "PASS $case_"
