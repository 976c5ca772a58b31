#!/usr/bin/env bash
# db_test.sh SCALEPROOF REPO CASE: the results database end to end.
#   import_repo  every results folder of the repository imports; a second import adds nothing
#   concurrent   four imports at once into one database: every run's rows, as when imported alone
#   killed       an import killed mid-way (SIGKILL): the database is as before, never half a run
#   bad_input    not SQLite, a newer schema, a lock held past --db-timeout, nothing to import,
#                a history query matching nothing: one line, exit 2, the database unchanged
#   history      runs listed, a trend with its plot, the regression gate (exit 1), compare by run id
#   migrate      a database one schema version behind is migrated on open, its rows kept
#   reference    qualify --make-profile from the database, runs judged against the references
#   straggler    qualify names the slow rank and its host beyond a declared fraction
#   service      a bench.json with the measurement service's statistics: per-call statistics and per-rank
#                times stored, the kept iteration times counted (not a row each), history shows the
#                per-call statistics, qualify names the slow rank (median over repetitions) and its host
set -u
bin=$1; repo=$2; case=$3
data=$repo/harness/tests/data
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
# SQL on a database through Python's sqlite3 (no sqlite3 command needed): one row per line, '|' between columns.
q() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
for row in c.execute(sys.argv[2]): print("|".join(str(v) for v in row))' "$1" "$2"; }
# Rows per run, keyed by the recorded path: what "nothing lost" compares.
shape() { q "$1" "SELECT r.path, (SELECT count(*) FROM cases c WHERE c.run_id = r.id),
  (SELECT count(*) FROM measurements m JOIN cases c ON m.case_id = c.id WHERE c.run_id = r.id),
  (SELECT count(*) FROM stats s JOIN measurements m ON s.measurement_id = m.id JOIN cases c ON m.case_id = c.id WHERE c.run_id = r.id),
  (SELECT count(*) FROM verdicts v JOIN cases c ON v.case_id = c.id WHERE c.run_id = r.id)
  FROM runs r ORDER BY r.path"; }
# Exit 2 with exactly one error line, and the named file unchanged.
expect_bad() {
  local file=$1; shift
  local before; before=$( [[ -e $file ]] && md5sum < "$file" || echo absent)
  "$bin" "$@" >out 2>err; local rc=$?
  [[ $rc -eq 2 ]] || { cat out err; fail "$* exited $rc, not 2"; }
  [[ $(grep -c . err) -eq 1 ]] && grep -q '^scaleproof: error: ' err || { cat err; fail "$*: not one error line"; }
  local after; after=$( [[ -e $file ]] && md5sum < "$file" || echo absent)
  [[ $before == "$after" ]] || fail "$*: $file changed"
  cat err
}

case $case in
import_repo)
  "$bin" db import "$repo/results" --db all.sqlite > out || { cat out; fail "import of results/ failed"; }
  tail -1 out
  items=$(grep -c '^run [0-9]*: ' out)
  [[ $items -ge 30 ]] || fail "only $items results imported from $repo/results"
  [[ $(q all.sqlite "SELECT count(*) FROM runs") -eq $items ]] || fail "runs table does not hold the $items imported"
  for kind in run scale qualify nccl-tests; do
    [[ $(q all.sqlite "SELECT count(*) FROM runs WHERE kind = '$kind'") -gt 0 ]] || fail "no run of kind $kind imported"
  done
  [[ $(q all.sqlite "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.id)") -eq 0 ]] ||
    fail "a run was imported without a case"
  # Every statistic of a bench.json entry is stored: one entry of main-small-20261125, field by field.
  main=$(q all.sqlite "SELECT id FROM runs WHERE name = 'main-small-20261125'")
  want=$(python3 -c "
import json,sys
b=[e for e in json.load(open('$repo/results/main-small-20261125/bench.json'))['benchmarks'] if e.get('run_type')=='iteration'][0]
print(sum(1 for k in b if k not in ('name','run_name')) + 1, b['run_name'].replace('/manual_time',''))")
  nkeys=${want%% *}; name=${want#* }
  got=$(q all.sqlite "SELECT count(*) FROM stats s JOIN measurements m ON s.measurement_id = m.id JOIN cases c ON m.case_id = c.id
        WHERE c.run_id = $main AND m.label = 'rep0' AND c.family || '/' || c.technique || '/' || c.variant || '/' || c.params = '$name'")
  [[ $got -eq $nkeys ]] || fail "$name rep0: $got statistics stored, the JSON has $nkeys (with seconds)"
  before=$(shape all.sqlite | md5sum)
  "$bin" db import "$repo/results" --db all.sqlite > out2 || fail "second import failed"
  grep -q ": 0 run(s) imported" out2 || { tail -1 out2; fail "the second import added runs"; }
  # Every folder under results/ named on its own: those without results are skipped with a note.
  "$bin" db import "$repo"/results/*/ --db each.sqlite > out3 || { tail -3 out3; fail "import of results/*/ failed"; }
  tail -1 out3
  [[ $(q each.sqlite "SELECT count(*) FROM runs") -eq $items ]] || fail "results/*/ imported other runs than results/"
  [[ $(shape all.sqlite | md5sum) == "$before" ]] || fail "the second import changed the database"
  echo "import_repo: $items results folders and files imported" ;;
concurrent)
  folders=("$repo/results/main-small-20261121" "$repo/results/conv-medium" "$repo/results/precision_small_20261121T1357Z"
           "$repo/results/main-medium-20261121")
  for i in 0 1 2 3; do "$bin" db import "${folders[$i]}" --db alone.sqlite > /dev/null || fail "import of ${folders[$i]}"; done
  pids=()
  for i in 0 1 2 3; do "$bin" db import "${folders[$i]}" --db shared.sqlite --db-timeout 120 > "log$i" 2>&1 & pids+=($!); done
  for i in 0 1 2 3; do wait "${pids[$i]}" || { cat "log$i"; fail "concurrent import $i failed"; }; done
  [[ $(shape shared.sqlite) == "$(shape alone.sqlite)" ]] || { shape shared.sqlite; shape alone.sqlite; fail "rows differ from the imports one at a time"; }
  echo "concurrent: 4 writers, $(q shared.sqlite 'SELECT count(*) FROM stats') statistics, as imported one at a time" ;;
killed)
  "$bin" db import "$data/compare/a" --db base.sqlite > /dev/null || fail "base import"
  # Killed while its transaction is open (the rollback journal exists): the next reader rolls it back.
  for attempt in 1 2 3; do
    cp base.sqlite k.sqlite
    "$bin" db import "$repo/results" --db k.sqlite > /dev/null 2>&1 & pid=$!
    for _ in $(seq 3000); do [[ -e k.sqlite-journal ]] && break; kill -0 $pid 2>/dev/null || break; sleep 0.01; done
    [[ -e k.sqlite-journal ]] || fail "attempt $attempt: the import ended before its transaction was seen"
    kill -KILL $pid; wait $pid 2>/dev/null
    [[ $(q k.sqlite "PRAGMA integrity_check") == ok ]] || fail "integrity check after a kill mid-transaction"
    [[ $(shape k.sqlite) == "$(shape base.sqlite)" ]] || fail "attempt $attempt: the killed import left rows"
    echo "killed mid-transaction (attempt $attempt): the database holds its 1 run, integrity ok"
  done ;;
bad_input)
  echo "not a database" > text.sqlite
  expect_bad text.sqlite db import "$data/compare/a" --db text.sqlite
  expect_bad text.sqlite history --db text.sqlite
  "$bin" db import "$data/compare/a" --db new.sqlite > /dev/null || fail "import"
  q new.sqlite "PRAGMA user_version = 99"
  expect_bad new.sqlite db import "$data/compare/b" --db new.sqlite
  expect_bad new.sqlite history --db new.sqlite
  expect_bad new.sqlite bench -t stream_copy -s conformance --min-time 0.001 -r 1 --out "$work" --db new.sqlite
  [[ $(find "$work" -mindepth 1 -maxdepth 1 -type d | wc -l) -eq 0 ]] || fail "bench wrote a folder with a bad --db"
  "$bin" db import "$data/compare/a" --db ok.sqlite > /dev/null || fail "import"
  python3 -c "
