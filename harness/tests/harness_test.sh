#!/usr/bin/env bash
# harness_test.sh SCALEPROOF DATA_DIR CASE: end-to-end tests of scale (launcher
# at 1-4 ranks, weak mode, thread sweep), the watchdog (a rank that hangs, a
# rank that exits early), compare and qualify on crafted folders. Each case
# checks the exit code, the console line and the JSON written (read with
# Python's json module). No timing is asserted.
set -u
bin=$1; data=$2; case_=$3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
py=/usr/bin/python3
fast=(--min-time 0.01 -r 1 --out "$work/results")
fail() { echo "FAIL: $*"; cat "$work/out" 2>/dev/null; exit 1; }
run() { "$bin" "$@" >"$work/out" 2>&1; echo $?; }
# check PYTHON_EXPR...: each a Python assertion over s = sweep.json, f = fits.json of results/t.
check() { for e in "$@"; do
  $py -c "import json,sys; s=json.load(open('results/t/sweep.json')); f=json.load(open('results/t/fits.json')); assert $e" ||
    fail "assertion: $e"; done; }
cores=$(getconf _NPROCESSORS_ONLN)  # as std::thread::hardware_concurrency (nproc obeys OMP_NUM_THREADS)

case $case_ in
ranks)  # the launcher at 1 to 4 ranks; points beyond the cores marked oversubscribed, out of the fit
  rc=$(run scale -t split_work --ranks 1,2,3,4 --set work=400,serial=40 --name t --timeout 60 "${fast[@]}")
  [[ $rc -eq 0 ]] || fail "exit $rc"
  check "len(s['launches']) == 4" "all(l['status'] == 'ok' for l in s['launches'])" \
        "[l['ranks'] for l in s['launches']] == [1, 2, 3, 4]" \
        "[l['oversubscribed'] for l in s['launches']] == [r > $cores for r in (1, 2, 3, 4)]" \
        "[p['timed'] for p in f[0]['points']] == [r <= $cores for r in (1, 2, 3, 4)]" \
        "f[0]['amdahl']['points'] == min(4, $cores)" "all(l['load_1min'] >= 0 for l in s['launches'])" \
        "all(json.load(open('results/t/' + l['results'] + '/manifest.json'))['ranks'] == l['ranks'] for l in s['launches'])"
  grep -q "results:" "$work/out" || fail "no results line"
  [[ -f results/t/report.md ]] && grep -q "Amdahl fit" results/t/report.md || fail "report without the fit"
  if $py -c 'import matplotlib' 2>/dev/null; then [[ -s results/t/scaling-0.png ]] || fail "no plot"; fi ;;
