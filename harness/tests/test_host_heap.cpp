// The host heap's policy (host_heap.hpp): after it is applied, a large block
// comes from the heap, not from its own mapping, and freeing it keeps it in
// the process, so the next allocation of that size touches no fresh pages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "host_heap.hpp"

#if defined(__GLIBC__)
#include <malloc.h>

TEST(HostHeap, FreedBlocksStayWithTheProcess) {
  const std::string policy = sp::keep_freed_host_memory();
  EXPECT_NE(policy.find("M_MMAP_MAX=0"), std::string::npos) << policy;
  EXPECT_EQ(sp::host_heap_policy(), policy);
  // Above glibc's largest mmap threshold (32 MiB): mapped on its own, and
  // unmapped on free, under the default policy.
  const size_t big = size_t(64) << 20;
  const struct mallinfo2 before = mallinfo2();
  void* p = std::malloc(big);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, big);
  const struct mallinfo2 held = mallinfo2();
  EXPECT_EQ(held.hblks, before.hblks) << "the block was mapped on its own";
  std::free(p);
  const struct mallinfo2 after = mallinfo2();
  EXPECT_GE(after.fordblks, big) << "the freed block went back to the system";
  void* q = std::malloc(big);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(mallinfo2().arena, after.arena) << "the second block needed more heap";
  std::free(q);
}
#endif
