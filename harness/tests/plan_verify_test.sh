#!/usr/bin/env bash
# plan_verify_test.sh SCALEPROOF MPIEXEC: `scaleproof plan --verify` from the
# command line. Without the composed step (technique hybrid_step) in the
# build: one error line naming it, exit 2, nothing written, alone and under
# the launcher. With it: launched by itself at 2 ranks, a row per verified
# layout with a measured time, both verdict lines, the JSON written; and at
# 1 rank under the launcher, one error line and exit 2.
set -u
bin=$1; mpiexec=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; cat "$work/out" "$work/err" 2>/dev/null; exit 1; }
one_error() {  # exit 2, one 'scaleproof: error:' line matching $1 on stderr, no JSON
  local rc=$1 re=$2
  [[ $rc -eq 2 ]] || fail "expected exit 2, got $rc"
  [[ $(grep -c 'scaleproof: error:' "$work/err") -ge 1 ]] || fail "no error line"
  grep -qE -- "$re" "$work/err" || fail "the error does not match '$re'"
  [[ ! -e "$work/v.json" ]] || fail "a refused run wrote v.json"
}

if ! "$bin" list --technique hybrid_step >/dev/null 2>&1; then
  "$bin" plan --verify 1 --json "$work/v.json" >"$work/out" 2>"$work/err"
  one_error $? "hybrid_step"
  [[ $(grep -c . "$work/err") -eq 1 ]] || fail "more than one line on stderr"
  "$mpiexec" -n 2 "$bin" plan --verify 1 --json "$work/v.json" >"$work/out" 2>"$work/err"
  one_error $? "hybrid_step"
  echo "ok: hybrid_step is not in this build; --verify refuses"
  exit 0
fi

"$mpiexec" -n 1 "$bin" plan --verify 1 --json "$work/v.json" >"$work/out" 2>"$work/err"
one_error $? "2 or more ranks"
"$bin" plan --verify 1 --min-time 0.01 --json "$work/v.json" >"$work/out" 2>"$work/err" || fail "plan --verify exited $?"
cat "$work/out"
grep -qE '^mean absolute error .*: (PASS|FAIL)$' "$work/out" || fail "no MAE verdict"
grep -qE '^Spearman rank correlation .*: (PASS|FAIL)$' "$work/out" || fail "no Spearman verdict"
python3 - "$work/v.json" <<'PY' || fail "v.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert "git_commit" in d["manifest"]
assert len(d["rows"]) >= 2, d["rows"]
for r in d["rows"]:
    assert r["measured_s"] > 0, r
    assert r["time_s"]["total"] > 0, r
assert [v["status"] in ("PASS", "FAIL") for v in d["verdicts"]] == [True, True]
PY
echo ok