weak)  # the weak-scaling parameter grows with N; Gustafson is fitted
  rc=$(run scale -t split_work --mode weak --ranks 1,2 --set work=400,serial=40 --name t --timeout 60 --statistic min \
       --min-time 0.01 -r 3 --out "$work/results")
  [[ $rc -eq 0 ]] || fail "exit $rc"
  check "s['weak_scale_param'] == 'work'" "[l['params'] for l in s['launches']] == ['work=400,serial=40,steps=1000', 'work=800,serial=40,steps=1000']" \
        "'gustafson' in f[0]" "f[0]['params'] == 'work=400,serial=40,steps=1000'" \
        "s['statistic'] == 'min'" "all(p['seconds'] == p['min_s'] <= p['median_s'] for p in s['series'][0]['points'])"
  # Without Python/matplotlib the sweep still completes and the report says why there is no plot.
  rc=$(SP_PYTHON=/nonexistent/python3 run scale -t split_work --mode weak --ranks 1,2 --set work=400,serial=40 --name np --timeout 60 "${fast[@]}")
  [[ $rc -eq 0 ]] || fail "without python: exit $rc"
  grep -q "plots not drawn: no Python interpreter at /nonexistent/python3" results/np/report.md || fail "report silent on the missing plots"
  ! ls results/np/*.png 2>/dev/null || fail "a plot without python?" ;;
threads)  # a single-rank kernel at 1 and 2 OpenMP threads
  rc=$(run scale -t stream_triad --thread-counts 1,2 --set N=65536 --name t --timeout 60 "${fast[@]}")
  [[ $rc -eq 0 ]] || fail "exit $rc"
  check "s['axis'] == 'threads'" "[l['threads'] for l in s['launches']] == [1, 2]" "[l['ranks'] for l in s['launches']] == [1, 1]" \
        "[l['oversubscribed'] for l in s['launches']] == [t > $cores for t in (1, 2)]" \
        "[json.load(open('results/t/' + l['results'] + '/manifest.json'))['threads_per_rank'] for l in s['launches']] == [1, 2]" ;;
hang)  # rank 1 never returns: the watchdog ends the launch, names the rank, keeps the 1-rank result
  rc=$(run scale -t hang --ranks 1,2 --set on_rank=1 --name t --timeout 8 "${fast[@]}")
  [[ $rc -eq 1 ]] || fail "exit $rc, expected 1"
  grep -q "timed out after .*culprit: rank 1 inside hang run" "$work/out" || fail "the hang was not attributed to rank 1"
  check "[l['status'] for l in s['launches']] == ['ok', 'timed_out']" "'rank 0 waiting in MPI' in s['launches'][1]['diagnosis']" \
        "len(s['series'][0]['points']) == 1"
  [[ -f results/t/points/c0-r1-t1/bench.json ]] || fail "the earlier result was not kept" ;;
exit_early)  # rank 1 exits inside run(): the launch ends (no timeout), the rank is named
  rc=$(run scale -t exit_early --ranks 1,2 --set on_rank=1 --name t --timeout 60 "${fast[@]}")
  [[ $rc -eq 1 ]] || fail "exit $rc, expected 1"
  grep -q "culprit: rank 1 inside exit_early run" "$work/out" || fail "the exit was not attributed to rank 1"
  check "[l['status'] for l in s['launches']] == ['ok', 'failed']" "s['launches'][1]['wall_s'] < 50" ;;
rank_rules)  # a named variant some swept rank count cannot run: refused before any launch, nothing written
  rc=$(run scale -t all_reduce --variant ring --variant rabenseifner --ranks 1,2,3 -s conformance --name t "${fast[@]}")
  [[ $rc -eq 2 ]] || fail "exit $rc, expected 2"
  [[ $(wc -l <"$work/out") -eq 1 ]] || fail "more than one line"
  grep -q "rabenseifner needs a power-of-two rank count (got 3)" "$work/out" || fail "rule not named"
  [[ ! -e results ]] || fail "something was written"
  ! grep -q "^\[scale" "$work/out" || fail "a point was launched" ;;
compare)  # crafted folders: gemm fp32 30% slower in B
  rc=$(run compare "$data/compare/a" "$data/compare/b" --json "$work/cmp.json")
  [[ $rc -eq 1 ]] || fail "exit $rc, expected 1 (a regression)"
  grep -q "gemm/kokkos/dtype=fp32,M=64,N=64,K=64: 1.300x slower" "$work/out" || fail "regression not listed"
  $py -c "import json; r={x['key']: x['status'] for x in json.load(open('$work/cmp.json'))['rows']}; \
assert r == {'gemm/kokkos/dtype=fp32,M=64,N=64,K=64': 'REGRESSION', 'gemm/kokkos/dtype=fp64,M=64,N=64,K=64': 'same', \
'stream_triad/kokkos/N=1048576': 'faster'}, r" || fail "wrong statuses"
  rc=$(run compare "$data/compare/a" "$data/compare/b" --threshold 0.5); [[ $rc -eq 0 ]] || fail "threshold 50%: exit $rc"
  rc=$(run compare "$data/compare/a" "$data/compare/a"); [[ $rc -eq 0 ]] || fail "A vs A: exit $rc"
  # Scaling folders: per timed point; the oversubscribed point is not a timing and is not compared.
  rc=$(run compare "$data/compare/sweep_a" "$data/compare/sweep_b"); [[ $rc -eq 1 ]] || fail "sweeps: exit $rc, expected 1"
  grep -q "split_work/kokkos/work=1 @ ranks=2: 1.250x slower" "$work/out" || fail "sweep regression not listed"
  ! grep -q "ranks=3" "$work/out" || fail "an oversubscribed point was compared" ;;
qualify)  # crafted run folder and profile: one FAIL, one SKIP, JUnit XML to match
  rc=$(run qualify --profile "$data/profiles/crafted.json" --results "$data/qualify/run" --junit "$work/junit.xml" --out "$work/results" --name q)
  [[ $rc -eq 1 ]] || fail "exit $rc, expected 1 (one criterion fails)"
  $py - "$work/junit.xml" "$work/results/q/qualification.json" <<'PY' || fail "wrong qualification"
import json, sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("6", "1", "1"), suite.attrib
failed = [t.get("name") for t in suite if t.find("failure") is not None]
assert failed == ["roofline roof (0.4 < 0.5: FAIL)"], failed
status = {c["name"]: c["status"] for c in json.load(open(sys.argv[2]))["criteria"]}
for name, s in status.items():
    assert name.endswith(s + ")") or (name == "conformance" and s == "PASS"), (name, s)
PY
  ;;
qualify_run)  # qualify runs the suite itself (a child `run` under the watchdog)
  rc=$(run qualify --profile "$data/profiles/stream.json" --technique stream_triad --size small --set N=4096 \
       --min-time 0.01 -r 1 --out "$work/results" --name q)
  [[ $rc -eq 0 ]] || fail "exit $rc"
  grep -q "PASS triad conformance" "$work/out" || fail "criterion not passed"
  [[ -f results/q/run/check.json && -f results/q/junit.xml && ! -e results/q/latest ]] || fail "folder incomplete"
  # A suite run that hangs (rank 0 never returns from the benchmarked run()): the watchdog ends it, names it.
  rc=$(run qualify --profile "$data/profiles/stream.json" --technique hang --set on_rank=0 --timeout 8 \
       --min-time 0.01 -r 1 --out "$work/results" --name h)
  [[ $rc -eq 1 ]] || fail "hang: exit $rc, expected 1"
  grep -q "the suite run failed: timed out after .*culprit: rank 0 inside hang run" "$work/out" || fail "hang not named"
  grep -q "<failure" results/h/junit.xml || fail "no JUnit failure for the hang" ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
echo "ok: $case_"
