#!/usr/bin/env bash
# The clean-machine check: runs the README's two commands, exactly as the
# README writes them, in a minimal Debian 12 (bookworm, mmdebstrap's minbase:
# Essential packages and apt, nothing else) that holds only a fresh clone of
# this repository's HEAD. Whatever they need must come from the project's own
# scripts (ci/packages.txt, ci/kokkos.sh); nothing is installed by hand.
#
#   ci/fresh-machine.sh [--root DIR] [--keep] [--only test|main] [--main-args "ARGS"] [--no-cache]
#
#   --root DIR        where the root is built (must not exist or be empty);
#                     default: a new directory under /var/tmp. Logs go to DIR.logs/.
#   --keep            keep the root afterwards for inspection (chroot DIR bash)
#   --only test|main  run one of the two commands
#   --main-args ARGS  appended to ci/main.sh (default: none, as in the README)
#   --no-cache        build the base root afresh even if today's tarball exists
#
# Needs root (chroot, mounts) and the package archive. Installs mmdebstrap when
# missing. The archive URI comes from this system's apt configuration
# (ci/archive-uri.sh). The base root is cached as a tarball keyed on the UTC
# date, ${SCALEPROOF_CACHE:-~/.cache/scaleproof}/fresh-machine/bookworm-minbase-YYYYMMDD.tar
# (older ones are deleted); each run unpacks it into a new, empty root, so
# every run starts clean. /proc, /sys (read-only), /dev, /dev/pts and a
# private /dev/shm are mounted for the commands and unmounted on every exit,
# also on failure or Ctrl-C. Exit code: 0 when every command run exited 0,
# else 1; 2 for bad options or a machine that cannot run the check.
set -euo pipefail
# One block, read whole before it runs: a checkout or an edit during an
# hour-long run cannot change the script under it.
{
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

die() { echo "fresh-machine: error: $*" >&2; exit 2; }

root="" keep=0 only="" main_args="" use_cache=1
while (($#)); do
  case "$1" in
    --root) [[ $# -ge 2 ]] || die "--root needs a directory"; root=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --only) [[ $# -ge 2 && ( $2 == test || $2 == main ) ]] || die "--only takes test or main"; only=$2; shift 2 ;;
    --main-args) [[ $# -ge 2 ]] || die "--main-args needs a string"; main_args=$2; shift 2 ;;
    --no-cache) use_cache=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ $(id -u) -eq 0 ]] || die "needs root (chroot and mounts)"
git -C "$repo" rev-parse --verify -q HEAD >/dev/null || die "$repo is not a git checkout with a commit"

if [[ -z "$root" ]]; then
  root=$(mktemp -d /var/tmp/scaleproof-fresh.XXXXXX)
else
  [[ ! -e "$root" || -z "$(ls -A "$root" 2>/dev/null)" ]] || die "--root $root exists and is not empty"
  mkdir -p "$root"
fi
root=$(cd "$root" && pwd)
[[ "$root" != / ]] || die "--root cannot be /"
logs=$root.logs
mkdir -p "$logs"

# A root with the packages, Kokkos's source and build, and the project's
# builds takes about 6 GiB; ask for room to spare.
need_kib=$((10 * 1024 * 1024))
free_kib=$(df -Pk "$root" | awk 'NR==2{print $4}')
((free_kib >= need_kib)) || die "$((free_kib / 1024 / 1024)) GiB free under $root, 10 GiB needed (--root elsewhere)"

mounted=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  # Processes still running inside the root (after Ctrl-C) keep mounts busy.
  local p
  for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/root" 2>/dev/null)" == "$root" ]] && kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}" || echo "fresh-machine: could not unmount ${mounted[i]}" >&2
  done
  if grep -q " $root/" /proc/mounts; then
    echo "fresh-machine: mounts remain under $root; not deleting it" >&2
    rc=1
  elif ((keep)); then
    echo "fresh-machine: root kept at $root (chroot $root bash)"
  else
    rm -rf --one-file-system "$root"
  fi
  echo "fresh-machine: logs in $logs"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! command -v mmdebstrap >/dev/null; then
  echo "fresh-machine: installing mmdebstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null
