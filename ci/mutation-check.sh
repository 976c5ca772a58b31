#!/usr/bin/env bash
# ci/mutation-check.sh [--only ID,ID...] [--list]: plants realistic faults,
# one at a time, and reports whether the conformance and unit tests catch
# each, and how.
#
# The working tree is never modified: the script keeps a copy of the tree in
# $MUTATION_DIR (default build/mutation/src, with its own build folder), and
# each fault is one exact text replacement in that copy. Per fault it
# rebuilds only the test executables of the fault's family, runs that
# family's conformance tests (single-rank CTest entries, plus the multi-rank
# suite under `mpiexec -n 2`, the smallest rank count where a distributed
# algorithm communicates) and its unit-test executable (the harness's for
# harness faults), then restores the file (also on EXIT, INT and TERM).
#
# Verdict per fault:
#   value    a test failed on a value: an element outside its bound, an
#            expectation on a count, a status or a ratio (what a test is for)
#   crash    only crashes, aborts or timeouts failed (caught by accident)
#   MISSED   every test passed
# Exit status: 0 when every fault was caught by a value check, else 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${MUTATION_DIR:-$root/build/mutation}
copy=$work/src
build=$copy/build/default
logs=$work/logs
only=""
list=0
while [[ $# -gt 0 ]]; do
  case $1 in
  --only) only=",$2,"; shift 2 ;;
  --list) list=1; shift ;;
  *) echo "usage: $0 [--only ID,ID...] [--list]" >&2; exit 2 ;;
  esac
done

