#!/usr/bin/env bash
# results/history-20261125/evidence.sh [WORK]: the evidence of docs/HISTORY.md,
# made on this machine with build/default. The databases and the results
# folders of the runs stay in WORK (default /tmp/history-evidence); the
# outputs, plots and the profile land beside this script (*.txt, *.png,
# profile.json). Every command is echoed with its exit code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
B=$repo/build/default/harness/scaleproof
# The same CLI with the test-only family (split_work), which the shipped one leaves out.
T=$repo/build/default/harness/scaleproof_testing
work=${1:-/tmp/history-evidence}
rm -rf "$work"
mkdir -p "$work"
cd "$work"
export SP_PYTHON=/usr/bin/python3 OMP_PROC_BIND=false
# say FILE CMD...: runs CMD, its output and exit code into FILE (and onto the terminal).
say() {
  local f=$here/$1
  shift
  {
    echo "\$ $*"
    "$@" 2>&1
    echo "(exit $?)"
  } | sed "s|$repo/|REPO/|g; s|$work/|WORK/|g" | tee "$f"
}
# counts DB: rows per table.
counts() {
  /usr/bin/python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for t in ("runs", "cases", "measurements", "stats", "checks", "verdicts"):
    print("%-12s %d" % (t, c.execute("SELECT count(*) FROM " + t).fetchone()[0]))
PY
}

# 1. Every results folder of the repository into a fresh database.
say import.txt bash -c "time $B db import $repo/results --db $work/all.sqlite | tail -4"
counts all.sqlite | tee -a "$here/import.txt"
ls -l all.sqlite | awk '{print "database size: " $5 " bytes"}' | tee -a "$here/import.txt"

# 2. Five runs of each: GEMM and the test-only split_work on one rank, the ring all-reduce on two.
db=$work/h.sqlite
gemm=(-t gemm --variant kokkos -s small --set dtype=fp32,M=128,N=128,K=128 --min-time 0.05 -r 3)
split=(-t split_work -s small --min-time 0.05 -r 3)
ring=(-t all_reduce --variant ring -s small --set count=65536 --min-time 0.05 -r 3)
for i in 1 2 3 4 5; do
  OMP_NUM_THREADS=1 $B bench "${gemm[@]}" --out "$work/runs" --name "gemm-$i" --db "$db" 2>&1 | grep -E '^database|error'
  OMP_NUM_THREADS=1 $T bench "${split[@]}" --out "$work/runs" --name "split-$i" --db "$db" 2>&1 |
    grep -E '^database|error'
  OMP_NUM_THREADS=1 mpiexec -n 2 $B bench "${ring[@]}" --out "$work/runs" --name "ring-$i" --db "$db" 2>&1 |
    grep -E '^database|error'
done > "$here/runs.txt" 2>&1
say history-list.txt "$B" history --db "$db"

# 3. Trends and their plots.
say history-gemm.txt "$B" history --db "$db" --case gemm/kokkos/dtype=fp32,M=128,N=128,K=128 --threshold 0.25 \
  --plot "$here/history-gemm.png"
ring_case=$(/usr/bin/python3 -c "
import sqlite3; c = sqlite3.connect('$db')
print(c.execute(\"SELECT technique || '/' || variant || '/' || params FROM cases WHERE technique = 'all_reduce' ORDER BY params LIMIT 1\").fetchone()[0])")
say history-ring.txt "$B" history --db "$db" --case "$ring_case" --threshold 0.25 --plot "$here/history-ring.png"

# 4. A profile from these runs; an ordinary run within it; a slowed run (4x the work) outside it.
say make-profile.txt "$B" qualify --make-profile "$here/profile.json" --db "$db" --from-machine "$(hostname)" \
  --reference-name vm --min-width 0.2
split_case=$(/usr/bin/python3 -c "
import sqlite3; c = sqlite3.connect('$db')
print(c.execute(\"SELECT technique || '/' || variant || '/' || params FROM cases WHERE technique = 'split_work' LIMIT 1\").fetchone()[0])")
say gate-before.txt "$B" history --db "$db" --case "$split_case" --threshold 0.25
OMP_NUM_THREADS=1 $T bench "${split[@]}" --out "$work/runs" --name split-normal --db none > /dev/null 2>&1
say qualify-normal.txt "$B" qualify --profile "$here/profile.json" --results "$work/runs/split-normal" --machine vm \
  --require-reference --db none --out "$work/q"
say slowed-run.txt env SP_TESTONLY_SLOWDOWN=4 OMP_NUM_THREADS=1 "$T" bench "${split[@]}" --out "$work/runs" \
  --name split-slowed --db "$db"
say qualify-slowed.txt "$B" qualify --profile "$here/profile.json" --results "$work/runs/split-slowed" --machine vm \
  --require-reference --db none --out "$work/q"

# 5. The regression gate: the slowed run is the last of split_work (exit 1); GEMM's last run is not slowed.
say gate-after.txt "$B" history --db "$db" --case "$split_case" --threshold 0.25 --plot "$here/history-split.png"
say gate-gemm.txt "$B" history --db "$db" --case gemm/kokkos/dtype=fp32,M=128,N=128,K=128 --threshold 0.25 \
  --plot "$work/g.png"
say compare-ids.txt "$B" compare 2 "$(/usr/bin/python3 -c "
import sqlite3; print(sqlite3.connect('$db').execute('SELECT max(id) FROM runs').fetchone()[0])")" --db "$db"
ls -l h.sqlite | awk '{print "database size: " $5 " bytes"}' | tee -a "$here/history-list.txt"