import sqlite3,time
c=sqlite3.connect('ok.sqlite',isolation_level=None); c.execute('BEGIN EXCLUSIVE'); open('held','w').close(); time.sleep(30)" &
  holder=$!
  for _ in $(seq 100); do [[ -e held ]] && break; sleep 0.1; done
  t0=$(date +%s%N)
  expect_bad ok.sqlite db import "$data/compare/b" --db ok.sqlite --db-timeout 1
  grep -q "locked" err || fail "the lock is not named"
  elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  (( elapsed_ms < 10000 )) || fail "a 1 s --db-timeout waited $elapsed_ms ms"
  kill $holder; wait $holder 2>/dev/null
  [[ $(q ok.sqlite "SELECT count(*) FROM runs") -eq 1 ]] || fail "the locked import wrote"
  mkdir empty
  expect_bad ok.sqlite db import empty --db ok.sqlite
  expect_bad ok.sqlite history --db ok.sqlite --machine nosuch
  expect_bad ok.sqlite history --db ok.sqlite --case nosuch/kokkos/N=1
  expect_bad ok.sqlite history --db ok.sqlite --case gemm-only
  expect_bad ok.sqlite history --db ok.sqlite --since 2026-13
  expect_bad ok.sqlite compare 12345 "$data/compare/a" --db ok.sqlite
  expect_bad missing.sqlite history --db missing.sqlite
  [[ ! -e missing.sqlite ]] || fail "history created a database"
  echo "bad_input: every case one line, exit 2, database unchanged" ;;