# ID|FAMILY|FILE|OLD|NEW|WHAT: OLD must occur exactly once in FILE. Faults
# whose file few objects include come first; header-wide ones last.
faults=(
"roof_triad_scalar|roofline|kernels/roofline/stream.hpp|a(i) = b(i) + q * c(i);|a(i) = b(i) + c(i);|STREAM triad drops the scalar"
"roof_scale_source|roofline|kernels/roofline/stream.hpp|b(i) = q * c(i);|b(i) = q * a(i);|STREAM scale reads the wrong array"
"mp_1f1b_warmup|modelparallel|kernels/modelparallel/schedule.cpp|case ScheduleKind::one_f_one_b: return std::min(p - i - 1, m);|case ScheduleKind::one_f_one_b: return std::min(p - i, m);|1F1B warm-up one forward too many"
"mp_grad_messages|modelparallel|kernels/modelparallel/schedule.cpp|const int grads = v - (rank == 0 ? 1 : 0);|const int grads = v - (rank == p - 1 ? 1 : 0);|predicted gradient messages exempt the wrong stage"
"conv_residual_decl|conv|suites/conv/blocks_topology.cpp|if (skip) net.add(0, y, Act::relu);|if (skip) net.add(0, y, Act::none);|residual block declared without the relu after the add"
"conv_dense_decl|conv|suites/conv/blocks_topology.cpp|const int c1 = net.concat({0, y1});|const int c1 = net.concat({y1, 0});|dense block declared with its concatenation in the wrong order"
"check_ignores_error|harness|harness/src/checker.hpp|bool passed() const { return error.empty() && result.passed(); }|bool passed() const { return result.passed(); }|checker passes a case whose kernel threw"
"verdict_baseline_band|harness|harness/src/models.cpp|v.status = v.ratio >= v.band_lo ? \"PASS\" : \"FAIL\";|v.status = v.ratio >= 0.5 * v.band_lo ? \"PASS\" : \"FAIL\";|throughput-vs-baseline verdict at half its band"
"verdict_roof_no_upper|harness|harness/src/technique.cpp|(frac >= v.band_lo && frac <= v.band_hi ? \"PASS\" : \"FAIL\")|(frac >= v.band_lo ? \"PASS\" : \"FAIL\")|roofline verdict drops the upper band (faster than the roof passes)"
"dp_bucket_size|dataparallel|kernels/dataparallel/dp_trainer.hpp|s_.block_offset(bucket_hi_[l] + 1) - s_.block_offset(l)|s_.block_offset(bucket_hi_[l]) - s_.block_offset(l)|DDP bucket leaves out its last layer"
"dp_zero_chunk|dataparallel|kernels/dataparallel/dp_trainer.hpp|DevSpan<T>(layer_grad_[l].data() + cb(l), chunk_size(l))|DevSpan<T>(layer_grad_[l].data(), chunk_size(l))|ZeRO-2/3 keeps chunk 0 of the reduced gradient on every rank"
"prec_prune_order|precision|kernels/precision/sparse.hpp|return fa > fb \|\| (fa == fb && a < b);|return fa < fb \|\| (fa == fb && a < b);|magnitude pruning keeps the smallest weights"
"prec_quant_scale|precision|kernels/precision/quantize.hpp|s(g) = m / 127.0f;|s(g) = m / 128.0f;|int8 absmax scale divides by 128"
"prec_lowbit_pack_order|precision|kernels/precision/lowbit.hpp|byte \\|= field << (t * bits);|byte \\|= field << ((per - 1 - t) * bits);|low-bit packing stores a byte's codes in reverse order"
"prec_lowbit_group_scale|precision|kernels/precision/lowbit.hpp|c[r] += (sa(i0 + r) * scale(j, g)) * static_cast<float>(p[r]);|c[r] += (sa(i0 + r) * scale(j, 0)) * static_cast<float>(p[r]);|low-bit GEMM rescales every group with the first group's scale"
"prec_xnor_dot|precision|kernels/precision/lowbit.hpp|static_cast<float>(K - 2 * diff);|static_cast<float>(K - diff);|XNOR dot product drops the factor 2 on the popcount"
"prec_lowrank_sigma|precision|kernels/precision/lowrank.hpp|float(svd.U[size_t(i) * svd.k + c] * svd.s[c]);|float(svd.U[size_t(i) * svd.k + c]);|low-rank factor P leaves out the singular values"
"prec_stack_relu_tail|precision|kernels/precision/layer_stack.hpp|nn::relu_forward(out, int64_t(B) * H);|nn::relu_forward(out, int64_t(B) * H - 1);|layer stack skips the ReLU of its last element"
"conv_deform_corner|conv|kernels/conv/conv_deformable.hpp|ly * hx * at(y0 + 1, x0)|ly * hx * at(y0, x0 + 1)|bilinear sample reads the wrong lower-left corner"
"conv_deform_border|conv|kernels/conv/conv_deformable.hpp|y > T(-1) && y < T(H) && x > T(-1)|y > T(-1) && y < T(H - 1) && x > T(-1)|deformable sampling zeroes the band above the last row"
"prec_scaler_growth|precision|kernels/precision/loss_scaler.hpp|if (++tracker_ == c_.growth_interval) {|if (tracker_++ == c_.growth_interval) {|loss scaler grows one clean step late"
"conv_stride|conv|kernels/conv/conv_direct.hpp|row + ow0 * stride + c;|row + ow0 + c;|direct conv ignores the stride in its strided path"
"coll_ring_rs_steps|collectives|kernels/comm/ring.hpp|  for (int s = 0; s < p - 1; ++s) {
    // Chunk indices|  for (int s = 0; s < p - 2; ++s) {
    // Chunk indices|ring reduce-scatter one step short"
"coll_ring_ag_chunk|collectives|kernels/comm/ring.hpp|const int cs = (r - s + p) % p, cr = (r - s - 1 + 2 * p) % p;|const int cs = (r - s + p) % p, cr = (r - s + 2 * p) % p;|ring all-gather receives into the chunk it sends"
"hyb_dp_grad_sum|hybrid|kernels/hybrid/step.cpp|if (st == 0) dp_.all_reduce(g, n);|if (st < 0) dp_.all_reduce(g, n);|ZeRO-0 replicas step on their own gradients (no data-parallel all-reduce)"
"hyb_tp_mlp_reduce|hybrid|kernels/hybrid/block.cpp|tp.all_reduce(out, size_t(n) * h);  // g|(void)out;  // g|MLP's row-parallel partial products not summed over the tensor group"
"gemm_kblock_accumulate|gemm|kernels/gemm/gemm_tiled.hpp|out = (fresh ? T(0) : out) + acc[r][c];|out = acc[r][c];|tiled GEMM overwrites C at each K block instead of accumulating"
"gemm_microkernel_b|gemm|kernels/gemm/gemm_tiled.hpp|acc[r][c] += ar * b[k * NR + c];|acc[r][c] += ar * b[c];|micro-kernel reads B's first packed row at every k"
"cmp_loosened|harness|harness/include/scaleproof/compare.hpp|if (!(err <= bound)) ++r_.wrong;|if (!(err <= 2 * bound)) ++r_.wrong;|element comparator loosened to twice its bound"
"cmp_nan_passes|harness|harness/include/scaleproof/compare.hpp|if (!(err <= bound)) ++r_.wrong;|if (err > bound) ++r_.wrong;|element comparator lets NaN pass"
)

