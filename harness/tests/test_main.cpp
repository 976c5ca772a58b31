// Unit tests run with Kokkos up (some tests run real techniques).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "scaleproof/comm.hpp"

int main(int argc, char** argv) {
  sp::comm::init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // CTest's discovery reads every line of --gtest_list_tests as a test name:
  // while listing, Kokkos stays down so its start-up warnings (e.g. about
  // OMP_PROC_BIND) cannot become tests that run nothing.
  const bool listing = GTEST_FLAG_GET(list_tests);
  if (!listing) Kokkos::initialize(argc, argv);
  int rc = RUN_ALL_TESTS();
  if (!listing) Kokkos::finalize();
  sp::comm::finalize();
  return rc;
}