fi

uri=$("$here/archive-uri.sh") || die "cannot build a root without the archive"
cache=${SCALEPROOF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scaleproof}/fresh-machine
tarball=$cache/bookworm-minbase-$(date -u +%Y%m%d).tar
mkdir -p "$cache"
t0=$(date +%s)
if ((use_cache == 0)) || [[ ! -s "$tarball" ]]; then
  find "$cache" -maxdepth 1 -name 'bookworm-minbase-*.tar*' -delete
  echo "fresh-machine: building a minimal bookworm root with mmdebstrap"
  rm -rf "$tarball.tmp"
  mmdebstrap --variant=minbase --mode=root --format=tar bookworm "$tarball.tmp" \
    "deb $uri bookworm main" "deb $uri bookworm-updates main" >"$logs/mmdebstrap.log" 2>&1 \
    || { tail -n 20 "$logs/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $logs/mmdebstrap.log)"; }
  mv "$tarball.tmp" "$tarball"
else
  echo "fresh-machine: today's base root from the cache: $tarball"
fi
tar -C "$root" -xpf "$tarball"
# The network settings a real machine would have.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"

commit=$(git -C "$repo" rev-parse HEAD)
[[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ]] \
  || echo "fresh-machine: note: uncommitted changes in $repo are not part of the check (HEAD only)"
git clone -q --no-hardlinks "$repo" "$root/root/scaleproof"
git -C "$root/root/scaleproof" checkout -q --detach "$commit"
echo "fresh-machine: root $root, clone of $commit at /root/scaleproof ($(($(date +%s) - t0)) s)"
[[ -e "$root/usr/local/cuda" ]] || echo "fresh-machine: the root has no /usr/local/cuda, so ci/test.sh skips its CUDA preset compile there"

mount_in() { # TYPE-OR-bind SOURCE TARGET [OPTIONS]
  local target=$root$3
  mkdir -p "$target"
  if [[ $1 == bind || $1 == rbind ]]; then
    mount "--$1" "$2" "$target"
    mounted+=("$target")
    mount --make-rprivate "$target"
  else
    mount -t "$1" ${4:+-o "$4"} "$2" "$target"
    mounted+=("$target")
  fi
}
mount_in proc proc /proc
mount_in sysfs sysfs /sys ro
# No control groups are mounted: a chroot is not a booted machine, and the
# Slurm check (whose daemons need them) reports itself skipped here.
mount_in bind /dev /dev
mount_in tmpfs shm /dev/shm mode=1777,size=50%
mount_in bind /dev/pts /dev/pts

# Runs one of the README's commands in the root with the environment of a
# fresh root login; prints its exit code and duration.
failed=0
run_in_root() { # NAME COMMAND
  local name=$1 cmd=$2 start rc dur
  echo "fresh-machine: $cmd (log: $logs/$name.log)"
  start=$(date +%s)
  set +e
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd /root/scaleproof && $cmd" 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  set -e
  dur=$(($(date +%s) - start))
  # Durations and test timeouts depend on what else the machine runs.
  printf 'fresh-machine: %s: exit %d, %d min %02d s (load average at the end %s on %d cores)\n' "$cmd" "$rc" \
    $((dur / 60)) $((dur % 60)) "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)" | tee -a "$logs/summary.txt"
  ((rc == 0)) || failed=1
}
keep_report() { # the main job's report outlives the root
  local r=$root/root/scaleproof/results/latest/report.md
  [[ -f $r ]] && cp "$r" "$logs/main-report.md" || true
}

echo "commit $commit, $(date -u +%FT%TZ), base $(basename "$tarball")" >"$logs/summary.txt"
# The README's order: the main job, then the tests.
[[ -z "$only" || "$only" == main ]] && { run_in_root main "ci/main.sh${main_args:+ $main_args}"; keep_report; }
[[ -z "$only" || "$only" == test ]] && run_in_root test "ci/test.sh"
exit "$failed"
}
