#!/usr/bin/env bash
# cli_test.sh SCALEPROOF EXPECTED_RC ARGS...: runs scaleproof in an empty
# folder with --out there; checks the exit code, that an error is exactly one
# line on stderr naming the problem, and that a failed run wrote nothing.
# SP_EXPECT_ERR (optional): an extended regex the error line must match.
set -u
bin=$1; expect=$2; shift 2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
args=("$@")
given() { local a; for a in "${args[@]}"; do [[ "$a" == "$1" || "$a" == "$2" ]] && return 0; done; return 1; }
if [[ "${args[0]}" == run || "${args[0]}" == bench ]]; then
  given --out -o || args+=(--out "$work/results")
  given --min-time --min-time || args+=(--min-time 0.01)
  given -r --repetitions || args+=(-r 1)
fi
"$bin" "${args[@]}" >"$work/out" 2>"$work/err"
rc=$?
if [[ $rc -ne $expect ]]; then
  echo "expected exit $expect, got $rc"; cat "$work/out" "$work/err"; exit 1
fi
if [[ $expect -eq 2 ]]; then
  lines=$(grep -c . "$work/err")
  if [[ $lines -ne 1 ]] || ! grep -q '^scaleproof: error: ' "$work/err"; then
    echo "expected one 'scaleproof: error:' line on stderr, got:"; cat "$work/err"; exit 1
  fi
  if [[ -e "$work/results" ]]; then echo "a failed run created $work/results"; exit 1; fi
  if [[ -n "${SP_EXPECT_ERR:-}" ]] && ! grep -qE -- "$SP_EXPECT_ERR" "$work/err"; then
    echo "the error does not match '$SP_EXPECT_ERR':"; cat "$work/err"; exit 1
  fi
fi
echo "ok: exit $rc"; cat "$work/err"
