#pragma once
// What every GoogleTest main of the project shares:
// - listing (--gtest_list_tests, how CTest discovers tests) prints the list
//   and nothing else: MPI and Kokkos stay down, because any line they print
//   (a runtime advisory, a warning) would be parsed as a test name;
// - a run that selected zero tests fails: a CTest entry whose filter matches
//   nothing would otherwise pass while testing nothing.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

namespace sp::testing {

inline bool listing_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--gtest_list_tests") == 0) return true;
  return false;
}

// RUN_ALL_TESTS, failing when the filter selected no test.
inline int run_all_tests() {
  const int rc = RUN_ALL_TESTS();
  if (::testing::GTEST_FLAG(list_tests)) return rc;
  if (::testing::UnitTest::GetInstance()->test_to_run_count() == 0) {
    std::fprintf(stderr, "error: no test matched the filter '%s': nothing was tested\n",
                 ::testing::GTEST_FLAG(filter).c_str());
    return 1;
  }
  return rc;
}

}  // namespace sp::testing