# The fields split on '|' that is not escaped as '\|'.
split_fault() {
  python3 - "$1" <<'EOF'
import re, sys
parts = [p.replace('\\|', '|') for p in re.split(r'(?<!\\)\|', sys.argv[1])]
assert len(parts) == 6, parts
print('\0'.join(parts), end='')
EOF
}

if [[ $list -eq 1 ]]; then
  for f in "${faults[@]}"; do
    IFS= mapfile -d '' p < <(split_fault "$f")
    printf '%-24s %-13s %-40s %s\n' "${p[0]}" "${p[1]}" "${p[2]}" "${p[5]}"
  done
  exit 0
fi

mkdir -p "$copy" "$logs"
current=""
restore() {
  # A fresh mtime, so that the next build recompiles what the fault touched.
  if [[ -n $current ]]; then cp "$root/$current" "$copy/$current"; current=""; fi
}
trap 'restore' EXIT
trap 'restore; exit 130' INT
trap 'restore; exit 143' TERM

export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-/work} CCACHE_DIR=${CCACHE_DIR:-/work/.ccache}
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
# The copy: the tree without build outputs, git metadata or results (mtimes kept, so rebuilds stay incremental).
tar -C "$root" --exclude=./build --exclude=./.git --exclude=./results -cf - . | tar -C "$copy" -xf -
# The files faults touch get a fresh mtime: objects an interrupted run left
# built from a faulty version are rebuilt from the restored one.
for f in "${faults[@]}"; do
  IFS= mapfile -d '' p < <(split_fault "$f")
  touch "$copy/${p[2]}"
done
if [[ ! -f $build/build.ninja ]]; then
  (cd "$copy" && cmake --preset default >"$logs/configure.log" 2>&1) || { echo "configure failed: $logs/configure.log"; exit 3; }
fi
mpiexec=$(grep -m1 '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)

# The family's unit-test executable (relative to the build folder), if any.
unit_exe() {
  case $1 in
  harness) echo harness/tests/sp_unit_tests ;;
  collectives) echo sp_coll_tests ;;
  conv | dataparallel | modelparallel | precision | hybrid) echo "sp_$1_tests" ;;
  esac
}
targets_of() {
  local exe
  exe=$(unit_exe "$1")
  echo sp_conformance ${exe:+"$(basename "$exe")"}
}
multi_rank() { [[ $1 == collectives || $1 == dataparallel || $1 == modelparallel || $1 == hybrid ]]; }
# The hybrid family's layout matrix needs ranks to split: at 2 ranks every
# factorisation (dp, tp or pp = 2) communicates. Only the matrix runs there
# (the planner's tests are written for one rank).
unit_launch() { [[ $1 == hybrid ]] && echo "$mpiexec -n 2"; }
unit_filter() { [[ $1 == hybrid ]] && echo "--gtest_filter=HybridMatrix.*"; }

# run_tests FAMILY LOG: the family's conformance and unit tests, into LOG.
run_tests() {
  local fam=$1 log=$2 conf exe
  conf=$([[ $fam == harness ]] && echo "^(roofline|gemm)(_mr)?\." || echo "^${fam}(_mr)?\.")
  exe=$(unit_exe "$fam")
  {
    echo "=== conformance (1 rank)"
    ctest --test-dir "$build" -L conformance -R "$conf" -j2 --timeout 120 --output-on-failure 2>&1
    echo "=== end"
    if multi_rank "$fam"; then
      echo "=== gtest np2: ${fam}_mr at 2 ranks"
      timeout 300 "$mpiexec" -n 2 "$build/harness/conformance/sp_conformance" --gtest_filter="${fam}_mr.*" --gtest_brief=1 2>&1
      echo "=== exit $?"
    fi
    if [[ -n $exe ]]; then
      echo "=== gtest unit: $exe"
      timeout 600 $(unit_launch "$fam") "$build/$exe" --gtest_brief=1 $(unit_filter "$fam") 2>&1
      echo "=== exit $?"
    fi
  } >"$log"
}