history)
  for i in 1 2 3; do
    cp -r "$data/compare/a" "a$i"
    "$bin" db import "a$i" --db h.sqlite > /dev/null || fail "import a$i"
  done
  cp -r "$data/compare/b" b
  "$bin" db import b --db h.sqlite > /dev/null || fail "import b"
  "$bin" history --db h.sqlite > out || fail "history list"
  grep -q "^4 run(s)" out || { cat out; fail "4 runs not listed"; }
  key="gemm/kokkos/dtype=fp32,M=64,N=64,K=64"  # 1.3x slower in b than in a
  "$bin" history --db h.sqlite --case "$key" --window 3 --threshold 0.2 --plot trend.png > out; rc=$?
  cat out
  [[ $rc -eq 1 ]] || fail "a 1.3x slowdown beyond a 0.2 threshold exited $rc, not 1"
  grep -q "ratio 1.300.*REGRESSION" out || fail "the regression line does not say ratio 1.300"
  if "${SP_PYTHON:-/usr/bin/python3}" -c "import matplotlib" 2>/dev/null; then  # the interpreter draw_plots uses
    [[ -s trend.png ]] || fail "no plot written"
  fi
  "$bin" history --db h.sqlite --case "$key" --threshold 0.5 --plot trend.png > out || fail "below the threshold is not ok"
  "$bin" history --db h.sqlite --case "stream_triad/kokkos/N=1048576" --plot t2.png > out || fail "a faster last run failed"
  "$bin" history --db h.sqlite -t gemm --variant kokkos > out || fail "filtered list"
  grep -q "^4 run(s)" out || fail "filter by technique lost runs"
  "$bin" compare 1 4 --db h.sqlite > out; rc=$?
  [[ $rc -eq 1 ]] && grep -q "1.300  REGRESSION" out || { cat out; fail "compare by run id: exit $rc"; }
  "$bin" compare "$data/compare/a" 4 --db h.sqlite > out; [[ $? -eq 1 ]] || fail "compare folder vs run id"
  echo "history: trend, gate and compare by run id as expected" ;;
