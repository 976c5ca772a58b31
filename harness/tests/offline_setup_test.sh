#!/usr/bin/env bash
# ci/offline-setup.sh on synthetic bundles (no network, nothing built):
# a well-formed bundle passes --check-only; a bundle for another
# architecture, a package missing, a package corrupt, a missing MANIFEST, a
# file that is no tar.gz, and --cuda without nvcc each give exactly one
# `offline-setup: error:` line naming the problem, exit 2, and write nothing.
set -uo pipefail
setup=${1:?usage: offline_setup_test.sh <path to ci/offline-setup.sh>}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)

make_bundle() {  # make_bundle DIR ARCH: a bundle with two packages
  local b=$1/scaleproof-bundle
  mkdir -p "$b/debs" "$b/kokkos-src" "$b/source"
  touch "$b/kokkos-src/CMakeLists.txt"
  printf 'first package\n' >"$b/debs/a_1_$2.deb"
  printf 'second package\n' >"$b/debs/b_2_$2.deb"
  { echo "format 1"; echo "arch $2"; echo "release test"; echo "preset all"; echo "commit 0000"
    echo "deb a 1 $(sha256sum "$b/debs/a_1_$2.deb" | cut -d' ' -f1) a_1_$2.deb"
    echo "deb b 2 $(sha256sum "$b/debs/b_2_$2.deb" | cut -d' ' -f1) b_2_$2.deb"; } >"$b/MANIFEST"
  tar -C "$1" -czf "$1.tar.gz" scaleproof-bundle
}

expect() {  # expect NAME RC PATTERN BUNDLE [ARGS...]
  local name=$1 rc=$2 pat=$3 bundle=$4 prefix=$work/prefix-$1
  shift 4
  local out err got
  out=$(NVCC=${NVCC_FOR_TEST:-} "$setup" --bundle "$bundle" --prefix "$prefix" --check-only "$@" 2>"$work/err")
  got=$?
  err=$(cat "$work/err")
  if [[ $got != "$rc" ]]; then
    echo "FAIL $name: exit $got, expected $rc (stderr: $err)"; fails=$((fails + 1)); return
  fi
  if [[ $rc == 2 ]]; then
    if [[ $(grep -c . <<<"$err") != 1 || "$err" != "offline-setup: error: "* || ! "$err" =~ $pat ]]; then
      echo "FAIL $name: expected one 'offline-setup: error:' line matching '$pat', got: $err"; fails=$((fails + 1)); return
    fi
  elif ! grep -q "$pat" <<<"$out"; then
    echo "FAIL $name: output lacks '$pat': $out"; fails=$((fails + 1)); return
  fi
  if [[ -e "$prefix" ]]; then
    echo "FAIL $name: $prefix was written"; fails=$((fails + 1)); return
  fi
  echo "ok   $name"
}

make_bundle "$work/good" "$arch"
expect good 0 "checked: the bundle and this machine are usable" "$work/good.tar.gz" --cpu
expect good_dir 0 "checked:" "$work/good/scaleproof-bundle" --cpu

make_bundle "$work/other" "$( [[ $arch == arm64 ]] && echo amd64 || echo arm64)"
expect other_arch 2 "is for .*, this machine is $arch" "$work/other.tar.gz" --cpu

make_bundle "$work/missing" "$arch"
rm "$work/missing/scaleproof-bundle/debs/b_2_$arch.deb"
tar -C "$work/missing" -czf "$work/missing.tar.gz" scaleproof-bundle
expect missing_package 2 "package b 2 .* is missing from the bundle" "$work/missing.tar.gz" --cpu

make_bundle "$work/corrupt" "$arch"
printf 'flipped\n' >>"$work/corrupt/scaleproof-bundle/debs/a_1_$arch.deb"
tar -C "$work/corrupt" -czf "$work/corrupt.tar.gz" scaleproof-bundle
expect corrupt_package 2 "package a 1 .* is corrupt" "$work/corrupt.tar.gz" --cpu

mkdir -p "$work/nomanifest/scaleproof-bundle"
tar -C "$work/nomanifest" -czf "$work/nomanifest.tar.gz" scaleproof-bundle
expect no_manifest 2 "has no MANIFEST" "$work/nomanifest.tar.gz" --cpu

printf 'not a tarball\n' >"$work/garbage.tar.gz"
expect not_a_tarball 2 "is not a readable .tar.gz" "$work/garbage.tar.gz" --cpu
expect no_bundle 2 "not found" "$work/nonexistent.tar.gz" --cpu

NVCC_FOR_TEST=$work/no/nvcc expect cuda_without_nvcc 2 "--cuda asked for, but nvcc was not found" "$work/good.tar.gz" --cuda

((fails == 0)) || { echo "$fails case(s) failed"; exit 1; }
echo "all offline-setup input checks behave"