# classify LOG: value | crash | MISSED, the number of failing tests and the first ones.
classify() {
  python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1], errors='replace').read()
crash_words = ('Timeout', 'SEGFAULT', 'aborted', 'Exception', 'Bus error', 'ILLEGAL', 'Not Run')
value_markers = ('elements outside the bound', 'Expected equality', 'Which is:', 'Value of:', 'Expected: ',
                 'Actual: ', 'The difference between', 'evaluates to')
value_tests, crash_tests = [], []
# CTest section: "  N - name (Status)" lines; a "Failed" test counts as a value
# failure when the output has a GoogleTest expectation message.
ctest = re.search(r'=== conformance \(1 rank\)\n(.*?)=== end', text, re.S)
if ctest:
    body = ctest.group(1)
    has_value = any(m in body for m in value_markers)
    for name, status in re.findall(r'^\s*\d+ - (\S+) \(([^)]+)\)', body, re.M):
        bad = any(w in status for w in crash_words) or not has_value
        (crash_tests if bad else value_tests).append(name)
# Direct GoogleTest runs: "[  FAILED  ] name" lines are expectations that
# failed; a non-zero exit without any is a crash, an abort or a timeout.
for label, body, code in re.findall(r'=== gtest (\w+): [^\n]*\n(.*?)=== exit (\d+)', text, re.S):
    # Ranks' lines may interleave: "[  FAILED  ] [  FAILED  ] name".
    failed = list(dict.fromkeys(re.findall(r'^(?:\[  FAILED  \] )+([\w./]+)', body, re.M)))
    value_tests += ['%s:%s' % (label, t) for t in failed]
    if code != '0' and not failed:
        crash_tests.append('%s (exit %s)' % (label, code))
verdict = 'value' if value_tests else 'crash' if crash_tests else 'MISSED'
tests = value_tests if value_tests else crash_tests
shown = ', '.join(tests[:3]) + (' (+%d)' % (len(tests) - 3) if len(tests) > 3 else '')
print(verdict + '\t' + str(len(tests)) + '\t' + shown)
EOF
}

printf '%-24s %-13s %-7s %6s  %s\n' fault family caught failed "first failing tests"
all_value=1
for f in "${faults[@]}"; do
  IFS= mapfile -d '' p < <(split_fault "$f")
  id=${p[0]} fam=${p[1]} file=${p[2]} old=${p[3]} new=${p[4]}
  [[ -z $only || $only == *",$id,"* ]] || continue
  current=$file
  if ! python3 - "$copy/$file" "$old" "$new" <<'EOF'
import sys
path, old, new = sys.argv[1:]
s = open(path).read()
if s.count(old) != 1:
    sys.exit(1)
open(path, 'w').write(s.replace(old, new))
EOF
  then
    restore
    printf '%-24s %-13s %-7s %6s  %s\n' "$id" "$fam" "NOAPPLY" - "the text to replace is not (once) in $file"
    all_value=0
    continue
  fi
  # shellcheck disable=SC2046
  if ! cmake --build "$build" -j2 $(for t in $(targets_of "$fam"); do echo --target "$t"; done) >"$logs/$id.build.log" 2>&1; then
    restore
    printf '%-24s %-13s %-7s %6s  %s\n' "$id" "$fam" "NOBUILD" - "see $logs/$id.build.log"
    all_value=0
    continue
  fi
  run_tests "$fam" "$logs/$id.log"
  restore
  IFS=$'\t' read -r verdict n shown < <(classify "$logs/$id.log")
  printf '%-24s %-13s %-7s %6s  %s\n' "$id" "$fam" "$verdict" "$n" "$shown"
  [[ $verdict == value ]] || all_value=0
done
echo "logs: $logs"
exit $((1 - all_value))