migrate)
  "$bin" db import "$data/compare/a" --db m.sqlite > /dev/null || fail "import"
  before=$(shape m.sqlite)
  # Version 1: the tables without the lookup indexes the second migration adds.
  q m.sqlite "DROP INDEX cases_by_key" > /dev/null; q m.sqlite "DROP INDEX runs_by_machine" > /dev/null
  q m.sqlite "DROP INDEX measurements_by_case" > /dev/null; q m.sqlite "PRAGMA user_version = 1" > /dev/null
  "$bin" db import "$data/compare/b" --db m.sqlite > /dev/null || fail "import into a version-1 database"
  [[ $(q m.sqlite "PRAGMA user_version") -eq 2 ]] || fail "not migrated to version 2"
  [[ $(q m.sqlite "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('cases_by_key', 'runs_by_machine', 'measurements_by_case')") -eq 3 ]] ||
    fail "the migration's indexes are missing"
  [[ $(q m.sqlite "SELECT count(*) FROM runs") -eq 2 ]] || fail "rows lost or not added"
  [[ $(shape m.sqlite | sed -n 1p) == "$before" ]] || fail "the first run changed"
  echo "migrate: version 1 -> 2 on open, rows kept" ;;
reference)
  # References made from three runs of a (no manifest: machine "unknown"), then runs judged against them.
  for i in 1 2 3; do cp -r "$data/compare/a" "a$i"; done
  "$bin" db import a1 a2 a3 --db r.sqlite > /dev/null || fail "import"
  "$bin" qualify --make-profile p.json --db r.sqlite --from-machine unknown --reference-name lab --min-width 0.1 > out ||
    { cat out; fail "--make-profile"; }
  python3 - p.json <<'PY' || fail "the made profile's references"
import json, sys
p = json.load(open(sys.argv[1]))
refs = p["references"]["lab"]
assert len(refs) == 3, refs
for r in refs:  # three identical runs of one repetition: the declared minimum width
    assert abs(r["lower"] - 0.9) < 1e-12 and abs(r["upper"] - 1.1) < 1e-12, r
g = [r for r in refs if r["case"] == "gemm/kokkos/dtype=fp32,M=64,N=64,K=64"][0]
assert abs(g["value"] - 0.001) < 1e-15, g
PY
  "$bin" qualify --profile p.json --results a1 --machine lab --db none --out q > out || { cat out; fail "a run like the references failed"; }
  "$bin" qualify --profile p.json --results "$data/compare/b" --machine lab --db none --out q > out; rc=$?
  [[ $rc -eq 1 ]] && grep -q "first outside: gemm/kokkos/dtype=fp32,M=64,N=64,K=64 seconds 0.0013 s = 1.300" out ||
    { cat out; fail "b (1.3x slower, bounds 1.1) exited $rc"; }
  "$bin" qualify --profile p.json --results a1 --machine other --db none --out q > out || fail "no reference, not required: not a failure"
  grep -q "^SKIP" out || fail "no reference: not SKIP"
  "$bin" qualify --profile p.json --results a1 --machine other --require-reference --db none --out q > out; rc=$?
  [[ $rc -eq 1 ]] || fail "--require-reference without a reference exited $rc"
  expect_bad r.sqlite qualify --make-profile p2.json --db r.sqlite --from-machine nosuch
  [[ ! -e p2.json ]] || fail "a failed --make-profile wrote"
  echo "reference: made, judged, required" ;;
straggler)
  s=$data/stragglers
  "$bin" qualify --profile "$s/tight.json" --results "$s/run" --db none --out q > out; rc=$?
  [[ $rc -eq 1 ]] && grep -q "first: rank 2 on node-b in all_reduce/ring/count=1024,dtype=fp32: 0.0136 s, 30.8% over" out ||
    { cat out; fail "a 30.8% straggler beyond 20% exited $rc"; }
  "$bin" qualify --profile "$s/loose.json" --results "$s/run" --db none --out q > out || { cat out; fail "within 40% failed"; }
  # report.html's per-rank table (ranks.json, as a run writes it beside bench.json) names the slow rank's host.
  cp -r "$s/run" page
  "${SP_PYTHON:-/usr/bin/python3}" "$repo/harness/plots/report_html.py" page || fail "report_html.py on the straggler folder"
  grep -q '<td>all_reduce/ring/count=1024,dtype=fp32</td><td>4</td><td>2</td><td>node-b</td>' page/report.html ||
    fail "report.html does not name rank 2 on node-b"
  echo "straggler: named beyond 20%, passed within 40%, and in report.html" ;;
