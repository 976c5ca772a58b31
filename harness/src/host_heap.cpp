// The host heap's policy of host_heap.hpp.
#include "host_heap.hpp"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sp {

namespace {
std::string& policy() {
  static std::string p = "system default";
  return p;
}
}  // namespace

std::string keep_freed_host_memory() {
#if defined(__GLIBC__)
  // glibc serves a request above M_MMAP_THRESHOLD (at most 32 MiB) with its
  // own mmap and unmaps it on free, and returns a free top of the heap above
  // M_TRIM_THRESHOLD to the system: either way the next call's buffer is
  // fresh pages. No mmap'ed chunks, and no trimming below 2 GiB of free top.
  const bool ok = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  policy() = ok ? "glibc malloc: freed memory kept by the process (M_MMAP_MAX=0, M_TRIM_THRESHOLD=2^31-1)"
                : "system default (glibc mallopt refused the policy)";
#else
  policy() = "system default (no glibc: freed memory may return to the system)";
#endif
  return policy();
}

const std::string& host_heap_policy() { return policy(); }

}  // namespace sp
