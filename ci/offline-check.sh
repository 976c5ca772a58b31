#!/usr/bin/env bash
# ci/offline-check.sh [WORKDIR]: the offline setup, end to end, on this machine
# (Debian, the package archive reachable, root or unprivileged user
# namespaces). Run by hand, not by CTest: it builds Kokkos and the whole
# default preset again, tens of minutes on two cores.
#   1. ci/bundle.sh --preset all WORKDIR/bundle.tar.gz (uses the archive);
#   2. in a new network namespace (unshare --net; only loopback, which MPI's
#      launcher needs): checks that the archive is unreachable, then runs
#      ci/offline-setup.sh --cpu into WORKDIR/prefix, which must not exist
#      before, and the conformance suite (ctest -L conformance) of that build;
#   3. checks that every dependency the build found (CMake cache and the
#      libraries scaleproof loads) comes from the prefix, not from /usr.
# Exit 0 only when all of that holds; 77 when no network namespace can be made.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/scaleproof-offline-check.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
[[ ! -e "$prefix" ]] || { echo "offline-check: error: $prefix exists; the prefix must start empty" >&2; exit 2; }
if [[ $(id -u) == 0 ]]; then ns=(unshare --net); else ns=(unshare --map-root-user --net); fi
command -v unshare >/dev/null && "${ns[@]}" true 2>/dev/null ||
  { echo "offline-check: skipped: cannot make a network namespace here (unshare)"; exit 77; }
command -v ip >/dev/null || { echo "offline-check: error: 'ip' (iproute2) is needed to bring loopback up" >&2; exit 2; }

start=$(date +%s)
"$root/ci/bundle.sh" --preset all "$work/bundle.tar.gz"
host=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null | sed -E 's#^[a-z]+://([^/:]+).*#\1#')

"${ns[@]}" env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY bash -s "$root" "$work" "$host" <<'INNER'
set -euo pipefail
root=$1 work=$2 host=$3
ip link set lo up
if [[ -n "$host" ]] && timeout 10 getent hosts "$host" >/dev/null 2>&1; then
  echo "offline-check: error: the archive's host still resolves inside the namespace" >&2; exit 1
fi
echo "offline-check: network: only loopback ($(ip -o link | awk -F': ' '{print $2}' | tr '\n' ' ')); the archive is unreachable"
"$root/ci/offline-setup.sh" --bundle "$work/bundle.tar.gz" --prefix "$work/prefix" --cpu
. "$work/prefix/env.sh"
ctest --test-dir "$work/prefix/build/default" -L conformance -j 2 --timeout 900 --output-on-failure 2>&1 | tail -n 15
INNER

# Every dependency must come from the prefix.
cache=$prefix/build/default/CMakeCache.txt
bad=0
for key in benchmark_DIR GTest_DIR nlohmann_json_DIR CLI11_DIR MPI_CXX_COMPILER BLAS_openblas_LIBRARY CBLAS_INCLUDE_DIR DNNL_LIBRARY Kokkos_DIR; do
  val=$(grep -E "^$key:" "$cache" | cut -d= -f2- || true)
  if [[ "$val" == "$prefix"/* ]]; then echo "offline-check: $key = $val"
  else echo "offline-check: error: $key = '$val' is not in the prefix" >&2; bad=1; fi
done
. "$prefix/env.sh"
ldd "$prefix/build/default/harness/scaleproof" | grep -E 'mpich|benchmark|openblas|dnnl|ucx|hwloc' | while read -r lib _ path _; do
  echo "offline-check: loads $lib from $path"
done
if ldd "$prefix/build/default/harness/scaleproof" | grep -E 'mpich|benchmark|openblas|dnnl' | grep -v "$prefix" | grep -q .; then
  echo "offline-check: error: scaleproof loads a library from outside the prefix" >&2; bad=1
fi
((bad == 0)) || exit 1
echo "offline-check: passed in $(( $(date +%s) - start )) s (bundle $(du -m "$work/bundle.tar.gz" | cut -f1) MiB)"