service)
  s=$data/service
  "$bin" db import "$s/run" --db s.sqlite > /dev/null || fail "import"
  stat() { q s.sqlite "SELECT count(*) FROM stats WHERE key $1"; }
  [[ $(stat "LIKE 'iteration_seconds[%'") -eq 0 ]] || fail "iteration times stored a row each"
  [[ $(q s.sqlite "SELECT group_concat(value) FROM stats WHERE key = 'iteration_seconds_kept'") == "8.0,8.0,8.0,6.0,6.0,6.0" ]] ||
    fail "the kept iteration times are not counted per repetition"
  for k in t_min_s t_median_s t_p90_s t_p99_s t_max_s rank_imbalance "rank_seconds[3]"; do
    [[ $(stat "= '$k'") -ge 3 ]] || fail "statistic $k not stored for every repetition"
  done
  [[ $(q s.sqlite "SELECT value FROM stats s JOIN measurements m ON s.measurement_id = m.id
        WHERE m.label = 'rep2' AND s.key = 'rank_seconds[3]'") == 0.015 ]] || fail "rank 3's time of rep2 is not 0.015"
  # Each repetition's statistics stay below 100 rows: the database grows with cases, not with iterations.
  [[ $(q s.sqlite "SELECT max(n) FROM (SELECT count(*) n FROM stats GROUP BY measurement_id)") -lt 100 ]] ||
    fail "a measurement holds 100 or more statistics"
  cp -r "$s/run" run2
  "$bin" db import run2 --db s.sqlite > /dev/null || fail "import run2"
  "$bin" history --db s.sqlite --case "gemm/kokkos/dtype=fp32,M=64,N=64,K=64" --plot g.png > out || { cat out; fail "history"; }
  cat out
  # Per run: median of the repetitions' median calls 0.00105; fastest call 0.0009; highest p90 0.00121.
  grep -Eq "0\.00105 +0\.0009\.\.0\.00121 *$" out || fail "history does not show the per-call statistics"
  # References from runs with the measurement service's statistics are on the median call (t_median_s).
  "$bin" qualify --make-profile p.json --db s.sqlite --from-machine node-a --min-width 0.1 > /dev/null || fail "--make-profile"
  python3 - p.json <<'PY' || fail "the made profile's median-call references"
import json, sys
refs = {r["case"]: r for r in json.load(open(sys.argv[1]))["references"]["node-a"]}
g = refs["gemm/kokkos/dtype=fp32,M=64,N=64,K=64"]
assert g["quantity"] == "t_median_s" and abs(g["value"] - 0.00105) < 1e-15, g
assert abs(g["lower"] - 0.9) < 1e-12 and abs(g["upper"] - 1.1) < 1e-12, g
PY
  "$bin" qualify --profile p.json --results "$s/run" --machine node-a --require-reference --db none --out q > out ||
    { cat out; fail "the run the references came from is outside them"; }
  # The straggler: per rank the median over repetitions, 0.0100 0.0101 0.0102 0.0140; rank 3 38.6% over 0.0101.
  "$bin" qualify --profile "$data/stragglers/tight.json" --results "$s/run" --db none --out q > out; rc=$?
  [[ $rc -eq 1 ]] && grep -q "first: rank 3 on node-b in all_reduce/ring/count=1024,dtype=fp32: 0.014 s, 38.6% over" out ||
    { cat out; fail "the straggler of the measurement service's rank_seconds exited $rc"; }
  cp -r "$s/run" page
  "${SP_PYTHON:-/usr/bin/python3}" "$repo/harness/plots/report_html.py" page || fail "report_html.py on the service folder"
  grep -q '<td>all_reduce/ring/count=1024,dtype=fp32</td><td>4</td><td>3</td><td>node-b</td>' page/report.html ||
    fail "report.html does not name rank 3 on node-b"
  echo "service: statistics and per-rank times stored, iteration times counted, straggler named" ;;
*) fail "unknown case $case" ;;
esac
