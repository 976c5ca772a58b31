#!/usr/bin/env bash
# plan_test.sh SCALEPROOF RESULTS_FOLDER PROFILE: `scaleproof plan` end to end.
#  1. GPT-3 175B on its 1024 GPUs of 80 GiB: exit 0, the table and the
#     rejection reasons printed, the JSON written with its manifest, the
#     ranked layouts in order of predicted time, each within 80 GiB;
#  2. the machine read from a results folder (its GEMM and ring all-reduce
#     calibration), then from a plan JSON, then from a `qualify` folder
#     that judged the results folder: the same figures;
#  3. a budget nothing fits: exit 1, "no layout fits".
set -u
bin=$1; results=$2; profile=$3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
fig=(--gemm-gflops 140000 --alpha-us 10 --beta-gbs 25)

"$bin" plan --preset gpt3-175b --memory 80 "${fig[@]}" --top 5 --json "$work/plan.json" >"$work/out1" 2>&1 \
  || { cat "$work/out1"; fail "plan gpt3-175b exited $?"; }
cat "$work/out1"
grep -q '^rejected layouts, per reason:' "$work/out1" || fail "no rejection reasons"
grep -q 'heads N are not divisible by tp N' "$work/out1" || fail "no heads/tp reason"
python3 - "$work/plan.json" <<'PY' || fail "plan.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert "git_commit" in d["manifest"], "manifest"
r = d["ranked"]
assert len(r) == 5, len(r)
times = [c["time_s"]["total"] for c in r]
assert times == sorted(times), times
for c in r:
    assert c["memory_bytes"]["total"] <= 80 * 2**30, c
    l = c["layout"]
    assert l["dp"] * l["tp"] * l["pp"] == 1024, l
assert d["enumerated"] == d["fitting"] + sum(x["count"] for x in d["rejected"])
assert abs(d["machine"]["gemm_flops"] - 140e12) <= 1e-12 * 140e12
PY

"$bin" plan --preset gpt2-small --ranks 2 --memory 4 --machine "$results" >"$work/out2" 2>&1 \
  || { cat "$work/out2"; fail "plan --machine RESULTS exited $?"; }
m2=$(grep '^machine:' "$work/out2")
echo "$m2"
[[ "$m2" == *"GEMM "* && "$m2" == *"alpha "* ]] || fail "machine line: $m2"
"$bin" plan --preset gpt2-small --ranks 2 --memory 4 --machine "$results" --json "$work/p2.json" >/dev/null 2>&1 \
  || fail "plan --json from results"
"$bin" plan --preset gpt2-small --ranks 2 --memory 4 --machine "$work/p2.json" >"$work/out3" 2>&1 \
  || { cat "$work/out3"; fail "plan --machine PLAN.json exited $?"; }
[[ "$(grep '^machine:' "$work/out3")" == "$m2" ]] || fail "machine from the plan JSON differs: $(grep '^machine:' "$work/out3")"
"$bin" qualify --profile "$profile" --results "$results" --out "$work" --name q >/dev/null 2>&1
[[ -f "$work/q/qualification.json" ]] || fail "qualify wrote no folder"
"$bin" plan --preset gpt2-small --ranks 2 --memory 4 --machine "$work/q" >"$work/out5" 2>&1 \
  || { cat "$work/out5"; fail "plan --machine QUALIFY_FOLDER exited $?"; }
[[ "$(grep '^machine:' "$work/out5")" == "$m2" ]] || fail "machine from the qualify folder differs: $(grep '^machine:' "$work/out5")"

"$bin" plan --preset gpt3-175b --ranks 8 --memory 1 "${fig[@]}" >"$work/out4" 2>&1
rc=$?
[[ $rc -eq 1 ]] || { cat "$work/out4"; fail "nothing fits: expected exit 1, got $rc"; }
grep -q '^no layout fits' "$work/out4" || fail "no 'no layout fits' line"
echo "ok"
