#!/usr/bin/env bash
# html_report_test.sh SCALEPROOF REPO OUT: report.html in headless Chromium.
# Two pages: the one a `scaleproof run` writes itself, and the one rendered
# for the repository's main job (results/main-small-20261125). Each must load
# with no console message at all (an error, a failed load, a script
# exception), show the summary table and every plot as an inline SVG, and run
# its table-sorting script. OUT keeps each page and a screenshot of it.
# Exit 77 (skipped) where Chromium is not installed.
set -u
bin=$1; repo=$2; out=$3
chrome=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chrome ]] || { echo "no chromium: skipped"; exit 77; }
python=${SP_PYTHON:-/usr/bin/python3}
rm -rf "$out"; mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$out/profile" --enable-logging=stderr --v=0)

# check PAGE_DIR NAME EXPECTED_PLOT_IDS...
check() {
  local dir=$1 name=$2; shift 2
  local page=$dir/report.html
  [[ -s $page ]] || fail "$name: no report.html in $dir"
  cp "$page" "$out/$name.html"
  timeout 120 "$chrome" "${flags[@]}" --virtual-time-budget=3000 --dump-dom "file://$out/$name.html" > "$out/$name.dom" 2> "$out/$name.log" ||
    fail "$name: chromium failed (log $out/$name.log)"
  if grep -q "CONSOLE" "$out/$name.log"; then grep "CONSOLE" "$out/$name.log"; fail "$name: console messages"; fi
  "$python" - "$out/$name.dom" "$@" <<'PY' || fail "$name: page content"
import re, sys
dom = open(sys.argv[1]).read()
expected = sys.argv[2:]
assert '<table id="summary">' in dom, "no summary table"
assert dom.index('<table id="summary">') < dom.find('<h2>Plots</h2>'), "the summary does not come first"
figs = re.findall(r'<figure class="plot" id="plot-([a-z]+)">(.*?)</figure>', dom, re.S)
ids = [f[0] for f in figs]
assert ids == expected, "plots %s, expected %s" % (ids, expected)
for i, body in figs:
    assert body.lstrip().startswith("<svg"), "plot %s is not an inline SVG" % i
    assert "<path" in body, "plot %s draws nothing" % i
sortable = len(re.findall(r'<table id="[a-z]+" class="sortable">', dom))
m = re.search(r'data-sortable="(\d+)"', dom)
assert m and int(m.group(1)) == sortable > 0, "the sorting script did not run over the %d sortable tables" % sortable
assert not re.search(r'(src|href)="(https?:)?//', dom), "a reference outside the page"
PY
  timeout 120 "$chrome" "${flags[@]}" --window-size=1280,1600 --screenshot="$out/$name.png" "file://$out/$name.html" \
    > /dev/null 2>> "$out/$name.log" || fail "$name: screenshot"
  [[ -s $out/$name.png ]] || fail "$name: no screenshot"
  echo "$name: loads without console messages; summary and plots ${*} present; screenshot $out/$name.png"
}

# The harness writes report.html itself at the end of a run; a two-rank
# technique in it gives the per-rank table (ranks.json, from the harness).
OMP_NUM_THREADS=1 "$bin" run -t stream_copy all_reduce -s conformance --min-time 0.001 -r 1 --ranks 2 --out "$out/results" \
  --name run --db none > "$out/run.log" 2>&1 || { tail "$out/run.log"; fail "scaleproof run"; }
check "$out/results/run" run verdicts ratios roofline
grep -q '<table id="ranks" class="sortable">' "$out/run.dom" || fail "run: no per-rank table from ranks.json"
# A real main job's folder, rendered by the same script.
cp -r "$repo/results/main-small-20261125" "$out/main"
"$python" "$repo/harness/plots/report_html.py" "$out/main" || fail "report_html.py on main-small-20261125"
check "$out/main" main verdicts ratios roofline
