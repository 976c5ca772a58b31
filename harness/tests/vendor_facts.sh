# Sourced by the vendor libraries' manifest tests (suites/*/tests/*_test.sh):
# gives them a scratch folder, removed on exit, and the two functions below.
vendor_tmp=$(mktemp -d)
trap 'rm -rf "$vendor_tmp"' EXIT

# vendor_facts BIN NAME LIBRARY KEYS TECHNIQUE SIZE [VAR=VALUE...]: one short
# bench run of TECHNIQUE at SIZE into the scratch folder's NAME, with the variables named
# in VENDOR_UNSET removed from the environment and VAR=VALUE set; prints the
# manifest's facts of LIBRARY for KEYS ("a|b"), joined by "|", "-" for one
# absent. Its stderr is shown and the call fails where the run fails.
vendor_facts() {
  local bin=$1 out=$vendor_tmp name=$2 lib=$3 keys=$4 tech=$5 size=$6 v
  shift 6
  local unset=()
  for v in ${VENDOR_UNSET:-}; do unset+=(-u "$v"); done
  env "${unset[@]}" "$@" "$bin" --threads 1 bench -t "$tech" --size "$size" --min-time 0.001 -r 1 --db none \
    --out "$out" --name "$name" >/dev/null 2>"$out/$name.err" || { cat "$out/$name.err"; return 1; }
  python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))["vendors"][sys.argv[2]]
print("|".join(o.get(k, "-") for k in sys.argv[3].split("|")))' "$out/$name/manifest.json" "$lib" "$keys"
}

# cpu_has FLAG...: whether /proc/cpuinfo lists every FLAG for this CPU.
cpu_has() {
  local flags f
  flags=" $(grep -m1 '^flags' /proc/cpuinfo || true) "
  for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done
}
